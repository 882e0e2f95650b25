/* lcs_groups.c: the LCS of a one-word query (at most 64 symbols) against many stored patterns in one
 * call. One pattern's bit-parallel step is a chain of three dependent operations per symbol, which leaves
 * most of a core idle; here the patterns are grouped by length and four of a length step together, four
 * independent chains, and each symbol goes from the store through the query's byte map to its match mask
 * with no list of common slots in between (an absent symbol's mask is 0, a step that changes nothing).
 * On CPUs with AVX-512's vector popcount, sixteen patterns of a length step together: their slot bytes
 * are transposed sixteen steps at a time, and each step looks the sixteen masks up in registers
 * (vpermi2d). For a query of at most 32 symbols the lanes are 32 bits, one register; for 33-64 symbols
 * they are 64 bits, two registers, each mask looked up as two halves. */
#include "seq/seq_internal.h"

#include <string.h>

#if TDM_SEQ_AVX512
#include <immintrin.h>
#endif
#define PAD 16 /* readable bytes past the last row: the sixteen-pattern form reads sixteen steps at a time */

/* One pattern of n symbols, from the store. */
static uint8_t lcs_ids(const tdm_seq_lcs_many_in *in, const uint32_t *a, size_t n) {
    const uint8_t *map = in->map8;
    const uint64_t *mask = in->mask1;
    uint64_t v = ~0ull;
    for (size_t t = 0; t < n; t++) v = tdm_seq_lcs_step(v, mask[map[a[t]]]);
    return (uint8_t)tdm_seq_lcs_of(v, in->live);
}

/* One pattern given as its n slot bytes. */
static inline uint8_t lcs_bytes(const uint64_t *mask, uint64_t live, const uint8_t *b, size_t n) {
    uint64_t v = ~0ull;
    for (size_t t = 0; t < n; t++) v = tdm_seq_lcs_step(v, mask[b[t]]);
    return (uint8_t)tdm_seq_lcs_of(v, live);
}

/* Four patterns of the same length n, given as their slot bytes, stepped together. */
static inline void lcs_four(const uint64_t *mask, uint64_t live, const uint8_t *b0, const uint8_t *b1, const uint8_t *b2,
                            const uint8_t *b3, size_t n, uint8_t *c0, uint8_t *c1, uint8_t *c2, uint8_t *c3) {
    uint64_t v0 = ~0ull, v1 = ~0ull, v2 = ~0ull, v3 = ~0ull;
    for (size_t t = 0; t < n; t++) {
        v0 = tdm_seq_lcs_step(v0, mask[b0[t]]), v1 = tdm_seq_lcs_step(v1, mask[b1[t]]);
        v2 = tdm_seq_lcs_step(v2, mask[b2[t]]), v3 = tdm_seq_lcs_step(v3, mask[b3[t]]);
    }
    *c0 = (uint8_t)tdm_seq_lcs_of(v0, live), *c1 = (uint8_t)tdm_seq_lcs_of(v1, live);
    *c2 = (uint8_t)tdm_seq_lcs_of(v2, live), *c3 = (uint8_t)tdm_seq_lcs_of(v3, live);
}

#if TDM_SEQ_AVX512
/* x[s] = byte t + s of the sixteen rows buf + row[0..15], for s < 16: a 16 x 16 byte transpose. */
TDM_SEQ_AVX512_TARGET static inline void transpose16(const uint8_t *buf, const uint32_t *row, size_t t, __m128i *x) {
    __m128i y[16];
    for (int i = 0; i < 16; i++) x[i] = _mm_loadu_si128((const __m128i *)(buf + row[i] + t));
    for (int i = 0; i < 8; i++)
        y[2 * i] = _mm_unpacklo_epi8(x[2 * i], x[2 * i + 1]), y[2 * i + 1] = _mm_unpackhi_epi8(x[2 * i], x[2 * i + 1]);
    for (int i = 0; i < 4; i++) {
        x[4 * i] = _mm_unpacklo_epi16(y[4 * i], y[4 * i + 2]), x[4 * i + 1] = _mm_unpackhi_epi16(y[4 * i], y[4 * i + 2]);
        x[4 * i + 2] = _mm_unpacklo_epi16(y[4 * i + 1], y[4 * i + 3]);
        x[4 * i + 3] = _mm_unpackhi_epi16(y[4 * i + 1], y[4 * i + 3]);
    }
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++) {
            y[8 * i + 2 * k] = _mm_unpacklo_epi32(x[8 * i + k], x[8 * i + 4 + k]);
            y[8 * i + 2 * k + 1] = _mm_unpackhi_epi32(x[8 * i + k], x[8 * i + 4 + k]);
        }
    for (int k = 0; k < 8; k++) x[2 * k] = _mm_unpacklo_epi64(y[k], y[8 + k]), x[2 * k + 1] = _mm_unpackhi_epi64(y[k], y[8 + k]);
}

/* Sixteen patterns of the same length n, at buf + row[0..15], for a query of at most 32 symbols: mask32[s]
 * is slot s + 1's mask (slots 1..32), live the query's bits; c[i] receives pattern i's LCS. */
TDM_SEQ_AVX512_TARGET static void
lcs_sixteen(const uint32_t *mask32, uint32_t live, const uint8_t *buf, const uint32_t *row, size_t n, uint8_t *c) {
    __m512i t0 = _mm512_loadu_si512(mask32), t1 = _mm512_loadu_si512(mask32 + 16), one = _mm512_set1_epi32(1);
    __m512i v = _mm512_set1_epi32(-1);
    for (size_t t = 0; t < n; t += 16) {
        __m128i x[16];
        transpose16(buf, row, t, x);
        size_t steps = n - t < 16 ? n - t : 16;
        for (size_t s = 0; s < steps; s++) { /* tdm_seq_lcs_step on sixteen 32-bit lanes */
            __m512i sl = _mm512_cvtepu8_epi32(x[s]);
            __m512i m = _mm512_maskz_permutex2var_epi32(_mm512_test_epi32_mask(sl, sl), t0, _mm512_sub_epi32(sl, one), t1);
            __m512i u = _mm512_and_si512(v, m);
            v = _mm512_or_si512(_mm512_add_epi32(v, u), _mm512_sub_epi32(v, u));
        }
    }
    __m512i cnt = _mm512_popcnt_epi32(_mm512_andnot_si512(v, _mm512_set1_epi32((int)live)));
    _mm_storeu_si128((__m128i *)c, _mm512_cvtepi32_epi8(cnt));
}

/* The same for a query of 33-64 symbols, in 64-bit lanes: a step looks each pattern's mask up as two
 * 32-bit halves (lo32, hi32: slot s + 1's at s, slots 1..64) from four registers each, and pairs the
 * halves into eight 64-bit lanes a register (patterns 0, 1, 4, 5, 8, 9, 12, 13 in one, the others in the
 * second, the order unpacking gives). */
TDM_SEQ_AVX512_TARGET static void
lcs_sixteen64(const uint32_t *lo32, const uint32_t *hi32, uint64_t live, const uint8_t *buf, const uint32_t *row, size_t n,
              uint8_t *c) {
    __m512i l0 = _mm512_loadu_si512(lo32), l1 = _mm512_loadu_si512(lo32 + 16), l2 = _mm512_loadu_si512(lo32 + 32),
            l3 = _mm512_loadu_si512(lo32 + 48), h0 = _mm512_loadu_si512(hi32), h1 = _mm512_loadu_si512(hi32 + 16),
            h2 = _mm512_loadu_si512(hi32 + 32), h3 = _mm512_loadu_si512(hi32 + 48), one = _mm512_set1_epi32(1),
            thirtytwo = _mm512_set1_epi32(32);
    __m512i v0 = _mm512_set1_epi64(-1), v1 = v0;
    for (size_t t = 0; t < n; t += 16) {
        __m128i x[16];
        transpose16(buf, row, t, x);
        size_t steps = n - t < 16 ? n - t : 16;
        for (size_t s = 0; s < steps; s++) {
            __m512i sl = _mm512_cvtepu8_epi32(x[s]), at = _mm512_sub_epi32(sl, one);
            __mmask16 in = _mm512_test_epi32_mask(sl, sl), low = _mm512_cmplt_epu32_mask(at, thirtytwo);
            __m512i lo = _mm512_maskz_permutex2var_epi32(in & low, l0, at, l1);
            __m512i hi = _mm512_maskz_permutex2var_epi32(in & low, h0, at, h1);
            lo = _mm512_mask_mov_epi32(lo, in & ~low, _mm512_permutex2var_epi32(l2, at, l3));
            hi = _mm512_mask_mov_epi32(hi, in & ~low, _mm512_permutex2var_epi32(h2, at, h3));
            __m512i m0 = _mm512_unpacklo_epi32(lo, hi), m1 = _mm512_unpackhi_epi32(lo, hi);
            __m512i u0 = _mm512_and_si512(v0, m0), u1 = _mm512_and_si512(v1, m1);
            v0 = _mm512_or_si512(_mm512_add_epi64(v0, u0), _mm512_sub_epi64(v0, u0));
            v1 = _mm512_or_si512(_mm512_add_epi64(v1, u1), _mm512_sub_epi64(v1, u1));
        }
    }
    __m512i lv = _mm512_set1_epi64((long long)live);
    uint8_t c0[16], c1[16];
    _mm_storeu_si128((__m128i *)c0, _mm512_cvtepi64_epi8(_mm512_popcnt_epi64(_mm512_andnot_si512(v0, lv))));
    _mm_storeu_si128((__m128i *)c1, _mm512_cvtepi64_epi8(_mm512_popcnt_epi64(_mm512_andnot_si512(v1, lv))));
    for (int j = 0; j < 4; j++) /* 128-bit lane j held patterns 4j, 4j + 1 (first register), 4j + 2, 4j + 3 */
        c[4 * j] = c0[2 * j], c[4 * j + 1] = c0[2 * j + 1], c[4 * j + 2] = c1[2 * j], c[4 * j + 3] = c1[2 * j + 1];
}
#endif

/* out[x] = map[a[x]] for x < n: a loop of its own, so that its pointers stay in registers. */
__attribute__((noinline)) static void map_bytes(const uint32_t *restrict a, uint64_t n, const uint8_t *restrict map,
                                                uint8_t *restrict out) {
    uint64_t x = 0;
    for (; x + 4 <= n; x += 4) {
        uint8_t b0 = map[a[x]], b1 = map[a[x + 1]], b2 = map[a[x + 2]], b3 = map[a[x + 3]];
        out[x] = b0, out[x + 1] = b1, out[x + 2] = b2, out[x + 3] = b3;
    }
    for (; x < n; x++) out[x] = map[a[x]];
}

#define LONG (TDM_SEQ_GROUP_MAX + 1) /* the class of patterns too long to group */

void tdm_seq_lcs_many_free(tdm_seq_lcs_many_scratch *sc) {
    tdm_free(sc->ord);
    tdm_free(sc->row);
    tdm_free(sc->buf);
    memset(sc, 0, sizeof *sc);
}

int tdm_seq_lcs_many(const tdm_seq_lcs_many_in *in, const uint32_t *ids, size_t n, uint8_t *cnt, tdm_seq_lcs_many_scratch *sc) {
    if (!n) return 0;
    const uint32_t *arena = in->arena;
    const uint64_t *off = in->off;
    const uint8_t *restrict map = in->map8;
    /* Pass 1, over the offsets: how many patterns of each length, and how many symbols are grouped. */
    uint32_t count[LONG + 1] = {0}, pos[LONG + 1];
    uint64_t grouped = 0, lo = UINT64_MAX, hi = 0; /* the stretch of store the ids span, in any order */
    for (size_t i = 0; i < n; i++) {
        uint64_t o = off[ids[i]], len = off[ids[i] + 1] - o;
        count[len <= TDM_SEQ_GROUP_MAX ? len : LONG]++;
        grouped += len <= TDM_SEQ_GROUP_MAX ? len : 0;
        lo = o < lo ? o : lo, hi = o + len > hi ? o + len : hi;
    }
    uint32_t at = 0;
    for (size_t l = 0; l <= LONG; l++) pos[l] = at, at += count[l];
    /* Dense ids (their symbols at least half of the stretch of store they span): the whole stretch is
     * mapped in one loop, with no branch per pattern; otherwise each grouped pattern's symbols are mapped
     * on their own. Either way each pattern gets a row of slot bytes. */
    uint64_t span = hi - lo;
    int dense = span <= 2 * grouped;
    size_t bytes = dense ? span : grouped;
    if ((n > sc->cap_ord && (tdm_grow((void **)&sc->ord, &sc->cap_ord, n, sizeof *sc->ord) ||
                             tdm_grow((void **)&sc->row, &sc->cap_row, n, sizeof *sc->row))) ||
        (bytes + PAD > sc->cap_buf && tdm_grow((void **)&sc->buf, &sc->cap_buf, bytes + PAD, 1)))
        return -1;
    uint8_t *restrict buf = sc->buf;
    if (dense) map_bytes(arena + lo, span, map, buf);
    memset(buf + bytes, 0, PAD);
    /* Pass 2, in id order: each position's place in its length group, and its row. */
    uint32_t fill[LONG + 1];
    memcpy(fill, pos, sizeof fill);
    size_t used = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t o = off[ids[i]], len = off[ids[i] + 1] - o;
        size_t l = len <= TDM_SEQ_GROUP_MAX ? len : LONG;
        uint32_t k = fill[l]++;
        sc->ord[k] = (uint32_t)i;
        if (l == LONG) continue;
        if (dense) {
            sc->row[k] = (uint32_t)(o - lo);
        } else {
            const uint32_t *restrict a = arena + o;
            for (size_t t = 0; t < l; t++) buf[used + t] = map[a[t]];
            sc->row[k] = (uint32_t)used;
            used += l;
        }
    }
    /* Pass 3, group by group: sixteen or four patterns of a length at a time, a loop whose length never
     * changes. */
    const uint32_t *ord = sc->ord, *row = sc->row;
#if TDM_SEQ_AVX512
    uint32_t lo32[64], hi32[64]; /* slot s + 1's mask, its two halves (the sixteen-pattern forms) */
    int sixteen = tdm_seq_vector_kernels(), wide = (in->live >> 32) != 0;
    for (int s = 0; sixteen && s < 64; s++) lo32[s] = (uint32_t)in->mask1[s + 1], hi32[s] = (uint32_t)(in->mask1[s + 1] >> 32);
#endif
    for (size_t l = 0; l <= TDM_SEQ_GROUP_MAX; l++) {
        uint32_t j = pos[l], end = pos[l] + count[l];
#if TDM_SEQ_AVX512
        for (; sixteen && j + 16 <= end; j += 16) {
            uint8_t c[16];
            if (wide) lcs_sixteen64(lo32, hi32, in->live, buf, row + j, l, c);
            else lcs_sixteen(lo32, (uint32_t)in->live, buf, row + j, l, c);
            for (int i = 0; i < 16; i++) cnt[ord[j + i]] = c[i];
        }
#endif
        for (; j + 4 <= end; j += 4)
            lcs_four(in->mask1, in->live, buf + row[j], buf + row[j + 1], buf + row[j + 2], buf + row[j + 3], l, &cnt[ord[j]],
                     &cnt[ord[j + 1]], &cnt[ord[j + 2]], &cnt[ord[j + 3]]);
        for (; j < end; j++) cnt[ord[j]] = lcs_bytes(in->mask1, in->live, buf + row[j], l);
    }
    for (uint32_t j = pos[LONG]; j < pos[LONG] + count[LONG]; j++) {
        uint32_t id = ids[ord[j]];
        cnt[ord[j]] = lcs_ids(in, arena + off[id], (size_t)(off[id + 1] - off[id]));
    }
    return 0;
}
