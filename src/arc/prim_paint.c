/* prim_paint.c: grid construction and painting (spec §3.8). Writes clip to the grid; paint lets the last
 * cell at a position win and underpaint the first non-background one, both in the object's iteration
 * order (a lazy patch whose cells sit at distinct positions is written from its contents, with no layout:
 * then no order can matter; a deferred concatenation is painted part by part); the under- primitives and
 * cover take the background from mostcolor's CPython tie rule. */
#include "arc_internal.h"

#include <string.h>

tdm_arc_val *arc_p_canvas(tdm_arc_rt *rt, tdm_arc_val **a) {
    int bytes = arc_take_grid(rt, a);
    tdm_arc_val *d = a[1];
    if (!arc_is_tuple(d)) return arc_fail(rt, "canvas: '%s' object is not subscriptable", arc_type_name(d));
    if (d->n < 2) return arc_fail(rt, "canvas: tuple index out of range");
    int64_t h, w;
    ARC_TRYI(arc_get_int(rt, d->u.items[0], &h, "canvas"));
    ARC_TRYI(arc_get_int(rt, d->u.items[1], &w, "canvas"));
    if (h < 0) h = 0;
    if (w < 0) w = 0;
    if (!h) w = 0; /* () whatever the width: no row is built */
    ARC_TRYI(arc_grid_limit(rt, "canvas", "grid", h, w));
    int c = arc_interned_colour(a[0]);
    uint8_t *b = NULL;
    if (c >= 0 && h && w && h <= 30 && w <= 30 && arc_defer(rt)) { /* its bytes, for a paint over it and after */
        ARC_TRY(b = arc_grid_view_bytes(rt, (int)h, (int)w));
        memset(b, c, (size_t)(h * w));
        if (bytes) return arc_grid_lazy(rt, b, (int)h, (int)w);
    }
    tdm_arc_val *row = arc_tuple(rt, (uint32_t)w), *g = arc_tuple(rt, (uint32_t)h);
    ARC_TRY(row && g);
    for (int64_t j = 0; j < w; j++) row->u.items[j] = a[0];
    for (int64_t i = 0; i < h; i++) g->u.items[i] = row;
    if (b) arc_grid_view_keep(rt, g, b, (int)h, (int)w);
    return g;
}

/* A writable copy of a grid: fresh row tuples (not yet shared, so they may be written), h and w as the
 * reference reads them (len(grid), len(grid[0])), and the copy's bytes (gview.c) when the grid's were kept
 * and every cell written is a colour (NULL otherwise): kept as the result's view (wdone). A copy that may
 * become a grid of bytes (arc_take_grid) has no rows (g NULL) until a value that is no colour is written
 * (wwith and wcell make them then). */
typedef struct {
    tdm_arc_rt *rt;
    tdm_arc_val *g;
    int64_t h, w;
    uint8_t *vc;
} wgrid;

/* A copy of grid src (a non-empty tuple) in one block when its rows are listed tuples of one length, up to
 * 30 x 30 (a grid's, most often itself one block: then one copy of all its cells): 1 with *out, 0 when
 * they are not such, -1 out of memory. */
static int rows_block(tdm_arc_rt *rt, const tdm_arc_val *src, tdm_arc_val **out) {
    uint32_t h = src->n, w;
    int shape = arc_grid_rows_shape(src, &w);
    if (!shape || !w || w > 30 || h > 30) return 0;
    tdm_arc_val **items;
    if (!(*out = arc_grid_block(rt, (int)h, (int)w, &items))) return -1;
    if (shape == 2) memcpy(items, src->u.items[0]->u.items, (size_t)h * w * sizeof *items);
    else
        for (uint32_t i = 0; i < h; i++) memcpy(items + (size_t)i * w, src->u.items[i]->u.items, w * sizeof *items);
    return 1;
}

/* A copy of src to write (bytes: it may stay bytes only, when src is a grid of colours). 0, or -1 with rt's
 * error. */
static int wcopy(tdm_arc_rt *rt, tdm_arc_val *src, wgrid *out, const char *who, int bytes) {
    if (!arc_is_tuple(src)) return arc_failf(rt, "%s: expected a grid, got %s", who, arc_type_name(src));
    if (!src->n) return arc_failf(rt, "%s: tuple index out of range (empty grid)", who);
    out->rt = rt;
    arc_gview v;
    int view = bytes ? arc_grid_view(rt, src, &v) : 0;
    if (view < 0) return -1;
    if (view) { /* its bytes only */
        out->g = NULL, out->h = v.h, out->w = v.w;
        return (out->vc = arc_grid_view_copy(rt, &v)) ? 0 : -1;
    }
    if (arc_grid_force(rt, src)) return -1; /* a grid of bytes read as cells */
    tdm_arc_val *g;
    int block = rows_block(rt, src, &g);
    if (block < 0) return -1;
    if (!block) { /* rows of other lengths or kinds, or larger: row by row */
        if (!(g = arc_tuple(rt, src->n))) return -1;
        for (uint32_t i = 0; i < src->n; i++) {
            tdm_arc_val *r = src->u.items[i];
            if (!arc_is_tuple(r)) return arc_failf(rt, "%s: grid row %u is not a tuple (not supported by the port)", who, i);
            tdm_arc_val *c = arc_tuple(rt, r->n);
            if (!c) return -1;
            if (r->n) memcpy(c->u.items, r->u.items, r->n * sizeof *c->u.items);
            g->u.items[i] = c;
        }
    }
    out->g = g, out->h = src->n, out->w = src->u.items[0]->n, out->vc = NULL;
    if (arc_grid_view_kept(rt, src, &v) && !(out->vc = arc_grid_view_copy(rt, &v))) return -1;
    return 0;
}

/* A copy of bytes' rows, made from its bytes. 0, or -1 out of memory. */
static int wrows(wgrid *g) { return g->g || (g->g = arc_grid_cells(g->rt, g->vc, (int)g->h, (int)g->w)) ? 0 : -1; }

/* Before g's cells are written with v, over cells equal to bg (NULL: any): a copy of bytes stays so only
 * when v and bg are colours (else it takes rows), and g keeps its bytes only when v is one. 0, or -1 out
 * of memory. */
static inline int wwith(wgrid *g, const tdm_arc_val *v, const tdm_arc_val *bg) {
    int vc = arc_interned_colour(v);
    if (!g->g && (vc < 0 || (bg && arc_interned_colour(bg) < 0)) && wrows(g)) return -1;
    if (vc < 0) g->vc = NULL;
    return 0;
}

/* The finished copy: a grid of bytes when it has no rows, else its rows with its bytes kept as its view. */
static tdm_arc_val *wdone(tdm_arc_rt *rt, const wgrid *g) {
    if (!g->g) return arc_grid_lazy(rt, g->vc, (int)g->h, (int)g->w);
    if (g->vc) arc_grid_view_keep(rt, g->g, g->vc, (int)g->h, (int)g->w);
    return g->g;
}

/* Cell (i, j) of g = v when inside h x w and, with bg, equal to bg; its byte too while g keeps them (a
 * value that is no colour ends that, and makes the rows of a copy of bytes). 0, or -1 for a short row or
 * out of memory (rt's error set). */
static int wcell(wgrid *g, int64_t i, int64_t j, tdm_arc_val *v, tdm_arc_val *bg) {
    if (!(0 <= i && i < g->h && 0 <= j && j < g->w)) return 0;
    uint8_t *b = g->vc ? &g->vc[i * g->w + j] : NULL;
    int bc = bg ? arc_interned_colour(bg) : 0;
    if (!g->g && bg && bc >= 0 && *b != bc) return 0; /* bytes only, bg a colour: the byte tells */
    if (wwith(g, v, bg)) return -1;
    if (!g->g) { /* still bytes only: v and bg are colours */
        *b = (uint8_t)arc_interned_colour(v);
        return 0;
    }
    tdm_arc_val *row = g->g->u.items[i];
    if (j >= row->n) return arc_failf(g->rt, "list assignment index out of range");
    tdm_arc_val **cell = &row->u.items[j];
    if (bg && !arc_eq(*cell, bg)) return 0;
    *cell = v;
    if (g->vc) *b = (uint8_t)arc_interned_colour(v);
    return 0;
}

/* The contents of a lazy patch (deferred or an object of objects()) when the grid's rows are all as long
 * as row 0: then writes need no order and cannot fail. The masks cover a grid of up to 30 x 30 (the wide
 * part of a set lies outside it), a larger grid takes masks only. 1, 0 when not, -1 no memory. */
static int lazy_cells(tdm_arc_rt *rt, const wgrid *g, tdm_arc_val *patch, arc_bits *b) {
    if (arc_tuple_is_lazy(patch)) patch = patch->u.cat.set; /* a deferred concatenation: its contents */
    if (!arc_set_is_lazy(patch)) return 0;
    for (int64_t i = 0; g->g && i < g->h; i++)
        if (g->g->u.items[i]->n != g->w) return 0;
    return g->h <= 32 - ARC_BITS_OFF && g->w <= 32 - ARC_BITS_OFF ? arc_bits_get_wide(rt, patch, b) : arc_bits_get(rt, patch, b);
}

/* A row mask of the masks' layout as the grid's columns 0..w-1 (bit j: column j). */
static inline uint32_t in_grid(const wgrid *g, uint32_t row) {
    row >>= ARC_BITS_OFF;
    return g->w < 32 ? row & ((1u << g->w) - 1) : row;
}

/* Writes v (over bg only, unless bg is NULL) at the cells of g that rows (the masks' layout) name, and
 * their bytes while g keeps them. Only the rows that name a cell are visited: a patch is most often a few
 * rows of a grid. 0, or -1 out of memory. */
static int write_rows(wgrid *g, const uint32_t rows[32], tdm_arc_val *v, tdm_arc_val *bg) {
    if (wwith(g, v, bg)) return -1;
    uint8_t spare[32], *vc = g->vc, vb = (uint8_t)arc_interned_colour(v); /* no bytes: they go to spare */
    /* the grid's rows in the masks' layout: bits ARC_BITS_OFF .. ARC_BITS_OFF + h - 1, up to bit 31 */
    uint32_t in = g->h >= 32 - ARC_BITS_OFF ? ~0u << ARC_BITS_OFF : ((1u << g->h) - 1) << ARC_BITS_OFF;
    if (!g->g) { /* bytes only (v and bg colours): bg's cells found by a compare of the row */
        int bc = bg ? arc_interned_colour(bg) : 0;
        for (uint32_t used = arc_rows_nonzero(rows) & in; used; used &= used - 1) {
            int64_t i = __builtin_ctz(used) - ARC_BITS_OFF;
            uint8_t *vr = vc + i * g->w; /* a 32-byte read stays in the bytes and their slack */
            uint32_t r = in_grid(g, rows[i + ARC_BITS_OFF]) & (bg ? arc_colour_mask32(vr, bc) : ~0u);
            for (; r; r &= r - 1) vr[__builtin_ctz(r)] = vb;
        }
        return 0;
    }
    for (uint32_t used = arc_rows_nonzero(rows) & in; used; used &= used - 1) {
        int64_t i = __builtin_ctz(used) - ARC_BITS_OFF;
        tdm_arc_val **cells = g->g->u.items[i]->u.items;
        uint8_t *vr = vc ? vc + i * g->w : spare;
        for (uint32_t r = in_grid(g, rows[i + ARC_BITS_OFF]); r; r &= r - 1) {
            int j = __builtin_ctz(r);
            if (!bg || arc_eq(cells[j], bg)) cells[j] = v, vr[j] = vb; /* fill, paint (no bg): every cell named */
        }
    }
    return 0;
}

/* fill of g's copy at the positions of a lazy patch (of its cells' positions, for cells), writing only
 * over bg unless bg is NULL: 1 when done, 0 when the patch is not such (lazy_cells), -1 no memory. */
static int fill_lazy(tdm_arc_rt *rt, wgrid *g, tdm_arc_val *value, tdm_arc_val *patch, tdm_arc_val *bg) {
    arc_bits b;
    int lazy = lazy_cells(rt, g, patch, &b);
    if (lazy <= 0) return lazy;
    /* each position once: which cells change depends only on the grid as it was */
    uint32_t rows[32];
    arc_bits_positions(&b, rows);
    return write_rows(g, rows, value, bg) ? -1 : 1;
}

/* fill (bg NULL) and underfill (write only over bg); bytes: the result may be a grid of bytes */
static tdm_arc_val *fill(tdm_arc_rt *rt, tdm_arc_val *grid, tdm_arc_val *value, tdm_arc_val *patch, tdm_arc_val *bg,
                         const char *who, int bytes) {
    wgrid g;
    ARC_TRYI(wcopy(rt, grid, &g, who, bytes));
    int lazy = fill_lazy(rt, &g, value, patch, bg);
    ARC_TRYI(lazy);
    if (lazy) return wdone(rt, &g);
    arc_pos *p;
    uint32_t n;
    ARC_TRYI(arc_positions(rt, patch, 0, &p, &n, who));
    for (uint32_t k = 0; k < n; k++) ARC_TRYI(wcell(&g, p[k].i, p[k].j, value, bg));
    return wdone(rt, &g);
}

tdm_arc_val *arc_p_fill(tdm_arc_rt *rt, tdm_arc_val **a) { return fill(rt, a[0], a[1], a[2], NULL, "fill", arc_take_grid(rt, a)); }

static tdm_arc_val *background(tdm_arc_rt *rt, tdm_arc_val *grid) {
    int64_t bg;
    ARC_TRYI(arc_mostcolor_of(rt, grid, 0, &bg));
    return arc_int(rt, bg);
}

tdm_arc_val *arc_p_underfill(tdm_arc_rt *rt, tdm_arc_val **a) {
    int bytes = arc_take_grid(rt, a);
    if (!arc_is_tuple(a[0]) || !a[0]->n) return arc_fail(rt, "underfill: tuple index out of range (empty grid)");
    tdm_arc_val *bg = background(rt, a[0]);
    ARC_TRY(bg);
    return fill(rt, a[0], a[1], a[2], bg, "underfill", bytes);
}

tdm_arc_val *arc_p_cover(tdm_arc_rt *rt, tdm_arc_val **a) {
    int bytes = arc_take_grid(rt, a);
    tdm_arc_val *bg = background(rt, a[0]);
    ARC_TRY(bg);
    if (arc_is_tuple(a[0]) && a[0]->n && arc_set_is_lazy(a[1])) { /* a lazy patch's positions: its toindices */
        wgrid g;
        ARC_TRYI(wcopy(rt, a[0], &g, "cover", bytes));
        int lazy = fill_lazy(rt, &g, bg, a[1], NULL);
        ARC_TRYI(lazy);
        if (lazy) return wdone(rt, &g);
    }
    tdm_arc_val *ti = arc_toindices(rt, a[1]);
    ARC_TRY(ti);
    return fill(rt, a[0], bg, ti, NULL, "cover", bytes);
}

/* obj's elements onto g in their iteration order (the reference's loop). 0, or -1 with rt's error. */
static int paint_listed(tdm_arc_rt *rt, wgrid *g, tdm_arc_val *obj, tdm_arc_val *bg, const char *who) {
    arc_list l;
    if (arc_elems(rt, obj, &l, who)) return -1;
    for (uint32_t k = 0; k < l.n; k++) {
        tdm_arc_val *e = l.v[k];
        int64_t i, j;
        if (!arc_is_tuple(e) || e->n != 2) return arc_failf(rt, "%s: cannot unpack an element into value, (i, j)", who);
        if (arc_get_ipair(rt, e->u.items[1], &i, &j, who)) return -1;
        if (wcell(g, i, j, e->u.items[0], bg)) return -1;
    }
    return 0;
}

/* obj's cells onto g in obj's iteration order (under: only over cells equal to bg now). A lazy set whose
 * cells sit at distinct positions is written from its contents; a deferred concatenation part by part, in
 * the tuple's order, so that the part written last (first, under) wins where parts overlap. */
static int paint_into(tdm_arc_rt *rt, wgrid *g, tdm_arc_val *obj, tdm_arc_val *bg, const char *who) {
    if (arc_tuple_is_lazy(obj)) { /* its parts are sets and tuples (arc_cat) */
        for (uint32_t k = 0; k < obj->u.cat.parts->n; k++)
            if (paint_into(rt, g, obj->u.cat.parts->u.items[k], bg, who)) return -1;
        return 0;
    }
    arc_bits b;
    int lazy = lazy_cells(rt, g, obj, &b);
    if (lazy < 0) return -1;
    if (lazy && b.kind == ARC_BITS_CELLS) {
        /* cells at distinct positions: the order they are written in cannot matter */
        uint32_t seen[32] = {0}, clash = 0;
        int lo, hi; /* the rows outside which the blocks are empty */
        arc_bits_span(&b, &lo, &hi);
        for (uint32_t bl = b.blocks; bl; bl &= bl - 1)
            for (int i = lo, c = __builtin_ctz(bl); i < hi; i++) clash |= seen[i] & b.m[32 * c + i], seen[i] |= b.m[32 * c + i];
        if (!clash) {
            for (uint32_t bl = b.blocks; bl; bl &= bl - 1) {
                int c = __builtin_ctz(bl);
                if (write_rows(g, b.m + 32 * c, arc_int(rt, c), bg)) return -1;
            }
            return 0;
        }
    }
    return paint_listed(rt, g, obj, bg, who);
}

/* paint (under 0: the last cell at a position wins) and underpaint (only over cells equal to bg now);
 * bytes: the result may be a grid of bytes */
static tdm_arc_val *paint(tdm_arc_rt *rt, tdm_arc_val *grid, tdm_arc_val *obj, int under, const char *who, int bytes) {
    tdm_arc_val *bg = NULL;
    if (under) {
        if (!arc_is_tuple(grid) || !grid->n) return arc_fail(rt, "%s: tuple index out of range (empty grid)", who);
        ARC_TRY(bg = background(rt, grid));
    }
    wgrid g;
    ARC_TRYI(wcopy(rt, grid, &g, who, bytes));
    ARC_TRYI(paint_into(rt, &g, obj, bg, who));
    return wdone(rt, &g);
}

tdm_arc_val *arc_p_paint(tdm_arc_rt *rt, tdm_arc_val **a) { return paint(rt, a[0], a[1], 0, "paint", arc_take_grid(rt, a)); }
tdm_arc_val *arc_p_underpaint(tdm_arc_rt *rt, tdm_arc_val **a) {
    return paint(rt, a[0], a[1], 1, "underpaint", arc_take_grid(rt, a));
}

/* paint(cover(grid, obj), shift(obj, offset)): the covered grid is read only by that paint, so it may be a
 * grid of bytes whatever the line allows; the line's permission goes to the paint. */
tdm_arc_val *arc_p_move(tdm_arc_rt *rt, tdm_arc_val **a) {
    int bytes = arc_take_grid(rt, a);
    rt->grid_args = a;
    tdm_arc_val *covered = arc_p_cover(rt, a);
    rt->grid_args = NULL;
    ARC_TRY(covered);
    tdm_arc_val *sa[2] = {a[1], a[2]};
    tdm_arc_val *shifted = arc_p_shift(rt, sa);
    ARC_TRY(shifted);
    return paint(rt, covered, shifted, 0, "move", bytes);
}

/* replace (swap 0: from to to) and switch (swap 1: from and to swapped) on a grid's bytes, when they are
 * colours (from may be any int for replace: then no cell matches): the new grid's cells are made from its
 * bytes. 1 and *out, 0 when not such (no view, a value not a colour), -1 out of memory. */
static int recolour_bytes(tdm_arc_rt *rt, tdm_arc_val **a, int swap, int bytes, tdm_arc_val **out) {
    int to = arc_interned_colour(a[2]), from = swap ? arc_interned_colour(a[1]) : -1;
    arc_gview v;
    if (to < 0 || (swap ? from < 0 : !arc_is_int(a[1]))) return 0;
    if (!swap && a[1]->u.i >= 0 && a[1]->u.i < ARC_COLOURS_N) from = (int)a[1]->u.i;
    int r = arc_grid_view(rt, a[0], &v);
    if (r <= 0) return r;
    uint8_t *c = arc_grid_view_bytes(rt, v.h, v.w);
    if (!c) return -1;
    size_t n = (size_t)v.h * (size_t)v.w, k = 0;
#if defined(__SSE2__)
    /* 16 bytes at a time, into the slack (0xff, which matches neither colour, so it stays; nor 0xfe, which
       stands for a from that no cell holds) */
    const __m128i f = _mm_set1_epi8((char)(from < 0 ? 0xfe : from)), t = _mm_set1_epi8((char)to);
    for (; k < n; k += 16) {
        __m128i b = _mm_loadu_si128((const __m128i *)(v.c + k)), mf = _mm_cmpeq_epi8(b, f), o;
        if (swap) {
            __m128i mt = _mm_cmpeq_epi8(b, t);
            o = _mm_or_si128(_mm_or_si128(_mm_and_si128(mf, t), _mm_andnot_si128(mf, _mm_and_si128(mt, f))),
                             _mm_andnot_si128(_mm_or_si128(mf, mt), b));
        } else {
            o = _mm_or_si128(_mm_and_si128(mf, t), _mm_andnot_si128(mf, b));
        }
        _mm_storeu_si128((__m128i *)(c + k), o);
    }
#endif
    for (; k < n; k++) c[k] = v.c[k] == from ? (uint8_t)to : swap && v.c[k] == to ? (uint8_t)from : v.c[k];
    return (*out = arc_grid_result(rt, c, v.h, v.w, bytes)) ? 1 : -1;
}

/* replace (swap 0) and switch (swap 1): cell-by-cell maps over the tuple structure */
static tdm_arc_val *recolour(tdm_arc_rt *rt, tdm_arc_val **a, int swap, const char *who) {
    int bytes = arc_take_grid(rt, a);
    tdm_arc_val *g = a[0];
    if (!arc_is_tuple(g)) return arc_fail(rt, "%s: expected a grid, got %s", who, arc_type_name(g));
    int fast = recolour_bytes(rt, a, swap, bytes, &g);
    ARC_TRYI(fast);
    if (fast) return g;
    ARC_TRYI(arc_grid_force(rt, g)); /* a grid of bytes, recoloured to a value that is no colour */
    tdm_arc_val *out = arc_tuple(rt, g->n);
    ARC_TRY(out);
    for (uint32_t i = 0; i < g->n; i++) {
        tdm_arc_val *r = g->u.items[i];
        if (!arc_is_tuple(r)) return arc_fail(rt, "%s: grid row is not a tuple (not supported by the port)", who);
        tdm_arc_val *nr = arc_tuple(rt, r->n);
        ARC_TRY(nr);
        if (!swap && arc_is_int(a[1])) /* ints (every grid's cells): == without a call */
            for (uint32_t j = 0; j < r->n; j++) {
                tdm_arc_val *v = r->u.items[j];
                nr->u.items[j] = v == a[1] || (arc_is_int(v) && v->u.i == a[1]->u.i) ? a[2] : v;
            }
        for (uint32_t j = 0; j < r->n && (swap || !arc_is_int(a[1])); j++) {
            tdm_arc_val *v = r->u.items[j];
            if (!swap) nr->u.items[j] = arc_eq(v, a[1]) ? a[2] : v;
            else if (arc_eq(v, a[1]) && arc_eq(a[1], a[2])) nr->u.items[j] = a[2];
            else nr->u.items[j] = arc_eq(v, a[1]) ? a[2] : arc_eq(v, a[2]) ? a[1] : v;
        }
        out->u.items[i] = nr;
    }
    return out;
}

tdm_arc_val *arc_p_replace(tdm_arc_rt *rt, tdm_arc_val **a) { return recolour(rt, a, 0, "replace"); }
tdm_arc_val *arc_p_switch(tdm_arc_rt *rt, tdm_arc_val **a) { return recolour(rt, a, 1, "switch"); }

/* cellwise on the grids' bytes, when both have them, b's rows are a's width and at least as many, and the
 * fallback is a colour: the result is a grid of bytes when the line allows one (bytes), else its cells are
 * made from its bytes. 1 and *out, 0 when not such, -1 out of memory. */
static int cellwise_bytes(tdm_arc_rt *rt, tdm_arc_val **a, int bytes, tdm_arc_val **out) {
    int f = arc_interned_colour(a[2]);
    arc_gview va, vb;
    if (f < 0 || !arc_defer(rt)) return 0;
    int r = arc_grid_view(rt, a[0], &va);
    if (r > 0) r = arc_grid_view(rt, a[1], &vb);
    if (r <= 0) return r;
    if (vb.w != va.w || vb.h < va.h) return 0;
    uint8_t *c = arc_grid_view_bytes(rt, va.h, va.w);
    if (!c) return -1;
    size_t n = (size_t)va.h * (size_t)va.w, k = 0;
#if defined(__SSE2__)
    const __m128i fb = _mm_set1_epi8((char)f); /* 16 bytes at a time, into the slack (the views have it too) */
    for (; k < n; k += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(va.c + k)), e = _mm_cmpeq_epi8(x, _mm_loadu_si128((const __m128i *)(vb.c + k)));
        _mm_storeu_si128((__m128i *)(c + k), _mm_or_si128(_mm_and_si128(e, x), _mm_andnot_si128(e, fb)));
    }
    memset(c + n, 0xff, 16); /* the slack as arc_grid_view_bytes set it */
#endif
    for (; k < n; k++) c[k] = va.c[k] == vb.c[k] ? va.c[k] : (uint8_t)f;
    return (*out = arc_grid_result(rt, c, va.h, va.w, bytes)) ? 1 : -1;
}

tdm_arc_val *arc_p_cellwise(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val *x = a[0], *y = a[1];
    tdm_arc_val *g;
    int fast = cellwise_bytes(rt, a, arc_take_grid(rt, a), &g);
    ARC_TRYI(fast);
    if (fast) return g;
    if (!arc_is_tuple(x) || !arc_is_tuple(y)) return arc_fail(rt, "cellwise: expected grids");
    if (!x->n) return arc_fail(rt, "cellwise: tuple index out of range (empty grid)");
    if (!arc_is_tuple(x->u.items[0])) return arc_fail(rt, "cellwise: grid row is not a tuple");
    uint32_t h = x->n, w = x->u.items[0]->n;
    tdm_arc_val *out = arc_tuple(rt, h);
    ARC_TRY(out);
    for (uint32_t i = 0; i < h; i++) {
        tdm_arc_val *ra = x->u.items[i], *rb = i < y->n ? y->u.items[i] : NULL, *nr = arc_tuple(rt, w);
        ARC_TRY(nr);
        /* b[i][j] is read only inside the column loop, so a width of 0 never touches b */
        for (uint32_t j = 0; j < w; j++) {
            if (!rb || !arc_is_tuple(ra) || !arc_is_tuple(rb) || j >= ra->n || j >= rb->n)
                return arc_fail(rt, "cellwise: tuple index out of range");
            nr->u.items[j] = arc_eq(ra->u.items[j], rb->u.items[j]) ? ra->u.items[j] : a[2];
        }
        out->u.items[i] = nr;
    }
    return out;
}
