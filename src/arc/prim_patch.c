/* prim_patch.c: patch construction (spec §3.5): patches from grids, toindices/recolor/toobject, the
 * neighbourhoods, lines, frontiers and bounding-box shapes. Each frozenset is built by the insertion
 * recipe of spec §4.7 (row-major seq, freeze of a display, unions for outlines), because later primitives
 * read their iteration order; when the result's elements fit arc_bits (bits.c), that recipe (the _eager
 * forms) runs only when the order is first read, and the primitive returns the contents. */
#include "arc_internal.h"

#include <string.h>

/* The rows of a grid value for primitives that only iterate it (no rectangular check needed). */
static int grid_rows(tdm_arc_rt *rt, tdm_arc_val *g, const char *who) {
    if (!arc_is_tuple(g)) return arc_failf(rt, "%s: expected a grid, got %s", who, arc_type_name(g));
    for (uint32_t i = 0; i < g->n; i++)
        if (!arc_is_tuple(g->u.items[i])) return arc_failf(rt, "%s: grid row %u is not a tuple", who, i);
    return 0;
}

static tdm_arc_val *asindices_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    ARC_TRYI(grid_rows(rt, a[0], "asindices"));
    tdm_arc_val *s = arc_set_new(rt);
    ARC_TRY(s);
    uint32_t h = a[0]->n, w = h ? a[0]->u.items[0]->n : 0;
    for (uint32_t i = 0; i < h; i++)
        for (uint32_t j = 0; j < w; j++)
            if (arc_set_add(rt, s, arc_ipair(rt, i, j))) return NULL;
    return s;
}

tdm_arc_val *arc_p_asindices(tdm_arc_rt *rt, tdm_arc_val **a) {
    uint32_t h = arc_is_tuple(a[0]) ? a[0]->n : 0, w = h && arc_is_tuple(a[0]->u.items[0]) ? a[0]->u.items[0]->n : 0;
    if (arc_defer(rt) && h && w && arc_bits_fits(h - 1, w - 1)) {
        /* every (i, j) of h x w (w: row 0's length), laid out when read */
        arc_bits b;
        ARC_TRYI(grid_rows(rt, a[0], "asindices"));
        ARC_TRYI(arc_bits_init(rt, &b));
        b.kind = ARC_BITS_POS;
        uint32_t *m = arc_bits_block(&b, 0), row = ((1u << w) - 1) << ARC_BITS_OFF;
        for (uint32_t i = 0; i < h; i++) m[i + ARC_BITS_OFF] = row;
        int64_t box[4] = {0, 0, h - 1, w - 1};
        return arc_bits_set_counted(rt, &b, h * w, box, asindices_eager, a, 1);
    }
    return asindices_eager(rt, a);
}

/* ofcolor(grid, v) as masks: 1 and *b, or 0 when a cell or v is not an int or the grid is over 30 x 30. */
static int ofcolor_bits(tdm_arc_rt *rt, tdm_arc_val *g, tdm_arc_val *v, arc_bits *b) {
    if (!arc_is_tuple(g) || g->n > 32 - ARC_BITS_OFF || !arc_is_int(v)) return 0;
    arc_gview gv;
    int view = arc_grid_view(rt, g, &gv);
    if (view < 0 || arc_bits_init(rt, b)) return -1;
    b->kind = ARC_BITS_POS;
    uint32_t *m = arc_bits_block(b, 0);
    if (view) { /* the grid's bytes: a compare per row (a value not a colour is in no cell) */
        if (v->u.i >= 0 && v->u.i < ARC_COLOURS_N)
            for (int i = 0; i < gv.h; i++) m[i + ARC_BITS_OFF] = arc_gview_row_mask(&gv, i, (int)v->u.i) << ARC_BITS_OFF;
        return 1;
    }
    for (uint32_t i = 0; i < g->n; i++) {
        tdm_arc_val *r = g->u.items[i];
        if (!arc_is_tuple(r) || r->n > 32 - ARC_BITS_OFF) return 0;
        uint32_t row = 0;
        for (uint32_t j = 0; j < r->n; j++) {
            tdm_arc_val *c = r->u.items[j];
            if (!arc_is_int(c)) return 0;
            row |= (uint32_t)(c->u.i == v->u.i) << (j + ARC_BITS_OFF);
        }
        m[i + ARC_BITS_OFF] = row;
    }
    return 1;
}

static tdm_arc_val *scan(tdm_arc_rt *rt, tdm_arc_val *g, tdm_arc_val *value, const char *who) {
    ARC_TRYI(grid_rows(rt, g, who));
    tdm_arc_val *s = arc_set_new(rt);
    ARC_TRY(s);
    for (uint32_t i = 0; i < g->n; i++) {
        tdm_arc_val *r = g->u.items[i];
        for (uint32_t j = 0; j < r->n; j++) {
            tdm_arc_val *v = r->u.items[j], *e;
            if (value && !arc_eq(v, value)) continue;
            e = value ? arc_ipair(rt, i, j) : arc_pair(rt, v, arc_ipair(rt, i, j));
            if (arc_set_add(rt, s, e)) return NULL;
        }
    }
    return s;
}

/* ofcolor's recipe: scan's insertions, from the grid's bytes when it has a view (every cell an int 0..9,
 * so a cell equals the value when its colour does) and the value is a colour. */
static tdm_arc_val *ofcolor_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_gview v;
    int r = arc_is_int(a[1]) && a[1]->u.i >= 0 && a[1]->u.i < ARC_COLOURS_N ? arc_grid_view(rt, a[0], &v) : 0;
    ARC_TRYI(r);
    if (!r) return scan(rt, a[0], a[1], "ofcolor");
    tdm_arc_val *s = arc_set_new(rt);
    ARC_TRY(s);
    for (int i = 0; i < v.h; i++) /* the row's cells of the colour, by one compare of the row */
        for (uint32_t m = arc_gview_row_mask(&v, i, (int)a[1]->u.i); m; m &= m - 1)
            if (arc_set_add(rt, s, arc_ipair(rt, i, __builtin_ctz(m)))) return NULL;
    return s;
}

tdm_arc_val *arc_p_ofcolor(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (arc_defer(rt)) {
        arc_bits b;
        int r = ofcolor_bits(rt, a[0], a[1], &b);
        ARC_TRYI(r);
        /* the colour's cells counted already (the grid's counts kept from palette, mostcolor, ...) */
        const uint32_t *count = rt->counts_of == a[0] && arc_is_int(a[1]) && a[1]->u.i >= 0 && a[1]->u.i < ARC_COLOURS_N ? rt->counts : NULL;
        if (r) {
            tdm_arc_val *s = count && count[a[1]->u.i] ? arc_bits_set_counted(rt, &b, count[a[1]->u.i], NULL, ofcolor_eager, a, 2)
                                                       : arc_bits_set(rt, &b, ofcolor_eager, a, 2);
            if (s) arc_bits_row_major(s); /* the positions of the colour's cells, row by row */
            return s;
        }
    }
    return ofcolor_eager(rt, a);
}

static tdm_arc_val *asobject_eager(tdm_arc_rt *rt, tdm_arc_val **a) { return scan(rt, a[0], NULL, "asobject"); }

/* asobject of a grid with a view: per colour it holds, a compare of each row; laid out when read. */
tdm_arc_val *arc_p_asobject(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_gview v;
    int r = arc_defer(rt) && arc_is_tuple(a[0]) ? arc_grid_view(rt, a[0], &v) : 0;
    ARC_TRYI(r);
    if (!r || !arc_bits_fits(v.h - 1, v.w - 1)) return asobject_eager(rt, a);
    arc_bits b;
    ARC_TRYI(arc_bits_init(rt, &b));
    b.kind = ARC_BITS_CELLS;
    const uint32_t *count = arc_grid_view_counts(rt, a[0], &v);
    for (int c = 0; c < ARC_COLOURS_N; c++) {
        if (!count[c]) continue;
        uint32_t *m = arc_bits_block(&b, c);
        for (int i = 0; i < v.h; i++) m[i + ARC_BITS_OFF] = arc_gview_row_mask(&v, i, c) << ARC_BITS_OFF;
    }
    return arc_bits_set(rt, &b, asobject_eager, a, 1);
}

static tdm_arc_val *toindices_eager(tdm_arc_rt *rt, tdm_arc_val **a) { return arc_toindices(rt, a[0]); }

/* The positions of a set of cells or positions (a wide accumulator, colour c for cells): 1, 0 when they
 * do not fit, -1 out of memory. An object of objects() gives its kept row masks (arc_lazy.rows) without
 * an accumulator of its own cells: 2 then, out->rows set, and its patch->n cells are at distinct
 * positions (one cell a position of the grid), so the set made from out holds patch->n (uncounted). */
static int position_bits(tdm_arc_rt *rt, tdm_arc_val *patch, arc_bits *out, int kind, int c) {
    arc_bits b;
    arc_lazy *z = arc_is_set(patch) && patch->n ? patch->u.set.lazy : NULL;
    if (z && z->op->rows && !arc_bits_of(patch)) { /* an object of objects(): its kept rows, straight into block c */
        uint32_t used;
        if (arc_bits_init_wide(rt, out)) return -1;
        int r = z->op->rows(z, patch, arc_bits_block(out, c), &used);
        if (r) return r < 0 ? -1 : (out->kind = kind, out->rows = used, 2);
    }
    int r = arc_bits_get_wide(rt, patch, &b);
    if (r <= 0) return r;
    if (arc_bits_init_wide(rt, out)) return -1;
    out->kind = b.kind == ARC_BITS_NONE ? ARC_BITS_NONE : kind;
    if (b.blocks) arc_bits_positions(&b, arc_bits_block(out, c));
    for (uint32_t k = 0; k < b.nout; k++)
        if (arc_bits_put(out, c, arc_key_i(b.out[k]), arc_key_j(b.out[k]))) return -1;
    return 1;
}

tdm_arc_val *arc_p_toindices(tdm_arc_rt *rt, tdm_arc_val **a) {
    /* an Object's positions, laid out when read (Indices are returned as they are) */
    const arc_bits *own = arc_bits_of(a[0]);
    if (arc_defer(rt) && arc_is_set(a[0]) && a[0]->n && (!own || own->kind == ARC_BITS_CELLS) &&
        (own || arc_set_is_lazy(a[0]) || arc_patch_kind(rt, a[0], "toindices") == 1)) {
        arc_bits p;
        int r = position_bits(rt, a[0], &p, ARC_BITS_POS, 0);
        ARC_TRYI(r);
        if (r == 2) return arc_bits_set_known(rt, &p, a[0]->n, NULL, toindices_eager, a, 1);
        if (r && p.kind == ARC_BITS_POS) return arc_bits_set(rt, &p, toindices_eager, a, 1);
    }
    return arc_toindices(rt, a[0]);
}

static tdm_arc_val *recolor_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val *ti = arc_toindices(rt, a[1]);
    ARC_TRY(ti);
    arc_list l;
    ARC_TRYI(arc_elems(rt, ti, &l, "recolor"));
    tdm_arc_val *s = arc_set_new(rt);
    ARC_TRY(s);
    for (uint32_t k = 0; k < l.n; k++)
        if (arc_set_add(rt, s, arc_pair(rt, a[0], l.v[k]))) return NULL;
    return s;
}

tdm_arc_val *arc_p_recolor(tdm_arc_rt *rt, tdm_arc_val **a) {
    int c;
    if (arc_defer(rt) && a[0]->kind == TDM_ARC_INT && a[0]->u.i >= 0 && a[0]->u.i < ARC_COLOURS_N && arc_is_set(a[1]) && a[1]->n) {
        /* the patch's positions in colour c, laid out when read */
        arc_bits b;
        int r = position_bits(rt, a[1], &b, ARC_BITS_CELLS, c = (int)a[0]->u.i);
        ARC_TRYI(r);
        if (r == 2) return arc_bits_set_known(rt, &b, a[1]->n, NULL, recolor_eager, a, 2);
        if (r) return arc_bits_set(rt, &b, recolor_eager, a, 2);
    }
    return recolor_eager(rt, a);
}

static tdm_arc_val *toobject_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_grid g;
    ARC_TRYI(arc_read_grid0(rt, a[1], &g, "toobject"));
    arc_pos *p;
    uint32_t n;
    ARC_TRYI(arc_positions(rt, a[0], 1, &p, &n, "toobject"));
    tdm_arc_val *s = arc_set_new(rt);
    ARC_TRY(s);
    for (uint32_t k = 0; k < n; k++) {
        if (p[k].i < 0 || p[k].i >= g.h || p[k].j < 0 || p[k].j >= g.w) continue;
        if (arc_set_add(rt, s, arc_cell(rt, g.c[p[k].i * g.w + p[k].j], p[k].i, p[k].j))) return NULL;
    }
    return s;
}

/* toobject(patch, grid) as masks: the patch's positions inside the grid, each in its cell's colour (a
 * compare of the grid's row per colour): 1 and *b, 0 when the grid has no bytes view, the patch's
 * positions are not known as masks, or none is inside the grid; -1 out of memory. Positions off the
 * masks (a wide patch's) are off every grid. */
static int toobject_bits(tdm_arc_rt *rt, tdm_arc_val *patch, tdm_arc_val *g, arc_bits *b) {
    arc_gview gv;
    arc_bits p;
    uint32_t rows[32], any = 0;
    int r = arc_grid_view(rt, g, &gv);
    if (r > 0) r = arc_bits_get_wide(rt, patch, &p);
    if (r <= 0 || p.kind == ARC_BITS_NONE || !p.blocks) return r < 0 ? -1 : 0;
    arc_bits_positions(&p, rows);
    if (arc_bits_init(rt, b)) return -1;
    b->kind = ARC_BITS_CELLS;
    for (int i = 0; i < gv.h; i++) {
        uint32_t in = rows[i + ARC_BITS_OFF] >> ARC_BITS_OFF; /* the row mask keeps the grid's columns */
        for (int c = 0; in && c < ARC_COLOURS_N; c++) {
            uint32_t m = arc_gview_row_mask(&gv, i, c) & in;
            if (m) arc_bits_block(b, c)[i + ARC_BITS_OFF] = m << ARC_BITS_OFF, in &= ~m, any = 1;
        }
    }
    return any;
}

tdm_arc_val *arc_p_toobject(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (arc_defer(rt) && arc_is_set(a[0]) && a[0]->n) {
        arc_bits b;
        int r = toobject_bits(rt, a[0], a[1], &b);
        ARC_TRYI(r);
        if (r) return arc_bits_set(rt, &b, toobject_eager, a, 2);
    }
    return toobject_eager(rt, a);
}

/* loc[0], loc[1] as ints (extra components are ignored, as Python's indexing ignores them). */
static int loc2(tdm_arc_rt *rt, tdm_arc_val *loc, int64_t *i, int64_t *j, const char *who) {
    if (!arc_is_tuple(loc)) return arc_failf(rt, "%s: '%s' object is not subscriptable", who, arc_type_name(loc));
    if (loc->n < 2) return arc_failf(rt, "%s: tuple index out of range", who);
    if (arc_get_int(rt, loc->u.items[0], i, who) || arc_get_int(rt, loc->u.items[1], j, who)) return -1;
    return 0;
}

static tdm_arc_val *four(tdm_arc_rt *rt, int64_t p[8]) {
    tdm_arc_val *s = arc_set_new(rt);
    ARC_TRY(s);
    for (int k = 0; k < 4; k++)
        if (arc_set_add(rt, s, arc_ipair(rt, p[2 * k], p[2 * k + 1]))) return NULL;
    return arc_set_copy(rt, s);
}

static tdm_arc_val *dneigh(tdm_arc_rt *rt, int64_t i, int64_t j) {
    int64_t p[8] = {i - 1, j, i + 1, j, i, j - 1, i, j + 1};
    return four(rt, p);
}

static tdm_arc_val *ineigh(tdm_arc_rt *rt, int64_t i, int64_t j) {
    int64_t p[8] = {i - 1, j - 1, i - 1, j + 1, i + 1, j - 1, i + 1, j + 1};
    return four(rt, p);
}

static tdm_arc_val *dneighbors_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t i, j;
    ARC_TRYI(loc2(rt, a[0], &i, &j, "dneighbors"));
    return dneigh(rt, i, j);
}

static tdm_arc_val *ineighbors_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t i, j;
    ARC_TRYI(loc2(rt, a[0], &i, &j, "ineighbors"));
    return ineigh(rt, i, j);
}

static tdm_arc_val *neighbors_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t i, j;
    ARC_TRYI(loc2(rt, a[0], &i, &j, "neighbors"));
    tdm_arc_val *d = dneigh(rt, i, j), *n = d ? ineigh(rt, i, j) : NULL;
    ARC_TRY(n);
    return arc_set_union(rt, d, n);
}

/* connect's set, eagerly: frozenset() (one shared per run) for points on no line, however far apart. */
static tdm_arc_val *connect(tdm_arc_rt *rt, int64_t ai, int64_t aj, int64_t bi, int64_t bj) {
    int64_t si = ai < bi ? ai : bi, ei = ai < bi ? bi : ai, sj = aj < bj ? aj : bj, ej = aj < bj ? bj : aj;
    if (!arc_on_line(ai, aj, bi, bj)) return arc_set_empty(rt);
    if (ei - si > 100000 || ej - sj > 100000)
        return arc_fail(rt, "connect: a line over 100000 cells is more than the port allows");
    tdm_arc_val *s = arc_set_new(rt);
    ARC_TRY(s);
    if (ai == bi) {
        for (int64_t j = sj; j <= ej; j++)
            if (arc_set_add(rt, s, arc_ipair(rt, ai, j))) return NULL;
    } else if (aj == bj) {
        for (int64_t i = si; i <= ei; i++)
            if (arc_set_add(rt, s, arc_ipair(rt, i, aj))) return NULL;
    } else if (bi - ai == bj - aj) {
        for (int64_t k = 0; k <= ei - si; k++)
            if (arc_set_add(rt, s, arc_ipair(rt, si + k, sj + k))) return NULL;
    } else if (bi - ai == aj - bj) {
        for (int64_t k = 0; k <= ei - si; k++)
            if (arc_set_add(rt, s, arc_ipair(rt, si + k, ej - k))) return NULL;
    }
    return s;
}

static tdm_arc_val *connect_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t ai, aj, bi, bj;
    ARC_TRYI(arc_get_ipair(rt, a[0], &ai, &aj, "connect"));
    ARC_TRYI(arc_get_ipair(rt, a[1], &bi, &bj, "connect"));
    return connect(rt, ai, aj, bi, bj);
}

static tdm_arc_val *shoot_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t si, sj, di, dj;
    ARC_TRYI(loc2(rt, a[0], &si, &sj, "shoot"));
    ARC_TRYI(loc2(rt, a[1], &di, &dj, "shoot"));
    if (di > 1000 || di < -1000 || dj > 1000 || dj < -1000)
        return arc_fail(rt, "shoot: a direction this long is more than the port allows");
    return connect(rt, si, sj, si + 42 * di, sj + 42 * dj);
}

static tdm_arc_val *frontier_eager(tdm_arc_rt *rt, tdm_arc_val *loc, int vertical) {
    if (!arc_is_tuple(loc)) return arc_fail(rt, "frontier: '%s' object is not subscriptable", arc_type_name(loc));
    if (loc->n < (vertical ? 2u : 1u)) return arc_fail(rt, "frontier: tuple index out of range");
    tdm_arc_val *fixed = loc->u.items[vertical ? 1 : 0], *s = arc_set_new(rt);
    ARC_TRY(s);
    for (int64_t k = 0; k < 30; k++) {
        tdm_arc_val *kv = arc_int(rt, k);
        if (arc_set_add(rt, s, vertical ? arc_pair(rt, kv, fixed) : arc_pair(rt, fixed, kv))) return NULL;
    }
    return s;
}

static tdm_arc_val *vfrontier_eager(tdm_arc_rt *rt, tdm_arc_val **a) { return frontier_eager(rt, a[0], 1); }
static tdm_arc_val *hfrontier_eager(tdm_arc_rt *rt, tdm_arc_val **a) { return frontier_eager(rt, a[0], 0); }

/* The box from arc_patch_box: a deferred set's masks or an object's kept box, without laying the patch
 * out (corners(outbox(x)) made every position of the outline to read four). */
tdm_arc_val *arc_p_corners(tdm_arc_rt *rt, tdm_arc_val **a) {
    uint32_t n;
    int64_t u, l, d, r;
    ARC_TRYI(arc_patch_box(rt, a[0], &n, &u, &l, &d, &r, "corners"));
    tdm_arc_val *s = arc_set_new(rt);
    ARC_TRY(s);
    if (!n) {
        /* each corner of an empty patch is () */
        if (arc_set_add(rt, s, arc_tuple(rt, 0))) return NULL;
        return arc_set_copy(rt, s);
    }
    int64_t c[8] = {u, l, u, r, d, l, d, r};
    return four(rt, c);
}

static tdm_arc_val *backdrop(tdm_arc_rt *rt, tdm_arc_val *patch) {
    uint32_t n;
    int64_t u, l, d, r;
    ARC_TRYI(arc_patch_box(rt, patch, &n, &u, &l, &d, &r, "backdrop"));
    tdm_arc_val *s = arc_set_new(rt);
    ARC_TRY(s);
    if (!n) return s;
    ARC_TRYI(arc_grid_limit(rt, "backdrop", "box", d - u + 1, r - l + 1));
    for (int64_t i = u; i <= d; i++)
        for (int64_t j = l; j <= r; j++)
            if (arc_set_add(rt, s, arc_ipair(rt, i, j))) return NULL;
    return s;
}

static tdm_arc_val *backdrop_eager(tdm_arc_rt *rt, tdm_arc_val **a) { return backdrop(rt, a[0]); }

/* Is position key in toindices(obj), obj a lazy object (arc_set_minus_where's test). */
static int holds_pos(void *obj, tdm_arc_val *key) {
    tdm_arc_val *o = obj;
    return o->u.set.lazy->op->holds_pos(o->u.set.lazy, o, key->u.items[0]->u.i, key->u.items[1]->u.i);
}

/* Is position key in the row masks ctx (arc_bits_rows' layout). */
static int holds_row_bit(void *ctx, tdm_arc_val *key) {
    const uint32_t *rows = ctx;
    int64_t i = key->u.items[0]->u.i, j = key->u.items[1]->u.i;
    return arc_bits_fits(i, j) && rows[i + ARC_BITS_OFF] >> (j + ARC_BITS_OFF) & 1;
}

static tdm_arc_val *delta_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    int kind = arc_patch_kind(rt, a[0], "delta");
    ARC_TRYI(kind);
    if (kind == 2) return arc_set_new(rt);
    /* minus(backdrop, toindices(p)) depends on which positions the second holds and how many, not on its
       layout: a lazy object answers that without one, and so do the row masks of a patch that fits them
       (a deferred set: a shifted or normalized object, say) */
    if (arc_set_is_lazy(a[0]) && a[0]->u.set.lazy->op->holds_pos) {
        tdm_arc_val *b = backdrop(rt, a[0]);
        ARC_TRY(b);
        return arc_set_minus_where(rt, b, a[0]->n, holds_pos, a[0]);
    }
    uint32_t rows[32], used, n = 0;
    int fit = arc_defer(rt) && arc_set_is_lazy(a[0]) ? arc_bits_rows(a[0], rows, &used) : 0;
    ARC_TRYI(fit);
    if (fit) {
        for (uint32_t u = used; u; u &= u - 1) n += (uint32_t)__builtin_popcount(rows[__builtin_ctz(u)]);
        for (int i = 0; i < 32; i++) rows[i] = used >> i & 1 ? rows[i] : 0; /* rows outside used unwritten */
        tdm_arc_val *b = backdrop(rt, a[0]);
        ARC_TRY(b);
        return arc_set_minus_where(rt, b, n, holds_row_bit, rows);
    }
    tdm_arc_val *b = backdrop(rt, a[0]), *ti = b ? arc_toindices(rt, a[0]) : NULL;
    ARC_TRY(ti);
    if (!arc_is_set(ti)) return arc_fail(rt, "delta: unsupported operand types for -: 'frozenset' and '%s'", arc_type_name(ti));
    return arc_set_minus(rt, b, ti);
}

/* The outline of rows si..ei x columns sj..ej, built as the reference builds it (spec §4.7). */
static tdm_arc_val *outline(tdm_arc_rt *rt, int64_t si, int64_t sj, int64_t ei, int64_t ej) {
    if (ei - si > 100000 || ej - sj > 100000) return arc_fail(rt, "box: outline too large for the port");
    tdm_arc_val *L = arc_set_new(rt), *R = arc_set_new(rt), *T = arc_set_new(rt), *B = arc_set_new(rt);
    ARC_TRY(L && R && T && B);
    for (int64_t i = si; i <= ei; i++)
        if (arc_set_add(rt, L, arc_ipair(rt, i, sj)) || arc_set_add(rt, R, arc_ipair(rt, i, ej))) return NULL;
    for (int64_t j = sj; j <= ej; j++)
        if (arc_set_add(rt, T, arc_ipair(rt, si, j)) || arc_set_add(rt, B, arc_ipair(rt, ei, j))) return NULL;
    tdm_arc_val *v = arc_set_union(rt, L, R), *h = v ? arc_set_union(rt, T, B) : NULL, *all = h ? arc_set_union(rt, v, h) : NULL;
    ARC_TRY(all);
    return arc_set_copy(rt, all);
}

/* box (grow 0), inbox (grow -1), outbox (grow +1). */
static tdm_arc_val *boxlike(tdm_arc_rt *rt, tdm_arc_val *patch, int grow, const char *who) {
    uint32_t n;
    int64_t u, l, d, r;
    ARC_TRYI(arc_patch_box(rt, patch, &n, &u, &l, &d, &r, who));
    if (!n) {
        if (!grow) return patch;
        return arc_fail(rt, "%s: min() arg is an empty sequence", who);
    }
    int64_t ai = u - grow, aj = l - grow, bi = d + grow, bj = r + grow;
    int64_t si = ai < bi ? ai : bi, sj = aj < bj ? aj : bj, ei = ai < bi ? bi : ai, ej = aj < bj ? bj : aj;
    return outline(rt, si, sj, ei, ej);
}

static tdm_arc_val *box_eager(tdm_arc_rt *rt, tdm_arc_val **a) { return boxlike(rt, a[0], 0, "box"); }
static tdm_arc_val *inbox_eager(tdm_arc_rt *rt, tdm_arc_val **a) { return boxlike(rt, a[0], -1, "inbox"); }
static tdm_arc_val *outbox_eager(tdm_arc_rt *rt, tdm_arc_val **a) { return boxlike(rt, a[0], 1, "outbox"); }

/* ---- the shapes above with deferred layouts (bits.c): their positions as masks when all fit ----------- */

static int pos_begin(tdm_arc_rt *rt, arc_bits *b) {
    if (arc_bits_init(rt, b)) return -1;
    b->kind = ARC_BITS_POS;
    arc_bits_block(b, 0);
    return 0;
}

/* Positions (i, j) for i in u..d and j in l..r (all fitting the masks). */
static void put_rect(arc_bits *b, int64_t u, int64_t l, int64_t d, int64_t r) {
    uint32_t row = (uint32_t)(((2ull << (r + ARC_BITS_OFF)) - 1) & ~((1ull << (l + ARC_BITS_OFF)) - 1));
    for (int64_t i = u; i <= d; i++) b->m[i + ARC_BITS_OFF] |= row;
}

/* The deferred set of n positions p[2k], p[2k + 1], or NULL with *fits 0 when one does not fit (NULL
 * with *fits 1: out of memory). */
static tdm_arc_val *pos_list(tdm_arc_rt *rt, const int64_t *p, int n, arc_prim_fn eager, tdm_arc_val **a, int *fits) {
    arc_bits b;
    *fits = 0;
    for (int k = 0; k < n; k++)
        if (!arc_bits_fits(p[2 * k], p[2 * k + 1])) return NULL;
    *fits = 1;
    if (pos_begin(rt, &b)) return NULL;
    for (int k = 0; k < n; k++) put_rect(&b, p[2 * k], p[2 * k + 1], p[2 * k], p[2 * k + 1]);
    return arc_bits_set(rt, &b, eager, a, 1);
}

/* loc as a tuple of two ints, without errors (the eager form reports them). */
static int ints2(const tdm_arc_val *loc, int64_t *i, int64_t *j) {
    if (!arc_is_tuple(loc) || loc->n != 2 || !arc_is_int(loc->u.items[0]) || !arc_is_int(loc->u.items[1])) return 0;
    *i = loc->u.items[0]->u.i, *j = loc->u.items[1]->u.i;
    return 1;
}

/* dneighbors (positions 0..3 below), ineighbors (4..7) and neighbors (0..7) of a[0]. */
static tdm_arc_val *neighbourhood(tdm_arc_rt *rt, tdm_arc_val **a, int first, int n, arc_prim_fn eager) {
    int64_t i, j;
    if (arc_defer(rt) && ints2(a[0], &i, &j)) {
        int64_t p[16] = {i - 1, j, i + 1, j, i, j - 1, i, j + 1, i - 1, j - 1, i - 1, j + 1, i + 1, j - 1, i + 1, j + 1};
        int fits;
        tdm_arc_val *s = pos_list(rt, p + 2 * first, n, eager, a, &fits);
        if (fits) return s;
    }
    return eager(rt, a);
}

int arc_neighbours_union(tdm_arc_rt *rt, tdm_arc_val *s, int which, arc_bits *b) {
    arc_bits src;
    if (!arc_is_set(s) || !s->n) return 0;
    int r = arc_bits_get(rt, s, &src), lo, hi;
    if (r <= 0 || src.kind != ARC_BITS_POS) return r < 0 ? -1 : 0;
    arc_bits_span(&src, &lo, &hi);
    const uint32_t *m = src.m, edge = 1u | 1u << 31; /* j = -2 and j = 29: a neighbour would leave the masks */
    if (m[0] || m[31]) return 0;                       /* i = -2 and i = 29, the same */
    uint32_t any = 0;
    for (int i = lo; i < hi; i++) any |= m[i];
    if (any & edge) return 0;
    if (arc_bits_init(rt, b)) return -1;
    b->kind = ARC_BITS_POS;
    uint32_t *o = arc_bits_block(b, 0);
    for (int i = lo > 1 ? lo : 1; i < (hi < 31 ? hi : 31); i++) {
        uint32_t x = m[i], side = x << 1 | x >> 1;
        uint32_t across = (which & 1 ? x : 0) | (which & 2 ? side : 0); /* the rows above and below */
        o[i - 1] |= across, o[i + 1] |= across;
        if (which & 1) o[i] |= side;
    }
    return 1;
}

tdm_arc_val *arc_p_dneighbors(tdm_arc_rt *rt, tdm_arc_val **a) { return neighbourhood(rt, a, 0, 4, dneighbors_eager); }
tdm_arc_val *arc_p_ineighbors(tdm_arc_rt *rt, tdm_arc_val **a) { return neighbourhood(rt, a, 4, 4, ineighbors_eager); }
tdm_arc_val *arc_p_neighbors(tdm_arc_rt *rt, tdm_arc_val **a) { return neighbourhood(rt, a, 0, 8, neighbors_eager); }

/* vfrontier (hfrontier) deferred when its fixed coordinate is an int (a bool stays in the eager set's
 * pairs, as the reference keeps it) that fits the masks: the 30 positions of a column (row), counted. */
static tdm_arc_val *frontier(tdm_arc_rt *rt, tdm_arc_val **a, int vertical, arc_prim_fn eager) {
    const tdm_arc_val *loc = a[0], *fixed = arc_is_tuple(loc) && loc->n >= 2u - !vertical && !arc_tuple_is_lazy(loc)
                                                ? loc->u.items[vertical ? 1 : 0]
                                                : NULL;
    arc_bits b;
    if (!arc_defer(rt) || !fixed || fixed->kind != TDM_ARC_INT || !arc_bits_fits(fixed->u.i, fixed->u.i)) return eager(rt, a);
    int64_t f = fixed->u.i, box[4] = {vertical ? 0 : f, vertical ? f : 0, vertical ? 29 : f, vertical ? f : 29};
    if (pos_begin(rt, &b)) return NULL;
    put_rect(&b, box[0], box[1], box[2], box[3]);
    return arc_bits_set_counted(rt, &b, 30, box, eager, a, 1);
}

tdm_arc_val *arc_p_vfrontier(tdm_arc_rt *rt, tdm_arc_val **a) { return frontier(rt, a, 1, vfrontier_eager); }
tdm_arc_val *arc_p_hfrontier(tdm_arc_rt *rt, tdm_arc_val **a) { return frontier(rt, a, 0, hfrontier_eager); }

/* The line connect(a, b) draws, deferred, when it is one (a row, a column or a diagonal) of at most 4096
 * positions: 1 and *out; 0 when not; -1 out of memory. */
static int line(tdm_arc_rt *rt, int64_t ai, int64_t aj, int64_t bi, int64_t bj, arc_prim_fn eager, tdm_arc_val **a,
                tdm_arc_val **out) {
    arc_bits b;
    int64_t si = ai < bi ? ai : bi, ei = ai < bi ? bi : ai, sj = aj < bj ? aj : bj, ej = aj < bj ? bj : aj;
    int diag = bi - ai == bj - aj;
    if (!arc_key_ok(ai, aj) || !arc_key_ok(bi, bj) || ei - si > 4096 || ej - sj > 4096 || !arc_on_line(ai, aj, bi, bj))
        return 0;
    int64_t box[4] = {si, sj, ei, ej};
    uint32_t n = (uint32_t)(ai == bi ? ej - sj + 1 : ei - si + 1);
    if (pos_begin(rt, &b)) return -1;
    if (arc_bits_fits(si, sj) && arc_bits_fits(ei, ej)) {
        /* inside the masks (most lines): a row mask per row, and the rows known, with no count */
        uint32_t *m = b.m, r0 = (uint32_t)(si + ARC_BITS_OFF), r1 = (uint32_t)(ei + ARC_BITS_OFF);
        if (ai == bi) {
            m[r0] = (uint32_t)((2ull << (ej + ARC_BITS_OFF)) - (1ull << (sj + ARC_BITS_OFF)));
        } else {
            int64_t j = (aj == bj || diag ? sj : ej) + ARC_BITS_OFF, dj = aj == bj ? 0 : diag ? 1 : -1;
            for (uint32_t i = r0; i <= r1; i++, j += dj) m[i] = 1u << j;
        }
        b.rows = (uint32_t)((2ull << r1) - (1ull << r0));
        return (*out = arc_bits_set_known(rt, &b, n, box, eager, a, 2)) ? 1 : -1;
    }
    b.rt = rt; /* wide: the line leaves the masks */
    /* the points in the order of i, then j (a horizontal line's j ascending), as the keys sort */
    int r = ai == bi   ? arc_bits_put_run(&b, 0, si, sj, 0, 1, (uint32_t)(ej - sj + 1))
            : aj == bj ? arc_bits_put_run(&b, 0, si, sj, 1, 0, (uint32_t)(ei - si + 1))
                       : arc_bits_put_run(&b, 0, si, diag ? sj : ej, 1, diag ? 1 : -1, (uint32_t)(ei - si + 1));
    if (r) return -1;
    /* its points are distinct and their keys ascend: counted, and its box known */
    return (*out = arc_bits_set_counted(rt, &b, n, box, eager, a, 2)) ? 1 : -1;
}

tdm_arc_val *arc_p_connect(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t ai, aj, bi, bj;
    tdm_arc_val *out;
    if (arc_defer(rt) && ints2(a[0], &ai, &aj) && ints2(a[1], &bi, &bj)) {
        if (!arc_on_line(ai, aj, bi, bj)) return arc_set_empty(rt); /* most pairs of a prapply: no ipair reads */
        int r = line(rt, ai, aj, bi, bj, connect_eager, a, &out);
        ARC_TRYI(r);
        if (r) return out;
    }
    return connect_eager(rt, a);
}

tdm_arc_val *arc_p_shoot(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t si, sj, di, dj;
    tdm_arc_val *out;
    if (arc_defer(rt) && ints2(a[0], &si, &sj) && ints2(a[1], &di, &dj) && di >= -1000 && di <= 1000 && dj >= -1000 && dj <= 1000) {
        int r = line(rt, si, sj, si + 42 * di, sj + 42 * dj, shoot_eager, a, &out);
        ARC_TRYI(r);
        if (r) return out;
    }
    return shoot_eager(rt, a);
}

/* The lines along (di, dj) (a unit direction) from the positions in rows lo..hi-1 of masks m, as elements
 * of colour c of b. The lines that lie on one line (one column for d vertical, one row, one diagonal) overlap, since
 * each runs 42 steps past its start and the masks span 32: together they run from the start furthest back
 * for 42 steps past the start furthest on. So each such line is written once, from its own t (how far
 * along d its starts lie). 0, or -1 out of memory. */
static int shoot_lines(arc_bits *b, const uint32_t *m, int lo, int hi, int64_t c, int64_t di, int64_t dj) {
    enum { G0 = 40, NG = 100 }; /* the line's index, i - j or i + j for a diagonal, plus G0 */
    int64_t tlo[NG], thi[NG];
    uint64_t used[2] = {0, 0}; /* bit g + G0: the line holds a start (its tlo, thi set) */
    for (int64_t i = lo - ARC_BITS_OFF; i < hi - ARC_BITS_OFF; i++)
        for (uint32_t row = m[i + ARC_BITS_OFF]; row; row &= row - 1) {
            int64_t j = __builtin_ctz(row) - ARC_BITS_OFF;
            int64_t g = (!di ? i : !dj ? j : di == dj ? i - j : i + j) + G0, t = di ? i * di : j * dj;
            if (!(used[g >> 6] >> (g & 63) & 1)) used[g >> 6] |= 1ull << (g & 63), tlo[g] = thi[g] = t;
            tlo[g] = t < tlo[g] ? t : tlo[g], thi[g] = t > thi[g] ? t : thi[g];
        }
    /* the lines (start, steps), in the order of their columns on any one row: j is g (a column), i - g
       (di == dj) or g - i (di == -dj); rows (!di) in the order of g, each written towards +j */
    int64_t li[NG], lj[NG], ln[NG], r0 = INT64_MAX, r1 = INT64_MIN, nl = 0;
    int down = di && dj && di == dj; /* j = i - g: the lines by g descending */
    for (int w = 0; w < 2; w++)
        for (uint64_t word = down ? 1 - w : w, u = used[word]; u;) {
            int bit = down ? 63 - __builtin_clzll(u) : __builtin_ctzll(u); /* g descending, or ascending */
            u &= ~(1ull << bit);
            int64_t g = (int64_t)(word * 64) + bit - G0, t = tlo[g + G0], n = thi[g + G0] - t + 43;
            int64_t i = di ? t * di : g, j = !di ? t * dj : !dj ? g : di == dj ? i - g : g - i, e = i + (n - 1) * di;
            if (!di && dj < 0) j -= n - 1; /* the same points from the far end */
            li[nl] = i, lj[nl] = j, ln[nl++] = n;
            r0 = i < r0 ? i : r0, r0 = e < r0 ? e : r0, r1 = i > r1 ? i : r1, r1 = e > r1 ? e : r1;
        }
    /* A run's keys ascend along +j, and rows ascend: the keys come out sorted (the set made from b sorts
       none: arc_bits_set). Columns and diagonals hold one position a row each: one line as a run from its
       top row; more row by row, the lines in column order, as long as that is few steps; else each line
       as a run, and the keys are sorted later. */
    if (di && nl == 1) { /* one line: a run, walked with rows ascending so that its keys ascend */
        int64_t k = di > 0 ? 0 : ln[0] - 1;
        return arc_bits_put_run(b, c, li[0] + k * di, lj[0] + k * dj, 1, di * dj, (uint32_t)ln[0]);
    }
    if (di && nl && (r1 - r0 + 1) * nl <= 1024) {
        uint64_t total = 0;
        for (int64_t l = 0; l < nl; l++) total += (uint64_t)ln[l];
        if (arc_bits_reserve(b, (uint32_t)total)) return -1;
        uint32_t *mk = arc_bits_block(b, (int)c);
        /* line l holds row i when i - top[l] is 0..ln[l] - 1 (span[l]), at column at[l] + i * s */
        int64_t s = di * dj, top[NG], at[NG], span[NG];
        for (int64_t l = 0; l < nl; l++) {
            int64_t e = li[l] + (ln[l] - 1) * di;
            top[l] = e < li[l] ? e : li[l], at[l] = lj[l] - li[l] * s, span[l] = ln[l] - 1;
        }
        uint64_t *o = b->out + b->nout;
        for (int64_t i = r0; i <= r1; i++) {
            uint64_t row = arc_bits_key(c, i, 0) - ARC_KEY_BIAS; /* + j + ARC_KEY_BIAS: (c, i, j)'s key */
            int in = (uint64_t)(i + ARC_BITS_OFF) < 32;        /* the row is in the masks */
            for (int64_t l = 0; l < nl; l++) {
                int64_t j = at[l] + i * s;
                if ((uint64_t)(i - top[l]) > (uint64_t)span[l]) continue;
                if (in && (uint64_t)(j + ARC_BITS_OFF) < 32) mk[i + ARC_BITS_OFF] |= 1u << (j + ARC_BITS_OFF);
                else *o++ = row + (uint64_t)(j + ARC_KEY_BIAS);
            }
        }
        b->nout = (uint32_t)(o - b->out);
        return 0;
    }
    for (int64_t l = 0; l < nl; l++)
        if (arc_bits_put_run(b, c, li[l], lj[l], di, di ? dj : 1, (uint32_t)ln[l])) return -1;
    return 0;
}

int arc_shoot_union(tdm_arc_rt *rt, tdm_arc_val *s, tdm_arc_val *d, int cells, arc_bits *b) {
    int64_t di, dj;
    arc_bits src;
    if (!ints2(d, &di, &dj) || di < -1 || di > 1 || dj < -1 || dj > 1 || (!di && !dj) || !arc_is_set(s) || !s->n) return 0;
    int r = arc_bits_get(rt, s, &src);
    if (r <= 0 || src.kind != (cells ? ARC_BITS_CELLS : ARC_BITS_POS)) return r < 0 ? -1 : 0;
    if (arc_bits_init_wide(rt, b)) return -1; /* wide: the lines leave the masks */
    b->kind = src.kind;
    int lo, hi;
    arc_bits_span(&src, &lo, &hi);
    /* colour by colour (positions: block 0): a cell's line keeps its colour */
    for (uint32_t bl = src.blocks; bl; bl &= bl - 1) {
        int c = __builtin_ctz(bl);
        if (shoot_lines(b, src.m + 32 * c, lo, hi, cells ? c : 0, di, dj)) return -1;
    }
    return 1;
}

/* box (grow 0), inbox (grow -1), outbox (grow +1) and backdrop (rect) of a patch whose box is known
 * without a layout (arc_patch_box), when the shape fits the masks. */
static tdm_arc_val *shape(tdm_arc_rt *rt, tdm_arc_val **a, int grow, int rect, arc_prim_fn eager, const char *who) {
    uint32_t n;
    int64_t u, l, d, r;
    arc_bits b;
    if (arc_defer(rt) && arc_is_set(a[0]) && a[0]->n) {
        ARC_TRYI(arc_patch_box(rt, a[0], &n, &u, &l, &d, &r, who));
        int64_t ai = u - grow, aj = l - grow, bi = d + grow, bj = r + grow;
        int64_t si = ai < bi ? ai : bi, sj = aj < bj ? aj : bj, ei = ai < bi ? bi : ai, ej = aj < bj ? bj : aj;
        if (n && arc_bits_fits(si, sj) && arc_bits_fits(ei, ej)) {
            ARC_TRYI(pos_begin(rt, &b));
            if (rect) {
                put_rect(&b, si, sj, ei, ej);
            } else {
                put_rect(&b, si, sj, si, ej), put_rect(&b, ei, sj, ei, ej);
                put_rect(&b, si, sj, ei, sj), put_rect(&b, si, ej, ei, ej);
            }
            return arc_bits_set(rt, &b, eager, a, 1);
        }
    }
    return eager(rt, a);
}

tdm_arc_val *arc_p_box(tdm_arc_rt *rt, tdm_arc_val **a) { return shape(rt, a, 0, 0, box_eager, "box"); }
tdm_arc_val *arc_p_inbox(tdm_arc_rt *rt, tdm_arc_val **a) { return shape(rt, a, -1, 0, inbox_eager, "inbox"); }
tdm_arc_val *arc_p_outbox(tdm_arc_rt *rt, tdm_arc_val **a) { return shape(rt, a, 1, 0, outbox_eager, "outbox"); }
tdm_arc_val *arc_p_backdrop(tdm_arc_rt *rt, tdm_arc_val **a) { return shape(rt, a, 0, 1, backdrop_eager, "backdrop"); }

tdm_arc_val *arc_p_delta(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_bits p, b;
    int64_t box[4];
    if (arc_defer(rt) && arc_is_set(a[0]) && a[0]->n) {
        /* the box's positions less the patch's, laid out when read */
        int r = arc_bits_get(rt, a[0], &p);
        ARC_TRYI(r);
        if (r && p.kind != ARC_BITS_NONE) {
            uint32_t rows[32];
            arc_bits_positions(&p, rows);
            ARC_TRYI(pos_begin(rt, &b));
            arc_bits_box_for(a[0], &p, box); /* kept by a deferred set or an object of objects() */
            put_rect(&b, box[0], box[1], box[2], box[3]);
            for (int i = 0; i < 32; i++) b.m[i] &= ~rows[i];
            return arc_bits_set(rt, &b, delta_eager, a, 1);
        }
    }
    return delta_eager(rt, a);
}
