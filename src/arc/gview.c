/* gview.c: grids as bytes (arc_gview). A grid is a tuple of row tuples of int values, and every reader
 * that scans its cells (objects(), ofcolor, palette, mostcolor, the dense copies of arc_read_grid) would
 * otherwise chase 900 pointers for a 30x30 one, again for each read. The input grid's bytes come from
 * the ints it was made from (tdm_arc_grid_new); a grid that fill, paint, replace or canvas makes gets
 * them written with its cells (prim_paint.c); another grid's come from its cell addresses (interned ints
 * 0..9 are told by address) on its first read. The runtime keeps the last few views. */
#include "arc_device.h"
#include "arc_internal.h"

#include <string.h>
#if defined(ARC_VEC_ADDR) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* out[k] = c[k] for n ints: 1 when all are colours 0..9 (out then holds them), else 0. */
static int int_bytes(uint8_t *out, const int *c, size_t n) {
    size_t k = 0;
    int bad = 0;
#if defined(ARC_VEC_ADDR)
    /* unsigned c > 9 as a signed compare after flipping the sign bits; packs keep 0..9 as they are */
    const __m128i sign = _mm_set1_epi32(INT32_MIN), nine = _mm_set1_epi32(INT32_MIN + 9);
    __m128i over = _mm_setzero_si128();
    for (; k + 16 <= n; k += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(c + k)), b = _mm_loadu_si128((const __m128i *)(c + k + 4));
        __m128i d = _mm_loadu_si128((const __m128i *)(c + k + 8)), e = _mm_loadu_si128((const __m128i *)(c + k + 12));
        over = _mm_or_si128(over, _mm_or_si128(_mm_cmpgt_epi32(_mm_xor_si128(a, sign), nine),
                                               _mm_cmpgt_epi32(_mm_xor_si128(b, sign), nine)));
        over = _mm_or_si128(over, _mm_or_si128(_mm_cmpgt_epi32(_mm_xor_si128(d, sign), nine),
                                               _mm_cmpgt_epi32(_mm_xor_si128(e, sign), nine)));
        _mm_storeu_si128((__m128i *)(out + k), _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(d, e)));
    }
    bad = _mm_movemask_epi8(over) != 0;
#endif
    for (; k < n; k++) {
        bad |= (unsigned)c[k] > 9u;
        out[k] = (uint8_t)c[k];
    }
    return !bad;
}

/* out[j] = the colour of cells[j] for n cells: 1 when all are the interned ints 0..9, else 0. */
static int cell_bytes(uint8_t *out, tdm_arc_val *const *cells, size_t n) {
    const uintptr_t zero = (uintptr_t)arc_int_zero;
    size_t j = 0;
    int bad = 0;
#if defined(ARC_VEC_ADDR)
    __m128i in = _mm_set1_epi32(-1);
    for (; j + 4 <= n; j += 4) {
        /* a colour when the address lies in the ten values from &0 */
        __m128i k = arc_addr_index4(cells + j, zero, ARC_COLOURS_N * sizeof(tdm_arc_val), &in);
        k = _mm_packus_epi16(_mm_packs_epi32(k, k), k); /* bytes 0..3: the four colours (when they are) */
        uint32_t four = (uint32_t)_mm_cvtsi128_si32(k);
        memcpy(out + j, &four, 4);
    }
    bad = _mm_movemask_epi8(in) != 0xffff;
#endif
    for (; j < n; j++) {
        int c = arc_interned_colour(cells[j]);
        bad |= c < 0;
        out[j] = (uint8_t)c;
    }
    return !bad;
}

/* Entry 0 holds the input grid's view (most solvers read the input again after making other grids); the
 * others take turns. */
static void keep(tdm_arc_rt *rt, const tdm_arc_val *g, const arc_gview *v, int input) {
    int k = input ? 0 : 1 + (int)(rt->gview_next++ % (ARC_GVIEWS - 1));
    rt->gview_of[k] = g, rt->gview[k] = *v;
}

uint8_t *arc_grid_view_bytes(tdm_arc_rt *rt, int h, int w) {
    size_t n = (size_t)h * (size_t)w;
    uint8_t *c = arc_alloc(rt, n + 32);
    if (c) memset(c + n, 0xff, 32);
    return c;
}

/* The input's view (entry 0: its cells lie back to back from its first row's, tdm_arc_grid_new's layout):
 * its cell count, and in *base the address of its first cell's item; 0 when rt keeps none. */
static inline uintptr_t input_cells(const tdm_arc_rt *rt, uintptr_t *base) {
    const tdm_arc_val *in = rt->gview_of[0];
    if (!in || !rt->gview[0].c) return 0;
    *base = (uintptr_t)in->u.items[0]->u.items;
    return (uintptr_t)rt->gview[0].h * (uintptr_t)rt->gview[0].w;
}

/* Where row r's cells start among the input's n (from base) when r is a listed tuple of w of them, else
 * UINTPTR_MAX (unsigned: a row before the first wraps). */
static inline uintptr_t input_row_at(const tdm_arc_val *r, uintptr_t w, uintptr_t base, uintptr_t n) {
    uintptr_t at = arc_is_tuple(r) && !arc_tuple_is_lazy(r) && r->n == w ? ((uintptr_t)r->u.items - base) / sizeof(tdm_arc_val *) : UINTPTR_MAX;
    return n >= w && at <= n - w ? at : UINTPTR_MAX;
}

int arc_grid_view_make(tdm_arc_rt *rt, const tdm_arc_val *g, arc_gview *v) {
    arc_gview x = {NULL, 0, 0};
    const tdm_arc_val *r0 = arc_is_tuple(g) && g->n && g->n <= ARC_SLOT ? g->u.items[0] : NULL;
    int h = r0 ? (int)g->n : 0, w = r0 && arc_is_tuple(r0) && r0->n <= ARC_SLOT ? (int)r0->n : 0;
    uint8_t *c = w ? arc_grid_view_bytes(rt, h, w) : NULL;
    if (w && !c) return -1;
    /* a row that is a run of the input's cells (a crop's, a split's: arc_grid_input_rows) is copied from
       the input's view, 16 or 32 bytes (into the next row's place, written after it, or the
       slack, set again below); any other row is read cell by cell */
    uintptr_t base = 0, n = input_cells(rt, &base);
    for (int i = 0; c && i < h; i++) {
        const tdm_arc_val *r = g->u.items[i];
        uintptr_t at = input_row_at(r, (uintptr_t)w, base, n);
        if (at != UINTPTR_MAX && w <= 16) memcpy(c + (size_t)i * w, rt->gview[0].c + at, 16);
        else if (at != UINTPTR_MAX) memcpy(c + (size_t)i * w, rt->gview[0].c + at, 32);
        else if (!arc_is_tuple(r) || (int)r->n != w || !cell_bytes(c + (size_t)i * w, r->u.items, (size_t)w)) c = NULL;
    }
    if (c) memset(c + (size_t)h * w, 0xff, 32);
    if (c) x.c = c, x.h = h, x.w = w;
    keep(rt, g, &x, 0); /* not a view: kept too, so that the next reader does not try again */
    *v = x;
    return c != NULL;
}

int arc_grid_view_ints(tdm_arc_rt *rt, const tdm_arc_val *g, int h, int w, const int *cells) {
    if (h < 1 || w < 1 || h > ARC_SLOT || w > ARC_SLOT) return 0;
    uint8_t *c = arc_grid_view_bytes(rt, h, w);
    if (!c) return -1;
    if (!int_bytes(c, cells, (size_t)h * (size_t)w)) return 0; /* the bytes stay in the arena, unused */
    arc_gview x = {c, h, w};
    keep(rt, g, &x, 1);
    return 1;
}

#if defined(ARC_VEC_ADDR)
/* out[0..3] = the four bytes c[0..3] as ints. */
static inline void four_ints(int *out, const uint8_t *c) {
    const __m128i z = _mm_setzero_si128();
    uint32_t four;
    memcpy(&four, c, 4);
    _mm_storeu_si128((__m128i *)out, _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128((int)four), z), z));
}

/* out[0..7] = c[0..7] as ints. */
static inline void eight_ints(int *out, const uint8_t *c) {
    const __m128i z = _mm_setzero_si128();
    __m128i b = _mm_unpacklo_epi8(_mm_loadl_epi64((const __m128i *)c), z);
    _mm_storeu_si128((__m128i *)out, _mm_unpacklo_epi16(b, z));
    _mm_storeu_si128((__m128i *)(out + 4), _mm_unpackhi_epi16(b, z));
}
#endif

int arc_grid_input_rows(const tdm_arc_rt *rt, const tdm_arc_val *g, int *cells) {
    const arc_gview *v = &rt->gview[0];
    uintptr_t base = 0, n = input_cells(rt, &base);
    if (!n || !arc_is_tuple(g) || !g->n || !arc_is_tuple(g->u.items[0])) return 0;
    uint32_t w = g->u.items[0]->n;
    if (!w || w > n) return 0;
    for (uint32_t i = 0; i < g->n; i++) {
        uintptr_t at = input_row_at(g->u.items[i], w, base, n);
        if (at == UINTPTR_MAX) return 0; /* cells partly written */
#if defined(ARC_VEC_ADDR)
        if (w <= 16) { /* 16 bytes read (the view's slack covers it), 16 ints written (the next row's after) */
            eight_ints(cells + (size_t)i * w, v->c + at), eight_ints(cells + (size_t)i * w + 8, v->c + at + 8);
            continue;
        }
#endif
        arc_bytes_to_ints(cells + (size_t)i * w, v->c + at, w);
    }
    return 1;
}

int arc_grid_view_kept(tdm_arc_rt *rt, const tdm_arc_val *g, arc_gview *v) {
    if (arc_grid_lazy_view(g, v)) return 1;
    const arc_gview *k = arc_defer(rt) ? arc_grid_view_entry(rt, g) : NULL;
    if (!k || !k->c) return 0;
    *v = *k;
    return 1;
}

const uint32_t *arc_grid_view_counts(tdm_arc_rt *rt, const tdm_arc_val *g, const arc_gview *v) {
    if (rt->counts_of != g) arc_colour_counts(v->c, (uint32_t)(v->h * v->w), rt->counts), rt->counts_of = g;
    return rt->counts;
}

uint8_t *arc_grid_view_copy(tdm_arc_rt *rt, const arc_gview *v) {
    uint8_t *c = arc_grid_view_bytes(rt, v->h, v->w);
    if (c) memcpy(c, v->c, (size_t)v->h * (size_t)v->w);
    return c;
}

void arc_grid_view_keep(tdm_arc_rt *rt, const tdm_arc_val *g, const uint8_t *c, int h, int w) {
    arc_gview x = {c, h, w};
    keep(rt, g, &x, 0);
}

void arc_grid_view_keep_input(tdm_arc_rt *rt, const tdm_arc_val *g, const uint8_t *c, int h, int w) {
    arc_gview x = {c, h, w};
    keep(rt, g, &x, 1);
}

#if defined(ARC_VEC_ADDR) && defined(__GNUC__)
/* arc_colour_counts' vector part with 32-byte vectors, for CPUs with AVX2 (a 30x30 grid: half the
 * instructions of the 16-byte form): the counts of the cells before the returned index added to count. */
__attribute__((target("avx2"))) static uint32_t counts_avx2(const uint8_t *c, uint32_t n, uint32_t *count) {
    uint32_t whole = n / 32 * 32; /* a byte counter per lane: at most 900 / 32 = 28 */
    for (int x0 = 0; x0 < ARC_COLOURS_N; x0 += 5) {
        __m256i acc[5], col[5];
        for (int x = 0; x < 5; x++) acc[x] = _mm256_setzero_si256(), col[x] = _mm256_set1_epi8((char)(x0 + x));
        for (uint32_t k = 0; k < whole; k += 32) {
            __m256i b = _mm256_loadu_si256((const __m256i *)(c + k));
            for (int x = 0; x < 5; x++) acc[x] = _mm256_sub_epi8(acc[x], _mm256_cmpeq_epi8(b, col[x]));
        }
        for (int x = 0; x < 5; x++) {
            __m256i s = _mm256_sad_epu8(acc[x], _mm256_setzero_si256());
            count[x0 + x] += (uint32_t)(_mm256_extract_epi64(s, 0) + _mm256_extract_epi64(s, 1) + _mm256_extract_epi64(s, 2) +
                                        _mm256_extract_epi64(s, 3));
        }
    }
    return whole;
}
#endif

void arc_colour_counts(const uint8_t *c, uint32_t n, uint32_t *count) {
    for (int k = 0; k < ARC_COLOURS_N; k++) count[k] = 0;
    uint32_t k = 0;
#if defined(ARC_VEC_ADDR)
#if defined(__GNUC__)
    if (n >= 64 && !arc_bits_portable && __builtin_cpu_supports("avx2")) k = counts_avx2(c, n, count);
#endif
    /* per colour, a byte counter per lane (at most 900 / 16 = 57 cells each), summed at the end; five
       colours a pass, so that counters and colours stay in the 16 registers */
    uint32_t from = k, whole = from + (n - from) / 16 * 16;
    for (int x0 = 0; x0 < ARC_COLOURS_N && from < whole; x0 += 5) {
        __m128i acc[5], col[5];
        for (int x = 0; x < 5; x++) acc[x] = _mm_setzero_si128(), col[x] = _mm_set1_epi8((char)(x0 + x));
        for (k = from; k < whole; k += 16) {
            __m128i b = _mm_loadu_si128((const __m128i *)(c + k));
            for (int x = 0; x < 5; x++) acc[x] = _mm_sub_epi8(acc[x], _mm_cmpeq_epi8(b, col[x]));
        }
        for (int x = 0; x < 5; x++) {
            __m128i s = _mm_sad_epu8(acc[x], _mm_setzero_si128());
            count[x0 + x] += (uint32_t)_mm_cvtsi128_si32(s) + (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(s, 8));
        }
    }
    k = whole;
#endif
    for (; k < n; k++) count[c[k]]++;
}

void arc_colour_firsts(const uint8_t *c, uint32_t n, const uint32_t *count, uint32_t *first) {
    uint32_t pending = 0, k = 0; /* the colours present and not met yet, all found in one pass */
    for (int x = 0; x < ARC_COLOURS_N; x++) first[x] = UINT32_MAX, pending |= (uint32_t)(count[x] != 0) << x;
#if defined(ARC_VEC_ADDR)
    for (; pending && k + 16 <= n; k += 16) {
        __m128i b = _mm_loadu_si128((const __m128i *)(c + k));
        for (uint32_t p = pending; p; p &= p - 1) {
            int x = __builtin_ctz(p);
            uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(b, _mm_set1_epi8((char)x)));
            if (m) first[x] = k + (uint32_t)__builtin_ctz(m), pending &= ~(1u << x);
        }
    }
#endif
    for (; pending && k < n; k++)
        if (pending >> c[k] & 1) first[c[k]] = k, pending &= ~(1u << c[k]);
}

int arc_bytes_pick(const uint8_t *c, uint32_t n, int least) {
    uint32_t count[ARC_COLOURS_N];
    arc_colour_counts(c, n, count);
    return arc_bytes_pick_counted(c, n, count, least);
}

int arc_bytes_pick_counted(const uint8_t *c, uint32_t n, const uint32_t *count, int least) {
    uint32_t first[ARC_COLOURS_N];
    int best = arc_unique_best_count(count, least);
    if (best != -2) return best;
    arc_colour_firsts(c, n, count, first); /* a tie: the set's order decides, from the first cells */
    return arc_pick_colour_in_order(count, first, least);
}


#if defined(ARC_VEC_ADDR) && defined(__GNUC__)
/* arc_bytes_to_ints' whole 32s for CPUs with AVX2, eight bytes widened to eight ints by one instruction
 * (vpmovzxbd; the 16-byte form takes three unpacks for them): the index it stopped at. */
__attribute__((target("avx2"))) static size_t ints_avx2(int *out, const uint8_t *c, size_t n) {
    size_t k = 0;
    for (; k + 32 <= n; k += 32)
        for (int q = 0; q < 32; q += 8)
            _mm256_storeu_si256((__m256i *)(out + k + q), _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(c + k + q))));
    return k;
}
#endif

void arc_bytes_to_ints(int *out, const uint8_t *c, size_t n) {
    size_t k = 0;
#if defined(ARC_VEC_ADDR)
#if defined(__GNUC__)
    if (n >= 64 && !arc_bits_portable && __builtin_cpu_supports("avx2")) k = ints_avx2(out, c, n); /* an 8x8 grid up */
#endif
    /* 16 and 8 at a time, the last 8 again where n is not a multiple (the same values over the same ints): a
       grid's rows are most often narrower than 16, and a fixed number of stores beats a loop per cell */
    if (n >= 8) {
        for (; k + 16 <= n; k += 16) eight_ints(out + k, c + k), eight_ints(out + k + 8, c + k + 8);
        if (k + 8 <= n) eight_ints(out + k, c + k), k += 8;
        if (k < n) eight_ints(out + n - 8, c + n - 8);
        return;
    }
    if (n >= 4) { /* 4..7: the first four and the last four */
        four_ints(out, c), four_ints(out + n - 4, c + n - 4);
        return;
    }
#endif
    for (; k < n; k++) out[k] = c[k];
}
