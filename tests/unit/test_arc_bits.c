/* test_arc_bits.c: sets with deferred layouts (src/arc/bits.c) against the eager primitives. Two runtimes
 * run the same seeded random chains of primitive calls: one defers layouts (the default), the other has
 * rt->eager on, so every set is laid out when made (and every grid is read cell by cell, where the other
 * reads its bytes: gview.c). Inputs are random grids (a cell that is no colour now and then), the grids
 * steps make from them (fills of values that are no colour among them), their objects (lazy, with
 * their own deferred layouts), and random eager sets of positions and cells inserted in random order,
 * some with elements the masks cannot hold (far positions for the wide part, tuples that are not
 * interned, True for 1, cells mixed with positions) so the fallbacks run too. Each step calls one of the changed
 * primitives (merge, mfilter, mapply, sfilter, sizefilter, colorfilter, apply, argmax, argmin, extract, toindices,
 * difference, recolor, shift, normalize, ofcolor,
 * asindices, asobject, the neighbourhoods, connect, shoot, box, inbox, outbox, backdrop, delta, the mirrors, upscale,
 * partition, fgpartition, merge over a tuple of sets deferred) or a reader of their results (fill, underfill, paint, underpaint, cover,
 * objects, replace, combine, intersection, toobject, subgrid, palette, the measures, occurrences, shape, mostcolor,
 * leastcolor, first)
 * on both and compares: the same error, or
 * len, hash, == and membership before any layout; then some results are laid out at once, the rest at
 * the end in random order, and each table is held to the eager one slot by slot. */
#include "arc_test_util.h"

#include <stdlib.h>
#include <string.h>

enum { T_GRID, T_OBJS, T_PATCH };
#define POOL 64

typedef struct {
    tdm_arc_val *v[2]; /* [0] deferred runtime, [1] eager runtime */
    int type;
} entry;

static tdm_arc_rt *rts[2];
static entry pool[POOL];
static int npool, deferred_seen, wide_seen, laid_out, objs_seen, views_seen, eq_seen[2], shoots_seen, cell_shoots_seen, lines_seen, neighbours_seen, small_seen,
    frontiers_seen, recolours_seen, rows_seen, slot_rows_seen;

/* Rows of v with k and k + 8 both among at most 4 colours (their order in a set is the order added). */
static int slot_sharing_rows(const arc_gview *v) {
    int n = 0;
    for (int i = 0; i < v->h; i++) {
        uint32_t m = 0;
        for (int j = 0; j < v->w; j++) m |= 1u << v->c[i * v->w + j];
        n += (m & m >> 8 & 3) && __builtin_popcount(m) <= 4;
    }
    return n;
}

/* The tables are the same layout; keys by == (a tuple may be built twice, once per runtime). */
static void same_table(tdm_arc_val *lazy, tdm_arc_val *eager) { ta_same_table(lazy, eager, KEYS_EQ); }

/* A key to probe membership with: an interned position or cell near the grid, or the same value built as
 * a fresh tuple, or with True for 1. */
static tdm_arc_val *probe_key(tdm_arc_rt *rt, tu_rng *r) {
    int64_t i = tu_range(r, -1, 32), j = tu_range(r, -1, 32), c = tu_range(r, 0, 9);
    if (tu_below(r, 4) == 0) i = tu_range(r, -45, 75), j = tu_range(r, -45, 75); /* where wide parts lie */
    tdm_arc_val *p = arc_ipair(rt, i, j);
    switch (tu_below(r, 4)) {
    case 0: return p;
    case 1: return arc_cell(rt, c, i, j);
    case 2: {
        tdm_arc_val *t = arc_tuple(rt, 2);
        t->u.items[0] = arc_int(rt, c), t->u.items[1] = p;
        return t;
    }
    default: return arc_pair(rt, arc_bool(1), arc_ipair(rt, i, j));
    }
}

/* The tables of two sets of sets, and of each element pair (equal elements may differ in layout). */
static void same_table_deep(tdm_arc_val *x, tdm_arc_val *y) {
    same_table(x, y);
    for (uint32_t s = 0; s <= x->u.set.mask; s++) {
        tdm_arc_val *a = x->u.set.tab[s].key, *b = y->u.set.tab[s].key;
        if (a && a != ARC_DUMMY && arc_is_set(a)) same_table(a, b);
    }
}

/* Compares the results of one call on both runtimes; returns 0 when both raised. */
/* A made set's notes agree with its masks: the non-empty rows, the count, every block named holding an
 * element, and the box (kept or computed). */
static void made_notes(tdm_arc_val *x, const arc_bits *bits) {
    uint32_t rows = 0, n = bits->nout;
    for (uint32_t bl = bits->blocks; bl; bl &= bl - 1) {
        uint32_t used = 0;
        for (int i = 0; i < 32; i++) used |= (uint32_t)(bits->m[32 * __builtin_ctz(bl) + i] != 0) << i, n += (uint32_t)__builtin_popcount(bits->m[32 * __builtin_ctz(bl) + i]);
        assert_true(used != 0);
        rows |= used;
    }
    assert_int_equal(bits->rows, rows);
    assert_int_equal(n, x->n);
    if (!n) return;
    arc_bits fresh = *bits;
    fresh.rows = 0;
    int64_t kept[4], want[4];
    arc_bits_box_of(x, kept), arc_bits_box(&fresh, want);
    assert_memory_equal(kept, want, sizeof want);
}

/* A grid's kept bytes (gview.c: a fill's, a paint's, a replace's), when it has them, are its cells. */
static void same_view_in(tdm_arc_rt *rt, tdm_arc_val *g) {
    arc_gview v;
    if (!arc_grid_view_kept(rt, g, &v)) return;
    views_seen++;
    assert_int_equal(v.h, g->n);
    for (int i = 0; i < v.h; i++) {
        assert_int_equal(v.w, g->u.items[i]->n);
        for (int j = 0; j < v.w; j++) assert_true(g->u.items[i]->u.items[j] == arc_int(rt, v.c[i * v.w + j]));
    }
}

static void same_view(tdm_arc_val *g) { same_view_in(rts[0], g); }

static int compare(tu_rng *r, tdm_arc_val *x, tdm_arc_val *y) {
    assert_true((x == NULL) == (y == NULL));
    assert_int_equal(rts[0]->serial, rts[1]->serial); /* order-free calls made the same closures */
    if (!x) {
        assert_string_equal(rts[0]->err, rts[1]->err);
        for (int s = 0; s < 2; s++) rts[s]->failed = 0, rts[s]->err[0] = '\0'; /* the chain goes on */
        return 0;
    }
    assert_int_equal(x->kind, y->kind);
    if (!arc_is_set(x)) {
        assert_true(arc_eq(x, y));
        return 1;
    }
    const arc_bits *bits = arc_bits_of(x);
    deferred_seen += bits != NULL, wide_seen += bits && bits->nout;
    if (bits) made_notes(x, bits);
    assert_int_equal(x->n, y->n);
    /* == with the earlier sets of its size (shifts and mirrors of one patch among them), before x is
       hashed: deferred sets compare their masks (bits.c, same()); held to the eager runtime's answer */
    for (int k = 0; k < npool; k++)
        if (arc_is_set(pool[k].v[0]) && pool[k].v[0]->n == x->n) {
            int e = arc_eq(x, pool[k].v[0]);
            assert_int_equal(e, arc_eq(y, pool[k].v[1]));
            eq_seen[e]++;
        }
    assert_true(arc_hash(x) == arc_hash(y));
    assert_true(arc_eq(x, y) && arc_eq(y, x));
    for (int k = 0; k < 8; k++) {
        tu_rng r2 = *r;
        tdm_arc_val *kx = probe_key(rts[0], r), *ky = probe_key(rts[1], &r2);
        assert_int_equal(arc_set_contains(x, kx), arc_set_contains(y, ky));
    }
    if (tu_below(r, 3) == 0) same_table(x, y), laid_out++;
    return 1;
}

static void push(tdm_arc_val *x, tdm_arc_val *y, int type) {
    if (npool == POOL) return;
    pool[npool].v[0] = x, pool[npool].v[1] = y, pool[npool].type = type;
    npool++;
}

static int pick(tu_rng *r, int type) {
    int idx[POOL], n = 0;
    for (int k = 0; k < npool; k++)
        if (pool[k].type == type) idx[n++] = k;
    return n ? idx[tu_below(r, (uint64_t)n)] : -1;
}

/* A random eager set: positions or cells, in 0..29 or -2..29 (the masks' edge), sometimes with ones the
 * masks cannot hold. */
static void random_patch(tu_rng *r) {
    int n = (int)tu_below(r, 40), cells = (int)tu_below(r, 2), odd = tu_below(r, 4) == 0, edge = tu_below(r, 3) == 0;
    int64_t e[40][3];
    for (int k = 0; k < n; k++) {
        e[k][0] = tu_range(r, 0, 9), e[k][1] = tu_range(r, edge ? -2 : 0, 29), e[k][2] = tu_range(r, edge ? -2 : 0, 29);
        if (odd && tu_below(r, 8) == 0) e[k][1] = tu_range(r, -3, 34);
        if (odd && tu_below(r, 8) == 0) e[k][2] = tu_range(r, -60, 80); /* wide */
    }
    int mix = odd && tu_below(r, 2), fresh = odd && tu_below(r, 2);
    for (int s = 0; s < 2; s++) {
        tdm_arc_rt *rt = rts[s];
        tdm_arc_val *v[40];
        for (int k = 0; k < n; k++) {
            tdm_arc_val *p = arc_ipair(rt, e[k][1], e[k][2]);
            if (fresh && k == 0) { /* the same value, not interned */
                tdm_arc_val *t = arc_tuple(rt, 2);
                t->u.items[0] = arc_int(rt, e[k][1]), t->u.items[1] = arc_int(rt, e[k][2]);
                p = t;
            }
            v[k] = cells != (mix && k == n - 1) ? arc_pair(rt, arc_int(rt, e[k][0]), p) : p;
        }
        pool[npool].v[s] = arc_set_from(rt, v, (uint32_t)n);
    }
    pool[npool++].type = T_PATCH;
}

static void random_cells(tu_rng *r, int h, int w, int *c) {
    int k = 1 + (int)tu_below(r, 4), pal[4];
    for (int x = 0; x < 4; x++) pal[x] = (int)tu_below(r, 10);
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            c[i * w + j] = pal[tu_below(r, (uint64_t)k)];
            if (j && tu_below(r, 3)) c[i * w + j] = c[i * w + j - 1];
            if (i && tu_below(r, 2)) c[i * w + j] = c[(i - 1) * w + j];
        }
}

/* A function value for mfilter or mapply, made the same way in both runtimes. */
static tdm_arc_val *func(tdm_arc_rt *rt, int which, tdm_arc_val *grid) {
    static const int unary[] = {ARC_P_toindices, ARC_P_box, ARC_P_normalize, ARC_P_delta, ARC_P_backdrop, ARC_P_outbox};
    tdm_arc_val *a[2] = {arc_prim_val(ARC_P_bordering), grid};
    switch (which) {
    case 0: return arc_p_rbind(rt, a);
    case 1: {
        tdm_arc_val *b = arc_p_rbind(rt, a), *c[2] = {arc_prim_val(ARC_P_flip), b};
        return arc_p_compose(rt, c);
    }
    case 2: {
        tdm_arc_val *c[2] = {arc_prim_val(ARC_P_recolor), arc_int(rt, 5)};
        return arc_p_lbind(rt, c);
    }
    default: return arc_prim_val(unary[(which - 3) % 6]);
    }
}

enum { NOPS = 102 };

/* One random call on both runtimes. */
static int step(tu_rng *r, int g) {
    int op = (int)tu_below(r, NOPS), p = pick(r, T_PATCH), q = pick(r, T_PATCH), o = pick(r, T_OBJS);
    int64_t c = tu_range(r, 0, 9), di = tu_range(r, -4, 4), dj = tu_range(r, -4, 4), fn = tu_range(r, 0, 8);
    int64_t pt[4], line = tu_range(r, -3, 3);
    for (int k = 0; k < 4; k++) pt[k] = tu_range(r, -3, 31);
    if (tu_below(r, 2)) pt[2] = pt[0] + (line ? line : 5) * (int64_t)tu_below(r, 2), pt[3] = pt[1] + line; /* often a line */
    tdm_arc_val *res[2];
    int type = T_PATCH;
    if (p < 0 || o < 0) return 1;
    for (int s = 0; s < 2; s++) {
        tdm_arc_rt *rt = rts[s];
        tdm_arc_val *G = pool[g].v[s], *P = pool[p].v[s], *Q = pool[q].v[s], *O = pool[o].v[s], *C = arc_int(rt, c);
        tdm_arc_val *a[4], *t = NULL;
        arc_prim_fn f = NULL; /* every case sets it */
        switch (op) {
        case 0: f = arc_p_merge, a[0] = O; break;
        case 1: f = arc_p_mfilter, a[0] = O, a[1] = func(rt, (int)fn % 2, G); break;
        case 2: f = arc_p_mapply, a[0] = func(rt, 2 + (int)fn % 7, G), a[1] = O; break;
        case 3: f = arc_p_toindices, a[0] = P; break;
        case 4: case 5: f = arc_p_difference, a[0] = P, a[1] = Q; break;
        case 6: f = arc_p_recolor, a[0] = C, a[1] = P; break;
        case 7: f = arc_p_shift, a[0] = P, a[1] = arc_ipair(rt, di, dj); break;
        case 8: f = arc_p_normalize, a[0] = P; break;
        case 9: f = arc_p_ofcolor, a[0] = G, a[1] = C; break;
        case 10: f = arc_p_asindices, a[0] = G; break;
        case 11: f = arc_p_fill, a[0] = G, a[1] = C, a[2] = P, type = T_GRID; break;
        case 12: f = arc_p_underfill, a[0] = G, a[1] = C, a[2] = P, type = T_GRID; break;
        case 13: f = arc_p_paint, a[0] = G, a[1] = P, type = T_GRID; break;
        case 14: f = arc_p_underpaint, a[0] = G, a[1] = P, type = T_GRID; break;
        case 15: f = arc_p_cover, a[0] = G, a[1] = P, type = T_GRID; break;
        case 16: f = fn % 2 ? arc_p_corners : arc_p_box, a[0] = P; break; /* corners: the box without a layout */
        case 17: f = arc_p_delta, a[0] = P; break;
        case 18: f = arc_p_combine, a[0] = P, a[1] = Q; break;
        case 19: f = arc_p_intersection, a[0] = P, a[1] = Q; break;
        case 20: f = arc_p_toobject, a[0] = P, a[1] = G; break;
        case 21: f = arc_p_subgrid, a[0] = P, a[1] = G, type = T_GRID; break;
        case 22: /* a set of patches, merged: the outer set hashes its deferred elements */
            t = arc_set_new(rt);
            arc_set_add(rt, t, P), arc_set_add(rt, t, Q);
            f = arc_p_merge, a[0] = t;
            break;
        case 23: f = arc_p_dneighbors, a[0] = arc_ipair(rt, pt[0], pt[1]); break;
        case 24: f = arc_p_ineighbors, a[0] = arc_ipair(rt, pt[0], pt[1]); break;
        case 25: f = arc_p_neighbors, a[0] = arc_ipair(rt, pt[0], pt[1]); break;
        case 26: f = arc_p_connect, a[0] = arc_ipair(rt, pt[0], pt[1]), a[1] = arc_ipair(rt, pt[2], pt[3]); break;
        case 27: f = arc_p_inbox, a[0] = P; break;
        case 28: f = arc_p_outbox, a[0] = P; break;
        case 29: f = arc_p_backdrop, a[0] = P; break;
        case 30: case 31: /* a shoot, often off the grid */
            f = arc_p_shoot, a[0] = arc_ipair(rt, pt[0], pt[1]), a[1] = arc_ipair(rt, di % 3 ? di % 2 : 2, dj % 2);
            break;
        case 32: { /* lines from each cell, recoloured and merged (feca6190's pattern) */
            tdm_arc_val *sh[2] = {arc_prim_val(ARC_P_shoot), arc_ipair(rt, di % 2, dj % 2)}, *cm[2], *fk[3];
            cm[0] = arc_p_rbind(rt, sh), cm[1] = arc_prim_val(ARC_P_last);
            fk[0] = arc_prim_val(ARC_P_recolor), fk[1] = arc_prim_val(ARC_P_first), fk[2] = arc_p_compose(rt, cm);
            f = arc_p_mapply, a[0] = arc_p_fork(rt, fk), a[1] = P;
            break;
        }
        case 33: case 34: { /* a grid larger than the masks */
            tdm_arc_val *cv[2] = {C, arc_ipair(rt, 28 + di, 28 + dj)};
            f = op == 33 ? arc_p_paint : arc_p_fill, a[0] = arc_p_canvas(rt, cv), a[1] = op == 33 ? P : C, a[2] = P;
            type = T_GRID;
            break;
        }
        case 35: case 36: f = arc_p_palette, a[0] = op == 35 ? P : O, type = -2; break; /* its table below */
        /* filters and maps over objects (image.c), whose results are sets of objects again */
        case 38: f = arc_p_sizefilter, a[0] = O, a[1] = arc_int(rt, 1 + c % 4), type = T_OBJS; break;
        case 39: f = arc_p_colorfilter, a[0] = O, a[1] = C, type = T_OBJS; break;
        case 40: f = arc_p_sfilter, a[0] = O, a[1] = func(rt, (int)fn % 2, G), type = T_OBJS; break;
        case 41: f = arc_p_apply, a[0] = func(rt, 3 + (int)fn % 6, G), a[1] = O, type = T_OBJS; break;
        case 42: { /* a condition that raises on some objects (first of an empty delta) */
            tdm_arc_val *cm[2] = {arc_prim_val(ARC_P_first), arc_prim_val(ARC_P_delta)};
            f = arc_p_sfilter, a[0] = O, a[1] = arc_p_compose(rt, cm), type = T_OBJS;
            break;
        }
        case 43: { /* images that are functions: closures hash by serial, so the ordered path makes them */
            tdm_arc_val *lb[2] = {arc_prim_val(ARC_P_rbind), arc_prim_val(ARC_P_shift)};
            f = arc_p_apply, a[0] = arc_p_lbind(rt, lb), a[1] = O, type = -3;
            break;
        }
        case 44: { /* a closure made inside each call, only its truth kept */
            tdm_arc_val *lb[2] = {arc_prim_val(ARC_P_rbind), arc_prim_val(ARC_P_shift)};
            f = arc_p_sfilter, a[0] = O, a[1] = arc_p_lbind(rt, lb), type = T_OBJS;
            break;
        }
        case 45: f = arc_p_mfilter, a[0] = O, a[1] = func(rt, 2 + (int)fn % 7, G); break;
        /* selections over objects: order-free when one element alone is the answer */
        case 46: f = fn % 2 ? arc_p_argmax : arc_p_argmin, a[0] = O, a[1] = arc_prim_val(ARC_P_size), type = -1; break;
        case 47: { /* int keys with ties, tuple keys, or set keys (a partial order): the ordered way */
            tdm_arc_val *cm[2] = {arc_prim_val(ARC_P_size), arc_prim_val(ARC_P_delta)};
            f = fn % 2 ? arc_p_argmax : arc_p_argmin, a[0] = O, type = -1;
            tdm_arc_val *lb[2] = {arc_prim_val(ARC_P_astuple), C}; /* (c, object): tuples of a set */
            a[1] = fn % 4 == 0   ? arc_prim_val(ARC_P_backdrop)
                   : fn % 4 == 1 ? arc_prim_val(ARC_P_ulcorner)
                   : fn % 4 == 2 ? arc_p_lbind(rt, lb)
                                 : arc_p_compose(rt, cm);
            break;
        }
        case 48: f = arc_p_extract, a[0] = O, a[1] = func(rt, (int)fn % 2, G), type = -1; break;
        case 49: case 50: { /* often one object of that size; 50 also makes a closure in each call */
            tdm_arc_val *mt[2] = {arc_prim_val(ARC_P_size), arc_int(rt, 1 + c % 3)}, *m = arc_p_matcher(rt, mt);
            tdm_arc_val *lb[2] = {arc_prim_val(ARC_P_rbind), arc_prim_val(ARC_P_shift)}, *cm[2], *fk[3];
            cm[0] = arc_prim_val(ARC_P_flip), cm[1] = arc_p_lbind(rt, lb);
            fk[0] = arc_prim_val(ARC_P_either), fk[1] = m, fk[2] = arc_p_compose(rt, cm);
            f = arc_p_extract, a[0] = O, a[1] = op == 49 ? m : arc_p_fork(rt, fk), type = -1;
            break;
        }
        case 51: { /* a key that raises on some objects (first of an empty delta) */
            tdm_arc_val *cm[2] = {arc_prim_val(ARC_P_first), arc_prim_val(ARC_P_delta)};
            f = arc_p_argmax, a[0] = O, a[1] = arc_p_compose(rt, cm), type = -1;
            break;
        }
        case 52: f = arc_p_shift, a[0] = P, a[1] = arc_ipair(rt, di * 9, dj * 11); break; /* off the masks and back */
        /* measures between patches and objects, by row masks on the deferring runtime */
        case 53: case 54: case 55: case 56: case 57: {
            static const int m2[] = {ARC_P_manhattan, ARC_P_adjacent, ARC_P_gravitate, ARC_P_hmatching, ARC_P_vmatching};
            tdm_arc_val *ob = arc_p_first(rt, &O); /* an object, when there is one */
            f = arc_prim_table_fn(m2[op - 53]), a[0] = fn % 2 && ob ? ob : P, a[1] = fn % 3 == 0 ? Q : fn % 3 == 1 && ob ? ob : P;
            if (!ob) rt->failed = 0, rt->err[0] = '\0';
            type = -1;
            break;
        }
        /* remove and difference over objects: order-free filters */
        case 58: case 59: {
            tdm_arc_val *ob = arc_p_first(rt, &O), *sz[2] = {O, arc_int(rt, 1 + c % 3)};
            if (!ob) rt->failed = 0, rt->err[0] = '\0';
            f = op == 58 && ob ? arc_p_remove : arc_p_difference, a[0] = op == 58 && ob ? ob : O;
            a[1] = op == 58 && ob ? O : arc_p_sizefilter(rt, sz);
            type = T_OBJS;
            break;
        }
        /* filters, maps and selections over a deferred set of positions or cells (its interned members) */
        case 60: case 61: case 62: case 63: case 64: {
            static const int unary[] = {ARC_P_dneighbors, ARC_P_neighbors, ARC_P_initset, ARC_P_first, ARC_P_last};
            tdm_arc_val *in[2] = {arc_prim_val(ARC_P_contained), Q}, *ev[2] = {arc_prim_val(ARC_P_even), arc_prim_val(ARC_P_first)};
            tdm_arc_val *cond = fn % 2 ? arc_p_rbind(rt, in) : arc_p_compose(rt, ev), *u = arc_prim_val(unary[fn % 5]);
            a[0] = P, type = -1;
            if (op == 60) f = arc_p_mapply, a[0] = arc_prim_val(unary[fn % 3]), a[1] = P, type = T_PATCH;
            if (op == 61) f = arc_p_apply, a[0] = u, a[1] = P, type = fn % 5 == 2 ? T_OBJS : -1;
            if (op == 62) { /* conditions on first(): once per colour or row, unless one raises or makes closures */
                tdm_arc_val *mt[2] = {arc_prim_val(ARC_P_first), C}, *fl[2] = {arc_prim_val(ARC_P_flip), NULL};
                tdm_arc_val *ff[2] = {arc_prim_val(ARC_P_first), arc_prim_val(ARC_P_first)};
                tdm_arc_val *rb[2] = {arc_prim_val(ARC_P_rbind), arc_prim_val(ARC_P_add)}, *mk[2] = {NULL, arc_prim_val(ARC_P_first)};
                tdm_arc_val *fk[3] = {arc_prim_val(ARC_P_greater), arc_prim_val(ARC_P_first), NULL};
                fl[1] = arc_p_matcher(rt, mt), mk[0] = arc_p_lbind(rt, rb);
                tdm_arc_val *hv[2] = {arc_prim_val(ARC_P_halve), arc_prim_val(ARC_P_first)};
                fk[2] = arc_p_compose(rt, hv);
                tdm_arc_val *fl2[2] = {arc_prim_val(ARC_P_first), arc_prim_val(ARC_P_last)}; /* c + i: not first alone */
                tdm_arc_val *fk2[3] = {arc_prim_val(ARC_P_add), arc_prim_val(ARC_P_first), arc_p_compose(rt, fl2)};
                tdm_arc_val *pick[6] = {cond,  arc_p_compose(rt, fl), arc_p_compose(rt, ff), arc_p_compose(rt, mk),
                                        arc_p_fork(rt, fk), arc_p_fork(rt, fk2)};
                f = arc_p_sfilter, a[1] = pick[c % 6], type = T_PATCH;
            }
            if (op == 63) f = fn % 2 ? arc_p_argmax : arc_p_argmin, a[1] = u;
            if (op == 64) f = arc_p_extract, a[1] = cond;
            break;
        }
        case 65: f = arc_p_occurrences, a[0] = G, a[1] = P; break; /* P deferred, a filter's result, ... */
        case 66: f = arc_p_shape, a[0] = P, type = -1; break;
        case 67: { /* upscale of an object or of a patch (positions raise) */
            tdm_arc_val *ob = arc_p_first(rt, &O);
            if (!ob) rt->failed = 0, rt->err[0] = '\0';
            f = arc_p_upscale, a[0] = fn % 2 && ob ? ob : P, a[1] = arc_int(rt, 1 + c % 3);
            break;
        }
        case 68: { /* the four mirrors of an object or of a patch */
            static const int mr[] = {ARC_P_hmirror, ARC_P_vmirror, ARC_P_dmirror, ARC_P_cmirror};
            tdm_arc_val *ob = arc_p_first(rt, &O);
            if (!ob) rt->failed = 0, rt->err[0] = '\0';
            f = arc_prim_table_fn(mr[fn % 4]), a[0] = c % 2 && ob ? ob : P;
            break;
        }
        case 69: { /* mostcolor and leastcolor of a patch, an object, a mirror (ties read an order), or a patch
                      shifted part way off the masks */
            tdm_arc_val *ob = arc_p_first(rt, &O), *m = ob ? arc_p_vmirror(rt, &ob) : NULL; /* raises when empty */
            tdm_arc_val *sh[2] = {P, arc_ipair(rt, di, 12 + dj)};
            if (!m) rt->failed = 0, rt->err[0] = '\0';
            f = fn % 2 ? arc_p_mostcolor : arc_p_leastcolor;
            tdm_arc_val *far = c % 4 == 2 ? arc_p_shift(rt, sh) : NULL;
            if (c % 4 == 2 && !far) rt->failed = 0, rt->err[0] = '\0';
            a[0] = c % 4 == 0 && ob ? ob : c % 4 == 1 && m ? m : far ? far : P;
            type = -1;
            break;
        }
        case 70: f = fn % 2 ? arc_p_partition : arc_p_fgpartition, a[0] = G, type = T_OBJS; break;
        case 71: case 72: { /* merge over a tuple of sets as a deferred concatenation (cat.c) */
            static const int part[] = {ARC_P_identity, ARC_P_hmirror, ARC_P_vmirror, ARC_P_dmirror, ARC_P_totuple};
            tdm_arc_val *ob = arc_p_first(rt, &O), *fns = arc_tuple(rt, 2 + (uint32_t)(c % 3));
            if (!ob) rt->failed = 0, rt->err[0] = '\0';
            for (uint32_t k = 0; k < fns->n; k++) fns->u.items[k] = arc_prim_val(part[(fn + k) % (c % 2 ? 5 : 4)]);
            tdm_arc_val *rp[2] = {arc_prim_val(ARC_P_rapply), fns}, *mp[2] = {arc_prim_val(ARC_P_mapply), arc_prim_val(ARC_P_identity)};
            if (op == 71) { /* mapply over objects (or a set of positions) of x -> merge(rapply(fns, x)) */
                tdm_arc_val *nb = arc_tuple(rt, 2), *cm[2] = {arc_p_lbind(rt, mp), arc_p_lbind(rt, rp)};
                nb->u.items[0] = arc_prim_val(ARC_P_dneighbors), nb->u.items[1] = arc_prim_val(ARC_P_ineighbors);
                if (fn % 3 == 2) rp[1] = nb, cm[1] = arc_p_lbind(rt, rp); /* on each element of P */
                if (fn % 3 == 1) { /* x -> {last(merge(rapply(fns, x)))}: the merge's result is read, not returned */
                    tdm_arc_val *il[2] = {arc_prim_val(ARC_P_initset), arc_prim_val(ARC_P_last)};
                    tdm_arc_val *mr[2] = {arc_prim_val(ARC_P_merge), arc_p_lbind(rt, rp)};
                    cm[0] = arc_p_compose(rt, il), cm[1] = arc_p_compose(rt, mr);
                }
                f = arc_p_mapply, a[0] = arc_p_compose(rt, cm), a[1] = fn % 3 == 2 ? P : O;
                break;
            }
            /* paint, underpaint, fill or underfill of one made directly; parts overlap in colours */
            tdm_arc_val *parts = arc_tuple(rt, 3 + (uint32_t)(fn % 2)), *x = ob && c % 2 ? ob : P, *xs[2];
            parts->u.items[0] = x, parts->u.items[1] = Q, parts->u.items[2] = arc_p_hmirror(rt, &x);
            if (!parts->u.items[2]) rt->failed = 0, rt->err[0] = '\0', parts->u.items[2] = P;
            if (parts->n == 4) parts->u.items[3] = fn % 4 == 1 ? arc_p_totuple(rt, &P) : arc_p_vmirror(rt, &Q);
            if (!parts->u.items[parts->n - 1]) rt->failed = 0, rt->err[0] = '\0', parts->u.items[parts->n - 1] = Q;
            xs[0] = arc_prim_val(ARC_P_identity), xs[1] = parts;
            rt->lazy_args = xs; /* as a program line whose result only paint reads */
            tdm_arc_val *cat = arc_p_mapply(rt, xs);
            if (!cat) rt->failed = 0, rt->err[0] = '\0', cat = P;
            type = T_GRID;
            switch (c % 5) {
            case 0: f = arc_p_paint, a[0] = G, a[1] = cat; break;
            case 1: f = arc_p_underpaint, a[0] = G, a[1] = cat; break;
            case 2: f = arc_p_fill, a[0] = G, a[1] = C, a[2] = cat; break;
            case 3: f = arc_p_underfill, a[0] = G, a[1] = C, a[2] = cat; break;
            default: f = arc_p_identity, a[0] = cat, type = -1; /* the items, in the eager merge's order */
            }
            break;
        }
        case 73: case 74: case 75: { /* product of sets of objects or patches (product.c) */
            tdm_arc_val *X = fn % 3 == 0 ? P : O, *Y = fn % 3 == 2 ? Q : O, *pa[2] = {X, Y}, *pr = arc_p_product(rt, pa);
            tdm_arc_val *ff = arc_prim_val(ARC_P_first), *ll = arc_prim_val(ARC_P_last);
            if (op == 74) { /* the product itself: len, hash, ==, then its table */
                f = arc_p_identity, a[0] = pr, type = -2;
                break;
            }
            if (op == 75) { /* (x, y) in it, x and y read from X and Y (or swapped), or a pair of positions */
                tdm_arc_val *x = arc_p_first(rt, c % 2 ? &X : &Y), *y = arc_p_last(rt, c % 2 ? &Y : &X);
                if (!x || !y) rt->failed = 0, rt->err[0] = '\0', x = y = arc_ipair(rt, di, dj);
                a[0] = c % 3 == 2 ? arc_pair(rt, arc_ipair(rt, di, dj), y) : arc_pair(rt, x, y), a[1] = pr;
                f = arc_p_contained, type = -1;
                break;
            }
            /* filtered by a condition on first and last (fork and compose over them pick in place), and the
               kept pairs' unions mapped */
            tdm_arc_val *hm[3] = {arc_prim_val(ARC_P_hmatching), ff, ll}, *vm[3] = {arc_prim_val(ARC_P_vmatching), ff, ll};
            tdm_arc_val *cf[2] = {arc_prim_val(ARC_P_color), ff}, *cl[2] = {arc_prim_val(ARC_P_color), ll};
            tdm_arc_val *sf[2] = {arc_prim_val(ARC_P_size), ff}, *sl[2] = {arc_prim_val(ARC_P_size), ll}, *eq[3], *ei[3];
            eq[0] = arc_prim_val(ARC_P_equality), eq[1] = arc_p_compose(rt, cf), eq[2] = arc_p_compose(rt, cl);
            ei[0] = arc_prim_val(ARC_P_either), ei[1] = arc_p_fork(rt, vm), ei[2] = arc_p_fork(rt, eq);
            tdm_arc_val *gt[3] = {arc_prim_val(ARC_P_greater), arc_p_compose(rt, sf), arc_p_compose(rt, sl)};
            tdm_arc_val *cond = c % 3 == 0 ? arc_p_fork(rt, hm) : c % 3 == 1 ? arc_p_fork(rt, ei) : arc_p_fork(rt, gt);
            tdm_arc_val *sa[2] = {pr, cond}, *cb[3] = {arc_prim_val(ARC_P_combine), ff, ll};
            if (fn % 2) {
                tdm_arc_val *kept = arc_p_sfilter(rt, sa);
                if (!kept) rt->failed = 0, rt->err[0] = '\0', kept = arc_set_new(rt);
                f = arc_p_mapply, a[0] = arc_p_fork(rt, cb), a[1] = kept;
            } else {
                f = arc_p_sfilter, a[0] = pr, a[1] = cond, type = -2;
            }
            break;
        }
        case 76: { /* difference with a filter keeping most objects: its membership by a table (image.c); from
                      the filter's flags when it filters the first set's own members, or the same members as the
                      first (itself a filter: siblings); a third of the time the second over other objects */
            tdm_arc_val *mt[2] = {arc_prim_val(ARC_P_size), arc_int(rt, 1 + c % 2)}, *cm[2] = {arc_prim_val(ARC_P_flip), NULL};
            tdm_arc_val *oa[4] = {G, arc_bool(1), arc_bool(0), arc_bool(1)}, *O1 = O, *O2 = NULL;
            if (c % 3 == 0) { /* objects of G and of its mirror: as many, other values (the flags of another set) */
                O1 = arc_p_objects(rt, oa), oa[0] = arc_p_vmirror(rt, oa), O2 = O1 && oa[0] ? arc_p_objects(rt, oa) : NULL;
                if (!O2) rt->failed = 0, rt->err[0] = '\0', O1 = O;
            }
            tdm_arc_val *sz[2] = {O1, arc_int(rt, 1 + (int)fn % 3)}, *X = fn % 3 ? arc_p_sizefilter(rt, sz) : O1;
            if (!X) rt->failed = 0, rt->err[0] = '\0', X = O1;
            cm[1] = arc_p_matcher(rt, mt);
            tdm_arc_val *sa[2] = {O2 ? O2 : fn % 3 == 2 ? X : O1, arc_p_compose(rt, cm)};
            f = arc_p_difference, a[0] = X, a[1] = arc_p_sfilter(rt, sa), type = T_OBJS;
            if (!a[1]) rt->failed = 0, rt->err[0] = '\0', a[1] = O;
            break;
        }
        case 77: { /* the grid's mostcolor or leastcolor (kept with the grid, patch.c), or its cover */
            f = fn % 3 == 0 ? arc_p_mostcolor : fn % 3 == 1 ? arc_p_leastcolor : arc_p_cover, a[0] = G, a[1] = P;
            type = fn % 3 == 2 ? T_GRID : -1;
            break;
        }
        case 78: { /* a closure both branches of a fork reach (its results kept, prim_func.c), over objects */
            tdm_arc_val *X, *pr[3], *pa[2], *id = arc_prim_val(ARC_P_identity);
            if (fn % 3 == 0) { /* 0e206a2e's: the cells not of the object's most common colour */
                pr[0] = arc_prim_val(ARC_P_recolor), pr[1] = arc_prim_val(ARC_P_mostcolor), pr[2] = id;
                tdm_arc_val *rc = arc_p_fork(rt, pr);
                pr[0] = arc_prim_val(ARC_P_difference), pr[1] = id, pr[2] = rc;
                X = arc_p_fork(rt, pr);
            } else if (fn % 3 == 1) {
                pa[0] = arc_prim_val(ARC_P_shift), pa[1] = arc_ipair(rt, di, dj);
                X = arc_p_rbind(rt, pa);
            } else {
                pa[0] = arc_prim_val(ARC_P_outbox), pa[1] = arc_prim_val(ARC_P_toindices);
                X = arc_p_compose(rt, pa);
            }
            tdm_arc_val *gx[2] = {arc_prim_val(c % 2 ? ARC_P_hmirror : ARC_P_box), X};
            tdm_arc_val *h[3] = {arc_prim_val(ARC_P_vmirror), arc_prim_val(ARC_P_normalize), X};
            pr[0] = arc_prim_val(ARC_P_combine), pr[1] = arc_p_compose(rt, gx), pr[2] = arc_p_chain(rt, h);
            f = c % 3 == 2 ? arc_p_apply : arc_p_mapply, a[0] = arc_p_fork(rt, pr), a[1] = O;
            if (f == arc_p_apply) type = -2;
            break;
        }
        case 79: { /* a shared closure that makes closures: never kept (their serials are their hashes) */
            tdm_arc_val *lb[2] = {arc_prim_val(ARC_P_rbind), arc_prim_val(ARC_P_shift)}, *X = arc_p_lbind(rt, lb);
            tdm_arc_val *cx[2] = {arc_prim_val(ARC_P_identity), X}, *pr[3] = {arc_prim_val(ARC_P_astuple), X, NULL};
            pr[2] = arc_p_compose(rt, cx);
            f = arc_p_apply, a[0] = arc_p_fork(rt, pr), a[1] = fn % 2 ? O : P, type = -4;
            break;
        }
        case 80: { /* a measure with one side fixed, over a set's elements (rows kept between calls) */
            static const int m2[] = {ARC_P_manhattan, ARC_P_adjacent, ARC_P_gravitate, ARC_P_hmatching, ARC_P_vmatching};
            tdm_arc_val *ob = arc_p_first(rt, &O), *in[2] = {arc_prim_val(ARC_P_initset), P};
            if (!ob) rt->failed = 0, rt->err[0] = '\0';
            tdm_arc_val *b[2] = {arc_prim_val(m2[fn % 5]), fn % 2 && ob ? ob : Q};
            f = arc_p_apply, a[0] = c % 2 ? arc_p_lbind(rt, b) : arc_p_rbind(rt, b);
            a[1] = c % 3 == 0 ? O : c % 3 == 1 ? arc_p_apply(rt, in) : P, type = -2;
            break;
        }
        case 81: { /* objects of a grid, often one a primitive made (its bytes read from its cells) */
            a[0] = G, a[1] = arc_bool(fn & 1), a[2] = arc_bool(fn & 2), a[3] = arc_bool(fn & 4);
            f = arc_p_objects, type = T_OBJS;
            break;
        }
        case 82: f = arc_p_palette, a[0] = G, type = -2; break;
        case 83: case 84: { /* cells that are no colour (10, -1, True), or a value that is none, sought */
            tdm_arc_val *odd = fn % 3 == 0 ? arc_int(rt, 10) : fn % 3 == 1 ? arc_int(rt, -1) : arc_bool(1);
            tdm_arc_val *one[1] = {arc_ipair(rt, pt[0], pt[1])}; /* or one cell: the end of a row, say */
            if (op == 83) f = arc_p_fill, a[0] = G, a[1] = odd, a[2] = fn % 2 ? P : arc_p_initset(rt, one), type = T_GRID;
            else f = arc_p_ofcolor, a[0] = G, a[1] = c % 2 ? odd : C;
            break;
        }
        case 85: { /* replace a colour (True for 1, or one not present) with a colour, or with one that is none */
            tdm_arc_val *from = fn % 4 == 0 ? arc_bool(1) : fn % 4 == 1 ? arc_int(rt, 10) : C;
            f = arc_p_replace, a[0] = G, a[1] = from, a[2] = fn % 3 == 0 ? arc_int(rt, 11) : arc_int(rt, (c + 3 * (fn % 2)) % 10);
            type = T_GRID;
            break;
        }
        case 86: case 87: { /* lines cast from each position, merged (mapply_shoots: one run per line), or no such */
            tdm_arc_val *sh[2] = {arc_prim_val(ARC_P_shoot), fn == 8 ? C : arc_ipair(rt, di % 3 ? di % 2 : 2, dj % 2)};
            f = arc_p_mapply, a[0] = arc_p_rbind(rt, sh), a[1] = P;
            break;
        }
        case 88: case 89: case 90: { /* prapply(connect, X, Y) over positions (product.c): the distinct lines */
            tdm_arc_val *X = P, *Y = fn % 3 == 0 ? Q : P, *ofc[2] = {G, C}, *cf[2] = {arc_prim_val(ARC_P_connect), NULL};
            tdm_arc_val *ab[2] = {arc_ipair(rt, pt[0], pt[1]), arc_ipair(rt, pt[2], pt[3])};
            if (c % 2 && G->n && G->n * G->u.items[0]->n <= 64) X = arc_p_ofcolor(rt, ofc), Y = fn % 3 == 1 ? P : X;
            if (X->n * Y->n > 600 || c == 4) X = Y = arc_p_connect(rt, ab); /* a line: every pair on it (or none) */
            cf[1] = ab[0];
            tdm_arc_val *pa[3] = {arc_prim_val(ARC_P_connect), X, Y}, *pr = arc_p_prapply(rt, pa);
            if (!pr) rt->failed = 0, rt->err[0] = '\0', pr = arc_set_new(rt);
            if (!s) lines_seen += arc_set_is_lazy(pr) && pr->n > 2;
            if (op == 88) { /* the lines themselves: len, hash, ==, then the table */
                f = arc_p_identity, a[0] = pr, type = -2;
            } else if (op == 89) { /* the rows, columns and points among them (dbc1a6ce, 253bf280) */
                tdm_arc_val *vh[3] = {arc_prim_val(ARC_P_either), arc_prim_val(ARC_P_vline), arc_prim_val(ARC_P_hline)};
                f = arc_p_mfilter, a[0] = pr, a[1] = arc_p_fork(rt, vh);
            } else { /* a line in them: connect of two points, often on a line, one end sometimes in X */
                tdm_arc_val *e = fn % 2 ? arc_p_first(rt, &X) : NULL;
                if (!e) rt->failed = 0, rt->err[0] = '\0';
                else ab[0] = e;
                a[0] = arc_p_connect(rt, ab), a[1] = pr, f = arc_p_contained, type = -1;
                if (!a[0]) rt->failed = 0, rt->err[0] = '\0', a[0] = cf[1];
            }
            break;
        }
        case 91: case 92: { /* a column's (row's) frontier: its coordinate often off the masks, or True, or
                               the location a 1-tuple or a cell */
            tdm_arc_val *k = fn == 7 ? arc_bool(1) : arc_int(rt, pt[1]), *loc = op == 91 ? arc_ipair(rt, pt[0], 0) : NULL;
            if (op == 91) loc = arc_pair(rt, loc->u.items[0], k);
            else if (fn == 6) loc = arc_tuple(rt, 1), loc->u.items[0] = k;
            else loc = arc_pair(rt, k, arc_int(rt, pt[0]));
            if (fn == 5) loc = arc_pair(rt, C, loc); /* a cell: its second item is a pair */
            f = op == 91 ? arc_p_vfrontier : arc_p_hfrontier, a[0] = loc, type = fn % 2 ? -2 : T_PATCH;
            break;
        }
        case 93: /* the frontiers of a patch's positions (or of its cells: pairs in the fixed place), merged */
            f = arc_p_mapply, a[0] = arc_prim_val(fn % 2 ? ARC_P_vfrontier : ARC_P_hfrontier), a[1] = P;
            break;
        case 94: { /* switch two colours (one maybe the other, or True, or 10: no colour) */
            tdm_arc_val *x = fn == 0 ? arc_bool(1) : fn == 1 ? arc_int(rt, 10) : C;
            f = arc_p_switch, a[0] = G, a[1] = fn % 2 ? x : arc_int(rt, (c + fn) % 10), a[2] = fn % 2 ? arc_int(rt, (c + fn) % 10) : x;
            type = T_GRID;
            break;
        }
        case 95: { /* first or last of a filter's objects, often one (read from its member list) */
            tdm_arc_val *fa[2] = {O, fn % 3 ? C : arc_int(rt, 1 + c % 4)};
            a[0] = fn % 3 ? arc_p_colorfilter(rt, fa) : arc_p_sizefilter(rt, fa);
            if (!a[0]) rt->failed = 0, rt->err[0] = '\0', a[0] = O;
            f = fn % 2 ? arc_p_first : arc_p_last, type = -1;
            break;
        }
        case 96: { /* combine of two filters of one set's objects (a filter's union, image.c), or of one
                      filter with itself, or with a filter of other objects */
            tdm_arc_val *fa[2] = {O, C}, *fb[2] = {O, arc_int(rt, 1 + c % 3)}, *oa[4] = {G, arc_bool(1), arc_bool(0), arc_bool(1)};
            if (fn % 4 == 3) { /* objects of G and of its mirror: as many, other values */
                fa[0] = arc_p_objects(rt, oa), oa[0] = arc_p_vmirror(rt, oa), fb[0] = fa[0] && oa[0] ? arc_p_objects(rt, oa) : NULL;
                if (!fb[0]) rt->failed = 0, rt->err[0] = '\0', fa[0] = fb[0] = O;
            }
            a[0] = arc_p_colorfilter(rt, fa), a[1] = fn % 4 == 0 ? a[0] : fn % 2 ? arc_p_sizefilter(rt, fb) : arc_p_colorfilter(rt, fb);
            if (!a[0] || !a[1]) rt->failed = 0, rt->err[0] = '\0', a[0] = a[1] = O;
            f = arc_p_combine, type = T_OBJS;
            break;
        }
        case 97: f = arc_p_asobject, a[0] = G; break;
        case 98: { /* the neighbourhoods of a patch's positions (shifted: often to the masks' edges), of a
                      colour's, or of its cells (TypeError), merged (mapply_neighbours: no call) */
            static const int nb[3] = {ARC_P_dneighbors, ARC_P_ineighbors, ARC_P_neighbors};
            tdm_arc_val *ofc[2] = {G, C}, *sh[2] = {arc_p_toindices(rt, &P), arc_ipair(rt, di, dj)};
            f = arc_p_mapply, a[0] = arc_prim_val(nb[fn % 3]);
            a[1] = fn < 3 ? arc_p_ofcolor(rt, ofc) : fn < 6 && sh[0] ? arc_p_shift(rt, sh) : P;
            if (!a[1]) rt->failed = 0, rt->err[0] = '\0', a[1] = P;
            break;
        }
        case 99: { /* first or last of a colour's few positions, or of each object of a partition (table
                      order replayed: arc_bits_small_ends), the grid's or a primitive's */
            tdm_arc_val *cr[3] = {G, arc_ipair(rt, 0, 0), arc_ipair(rt, 2, 1 + c % 3)}, *cg = arc_p_crop(rt, cr);
            if (!cg) rt->failed = 0, rt->err[0] = '\0', cg = G;
            tdm_arc_val *ofc[2] = {cg, fn > 4 ? arc_p_mostcolor(rt, &cg) : C}, *pa[1] = {fn > 4 ? cg : G}; /* a corner of G: few cells */
            if (!ofc[1]) rt->failed = 0, rt->err[0] = '\0', ofc[1] = C;
            if (fn % 3 == 0) {
                f = fn % 2 ? arc_p_first : arc_p_last, a[0] = arc_p_ofcolor(rt, ofc), type = -1;
                if (!s && a[0] && arc_set_is_lazy(a[0]) && a[0]->n >= 2 && a[0]->n <= 4) small_seen++;
            } else {
                f = arc_p_apply, a[0] = arc_prim_val(fn % 2 ? ARC_P_first : ARC_P_last);
                a[1] = fn % 3 == 1 ? arc_p_partition(rt, pa) : arc_p_fgpartition(rt, pa);
            }
            if (!a[0] || (f == arc_p_apply && !a[1])) rt->failed = 0, rt->err[0] = '\0', f = arc_p_first, a[0] = P, type = -1;
            break;
        }
        case 100: { /* a point into a patch or a neighbourhood (e9614598): a position, often off the masks, a
                       cell, or a value that is neither (an int: then the eager union) */
            tdm_arc_val *pos = arc_ipair(rt, pt[0], pt[1]), *nb[1] = {pos};
            f = arc_p_insert, a[0] = fn < 5 ? pos : fn < 7 ? arc_pair(rt, C, pos) : fn == 7 ? C : arc_p_first(rt, &P);
            a[1] = fn % 2 ? arc_p_dneighbors(rt, nb) : P;
            if (!a[0] || !a[1]) rt->failed = 0, rt->err[0] = '\0', a[0] = pos, a[1] = P;
            break;
        }
        case 101: { /* each row's most or least common colour (e26a3af2), counted from the grid's bytes
                       (rows_common), of a grid of bytes too */
            arc_gview gv;
            f = arc_p_apply, a[0] = arc_prim_val(fn % 2 ? ARC_P_mostcommon : ARC_P_leastcommon), a[1] = G, type = -1;
            if (!s && arc_grid_view(rt, G, &gv) > 0) {
                rows_seen++, slot_rows_seen += slot_sharing_rows(&gv);
                if (fn > 4) a[1] = arc_grid_lazy(rt, gv.c, gv.h, gv.w);
            }
            break;
        }
        default: f = arc_p_first, a[0] = P, type = -1; break;
        }
        res[s] = f(rt, a);
        arc_gview kv;
        if ((op == 85 || op == 94) && !s && res[0] && arc_grid_view_kept(rt, res[0], &kv)) recolours_seen++;
        if (op >= 86 && op <= 87 && !s && res[0] && arc_is_set(res[0]) && res[0]->n > 43) shoots_seen++;
        if (op == 32 && !s && res[0] && arc_is_set(res[0]) && res[0]->n > 43) cell_shoots_seen++;
        if ((op == 91 || op == 92) && !s && res[0]) frontiers_seen += arc_set_is_lazy(res[0]);
        if (op == 98 && !s && res[0]) neighbours_seen += arc_set_is_lazy(res[0]) && res[0]->n > 0;
    }
    if (type == -3 && res[0] && res[1]) { /* a set of closures: never == across runtimes (identity) */
        assert_int_equal(rts[0]->serial, rts[1]->serial);
        assert_true(arc_hash(res[0]) == arc_hash(res[1])); /* its hash and table follow the serials */
        tdm_arc_val *x = res[0], *y = res[1];
        arc_set_slots(x), arc_set_slots(y);
        assert_int_equal(x->u.set.mask, y->u.set.mask);
        for (uint32_t sl = 0; sl <= x->u.set.mask; sl++) {
            tdm_arc_val *kx = x->u.set.tab[sl].key, *ky = y->u.set.tab[sl].key;
            assert_true((kx == NULL) == (ky == NULL));
            if (!kx || kx == ARC_DUMMY) continue;
            assert_true(arc_hash(kx) == arc_hash(ky));
            assert_true(arc_eq(kx->u.fn.cap[1], ky->u.fn.cap[1])); /* the same object bound to the same serial */
        }
        return 1;
    }
    if (type == -4 && res[0] && res[1]) { /* a set of tuples of closures: their hashes follow the serials */
        assert_int_equal(rts[0]->serial, rts[1]->serial);
        assert_true(arc_hash(res[0]) == arc_hash(res[1]));
        return 1;
    }
    if (!compare(r, res[0], res[1])) return 0;
    if (type == -2) same_table(res[0], res[1]);
    if (type == T_PATCH && arc_is_set(res[0])) push(res[0], res[1], T_PATCH);
    if (type == T_OBJS) {
        objs_seen += arc_set_is_lazy(res[0]);
        push(res[0], res[1], T_OBJS);
    }
    if (type == T_GRID && arc_is_tuple(res[0])) {
        same_view(res[0]);
        push(res[0], res[1], T_GRID); /* the grid of later steps */
    }
    return 1;
}

static void check_round(tu_rng *r) {
    int h = 1 + (int)tu_below(r, 30), w = 1 + (int)tu_below(r, 30), cells[900];
    if (tu_below(r, 2)) h = 1 + (int)tu_below(r, 8), w = 1 + (int)tu_below(r, 8);
    random_cells(r, h, w, cells);
    if (tu_below(r, 8) == 0) cells[tu_below(r, (uint64_t)(h * w))] = tu_below(r, 2) ? 10 : -1; /* no colour */
    int flags = (int)tu_below(r, 8);
    npool = 0;
    for (int s = 0; s < 2; s++) {
        tdm_arc_rt_reset(rts[s]);
        tdm_arc_val *g, *a[4];
        assert_int_equal(tdm_arc_grid_new(rts[s], h, w, cells, &g), TDM_OK);
        a[0] = g, a[1] = arc_bool(flags & 1), a[2] = arc_bool(flags & 2), a[3] = arc_bool(flags & 4);
        pool[0].v[s] = g, pool[1].v[s] = arc_p_objects(rts[s], a);
        assert_non_null(pool[1].v[s]);
    }
    pool[0].type = T_GRID, pool[1].type = T_OBJS, npool = 2;
    for (int k = 0; k < 3; k++) random_patch(r);
    for (int k = 0; k < 12; k++) step(r, tu_below(r, 2) ? pick(r, T_GRID) : 0);
    /* the rest laid out now, in random order (a deferred set's recipe lays out its own arguments) */
    int order[POOL];
    for (int k = 0; k < npool; k++) order[k] = k;
    for (int k = npool - 1; k > 0; k--) {
        int x = (int)tu_below(r, (uint64_t)k + 1), t = order[k];
        order[k] = order[x], order[x] = t;
    }
    for (int k = 0; k < npool; k++) {
        entry *e = &pool[order[k]];
        if (e->type == T_PATCH) same_table(e->v[0], e->v[1]), laid_out++;
        if (e->type == T_OBJS) same_table_deep(e->v[0], e->v[1]), laid_out++;
        assert_false(rts[0]->failed);
    }
}

static void test_deferred_vs_eager(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0xb175);
    assert_int_equal(tdm_arc_rt_new(&rts[0]), TDM_OK);
    assert_int_equal(tdm_arc_rt_new(&rts[1]), TDM_OK);
    rts[1]->eager = 1;
    deferred_seen = wide_seen = laid_out = objs_seen = views_seen = eq_seen[0] = eq_seen[1] = shoots_seen = cell_shoots_seen = lines_seen =
        neighbours_seen = small_seen = frontiers_seen = recolours_seen = rows_seen = slot_rows_seen = 0;
    for (int round = 0; round < 3000; round++) {
        arc_bits_portable = round & 1; /* by turns: popcnt and AVX2 where the CPU has them, and the portable forms */
        check_round(&r);
    }
    arc_bits_portable = 0;
    print_message("%d deferred results (%d wide, %d sets of objects), %d layouts held to the eager ones, %d grids' bytes "
                  "held to their cells, %d == of sets of one size (%d equal), %d unions of lines (%d recoloured), %d sets of "
                  "connect's lines, %d unions of neighbourhoods, %d ends of few positions, %d frontiers, %d recoloured grids' bytes, "
                  "%d grids' rows counted as bytes (%d rows of k and k + 8)\n", deferred_seen, wide_seen, objs_seen, laid_out, views_seen,
                  eq_seen[0] + eq_seen[1], eq_seen[1], shoots_seen, cell_shoots_seen, lines_seen, neighbours_seen, small_seen, frontiers_seen, recolours_seen,
                  rows_seen, slot_rows_seen);
    /* the chains did go through the deferred forms */
    assert_true(deferred_seen > 1000 && wide_seen > 100 && objs_seen > 300 && views_seen > 300 && eq_seen[0] > 1000 &&
                eq_seen[1] > 100 && shoots_seen > 50 && cell_shoots_seen > 50 && lines_seen > 50 &&
                neighbours_seen > 20 && small_seen > 20 && frontiers_seen > 50 && recolours_seen > 50 && rows_seen > 50 &&
                slot_rows_seen > 50);
    tdm_arc_rt_free(rts[0]);
    tdm_arc_rt_free(rts[1]);
}

/* The masks' own answers on a hand-made case: a merge of three objects of different colours, then
 * toindices and difference; hash, == and membership against sets written out, before any layout. */
static void test_known_values(void **state) {
    (void)state;
    tdm_arc_val *g = ta_parse("((1, 1, 0), (0, 2, 0), (0, 0, 3))"), *a[4] = {g, arc_bool(1), arc_bool(0), arc_bool(1)};
    tdm_arc_val *objs = arc_p_objects(ta_rt, a), *m = arc_p_merge(ta_rt, &objs);
    assert_non_null(arc_bits_of(m));
    assert_int_equal(m->n, 4);
    tdm_arc_val *want = ta_parse("{(1, (0, 0)), (1, (0, 1)), (2, (1, 1)), (3, (2, 2))}");
    assert_true(arc_eq(m, want) && arc_hash(m) == arc_hash(want));
    tdm_arc_val *ti = arc_p_toindices(ta_rt, &m), *ix = ta_parse("{(0, 0), (0, 1), (1, 1), (2, 2)}");
    assert_non_null(arc_bits_of(ti));
    assert_true(arc_eq(ti, ix) && arc_hash(ti) == arc_hash(ix));
    /* literals are tuples that are not interned: the masks take interned pairs only */
    tdm_arc_val *minus[2] = {arc_ipair(ta_rt, 0, 1), arc_ipair(ta_rt, 5, 5)};
    tdm_arc_val *d[2] = {ti, arc_set_from(ta_rt, minus, 2)}, *df = arc_p_difference(ta_rt, d);
    assert_true(arc_eq(df, ta_parse("{(0, 0), (1, 1), (2, 2)}")));
    assert_true(arc_set_contains(df, ta_parse("(True, 1)")));
    assert_false(arc_set_contains(df, ta_parse("(0, 1)")));
    assert_non_null(arc_bits_of(df));
    /* the reprs as CPython 3.11 prints them (tests/oracle/arc_model.py on the same grid) */
    char *repr = ta_repr(df);
    assert_string_equal(repr, "frozenset({(1, 1), (2, 2), (0, 0)})");
    free(repr);
    assert_null(arc_bits_of(df)); /* laid out by the repr, and with it its recipe's arguments, in turn */
    assert_null(arc_bits_of(ti));
    assert_null(arc_bits_of(m));
    repr = ta_repr(m);
    assert_string_equal(repr, "frozenset({(1, (0, 1)), (3, (2, 2)), (1, (0, 0)), (2, (1, 1))})");
    free(repr);
    tdm_arc_rt_reset(ta_rt);
}

/* Two runtimes for one comparison: [0] defers layouts, [1] is eager (the reference). */
static void rt_pair(tdm_arc_rt *rt[2]) {
    assert_int_equal(tdm_arc_rt_new(&rt[0]), TDM_OK);
    assert_int_equal(tdm_arc_rt_new(&rt[1]), TDM_OK);
    rt[1]->eager = 1;
}

static void rt_pair_free(tdm_arc_rt *rt[2]) {
    tdm_arc_rt_free(rt[0]);
    tdm_arc_rt_free(rt[1]);
}

/* palette of a lazy set of cells without its layout, on the colour sets whose tables depend on the order
 * of insertion (0 and 8, 1 and 9 in one 8-slot table) and on those that do not: the table must be the
 * eager one either way. */
static void test_palette_ties(void **state) {
    (void)state;
    static const int sets[][5] = {{0, 8, -1}, {1, 9, -1}, {8, 0, 3, -1}, {9, 1, 0, 8, -1}, {2, 3, 4, 5, -1}, {0, 8, 1, 9, 4}};
    tu_rng r = tu_rng_for(0x9a1e);
    tdm_arc_rt *rt[2];
    rt_pair(rt);
    int checked = 0;
    for (int rep = 0; rep < 400; rep++) {
        const int *cs = sets[rep % 6];
        int n = 0, h = 1 + (int)tu_below(&r, 6), w = 1 + (int)tu_below(&r, 6), cells[36];
        while (n < 5 && cs[n] >= 0) n++;
        for (int k = 0; k < h * w; k++) cells[k] = cs[tu_below(&r, (uint64_t)n)];
        tdm_arc_val *res[2][2];
        for (int s = 0; s < 2; s++) {
            tdm_arc_rt_reset(rt[s]);
            tdm_arc_val *g, *a[4];
            assert_int_equal(tdm_arc_grid_new(rt[s], h, w, cells, &g), TDM_OK);
            a[0] = g, a[1] = arc_bool(0), a[2] = arc_bool(rep & 1), a[3] = arc_bool(0);
            tdm_arc_val *objs = arc_p_objects(rt[s], a), *m = arc_p_merge(rt[s], &objs), *o = arc_first(objs);
            res[s][0] = arc_p_palette(rt[s], &m), res[s][1] = arc_p_palette(rt[s], &o);
        }
        for (int k = 0; k < 2; k++) same_table(res[0][k], res[1][k]), checked++;
    }
    print_message("%d palettes held to the eager ones\n", checked);
    rt_pair_free(rt);
}

/* The two runtimes' results of one call agree: the same value, or the same error (counted in *passed or
 * *failed). */
static void same_outcome(tdm_arc_rt *rt[2], tdm_arc_val *res[2], int *passed, int *failed) {
    assert_true((res[0] == NULL) == (res[1] == NULL));
    if (res[0]) assert_true(arc_eq(res[0], res[1])), (*passed)++;
    else assert_string_equal(rt[0]->err, rt[1]->err), (*failed)++;
}

/* Calls made by call(rt, s, k) on both runtimes (s 0 deferred, 1 eager), reset each time, for k = k0..k1
 * (nesting near the recursion limit): the outcomes agree, and the limit falls inside the range (some
 * calls fail, some pass). */
static void depth_sweep(int k0, int k1, tdm_arc_val *(*call)(tdm_arc_rt *rt, int s, int k)) {
    tdm_arc_rt *rt[2];
    rt_pair(rt);
    int failed = 0, passed = 0;
    for (int k = k0; k <= k1; k++) {
        tdm_arc_val *res[2];
        for (int s = 0; s < 2; s++) tdm_arc_rt_reset(rt[s]), res[s] = call(rt[s], s, k);
        same_outcome(rt, res, &passed, &failed);
    }
    assert_true(failed > 0 && passed > 0);
    rt_pair_free(rt);
}

/* A kept result is given again only where the call would begin no deeper than the kept one did: X is
 * reached first at the fork's depth, then again k composes deeper; with k near the recursion limit the
 * second call fails in the eager runtime (which keeps nothing), and must fail alike in the deferred one. */
static tdm_arc_val *kept_call(tdm_arc_rt *rt, int s, int k) {
    (void)s;
    tdm_arc_val *a[3] = {arc_prim_val(ARC_P_size), arc_prim_val(ARC_P_toindices)};
    tdm_arc_val *X = arc_p_compose(rt, a);
    a[0] = arc_prim_val(ARC_P_astuple), a[1] = X, a[2] = ta_under_composes(rt, X, k);
    const char *txt = "{(0, 0), (1, 2)}";
    tdm_arc_val *F = arc_p_fork(rt, a), *p = ta_parse_at(rt, &txt);
    return arc_call1(rt, F, p);
}

static void test_kept_depth(void **state) {
    (void)state;
    depth_sweep(975, 995, kept_call);
}

/* A deferred set laid out late, deep in nested calls: its recipe makes its calls in place, so it meets no
 * recursion limit where the set's own call (at depth 0, where the eager runtime built it) met none:
 * first() of prapply(connect, x, x) under k composes, near the limit. */
static tdm_arc_val *late_layout_call(tdm_arc_rt *rt, int s, int k) {
    const char *txt = "{(0, 0), (1, 2), (2, 2)}";
    tdm_arc_val *x = ta_parse_at(rt, &txt), *pa[3] = {arc_prim_val(ARC_P_connect), x, x};
    tdm_arc_val *lines = arc_p_prapply(rt, pa);
    assert_non_null(lines);
    assert_int_equal(arc_set_is_lazy(lines), !s); /* deferred in the default runtime */
    return arc_call1(rt, ta_under_composes(rt, arc_prim_val(ARC_P_first), k), lines);
}

static void test_late_layout_depth(void **state) {
    (void)state;
    depth_sweep(980, 995, late_layout_call);
}

/* A closure's inner and outer primitives are called without arc_call's frame (prim_func.c, callp), with
 * the same checks: near the recursion limit, through nine kinds of closure under k composes, the outcome
 * (value, or error and message) and the depth after the call are those of a runtime with statistics on,
 * which makes every call through arc_call. */
static void test_prim_calls_depth(void **state) {
    (void)state;
    tdm_arc_rt *rt[2];
    assert_int_equal(tdm_arc_rt_new(&rt[0]), TDM_OK);
    assert_int_equal(tdm_arc_rt_new(&rt[1]), TDM_OK);
    tdm_arc_rt_stats_enable(rt[1], 1);
    int failed = 0, passed = 0;
    for (int kind = 0; kind < 9; kind++)
        for (int k = 980; k <= 992; k++) {
            tdm_arc_val *res[2];
            for (int s = 0; s < 2; s++) {
                tdm_arc_rt_reset(rt[s]);
                tdm_arc_val *a[3], *X;
                switch (kind) {
                case 0: a[0] = arc_prim_val(ARC_P_astuple), a[1] = arc_prim_val(ARC_P_size), a[2] = arc_prim_val(ARC_P_first);
                    X = arc_p_fork(rt[s], a);
                    break;
                case 1: a[0] = arc_prim_val(ARC_P_size), a[1] = arc_prim_val(ARC_P_toindices), a[2] = arc_prim_val(ARC_P_identity);
                    X = arc_p_chain(rt[s], a);
                    break;
                case 2: a[0] = arc_prim_val(ARC_P_size), a[1] = arc_int(rt[s], 2), X = arc_p_matcher(rt[s], a); break;
                case 3: a[0] = arc_prim_val(ARC_P_shift), a[1] = arc_ipair(rt[s], 1, 1), X = arc_p_rbind(rt[s], a); break;
                case 4: a[0] = arc_prim_val(ARC_P_combine), a[1] = arc_set_empty(rt[s]), X = arc_p_lbind(rt[s], a); break;
                case 5: a[0] = arc_prim_val(ARC_P_backdrop), a[1] = arc_prim_val(ARC_P_normalize), X = arc_p_compose(rt[s], a); break;
                case 6: /* mapply(rbind(shoot, DOWN), x): the lines' union, made with no call (mapply_shoots) */
                    a[0] = arc_prim_val(ARC_P_shoot), a[1] = arc_ipair(rt[s], 1, 0), a[1] = arc_p_rbind(rt[s], a);
                    a[0] = arc_prim_val(ARC_P_mapply), X = arc_p_lbind(rt[s], a);
                    break;
                case 8: /* prapply(connect, x, x): the distinct lines, made with no call frame (product.c) */
                    a[0] = arc_prim_val(ARC_P_prapply), a[1] = arc_prim_val(ARC_P_connect), a[0] = arc_p_lbind(rt[s], a);
                    a[1] = a[2] = arc_prim_val(ARC_P_identity), X = arc_p_fork(rt[s], a);
                    break;
                default: /* mapply(fork(recolor, first, compose(rbind(shoot, DOWN), last)), x) over cells: the same */
                    a[0] = arc_prim_val(ARC_P_shoot), a[1] = arc_ipair(rt[s], 1, 0), a[0] = arc_p_rbind(rt[s], a);
                    a[1] = arc_prim_val(ARC_P_last), a[2] = arc_p_compose(rt[s], a);
                    a[0] = arc_prim_val(ARC_P_recolor), a[1] = arc_prim_val(ARC_P_first), a[1] = arc_p_fork(rt[s], a);
                    a[0] = arc_prim_val(ARC_P_mapply), X = arc_p_lbind(rt[s], a);
                    break;
                }
                const char *txt = kind == 7 ? "{(3, (0, 0)), (5, (1, 2))}" : "{(0, 0), (1, 2)}";
                if (s) tdm_arc_rt_stats_enable(rt[s], 1); /* the counts zeroed */
                res[s] = arc_call1(rt[s], ta_under_composes(rt[s], X, k), ta_parse_at(rt[s], &txt));
                assert_int_equal(rt[s]->depth, 0);
                if (s && (kind == 6 || kind == 7) && res[s]) /* statistics make every call: a shoot per position */
                    assert_int_equal(tdm_arc_rt_prim_stats(rt[s], ARC_P_shoot).calls, 2);
                if (s && kind == 7 && res[s]) assert_int_equal(tdm_arc_rt_prim_stats(rt[s], ARC_P_recolor).calls, 2);
                if (s && kind == 8 && res[s]) assert_int_equal(tdm_arc_rt_prim_stats(rt[s], ARC_P_connect).calls, 4);
            }
            same_outcome(rt, res, &passed, &failed);
        }
    assert_true(failed > 7 && passed > 7); /* the limit fell inside the range */
    rt_pair_free(rt);
}

/* Kept results are told apart by closure as well as by argument: more shared closures than the table
 * has entries (so some share an entry), each called twice on one patch by its fork. */
static void test_kept_many(void **state) {
    (void)state;
    tdm_arc_rt *rt[2];
    rt_pair(rt);
    tdm_arc_val *res[2][100];
    for (int s = 0; s < 2; s++) {
        const char *txt = "{(0, 0), (1, 2)}";
        tdm_arc_val *p = ta_parse_at(rt[s], &txt);
        for (int k = 0; k < 100; k++) {
            tdm_arc_val *a[3] = {arc_prim_val(ARC_P_shift), arc_ipair(rt[s], k, -k)};
            tdm_arc_val *X = arc_p_rbind(rt[s], a);
            a[0] = arc_prim_val(ARC_P_identity), a[1] = X;
            tdm_arc_val *c = arc_p_compose(rt[s], a);
            a[0] = arc_prim_val(ARC_P_combine), a[1] = X, a[2] = c;
            res[s][k] = arc_call1(rt[s], arc_p_fork(rt[s], a), p);
            assert_non_null(res[s][k]);
        }
    }
    for (int k = 0; k < 100; k++) assert_true(arc_eq(res[0][k], res[1][k]));
    rt_pair_free(rt);
}

/* arc_colour_counts and arc_colour_firsts (gview.c: mostcolor, palette and objects() of grids read as
 * bytes) against a count cell by cell, over random lengths (the vector parts and the tail) and palettes,
 * with the AVX2 form (where the CPU has it) and the 16-byte one by turns. */
static void test_colour_counts(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0xc0105);
    uint8_t c[900];
    for (int round = 0; round < 2000; round++) {
        uint32_t n = 1 + (uint32_t)tu_below(&r, round % 2 ? 900 : 40), k = 1 + (uint32_t)tu_below(&r, 10), pal[10];
        for (uint32_t x = 0; x < k; x++) pal[x] = (uint32_t)tu_below(&r, 10);
        for (uint32_t x = 0; x < n; x++) c[x] = (uint8_t)pal[tu_below(&r, k)];
        uint32_t count[10], first[10], want[10] = {0}, wfirst[10];
        for (int x = 0; x < 10; x++) wfirst[x] = UINT32_MAX;
        for (uint32_t x = 0; x < n; x++)
            if (!want[c[x]]++) wfirst[c[x]] = x;
        arc_bits_portable = round >> 1 & 1;
        arc_colour_counts(c, n, count);
        arc_colour_firsts(c, n, count, first);
        assert_memory_equal(count, want, sizeof want);
        assert_memory_equal(first, wfirst, sizeof wfirst);
    }
    arc_bits_portable = 0;
}

/* manhattan, adjacent, gravitate, hmatching and vmatching between one position and a patch, either way
 * round (argmin and argmax over initset's positions by a patch's distance), held to the eager runtime: the
 * row masks' measures (prim_geom.c, a one-position side read in place) with the position left, right,
 * above or below the patch, inside it, and far enough off its rows and columns that gravitate runs out of
 * steps; the one-element set holds a position, or a cell (c, (i, j)) in every third round, and in every
 * fifth the patch is a one-element set too. */
static void test_cell_measures(void **state) {
    (void)state;
    static const int ms[] = {ARC_P_manhattan, ARC_P_adjacent, ARC_P_gravitate, ARC_P_hmatching, ARC_P_vmatching};
    tu_rng r = tu_rng_for(0xce11);
    tdm_arc_rt *rt[2];
    rt_pair(rt);
    int passed = 0, failed = 0, cells[900];
    for (int rep = 0; rep < 3000; rep++) {
        int h = 1 + (int)tu_below(&r, 30), w = 1 + (int)tu_below(&r, 30), i0 = (int)tu_below(&r, (uint64_t)h),
            j0 = (int)tu_below(&r, (uint64_t)w), far = rep % 4 == 0;
        for (int k = 0; k < h * w; k++) /* the patch (colour 1) in one corner when far, else anywhere */
            cells[k] = (!far || (k / w >= i0 && k % w >= j0)) && tu_below(&r, 4) == 0;
        cells[i0 * w + j0] = 1;
        int ci = far ? (int)tu_below(&r, (uint64_t)(i0 + 1)) - 1 : (int)tu_below(&r, 32) - 1;
        int cj = far ? (int)tu_below(&r, (uint64_t)(j0 + 1)) - 1 : (int)tu_below(&r, 32) - 1;
        for (int m = 0; m < 10; m++) {
            tdm_arc_val *res[2];
            for (int s = 0; s < 2; s++) {
                tdm_arc_rt_reset(rt[s]);
                rt[s]->failed = 0, rt[s]->err[0] = '\0';
                tdm_arc_val *g, *a[2], *pos = arc_ipair(rt[s], ci, cj), *other = arc_ipair(rt[s], i0, j0);
                assert_int_equal(tdm_arc_grid_new(rt[s], h, w, cells, &g), TDM_OK);
                a[0] = g, a[1] = arc_int(rt[s], 1);
                tdm_arc_val *patch = arc_p_ofcolor(rt[s], a);
                if (rep % 3 == 1) { /* a cell: toindices reads its position */
                    tdm_arc_val *t[2] = {arc_int(rt[s], 1 + rep % 9), pos};
                    pos = arc_p_astuple(rt[s], t);
                }
                if (rep % 5 == 2) patch = arc_p_initset(rt[s], &other);
                tdm_arc_val *cell = arc_p_initset(rt[s], &pos);
                a[0] = m % 2 ? cell : patch, a[1] = m % 2 ? patch : cell;
                res[s] = arc_prim_table_fn(ms[m / 2])(rt[s], a);
            }
            same_outcome(rt, res, &passed, &failed);
        }
    }
    print_message("%d cell measures held to the eager ones (%d raised alike)\n", passed, failed);
    rt_pair_free(rt);
}

/* Whether patch p's box holds over four times as many positions as p (eager: positions distinct). */
static int sparse_box(tdm_arc_val *p) {
    int64_t lo[2] = {INT64_MAX, INT64_MAX}, hi[2] = {INT64_MIN, INT64_MIN};
    arc_slot *t = arc_set_slots(p);
    for (uint32_t k = 0; k <= p->u.set.mask; k++) {
        tdm_arc_val *e = t[k].key;
        if (!e || e == ARC_DUMMY) continue;
        if (arc_is_tuple(e->u.items[1])) e = e->u.items[1]; /* a cell's position */
        for (int x = 0; x < 2; x++) {
            int64_t v = e->u.items[x]->u.i;
            lo[x] = v < lo[x] ? v : lo[x], hi[x] = v > hi[x] ? v : hi[x];
        }
    }
    return (hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) / 4 > (int64_t)p->n;
}

/* delta of a shifted or normalized object (a deferred set: its row masks tell which positions toindices
 * holds, and how many) against the eager runtime, table for table: the box's positions less the patch's
 * take CPython's copy-and-delete branch when the box has over four times as many, else the rebuild one,
 * and both must be met. The patches: each object (one or many colours), and each colour's positions. */
static void test_delta_rows(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0xde17a);
    tdm_arc_rt *rt[2];
    rt_pair(rt);
    int cells[900], seen = 0, sparse = 0;
    for (int rep = 0; rep < 400; rep++) {
        int h = 1 + (int)tu_below(&r, 30), w = 1 + (int)tu_below(&r, 30), di = (int)tu_range(&r, -3, 3), dj = (int)tu_range(&r, -3, 3);
        random_cells(&r, h, w, cells);
        for (int k = 0; k < h * w; k++) /* holes, so that objects are not all rectangles */
            if (tu_below(&r, 3) == 0) cells[k] = 0;
        tdm_arc_val *objs[2];
        for (int s = 0; s < 2; s++) {
            tdm_arc_rt_reset(rt[s]);
            tdm_arc_val *g, *a[4];
            assert_int_equal(tdm_arc_grid_new(rt[s], h, w, cells, &g), TDM_OK);
            a[0] = g, a[1] = arc_bool(rep % 2 == 0), a[2] = arc_bool(rep % 3 == 0), a[3] = arc_bool(1);
            objs[s] = arc_p_objects(rt[s], a);
            assert_non_null(objs[s]);
        }
        arc_slot *t0 = arc_set_slots(objs[0]), *t1 = arc_set_slots(objs[1]);
        for (uint32_t k = 0; k <= objs[1]->u.set.mask; k++) {
            if (!t1[k].key || t1[k].key == ARC_DUMMY) continue;
            tdm_arc_val *d[2];
            for (int s = 0; s < 2; s++) {
                tdm_arc_val *o = (s ? t1 : t0)[k].key, *a[2] = {o, arc_ipair(rt[s], di, dj)};
                tdm_arc_val *m = rep % 4 == 0 ? arc_p_normalize(rt[s], a) : arc_p_shift(rt[s], a);
                assert_non_null(m);
                if (!s) seen += arc_set_is_lazy(m);
                d[s] = arc_p_delta(rt[s], &m);
                assert_non_null(d[s]);
            }
            assert_false(rt[0]->failed);
            same_table(d[0], d[1]);
            sparse += sparse_box(t1[k].key);
        }
        for (int c = 1; c < 10; c++) { /* the positions of one colour: often few, far apart */
            tdm_arc_val *d[2], *p = NULL;
            for (int s = 0; s < 2; s++) {
                tdm_arc_val *a[2], *g;
                assert_int_equal(tdm_arc_grid_new(rt[s], h, w, cells, &g), TDM_OK);
                a[0] = g, a[1] = arc_int(rt[s], c);
                tdm_arc_val *o = arc_p_ofcolor(rt[s], a);
                if (!o || !o->n) break;
                a[0] = o, a[1] = arc_ipair(rt[s], di, dj);
                tdm_arc_val *m = arc_p_shift(rt[s], a);
                if (!s) seen += arc_set_is_lazy(m);
                else p = m;
                d[s] = arc_p_delta(rt[s], &m);
                assert_non_null(d[s]);
            }
            if (!p) continue;
            assert_false(rt[0]->failed);
            same_table(d[0], d[1]);
            sparse += sparse_box(p);
        }
    }
    print_message("%d deltas of deferred patches held to the eager ones, %d by copy and delete\n", seen, sparse);
    assert_true(seen > 100 && sparse > 20 && seen - sparse > 20);
    rt_pair_free(rt);
}

/* difference and combine of deferred filters of objects (image.c arc_filter_minus, arc_filter_union)
 * against the eager runtime: a filter by a filter of the first's own members, two filters of one set
 * (siblings, either way round, one with itself), and filters of two sets with as many objects (a grid's
 * and its mirror's), whose flags must not be read across. Counted before the layout (size and hash, from
 * the members), then table for table. */
static void test_filter_sets(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0xf17e5);
    tdm_arc_rt *rt[2];
    rt_pair(rt);
    int cells[900], checked = 0;
    for (int rep = 0; rep < 300; rep++) {
        int h = 2 + (int)tu_below(&r, 14), w = 2 + (int)tu_below(&r, 14), col = 1 + (int)tu_below(&r, 4);
        int s1 = 1 + (int)tu_below(&r, 3), s2 = 1 + (int)tu_below(&r, 3);
        random_cells(&r, h, w, cells);
        for (int k = 0; k < h * w; k++) /* holes, so that there are many small objects */
            if (tu_below(&r, 2) == 0) cells[k] = 0;
        for (int op = 0; op < 8; op++) {
            tdm_arc_val *res[2];
            for (int s = 0; s < 2; s++) {
                tdm_arc_rt_reset(rt[s]);
                tdm_arc_val *g, *a[4];
                assert_int_equal(tdm_arc_grid_new(rt[s], h, w, cells, &g), TDM_OK);
                a[0] = g, a[1] = arc_bool(1), a[2] = arc_bool(0), a[3] = arc_bool(1);
                tdm_arc_val *O1 = arc_p_objects(rt[s], a);
                a[0] = arc_p_vmirror(rt[s], &g);
                tdm_arc_val *O2 = arc_p_objects(rt[s], a);
                tdm_arc_val *sa[2] = {O1, arc_int(rt[s], s1)}, *ca[2] = {O1, arc_int(rt[s], col)}, *cb[2] = {O2, arc_int(rt[s], col)};
                tdm_arc_val *sza = arc_p_sizefilter(rt[s], sa), *cla = arc_p_colorfilter(rt[s], ca), *clb = arc_p_colorfilter(rt[s], cb);
                sa[0] = sza, sa[1] = arc_int(rt[s], s2);
                tdm_arc_val *in = arc_p_sizefilter(rt[s], (tdm_arc_val *[]){cla, arc_int(rt[s], s2)}); /* over cla's own */
                tdm_arc_val *x[8][2] = {{O1, cla}, {sza, cla}, {cla, sza}, {cla, in}, {sza, clb}, {sza, cla}, {sza, sza}, {sza, clb}};
                a[0] = x[op][0], a[1] = x[op][1];
                res[s] = op < 5 ? arc_p_difference(rt[s], a) : arc_p_combine(rt[s], a);
            }
            assert_false(rt[0]->failed);
            assert_non_null(res[0]);
            assert_non_null(res[1]);
            assert_int_equal(res[0]->n, res[1]->n);
            assert_true(arc_hash(res[0]) == arc_hash(res[1]));
            same_table_deep(res[0], res[1]);
            checked++;
        }
    }
    print_message("%d differences and combines of filters held to the eager ones\n", checked);
    rt_pair_free(rt);
}

/* arc_bits_put_run (the lines of connect and shoot) against arc_bits_put of each point in order: seeded
 * random runs in all nine directions (a row's run sets its mask bits at once), from inside, across and
 * outside the masks, in blocks of several colours: the same masks and the same keys in the same order. */
static void test_put_run(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0x9e7a);
    tdm_arc_rt *rt;
    assert_int_equal(tdm_arc_rt_new(&rt), TDM_OK);
    int spans = 0;
    for (int rep = 0; rep < 20000; rep++) {
        tdm_arc_rt_reset(rt);
        arc_bits a, b;
        assert_int_equal(arc_bits_init_wide(rt, &a), 0);
        assert_int_equal(arc_bits_init_wide(rt, &b), 0);
        for (int line = 0; line < 3; line++) {
            int64_t c = (int64_t)tu_below(&r, 10), i = tu_range(&r, -40, 70), j = tu_range(&r, -40, 70);
            int64_t di = tu_range(&r, -1, 1), dj = tu_range(&r, -1, 1);
            uint32_t n = 1 + (uint32_t)tu_below(&r, 60);
            spans += di == 0 && dj != 0 && arc_bits_fits(i, j);
            assert_int_equal(arc_bits_put_run(&a, c, i, j, di, dj, n), 0);
            for (uint32_t k = 0; k < n; k++) assert_int_equal(arc_bits_put(&b, c, i + k * di, j + k * dj), 0);
        }
        for (int c = 0; c < 10; c++) /* a run wholly off the masks may leave its block written but empty */
            for (int i = 0; i < 32; i++)
                assert_int_equal(a.blocks >> c & 1 ? a.m[32 * c + i] : 0, b.blocks >> c & 1 ? b.m[32 * c + i] : 0);
        assert_int_equal(a.nout, b.nout);
        if (a.nout) assert_memory_equal(a.out, b.out, a.nout * sizeof *a.out);
    }
    assert_true(spans > 1000);
    tdm_arc_rt_free(rt);
}

/* paint, underpaint, fill, underfill and cover of a deferred union of two recoloured patches (cells of
 * two colours, often on one position: then paint must write them in the listed order) over grids of every
 * height, 30 rows in a third of them (the masks' last grid row), held to the eager runtime. In half the
 * rounds the first patch is the colour's cells in the top k rows and the second one row's moved onto row
 * k - 1, so that the two meet only in the union's last row. */
static void test_paint_rows(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0x9a17);
    tdm_arc_rt *rt[2];
    rt_pair(rt);
    int passed = 0, failed = 0, deferred = 0, cells[900];
    for (int rep = 0; rep < 2000; rep++) {
        int h = rep % 3 ? 1 + (int)tu_below(&r, 30) : 30, w = 1 + (int)tu_below(&r, 30), last = rep % 2;
        random_cells(&r, h, w, cells);
        int64_t ca = (int64_t)tu_below(&r, 10), cb = (int64_t)tu_below(&r, 10), c1 = (int64_t)tu_below(&r, 10),
                c2 = (int64_t)tu_below(&r, 10), di = tu_range(&r, -1, 1), dj = tu_range(&r, -1, 1);
        int64_t k = 1 + (int64_t)tu_below(&r, (uint64_t)h), i0 = (int64_t)tu_below(&r, (uint64_t)h);
        for (int m = 0; m < 5; m++) {
            tdm_arc_val *res[2];
            for (int s = 0; s < 2; s++) {
                tdm_arc_rt *t = rt[s];
                tdm_arc_rt_reset(t);
                t->failed = 0, t->err[0] = '\0';
                tdm_arc_val *g, *a[3];
                assert_int_equal(tdm_arc_grid_new(t, h, w, cells, &g), TDM_OK);
                tdm_arc_val *ga = g, *gb = g;
                if (last) { /* rows 0 .. k - 1, and row i0 alone */
                    a[0] = g, a[1] = arc_ipair(t, 0, 0), a[2] = arc_ipair(t, k, w);
                    ga = arc_p_crop(t, a);
                    a[1] = arc_ipair(t, i0, 0), a[2] = arc_ipair(t, 1, w);
                    gb = arc_p_crop(t, a);
                }
                a[0] = ga, a[1] = arc_int(t, ca);
                tdm_arc_val *pa = arc_p_ofcolor(t, a);
                a[0] = gb, a[1] = arc_int(t, cb);
                tdm_arc_val *pb = arc_p_ofcolor(t, a);
                a[0] = arc_int(t, c1), a[1] = pa;
                tdm_arc_val *ra = arc_p_recolor(t, a);
                a[0] = arc_int(t, c2), a[1] = pb;
                tdm_arc_val *rb = arc_p_recolor(t, a);
                a[0] = rb, a[1] = arc_ipair(t, last ? k - 1 : di, dj);
                rb = arc_p_shift(t, a);
                a[0] = ra, a[1] = rb;
                tdm_arc_val *u = arc_p_combine(t, a);
                assert_non_null(u);
                if (!s && arc_set_is_lazy(u)) deferred++;
                static const int ops[] = {ARC_P_paint, ARC_P_underpaint, ARC_P_fill, ARC_P_underfill, ARC_P_cover};
                a[0] = g, a[1] = m == 2 || m == 3 ? arc_int(t, c2) : u, a[2] = u; /* fill, underfill: the value, the patch */
                res[s] = arc_prim_table_fn(ops[m])(t, a);
                if (!s && res[s]) same_view_in(t, res[s]);
            }
            same_outcome(rt, res, &passed, &failed);
        }
    }
    print_message("%d paints held to the eager ones (%d raised alike), %d over deferred unions\n", passed, failed, deferred);
    assert_true(deferred > 1000);
    rt_pair_free(rt);
}

int main(void) {
    tu_init_seed("test_arc_bits");
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_deferred_vs_eager), cmocka_unit_test(test_known_values),
                                       cmocka_unit_test(test_palette_ties), cmocka_unit_test(test_kept_depth),
                                       cmocka_unit_test(test_kept_many), cmocka_unit_test(test_colour_counts),
                                       cmocka_unit_test(test_prim_calls_depth), cmocka_unit_test(test_late_layout_depth),
                                       cmocka_unit_test(test_cell_measures), cmocka_unit_test(test_paint_rows),
                                       cmocka_unit_test(test_delta_rows), cmocka_unit_test(test_filter_sets),
                                       cmocka_unit_test(test_put_run)};
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
