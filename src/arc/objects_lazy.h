/* objects_lazy.h: what the two halves of objects() with lazy layouts share (spec §4.11): the state of one
 * call (objs_ctx: the grid's colours, its runs and their union-find, then what prepare() makes on first
 * need), and the small bit helpers both use. objects_label.c reads the grid and labels it (the part every
 * call pays); objects_lazy.c makes the object values and the layouts when asked. Private to src/arc. */
#ifndef TANDEM_ARC_OBJECTS_LAZY_H
#define TANDEM_ARC_OBJECTS_LAZY_H

#include "arc_device.h"
#include "arc_internal.h"

#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define MAXC (ARC_SLOT * ARC_SLOT)
#define OUTER UINT32_MAX /* part of the outer set; objects are parts 0..k-1 (by first run, row-major) */

typedef struct objs_ctx {
    arc_lazy z; /* first: the lazy sets point here */
    int h, w, univalued, diagonal, has_bg, bg;
    int only; /* -1, or the one colour whose objects are labelled (arc_objects_of_colour: set before labelling) */
    uint32_t ncomp, nruns;
    uint8_t col[MAXC]; /* row-major, w per row */
    /* the partition: per row, the columns where a run of one class (one colour when univalued, every
       foreground cell otherwise) starts and where one ends (bit j: column j); run ids are given row by row,
       left to right, so the run holding column j of row i is rbase[i] + (run starts at or left of j) - 1 */
    uint32_t start[ARC_SLOT], end[ARC_SLOT];
    uint16_t rbase[ARC_SLOT];
    int16_t rpar[MAXC + 32]; /* per run: union-find parent (a row's 32 entries are set at once) */
    uint32_t fg[ARC_SLOT];  /* per row: the cells in objects (all but the background's) */
    uint32_t chg[ARC_SLOT]; /* per row, not univalued: where a cell's colour differs from its left neighbour's */
    /* made by prepare() on first need */
    int prepared, rids_ready, comp_ready, ordered, hashes_ready;
    int16_t *rid;      /* per cell: its run, nruns for background (run_ids(), for the readers of cells) */
    int16_t *runobj;   /* per run: its object (entry nruns: -1) */
    uint8_t (*run)[4]; /* per run: its row, first and last columns (later passes go run by run, not row by row) */
    int16_t *comp;     /* per cell: its object, -1 for background (filled by cell_objects) */
    /* made by prepare_order() for layouts: objects are numbered by their first runs, row-major, and the
       reference finds them in another order */
    int16_t *disc;     /* per object: its discovery rank */
    int16_t *bydisc;   /* per discovery rank: the object */
    uint16_t *seed;    /* per object: its first cell in asindices order */
    uint32_t *base;    /* per object: cells of the objects found before it (occupied's size at its start) */
    uint8_t *added;    /* replay: cells of the object being replayed already added to occupied */
    tdm_arc_val *objs; /* the k lazy objects */
    tdm_arc_val **objp; /* pointers to them, made when the outer set's members are first asked for */
    int8_t *ucol;      /* per object: its one colour, or -1 when its cells differ in colour */
    uint8_t (*box)[4]; /* per object: min i, min j, max i, max j */
    uint32_t *orow;    /* made by object_rows(): per object, its cells' columns row by row over its box */
    uint32_t *orow_at; /* per object: where its rows start in orow */
    int cur;           /* the object being replayed */
    /* restricted to one colour: the call's arguments, and the full objects() of them (its set and maker),
       made when a layout is first asked */
    tdm_arc_val *fa[4], *full;
    struct objs_ctx *fullx;
} objs_ctx;

#define PADW 48    /* bytes per padded row: a sentinel, w colours, sentinels */
#define NOCOL 0xff /* the sentinel: no colour */

/* The root of run x (the smallest run of its tree), halving the path on the way. */
static inline int find(int16_t *par, int x) {
    int p = par[x];
    if (par[p] == p) return p; /* most runs sit right under their root */
    while (par[x] != x) {
        par[x] = par[par[x]];
        x = par[x];
    }
    return x;
}

#if defined(__SSE2__)
/* The bits of s as bytes, 0xff where set: bits 0..15 in *lo, 16..31 in *hi. */
static inline void bits_to_bytes(uint32_t s, __m128i *lo, __m128i *hi) {
    const __m128i sel = _mm_set_epi8(-128, 64, 32, 16, 8, 4, 2, 1, -128, 64, 32, 16, 8, 4, 2, 1);
    __m128i v = _mm_cvtsi32_si128((int)s);
    v = _mm_unpacklo_epi8(v, v);
    v = _mm_unpacklo_epi16(v, v); /* bytes 4k..4k+3: byte k of s */
    __m128i l = _mm_unpacklo_epi32(v, v), h = _mm_unpackhi_epi32(v, v); /* 8 copies of each byte */
    *lo = _mm_cmpeq_epi8(_mm_and_si128(l, sel), sel), *hi = _mm_cmpeq_epi8(_mm_and_si128(h, sel), sel);
}

/* Byte j of lo:hi = the set bits of s at or below bit j, for j in 0..31. */
static inline void prefix_counts_v(uint32_t s, __m128i *plo, __m128i *phi) {
    const __m128i one = _mm_set1_epi8(1);
    __m128i lo, hi;
    bits_to_bytes(s, &lo, &hi);
    lo = _mm_and_si128(lo, one), hi = _mm_and_si128(hi, one);
    lo = _mm_add_epi8(lo, _mm_slli_si128(lo, 1)), hi = _mm_add_epi8(hi, _mm_slli_si128(hi, 1));
    lo = _mm_add_epi8(lo, _mm_slli_si128(lo, 2)), hi = _mm_add_epi8(hi, _mm_slli_si128(hi, 2));
    lo = _mm_add_epi8(lo, _mm_slli_si128(lo, 4)), hi = _mm_add_epi8(hi, _mm_slli_si128(hi, 4));
    lo = _mm_add_epi8(lo, _mm_slli_si128(lo, 8)), hi = _mm_add_epi8(hi, _mm_slli_si128(hi, 8));
    __m128i carry = _mm_srli_si128(lo, 15); /* the low half's total, in byte 0 */
    carry = _mm_unpacklo_epi8(carry, carry);
    carry = _mm_shuffle_epi32(_mm_unpacklo_epi16(carry, carry), 0);
    *plo = lo, *phi = _mm_add_epi8(hi, carry);
}
#endif

/* out[j] = the set bits of s at or below bit j, for j in 0..31 (so out[31] counts them all). */
static inline void prefix_counts(uint32_t s, uint8_t *out) {
#if defined(__SSE2__)
    __m128i lo, hi;
    prefix_counts_v(s, &lo, &hi);
    _mm_storeu_si128((__m128i *)out, lo);
    _mm_storeu_si128((__m128i *)(out + 16), hi);
#else
    uint8_t c = 0;
    for (int j = 0; j < 32; j++) out[j] = c = (uint8_t)(c + (s >> j & 1));
#endif
}

/* Reads grid a[0] into x (colours, bg when a[3], the runs and their union-find of the cells in objects, of
 * colour x->only when that is set; x->h, w and the flags set):
 * 0, or -1 when the lazy path does not take the grid (shape outside 1..30, rows of unequal length, a cell not
 * an int 0..9), which the eager one then handles; -2 out of memory (rt's error set). */
int arc_objs_label(tdm_arc_rt *rt, objs_ctx *x, tdm_arc_val **a);

#endif
