/* seq_query.cu: one STM against the device-resident store, exactly as the CPU engine (src/seq/query.c).
 *
 * One kernel scores every pattern: each thread walks one pattern of a tile (seq_cuda.cuh), maps its
 * symbols onto the STM through a small hash table and runs the bit-parallel LCS (64 STM symbols per
 * word, register-resident up to 1024 symbols, any length beyond through global scratch). For difflib the
 * LCS is the exact upper bound (RO <= LCS) and only patterns it cannot rule out run CPython's
 * find_longest_match / get_matching_blocks (a dense dynamic programme per range, ties resolved as
 * CPython does: earliest i, then earliest j; the autojunk purge and the extension loops included).
 * Threshold queries keep the patterns whose count reaches the need table of their length (built by the
 * core with the CPU's own formulas). Top-k queries compute each pattern's LCS once, keep it per tile lane
 * and histogram it; lcs then keeps the bins from the one holding the k-th best up, reading the kept
 * counts (no second LCS). difflib histograms the LCS bound instead, runs the exact matching blocks only
 * for the patterns whose bound reaches the top bins (about 4k of them), and widens that set once if the
 * k-th best exact value falls below it, so a pattern left out can never beat the k-th. Kept rows are appended with warp-aggregated
 * atomics, ordered on the device by two stable CUB radix sorts (id ascending, then similarity
 * descending: the CPU's order), and only the result rows are copied back. Asked for, the kept rows also
 * carry their matching-block summaries (seq.h, tdm_seq_hit_blocks), computed in the scoring kernel by the
 * same matching-block search and moved through the sorts by row index.
 *
 * Similarities are the CPU's doubles: the same formulas in IEEE double, built with --fmad=false. */
#include "cuda/seq_cuda.cuh"

#include <cub/cub.cuh>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define H tdm_cuda_host_fns
#define NEVER UINT32_MAX
#define NBINS 4096
#define BLOCK 256
/* Device scratch that difflib and long STMs may take per query. */
#define SCRATCH_BUDGET (512ull << 20)

/* NEED: threshold query. Top-k: HIST computes and keeps every LCS and histograms its similarity (the
 * bound, for difflib); EXACT runs difflib where the bound's bin is in [lo, hi) and histograms the exact
 * values; PICK keeps the rows whose (kept) similarity reaches bin `bar`. */
enum { MODE_NEED = 0, MODE_HIST = 1, MODE_EXACT = 2, MODE_PICK = 3 };

typedef struct {
    const seq_tile *tiles;
    const uint32_t *ids, *lens;
    uint32_t *const *chunks;
    uint32_t ntiles;
    const uint32_t *hkeys, *hslot; /* STM symbol -> slot, open addressing, NO_ID = empty */
    uint32_t hmask;
    const uint64_t *masks;         /* per slot, `words` words: the STM positions holding it */
    uint32_t words;
    const uint32_t *need;
    uint32_t n_need;
    const uint32_t *stm, *stm_pop; /* stm_pop: autojunk's purged STM positions (STM as b), or NULL */
    uint32_t m;
    int metric, autojunk, stm_first, no_prefilter, mode, blocks;
    uint32_t limit, bar, lo, hi;
    const uint32_t *rank;     /* ranked rows (tdm_seq_dquery.rank): a kept row is the key rank << id_bits | id */
    uint32_t id_bits;
    uint32_t *cslot, *xslot;  /* top-k: per tile lane, the LCS count and the exact difflib count */
    uint32_t *cand;           /* difflib in two passes: the tile lanes whose LCS reaches the need */
    unsigned long long *pbits; /* one-word STMs, matcher: per thread (interleaved), a pattern's STM bits */
    unsigned long long ncand;
    uint32_t *out_id;
    unsigned long long *out_sim;
    tdm_seq_hit_blocks *out_blk; /* blocks: each kept row's matching-block summary, at the row's position */
    unsigned long long out_cap;
    unsigned long long *cnt; /* rows kept, length_pruned, lcs_pruned, scored */
    uint32_t *hist;
    uint32_t *scr;            /* difflib or blocks: per thread, row | stack | purge flags, interleaved by thread */
    unsigned long long *vscr; /* STMs over 1024 symbols: per thread, the LCS bit vector */
    unsigned long long stride; /* threads in the grid: the interleave of scr and vscr */
    uint32_t row_len, stack_len;
} qparams;

/* The CPU's formulas (src/seq/seq_internal.h), operation for operation. */
__device__ __forceinline__ double ratio_lcs(uint64_t L, uint64_t m, uint64_t n) {
    uint64_t t = m + n;
    return t ? ((2.0 * (double)L / (double)t) * 100.0) / 100.0 : 0.0;
}
__device__ __forceinline__ double ratio_difflib(uint64_t M, uint64_t m, uint64_t n) {
    uint64_t t = m + n;
    return t ? 2.0 * (double)M / (double)t : 1.0;
}
__device__ __forceinline__ double value(int metric, uint64_t c, uint64_t m, uint64_t n) {
    return metric == TDM_SEQ_DIFFLIB ? ratio_difflib(c, m, n) : ratio_lcs(c, m, n);
}
/* Monotone in sim (a power-of-two scale and a floor), so a bin bar never splits equal similarities. */
__device__ __forceinline__ uint32_t bin_of(double sim) {
    uint32_t b = (uint32_t)(sim * (double)NBINS);
    return b < NBINS ? b : NBINS - 1;
}

static __host__ __device__ __forceinline__ uint32_t hash32(uint32_t v) { return (uint32_t)(((uint64_t)v * 0x9E3779B97F4A7C15ull) >> 32); }

__device__ __forceinline__ int slot_of(const qparams &p, uint32_t v) {
    for (uint32_t i = hash32(v) & p.hmask;; i = (i + 1) & p.hmask) {
        uint32_t k = __ldg(&p.hkeys[i]);
        if (k == v) return (int)__ldg(&p.hslot[i]);
        if (k == NO_ID) return -1;
    }
}

/* Bit-parallel LCS (Hyyro): per matched symbol V = (V + (V & M)) | (V & ~M) over W words with carry;
 * the LCS is the number of zero bits. Bits above m never clear, so no final mask is needed. */
template <int W>
__device__ uint32_t lcs_regs(const qparams &p, const uint32_t *P, uint32_t stride, uint32_t n) {
    unsigned long long V[W];
#pragma unroll
    for (int w = 0; w < W; w++) V[w] = ~0ull;
    for (uint32_t t = 0; t < n; t++) {
        int s = slot_of(p, P[(size_t)t * stride]);
        if (s < 0) continue;
        const unsigned long long *M = (const unsigned long long *)p.masks + (size_t)s * W;
        unsigned long long carry = 0;
#pragma unroll
        for (int w = 0; w < W; w++) {
            unsigned long long mw = __ldg(&M[w]), v = V[w], t1 = v + (v & mw), c1 = t1 < v, s2 = t1 + carry;
            carry = c1 | (s2 < t1);
            V[w] = s2 | (v & ~mw);
        }
    }
    uint32_t L = 0;
#pragma unroll
    for (int w = 0; w < W; w++) L += __popcll(~V[w]);
    return L;
}

/* STMs of at most 64 symbols (one word): the hash table lives in shared memory with each slot's mask
 * beside its key (a symbol the STM lacks finds an empty slot and mask 0, which leaves V as it is), and
 * the pattern's symbols are read four at a time so their loads are in flight together. */
#define SH_SLOTS 128 /* the table of an STM of at most 64 symbols: 2m rounded up to a power of two */
__device__ __forceinline__ unsigned long long mask_sh(const uint32_t *key, const unsigned long long *mask, uint32_t hmask, uint32_t v) {
    for (uint32_t i = hash32(v) & hmask;; i = (i + 1) & hmask) {
        uint32_t k = key[i];
        if (k == v) return mask[i];
        if (k == NO_ID) return 0;
    }
}
__device__ __forceinline__ unsigned long long lcs_step(unsigned long long v, unsigned long long m) { return (v + (v & m)) | (v & ~m); }
__device__ uint32_t lcs_word(const uint32_t *key, const unsigned long long *mask, uint32_t hmask, const uint32_t *P, uint32_t stride, uint32_t n) {
    unsigned long long V = ~0ull;
    uint32_t t = 0;
    for (; t + 4 <= n; t += 4) {
        uint32_t a0 = P[(size_t)t * stride], a1 = P[(size_t)(t + 1) * stride], a2 = P[(size_t)(t + 2) * stride], a3 = P[(size_t)(t + 3) * stride];
        V = lcs_step(V, mask_sh(key, mask, hmask, a0));
        V = lcs_step(V, mask_sh(key, mask, hmask, a1));
        V = lcs_step(V, mask_sh(key, mask, hmask, a2));
        V = lcs_step(V, mask_sh(key, mask, hmask, a3));
    }
    for (; t < n; t++) V = lcs_step(V, mask_sh(key, mask, hmask, P[(size_t)t * stride]));
    return (uint32_t)__popcll(~V);
}

__device__ uint32_t lcs_scratch(const qparams &p, const uint32_t *P, uint32_t stride, uint32_t n, unsigned long long *V) {
    const uint32_t W = p.words;
    const unsigned long long S = p.stride;
    for (uint32_t w = 0; w < W; w++) V[w * S] = ~0ull;
    for (uint32_t t = 0; t < n; t++) {
        int s = slot_of(p, P[(size_t)t * stride]);
        if (s < 0) continue;
        const unsigned long long *M = (const unsigned long long *)p.masks + (size_t)s * W;
        unsigned long long carry = 0;
        for (uint32_t w = 0; w < W; w++) {
            unsigned long long mw = __ldg(&M[w]), v = V[w * S], t1 = v + (v & mw), c1 = t1 < v, s2 = t1 + carry;
            carry = c1 | (s2 < t1);
            V[w * S] = s2 | (v & ~mw);
        }
    }
    uint32_t L = 0;
    for (uint32_t w = 0; w < W; w++) L += __popcll(~V[w * S]);
    return L;
}

/* A sequence read with a stride: a pattern inside its tile, or the STM (stride 1). */
typedef struct {
    const uint32_t *p;
    uint32_t stride;
} seqacc;
__device__ __forceinline__ uint32_t at(seqacc s, uint32_t i) { return s.p[(size_t)i * s.stride]; }

typedef struct {
    uint32_t i, j, k;
} block3;

/* find_longest_match(alo, ahi, blo, bhi) with isjunk None. row[(j+1)*S] holds the length of the run of
 * equal elements ending at (i-1, j); a purged element of b (pop) never starts or continues a run, as
 * with its deleted b2j entry. The row is filled from the right so each cell still sees the previous row
 * at j-1; that reverses CPython's column order, so a later (smaller) j of the same row takes over an
 * equal best found earlier in that row, which is exactly CPython's "first j" among equals. */
__device__ block3 longest(seqacc a, seqacc b, seqacc pop, uint32_t *row, unsigned long long S, uint32_t alo,
                          uint32_t ahi, uint32_t blo, uint32_t bhi) {
    for (uint32_t j = blo; j <= bhi; j++) row[j * S] = 0;
    uint32_t best = 0, besti = alo, bestj = blo;
    for (uint32_t i = alo; i < ahi; i++) {
        uint32_t ai = at(a, i);
        int set = 0;
        for (uint32_t j = bhi; j-- > blo;) {
            uint32_t k = 0;
            if (at(b, j) == ai && !(pop.p && at(pop, j))) {
                k = row[j * S] + 1;
                if (k > best || (k == best && set)) {
                    best = k, besti = i + 1 - k, bestj = j + 1 - k, set = 1;
                }
            }
            row[(j + 1) * S] = k;
        }
    }
    /* CPython's first pair of extension loops (bjunk is empty, so they run over any equal elements,
     * which only purged ones can add); the junk pair never moves without junk. */
    while (besti > alo && bestj > blo && at(a, besti - 1) == at(b, bestj - 1)) besti--, bestj--, best++;
    while (besti + best < ahi && bestj + best < bhi && at(a, besti + best) == at(b, bestj + best)) best++;
    return block3{besti, bestj, best};
}

/* The block's shared copy of a one-word STM's table (lcs_word). */
typedef struct {
    const uint32_t *key;
    const unsigned long long *mask;
    uint32_t hmask;
} shtab;

/* The STM positions holding pattern element i (STMs of at most 64 symbols: one word per slot): looked up
 * once per pattern into pb (stride S) when the pattern is short enough, else at each use. */
#define PB_MAX 64
typedef struct {
    shtab t;
    seqacc a;
    const unsigned long long *pb;
    unsigned long long S;
} stmbits;
__device__ __forceinline__ unsigned long long stm_bits(const stmbits &b, uint32_t i) {
    return b.pb ? b.pb[i * b.S] : mask_sh(b.t.key, b.t.mask, b.t.hmask, at(b.a, i));
}

/* find_longest_match(alo, ahi, blo, bhi) for a = the pattern and b = an STM of at most 64 symbols (no
 * junk: autojunk needs 200), bit-parallel as the CPU's rows_blocks: bit j of E_k(i) = AND over t < k of
 * (the STM positions of a[i-t], within [blo, bhi)) << t says that a run of length >= k ends at (i, j).
 * Row by row, the deepest non-empty E_k(i) gives the longest run ending in row i; CPython keeps the first
 * (i, j), in row-then-column order, at which a run longer than the best so far ends: the first row whose
 * longest run beats the best, at the lowest bit of its deepest level. No extension loop can move a run that
 * is already the longest in its range. */
__device__ block3 longest_bits(const stmbits &p, uint32_t alo, uint32_t ahi, uint32_t blo, uint32_t bhi) {
    const unsigned long long inr = (bhi >= 64 ? ~0ull : (1ull << bhi) - 1) & ~((1ull << blo) - 1);
    uint32_t best = 0, besti = alo, bestj = blo;
    for (uint32_t i = alo; i < ahi; i++) {
        unsigned long long cur = stm_bits(p, i) & inr;
        if (!cur) continue;
        uint32_t k = 1;
        while (k < 64 && k <= i - alo) {
            unsigned long long nxt = cur & ((stm_bits(p, i - k) & inr) << k);
            if (!nxt) break;
            cur = nxt, k++;
        }
        if (k > best) best = k, besti = i + 1 - k, bestj = (uint32_t)__ffsll((long long)cur) - k; /* lowest end bit + 1 - k */
    }
    return block3{besti, bestj, best};
}

/* Sum of the sizes of get_matching_blocks(a, b): the work list of ranges, popped from the end as CPython
 * pops its list (the sum does not depend on the order, the blocks found do not either). With sum, also
 * the blocks' summary (seq.h, tdm_seq_hit_blocks): CPython sorts the blocks, so the first block is the one
 * of smallest i (blocks never share an i) and the last end the largest i + k, whatever order they are
 * found in. Its merge of adjacent blocks never fires with isjunk None (every block is extended over all
 * equal neighbours inside its range, so no other block can end where it starts or start where it ends):
 * the blocks found are the blocks returned, which the cross-backend tests check against the CPU's
 * merged list. */
__device__ uint32_t difflib_matches(const qparams &p, shtab sh, seqacc a, uint32_t la, seqacc b, uint32_t lb, seqacc pop,
                                    uint32_t *row, uint32_t *stack, unsigned long long *pbuf, tdm_seq_hit_blocks *sum, int bits) {
    const unsigned long long S = p.stride;
    uint32_t sp = 0, total = 0, nblk = 0, fi = UINT32_MAX, fj = 0, end = 0;
    stmbits sb = {sh, a, NULL, S};
    if (bits && pbuf && la <= PB_MAX) { /* each element's lookup once, not once per range and run step */
        for (uint32_t i = 0; i < la; i++) pbuf[i * S] = mask_sh(sh.key, sh.mask, sh.hmask, at(a, i));
        sb.pb = pbuf;
    }
#define PUSH(x0, x1, x2, x3) (stack[(4 * sp) * S] = (x0), stack[(4 * sp + 1) * S] = (x1), stack[(4 * sp + 2) * S] = (x2), stack[(4 * sp + 3) * S] = (x3), sp++)
    PUSH(0, la, 0, lb);
    while (sp) {
        sp--;
        uint32_t alo = stack[(4 * sp) * S], ahi = stack[(4 * sp + 1) * S], blo = stack[(4 * sp + 2) * S], bhi = stack[(4 * sp + 3) * S];
        block3 x = bits ? longest_bits(sb, alo, ahi, blo, bhi) : longest(a, b, pop, row, S, alo, ahi, blo, bhi);
        if (!x.k) continue;
        total += x.k;
        nblk++;
        if (x.i < fi) fi = x.i, fj = x.j;
        if (x.i + x.k > end) end = x.i + x.k;
        if (alo < x.i && blo < x.j) PUSH(alo, x.i, blo, x.j);
        if (x.i + x.k < ahi && x.j + x.k < bhi) PUSH(x.i + x.k, ahi, x.j + x.k, bhi);
    }
#undef PUSH
    if (sum) {
        uint32_t rep = 0; /* a_repeat: the symbol at fi seen last before it */
        if (nblk) {
            uint32_t v = at(a, fi);
            for (uint32_t t = fi; t-- > 0;)
                if (at(a, t) == v) {
                    rep = fi - t;
                    break;
                }
        }
        *sum = nblk ? tdm_seq_hit_blocks{total, nblk, fi, fj, end, rep} : tdm_seq_hit_blocks{0, 0, 0, 0, 0, 0};
    }
    return total;
}

/* difflib's matched count of a pattern P (n symbols, read with stride) and the STM in the query's order;
 * with the pattern as a (stm_first 0) sum (when not NULL) receives the blocks' summary too. */
__device__ uint32_t difflib_count(const qparams &p, shtab sh, const uint32_t *P, uint32_t stride, uint32_t n,
                                  unsigned long long tid, tdm_seq_hit_blocks *sum) {
    uint32_t *row = p.scr + tid, *stack = row + (unsigned long long)p.row_len * p.stride;
    seqacc pat = {P, stride}, stm = {p.stm, 1};
    if (!p.stm_first)
        return difflib_matches(p, sh, pat, n, stm, p.m, seqacc{p.stm_pop, 1}, row, stack, p.pbits ? p.pbits + tid : NULL, sum, p.words == 1);
    /* b is the pattern: CPython's popular purge applies to it when it has 200 or more elements. */
    seqacc pop = {NULL, 0};
    if (p.autojunk && n >= 200) {
        uint32_t *flags = stack + (unsigned long long)p.stack_len * p.stride, ntest = n / 100 + 1;
        for (uint32_t j = 0; j < n; j++) {
            uint32_t v = at(pat, j), c = 0;
            for (uint32_t q = 0; q < n; q++) c += at(pat, q) == v;
            flags[j * p.stride] = c > ntest;
        }
        pop = seqacc{flags, (uint32_t)p.stride};
    }
    return difflib_matches(p, sh, stm, p.m, pat, n, pop, row, stack, NULL, NULL, 0);
}

/* The summary of SequenceMatcher(None, P, STM, autojunk)'s blocks (tdm_seq_dquery.blocks), whatever the
 * metric and argument order of the query. */
__device__ tdm_seq_hit_blocks blocks_of(const qparams &p, shtab sh, const uint32_t *P, uint32_t stride, uint32_t n, unsigned long long tid) {
    uint32_t *row = p.scr + tid, *stack = row + (unsigned long long)p.row_len * p.stride;
    tdm_seq_hit_blocks sb;
    difflib_matches(p, sh, seqacc{P, stride}, n, seqacc{p.stm, 1}, p.m, seqacc{p.stm_pop, 1}, row, stack,
                    p.pbits ? p.pbits + tid : NULL, &sb, p.words == 1);
    return sb;
}

/* Appends the warp's passing rows (warp-aggregated: one atomic a warp): the key rank << id_bits | id for
 * ranked queries, else the id, the similarity's bits and, asked for, the blocks' summary. */
__device__ __forceinline__ void keep_row(const qparams &p, uint32_t lane, int pass, uint32_t id, uint32_t n, uint32_t count,
                                         double sim, const tdm_seq_hit_blocks &sb) {
    unsigned bal = __ballot_sync(0xffffffffu, pass);
    if (!bal) return;
    unsigned long long base = 0;
    if (lane == 0) base = atomicAdd(&p.cnt[0], (unsigned long long)__popc(bal));
    base = __shfl_sync(0xffffffffu, base, 0);
    if (!pass) return;
    unsigned long long pos = base + __popc(bal & ((1u << lane) - 1));
    if (pos >= p.out_cap) return; /* counted: the host grows the output and runs the pass again */
    if (p.rank) {
        p.out_sim[pos] = (unsigned long long)__ldg(&p.rank[(size_t)n * (p.m + 1) + count]) << p.id_bits | id;
    } else {
        p.out_id[pos] = id;
        p.out_sim[pos] = (unsigned long long)__double_as_longlong(sim);
        if (p.blocks) p.out_blk[pos] = sb;
    }
}

/* Loads a one-word STM's table into the block's shared memory (lcs_word). */
__device__ __forceinline__ void load_shtab(const qparams &p, uint32_t *key, unsigned long long *mask) {
    for (uint32_t i = threadIdx.x; i <= p.hmask; i += blockDim.x) {
        uint32_t k = p.hkeys[i];
        key[i] = k;
        mask[i] = k == NO_ID ? 0 : p.masks[p.hslot[i]];
    }
}

/* The commonest query alone, lcs over a threshold with a one-word STM and no summaries: the scoring
 * kernel's MODE_NEED path without the matcher, whose registers would halve the threads a multiprocessor
 * holds (this kernel fits 2,048: 8 blocks of 256), so more pattern reads are in flight. For difflib it
 * is the first of two passes: the tile lanes whose LCS (the bound) reaches the need are listed in
 * p.cand (counted in cnt[0]), and difflib_cand_kernel runs the matcher over that list only, every lane
 * of a warp busy. */
/* 8 blocks of 256 a multiprocessor where it holds 2,048 threads (sm_80, sm_90), 4 on sm_75 (1,024). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define LEAN_BLOCKS 4
#else
#define LEAN_BLOCKS 8
#endif
__global__ void __launch_bounds__(BLOCK, LEAN_BLOCKS) lcs_need_kernel(qparams p) {
    __shared__ uint32_t sh_key[SH_SLOTS];
    __shared__ unsigned long long sh_mask[SH_SLOTS];
    __shared__ unsigned long long sh_cnt[2];
    load_shtab(p, sh_key, sh_mask);
    if (threadIdx.x < 2) sh_cnt[threadIdx.x] = 0;
    __syncthreads();
    const uint32_t lane = threadIdx.x & 31;
    const unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t nwarps = (uint32_t)(p.stride >> 5);
    const tdm_seq_hit_blocks none = {0, 0, 0, 0, 0, 0};
    unsigned long long n_len = 0, n_scored = 0, n_lcs = 0;
    for (uint32_t t = (uint32_t)(tid >> 5); t < p.ntiles; t += nwarps) {
        const seq_tile tile = p.tiles[t];
        const size_t slot = (size_t)t * TILE + lane;
        uint32_t id = p.ids[slot], n = p.lens[slot], need = NEVER, count = 0;
        int take = lane < tile.width && id < p.limit, pass = 0;
        if (take) {
            need = n < p.n_need ? p.need[n] : NEVER;
            if (need == NEVER && !p.no_prefilter) n_len++, take = 0;
        }
        if (take) {
            count = lcs_word(sh_key, sh_mask, p.hmask, p.chunks[tile.chunk] + tile.off + lane, tile.width, n);
            n_scored++;
            pass = count >= need;
        }
        if (p.metric == TDM_SEQ_LCS) {
            keep_row(p, lane, pass, id, n, count, pass ? ratio_lcs(count, p.m, n) : 0.0, none);
            continue;
        }
        n_lcs += take && !pass; /* difflib: the LCS bound ruled it out */
        unsigned bal = __ballot_sync(0xffffffffu, pass);
        if (!bal) continue;
        unsigned long long base = 0;
        if (lane == 0) base = atomicAdd(&p.cnt[0], (unsigned long long)__popc(bal));
        base = __shfl_sync(0xffffffffu, base, 0);
        unsigned long long pos = base + __popc(bal & ((1u << lane) - 1));
        if (pass && pos < p.out_cap) p.cand[pos] = (uint32_t)slot;
    }
    if (n_len) atomicAdd(&sh_cnt[0], n_len);
    if (n_scored && p.metric == TDM_SEQ_LCS) atomicAdd(&sh_cnt[1], n_scored);
    if (n_lcs) atomicAdd(&sh_cnt[1], n_lcs);
    __syncthreads();
    if (threadIdx.x == 0) { /* difflib's exact count (scored) is the second pass's */
        if (sh_cnt[0]) atomicAdd(&p.cnt[1], sh_cnt[0]);
        if (sh_cnt[1]) atomicAdd(&p.cnt[p.metric == TDM_SEQ_LCS ? 3 : 2], sh_cnt[1]);
    }
}

/* The second pass of a difflib threshold query with a one-word STM (lcs_need_kernel listed the
 * candidates): the exact matching blocks for each listed tile lane, its row kept when the matched
 * count reaches the need. */
__global__ void __launch_bounds__(BLOCK) difflib_cand_kernel(qparams p) {
    __shared__ uint32_t sh_key[SH_SLOTS];
    __shared__ unsigned long long sh_mask[SH_SLOTS];
    load_shtab(p, sh_key, sh_mask);
    __syncthreads();
    const shtab sh = {sh_key, sh_mask, p.hmask};
    const uint32_t lane = threadIdx.x & 31;
    const unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const tdm_seq_hit_blocks none = {0, 0, 0, 0, 0, 0};
    for (unsigned long long c0 = tid - lane; c0 < p.ncand; c0 += p.stride) { /* a warp's 32 candidates at a time */
        unsigned long long c = c0 + lane;
        uint32_t id = 0, n = 0, count = 0;
        int pass = 0;
        if (c < p.ncand) {
            uint32_t slot = p.cand[c], t = slot / TILE, l = slot % TILE;
            const seq_tile tile = p.tiles[t];
            id = p.ids[slot], n = p.lens[slot];
            count = difflib_count(p, sh, p.chunks[tile.chunk] + tile.off + l, tile.width, n, tid, NULL);
            pass = count >= p.need[n];
        }
        keep_row(p, lane, pass, id, n, count, pass ? ratio_difflib(count, p.m, n) : 0.0, none);
    }
}

template <int W>
__global__ void __launch_bounds__(BLOCK) score_kernel(qparams p) {
    __shared__ uint32_t sh_hist[NBINS];
    __shared__ unsigned long long sh_cnt[3];
    __shared__ uint32_t sh_key[W == 1 ? SH_SLOTS : 1];
    __shared__ unsigned long long sh_mask[W == 1 ? SH_SLOTS : 1];
    if (W == 1) load_shtab(p, sh_key, sh_mask);
    const int histo = p.mode == MODE_HIST || p.mode == MODE_EXACT;
    if (histo)
        for (uint32_t i = threadIdx.x; i < NBINS; i += blockDim.x) sh_hist[i] = 0;
    if (threadIdx.x < 3) sh_cnt[threadIdx.x] = 0;
    __syncthreads();
    const shtab sh = {sh_key, sh_mask, p.hmask}; /* filled for one-word STMs only, the only ones that read it */
    const uint32_t lane = threadIdx.x & 31;
    const unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t nwarps = (uint32_t)(p.stride >> 5);
    const int difflib = p.metric == TDM_SEQ_DIFFLIB;
    unsigned long long n_len = 0, n_lcs = 0, n_scored = 0;
    for (uint32_t t = (uint32_t)(tid >> 5); t < p.ntiles; t += nwarps) {
        const seq_tile tile = p.tiles[t];
        const size_t slot = (size_t)t * TILE + lane;
        uint32_t id = p.ids[slot], n = p.lens[slot], need = NEVER, count = 0;
        int take = lane < tile.width && id < p.limit, pass = 0;
        double sim = 0.0;
        const uint32_t *P = p.chunks[tile.chunk] + tile.off + lane;
        tdm_seq_hit_blocks sb = {0, 0, 0, 0, 0, 0};
        int have_sb = 0; /* sb already holds this pattern's summary (difflib with the pattern as a) */
        if (p.mode == MODE_EXACT || p.mode == MODE_PICK) {
            /* The LCS is already known: only the exact difflib (EXACT) or the row test (PICK) is left. */
            if (take) {
                count = p.cslot[slot];
                if (difflib) {
                    uint32_t b = bin_of(ratio_difflib(count, p.m, n));
                    if (p.mode == MODE_EXACT) {
                        take = b >= p.lo && b < p.hi;
                        if (take) {
                            count = difflib_count(p, sh, P, tile.width, n, tid, NULL);
                            p.xslot[slot] = count;
                            n_scored++;
                        }
                    } else {
                        take = b >= p.lo;
                        if (take) count = p.xslot[slot];
                    }
                }
            }
            if (take) {
                sim = value(p.metric, count, p.m, n);
                if (p.mode == MODE_EXACT) atomicAdd(&sh_hist[bin_of(sim)], 1u);
                else pass = bin_of(sim) >= p.bar;
            }
        } else {
            if (take && p.mode == MODE_NEED) {
                need = n < p.n_need ? p.need[n] : NEVER;
                if (need == NEVER && !p.no_prefilter) n_len++, take = 0;
            }
            if (take) {
                count = W == 1 ? lcs_word(sh_key, sh_mask, p.hmask, P, tile.width, n)
                        : W    ? lcs_regs<W ? W : 1>(p, P, tile.width, n)
                               : lcs_scratch(p, P, tile.width, n, p.vscr + tid);
                if (p.mode == MODE_HIST) {
                    /* difflib: the LCS bound's bin; the exact values come in the EXACT passes. */
                    p.cslot[slot] = count;
                    atomicAdd(&sh_hist[bin_of(value(p.metric, count, p.m, n))], 1u);
                    n_scored++;
                    take = 0;
                } else if (difflib) {
                    if (count < need && !p.no_prefilter) n_lcs++, take = 0;
                    else count = difflib_count(p, sh, P, tile.width, n, tid, p.blocks && !p.stm_first ? &sb : NULL), have_sb = p.blocks && !p.stm_first;
                }
            }
            if (take) {
                n_scored++;
                sim = value(p.metric, count, p.m, n);
                pass = count >= need;
            }
        }
        /* Rows kept (threshold, or top-k's pick) carry their blocks' summary when asked for. */
        if (p.blocks && pass && !have_sb) sb = blocks_of(p, sh, P, tile.width, n, tid);
        keep_row(p, lane, pass, id, n, count, sim, sb);
    }
    if (n_len) atomicAdd(&sh_cnt[0], n_len);
    if (n_lcs) atomicAdd(&sh_cnt[1], n_lcs);
    if (n_scored) atomicAdd(&sh_cnt[2], n_scored);
    __syncthreads();
    if (threadIdx.x < 3 && sh_cnt[threadIdx.x]) atomicAdd(&p.cnt[1 + threadIdx.x], sh_cnt[threadIdx.x]);
    if (histo)
        for (uint32_t i = threadIdx.x; i < NBINS; i += blockDim.x)
            if (sh_hist[i]) atomicAdd(&p.hist[i], sh_hist[i]);
}

/* The result rows in tdm_seq_hit's layout, so they travel to the host in one copy. */
typedef struct {
    uint32_t id, pad;
    double sim;
} dhit;
static_assert(sizeof(dhit) == sizeof(tdm_seq_hit) && offsetof(tdm_seq_hit, similarity) == offsetof(dhit, sim),
              "device hit layout must match tdm_seq_hit");

__global__ void pack_kernel(const uint32_t *ids, const unsigned long long *sims, dhit *out, unsigned long long n) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = dhit{ids[i], 0, __longlong_as_double((long long)sims[i])};
}

/* Row i of the result when kept rows carry summaries: the sorts moved row indices (idx; NULL: the rows
 * are in order already), so the id and the summary are gathered through them. */
__global__ void pack_blocks_kernel(const uint32_t *ids, const unsigned long long *sims, const uint32_t *idx,
                                   const tdm_seq_hit_blocks *blk, dhit *out, tdm_seq_hit_blocks *out_blk, unsigned long long n) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x) {
        uint32_t r = idx ? idx[i] : (uint32_t)i;
        out[i] = dhit{ids[r], 0, __longlong_as_double((long long)sims[i])};
        out_blk[i] = blk[r];
    }
}

/* Ranked rows, sorted by key (rank, then id): the ids alone, and where each rank's rows begin. */
__global__ void split_ids_kernel(const unsigned long long *keys, uint32_t *ids, unsigned long long n, uint32_t id_bits) {
    const unsigned long long mask = (1ull << id_bits) - 1;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
        ids[i] = (uint32_t)(keys[i] & mask);
}
__global__ void rank_start_kernel(const unsigned long long *keys, unsigned long long n, uint32_t id_bits, uint32_t nrank,
                                  unsigned long long *start) {
    for (uint32_t r = blockIdx.x * blockDim.x + threadIdx.x; r <= nrank; r += gridDim.x * blockDim.x) {
        unsigned long long a = 0, b = n, want = (unsigned long long)r << id_bits;
        while (a < b) {
            unsigned long long mid = a + (b - a) / 2;
            if (keys[mid] < want) a = mid + 1;
            else b = mid;
        }
        start[r] = a;
    }
}

__global__ void iota_kernel(uint32_t *x, unsigned long long n) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
        x[i] = (uint32_t)i;
}

__global__ void gather_kernel(const unsigned long long *src, const uint32_t *idx, unsigned long long *dst, unsigned long long n) {
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
        dst[i] = src[idx[i]];
}

static unsigned grid_for(unsigned long long n) {
    unsigned long long b = (n + BLOCK - 1) / BLOCK;
    return (unsigned)(b < 1 ? 1 : b < 4096 ? b : 4096);
}

static void launch(int W, int blocks, const qparams &p, cudaStream_t s) {
    if (W == 1 && p.mode == MODE_NEED && p.metric == TDM_SEQ_LCS && !p.blocks) {
        lcs_need_kernel<<<blocks, BLOCK, 0, s>>>(p);
        return;
    }
    switch (W) {
    case 1: score_kernel<1><<<blocks, BLOCK, 0, s>>>(p); break;
    case 2: score_kernel<2><<<blocks, BLOCK, 0, s>>>(p); break;
    case 4: score_kernel<4><<<blocks, BLOCK, 0, s>>>(p); break;
    case 8: score_kernel<8><<<blocks, BLOCK, 0, s>>>(p); break;
    case 16: score_kernel<16><<<blocks, BLOCK, 0, s>>>(p); break;
    default: score_kernel<0><<<blocks, BLOCK, 0, s>>>(p); break;
    }
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#define CK(call, what)                                                                                     \
    do {                                                                                                   \
        cudaError_t e_ = (call);                                                                           \
        if (e_ != cudaSuccess) return tdm_cuda_fail(e_, what);                                             \
    } while (0)

static size_t align8(size_t x) { return (x + 7) & ~(size_t)7; }

/* Builds the query tables in pinned memory and uploads them in one copy. */
static int upload_query(tdm_seq_dstore *d, const tdm_seq_dquery *q, int ranked, qparams *p, int *W, size_t *up_bytes) {
    size_t m = q->m, words = m ? (m + 63) / 64 : 1;
    int w = words <= 1 ? 1 : words <= 2 ? 2 : words <= 4 ? 4 : words <= 8 ? 8 : words <= 16 ? 16 : 0;
    size_t kw = w ? (size_t)w : words, tcap = 16;
    while (tcap < 2 * m) tcap *= 2;
    size_t n_need = q->top_k ? 0 : q->n_need;
    /* the STM as b: difflib with the pattern first, and every block summary */
    int pop = q->autojunk && m >= 200 && ((q->metric == TDM_SEQ_DIFFLIB && !q->stm_first) || q->blocks);
    size_t o_masks = 0, o_keys = align8(o_masks + m * kw * 8 + 8), o_slot = o_keys + tcap * 4, o_need = o_slot + tcap * 4,
           o_stm = o_need + n_need * 4, o_pop = o_stm + m * 4, o_rank = o_pop + (pop ? m * 4 : 0),
           total = align8(o_rank + (ranked ? n_need * (m + 1) * 4 : 0) + 4);
    if (d->h_q_bytes < total) {
        if (d->h_q) cudaFreeHost(d->h_q);
        d->h_q = NULL;
        d->h_q_bytes = 0;
        size_t nb = 1 << 16;
        while (nb < total) nb *= 2;
        CK(cudaMallocHost(&d->h_q, nb), "pinned query buffer");
        d->h_q_bytes = nb;
    }
    int rc = tdm_cuda_dbuf_reserve(d, &d->q, total, "device query buffer");
    if (rc) return rc;
    char *h = (char *)d->h_q;
    uint64_t *masks = (uint64_t *)(h + o_masks);
    uint32_t *keys = (uint32_t *)(h + o_keys), *slots = (uint32_t *)(h + o_slot);
    for (size_t i = 0; i < tcap; i++) keys[i] = NO_ID, slots[i] = 0;
    uint32_t nslots = 0;
    for (size_t i = 0; i < m; i++) {
        uint32_t v = q->stm[i];
        if (v == TDM_SEQ_UNKNOWN) continue; /* matches no stored symbol */
        size_t at = hash32(v) & (tcap - 1);
        while (keys[at] != NO_ID && keys[at] != v) at = (at + 1) & (tcap - 1);
        if (keys[at] == NO_ID) {
            keys[at] = v, slots[at] = nslots;
            memset(masks + (size_t)nslots * kw, 0, kw * 8);
            nslots++;
        }
        masks[(size_t)slots[at] * kw + i / 64] |= 1ull << (i % 64);
    }
    if (n_need) memcpy(h + o_need, q->need, n_need * 4);
    if (ranked) memcpy(h + o_rank, q->rank, n_need * (m + 1) * 4);
    if (m) memcpy(h + o_stm, q->stm, m * 4);
    if (pop) { /* CPython's popular elements of b = the STM: more than 1 + m//100 occurrences */
        uint32_t *flags = (uint32_t *)(h + o_pop), ntest = (uint32_t)(m / 100 + 1);
        for (size_t j = 0; j < m; j++) {
            uint32_t c = 0;
            for (size_t k = 0; k < m; k++) c += q->stm[k] == q->stm[j];
            flags[j] = c > ntest;
        }
    }
    CK(cudaMemcpyAsync(d->q.p, d->h_q, total, cudaMemcpyHostToDevice, d->stream), "uploading the query");
    *up_bytes = total;
    char *dq = (char *)d->q.p;
    p->masks = (const uint64_t *)(dq + o_masks);
    p->hkeys = (const uint32_t *)(dq + o_keys);
    p->hslot = (const uint32_t *)(dq + o_slot);
    p->hmask = (uint32_t)(tcap - 1);
    p->words = (uint32_t)kw;
    p->need = (const uint32_t *)(dq + o_need);
    p->n_need = (uint32_t)n_need;
    p->stm = (const uint32_t *)(dq + o_stm);
    p->stm_pop = pop ? (const uint32_t *)(dq + o_pop) : NULL;
    p->rank = ranked ? (const uint32_t *)(dq + o_rank) : NULL;
    *W = w;
    return TDM_OK;
}

/* Room for cap result rows and the sort's second buffers. */
static int reserve_rows(tdm_seq_dstore *d, unsigned long long cap) {
    int rc = tdm_cuda_dbuf_reserve(d, &d->out_id, cap * 4, "result rows");
    if (!rc) rc = tdm_cuda_dbuf_reserve(d, &d->out_sim, cap * 8, "result rows");
    if (!rc) rc = tdm_cuda_dbuf_reserve(d, &d->alt_id, cap * 4, "result rows");
    if (!rc) rc = tdm_cuda_dbuf_reserve(d, &d->alt_sim, cap * 8, "result rows");
    if (!rc) d->out_cap = cap;
    return rc;
}

/* After a launch: its error, then the counters back (the stream synchronised). */
static int counters_after(tdm_seq_dstore *d, unsigned long long *counters, const char *what) {
    CK(cudaGetLastError(), what);
    CK(cudaMemcpyAsync(counters, d->cnt.p, 4 * sizeof(unsigned long long), cudaMemcpyDeviceToHost, d->stream), "reading counters");
    CK(cudaStreamSynchronize(d->stream), what);
    return TDM_OK;
}

/* One scoring pass; grows the output and runs again when more rows passed than it had room for. A
 * difflib threshold query with a one-word STM and no summaries runs in two (lcs_need_kernel lists the
 * candidates in alt_id, difflib_cand_kernel scores them). */
static int run_pass(tdm_seq_dstore *d, qparams *p, int W, int blocks, unsigned long long *counters) {
    const int two = W == 1 && p->mode == MODE_NEED && p->metric == TDM_SEQ_DIFFLIB && !p->blocks;
    int rc;
    for (;;) {
        CK(cudaMemsetAsync(d->cnt.p, 0, 4 * sizeof(unsigned long long), d->stream), "clearing counters");
        p->out_id = (uint32_t *)d->out_id.p;
        p->out_sim = (unsigned long long *)d->out_sim.p;
        p->out_cap = d->out_cap;
        if (two) {
            p->cand = (uint32_t *)d->alt_id.p;
            lcs_need_kernel<<<blocks, BLOCK, 0, d->stream>>>(*p);
        } else {
            if (p->blocks) {
                if ((rc = tdm_cuda_dbuf_reserve(d, &d->out_blk, d->out_cap * sizeof(tdm_seq_hit_blocks), "block summaries")))
                    return rc;
                p->out_blk = (tdm_seq_hit_blocks *)d->out_blk.p;
            }
            launch(W, blocks, *p, d->stream);
        }
        if ((rc = counters_after(d, counters, two ? "LCS bound pass" : "scoring kernel"))) return rc;
        if (counters[0] > d->out_cap) { /* rows (or candidates) past the output: grow it, run again */
            if ((rc = reserve_rows(d, counters[0]))) return rc;
            continue;
        }
        if (!two) return TDM_OK;
        p->ncand = counters[0];
        CK(cudaMemsetAsync(d->cnt.p, 0, sizeof(unsigned long long), d->stream), "clearing the row count");
        difflib_cand_kernel<<<blocks, BLOCK, 0, d->stream>>>(*p);
        if ((rc = counters_after(d, counters, "matching-block pass"))) return rc;
        counters[3] = p->ncand; /* the exact value was computed for every candidate */
        return TDM_OK;
    }
}

/* Copying millions of rows into the caller's fresh array is bound by first-touch page faults (about
 * 2 GB/s on one thread: 27 ms for 3.2M rows on the H100 machine); faults on different pages proceed in
 * parallel, so large copies are split over up to 8 threads. */
typedef struct {
    char *dst;
    const char *src;
    size_t bytes;
} copy_part;

static void *copy_part_run(void *arg) {
    copy_part *c = (copy_part *)arg;
    memcpy(c->dst, c->src, c->bytes);
    return NULL;
}

static void spread_copy(void *dst, const void *src, size_t bytes) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t parts = bytes >> 22; /* one thread per 4 MB, up to 8 and the cores online */
    if (parts > 8) parts = 8;
    if (cores > 0 && parts > (size_t)cores) parts = (size_t)cores;
    pthread_t th[8];
    copy_part cp[8];
    size_t started = 0, step = parts > 1 ? (bytes / parts + 4095) & ~(size_t)4095 : bytes, at = 0;
    for (size_t i = 0; parts > 1 && i + 1 < parts && at + step < bytes; i++, at += step) {
        cp[i] = copy_part{(char *)dst + at, (const char *)src + at, step};
        if (pthread_create(&th[i], NULL, copy_part_run, &cp[i])) break;
        started++;
    }
    at = started * step;
    memcpy((char *)dst + at, (const char *)src + at, bytes - at);
    for (size_t i = 0; i < started; i++) pthread_join(th[i], NULL);
}

/* The lowest bin whose count, added to every bin above it, reaches k (0 when the whole histogram does not). */
static uint32_t bar_for(const uint32_t *hist, unsigned long long k) {
    unsigned long long above = 0;
    uint32_t bar = NBINS;
    while (bar > 0 && above < k) above += hist[--bar];
    return bar;
}

static int read_hist(tdm_seq_dstore *d, uint32_t *hist) {
    CK(cudaMemcpyAsync(hist, d->hist.p, NBINS * 4, cudaMemcpyDeviceToHost, d->stream), "reading the histogram");
    CK(cudaStreamSynchronize(d->stream), "histogram");
    return TDM_OK;
}

/* Top-k, before the PICK pass: sets p->bar (and p->lo for difflib) so that PICK keeps every pattern that
 * can be among the k best, and few others. Bins are monotone in the similarity and exact <= LCS bound,
 * so a pattern whose bound's bin is below lo has an exact value in a bin below lo; once the k-th best
 * exact value among the patterns with bound bin >= lo sits in a bin >= lo, nobody left out can reach it. */
#define TOPK_CANDIDATES 4 /* difflib: exact matching blocks for about this many times k patterns */
static int top_k_bars(tdm_seq_dstore *d, const tdm_seq_dquery *q, qparams *p, int W, int blocks,
                      unsigned long long *counters, uint32_t *hist, unsigned long long *taken, unsigned long long *exact) {
    int rc;
    CK(cudaMemsetAsync(d->hist.p, 0, NBINS * 4, d->stream), "clearing the histogram");
    p->mode = MODE_HIST;
    if ((rc = run_pass(d, p, W, blocks, counters)) || (rc = read_hist(d, hist))) return rc;
    *taken = counters[3];
    if (q->metric != TDM_SEQ_DIFFLIB) {
        p->bar = bar_for(hist, q->top_k);
        return TDM_OK;
    }
    unsigned long long pool = q->top_k_pool ? q->top_k_pool : TOPK_CANDIDATES;
    unsigned long long want = q->no_prefilter ? ~0ull : (unsigned long long)q->top_k * pool;
    uint32_t lo = bar_for(hist, want), hi = NBINS;
    CK(cudaMemsetAsync(d->hist.p, 0, NBINS * 4, d->stream), "clearing the histogram");
    p->mode = MODE_EXACT;
    for (;;) {
        p->lo = lo, p->hi = hi;
        if ((rc = run_pass(d, p, W, blocks, counters)) || (rc = read_hist(d, hist))) return rc;
        *exact += counters[3];
        uint32_t bar = bar_for(hist, q->top_k);
        if (bar >= lo) {
            p->bar = bar;
            return TDM_OK;
        }
        hi = lo, lo = bar; /* the histogram keeps the values already computed */
    }
}

/* Grows the pinned buffer that rows come back into (contents not kept). */
static int reserve_pinned_rows(tdm_seq_dstore *d, size_t bytes) {
    if (d->h_rows_bytes >= bytes) return TDM_OK;
    if (d->h_rows) cudaFreeHost(d->h_rows);
    d->h_rows = NULL;
    d->h_rows_bytes = 0;
    size_t want = bytes + bytes / 4;
    if (want < (1u << 20)) want = 1u << 20;
    CK(cudaMallocHost(&d->h_rows, want), "pinned result rows");
    d->h_rows_bytes = want;
    return TDM_OK;
}

/* A ranked threshold query's n kept rows (keys rank << id_bits | id in out_sim): one radix sort of the
 * keys alone (rank ascending = similarity descending, then id ascending: the CPU's order), then the ids
 * and each rank's first row, packed in d->hits for one copy back (*bytes): 4 bytes a row instead of 16.
 * Enqueued only; ev[3] marks the end of the selection. */
static int ranked_rows(tdm_seq_dstore *d, const tdm_seq_dquery *q, int id_bits, unsigned long long n, size_t *bytes_out) {
    int rank_bits = 1, rc;
    while (rank_bits < 32 && ((uint64_t)(q->nrank - 1) >> rank_bits)) rank_bits++;
    unsigned long long *keys = (unsigned long long *)d->out_sim.p;
    if (n > 1) {
        size_t tb = 0;
        CK(cub::DeviceRadixSort::SortKeys(NULL, tb, keys, (unsigned long long *)d->alt_sim.p, (int)n, 0, id_bits + rank_bits, d->stream), "sort size");
        if ((rc = tdm_cuda_dbuf_reserve(d, &d->temp, tb, "sort scratch"))) return rc;
        tb = d->temp.bytes;
        CK(cub::DeviceRadixSort::SortKeys(d->temp.p, tb, keys, (unsigned long long *)d->alt_sim.p, (int)n, 0, id_bits + rank_bits, d->stream), "sorting rows by rank");
        keys = (unsigned long long *)d->alt_sim.p;
    }
    size_t ids_bytes = align8(n * 4), bytes = ids_bytes + ((size_t)q->nrank + 1) * 8;
    if ((rc = tdm_cuda_dbuf_reserve(d, &d->hits, bytes, "ranked rows")) || (rc = reserve_pinned_rows(d, bytes))) return rc;
    if (n) split_ids_kernel<<<grid_for(n), BLOCK, 0, d->stream>>>(keys, (uint32_t *)d->hits.p, n, (uint32_t)id_bits);
    rank_start_kernel<<<grid_for((unsigned long long)q->nrank + 1), BLOCK, 0, d->stream>>>(keys, n, (uint32_t)id_bits, q->nrank,
                                                                                         (unsigned long long *)((char *)d->hits.p + ids_bytes));
    CK(cudaGetLastError(), "launching the rank split");
    CK(cudaEventRecord(d->ev[3], d->stream), "event");
    *bytes_out = bytes;
    return TDM_OK;
}

int tdm_cuda_seq_query(tdm_seq_dstore *d, const tdm_seq_dquery *q, tdm_seq_dresult *r) {
    memset(r, 0, sizeof *r);
    if (q->metric != TDM_SEQ_LCS && q->metric != TDM_SEQ_DIFFLIB)
        return H->error(TDM_E_INVAL, "cuda: metric %d has no device kernel", q->metric);
    if (!q->top_k && (!q->need || !q->n_need)) return H->error(TDM_E_INVAL, "cuda: threshold query without a need table");
    CK(cudaSetDevice(d->dev), "cudaSetDevice");
    double t0 = now_ms();
    CK(cudaEventRecord(d->ev[0], d->stream), "event");
    /* Profiler marks: upload (H2D), scoring to packed rows (GPU), rows back (D2H); resolved at export. */
    tdm_cuda_prof *prof = ((const cuda_impl *)d->backend->impl)->prof;
    tdm_cuda_mark pm0 = tdm_cuda_prof_mark(prof);
    qparams p;
    memset(&p, 0, sizeof p);
    size_t up_bytes = 0;
    /* Threshold rows by rank: only ids and per-rank counts come back (the core writes the values). */
    const int ranked = q->rank && q->nrank && !q->top_k && !q->blocks;
    int W = 1, rc = upload_query(d, q, ranked, &p, &W, &up_bytes);
    if (rc) return rc;
    CK(cudaEventRecord(d->ev[1], d->stream), "event");
    tdm_cuda_mark pm1 = tdm_cuda_prof_mark(prof);
    uint32_t limit = q->limit < d->patterns ? q->limit : (uint32_t)d->patterns;
    p.tiles = d->d_tiles, p.ids = d->d_ids, p.lens = d->d_lens, p.chunks = d->d_chunk, p.ntiles = d->ntiles;
    p.m = (uint32_t)q->m, p.metric = q->metric, p.autojunk = q->autojunk, p.stm_first = q->stm_first;
    p.no_prefilter = q->no_prefilter, p.limit = limit, p.blocks = q->blocks != 0;
    int id_bits = 1;
    while (id_bits < 32 && ((uint64_t)limit >> id_bits)) id_bits++;
    p.id_bits = (uint32_t)id_bits;
    /* Grid: enough warps for every tile, at most 8 blocks of 256 per multiprocessor, fewer when each
     * thread's difflib or long-STM scratch would exceed the budget. */
    unsigned long long blocks = ((unsigned long long)d->ntiles * TILE + BLOCK - 1) / BLOCK;
    if (blocks > (unsigned long long)d->sms * 8) blocks = (unsigned long long)d->sms * 8;
    if (!blocks) blocks = 1;
    size_t per_thread = 0;
    const int dl = q->metric == TDM_SEQ_DIFFLIB, matcher = dl || p.blocks;
    if (matcher) {
        /* b of the exact count (the pattern when stm_first), and of the summaries (the STM): the row must
         * hold either; the work list holds one range more than the blocks found, at most min(|a|, |b|) */
        size_t lb = dl && q->stm_first ? d->max_length : q->m, lmin = q->m < d->max_length ? q->m : d->max_length;
        if (p.blocks && q->m > lb) lb = q->m;
        p.row_len = (uint32_t)(lb + 1);
        p.stack_len = (uint32_t)(4 * (lmin + 2));
        per_thread += ((size_t)p.row_len + p.stack_len + (dl && q->stm_first && q->autojunk ? d->max_length : 0)) * 4;
        if (W == 1) per_thread = align8(per_thread) + PB_MAX * 8; /* the pattern's STM bits (difflib_matches) */
    }
    if (!W) per_thread += (size_t)p.words * 8;
    while (per_thread && blocks > 1 && blocks * BLOCK * per_thread > SCRATCH_BUDGET) blocks /= 2;
    p.stride = blocks * BLOCK;
    if (matcher && (rc = tdm_cuda_dbuf_reserve(d, &d->scr, p.stride * per_thread, "difflib scratch"))) return rc;
    /* Long STMs keep their bit vectors in the buffer that later carries the packed rows. */
    if (!W && (rc = tdm_cuda_dbuf_reserve(d, &d->hits, p.stride * p.words * 8, "LCS scratch"))) return rc;
    p.scr = (uint32_t *)d->scr.p;
    /* after the u32 region; the stride is a multiple of 256, so the offset is 8-byte aligned */
    p.pbits = matcher && W == 1 ? (unsigned long long *)((char *)d->scr.p + p.stride * (per_thread - PB_MAX * 8)) : NULL;
    p.vscr = W ? NULL : (unsigned long long *)d->hits.p;
    if ((rc = tdm_cuda_dbuf_reserve(d, &d->cnt, 64, "counters")) || (rc = tdm_cuda_dbuf_reserve(d, &d->hist, NBINS * 4, "histogram")))
        return rc;
    if (!d->h_small) CK(cudaMallocHost(&d->h_small, 64 + NBINS * 4), "pinned counters");
    if (!d->out_cap && (rc = reserve_rows(d, 1 << 16))) return rc;
    if (q->top_k) {
        size_t slots = (size_t)d->ntiles * TILE * 4 + 4;
        if ((rc = tdm_cuda_dbuf_reserve(d, &d->cslot, slots, "top-k counts")) ||
            (q->metric == TDM_SEQ_DIFFLIB && (rc = tdm_cuda_dbuf_reserve(d, &d->xslot, slots, "top-k counts"))))
            return rc;
        p.cslot = (uint32_t *)d->cslot.p;
        p.xslot = (uint32_t *)d->xslot.p;
    }
    p.cnt = (unsigned long long *)d->cnt.p;
    p.hist = (uint32_t *)d->hist.p;
    unsigned long long *counters = (unsigned long long *)d->h_small;
    uint32_t *hist = (uint32_t *)((char *)d->h_small + 64);
    double t1 = now_ms();
    unsigned long long taken = 0, exact = 0;
    if (q->top_k) {
        if ((rc = top_k_bars(d, q, &p, W, (int)blocks, counters, hist, &taken, &exact))) return rc;
        p.mode = MODE_PICK;
    } else {
        p.mode = MODE_NEED;
    }
    if ((rc = run_pass(d, &p, W, (int)blocks, counters))) return rc;
    CK(cudaEventRecord(d->ev[2], d->stream), "event");
    double t2 = now_ms();
    unsigned long long n = counters[0], keep = q->top_k && q->top_k < n ? q->top_k : n;
    r->length_pruned = counters[1];
    r->lcs_pruned = counters[2];
    r->scored = counters[3];
    if (q->top_k) { /* every pattern had its LCS; difflib ran exactly for `exact` of them */
        r->length_pruned = 0;
        r->lcs_pruned = q->metric == TDM_SEQ_DIFFLIB ? taken - exact : 0;
        r->scored = q->metric == TDM_SEQ_DIFFLIB ? exact : taken;
    }
    if (ranked) {
        size_t bytes = 0;
        if ((rc = ranked_rows(d, q, id_bits, n, &bytes))) return rc;
        tdm_cuda_mark pm2 = tdm_cuda_prof_mark(prof);
        CK(cudaMemcpyAsync(d->h_rows, d->hits.p, bytes, cudaMemcpyDeviceToHost, d->stream), "copying ranked rows");
        CK(cudaEventRecord(d->ev[4], d->stream), "event");
        tdm_cuda_mark pm3 = tdm_cuda_prof_mark(prof);
        CK(cudaStreamSynchronize(d->stream), "ranked rows");
        tdm_cuda_prof_span(prof, pm0, pm1, "seq.query", TDM_PROF_CAT_H2D, up_bytes, 0, 0);
        tdm_cuda_prof_span(prof, pm1, pm2, "seq.query", TDM_PROF_CAT_GPU, 0, 0, limit);
        tdm_cuda_prof_span(prof, pm2, pm3, "seq.query", TDM_PROF_CAT_D2H, 0, bytes, n);
        float f_up = 0, f_sel = 0, f_copy = 0;
        cudaEventElapsedTime(&f_up, d->ev[0], d->ev[1]);
        cudaEventElapsedTime(&f_sel, d->ev[2], d->ev[3]);
        cudaEventElapsedTime(&f_copy, d->ev[3], d->ev[4]);
        r->ids = (const uint32_t *)d->h_rows;
        r->rank_start = (const uint64_t *)((const char *)d->h_rows + align8(n * 4));
        r->n = n;
        r->filter_ms = (t1 - t0) + f_up;
        r->score_ms = t2 - t1;
        r->select_ms = f_sel;
        r->copy_ms = f_copy; /* the host's placement of the rows is added by the core */
        return TDM_OK;
    }
    uint32_t *ids = (uint32_t *)d->out_id.p, *idx = NULL;
    unsigned long long *sims = (unsigned long long *)d->out_sim.p;
    if (n > 1 && !p.blocks) {
        /* Kernel order is arbitrary: sort by id, then (stably) by similarity descending. Similarities
         * are non-negative doubles, whose bit patterns sort as their values; below 1.0 needs 62 bits. */
        size_t t_a = 0, t_b = 0;
        CK(cub::DeviceRadixSort::SortPairs(NULL, t_a, ids, (uint32_t *)d->alt_id.p, sims, (unsigned long long *)d->alt_sim.p, (int)n, 0, id_bits, d->stream), "sort size");
        CK(cub::DeviceRadixSort::SortPairsDescending(NULL, t_b, (unsigned long long *)d->alt_sim.p, sims, (uint32_t *)d->alt_id.p, ids, (int)n, 0, 62, d->stream), "sort size");
        if ((rc = tdm_cuda_dbuf_reserve(d, &d->temp, t_a > t_b ? t_a : t_b, "sort scratch"))) return rc;
        t_a = d->temp.bytes;
        CK(cub::DeviceRadixSort::SortPairs(d->temp.p, t_a, ids, (uint32_t *)d->alt_id.p, sims, (unsigned long long *)d->alt_sim.p, (int)n, 0, id_bits, d->stream), "sorting by id");
        t_b = d->temp.bytes;
        CK(cub::DeviceRadixSort::SortPairsDescending(d->temp.p, t_b, (unsigned long long *)d->alt_sim.p, sims, (uint32_t *)d->alt_id.p, ids, (int)n, 0, 62, d->stream), "sorting by similarity");
    } else if (n > 1) {
        /* The same two stable sorts, moving row indices instead of the rows: sort by id (carrying the
         * index), gather the similarities in that order, sort by similarity descending (carrying the
         * index again); the pack then reads each row's id and summary through its index. */
        if ((rc = tdm_cuda_dbuf_reserve(d, &d->idx, n * 4, "row indices")) || (rc = tdm_cuda_dbuf_reserve(d, &d->alt_idx, n * 4, "row indices")))
            return rc;
        uint32_t *i0 = (uint32_t *)d->idx.p, *i1 = (uint32_t *)d->alt_idx.p;
        unsigned long long *alt_sim = (unsigned long long *)d->alt_sim.p;
        size_t t_a = 0, t_b = 0;
        CK(cub::DeviceRadixSort::SortPairs(NULL, t_a, ids, (uint32_t *)d->alt_id.p, i0, i1, (int)n, 0, id_bits, d->stream), "sort size");
        CK(cub::DeviceRadixSort::SortPairsDescending(NULL, t_b, alt_sim, sims, i1, i0, (int)n, 0, 62, d->stream), "sort size");
        if ((rc = tdm_cuda_dbuf_reserve(d, &d->temp, t_a > t_b ? t_a : t_b, "sort scratch"))) return rc;
        iota_kernel<<<grid_for(n), BLOCK, 0, d->stream>>>(i0, n);
        t_a = d->temp.bytes;
        CK(cub::DeviceRadixSort::SortPairs(d->temp.p, t_a, ids, (uint32_t *)d->alt_id.p, i0, i1, (int)n, 0, id_bits, d->stream), "sorting by id");
        gather_kernel<<<grid_for(n), BLOCK, 0, d->stream>>>(sims, i1, alt_sim, n);
        t_b = d->temp.bytes;
        CK(cub::DeviceRadixSort::SortPairsDescending(d->temp.p, t_b, alt_sim, sims, i1, i0, (int)n, 0, 62, d->stream), "sorting by similarity");
        idx = i0; /* ids (untouched by the sorts) and the summaries are read through it */
    }
    tdm_seq_hit *out = (tdm_seq_hit *)H->malloc((keep ? keep : 1) * sizeof *out);
    tdm_seq_hit_blocks *outb = p.blocks ? (tdm_seq_hit_blocks *)H->malloc((keep ? keep : 1) * sizeof *outb) : NULL;
    if (!out || (p.blocks && !outb)) {
        H->free(out), H->free(outb);
        return H->error(TDM_E_NOMEM, "cuda: no host memory for %llu result rows", keep);
    }
    /* (from 4 MB, tdm_malloc's blocks lie on transparent huge pages: the copy's first touch faults 2 MB at
       a time) */
    size_t row_bytes = keep * sizeof *out, blk_bytes = outb ? keep * sizeof *outb : 0;
    if (keep) {
        if ((rc = tdm_cuda_dbuf_reserve(d, &d->hits, keep * sizeof(dhit), "packed rows")) ||
            (outb && (rc = tdm_cuda_dbuf_reserve(d, &d->blk, blk_bytes, "packed block summaries")))) {
            H->free(out), H->free(outb);
            return rc;
        }
        if (outb)
            pack_blocks_kernel<<<grid_for(keep), BLOCK, 0, d->stream>>>(ids, sims, idx, (const tdm_seq_hit_blocks *)d->out_blk.p,
                                                                       (dhit *)d->hits.p, (tdm_seq_hit_blocks *)d->blk.p, keep);
        else
            pack_kernel<<<grid_for(keep), BLOCK, 0, d->stream>>>(ids, sims, (dhit *)d->hits.p, keep);
    }
    /* Many rows: a copy from device memory into pageable memory crawls (measured 1.4 GB/s for 3.1M rows on
     * an H100), so they land in a pinned buffer first (rows, then summaries) and memcpys move them. */
    size_t all_bytes = row_bytes + blk_bytes;
    int staged = all_bytes >= (1u << 20);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess && staged && (rc = reserve_pinned_rows(d, all_bytes))) {
        H->free(out), H->free(outb);
        return rc;
    }
    if (e == cudaSuccess) e = cudaEventRecord(d->ev[3], d->stream);
    tdm_cuda_mark pm2 = tdm_cuda_prof_mark(prof);
    if (e == cudaSuccess && keep) e = cudaMemcpyAsync(staged ? d->h_rows : (void *)out, d->hits.p, row_bytes, cudaMemcpyDeviceToHost, d->stream);
    if (e == cudaSuccess && keep && outb)
        e = cudaMemcpyAsync(staged ? (char *)d->h_rows + row_bytes : (void *)outb, d->blk.p, blk_bytes, cudaMemcpyDeviceToHost, d->stream);
    if (e == cudaSuccess) e = cudaEventRecord(d->ev[4], d->stream);
    tdm_cuda_mark pm3 = tdm_cuda_prof_mark(prof);
    if (e == cudaSuccess) e = cudaStreamSynchronize(d->stream);
    if (e != cudaSuccess) {
        H->free(out), H->free(outb);
        return tdm_cuda_fail(e, "selecting and copying result rows");
    }
    tdm_cuda_prof_span(prof, pm0, pm1, "seq.query", TDM_PROF_CAT_H2D, up_bytes, 0, 0);
    tdm_cuda_prof_span(prof, pm1, pm2, "seq.query", TDM_PROF_CAT_GPU, 0, 0, limit);
    tdm_cuda_prof_span(prof, pm2, pm3, "seq.query", TDM_PROF_CAT_D2H, 0, all_bytes, keep);
    double t3 = now_ms();
    if (staged) {
        spread_copy(out, d->h_rows, row_bytes);
        if (blk_bytes) spread_copy(outb, (char *)d->h_rows + row_bytes, blk_bytes);
    }
    double host_copy = staged ? now_ms() - t3 : 0.0;
    float f_up = 0, f_sel = 0, f_copy = 0;
    cudaEventElapsedTime(&f_up, d->ev[0], d->ev[1]);
    cudaEventElapsedTime(&f_sel, d->ev[2], d->ev[3]);
    cudaEventElapsedTime(&f_copy, d->ev[3], d->ev[4]);
    r->blocks = outb;
    r->hits = out;
    r->n = keep;
    r->filter_ms = (t1 - t0) + f_up;
    r->score_ms = t2 - t1;
    r->select_ms = f_sel;
    r->copy_ms = f_copy + host_copy;
    return TDM_OK;
}
