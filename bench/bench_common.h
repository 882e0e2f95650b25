/* bench_common.h: what the sequence benchmarks share (bench_seq.c, bench_seq_rounds.c, bench_seq_gpu.c):
 * error exits, timing, the shared generator's patterns, the store built from them, the STMs and the difflib
 * pair sample drawn from them, and the hit digest peers.py recomputes. The programs must feed the engines
 * exactly the same inputs and check answers the same way, so these live once. Header-only, like tests/unit/unit_common.h; define
 * BENCH_NAME (the program's name, for messages) before including it. The helpers are static inline so that
 * a program using only some of them (bench_lattice) compiles without warnings. */
#ifndef TANDEM_BENCH_COMMON_H
#define TANDEM_BENCH_COMMON_H

#include "tandem/seq.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    uint32_t *sym; /* every generated pattern's ranks, back to back */
    uint64_t *off; /* off[k]..off[k+1]; n+1 entries */
    uint32_t n;
} patterns;

static inline void die(const char *what, int rc) {
    fprintf(stderr, BENCH_NAME ": %s: %s (%s)\n", what, tdm_strerror(rc), tdm_last_error());
    exit(1);
}

static inline void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, BENCH_NAME ": out of memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* SplitMix64: the next value of the stream whose state *s is (seeded inputs of the benchmarks that do not
 * use the shared sequence generator). */
static inline uint64_t bench_splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline double median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n ? (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2])) : 0.0;
}

static inline tdm_seq_gen *new_gen(uint64_t seed) {
    tdm_seq_gen_opts o;
    tdm_seq_gen_opts_init(&o);
    o.seed = seed;
    tdm_seq_gen *g;
    int rc = tdm_seq_gen_new(&o, &g);
    if (rc) die("generator", rc);
    return g;
}

/* The first n patterns of `tandem seq gen --seed seed` (default distribution). */
static inline void generate(uint64_t seed, uint32_t n, patterns *p) {
    tdm_seq_gen_opts o;
    tdm_seq_gen_opts_init(&o);
    tdm_seq_gen *g = new_gen(seed);
    size_t cap = (size_t)n * 24 + o.max_len, used = 0;
    p->sym = xmalloc(cap * sizeof *p->sym);
    p->off = xmalloc(((size_t)n + 1) * sizeof *p->off);
    p->n = n;
    for (uint32_t k = 0; k < n; k++) {
        if (used + o.max_len > cap) {
            cap *= 2;
            uint32_t *q = realloc(p->sym, cap * sizeof *q);
            if (!q) die("generate", TDM_E_NOMEM);
            p->sym = q;
        }
        size_t len;
        p->off[k] = used;
        tdm_seq_gen_next(g, p->sym + used, &len);
        used += len;
    }
    p->off[n] = used;
    tdm_seq_gen_free(g);
}

static inline uint32_t **make_stms(uint64_t seed, uint32_t q, const patterns *p, uint32_t pool, size_t **lens_out) {
    tdm_seq_gen_opts o;
    tdm_seq_gen_opts_init(&o);
    tdm_seq_gen *g = new_gen(seed + 1);
    uint32_t **stms = xmalloc(q * sizeof *stms);
    size_t *lens = xmalloc(q * sizeof *lens);
    uint32_t *tmp = xmalloc((size_t)o.max_len * 3 * sizeof *tmp);
    for (uint32_t i = 0; i < q; i++) {
        size_t n = 0;
        if (i % 2 == 0) {
            uint32_t src = (uint32_t)tdm_seq_gen_uniform(g, pool);
            for (uint64_t t = p->off[src]; t < p->off[src + 1]; t++) {
                uint64_t u = tdm_seq_gen_uniform(g, 300); /* < 10: substitute, < 20: delete, < 30: insert */
                if (u < 10) tmp[n++] = tdm_seq_gen_symbol(g);
                else if (u < 20) continue;
                else if (u < 30) tmp[n++] = tdm_seq_gen_symbol(g), tmp[n++] = p->sym[t];
                else tmp[n++] = p->sym[t];
            }
            while (n < 2) tmp[n++] = tdm_seq_gen_symbol(g);
        } else {
            tdm_seq_gen_next(g, tmp, &n);
        }
        stms[i] = xmalloc(n * sizeof **stms);
        memcpy(stms[i], tmp, n * sizeof *tmp);
        lens[i] = n;
    }
    free(tmp);
    tdm_seq_gen_free(g);
    *lens_out = lens;
    return stms;
}

static inline int parse_list(const char *s, double *out, int max) {
    int n = 0;
    char *end;
    while (*s && n < max) {
        out[n++] = strtod(s, &end);
        if (end == s) return -1;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return *s ? -1 : n;
}

/* Nearest-rank percentile of sorted v (so p99 of fewer than 100 values is the maximum). */
static inline double percentile(const double *v, size_t n, double p) {
    if (!n) return 0.0;
    size_t r = (size_t)ceil(p / 100.0 * (double)n);
    return v[r ? r - 1 : 0];
}

/* Builds a store of the first n patterns; returns the seconds taken (vocabulary interning, the length and
 * inverted indexes and the final shrink included). *vocab_bytes receives what the store holds with the
 * vocabulary and no pattern (not timed). Ranks 0..vocab-1 are interned as "s<rank>" first, so a store id
 * equals the rank `tandem seq gen` writes; the store is checked against the generator's patterns. */
static inline double build_store(tdm_ctx *ctx, const patterns *p, uint32_t n, tdm_seq_store **out,
                                 uint64_t *vocab_bytes) {
    tdm_seq_gen_opts o;
    tdm_seq_gen_opts_init(&o);
    double t0 = now_s();
    tdm_seq_store *s;
    int rc = tdm_seq_store_new(ctx, &s);
    if (rc) die("store_new", rc);
    tdm_seq_vocab *v = tdm_seq_store_vocab(s);
    char name[16];
    for (uint32_t r = 0; r < o.vocab; r++) {
        uint32_t id;
        size_t len = tdm_seq_gen_symbol_name(r, name);
        if ((rc = tdm_seq_vocab_intern(v, name, len, &id))) die("vocab_intern", rc);
        if (id != r) {
            fprintf(stderr, BENCH_NAME ": symbol \"%s\" got id %u, not its rank %u\n", name, id, r);
            exit(1);
        }
    }
    double t1 = now_s();
    *vocab_bytes = tdm_seq_store_bytes(s);
    double t2 = now_s();
    for (uint32_t k = 0; k < n; k++)
        if ((rc = tdm_seq_store_add(s, p->sym + p->off[k], (size_t)(p->off[k + 1] - p->off[k]), NULL))) die("store_add", rc);
    tdm_seq_store_shrink(s); /* a bulk load gives back its append slack, as `tandem seq build` does */
    double dt = now_s() - t0 - (t2 - t1);
    /* The store must hold what was generated, id for id (spot checks). */
    for (uint32_t k = 0; k < n; k += n / 97 + 1) {
        const uint32_t *syms;
        size_t len;
        if ((rc = tdm_seq_store_get(s, k, &syms, &len))) die("store_get", rc);
        if (len != p->off[k + 1] - p->off[k] || memcmp(syms, p->sym + p->off[k], len * sizeof *syms)) {
            fprintf(stderr, BENCH_NAME ": pattern %u differs from the generator's\n", k);
            exit(1);
        }
    }
    *out = s;
    return dt;
}

/* An order-independent digest of a hit set: the sum modulo 2^64 of mix(id, IEEE bits of the similarity)
 * over the hits. peers.py computes the same with numpy (digest_np), so every similarity is checked bit for
 * bit without writing millions of doubles. */
static inline uint64_t hit_mix(uint32_t id, double sim) {
    uint64_t bits;
    memcpy(&bits, &sim, sizeof bits);
    uint64_t h = bits ^ ((uint64_t)id * 0x9E3779B97F4A7C15ull);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return h;
}

static inline uint64_t hits_digest(const tdm_seq_hit *h, size_t n) {
    uint64_t x = 0;
    for (size_t k = 0; k < n; k++) x += hit_mix(h[k].id, h[k].similarity);
    return x;
}

/* The (pattern, STM) pair sample for the per-pair difflib cost: for each of `queries` STMs, `per` pattern
 * ids uniform over the first `size` patterns (stream seed + 2); pair k belongs to STM k / per. The sampled
 * patterns are also copied one after another (sym, off: pair k's pattern is sym + off[k]), as the peer
 * times lists it made for the sample. */
typedef struct {
    uint32_t n, per;
    uint32_t *pid;
    uint32_t *sym;
    uint64_t *off; /* n + 1 entries */
} pair_sample;

static inline void pair_sample_make(uint64_t seed, uint32_t queries, uint32_t per, const patterns *p, uint32_t size,
                                    pair_sample *ps) {
    tdm_seq_gen *g = new_gen(seed + 2);
    uint32_t np = queries * per;
    ps->n = np, ps->per = per;
    ps->pid = xmalloc((size_t)np * sizeof *ps->pid);
    for (uint32_t k = 0; k < np; k++) ps->pid[k] = (uint32_t)tdm_seq_gen_uniform(g, size);
    tdm_seq_gen_free(g);
    ps->off = xmalloc(((size_t)np + 1) * sizeof *ps->off);
    ps->off[0] = 0;
    for (uint32_t k = 0; k < np; k++) ps->off[k + 1] = ps->off[k] + (p->off[ps->pid[k] + 1] - p->off[ps->pid[k]]);
    ps->sym = xmalloc((size_t)(ps->off[np] + 1) * sizeof *ps->sym);
    for (uint32_t k = 0; k < np; k++)
        memcpy(ps->sym + ps->off[k], p->sym + p->off[ps->pid[k]], (size_t)(ps->off[k + 1] - ps->off[k]) * sizeof *ps->sym);
}

static inline void pair_sample_free(pair_sample *ps) {
    free(ps->pid), free(ps->sym), free(ps->off);
    ps->pid = NULL, ps->sym = NULL, ps->off = NULL;
}

/* difflib's ratio of every pair of the sample (new matcher per pair: set_b(S) + blocks(P)) into ratio[]. */
static inline void pair_ratios(tdm_seq_matcher *m, const pair_sample *ps, uint32_t **stm, const size_t *stm_len,
                               double *ratio) {
    const tdm_seq_block *bl;
    size_t nbl, matches;
    int rc;
    for (uint32_t k = 0; k < ps->n; k++) {
        uint32_t i = k / ps->per;
        const uint32_t *P = ps->sym + ps->off[k];
        size_t nP = (size_t)(ps->off[k + 1] - ps->off[k]);
        if ((rc = tdm_seq_matcher_set_b(m, stm[i], stm_len[i], 0)) || (rc = tdm_seq_matcher_blocks(m, P, nP, &bl, &nbl, &matches)))
            die("matcher", rc);
        ratio[k] = tdm_seq_difflib_ratio(matches, nP, stm_len[i]);
    }
}

/* Times np pairs of `per` per STM, a new matcher per pair (fresh) or b set once per STM; pair k's pattern
 * is sym + off[pid ? pid[k] : k]. Returns seconds. */
static inline double time_pairs(tdm_seq_matcher *m, uint32_t per, uint32_t np, const uint32_t *sym,
                                const uint64_t *off, const uint32_t *pid, uint32_t **stm, const size_t *stm_len,
                                int fresh) {
    const tdm_seq_block *bl;
    size_t nbl, matches;
    volatile size_t sink = 0;
    double t0 = now_s();
    for (uint32_t k = 0; k < np; k++) {
        uint32_t i = k / per, at = pid ? pid[k] : k;
        if (fresh || k % per == 0) tdm_seq_matcher_set_b(m, stm[i], stm_len[i], 0);
        tdm_seq_matcher_blocks(m, sym + off[at], (size_t)(off[at + 1] - off[at]), &bl, &nbl, &matches);
        sink += matches;
    }
    (void)sink;
    return now_s() - t0;
}

#endif
