/* lanes_kernels.c: the bit-parallel LCS of one pattern in every lane of a group of the lanes
 * (query_lanes.c). Wide groups hold sixteen lanes of 64 bits (STMs of up to 64 symbols), narrow ones 32
 * lanes of 32 bits (STMs of up to 32): either way a union slot's masks fill 128 bytes, two AVX-512
 * registers. Each kernel has a portable form (with an AVX-512 copy picked at load time) and, for CPUs with
 * AVX-512's vector popcount (Ice Lake on), a form in intrinsics that keeps the lanes in two registers from
 * the first step to the pass test, where the portable forms leave them on the stack and count them one by
 * one (a third faster a pattern in a microbenchmark on the development VM). Every form computes, lane by
 * lane, what tdm_seq_lcsq_run computes for that lane's query alone. */
#include "seq/seq_internal.h"

#include <stdint.h>

#if TDM_SEQ_AVX512
#define LANES_CLONES __attribute__((target_clones("arch=x86-64-v4", "default")))
#include <immintrin.h>
#else
#define LANES_CLONES
#endif

int tdm_seq_portable_kernels;

LANES_CLONES static uint32_t wide_lcs(const void *restrict masks, const uint32_t *restrict slots, size_t k,
                                      const void *restrict live, const uint8_t *restrict need, uint32_t *restrict lcs) {
    const uint64_t *restrict mk = masks, *restrict lv = live;
    uint64_t v[16];
    for (int q = 0; q < 16; q++) v[q] = ~0ull;
    for (size_t t = 0; t < k; t++) {
        const uint64_t *restrict M = mk + (size_t)slots[t] * 16;
        for (int q = 0; q < 16; q++) v[q] = tdm_seq_lcs_step(v[q], M[q]);
    }
    uint32_t pass = 0;
    for (int q = 0; q < 16; q++) {
        lcs[q] = (uint32_t)__builtin_popcountll(~v[q] & lv[q]);
        pass |= (uint32_t)(lcs[q] >= need[q]) << q;
    }
    return pass;
}

/* tdm_seq_lcs_step on 32-bit words. */
static inline uint32_t step32(uint32_t v, uint32_t match) {
    uint32_t u = v & match;
    return (v + u) | (v - u);
}

LANES_CLONES static uint32_t narrow_lcs(const void *restrict masks, const uint32_t *restrict slots, size_t k,
                                        const void *restrict live, const uint8_t *restrict need, uint32_t *restrict lcs) {
    const uint32_t *restrict mk = masks, *restrict lv = live;
    uint32_t v[32];
    for (int q = 0; q < 32; q++) v[q] = ~0u;
    for (size_t t = 0; t < k; t++) {
        const uint32_t *restrict M = mk + (size_t)slots[t] * 32;
        for (int q = 0; q < 32; q++) v[q] = step32(v[q], M[q]);
    }
    uint32_t pass = 0;
    for (int q = 0; q < 32; q++) {
        lcs[q] = (uint32_t)__builtin_popcount(~v[q] & lv[q]);
        pass |= (uint32_t)(lcs[q] >= need[q]) << q;
    }
    return pass;
}

#if TDM_SEQ_AVX512
TDM_SEQ_AVX512_TARGET static uint32_t wide_lcs_pop(const void *restrict masks, const uint32_t *restrict slots,
                                                   size_t k, const void *restrict live, const uint8_t *restrict need,
                                                   uint32_t *restrict lcs) {
    const uint64_t *mk = masks, *lv = live;
    __m512i v0 = _mm512_set1_epi64(-1), v1 = v0;
    for (size_t t = 0; t < k; t++) { /* tdm_seq_lcs_step, eight lanes a register */
        const uint64_t *M = mk + (size_t)slots[t] * 16;
        __m512i m0 = _mm512_loadu_si512(M), m1 = _mm512_loadu_si512(M + 8);
        v0 = _mm512_or_si512(_mm512_add_epi64(v0, _mm512_and_si512(v0, m0)), _mm512_andnot_si512(m0, v0));
        v1 = _mm512_or_si512(_mm512_add_epi64(v1, _mm512_and_si512(v1, m1)), _mm512_andnot_si512(m1, v1));
    }
    __m512i c0 = _mm512_popcnt_epi64(_mm512_andnot_si512(v0, _mm512_loadu_si512(lv)));
    __m512i c1 = _mm512_popcnt_epi64(_mm512_andnot_si512(v1, _mm512_loadu_si512(lv + 8)));
    _mm256_storeu_si256((__m256i *)lcs, _mm512_cvtepi64_epi32(c0));
    _mm256_storeu_si256((__m256i *)(lcs + 8), _mm512_cvtepi64_epi32(c1));
    __mmask8 p0 = _mm512_cmpge_epu64_mask(c0, _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)need)));
    __mmask8 p1 = _mm512_cmpge_epu64_mask(c1, _mm512_cvtepu8_epi64(_mm_loadl_epi64((const __m128i *)(need + 8))));
    return (uint32_t)p0 | (uint32_t)p1 << 8;
}

TDM_SEQ_AVX512_TARGET static uint32_t narrow_lcs_pop(const void *restrict masks, const uint32_t *restrict slots,
                                                     size_t k, const void *restrict live, const uint8_t *restrict need,
                                                     uint32_t *restrict lcs) {
    const uint32_t *mk = masks, *lv = live;
    __m512i v0 = _mm512_set1_epi32(-1), v1 = v0;
    for (size_t t = 0; t < k; t++) { /* step32, sixteen lanes a register */
        const uint32_t *M = mk + (size_t)slots[t] * 32;
        __m512i m0 = _mm512_loadu_si512(M), m1 = _mm512_loadu_si512(M + 16);
        v0 = _mm512_or_si512(_mm512_add_epi32(v0, _mm512_and_si512(v0, m0)), _mm512_andnot_si512(m0, v0));
        v1 = _mm512_or_si512(_mm512_add_epi32(v1, _mm512_and_si512(v1, m1)), _mm512_andnot_si512(m1, v1));
    }
    __m512i c0 = _mm512_popcnt_epi32(_mm512_andnot_si512(v0, _mm512_loadu_si512(lv)));
    __m512i c1 = _mm512_popcnt_epi32(_mm512_andnot_si512(v1, _mm512_loadu_si512(lv + 16)));
    _mm512_storeu_si512(lcs, c0);
    _mm512_storeu_si512(lcs + 16, c1);
    __mmask16 p0 = _mm512_cmpge_epu32_mask(c0, _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)need)));
    __mmask16 p1 = _mm512_cmpge_epu32_mask(c1, _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(need + 16))));
    return (uint32_t)p0 | (uint32_t)p1 << 16;
}
#endif

int tdm_seq_vector_kernels(void) {
#if TDM_SEQ_AVX512
    return !tdm_seq_portable_kernels && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vpopcntdq");
#else
    return 0;
#endif
}

tdm_seq_lanes_fn *tdm_seq_lanes_kernel(int narrow) {
#if TDM_SEQ_AVX512
    if (tdm_seq_vector_kernels()) return narrow ? narrow_lcs_pop : wide_lcs_pop;
#endif
    return narrow ? narrow_lcs : wide_lcs;
}
