/* prim_objects.c: object extraction (spec §3.9): objects, partition, fgpartition, frontiers and
 * occurrences. objects() has two paths with one result. The lazy one (objects_lazy.c) labels the partition
 * and lays sets out only when read; it covers grids up to 30x30 of colours 0..9, which is every ARC grid.
 * The eager one here, arc_objects_eager, replays the reference's exact sequence of set operations (spec
 * §4.8: a flood fill whose candidate sets are built from the neighbourhood frozensets, merged with |= and
 * reduced with -), because the iteration order of the result and of every object is read by later
 * primitives; it takes every other grid (and gives Python's errors), and the tests hold the lazy path to
 * it, layouts included. */
#include "arc_device.h"
#include "arc_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* Interned position tuples for one call over an h x w grid, with a one-cell margin for neighbours; equal
 * positions share one tuple, so set lookups mostly end at the pointer test. */
typedef struct {
    tdm_arc_val **t;
    int64_t h, w;
} pos_cache;

static int pc_init(tdm_arc_rt *rt, pos_cache *pc, int64_t h, int64_t w) {
    pc->h = h, pc->w = w;
    size_t n = (size_t)(h + 2) * (size_t)(w + 2);
    pc->t = arc_alloc(rt, n * sizeof *pc->t);
    if (!pc->t) return -1;
    memset(pc->t, 0, n * sizeof *pc->t);
    return 0;
}

static tdm_arc_val *pc_get(tdm_arc_rt *rt, pos_cache *pc, int64_t i, int64_t j) {
    if (i < -1 || j < -1 || i > pc->h || j > pc->w) return arc_ipair(rt, i, j);
    tdm_arc_val **slot = &pc->t[(size_t)(i + 1) * (size_t)(pc->w + 2) + (size_t)(j + 1)];
    if (!*slot) *slot = arc_ipair(rt, i, j);
    return *slot;
}

/* N(p) with its own layout: freeze of the four-element display, or the union of both for diagonal. */
static tdm_arc_val *neigh(tdm_arc_rt *rt, pos_cache *pc, int64_t i, int64_t j, int diagonal) {
    static const int d4[8] = {-1, 0, 1, 0, 0, -1, 0, 1}, i4[8] = {-1, -1, -1, 1, 1, -1, 1, 1};
    tdm_arc_val *d = arc_set_new(rt);
    if (!d) return NULL;
    for (int k = 0; k < 4; k++)
        if (arc_set_add(rt, d, pc_get(rt, pc, i + d4[2 * k], j + d4[2 * k + 1]))) return NULL;
    if (!(d = arc_set_copy(rt, d))) return NULL;
    if (!diagonal) return d;
    tdm_arc_val *x = arc_set_new(rt);
    if (!x) return NULL;
    for (int k = 0; k < 4; k++)
        if (arc_set_add(rt, x, pc_get(rt, pc, i + i4[2 * k], j + i4[2 * k + 1]))) return NULL;
    if (!(x = arc_set_copy(rt, x))) return NULL;
    return arc_set_union(rt, d, x);
}

/* The iteration order of N((i, j)) depends only on (i, j): it is computed once per process for every
 * position of a 30x30 grid, as offsets, so that objects() does not rebuild the neighbourhood sets. */
#define NCACHE 30
static int8_t norder[2][NCACHE][NCACHE][8][2];
static pthread_once_t norder_once = PTHREAD_ONCE_INIT;
static int norder_ok;
static void norder_init(void);

const int8_t (*arc_neigh_order(int diagonal, int i, int j))[2] {
    pthread_once(&norder_once, norder_init);
    if (!norder_ok || i < 0 || j < 0 || i >= NCACHE || j >= NCACHE) return NULL;
    return norder[diagonal != 0][i][j];
}

void arc_tables_make(void) {
    pthread_once(&norder_once, norder_init);
    arc_cell_mix_make();
    arc_elem_pxor_make();
}

static void norder_init(void) {
    tdm_arc_rt *rt;
    if (tdm_arc_rt_new(&rt)) return;
    pos_cache pc;
    if (pc_init(rt, &pc, NCACHE, NCACHE)) goto out;
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < NCACHE; i++)
            for (int j = 0; j < NCACHE; j++) {
                tdm_arc_val *n = neigh(rt, &pc, i, j, d);
                if (!n) goto out;
                int k = 0;
                for (uint32_t s = 0; s <= n->u.set.mask; s++) {
                    tdm_arc_val *p = n->u.set.tab[s].key;
                    if (!p || p == ARC_DUMMY) continue;
                    norder[d][i][j][k][0] = (int8_t)(p->u.items[0]->u.i - i);
                    norder[d][i][j][k][1] = (int8_t)(p->u.items[1]->u.i - j);
                    k++;
                }
            }
    norder_ok = 1;
out:
    tdm_arc_rt_free(rt);
}

/* The iteration order of asindices(h x w) as row-major indices i * w + j, for grids up to 30x30, followed
 * by its inverse: a pure function of (h, w), computed on first use and kept (published with a release
 * store). */
static _Atomic(uint16_t *) asi_cache[NCACHE][NCACHE];

const uint16_t *arc_asindices_order(int64_t h, int64_t w) {
    if (h < 1 || w < 1 || h > NCACHE || w > NCACHE) return NULL;
    uint16_t *o = atomic_load_explicit(&asi_cache[h - 1][w - 1], memory_order_acquire);
    if (o) return o;
    tdm_arc_rt *rt;
    if (tdm_arc_rt_new(&rt)) return NULL;
    tdm_arc_val *s = arc_set_new(rt);
    for (int64_t i = 0; s && i < h; i++)
        for (int64_t j = 0; s && j < w; j++)
            if (arc_set_add(rt, s, arc_ipair(rt, i, j))) s = NULL;
    /* the order, then its inverse (each cell's place in the order) */
    uint16_t *fresh = s ? tdm_malloc((size_t)(2 * h * w) * sizeof *fresh) : NULL;
    if (fresh) {
        uint32_t k = 0;
        for (uint32_t x = 0; x <= s->u.set.mask; x++) {
            tdm_arc_val *p = s->u.set.tab[x].key;
            if (p && p != ARC_DUMMY) fresh[k++] = (uint16_t)(p->u.items[0]->u.i * w + p->u.items[1]->u.i);
        }
        for (uint32_t q = 0; q < k; q++) fresh[h * w + fresh[q]] = (uint16_t)q;
        uint16_t *expected = NULL;
        /* another thread may have published the same order first; keep that one */
        if (!atomic_compare_exchange_strong_explicit(&asi_cache[h - 1][w - 1], &expected, fresh, memory_order_acq_rel,
                                                     memory_order_acquire)) {
            tdm_free(fresh);
            fresh = expected;
        }
    }
    tdm_arc_rt_free(rt);
    return fresh;
}

const uint16_t *arc_asindices_rank(int64_t h, int64_t w) {
    const uint16_t *o = arc_asindices_order(h, w);
    return o ? o + h * w : NULL;
}

tdm_arc_val *arc_objects_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_grid g;
    ARC_TRYI(arc_read_grid0(rt, a[0], &g, "objects"));
    int univalued = arc_truthy(a[1]), diagonal = arc_truthy(a[2]), without_bg = arc_truthy(a[3]);
    int64_t bg = 0;
    int has_bg = 0;
    if (without_bg) {
        ARC_TRYI(arc_mostcolor_of(rt, a[0], 0, &bg));
        has_bg = 1;
    }
    pos_cache pc;
    ARC_TRYI(pc_init(rt, &pc, g.h, g.w));
    pthread_once(&norder_once, norder_init);
    int fast = norder_ok && g.h <= NCACHE && g.w <= NCACHE;
    /* each position holds one colour, so each cell (v, loc) is made once and shared */
    tdm_arc_val **cells = arc_alloc(rt, (size_t)g.h * (size_t)g.w * sizeof *cells);
    ARC_TRY(cells);
    memset(cells, 0, (size_t)g.h * (size_t)g.w * sizeof *cells);
    tdm_arc_val *objs = arc_set_new(rt), *occupied = arc_set_new(rt);
    ARC_TRY(objs && occupied);
    /* unvisited = asindices(grid): its iteration order depends only on (h, w) */
    const uint16_t *order = fast ? arc_asindices_order(g.h, g.w) : NULL;
    arc_list locs = {NULL, 0};
    if (!order) {
        tdm_arc_val *unvisited = arc_set_new(rt);
        ARC_TRY(unvisited);
        for (int64_t i = 0; i < g.h; i++)
            for (int64_t j = 0; j < g.w; j++)
                if (arc_set_add(rt, unvisited, pc_get(rt, &pc, i, j))) return NULL;
        ARC_TRYI(arc_elems(rt, unvisited, &locs, "objects"));
    }
    uint32_t nlocs = (uint32_t)(g.h * g.w);
    for (uint32_t k = 0; k < nlocs; k++) {
        tdm_arc_val *loc = order ? pc_get(rt, &pc, order[k] / g.w, order[k] % g.w) : locs.v[k];
        ARC_TRY(loc);
        if (arc_set_contains(occupied, loc)) continue;
        int64_t li = loc->u.items[0]->u.i, lj = loc->u.items[1]->u.i, val = g.c[li * g.w + lj];
        if (has_bg && val == bg) continue;
        tdm_arc_val *obj = arc_set_new(rt), *cands = arc_set_new(rt);
        ARC_TRY(obj && cands);
        tdm_arc_val **cell0 = &cells[li * g.w + lj];
        if (!*cell0) ARC_TRY(*cell0 = arc_pair(rt, arc_int(rt, val), loc));
        if (arc_set_add(rt, obj, *cell0) || arc_set_add(rt, cands, loc)) return NULL;
        while (cands->n) {
            tdm_arc_val *nb = arc_set_new(rt);
            ARC_TRY(nb);
            /* cands is only read while nb, obj and occupied grow */
            for (uint32_t cs = 0; cs <= cands->u.set.mask; cs++) {
                tdm_arc_val *cand = cands->u.set.tab[cs].key;
                if (!cand || cand == ARC_DUMMY) continue;
                int64_t ci = cand->u.items[0]->u.i, cj = cand->u.items[1]->u.i, v = g.c[ci * g.w + cj];
                if (univalued ? v != val : (has_bg && v == bg)) continue;
                tdm_arc_val **cell = &cells[ci * g.w + cj];
                if (!*cell) ARC_TRY(*cell = arc_pair(rt, arc_int(rt, v), cand));
                if (arc_set_add(rt, obj, *cell) || arc_set_add(rt, occupied, cand)) return NULL;
                /* inside = {p in N(cand) if p is on the grid}: a small table on the stack, then nb |= inside */
                arc_slot islots[8];
                tdm_arc_val inside;
                memset(&inside, 0, sizeof inside), memset(islots, 0, sizeof islots);
                inside.kind = TDM_ARC_FSET, inside.u.set.tab = islots, inside.u.set.mask = 7;
                if (fast) {
                    const int8_t(*o)[2] = norder[diagonal][ci][cj];
                    for (int q = 0; q < (diagonal ? 8 : 4); q++) {
                        int64_t pi = ci + o[q][0], pj = cj + o[q][1];
                        if (0 <= pi && pi < g.h && 0 <= pj && pj < g.w && arc_set_add(rt, &inside, pc_get(rt, &pc, pi, pj)))
                            return NULL;
                    }
                } else {
                    tdm_arc_val *n = neigh(rt, &pc, ci, cj, diagonal);
                    ARC_TRY(n);
                    for (uint32_t s = 0; s <= n->u.set.mask; s++) {
                        tdm_arc_val *p = n->u.set.tab[s].key;
                        if (!p || p == ARC_DUMMY) continue;
                        int64_t pi = p->u.items[0]->u.i, pj = p->u.items[1]->u.i;
                        if (0 <= pi && pi < g.h && 0 <= pj && pj < g.w && arc_set_add(rt, &inside, p)) return NULL;
                    }
                }
                if (arc_set_merge(rt, nb, &inside)) return NULL;
            }
            ARC_TRY(cands = arc_set_minus(rt, nb, occupied));
        }
        tdm_arc_val *frozen = arc_set_copy(rt, obj);
        ARC_TRY(frozen);
        if (arc_set_add(rt, objs, frozen)) return NULL;
    }
    return arc_set_copy(rt, objs);
}

tdm_arc_val *arc_p_objects(tdm_arc_rt *rt, tdm_arc_val **a) {
    int fallback = 0;
    tdm_arc_val *r = arc_objects_lazy(rt, a, &fallback);
    return fallback ? arc_objects_eager(rt, a) : r;
}

/* objects(a...) for a line that only colorfilter(·, c) reads: when univalued, only the objects of colour c,
 * which is that filter's result (arc_colorfilter_of gives it back); else all of them. */
static tdm_arc_val *objects_of(tdm_arc_rt *rt, tdm_arc_val **a, int c) {
    if (arc_defer(rt) && arc_truthy(a[1])) {
        int fallback = 0;
        tdm_arc_val *r = arc_objects_of_colour(rt, a, c, &fallback);
        if (!fallback) return r;
    }
    return arc_p_objects(rt, a);
}

/* colorfilter(a[0], C) after such a line (C, a[1], the line's constant colour): its set of colour C is the
 * filter's result, layout included */
tdm_arc_val *arc_colorfilter_of(tdm_arc_rt *rt, tdm_arc_val **a) {
    int only = arc_is_int(a[1]) && a[1]->u.i >= 0 && a[1]->u.i < ARC_COLOURS_N && arc_objects_only(a[0], (int)a[1]->u.i);
    return only ? a[0] : arc_p_colorfilter(rt, a);
}

#define OBJECTS_OF(c) \
    static tdm_arc_val *objects_of_##c(tdm_arc_rt *rt, tdm_arc_val **a) { return objects_of(rt, a, c); }
OBJECTS_OF(0)
OBJECTS_OF(1)
OBJECTS_OF(2)
OBJECTS_OF(3)
OBJECTS_OF(4)
OBJECTS_OF(5)
OBJECTS_OF(6)
OBJECTS_OF(7)
OBJECTS_OF(8)
OBJECTS_OF(9)

arc_prim_fn arc_objects_of_fn(int c) {
    static const arc_prim_fn fns[ARC_COLOURS_N] = {objects_of_0, objects_of_1, objects_of_2, objects_of_3, objects_of_4,
                                                   objects_of_5, objects_of_6, objects_of_7, objects_of_8, objects_of_9};
    return c >= 0 && c < ARC_COLOURS_N ? fns[c] : NULL;
}

/* The seq of grid's cells of colour a[1], row by row: one object of partition and fgpartition, and the
 * recipe of the deferred one. */
static tdm_arc_val *colour_object(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val *grid = a[0], *o = arc_set_new(rt);
    ARC_TRY(o);
    arc_gview v;
    int view = a[1]->kind == TDM_ARC_INT && a[1]->u.i >= 0 && a[1]->u.i < ARC_COLOURS_N ? arc_grid_view(rt, grid, &v) : 0;
    ARC_TRYI(view);
    if (view) { /* the grid's bytes: each row's cells of the colour, in order, as interned cells */
        int c = (int)a[1]->u.i;
        for (int i = 0; i < v.h; i++)
            for (uint32_t m = arc_gview_row_mask(&v, i, c); m; m &= m - 1)
                if (arc_set_add(rt, o, arc_bits_elem(ARC_BITS_CELLS, c, i + ARC_BITS_OFF, __builtin_ctz(m) + ARC_BITS_OFF)))
                    return NULL;
        return o;
    }
    for (uint32_t i = 0; i < grid->n; i++) {
        tdm_arc_val *r = grid->u.items[i];
        for (uint32_t j = 0; j < r->n; j++)
            if (arc_eq(r->u.items[j], a[1]) && arc_set_add(rt, o, arc_pair(rt, r->u.items[j], arc_ipair(rt, i, j))))
                return NULL;
    }
    return o;
}

/* colour_object(a) deferred, for a colour 0..9 of a grid of h rows: its cells are that colour's row masks
 * rows[i * stride], i < h, and n of them (0: counted here). NULL out of memory. */
static tdm_arc_val *colour_object_bits(tdm_arc_rt *rt, tdm_arc_val **a, int h, const uint32_t *rows, size_t stride,
                                       uint32_t n) {
    arc_bits b;
    if (arc_bits_init(rt, &b)) return NULL;
    b.kind = ARC_BITS_CELLS;
    uint32_t *m = arc_bits_block(&b, (int)a[1]->u.i), used = 0;
    for (int i = 0; i < h; i++) {
        uint32_t r = rows[(size_t)i * stride];
        m[i + ARC_BITS_OFF] = r << ARC_BITS_OFF, used |= (uint32_t)(r != 0) << (i + ARC_BITS_OFF);
    }
    tdm_arc_val *s;
    if (!n) s = arc_bits_set(rt, &b, colour_object, a, 2);
    else b.rows = used, s = arc_bits_set_known(rt, &b, n, NULL, colour_object, a, 2);
    if (s) arc_bits_row_major(s); /* the grid's cells of the colour, row by row */
    return s;
}

/* by_colour of a grid with view gv, for the n colours cols (0..9, in the order of the set they come from):
 * only the colours asked for are compared, and counted once. */
static tdm_arc_val *view_by_colour(tdm_arc_rt *rt, tdm_arc_val *grid, const arc_gview *gv, const int *cols, int n) {
    tdm_arc_val *out = arc_set_new(rt);
    ARC_TRY(out);
    const uint32_t *count = arc_grid_view_counts(rt, grid, gv);
    for (int k = 0; k < n; k++) {
        int c = cols[k];
        tdm_arc_val *args[2] = {grid, arc_int(rt, c)};
        uint32_t rows[32]; /* (a view has at most 30 rows) */
        for (int i = 0; i < gv->h; i++) rows[i] = arc_gview_row_mask(gv, i, c);
        tdm_arc_val *o = count[c] ? colour_object_bits(rt, args, gv->h, rows, 1, count[c]) : colour_object(rt, args);
        ARC_TRY(o);
        if (arc_set_add(rt, out, o)) return NULL;
    }
    return out;
}

/* One object per colour of `colours` (in its iteration order), each the seq of that colour's cells; with
 * deferred layouts when the grid fits the masks and every colour is 0..9. For a grid without a view
 * (view_partition takes the others). */
static tdm_arc_val *by_colour(tdm_arc_rt *rt, tdm_arc_val *grid, tdm_arc_val *colours, const char *who) {
    tdm_arc_val *out = arc_set_new(rt);
    ARC_TRY(out);
    arc_list cl;
    ARC_TRYI(arc_elems(rt, colours, &cl, who));
    arc_grid g;
    const uint32_t *cm = NULL;
    int bits = arc_defer(rt);
    for (uint32_t k = 0; k < cl.n && bits; k++) bits = arc_is_int(cl.v[k]) && cl.v[k]->u.i >= 0 && cl.v[k]->u.i < ARC_COLOURS_N;
    if (bits) {
        arc_mark mk = arc_mark_of(rt);
        if (arc_read_grid(rt, grid, &g, who)) { /* a grid the port reads only as tuples: the cell-by-cell way */
            ARC_TRYI(arc_put_back(rt, mk) ? -1 : 0);
            bits = 0;
        }
        if (bits && g.h <= 32 - ARC_BITS_OFF && g.w <= 32 - ARC_BITS_OFF) ARC_TRY(cm = arc_grid_colour_rows(rt, grid, &g));
    }
    for (uint32_t k = 0; k < cl.n; k++) {
        tdm_arc_val *args[2] = {grid, cl.v[k]}, *o = cm ? colour_object_bits(rt, args, (int)g.h, cm + cl.v[k]->u.i, ARC_COLOURS_N, 0) : colour_object(rt, args);
        ARC_TRY(o);
        if (arc_set_add(rt, out, o)) return NULL;
    }
    return out;
}

/* partition (bg < 0) or fgpartition (bg: the grid's mostcolor) of a grid with a view, with no set of colours
 * made: palette's order is arc_colour_set_order of the order the cells insert the colours in; without bg,
 * the difference inserts the rest in that order into a new set, whose order is arc_colour_set_order again
 * (arc_set_minus; with 8 colours or more it copies palette's table, whose order, ascending, is the same).
 * 1 with *out, 0 when the grid has no view, -1 on error. */
static int view_partition(tdm_arc_rt *rt, tdm_arc_val *grid, int64_t bg, tdm_arc_val **out) {
    arc_gview gv;
    int view = arc_is_tuple(grid) ? arc_grid_view(rt, grid, &gv) : 0;
    if (view <= 0) return view;
    int ins[ARC_COLOURS_N], it[ARC_COLOURS_N], rest[ARC_COLOURS_N], m = 0;
    int n = arc_view_palette_order(rt, grid, &gv, ins);
    arc_colour_set_order(ins, n, it);
    if (bg >= 0) {
        for (int k = 0; k < n; k++)
            if (it[k] != bg) rest[m++] = it[k];
        arc_colour_set_order(rest, m, it);
        n = m;
    }
    return (*out = view_by_colour(rt, grid, &gv, it, n)) ? 1 : -1;
}

tdm_arc_val *arc_p_partition(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val *out;
    int r = view_partition(rt, a[0], -1, &out);
    ARC_TRYI(r);
    if (r) return out;
    tdm_arc_val *p = arc_p_palette(rt, a);
    ARC_TRY(p);
    return by_colour(rt, a[0], p, "partition");
}

tdm_arc_val *arc_p_fgpartition(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t bg;
    ARC_TRYI(arc_mostcolor_of(rt, a[0], 0, &bg));
    tdm_arc_val *out;
    int r = view_partition(rt, a[0], bg, &out);
    ARC_TRYI(r);
    if (r) return out;
    tdm_arc_val *p = arc_p_palette(rt, a), *b = arc_set_new(rt);
    ARC_TRY(p && b);
    if (arc_set_add(rt, b, arc_int(rt, bg))) return NULL;
    tdm_arc_val *cols = arc_set_minus(rt, p, b);
    ARC_TRY(cols);
    return by_colour(rt, a[0], cols, "fgpartition");
}

tdm_arc_val *arc_p_frontiers(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_grid g;
    ARC_TRYI(arc_read_grid0(rt, a[0], &g, "frontiers"));
    tdm_arc_val *hs = arc_set_new(rt), *vs = arc_set_new(rt);
    ARC_TRY(hs && vs);
    for (int64_t i = 0; i < g.h; i++) {
        int uni = g.w > 0;
        for (int64_t j = 1; j < g.w && uni; j++) uni = g.c[i * g.w + j] == g.c[i * g.w];
        if (!uni) continue;
        tdm_arc_val *row = arc_set_new(rt);
        ARC_TRY(row);
        for (int64_t j = 0; j < g.w; j++)
            if (arc_set_add(rt, row, arc_cell(rt, g.c[i * g.w + j], i, j))) return NULL;
        if (arc_set_add(rt, hs, arc_set_copy(rt, row))) return NULL;
    }
    for (int64_t j = 0; j < g.w; j++) {
        int uni = 1;
        for (int64_t i = 1; i < g.h && uni; i++) uni = g.c[i * g.w + j] == g.c[j];
        if (!uni) continue;
        tdm_arc_val *col = arc_set_new(rt);
        ARC_TRY(col);
        for (int64_t i = 0; i < g.h; i++)
            if (arc_set_add(rt, col, arc_cell(rt, g.c[i * g.w + j], i, j))) return NULL;
        if (arc_set_add(rt, vs, arc_set_copy(rt, col))) return NULL;
    }
    tdm_arc_val *fh = arc_set_copy(rt, hs), *fv = fh ? arc_set_copy(rt, vs) : NULL;
    ARC_TRY(fv);
    return arc_set_union(rt, fh, fv);
}

/* occurrences' normalize(obj): obj itself when it is a deferred set whose box starts at (0, 0), as when a
 * program normalises it first (chain(occurrences, normalize, f)): its cells are normalize's, and only its
 * cells are read here, not its layout. */
static tdm_arc_val *normalized(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (arc_defer(rt) && arc_bits_of(a[0]) && a[0]->n) {
        int64_t box[4];
        arc_bits_box_of(a[0], box);
        if (!box[0] && !box[1]) return a[0];
    }
    return arc_p_normalize(rt, a);
}

tdm_arc_val *arc_p_occurrences(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val *normed = normalized(rt, &a[1]);
    ARC_TRY(normed);
    arc_grid g;
    ARC_TRYI(arc_read_grid0(rt, a[0], &g, "occurrences"));
    tdm_arc_val *shape = arc_p_shape(rt, &a[1]);
    ARC_TRY(shape);
    int64_t oh = shape->u.items[0]->u.i, ow = shape->u.items[1]->u.i, h2 = g.h - oh + 1, w2 = g.w - ow + 1;
    tdm_arc_val *occs = arc_set_new(rt);
    ARC_TRY(occs);
    arc_cellv *c = NULL;
    uint32_t n = 0;
    const arc_bits *nb = arc_bits_of(normed);
    if (h2 > 0 && w2 > 0 && nb && nb->kind == ARC_BITS_CELLS && !nb->nout && g.w <= 32) {
        /* deferred cells: per row of candidates, the columns where every cell matches, as masks (the
           reference adds (i, j) row by row, left to right: so does this) */
        const uint32_t *col = arc_grid_colour_rows(rt, a[0], &g);
        ARC_TRY(col);
        uint32_t all = w2 >= 32 ? UINT32_MAX : (1u << w2) - 1, np = 0;
        struct { uint32_t at, row; } part[32 * ARC_COLOURS_N]; /* the object's non-empty rows, once */
        for (uint32_t bl = nb->blocks; bl; bl &= bl - 1) {
            int cc = __builtin_ctz(bl);
            uint32_t used = (nb->rows ? nb->rows : UINT32_MAX) >> ARC_BITS_OFF << ARC_BITS_OFF; /* rows from 0 on */
            for (; used; used &= used - 1) {
                int r = __builtin_ctz(used);
                uint32_t row = nb->m[32 * cc + r] >> ARC_BITS_OFF;
                if (row) part[np].at = (uint32_t)(r - ARC_BITS_OFF) * ARC_COLOURS_N + (uint32_t)cc, part[np++].row = row;
            }
        }
        for (int64_t i = 0; i < h2; i++) {
            uint32_t ok = all;
            const uint32_t *ci = col + i * ARC_COLOURS_N;
            for (uint32_t k = 0; k < np && ok; k++)
                for (uint32_t row = part[k].row; row && ok; row &= row - 1) ok &= ci[part[k].at] >> __builtin_ctz(row);
            for (; ok; ok &= ok - 1)
                if (arc_set_add(rt, occs, arc_ipair(rt, i, __builtin_ctz(ok)))) return NULL;
        }
        return arc_set_copy(rt, occs);
    }
    if (h2 > 0 && w2 > 0 && normed->n) {
        ARC_TRYI(arc_cells(rt, normed, &c, &n, "occurrences"));
    }
    for (int64_t i = 0; i < h2; i++)
        for (int64_t j = 0; j < w2; j++) {
            int ok = 1;
            for (uint32_t k = 0; k < n && ok; k++) {
                int64_t x = c[k].i + i, y = c[k].j + j;
                ok = 0 <= x && x < g.h && 0 <= y && y < g.w && g.c[x * g.w + y] == c[k].c;
            }
            if (ok && arc_set_add(rt, occs, arc_ipair(rt, i, j))) return NULL;
        }
    return arc_set_copy(rt, occs);
}
