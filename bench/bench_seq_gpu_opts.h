/* bench_seq_gpu_opts.h: the command line of bench_seq_gpu (bench_seq_gpu.c): its options, their defaults,
 * the quick mode (--quick or TANDEM_BENCH_QUICK=1) and the usage text. Apart so that the benchmark file
 * reads as what it measures; bench/CMakeLists.txt builds only bench_*.c files, so this header is no program. */
#ifndef TANDEM_BENCH_SEQ_GPU_OPTS_H
#define TANDEM_BENCH_SEQ_GPU_OPTS_H

#include "tandem/seq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 8

enum { BK_CUDA = 0, BK_CPU = 1 };
static const char *const BK_NAME[] = {"cuda", "cpu"};

typedef struct {
    uint32_t sizes[MAX_SIZES];
    int nsizes;
    int backends[2];
    int nbackends;
    int threads;            /* CPU threads (the context's and every query's) */
    uint32_t queries;       /* STMs */
    uint32_t min_queries;   /* a cell stops at the budget only after this many */
    uint32_t batch;         /* queries per tdm_seq_engine_query_batch call */
    int batch_reps;
    uint32_t learns;        /* learns timed alone, and again learn + visible query */
    uint32_t sync_patterns; /* patterns per timed sync */
    int sync_reps;
    uint32_t verify;        /* queries per cell compared across backends */
    uint32_t top_k;
    uint64_t seed;
    double budget_s;        /* per cell, per batch loop and per learn loop */
    int metrics[2];
    int nmetrics;
    const char *json;
    int quick, require_gpu;
} options;

/* ---- options --------------------------------------------------------------------------------------- */

static const char *usage =
    "usage: bench_seq_gpu [--sizes N,N,...] [--backends cuda,cpu] [--threads N] [--queries N] [--min-queries N]\n"
    "                     [--budget SECONDS] [--batch N] [--batch-reps N] [--learns N] [--sync-patterns N]\n"
    "                     [--sync-reps N] [--verify N] [--top-k K] [--metrics lcs,difflib] [--seed S]\n"
    "                     [--json FILE] [--quick] [--require-gpu]\n"
    "Defaults: --sizes 1000,10000,100000,1000000,10000000 --backends cuda,cpu --threads <online cores>\n"
    "          --queries 200 --min-queries 8 --budget 2 --batch 256 --batch-reps 3 --learns 1000\n"
    "          --sync-patterns 1000 --sync-reps 3 --verify 4 --top-k 100 --metrics lcs,difflib --seed 42\n"
    "--quick (or TANDEM_BENCH_QUICK=1): sizes 1000,10000, 20 queries, budget 0.3 s, batch 64, 100 learns,\n"
    "          one sync and one batch repetition, 2 queries verified per cell (a smoke run).\n"
    "--require-gpu: exit 1 when the cuda backend is asked for and cannot run (the GPU machine's runs).\n"
    "Each cell times queries one at a time until all are done, or the budget is spent and at least\n"
    "--min-queries ran. Exit status 1 also on any cross-backend mismatch, an answer computed elsewhere\n"
    "than the forced backend, or a learned pattern the next query did not return.\n";

static void parse_args(int argc, char **argv, options *o) {
    *o = (options){.sizes = {1000, 10000, 100000, 1000000, 10000000}, .nsizes = 5, .backends = {BK_CUDA, BK_CPU},
                   .nbackends = 2, .queries = 200, .min_queries = 8, .batch = 256, .batch_reps = 3, .learns = 1000,
                   .sync_patterns = 1000, .sync_reps = 3, .verify = 4, .top_k = 100, .seed = 42, .budget_s = 2.0,
                   .metrics = {TDM_SEQ_LCS, TDM_SEQ_DIFFLIB}, .nmetrics = 2};
    int set_sizes = 0, set_q = 0, set_budget = 0, set_batch = 0, set_learns = 0, set_verify = 0;
    const char *env = getenv("TANDEM_BENCH_QUICK");
    if (env && !strcmp(env, "1")) o->quick = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double list[MAX_SIZES];
        int n;
#define NEED_VALUE                                                                                         \
    if (!v) {                                                                                              \
        fprintf(stderr, "bench_seq_gpu: %s needs a value\n%s", a, usage);                                  \
        exit(2);                                                                                           \
    }                                                                                                      \
    i++;
#define UINT_VALUE(field, lo)                                                                              \
    NEED_VALUE                                                                                             \
    {                                                                                                      \
        char *end_;                                                                                        \
        unsigned long long x_ = strtoull(v, &end_, 10);                                                    \
        if (!*v || *end_ || x_ < (lo) || x_ > 1000000000ull) goto bad;                                     \
        field = (uint32_t)x_;                                                                              \
    }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            exit(0);
        } else if (!strcmp(a, "--quick")) o->quick = 1;
        else if (!strcmp(a, "--require-gpu")) o->require_gpu = 1;
        else if (!strcmp(a, "--sizes")) {
            NEED_VALUE
            if ((n = parse_list(v, list, MAX_SIZES)) <= 0) goto bad;
            for (int k = 0; k < n; k++) {
                if (!(list[k] >= 1 && list[k] <= 4e9)) goto bad;
                o->sizes[k] = (uint32_t)list[k];
            }
            o->nsizes = n, set_sizes = 1;
        } else if (!strcmp(a, "--backends")) {
            NEED_VALUE
            char buf[64];
            snprintf(buf, sizeof buf, "%s", v);
            o->nbackends = 0;
            for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                int k = !strcmp(t, "cuda") ? BK_CUDA : !strcmp(t, "cpu") ? BK_CPU : -1;
                if (k < 0 || o->nbackends == 2 || (o->nbackends == 1 && o->backends[0] == k)) goto bad;
                o->backends[o->nbackends++] = k;
            }
            if (!o->nbackends) goto bad;
        } else if (!strcmp(a, "--metrics")) {
            NEED_VALUE
            char buf[64];
            snprintf(buf, sizeof buf, "%s", v);
            o->nmetrics = 0;
            for (char *t = strtok(buf, ","); t && o->nmetrics < 2; t = strtok(NULL, ",")) {
                tdm_seq_metric m;
                if (tdm_seq_metric_parse(t, &m) || m == TDM_SEQ_CHAR) goto bad;
                o->metrics[o->nmetrics++] = m;
            }
            if (!o->nmetrics) goto bad;
        } else if (!strcmp(a, "--threads")) {
            uint32_t x;
            UINT_VALUE(x, 1)
            if (x > 1024) goto bad;
            o->threads = (int)x;
        } else if (!strcmp(a, "--queries")) {
            UINT_VALUE(o->queries, 1)
            set_q = 1;
        } else if (!strcmp(a, "--min-queries")) {
            UINT_VALUE(o->min_queries, 1)
        } else if (!strcmp(a, "--batch")) {
            UINT_VALUE(o->batch, 1)
            set_batch = 1;
        } else if (!strcmp(a, "--batch-reps")) {
            uint32_t x;
            UINT_VALUE(x, 1)
            if (x > 16) goto bad;
            o->batch_reps = (int)x;
        } else if (!strcmp(a, "--learns")) {
            UINT_VALUE(o->learns, 1)
            set_learns = 1;
        } else if (!strcmp(a, "--sync-patterns")) {
            UINT_VALUE(o->sync_patterns, 1)
        } else if (!strcmp(a, "--sync-reps")) {
            uint32_t x;
            UINT_VALUE(x, 1)
            if (x > 16) goto bad;
            o->sync_reps = (int)x;
        } else if (!strcmp(a, "--verify")) {
            NEED_VALUE
            char *end;
            unsigned long x = strtoul(v, &end, 10);
            if (!*v || *end || x > 1000000) goto bad;
            o->verify = (uint32_t)x, set_verify = 1;
        } else if (!strcmp(a, "--top-k")) {
            UINT_VALUE(o->top_k, 1)
        } else if (!strcmp(a, "--seed")) {
            NEED_VALUE
            o->seed = strtoull(v, NULL, 10);
        } else if (!strcmp(a, "--budget")) {
            NEED_VALUE
            if (!((o->budget_s = strtod(v, NULL)) > 0)) goto bad;
            set_budget = 1;
        } else if (!strcmp(a, "--json")) {
            NEED_VALUE
            o->json = v;
        } else {
            fprintf(stderr, "bench_seq_gpu: unknown option '%s'\n%s", a, usage);
            exit(2);
        }
        continue;
    bad:
        fprintf(stderr, "bench_seq_gpu: bad value for %s: '%s'\n%s", a, v ? v : "", usage);
        exit(2);
    }
    if (o->quick) {
        if (!set_sizes) o->sizes[0] = 1000, o->sizes[1] = 10000, o->nsizes = 2;
        if (!set_q) o->queries = 20;
        if (!set_budget) o->budget_s = 0.3;
        if (!set_batch) o->batch = 64;
        if (!set_learns) o->learns = 100;
        if (!set_verify) o->verify = 2;
        o->min_queries = o->min_queries < 4 ? o->min_queries : 4;
        o->batch_reps = 1, o->sync_reps = 1;
    }
    if (o->min_queries > o->queries) o->min_queries = o->queries;
    if (o->verify > o->queries) o->verify = o->queries;
    for (int k = 1; k < o->nsizes; k++)
        if (o->sizes[k] < o->sizes[k - 1]) {
            fprintf(stderr, "bench_seq_gpu: --sizes must be ascending\n");
            exit(2);
        }
}

#endif
