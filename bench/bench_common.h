/* bench_common.h: what the sequence benchmarks share (bench_seq.c, bench_seq_gpu.c): error exits, timing,
 * the shared generator's patterns and the STMs drawn from them. Both programs must feed the engines
 * exactly the same inputs, so these live once. Header-only, like tests/unit/unit_common.h; define
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

#endif
