/* bench_prof.c: the profiler's overhead against the §6.5 budget: disabled <= 5 ns per site (one relaxed
 * load and a branch), enabled <= 0.25 µs per CPU record and <= 5 µs host time per GPU record, <= 1 % of
 * run time for ops of >= 200 µs (the 10^6-scope run).
 *
 * What it runs (each figure is the median of --reps repetitions, after one warm-up):
 *   1. disabled: N scopes (TANDEM_PROF_BEGIN/END) with the profiler off, against the same loop without
 *      them; per site = (t_scopes - t_empty) / N. The loop body is one volatile store in both.
 *   2. enabled: N scopes with the profiler on, rings large enough (no drops), then with 1,024 records of
 *      capacity (every record recycles a block: the overflow path); per record = (t_on - t_empty) / N.
 *   3. the 10^6-scope run: 10^6 scopes around a body of about --body-us µs of arithmetic, profiler off and
 *      on; the overhead fraction, and what the measured per-record cost makes of it for 200 µs ops.
 *   4. with a CUDA backend: host time of a 4-byte H2D copy through the backend (two event records and a
 *      span when on) off and on: the GPU record's host cost. Skipped without a GPU.
 * Timing: the thread's CPU time (see now_ns), the wall clock with --wall.
 * usage: bench_prof [--n N] [--reps R] [--scopes S] [--body-us B] [--wall] */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tandem/backend.h"
#include "tandem/prof.h"

static volatile unsigned long sink;

/* The loops are timed by this thread's CPU time, not the wall clock: on a machine shared with other jobs a
 * wall clock also counts the time this thread waited for a core, which says nothing about the profiler.
 * (Cache and memory interference from the other jobs still counts.) --wall switches to CLOCK_MONOTONIC. */
static clockid_t bench_clock = CLOCK_THREAD_CPUTIME_ID;

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(bench_clock, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double med(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void start(uint32_t cap) {
    tdm_prof_opts o;
    tdm_prof_opts_init(&o);
    o.capacity = cap;
    if (tdm_prof_start(&o)) {
        fprintf(stderr, "bench_prof: %s\n", tdm_last_error());
        exit(1);
    }
}

__attribute__((noinline)) static double loop_empty(long n) {
    double t = now_ns();
    for (long i = 0; i < n; i++) sink = (unsigned long)i;
    return now_ns() - t;
}

__attribute__((noinline)) static double loop_scopes(long n) {
    double t = now_ns();
    for (long i = 0; i < n; i++) {
        TANDEM_PROF_BEGIN(s, "bench.site");
        sink = (unsigned long)i;
        TANDEM_PROF_END(s);
    }
    return now_ns() - t;
}

/* About us microseconds of dependent arithmetic (calibrated once). */
static long body_iters;
__attribute__((noinline)) static void body(void) {
    unsigned long x = sink;
    for (long i = 0; i < body_iters; i++) x = x * 6364136223846793005ul + 1442695040888963407ul;
    sink = x;
}

__attribute__((noinline)) static double loop_body(long n, int scoped) {
    double t = now_ns();
    for (long i = 0; i < n; i++) {
        if (scoped) {
            TANDEM_PROF_BEGIN(s, "bench.op");
            body();
            TANDEM_PROF_END(s);
        } else {
            body();
        }
    }
    return now_ns() - t;
}

int main(int argc, char **argv) {
    long n = 20000000, scopes = 1000000;
    int reps = 7;
    double body_us = 2.0;
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--wall")) {
            bench_clock = CLOCK_MONOTONIC;
            i--;
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "usage: bench_prof [--n N] [--reps R] [--scopes S] [--body-us B] [--wall]\n");
            return 2;
        }
        if (!strcmp(argv[i], "--n")) n = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--scopes")) scopes = atol(argv[i + 1]);
        else if (!strcmp(argv[i], "--body-us")) body_us = atof(argv[i + 1]);
        else {
            fprintf(stderr, "usage: bench_prof [--n N] [--reps R] [--scopes S] [--body-us B] [--wall]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 101) reps = 7;
    double *v = calloc((size_t)reps, sizeof *v), *w = calloc((size_t)reps, sizeof *w);
    printf("bench_prof: n %ld, reps %d (medians), scopes %ld, body %.1f us, timed by %s\n", n, reps, scopes, body_us,
           bench_clock == CLOCK_MONOTONIC ? "the wall clock" : "this thread's CPU time");

    /* 1. disabled */
    loop_empty(n), loop_scopes(n);
    for (int r = 0; r < reps; r++) v[r] = loop_empty(n), w[r] = loop_scopes(n);
    double e = med(v, reps), s = med(w, reps), off = (s - e) / (double)n;
    printf("disabled: %.3f ns per site (loop %.3f ns/iter with sites, %.3f without)  budget 5 ns: %s\n", off,
           s / (double)n, e / (double)n, off <= 5.0 ? "met" : "MISSED");

    /* 2. enabled: rings without drops, then the overflow path. */
    long m = n / 20 < 1000000 ? n / 20 : 1000000;
    uint32_t cap = (uint32_t)(m * 2 > 1024 ? m * 2 : 1024);
    for (int k = 0; k < 2; k++) {
        for (int r = 0; r < reps; r++) {
            tdm_prof_reset();
            start(k ? 1024 : cap);
            v[r] = loop_empty(m);
            w[r] = loop_scopes(m);
        }
        tdm_prof_stats st;
        tdm_prof_stats_get(&st);
        double on = (med(w, reps) - med(v, reps)) / (double)m;
        printf("enabled%s: %.1f ns per CPU record (%ld records, %llu kept, %llu dropped)  budget 250 ns: %s\n",
               k ? ", overflowing 1,024-record rings" : "", on, m, (unsigned long long)st.kept,
               (unsigned long long)st.dropped, on <= 250.0 ? "met" : "MISSED");
    }
    tdm_prof_reset();

    /* 3. the 10^6-scope run */
    body_iters = 1000;
    double t = loop_body(1000, 0);
    body_iters = (long)(1000.0 * body_us * 1000.0 / (t / 1000.0));
    if (body_iters < 1) body_iters = 1;
    int reps3 = reps < 3 ? reps : 3;
    for (int r = 0; r < reps3; r++) {
        v[r] = loop_body(scopes, 0);
        tdm_prof_reset();
        start(scopes + 4096 > (1 << 26) ? 1 << 26 : (uint32_t)(scopes + 4096));
        w[r] = loop_body(scopes, 1);
        tdm_prof_stop();
    }
    double base = med(v, reps3), prof = med(w, reps3), per = (prof - base) / (double)scopes;
    tdm_prof_stats st;
    tdm_prof_stats_get(&st);
    printf("10^6-scope run: %ld scopes of %.2f us: %.3f s off, %.3f s on: overhead %.2f %% (%.1f ns per scope; %llu "
           "records, %llu dropped)\n", scopes, base / (double)scopes / 1e3, base / 1e9, prof / 1e9,
           100.0 * (prof - base) / base, per, (unsigned long long)st.recorded, (unsigned long long)st.dropped);
    printf("  for ops of 200 us that is %.4f %% of run time  budget 1 %%: %s\n", 100.0 * per / 200000.0,
           per / 200000.0 <= 0.01 ? "met" : "MISSED");
    tdm_prof_reset();

    /* 4. GPU records: host cost of the two event records and the span around a tiny copy. Wall clock: the
     * copies block in the driver, whose waiting may or may not count as this thread's CPU time. */
    bench_clock = CLOCK_MONOTONIC;
    tdm_ctx *ctx = NULL;
    const tdm_backend *b = NULL;
    if (!tdm_init(&ctx, NULL)) b = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
    if (!b) {
        printf("GPU record: not measured (no CUDA backend on this machine)\n");
    } else {
        void *d = NULL;
        unsigned host = 7;
        int g = 20000;
        if (b->alloc(b, 4, &d)) {
            printf("GPU record: not measured (device allocation failed)\n");
        } else {
            for (int r = 0; r < reps; r++) {
                tdm_prof_reset();
                double t0 = now_ns();
                for (int i = 0; i < g; i++) b->copy(b, d, &host, 4, TDM_COPY_H2D);
                v[r] = now_ns() - t0;
                start(1 << 20);
                t0 = now_ns();
                for (int i = 0; i < g; i++) b->copy(b, d, &host, 4, TDM_COPY_H2D);
                w[r] = now_ns() - t0;
                tdm_prof_flush();
            }
            double gpu = (med(w, reps) - med(v, reps)) / g;
            printf("GPU record: %.2f us host time per device span (%s, %d synchronous 4-byte copies)  budget 5 us: %s\n",
                   gpu / 1e3, b->description, g, gpu <= 5000.0 ? "met" : "MISSED");
            b->release(b, d);
        }
    }
    tdm_prof_reset();
    tdm_destroy(ctx);
    free(v);
    free(w);
    return 0;
}
