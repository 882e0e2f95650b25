/* prim_grid.c: grid geometry (spec §3.7): rotations, cropping with Python's slice rules (negative starts
 * count from the end, far edges clip), halves computed the reference's way (by rotating, so a 1-wide grid
 * gives ()), splits, concatenation, scaling, compress and index. These work on the tuple structure, so
 * degenerate grids (() and rows of width 0) come out exactly as in Python. */
#include "arc_device.h"
#include "arc_internal.h"

#include <string.h>

static int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static int64_t floormod(int64_t a, int64_t b) { return a - floordiv(a, b) * b; }

static int need_grid(tdm_arc_rt *rt, tdm_arc_val *g, const char *who) {
    if (!arc_is_tuple(g)) return arc_failf(rt, "%s: expected a grid, got %s", who, arc_type_name(g));
    for (uint32_t i = 0; i < g->n; i++)
        if (!arc_is_tuple(g->u.items[i])) return arc_failf(rt, "%s: grid row %u is not a tuple (not supported by the port)", who, i);
    return 0;
}

/* t[a:b], its items shared with t's (a crop's rows are runs of the grid's: a result's cells are then read
 * from the input's bytes, arc_grid_input_rows). */
static tdm_arc_val *slice(tdm_arc_rt *rt, tdm_arc_val *t, int64_t a, int64_t b) {
    int64_t lo, hi;
    arc_py_slice(t->n, a, b, &lo, &hi);
    return arc_tuple_of(rt, t->u.items + lo, (uint32_t)(hi - lo));
}

tdm_arc_val *arc_p_rot90(tdm_arc_rt *rt, tdm_arc_val **a) {
    ON_BYTES(arc_gbytes(rt, a, ARC_GB_ROT90, &bytes_out));
    ARC_TRYI(need_grid(rt, a[0], "rot90"));
    return arc_transpose(rt, a[0], 1, 0, "rot90");
}

tdm_arc_val *arc_p_rot180(tdm_arc_rt *rt, tdm_arc_val **a) {
    ON_BYTES(arc_gbytes(rt, a, ARC_GB_ROT180, &bytes_out));
    ARC_TRYI(need_grid(rt, a[0], "rot180"));
    tdm_arc_val *g = a[0], *out = arc_tuple(rt, g->n);
    ARC_TRY(out);
    for (uint32_t k = 0; k < g->n; k++) ARC_TRY(out->u.items[k] = arc_reversed(rt, g->u.items[g->n - 1 - k]));
    return out;
}

tdm_arc_val *arc_p_rot270(tdm_arc_rt *rt, tdm_arc_val **a) {
    ON_BYTES(arc_gbytes(rt, a, ARC_GB_ROT270, &bytes_out));
    ARC_TRYI(need_grid(rt, a[0], "rot270"));
    return arc_transpose(rt, a[0], 0, 2, "rot270");
}

static tdm_arc_val *crop(tdm_arc_rt *rt, tdm_arc_val *g, int64_t s0, int64_t s1, int64_t d0, int64_t d1, const char *who) {
    ARC_TRYI(need_grid(rt, g, who));
    int64_t e0, e1;
    if (__builtin_add_overflow(s0, d0, &e0) || __builtin_add_overflow(s1, d1, &e1))
        return arc_fail(rt, "%s: integer overflow beyond 64 bits (not supported by the port)", who);
    int64_t lo, hi;
    arc_py_slice(g->n, s0, e0, &lo, &hi);
    tdm_arc_val *out = arc_tuple(rt, (uint32_t)(hi - lo));
    ARC_TRY(out);
    for (int64_t i = lo; i < hi; i++) ARC_TRY(out->u.items[i - lo] = slice(rt, g->u.items[i], s1, e1));
    return out;
}

static int two(tdm_arc_rt *rt, tdm_arc_val *t, int64_t *a, int64_t *b, const char *who) {
    if (!arc_is_tuple(t)) return arc_failf(rt, "%s: '%s' object is not subscriptable", who, arc_type_name(t));
    if (t->n < 2) return arc_failf(rt, "%s: tuple index out of range", who);
    if (arc_get_int(rt, t->u.items[0], a, who) || arc_get_int(rt, t->u.items[1], b, who)) return -1;
    return 0;
}

tdm_arc_val *arc_p_crop(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t s0, s1, d0, d1;
    ARC_TRYI(two(rt, a[1], &s0, &s1, "crop"));
    ARC_TRYI(two(rt, a[2], &d0, &d1, "crop"));
    return crop(rt, a[0], s0, s1, d0, d1, "crop");
}

/* crop(grid, ulcorner(patch), shape(patch)): shape measures a tuple patch as a grid (rows, len(row 0)). */
tdm_arc_val *arc_p_subgrid(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val *ul = arc_p_ulcorner(rt, a), *sh = ul ? arc_p_shape(rt, a) : NULL;
    ARC_TRY(sh);
    if (ul->n < 2) return arc_fail(rt, "subgrid: tuple index out of range (empty patch)");
    int64_t s0, s1, d0, d1;
    ARC_TRYI(two(rt, ul, &s0, &s1, "subgrid"));
    ARC_TRYI(two(rt, sh, &d0, &d1, "subgrid"));
    return crop(rt, a[1], s0, s1, d0, d1, "subgrid");
}

tdm_arc_val *arc_p_trim(tdm_arc_rt *rt, tdm_arc_val **a) { return crop(rt, a[0], 1, 1, -2, -2, "trim"); }

static tdm_arc_val *tophalf(tdm_arc_rt *rt, tdm_arc_val *g) {
    if (!arc_is_tuple(g)) return arc_fail(rt, "tophalf: expected a grid, got %s", arc_type_name(g));
    return slice(rt, g, 0, g->n / 2);
}

static tdm_arc_val *bottomhalf(tdm_arc_rt *rt, tdm_arc_val *g) {
    if (!arc_is_tuple(g)) return arc_fail(rt, "bottomhalf: expected a grid, got %s", arc_type_name(g));
    return slice(rt, g, g->n / 2 + g->n % 2, g->n);
}

tdm_arc_val *arc_p_tophalf(tdm_arc_rt *rt, tdm_arc_val **a) { return tophalf(rt, a[0]); }
tdm_arc_val *arc_p_bottomhalf(tdm_arc_rt *rt, tdm_arc_val **a) { return bottomhalf(rt, a[0]); }

/* lefthalf(g) is rot270(tophalf(rot90(g))) and righthalf(g) rot270(bottomhalf(rot90(g))): rot90's rows are
 * g's first w columns, w the shortest row's length (zip's), so the result is each row's first w // 2 cells,
 * or its cells w - w // 2 .. w - 1; () when w // 2 is 0 (rot90 then has under two rows). Made so directly,
 * each row a slice sharing g's items; a grid of bytes, or a row that is no tuple (the error), go the
 * reference's way. */
static tdm_arc_val *side(tdm_arc_rt *rt, tdm_arc_val *g, int right) {
    if (arc_is_tuple(g) && !arc_grid_is_lazy(g)) {
        uint32_t h = g->n, w = UINT32_MAX, i;
        for (i = 0; i < h && arc_is_tuple(g->u.items[i]); i++)
            if (g->u.items[i]->n < w) w = g->u.items[i]->n;
        if (i == h) {
            uint32_t half = h ? w / 2 : 0, at = right ? w - half : 0;
            tdm_arc_val *out = arc_tuple(rt, half ? h : 0);
            ARC_TRY(out);
            for (i = 0; i < out->n; i++) ARC_TRY(out->u.items[i] = arc_tuple_of(rt, g->u.items[i]->u.items + at, half));
            return out;
        }
    }
    tdm_arc_val *r = arc_p_rot90(rt, &g);
    ARC_TRY(r);
    ARC_TRY(r = right ? bottomhalf(rt, r) : tophalf(rt, r));
    return arc_p_rot270(rt, &r);
}

tdm_arc_val *arc_p_lefthalf(tdm_arc_rt *rt, tdm_arc_val **a) { return side(rt, a[0], 0); }
tdm_arc_val *arc_p_righthalf(tdm_arc_rt *rt, tdm_arc_val **a) { return side(rt, a[0], 1); }

static tdm_arc_val *split(tdm_arc_rt *rt, tdm_arc_val **a, int vertical, const char *who) {
    tdm_arc_val *g = a[0];
    int64_t n;
    ARC_TRYI(need_grid(rt, g, who));
    if (!g->n) return arc_fail(rt, "%s: tuple index out of range (empty grid)", who);
    ARC_TRYI(arc_get_int(rt, a[1], &n, who));
    if (!n) return arc_fail(rt, "%s: integer division or modulo by zero", who);
    int64_t h = g->n, w = g->u.items[0]->n;
    int64_t len = vertical ? h : w, k = floordiv(len, n), off = floormod(len, n) != 0;
    int64_t count = n > 0 ? n : 0;
    if (count > 100000) return arc_fail(rt, "%s: %lld pieces is more than the port allows", who, (long long)n);
    tdm_arc_val *out = arc_tuple(rt, (uint32_t)count);
    ARC_TRY(out);
    for (int64_t m = 0; m < count; m++) {
        int64_t start = k * m + m * off;
        tdm_arc_val *piece = vertical ? crop(rt, g, start, 0, k, w, who) : crop(rt, g, 0, start, h, k, who);
        ARC_TRY(out->u.items[m] = piece);
    }
    return out;
}

tdm_arc_val *arc_p_hsplit(tdm_arc_rt *rt, tdm_arc_val **a) { return split(rt, a, 0, "hsplit"); }
tdm_arc_val *arc_p_vsplit(tdm_arc_rt *rt, tdm_arc_val **a) { return split(rt, a, 1, "vsplit"); }

static tdm_arc_val *concat(tdm_arc_rt *rt, tdm_arc_val *x, tdm_arc_val *y) {
    tdm_arc_val *t = arc_tuple(rt, x->n + y->n);
    ARC_TRY(t);
    if (x->n) memcpy(t->u.items, x->u.items, x->n * sizeof *t->u.items);
    if (y->n) memcpy(t->u.items + x->n, y->u.items, y->n * sizeof *t->u.items);
    return t;
}

tdm_arc_val *arc_p_hconcat(tdm_arc_rt *rt, tdm_arc_val **a) {
    ON_BYTES(arc_gbytes(rt, a, ARC_GB_HCONCAT, &bytes_out));
    ARC_TRYI(need_grid(rt, a[0], "hconcat"));
    ARC_TRYI(need_grid(rt, a[1], "hconcat"));
    uint32_t n = a[0]->n < a[1]->n ? a[0]->n : a[1]->n;
    tdm_arc_val *out = arc_tuple(rt, n);
    ARC_TRY(out);
    for (uint32_t i = 0; i < n; i++) ARC_TRY(out->u.items[i] = concat(rt, a[0]->u.items[i], a[1]->u.items[i]));
    return out;
}

tdm_arc_val *arc_p_vconcat(tdm_arc_rt *rt, tdm_arc_val **a) {
    ON_BYTES(arc_gbytes(rt, a, ARC_GB_VCONCAT, &bytes_out));
    if (!arc_is_tuple(a[0]) || !arc_is_tuple(a[1]))
        return arc_fail(rt, "vconcat: can only concatenate tuple (not \"%s\") to tuple",
                        arc_type_name(arc_is_tuple(a[0]) ? a[1] : a[0]));
    return concat(rt, a[0], a[1]);
}

/* Each value repeated factor times within its row. */
static tdm_arc_val *hup_row(tdm_arc_rt *rt, tdm_arc_val *row, int64_t f) {
    if (f < 0) f = 0;
    tdm_arc_val *r = arc_tuple(rt, (uint32_t)(row->n * f));
    ARC_TRY(r);
    for (uint32_t j = 0; j < row->n; j++)
        for (int64_t k = 0; k < f; k++) r->u.items[j * f + k] = row->u.items[j];
    return r;
}

static tdm_arc_val *scale(tdm_arc_rt *rt, tdm_arc_val **a, int hor, int ver, const char *who) {
    int64_t f;
    ARC_TRYI(need_grid(rt, a[0], who));
    ARC_TRYI(arc_get_int(rt, a[1], &f, who));
    tdm_arc_val *g = a[0];
    int64_t rep = ver ? (f > 0 ? f : 0) : 1, fh = hor ? (f > 0 ? f : 0) : 1, w = 0, rows, cols;
    for (uint32_t i = 0; i < g->n; i++)
        if (g->u.items[i]->n > w) w = g->u.items[i]->n;
    if (__builtin_mul_overflow((int64_t)g->n, rep, &rows)) rows = INT64_MAX;
    if (__builtin_mul_overflow(w, fh, &cols)) cols = INT64_MAX;
    ARC_TRYI(arc_grid_limit(rt, who, "grid", rows, cols));
    tdm_arc_val *out = arc_tuple(rt, (uint32_t)(g->n * rep));
    ARC_TRY(out);
    for (uint32_t i = 0; i < g->n; i++) {
        tdm_arc_val *row = g->u.items[i];
        if (hor) ARC_TRY(row = hup_row(rt, row, f));
        for (int64_t k = 0; k < rep; k++) out->u.items[i * rep + k] = row;
    }
    return out;
}

tdm_arc_val *arc_p_hupscale(tdm_arc_rt *rt, tdm_arc_val **a) { return scale(rt, a, 1, 0, "hupscale"); }
tdm_arc_val *arc_p_vupscale(tdm_arc_rt *rt, tdm_arc_val **a) { return scale(rt, a, 0, 1, "vupscale"); }

/* upscale of a non-empty set (the reference's object branch), f read already. */
static tdm_arc_val *upscale_object(tdm_arc_rt *rt, tdm_arc_val **a, int64_t f) {
    tdm_arc_val *ul = arc_p_ulcorner(rt, a);
    ARC_TRY(ul);
    int64_t ai = ul->u.items[0]->u.i, aj = ul->u.items[1]->u.i;
    tdm_arc_val *args[2] = {a[0], arc_ipair(rt, -ai, -aj)};
    ARC_TRY(args[1]);
    tdm_arc_val *normed = arc_p_shift(rt, args);
    ARC_TRY(normed);
    arc_cellv *c;
    uint32_t n;
    ARC_TRYI(arc_cells(rt, normed, &c, &n, "upscale"));
    arc_list el;
    ARC_TRYI(arc_elems(rt, normed, &el, "upscale"));
    tdm_arc_val *o = arc_set_new(rt);
    ARC_TRY(o);
    for (uint32_t k = 0; k < n; k++)
        for (int64_t u = 0; u < f; u++)
            for (int64_t v = 0; v < f; v++)
                if (arc_set_add(rt, o, arc_pair(rt, el.v[k]->u.items[0], arc_ipair(rt, c[k].i * f + u, c[k].j * f + v))))
                    return NULL;
    tdm_arc_val *fo = arc_set_copy(rt, o);
    ARC_TRY(fo);
    args[0] = fo;
    ARC_TRY(args[1] = arc_ipair(rt, ai, aj));
    return arc_p_shift(rt, args);
}

static tdm_arc_val *upscale_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t f;
    ARC_TRYI(arc_get_int(rt, a[1], &f, "upscale"));
    return upscale_object(rt, a, f);
}

/* upscale of an object whose cells fit the masks, scaled ones included: each row's cells widened f times
 * and the row repeated f times, from the object's upper left corner; laid out (upscale_eager) when read.
 * 1 and *out, 0 when it does not fit (or is not such an object), -1 out of memory. */
static int upscale_bits(tdm_arc_rt *rt, tdm_arc_val **a, int64_t f, tdm_arc_val **out) {
    arc_bits b, d;
    int64_t box[4];
    if (!arc_defer(rt) || f < 1 || f > 32 || !arc_is_set(a[0]) || !a[0]->n) return 0;
    int r = arc_bits_get(rt, a[0], &b);
    if (r <= 0 || b.kind != ARC_BITS_CELLS) return r < 0 ? -1 : 0;
    arc_bits_box_for(a[0], &b, box);
    int64_t h = box[2] - box[0] + 1, w = box[3] - box[1] + 1;
    if (!arc_bits_fits(box[0] + h * f - 1, box[1] + w * f - 1)) return 0;
    if (arc_bits_init(rt, &d)) return -1;
    d.kind = ARC_BITS_CELLS;
    int top = (int)box[0] + ARC_BITS_OFF, left = (int)box[1] + ARC_BITS_OFF;
    for (uint32_t bl = b.blocks; bl; bl &= bl - 1) {
        int c = __builtin_ctz(bl);
        uint32_t *m = arc_bits_block(&d, c);
        const uint32_t *p = b.m + 32 * c;
        for (int i = 0; i < h; i++) {
            uint32_t row = p[top + i] >> left, wide = 0, run = (uint32_t)((2ull << (f - 1)) - 1); /* f ones */
            for (; row; row &= row - 1) wide |= run << (__builtin_ctz(row) * f);
            for (int u = 0; u < f; u++) m[top + i * f + u] = wide << left;
        }
    }
    *out = arc_bits_set(rt, &d, upscale_eager, a, 2);
    return *out ? 1 : -1;
}

tdm_arc_val *arc_p_upscale(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (arc_is_tuple(a[0])) {
        ON_BYTES(arc_gbytes(rt, a, ARC_GB_UPSCALE, &bytes_out));
        return scale(rt, a, 1, 1, "upscale");
    }
    int64_t f;
    int kind = arc_patch_kind(rt, a[0], "upscale");
    ARC_TRYI(kind);
    if (kind == 2) return arc_set_new(rt);
    ARC_TRYI(arc_get_int(rt, a[1], &f, "upscale"));
    int64_t cells;
    if (f > 0 && (__builtin_mul_overflow(f, f, &cells) || __builtin_mul_overflow(cells, (int64_t)a[0]->n, &cells)))
        cells = INT64_MAX;
    ARC_TRYI(arc_elems_limit(rt, "upscale", f > 0 ? (uint64_t)cells : 0));
    tdm_arc_val *out = NULL;
    int r = upscale_bits(rt, a, f, &out);
    ARC_TRYI(r);
    return r ? out : upscale_object(rt, a, f);
}

tdm_arc_val *arc_p_downscale(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t f;
    ARC_TRYI(need_grid(rt, a[0], "downscale"));
    tdm_arc_val *g = a[0];
    if (!g->n) return arc_fail(rt, "downscale: tuple index out of range (empty grid)");
    ARC_TRYI(arc_get_int(rt, a[1], &f, "downscale"));
    uint32_t w = g->u.items[0]->n;
    if (!f && w) return arc_fail(rt, "downscale: integer division or modulo by zero");
    /* rows are kept only if their index is a multiple of f; with w = 0 and f = 0 Python never divides
       by columns, but rows are still tested */
    if (!f) return arc_fail(rt, "downscale: integer division or modulo by zero");
    uint32_t nr = 0, nc = 0;
    for (uint32_t i = 0; i < g->n; i++) nr += floormod(i, f) == 0;
    for (uint32_t j = 0; j < w; j++) nc += floormod(j, f) == 0;
    tdm_arc_val *out = arc_tuple(rt, nr);
    ARC_TRY(out);
    uint32_t oi = 0;
    for (uint32_t i = 0; i < g->n; i++) {
        if (floormod(i, f)) continue;
        tdm_arc_val *row = g->u.items[i], *r = arc_tuple(rt, nc);
        ARC_TRY(r);
        uint32_t oj = 0;
        for (uint32_t j = 0; j < w; j++) {
            if (floormod(j, f)) continue;
            if (j >= row->n) return arc_fail(rt, "downscale: tuple index out of range");
            r->u.items[oj++] = row->u.items[j];
        }
        out->u.items[oi++] = r;
    }
    return out;
}

/* len(set(seq)) == 1 */
static int uniform(tdm_arc_val **v, uint32_t n, uint32_t stride) {
    if (!n) return 0;
    for (uint32_t k = 1; k < n; k++)
        if (!arc_eq(v[k * stride], v[0])) return 0;
    return 1;
}

tdm_arc_val *arc_p_compress(tdm_arc_rt *rt, tdm_arc_val **a) {
    ARC_TRYI(need_grid(rt, a[0], "compress"));
    tdm_arc_val *g = a[0], *t = arc_transpose(rt, g, 0, 0, "compress");
    ARC_TRY(t);
    uint32_t h = g->n, ncols = h ? t->n : 0;
    uint8_t *rowdel = arc_alloc(rt, h + 1), *coldel = arc_alloc(rt, ncols + 1);
    ARC_TRY(rowdel && coldel);
    uint32_t keep_rows = 0;
    for (uint32_t i = 0; i < h; i++) {
        tdm_arc_val *r = g->u.items[i];
        rowdel[i] = (uint8_t)uniform(r->u.items, r->n, 1);
        keep_rows += !rowdel[i];
    }
    for (uint32_t j = 0; j < ncols; j++) coldel[j] = (uint8_t)uniform(t->u.items[j]->u.items, t->u.items[j]->n, 1);
    tdm_arc_val *out = arc_tuple(rt, keep_rows);
    ARC_TRY(out);
    uint32_t oi = 0;
    for (uint32_t i = 0; i < h; i++) {
        if (rowdel[i]) continue;
        tdm_arc_val *r = g->u.items[i];
        uint32_t keep = 0;
        for (uint32_t j = 0; j < r->n; j++) keep += !(j < ncols && coldel[j]);
        tdm_arc_val *nr = arc_tuple(rt, keep);
        ARC_TRY(nr);
        uint32_t oj = 0;
        for (uint32_t j = 0; j < r->n; j++)
            if (!(j < ncols && coldel[j])) nr->u.items[oj++] = r->u.items[j];
        out->u.items[oi++] = nr;
    }
    return out;
}

tdm_arc_val *arc_p_index(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t i, j;
    ARC_TRYI(arc_get_ipair(rt, a[1], &i, &j, "index"));
    ARC_TRYI(need_grid(rt, a[0], "index"));
    tdm_arc_val *g = a[0];
    if (!g->n) return arc_fail(rt, "index: tuple index out of range (empty grid)");
    int64_t h = g->n, w = g->u.items[0]->n;
    if (!(0 <= i && i < h && 0 <= j && j < w)) return &arc_none_val;
    tdm_arc_val *row = g->u.items[i];
    if (j >= row->n) return arc_fail(rt, "index: tuple index out of range");
    return row->u.items[j];
}
