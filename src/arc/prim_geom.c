/* prim_geom.c: patch geometry (spec §3.6): extents and corners, size and shape predicates, centres,
 * shift/normalize, the four mirrors (patch and grid forms), gravitate and the periods. Measures work on
 * positions as numbers; every frozenset result is a seq rebuild in input iteration order (for shift and
 * normalize, deferred until read when the contents fit arc_bits: bits.c). */
#include "arc_internal.h"

#include <stdlib.h>
#include <string.h>

/* Bounding box of a non-empty patch, or an error named after who (Python: min() of an empty sequence). */
static int nonempty_box(tdm_arc_rt *rt, tdm_arc_val *patch, int64_t *u, int64_t *l, int64_t *d, int64_t *r,
                        const char *who) {
    uint32_t n;
    if (arc_patch_box(rt, patch, &n, u, l, d, r, who)) return -1;
    if (!n) return arc_failf(rt, "%s: min() arg is an empty sequence (empty patch)", who);
    return 0;
}

enum { E_UP, E_LOW, E_LEFT, E_RIGHT };

static tdm_arc_val *extent(tdm_arc_rt *rt, tdm_arc_val *patch, int which, const char *who) {
    int64_t u, l, d, r;
    ARC_TRYI(nonempty_box(rt, patch, &u, &l, &d, &r, who));
    return arc_int(rt, which == E_UP ? u : which == E_LOW ? d : which == E_LEFT ? l : r);
}

tdm_arc_val *arc_p_uppermost(tdm_arc_rt *rt, tdm_arc_val **a) { return extent(rt, a[0], E_UP, "uppermost"); }
tdm_arc_val *arc_p_lowermost(tdm_arc_rt *rt, tdm_arc_val **a) { return extent(rt, a[0], E_LOW, "lowermost"); }
tdm_arc_val *arc_p_leftmost(tdm_arc_rt *rt, tdm_arc_val **a) { return extent(rt, a[0], E_LEFT, "leftmost"); }
tdm_arc_val *arc_p_rightmost(tdm_arc_rt *rt, tdm_arc_val **a) { return extent(rt, a[0], E_RIGHT, "rightmost"); }

/* ulcorner etc.: (min/max i, min/max j); () for an empty patch. */
static tdm_arc_val *corner(tdm_arc_rt *rt, tdm_arc_val *patch, int lower, int right, const char *who) {
    uint32_t n;
    int64_t u, l, d, r;
    ARC_TRYI(arc_patch_box(rt, patch, &n, &u, &l, &d, &r, who));
    if (!n) return arc_tuple(rt, 0);
    return arc_ipair(rt, lower ? d : u, right ? r : l);
}

tdm_arc_val *arc_p_ulcorner(tdm_arc_rt *rt, tdm_arc_val **a) { return corner(rt, a[0], 0, 0, "ulcorner"); }
tdm_arc_val *arc_p_urcorner(tdm_arc_rt *rt, tdm_arc_val **a) { return corner(rt, a[0], 0, 1, "urcorner"); }
tdm_arc_val *arc_p_llcorner(tdm_arc_rt *rt, tdm_arc_val **a) { return corner(rt, a[0], 1, 0, "llcorner"); }
tdm_arc_val *arc_p_lrcorner(tdm_arc_rt *rt, tdm_arc_val **a) { return corner(rt, a[0], 1, 1, "lrcorner"); }

/* height and width of a piece: 0 when empty, rows / len(row 0) for a tuple, the extent for a patch. */
static int measure(tdm_arc_rt *rt, tdm_arc_val *piece, int64_t *h, int64_t *w, const char *who) {
    if (piece->n && arc_bits_of(piece)) { /* a set of masks (connect's lines, say): its box, kept */
        int64_t b[4];
        arc_bits_box_of(piece, b);
        return *h = b[2] - b[0] + 1, *w = b[3] - b[1] + 1, 0;
    }
    int64_t n = arc_len(rt, piece);
    if (n < 0) return -1;
    if (!n) return *h = 0, *w = 0, 0;
    if (arc_is_tuple(piece)) {
        int64_t w0 = arc_len(rt, piece->u.items[0]);
        if (w0 < 0) return -1;
        return *h = n, *w = w0, 0;
    }
    uint32_t k;
    int64_t u, l, d, r;
    if (arc_patch_box(rt, piece, &k, &u, &l, &d, &r, who)) return -1;
    *h = d - u + 1, *w = r - l + 1;
    return 0;
}

tdm_arc_val *arc_p_height(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t h, w;
    /* height of a tuple does not read row 0 */
    if (arc_is_tuple(a[0])) return arc_int(rt, a[0]->n);
    ARC_TRYI(measure(rt, a[0], &h, &w, "height"));
    return arc_int(rt, h);
}

tdm_arc_val *arc_p_width(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t h, w;
    ARC_TRYI(measure(rt, a[0], &h, &w, "width"));
    return arc_int(rt, w);
}

tdm_arc_val *arc_p_shape(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t h, w;
    ARC_TRYI(measure(rt, a[0], &h, &w, "shape"));
    return arc_ipair(rt, h, w);
}

tdm_arc_val *arc_p_portrait(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t h, w;
    ARC_TRYI(measure(rt, a[0], &h, &w, "portrait"));
    return arc_bool(h > w);
}

tdm_arc_val *arc_p_square(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val *p = a[0];
    if (arc_is_tuple(p)) {
        if (!p->n) return arc_fail(rt, "square: tuple index out of range (empty grid)");
        int64_t w = arc_len(rt, p->u.items[0]);
        ARC_TRYI(w);
        return arc_bool(w == p->n);
    }
    int64_t h, w, n = arc_len(rt, p);
    ARC_TRYI(n);
    ARC_TRYI(measure(rt, p, &h, &w, "square"));
    return arc_bool(h * w == n && h == w);
}

static tdm_arc_val *line(tdm_arc_rt *rt, tdm_arc_val *p, int vertical, const char *who) {
    int64_t h, w;
    ARC_TRYI(measure(rt, p, &h, &w, who)); /* it fails as len(p) would when p has no len */
    int64_t n = p->n;
    return arc_bool(vertical ? (h == n && w == 1) : (w == n && h == 1));
}

tdm_arc_val *arc_p_vline(tdm_arc_rt *rt, tdm_arc_val **a) { return line(rt, a[0], 1, "vline"); }
tdm_arc_val *arc_p_hline(tdm_arc_rt *rt, tdm_arc_val **a) { return line(rt, a[0], 0, "hline"); }

/* ---- pairs of patches as row masks (bits.c's layout, bit j + ARC_BITS_OFF of row i + ARC_BITS_OFF) ---- */
/* A patch pair whose positions fit the masks: both non-empty frozensets. Rows outside ra (rb) are not
 * read. */
typedef struct {
    const uint32_t *a, *b; /* in rt->rows (kept for the next call: an lbind'ed patch is asked again), or pt */
    uint32_t ra, rb;       /* bit i: row i of a (of b) is not empty */
    uint32_t *ca, *cb;     /* the columns in use (cols_of) when not 0: the kept entry's cols, or pc */
    uint32_t pt[2][32];    /* a one-position side's row (arc_bits_point): only that row is written */
    uint32_t pc[2];        /* its column */
} rows2;

/* The columns in use in rows (those in used). */
static uint32_t cols_of(const uint32_t *rows, uint32_t used) {
    uint32_t c = 0;
    for (; used; used &= used - 1) c |= rows[__builtin_ctz(used)];
    return c;
}

/* The columns in use in rows, kept in *c (0: not yet; a kept patch is not empty). */
static uint32_t cols_in(uint32_t *c, const uint32_t *rows, uint32_t used) { return *c ? *c : (*c = cols_of(rows, used)); }

/* v's home entry in rt->rows (by address: values are at least 32 bytes apart). */
static int rows_home(const tdm_arc_val *v) { return (int)((uintptr_t)v >> 5 ^ (uintptr_t)v >> 9) & (ARC_ROWS_N - 1); }

/* The entry of rt->rows that holds v's rows (its home or the one after), or -1. */
static int rows_kept(const tdm_arc_rt *rt, const tdm_arc_val *v) {
    int h = rows_home(v);
    return rt->rows[h].key == v ? h : rt->rows[(h + 1) & (ARC_ROWS_N - 1)].key == v ? (h + 1) & (ARC_ROWS_N - 1) : -1;
}

/* v's rows into its home entry of rt->rows, or the one after when the home is busy (the other side of the
 * pair is there): as arc_bits_rows, the entry in *e. */
static int rows_keep(tdm_arc_rt *rt, int busy, tdm_arc_val *v, int *e) {
    int h = rows_home(v);
    if (h == busy) h = (h + 1) & (ARC_ROWS_N - 1);
    struct arc_rows *k = &rt->rows[*e = h];
    k->key = NULL, rt->rows_any = 1;
    int ok = arc_bits_rows(v, k->m, &k->used);
    if (ok > 0) k->key = v, k->cols = 0;
    return ok;
}

/* 1 with r filled when a and b are non-empty frozensets whose positions fit the masks, 0 otherwise (the
 * caller reads positions, which also raises what the reference raises; so does the eager runtime, which
 * the tests compare with), -1 out of memory. The rows of both are kept in rt->rows (values never change;
 * reset forgets them): a product's pairs, and an lbind'ed patch, meet the same patches again. */
static int rows2_of(tdm_arc_rt *rt, tdm_arc_val *a, tdm_arc_val *b, rows2 *r) {
    if (!arc_defer(rt) || !arc_is_set(a) || !arc_is_set(b) || !a->n || !b->n) return 0;
    int ia, ib, ok;
    uint32_t ma, mb;
    /* a one-position side (initset of a position, as manhattan in a loop over positions asks) is read in
       place and not kept: the other side stays kept for the next position */
    int pa = arc_bits_point(a, &ia, &ma), pb = arc_bits_point(b, &ib, &mb);
    if (pa || pb) {
        tdm_arc_val *v = pa ? b : a;
        int e = pa && pb ? 0 : rows_kept(rt, v);
        if (e < 0 && (ok = rows_keep(rt, -1, v, &e)) <= 0) return ok;
        if (pa) r->pt[0][ia] = r->pc[0] = ma, r->a = r->pt[0], r->ra = 1u << ia, r->ca = &r->pc[0];
        else r->a = rt->rows[e].m, r->ra = rt->rows[e].used, r->ca = &rt->rows[e].cols;
        if (pb) r->pt[1][ib] = r->pc[1] = mb, r->b = r->pt[1], r->rb = 1u << ib, r->cb = &r->pc[1];
        else r->b = rt->rows[e].m, r->rb = rt->rows[e].used, r->cb = &rt->rows[e].cols;
        return 1;
    }
    int ea = rows_kept(rt, a), eb = rows_kept(rt, b);
    if (ea < 0 && (ok = rows_keep(rt, eb, a, &ea)) <= 0) return ok; /* not into the entry b is in */
    if (eb < 0) {
        if (a == b) eb = ea;
        else if ((ok = rows_keep(rt, ea, b, &eb)) <= 0) return ok;
    }
    r->a = rt->rows[ea].m, r->ra = rt->rows[ea].used, r->b = rt->rows[eb].m, r->rb = rt->rows[eb].used;
    r->ca = &rt->rows[ea].cols, r->cb = &rt->rows[eb].cols;
    return 1;
}

/* min |x + dj - y| over the bits x of a and y of b (both non-empty), or cap when that is cap or more. */
static int64_t row_gap(uint32_t a, uint32_t b, int64_t dj, int64_t cap) {
    int64_t lo = __builtin_ctz(b), hi = 31 - __builtin_clz(b), best = cap;
    int64_t alo = __builtin_ctz(a) + dj, ahi = 31 - __builtin_clz(a) + dj;
    if (ahi <= lo) return lo - ahi < cap ? lo - ahi : cap; /* a wholly left of b: its last bit to b's first */
    if (alo >= hi) return alo - hi < cap ? alo - hi : cap;
    for (; a; a &= a - 1) {
        int64_t t = __builtin_ctz(a) + dj, d;
        if (t <= lo) d = lo - t;
        else if (t >= hi) d = t - hi;
        else { /* lo < t < hi: b has bits on both sides of t */
            int64_t up = __builtin_ctz(b >> t), down = __builtin_clz(b << (31 - t));
            d = up < down ? up : down;
        }
        if (d < best && !(best = d)) break;
    }
    return best;
}

/* manhattan(a, b): the smallest row distance plus gap over the pairs of non-empty rows. No pair comes
 * nearer than the boxes' distance (rows apart plus columns apart), and the rows that face each other (a's
 * last and b's first when a lies above b, the rows both hold when their rows overlap) most often reach it:
 * those first, done when they do. Then every pair, skipping those whose row distance alone reaches the
 * best so far. */
static int64_t manhattan_rows(const rows2 *r) {
    int ta = __builtin_ctz(r->ra), ba = 31 - __builtin_clz(r->ra), tb = __builtin_ctz(r->rb), bb = 31 - __builtin_clz(r->rb);
    uint32_t ca = cols_in(r->ca, r->a, r->ra), cb = cols_in(r->cb, r->b, r->rb);
    int la = __builtin_ctz(ca), ha = 31 - __builtin_clz(ca), lb = __builtin_ctz(cb), hb = 31 - __builtin_clz(cb);
    int64_t low = (tb > ba ? tb - ba : ta > bb ? ta - bb : 0) + (lb > ha ? lb - ha : la > hb ? la - hb : 0);
    int64_t best = INT64_MAX;
    if (tb > ba) best = tb - ba + row_gap(r->a[ba], r->b[tb], 0, INT64_MAX);
    else if (ta > bb) best = ta - bb + row_gap(r->a[ta], r->b[bb], 0, INT64_MAX);
    else
        for (uint32_t x = r->ra & r->rb; x && best > low; x &= x - 1) {
            int64_t h = row_gap(r->a[__builtin_ctz(x)], r->b[__builtin_ctz(x)], 0, best);
            if (h < best) best = h;
        }
    for (uint32_t x = r->ra; x && best > low; x &= x - 1) {
        int i = __builtin_ctz(x);
        for (uint32_t y = r->rb; y; y &= y - 1) {
            int k = __builtin_ctz(y);
            int64_t dr = i > k ? i - k : k - i;
            if (dr >= best) continue;
            int64_t h = row_gap(r->a[i], r->b[k], 0, best - dr);
            if (dr + h < best) best = dr + h;
        }
    }
    return best;
}

/* Whether non-empty rows (used) hold one position: 1 with its row in *i. */
static int single(const uint32_t *rows, uint32_t used, int *i) {
    *i = __builtin_ctz(used);
    return !(used & (used - 1)) && !(rows[*i] & (rows[*i] - 1));
}

/* manhattan(a, b) when one side is one position: bit j of row i against b's rows (used), nearest rows
 * first in effect (a row no nearer than the best so far is skipped). */
static int64_t manhattan_point(const uint32_t *rows, uint32_t used, int i, uint32_t bit) {
    int j = __builtin_ctz(bit);
    int64_t best = INT64_MAX;
    for (; used; used &= used - 1) {
        int k = __builtin_ctz(used);
        int64_t dr = k > i ? k - i : i - k;
        if (dr >= best) continue;
        uint32_t up = rows[k] >> j, down = rows[k] << (31 - j); /* b's bits at or right of j, at or left */
        int64_t h = up ? __builtin_ctz(up) : 64, g = down ? __builtin_clz(down) : 64;
        if (dr + (h < g ? h : g) < best) best = dr + (h < g ? h : g);
    }
    return best;
}

/* Whether shift(a, (di, dj)) and b are adjacent (manhattan 1), as adjacent and gravitate ask, from the
 * rows of b next to each row of a, not every pair of rows: 0 when they share a cell (distance 0), 1 when
 * adjacent, 2 when farther apart. Rows are widened to 64 bits with a's moved 16 columns up, so that after
 * a shift of up to 42 columns every bit that could meet b or its neighbours is still in the word. */
static int touch_rows(const rows2 *r, int64_t di, int64_t dj) {
    int touch = 0;
    for (uint32_t x = r->ra; x; x &= x - 1) {
        int i = __builtin_ctz(x);
        int64_t t = i + di;
        if (t < -1 || t > 32) continue; /* no row of b at or next to it */
        uint64_t A = (uint64_t)r->a[i] << 16, near = 0;
        A = dj >= 0 ? A << dj : A >> -dj;
        for (int64_t k = t - 1; k <= t + 1; k++) {
            if (k < 0 || k > 31 || !(r->rb >> k & 1)) continue;
            uint64_t B = (uint64_t)r->b[k] << 16;
            if (k == t) {
                if (A & B) return 0;
                near |= B << 1 | B >> 1;
            } else {
                near |= B;
            }
        }
        touch |= (A & near) != 0;
    }
    return touch ? 1 : 2;
}

static tdm_arc_val *matching(tdm_arc_rt *rt, tdm_arc_val **a, int cols, const char *who) {
    int ea, eb;
    int64_t alo, ahi, blo, bhi;
    if (arc_defer(rt) && arc_objs_span(a[0], cols, &alo, &ahi) && arc_objs_span(a[1], cols, &blo, &bhi))
        return arc_bool(alo <= bhi && blo <= ahi); /* two objects: their spans overlap */
    if (arc_defer(rt) && (ea = rows_kept(rt, a[0])) >= 0 && (eb = rows_kept(rt, a[1])) >= 0) { /* both kept: a pair's */
        struct arc_rows *x = &rt->rows[ea], *y = &rt->rows[eb];
        if (!cols) return arc_bool((x->used & y->used) != 0);
        return arc_bool((cols_in(&x->cols, x->m, x->used) & cols_in(&y->cols, y->m, y->used)) != 0);
    }
    rows2 rr;
    int fit = rows2_of(rt, a[0], a[1], &rr);
    ARC_TRYI(fit);
    if (fit) return arc_bool(cols ? (cols_in(rr.ca, rr.a, rr.ra) & cols_in(rr.cb, rr.b, rr.rb)) != 0 : (rr.ra & rr.rb) != 0);
    arc_pos *p, *q;
    uint32_t n, m;
    ARC_TRYI(arc_positions(rt, a[0], 0, &p, &n, who));
    ARC_TRYI(arc_positions(rt, a[1], 0, &q, &m, who));
    for (uint32_t x = 0; x < n; x++)
        for (uint32_t y = 0; y < m; y++)
            if (cols ? p[x].j == q[y].j : p[x].i == q[y].i) return arc_bool(1);
    return arc_bool(0);
}

tdm_arc_val *arc_p_hmatching(tdm_arc_rt *rt, tdm_arc_val **a) { return matching(rt, a, 0, "hmatching"); }
tdm_arc_val *arc_p_vmatching(tdm_arc_rt *rt, tdm_arc_val **a) { return matching(rt, a, 1, "vmatching"); }

static int64_t manhattan_pos(const arc_pos *p, uint32_t n, const arc_pos *q, uint32_t m, int64_t di, int64_t dj) {
    int64_t best = INT64_MAX;
    for (uint32_t x = 0; x < n; x++)
        for (uint32_t y = 0; y < m; y++) {
            int64_t d = llabs(p[x].i + di - q[y].i) + llabs(p[x].j + dj - q[y].j);
            if (d < best) best = d;
        }
    return best;
}

/* manhattan(a[0], a[1]) into *out (adj: only whether it is 1, as 1 or 0, where the row masks can tell):
 * 0, or -1 with the reference's error. */
static int manhattan(tdm_arc_rt *rt, tdm_arc_val **a, int64_t *out, const char *who, int adj) {
    rows2 rr;
    int fit = rows2_of(rt, a[0], a[1], &rr);
    if (fit < 0) return -1;
    int i;
    if (fit && !adj && single(rr.a, rr.ra, &i)) return *out = manhattan_point(rr.b, rr.rb, i, rr.a[i]), 0;
    if (fit && !adj && single(rr.b, rr.rb, &i)) return *out = manhattan_point(rr.a, rr.ra, i, rr.b[i]), 0;
    if (fit) return *out = adj ? touch_rows(&rr, 0, 0) == 1 : manhattan_rows(&rr), 0;
    arc_pos *p, *q;
    uint32_t n, m;
    if (arc_positions(rt, a[0], 0, &p, &n, who) || arc_positions(rt, a[1], 0, &q, &m, who)) return -1;
    if (!n || !m) return arc_failf(rt, "%s: min() arg is an empty sequence", who);
    *out = manhattan_pos(p, n, q, m, 0, 0);
    return 0;
}

tdm_arc_val *arc_p_manhattan(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t d;
    ARC_TRYI(manhattan(rt, a, &d, "manhattan", 0));
    return arc_int(rt, d);
}

int arc_manhattan_column(tdm_arc_rt *rt, tdm_arc_val *c, int c_first, uint32_t n, tdm_arc_val **x, tdm_arc_val **out, int d) {
    uint32_t rows[32], used, bit;
    if (!arc_is_set(c) || !c->n) return 1;
    int e = rows_kept(rt, c), i, ok;
    if (e >= 0) memcpy(rows, rt->rows[e].m, sizeof rows), used = rt->rows[e].used; /* (a call below may evict it) */
    else if ((ok = arc_bits_rows(c, rows, &used)) <= 0) return ok < 0 ? -1 : 1;
    for (uint32_t k = 0; k < n; k++) {
        if (arc_is_set(x[k]) && arc_bits_point(x[k], &i, &bit)) {
            if (!(out[k] = arc_int(rt, manhattan_point(rows, used, i, bit)))) return -1;
            continue;
        }
        tdm_arc_val *args[2] = {c_first ? c : x[k], c_first ? x[k] : c};
        rt->depth = d;
        if (!(out[k] = arc_p_manhattan(rt, args)) || rt->failed) return -1;
    }
    return 0;
}

tdm_arc_val *arc_p_adjacent(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t d;
    ARC_TRYI(manhattan(rt, a, &d, "adjacent", 1));
    return arc_bool(d == 1);
}

tdm_arc_val *arc_p_bordering(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t u, l, d, r;
    ARC_TRYI(nonempty_box(rt, a[0], &u, &l, &d, &r, "bordering"));
    /* Python's `or` stops at the first true test, before the grid is read. */
    if (u == 0 || l == 0) return arc_bool(1);
    int64_t h = arc_len(rt, a[1]);
    ARC_TRYI(h);
    if (d == h - 1) return arc_bool(1);
    if (!h) return arc_fail(rt, "bordering: tuple index out of range (empty grid)");
    if (!arc_is_tuple(a[1])) return arc_fail(rt, "bordering: grid is not subscriptable");
    int64_t w = arc_len(rt, a[1]->u.items[0]);
    ARC_TRYI(w);
    return arc_bool(r == w - 1);
}

static int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

tdm_arc_val *arc_p_centerofmass(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t len = arc_len(rt, a[0]);
    ARC_TRYI(len);
    arc_pos *p;
    uint32_t n;
    ARC_TRYI(arc_positions(rt, a[0], 1, &p, &n, "centerofmass"));
    if (!n) return arc_tuple(rt, 0);
    int64_t si = 0, sj = 0;
    for (uint32_t k = 0; k < n; k++) si += p[k].i, sj += p[k].j;
    return arc_ipair(rt, floordiv(si, len), floordiv(sj, len));
}

/* (uppermost + height // 2, leftmost + width // 2): the extents come from the positions, the size from
 * height/width, which measure a tuple as a grid (rows, length of row 0), as the reference does. */
static int center(tdm_arc_rt *rt, tdm_arc_val *patch, int64_t *ci, int64_t *cj, const char *who) {
    int64_t u, l, d, r, h, w;
    if (nonempty_box(rt, patch, &u, &l, &d, &r, who)) return -1;
    if (measure(rt, patch, &h, &w, who)) return -1;
    *ci = u + floordiv(h, 2), *cj = l + floordiv(w, 2);
    return 0;
}

tdm_arc_val *arc_p_center(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t i, j;
    ARC_TRYI(center(rt, a[0], &i, &j, "center"));
    return arc_ipair(rt, i, j);
}

tdm_arc_val *arc_p_position(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t ia, ja, ib, jb;
    ARC_TRYI(center(rt, a[0], &ia, &ja, "position"));
    ARC_TRYI(center(rt, a[1], &ib, &jb, "position"));
    if (ia == ib) return arc_ipair(rt, 0, ja < jb ? 1 : -1);
    if (ja == jb) return arc_ipair(rt, ia < ib ? 1 : -1, 0);
    return arc_ipair(rt, ia < ib ? 1 : -1, ja < jb ? 1 : -1);
}

/* shift by (di, dj): seq over iter(patch); an empty patch is returned unchanged. */
static tdm_arc_val *shift(tdm_arc_rt *rt, tdm_arc_val *patch, int64_t di, int64_t dj, const char *who) {
    int kind = arc_patch_kind(rt, patch, who);
    ARC_TRYI(kind);
    if (kind == 2) return patch;
    arc_list l;
    ARC_TRYI(arc_elems(rt, patch, &l, who));
    tdm_arc_val *s = arc_set_new(rt);
    ARC_TRY(s);
    for (uint32_t k = 0; k < l.n; k++) {
        tdm_arc_val *e = l.v[k], *x;
        int64_t i, j;
        int64_t ni, nj;
        if (kind == 1) {
            if (!arc_is_tuple(e) || e->n != 2) return arc_fail(rt, "%s: cannot unpack an element into value, (i, j)", who);
            ARC_TRYI(arc_get_ipair(rt, e->u.items[1], &i, &j, who));
        } else {
            ARC_TRYI(arc_get_ipair(rt, e, &i, &j, who));
        }
        if (__builtin_add_overflow(i, di, &ni) || __builtin_add_overflow(j, dj, &nj))
            return arc_fail(rt, "%s: integer overflow beyond 64 bits (not supported by the port)", who);
        x = kind == 1 ? arc_pair(rt, e->u.items[0], arc_ipair(rt, ni, nj)) : arc_ipair(rt, ni, nj);
        if (arc_set_add(rt, s, x)) return NULL;
    }
    return s;
}

/* The deferred result of shift (or normalize) by (di, dj) of a non-empty set whose contents are b (masks
 * only) and whose box is box, when every shifted position still fits the masks (the recipe: eager on
 * a[0..nargs-1]): 1 and *out, 0 when not, -1 out of memory. */
static int shift_bits(tdm_arc_rt *rt, const arc_bits *b, const int64_t box[4], int64_t di, int64_t dj,
                      arc_prim_fn eager, tdm_arc_val **a, int nargs, tdm_arc_val **out) {
    arc_bits s;
    if (!arc_bits_fits(box[0] + di, box[1] + dj) || !arc_bits_fits(box[2] + di, box[3] + dj)) return 0;
    if (arc_bits_init(rt, &s)) return -1;
    s.kind = b->kind;
    /* the rows that may hold elements, moved by di (the box keeps them on the masks); every element
       stays on the masks, so the count, the blocks and the shifted box are known */
    int lo = (int)(box[0] + ARC_BITS_OFF), hi = (int)(box[2] + ARC_BITS_OFF) + 1;
    /* a made set's rows are known: moved, they are the result's */
    uint32_t rows = !b->rows ? 0 : di >= 0 ? b->rows << di : b->rows >> -di;
    for (uint32_t bl = b->blocks; bl; bl &= bl - 1) {
        int c = __builtin_ctz(bl);
        uint32_t *m = arc_bits_block(&s, c);
        const uint32_t *p = b->m + 32 * c;
        if (b->rows && dj >= 0)
            for (int i = lo; i < hi; i++) m[i + di] = p[i] << dj;
        else if (b->rows)
            for (int i = lo; i < hi; i++) m[i + di] = p[i] >> -dj;
        else
            for (int i = lo; i < hi; i++) {
                m[i + di] = dj >= 0 ? p[i] << dj : p[i] >> -dj;
                rows |= (uint32_t)(p[i] != 0) << (i + di);
            }
    }
    int64_t moved[4] = {box[0] + di, box[1] + dj, box[2] + di, box[3] + dj};
    s.rows = rows;
    *out = arc_bits_set_known(rt, &s, a[0]->n, moved, eager, a, nargs); /* a[0]: the set b holds */
    return *out ? 1 : -1;
}

/* shift_bits for any set of positions or cells with contents (a wide one, or one whose shifted positions
 * leave the masks): element by element, those off the masks as keys. 1 and *out, 0 when the contents are
 * not such, or a shifted position would pass the keys' range; -1 out of memory. */
static int shift_wide(tdm_arc_rt *rt, tdm_arc_val *patch, int64_t di, int64_t dj, arc_prim_fn eager, tdm_arc_val **a,
                      int nargs, tdm_arc_val **out) {
    arc_bits b, s;
    int64_t box[4];
    int r = arc_bits_get_wide(rt, patch, &b);
    if (r <= 0 || b.kind == ARC_BITS_NONE) return r < 0 ? -1 : 0;
    arc_bits_box(&b, box);
    if (!arc_key_ok(box[0] + di, box[1] + dj) || !arc_key_ok(box[2] + di, box[3] + dj)) return 0;
    if (arc_bits_init_wide(rt, &s)) return -1;
    s.kind = b.kind;
    for (uint32_t bl = b.blocks; bl; bl &= bl - 1) {
        int c = __builtin_ctz(bl);
        for (int i = 0; i < 32; i++)
            for (uint32_t row = b.m[32 * c + i]; row; row &= row - 1)
                if (arc_bits_put(&s, c, i - ARC_BITS_OFF + di, __builtin_ctz(row) - ARC_BITS_OFF + dj)) return -1;
    }
    for (uint32_t k = 0; k < b.nout; k++)
        if (arc_bits_put(&s, arc_key_c(b.out[k]), arc_key_i(b.out[k]) + di, arc_key_j(b.out[k]) + dj)) return -1;
    *out = arc_bits_set(rt, &s, eager, a, nargs);
    return *out ? 1 : -1;
}

static tdm_arc_val *shift_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    int kind = arc_patch_kind(rt, a[0], "shift");
    ARC_TRYI(kind);
    if (kind == 2) return a[0];
    int64_t di, dj;
    ARC_TRYI(arc_get_ipair(rt, a[1], &di, &dj, "shift"));
    return shift(rt, a[0], di, dj, "shift");
}

tdm_arc_val *arc_p_shift(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val *v = a[1], *out;
    if (arc_defer(rt) && arc_is_set(a[0]) && a[0]->n && arc_is_tuple(v) && v->n == 2 && arc_is_int(v->u.items[0]) &&
        arc_is_int(v->u.items[1]) && llabs(v->u.items[0]->u.i) < ARC_KEY_BIAS && llabs(v->u.items[1]->u.i) < ARC_KEY_BIAS) {
        int64_t di = v->u.items[0]->u.i, dj = v->u.items[1]->u.i;
        arc_bits b;
        int64_t box[4];
        int r = arc_bits_get(rt, a[0], &b);
        ARC_TRYI(r);
        if (r && b.kind != ARC_BITS_NONE) {
            arc_bits_box_for(a[0], &b, box);
            ARC_TRYI(r = shift_bits(rt, &b, box, di, dj, shift_eager, a, 2, &out));
            if (r) return out;
        }
        ARC_TRYI(r = shift_wide(rt, a[0], di, dj, shift_eager, a, 2, &out));
        if (r) return out;
    }
    return shift_eager(rt, a);
}

static tdm_arc_val *normalize_eager(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_pos *p;
    uint32_t n;
    ARC_TRYI(arc_positions(rt, a[0], 0, &p, &n, "normalize"));
    if (!n) return a[0];
    int64_t u, l, d, r;
    arc_bbox(p, n, &u, &l, &d, &r);
    return shift(rt, a[0], -u, -l, "normalize");
}

tdm_arc_val *arc_p_normalize(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (arc_defer(rt) && arc_is_set(a[0]) && a[0]->n) {
        arc_bits b;
        int64_t box[4];
        tdm_arc_val *out;
        int r = arc_bits_get(rt, a[0], &b);
        ARC_TRYI(r);
        if (r && b.kind != ARC_BITS_NONE) {
            arc_bits_box_for(a[0], &b, box);
            ARC_TRYI(r = shift_bits(rt, &b, box, -box[0], -box[1], normalize_eager, a, 1, &out));
            if (r) return out;
        }
    }
    return normalize_eager(rt, a);
}

/* ---- mirrors ---------------------------------------------------------------------------------------- */

/* Grid forms work on the tuple structure itself (any cell values), as the reference's slicing and zip. */
tdm_arc_val *arc_reversed(tdm_arc_rt *rt, tdm_arc_val *t) {
    tdm_arc_val *r = arc_tuple(rt, t->n);
    ARC_TRY(r);
    for (uint32_t k = 0; k < t->n; k++) r->u.items[k] = t->u.items[t->n - 1 - k];
    return r;
}

/* tuple(zip(*rows)), rows optionally each reversed and/or taken bottom-up. */
tdm_arc_val *arc_transpose(tdm_arc_rt *rt, tdm_arc_val *g, int rows_rev, int cols_rev, const char *who) {
    uint32_t h = g->n, w = UINT32_MAX;
    for (uint32_t i = 0; i < h; i++) {
        tdm_arc_val *r = g->u.items[i];
        if (!arc_is_tuple(r)) return arc_fail(rt, "%s: grid row is not a tuple (not supported by the port)", who);
        if (r->n < w) w = r->n;
    }
    if (!h) return g;
    tdm_arc_val *out = arc_tuple(rt, w);
    ARC_TRY(out);
    /* column c of output row k is at[k][step * c]: cmirror reverses each row by its own length before zip;
       rot270 reverses zip's columns, whose count is the shortest row's (they differ only for ragged grids) */
    tdm_arc_val *const **at = arc_alloc(rt, h * sizeof *at);
    ARC_TRY(at);
    ptrdiff_t step = cols_rev ? -1 : 1;
    for (uint32_t k = 0; k < h; k++) {
        const tdm_arc_val *src = g->u.items[rows_rev ? h - 1 - k : k];
        at[k] = src->u.items + (cols_rev == 1 ? src->n - 1 : cols_rev == 2 ? w - 1 : 0);
    }
    for (uint32_t c = 0; c < w; c++) {
        tdm_arc_val *row = arc_tuple(rt, h);
        ARC_TRY(row);
        for (uint32_t k = 0; k < h; k++) row->u.items[k] = at[k][step * (ptrdiff_t)c];
        out->u.items[c] = row;
    }
    return out;
}

enum { M_H = ARC_GB_HMIRROR, M_V = ARC_GB_VMIRROR, M_D = ARC_GB_DMIRROR, M_C = ARC_GB_CMIRROR };

static tdm_arc_val *mirror_patch(tdm_arc_rt *rt, tdm_arc_val *patch, int m, const char *who) {
    arc_pos *p;
    uint32_t n;
    ARC_TRYI(arc_positions(rt, patch, 0, &p, &n, who));
    if (!n) return arc_fail(rt, "%s: tuple index out of range (empty patch)", who);
    int kind = arc_patch_kind(rt, patch, who);
    ARC_TRYI(kind);
    int64_t u, l, d, r;
    arc_bbox(p, n, &u, &l, &d, &r);
    arc_list el;
    ARC_TRYI(arc_elems(rt, patch, &el, who));
    tdm_arc_val *s = arc_set_new(rt);
    ARC_TRY(s);
    for (uint32_t k = 0; k < n; k++) {
        int64_t i = p[k].i, j = p[k].j, ni, nj;
        if (m == M_H) ni = u + d - i, nj = j;
        else if (m == M_V) ni = i, nj = l + r - j;
        else ni = j - l + u, nj = i - u + l;
        tdm_arc_val *x = arc_ipair(rt, ni, nj);
        if (kind == 1) x = arc_pair(rt, el.v[k]->u.items[0], x);
        if (arc_set_add(rt, s, x)) return NULL;
    }
    return s;
}

static tdm_arc_val *mirror(tdm_arc_rt *rt, tdm_arc_val *piece, int m, const char *who) {
    if (arc_is_tuple(piece)) {
        if (m == M_H) return arc_reversed(rt, piece);
        if (m == M_D) return arc_transpose(rt, piece, 0, 0, who);
        if (m == M_C) return arc_transpose(rt, piece, 1, 1, who);
        tdm_arc_val *out = arc_tuple(rt, piece->n);
        ARC_TRY(out);
        for (uint32_t k = 0; k < piece->n; k++) {
            tdm_arc_val *row = piece->u.items[k];
            if (!arc_is_tuple(row)) return arc_fail(rt, "%s: grid row is not a tuple (not supported by the port)", who);
            ARC_TRY(out->u.items[k] = arc_reversed(rt, row));
        }
        return out;
    }
    if (m != M_C) return mirror_patch(rt, piece, m, who);
    tdm_arc_val *x = mirror_patch(rt, piece, M_V, who);
    ARC_TRY(x);
    ARC_TRY(x = mirror_patch(rt, x, M_D, who));
    return mirror_patch(rt, x, M_V, who);
}

static tdm_arc_val *hmirror_eager(tdm_arc_rt *rt, tdm_arc_val **a) { return mirror(rt, a[0], M_H, "hmirror"); }
static tdm_arc_val *vmirror_eager(tdm_arc_rt *rt, tdm_arc_val **a) { return mirror(rt, a[0], M_V, "vmirror"); }
static tdm_arc_val *dmirror_eager(tdm_arc_rt *rt, tdm_arc_val **a) { return mirror(rt, a[0], M_D, "dmirror"); }
static tdm_arc_val *cmirror_eager(tdm_arc_rt *rt, tdm_arc_val **a) { return mirror(rt, a[0], M_C, "cmirror"); }

static uint32_t rev32(uint32_t x) {
    x = (x >> 1 & 0x55555555u) | (x & 0x55555555u) << 1;
    x = (x >> 2 & 0x33333333u) | (x & 0x33333333u) << 2;
    x = (x >> 4 & 0x0f0f0f0fu) | (x & 0x0f0f0f0fu) << 4;
    x = (x >> 8 & 0x00ff00ffu) | (x & 0x00ff00ffu) << 8;
    return x >> 16 | x << 16;
}

/* A mirror of a non-empty set of positions or cells whose contents fit the masks, deferred: its box
 * (u, l, d, r) maps (i, j) to (u + d - i, j) (hmirror), (i, l + r - j) (vmirror), (u + j - l, l + i - u)
 * (dmirror) or (u + r - j, l + d - i) (cmirror, vmirror of dmirror of vmirror), each cell keeping its
 * colour. 1 and *out, 0 when the contents are not such or the result would leave the masks, -1 out of
 * memory. */
static int mirror_bits(tdm_arc_rt *rt, tdm_arc_val **a, int m, arc_prim_fn eager, tdm_arc_val **out) {
    arc_bits b, s;
    int64_t box[4];
    int r = arc_bits_get(rt, a[0], &b);
    if (r <= 0 || b.kind == ARC_BITS_NONE) return r;
    arc_bits_box_for(a[0], &b, box);
    int U = (int)box[0] + ARC_BITS_OFF, L = (int)box[1] + ARC_BITS_OFF, D = (int)box[2] + ARC_BITS_OFF,
        R = (int)box[3] + ARC_BITS_OFF;
    if ((m == M_D || m == M_C) && (U + R - L >= 32 || L + D - U >= 32)) return 0;
    if (arc_bits_init(rt, &s)) return -1;
    s.kind = b.kind;
    /* each element to one element: the count and the blocks are a[0]'s, and the box is a[0]'s (hmirror,
       vmirror) or its transpose at the same corner (dmirror, cmirror); the rows are noted on the way */
    uint32_t rows = 0;
    for (uint32_t bl = b.blocks; bl; bl &= bl - 1) {
        int c = __builtin_ctz(bl), sh = L + R - 31;
        uint32_t *o = arc_bits_block(&s, c);
        const uint32_t *p = b.m + 32 * c;
        for (int i = U; i <= D; i++) {
            if (m == M_H) o[U + D - i] = p[i], rows |= (uint32_t)(p[i] != 0) << (U + D - i);
            else if (m == M_V) o[i] = sh >= 0 ? rev32(p[i]) << sh : rev32(p[i]) >> -sh, rows |= (uint32_t)(p[i] != 0) << i;
            else
                for (uint32_t row = p[i]; row; row &= row - 1) {
                    int j = __builtin_ctz(row), k = m == M_D ? U + j - L : U + R - j;
                    o[k] |= 1u << (m == M_D ? L + i - U : L + D - i), rows |= 1u << k;
                }
        }
    }
    s.rows = rows;
    if (m == M_D || m == M_C) box[2] = box[0] + (R - L), box[3] = box[1] + (D - U);
    *out = arc_bits_set_known(rt, &s, a[0]->n, box, eager, a, 1);
    return *out ? 1 : -1;
}

static tdm_arc_val *mirror_of(tdm_arc_rt *rt, tdm_arc_val **a, int m, arc_prim_fn eager) {
    tdm_arc_val *out = NULL;
    if (arc_is_tuple(a[0])) ON_BYTES(arc_gbytes(rt, a, m, &bytes_out)); /* a grid, when it or the result may be bytes */
    if (arc_defer(rt) && arc_is_set(a[0]) && a[0]->n) {
        int r = mirror_bits(rt, a, m, eager, &out);
        ARC_TRYI(r);
        if (r) return out;
    }
    return eager(rt, a);
}

tdm_arc_val *arc_p_hmirror(tdm_arc_rt *rt, tdm_arc_val **a) { return mirror_of(rt, a, M_H, hmirror_eager); }
tdm_arc_val *arc_p_vmirror(tdm_arc_rt *rt, tdm_arc_val **a) { return mirror_of(rt, a, M_V, vmirror_eager); }
tdm_arc_val *arc_p_dmirror(tdm_arc_rt *rt, tdm_arc_val **a) { return mirror_of(rt, a, M_D, dmirror_eager); }
tdm_arc_val *arc_p_cmirror(tdm_arc_rt *rt, tdm_arc_val **a) { return mirror_of(rt, a, M_C, cmirror_eager); }

/* ---- gravitate and periods ---------------------------------------------------------------------------- */

tdm_arc_val *arc_p_gravitate(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t si, sj, di, dj;
    ARC_TRYI(center(rt, a[0], &si, &sj, "gravitate"));
    ARC_TRYI(center(rt, a[1], &di, &dj, "gravitate"));
    rows2 rr;
    int fit = rows2_of(rt, a[0], a[1], &rr);
    ARC_TRYI(fit);
    if (fit) {
        int64_t i = 0, j = 0, c = 0;
        if (cols_in(rr.ca, rr.a, rr.ra) & cols_in(rr.cb, rr.b, rr.rb)) i = si < di ? 1 : -1;
        else j = sj < dj ? 1 : -1;
        while (touch_rows(&rr, c * i, c * j) != 1 && c < 42) c++;
        return arc_ipair(rt, c * i, c * j);
    }
    arc_pos *p, *q;
    uint32_t n, m;
    ARC_TRYI(arc_positions(rt, a[0], 0, &p, &n, "gravitate"));
    ARC_TRYI(arc_positions(rt, a[1], 0, &q, &m, "gravitate"));
    int vm = 0;
    for (uint32_t x = 0; x < n && !vm; x++)
        for (uint32_t y = 0; y < m; y++)
            if (p[x].j == q[y].j) {
                vm = 1;
                break;
            }
    int64_t i = 0, j = 0;
    if (vm) i = si < di ? 1 : -1;
    else j = sj < dj ? 1 : -1;
    int64_t c = 0;
    while (manhattan_pos(p, n, q, m, c * i, c * j) != 1 && c < 42) c++;
    return arc_ipair(rt, c * i, c * j);
}

/* The smallest p whose shifted-and-pruned normalized object is a subset of it (spec §3.6). */
static tdm_arc_val *period(tdm_arc_rt *rt, tdm_arc_val *obj, int vertical, const char *who) {
    arc_pos *p;
    uint32_t n;
    ARC_TRYI(arc_positions(rt, obj, 0, &p, &n, who));
    if (!n) return arc_int(rt, 0);
    int64_t u, l, d, r;
    arc_bbox(p, n, &u, &l, &d, &r);
    int64_t ext = vertical ? d - u + 1 : r - l + 1;
    if (ext <= 1) return arc_int(rt, ext);
    arc_cellv *c;
    uint32_t m;
    ARC_TRYI(arc_cells(rt, obj, &c, &m, who));
    for (int64_t per = 1; per < ext; per++) {
        int ok = 1;
        for (uint32_t x = 0; x < m && ok; x++) {
            int64_t i = c[x].i - u - (vertical ? per : 0), j = c[x].j - l - (vertical ? 0 : per);
            if (i < 0 || j < 0) continue;
            int found = 0;
            for (uint32_t y = 0; y < m && !found; y++)
                found = c[y].c == c[x].c && c[y].i - u == i && c[y].j - l == j;
            ok = found;
        }
        if (ok) return arc_int(rt, per);
    }
    return arc_int(rt, ext);
}

tdm_arc_val *arc_p_hperiod(tdm_arc_rt *rt, tdm_arc_val **a) { return period(rt, a[0], 0, "hperiod"); }
tdm_arc_val *arc_p_vperiod(tdm_arc_rt *rt, tdm_arc_val **a) { return period(rt, a[0], 1, "vperiod"); }
