/* objects_label.c: the labelling half of objects() with lazy layouts (spec §4.11; objects_lazy.c makes the
 * values and layouts): what every call pays, so it is kept to byte compares and bit operations on rows. The
 * batched executor's CPU forms label their lanes with it too (arc_objs_label_slot). */
#include "objects_lazy.h"

#include <string.h>
#if defined(ARC_VEC_ADDR) && defined(__GNUC__)
#include <immintrin.h>
#define LABEL_AVX2 1 /* label has a form for CPUs with AVX2, chosen at run time */
#endif

/* ---- labelling ----------------------------------------------------------------------------------------
 * The grid is read into padded rows (a sentinel colour left of column 0 and right of column w - 1), so
 * that comparing a row with itself shifted by one column, or with the row above shifted by -1, 0 or +1,
 * gives, as bit masks, where runs start and end and where a cell touches a cell of its class above. Runs
 * are numbered row by row, left to right, all classes together; each cell's number within its row is a
 * prefix count of the run starts. A union-find over runs then joins those that touch. */

#if defined(LABEL_AVX2)
/* arc_eq_mask32 with one 32-byte compare. */
__attribute__((target("avx2"))) static inline uint32_t eq_mask_avx2(const uint8_t *a, const uint8_t *b) {
    return (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)a),
                                                            _mm256_loadu_si256((const __m256i *)b)));
}
#define EQ_MASK(a, b) (avx ? eq_mask_avx2(a, b) : arc_eq_mask32(a, b))
#else
#define EQ_MASK(a, b) arc_eq_mask32(a, b)
#endif

/* Joins run b (of the row being scanned) to run a (of the row above), keeping the smaller root (so a root
 * stays the smallest run of its tree, and every run's parent is a smaller run or itself: prepare() reads
 * the roots in one pass by it); 1 when they were apart. No branch on which case it is (b's first
 * link, or a second one that may close a loop): to a predictor they come at random. */
static inline uint32_t link_runs(int16_t *par, int a, int b) {
    int ra = find(par, a), rb = find(par, b), lo = ra < rb ? ra : rb;
    par[ra ^ rb ^ lo] = (int16_t)lo; /* the larger root under the smaller (itself when they are one) */
    return ra != rb;
}

/* par[r] = r for the 32 runs from r0 (a row has at most 30): stores, not a loop to a random end. */
static inline void own_parents(int16_t *par, uint32_t r0) {
#if defined(__SSE2__)
    __m128i v = _mm_add_epi16(_mm_set1_epi16((short)r0), _mm_set_epi16(7, 6, 5, 4, 3, 2, 1, 0)), eight = _mm_set1_epi16(8);
    for (int t = 0; t < 4; t++, v = _mm_add_epi16(v, eight)) _mm_storeu_si128((__m128i *)(par + r0 + 8 * t), v);
#else
    for (uint32_t t = 0; t < 32; t++) par[r0 + t] = (int16_t)(r0 + t);
#endif
}

/* The runs of a row whose starts are s that begin at or left of column j (its 1-based run number there),
 * with the CPU's popcnt instruction when hw (a constant: label_avx2 is built for it). */
static inline __attribute__((always_inline)) int rank(uint32_t s, int j, const int hw) {
    uint32_t m = s & ((2u << j) - 1u); /* j = 31: 2u << 31 wraps to 0, so all of s */
    return hw ? __builtin_popcount(m) : arc_popc(m);
}

/* Labels the runs of x's h padded rows: starts, ends, run bases and the union-find; sets nruns, ncomp.
 * avx (a constant): the row compares as eq_mask_avx2, and rank by popcnt. */
static inline __attribute__((always_inline)) void label_body(objs_ctx *x, uint8_t (*pr)[PADW], const int avx,
                                                             const int uni, const int diag) {
    int h = x->h, w = x->w;
    uint32_t full = (1u << w) - 1u, pfg = 0, ps = 0, nr = 0, merged = 0;
    int16_t *par = x->rpar;
    for (int i = 0; i < h; i++) {
        const uint8_t *r = pr[i] + 1, *u = r - PADW;
        uint32_t fg = x->has_bg ? full & ~arc_colour_mask32(r, x->bg) : full, s, e, up = 0, d1 = 0, d2 = 0;
        if (x->only >= 0) fg &= arc_colour_mask32(r, x->only); /* one colour's objects (the others' cells as background) */
        if (uni) {
            /* classes are colours: compare the row with its neighbours (sentinels at both ends) */
            s = fg & ~EQ_MASK(r, r - 1), e = fg & ~EQ_MASK(r, r + 1);
            if (i) {
                up = fg & EQ_MASK(r, u);
                if (diag) d1 = fg & EQ_MASK(r, u - 1), d2 = fg & EQ_MASK(r, u + 1);
            }
        } else {
            /* one class, the foreground */
            s = fg & ~(fg << 1), e = fg & ~(fg >> 1);
            up = fg & pfg;
            if (diag) d1 = fg & (pfg << 1), d2 = fg & (pfg >> 1);
        }
        x->start[i] = s, x->end[i] = e, x->rbase[i] = (uint16_t)nr, x->fg[i] = fg;
        if (!uni) x->chg[i] = full & ~EQ_MASK(r, r - 1);
        own_parents(par, nr); /* the row's runs, alone */
        if (i) {
            /* a pair (run above, run here) per segment of shared columns: where the segment begins or a
               run begins inside it (then the run above begins there too); when diagonal, the corners: a
               run here beginning at j below the end of a run above at j - 1 (and not below column j,
               which would be a shared column), or ending at j below the start of one at j + 1. A run's
               number is its row's base plus its rank, less one. */
            uint32_t v = up & (s | ~(up << 1)), c1 = s & d1 & ~up, c2 = e & d2 & ~up;
            int b0 = (int)nr - 1, a0 = (int)x->rbase[i - 1] - 1;
            for (; v; v &= v - 1) {
                int j = __builtin_ctz(v);
                merged += link_runs(par, a0 + rank(ps, j, avx), b0 + rank(s, j, avx));
            }
            for (; c1; c1 &= c1 - 1) {
                int j = __builtin_ctz(c1);
                merged += link_runs(par, a0 + rank(ps, j - 1, avx), b0 + rank(s, j, avx));
            }
            for (; c2; c2 &= c2 - 1) {
                int j = __builtin_ctz(c2);
                merged += link_runs(par, a0 + rank(ps, j + 1, avx), b0 + rank(s, j, avx));
            }
        }
        nr += (uint32_t)rank(s, 31, avx);
        pfg = fg, ps = s;
    }
    x->nruns = nr, x->ncomp = nr - merged;
}

/* label_body with uni and diag constants: a form per pair of flags (the row loop then tests neither). */
static inline __attribute__((always_inline)) void label_flags(objs_ctx *x, uint8_t (*pr)[PADW], const int avx) {
    if (x->univalued) {
        if (x->diagonal) label_body(x, pr, avx, 1, 1);
        else label_body(x, pr, avx, 1, 0);
    } else {
        if (x->diagonal) label_body(x, pr, avx, 0, 1);
        else label_body(x, pr, avx, 0, 0);
    }
}

#if defined(LABEL_AVX2)
__attribute__((target("avx2,popcnt"))) static void label_avx2(objs_ctx *x, uint8_t (*pr)[PADW]) { label_flags(x, pr, 1); }
#endif

/* label_body, with 32-byte compares where the CPU has AVX2. */
static void label(objs_ctx *x, uint8_t (*pr)[PADW]) {
#if defined(LABEL_AVX2)
    if (!arc_bits_portable && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt")) {
        label_avx2(x, pr);
        return;
    }
#endif
    label_flags(x, pr, 0);
}

/* dst[0..31] = the w colours at src, then sentinels (src may be read 32 bytes on). */
static inline void pad_row(uint8_t *dst, const uint8_t *src, int w) {
#if defined(__SSE2__)
    static const uint8_t ramp[32] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                     16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
    /* 0xff where the column is w or more: ramp > w - 1 (signed bytes: both at most 31) */
    __m128i lim = _mm_set1_epi8((char)(w - 1));
    __m128i p0 = _mm_cmpgt_epi8(_mm_loadu_si128((const __m128i *)ramp), lim);
    __m128i p1 = _mm_cmpgt_epi8(_mm_loadu_si128((const __m128i *)(ramp + 16)), lim);
    _mm_storeu_si128((__m128i *)dst, _mm_or_si128(_mm_loadu_si128((const __m128i *)src), p0));
    _mm_storeu_si128((__m128i *)(dst + 16), _mm_or_si128(_mm_loadu_si128((const __m128i *)(src + 16)), p1));
#else
    for (int j = 0; j < 32; j++) dst[j] = j < w ? src[j] : NOCOL;
#endif
}

int arc_objs_label(tdm_arc_rt *rt, objs_ctx *x, tdm_arc_val **a) {
    tdm_arc_val *g = a[0];
    if (!arc_is_tuple(g) || g->n < 1 || g->n > ARC_SLOT) return -1;
    int h = (int)g->n, w = arc_is_tuple(g->u.items[0]) ? (int)g->u.items[0]->n : 0;
    if (w < 1 || w > ARC_SLOT) return -1;
    uint8_t pr[ARC_SLOT][PADW];
    memset(pr, NOCOL, (size_t)h * PADW);
    arc_gview gv;
    int r = arc_grid_view(rt, g, &gv);
    if (r < 0) return -2;
    if (r) {
        /* the grid's bytes: the dense copy at once, the padded rows 32 bytes at a time (the view's slack
           covers the last row's read; what lies past column w - 1 is the right sentinels) */
        memcpy(x->col, gv.c, (size_t)h * w);
        for (int i = 0; i < h; i++) pad_row(pr[i] + 1, gv.c + i * w, w);
    }
    for (int i = 0; !r && i < h; i++) {
        tdm_arc_val *row = g->u.items[i];
        if (!arc_is_tuple(row) || (int)row->n != w) return -1;
        uint8_t *cr = pr[i] + 1, *dense = x->col + i * w; /* the padded row, and the dense copy the hooks read */
        for (int j = 0; j < w; j++) {
            tdm_arc_val *v = row->u.items[j];
            int c = arc_interned_colour(v); /* an interned int 0..9: no need to read it */
            if (c < 0) {
                if (!arc_is_int(v) || v->u.i < 0 || v->u.i >= ARC_COLOURS) return -1;
                c = (int)v->u.i;
            }
            cr[j] = dense[j] = (uint8_t)c; /* two byte stores: a vector copy of cr would stall on them */
        }
    }
    x->h = h, x->w = w;
    x->univalued = arc_truthy(a[1]), x->diagonal = arc_truthy(a[2]), x->has_bg = arc_truthy(a[3]);
    /* mostcolor (spec §4.9) from the dense copy's counts, or as asked before of this grid */
    x->bg = !x->has_bg                                 ? -1
            : r && rt->pick_grid == g && rt->pick[0] >= 0 ? rt->pick[0]
            : r ? arc_bytes_pick_counted(x->col, (uint32_t)(h * w), arc_grid_view_counts(rt, g, &gv), 0)
                : arc_bytes_pick(x->col, (uint32_t)(h * w), 0);
    label(x, pr);
    return 0;
}

void arc_objs_label_slot(const uint8_t *cells, int h, int w, int flags, int16_t *out) {
    objs_ctx x;
    uint8_t pr[ARC_SLOT][PADW];
    memset(pr, NOCOL, (size_t)h * PADW);
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) pr[i][1 + j] = x.col[i * w + j] = cells[i * ARC_SLOT + j];
    x.h = h, x.w = w;
    x.univalued = (flags & ARC_OBJ_UNIVALUED) != 0, x.diagonal = (flags & ARC_OBJ_DIAGONAL) != 0, x.only = -1;
    x.has_bg = (flags & ARC_OBJ_WITHOUT_BG) != 0;
    x.bg = x.has_bg ? arc_bytes_pick(x.col, (uint32_t)(h * w), 0) : -1;
    label(&x, pr);
    for (int i = 0; i < h; i++) {
        uint8_t cnt[32];
        prefix_counts(x.start[i], cnt);
        for (int j = 0; j < w; j++)
            out[i * ARC_SLOT + j] = (int16_t)(x.fg[i] >> j & 1 ? find(x.rpar, x.rbase[i] + cnt[j] - 1) : -1);
    }
}
