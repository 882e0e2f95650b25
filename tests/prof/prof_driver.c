/* prof_driver.c: a program the profiler's Python tests run to get a trace and a report with everything a
 * session can hold, on any machine: several threads recording nested scopes (three deep), synthetic device
 * spans on two stream pseudo-threads with transfer bytes, device memory samples with pressure levels,
 * routing decisions with predictions (so the scatter draws) and fallbacks, and an init span.
 *
 * usage: prof_driver OUT_PREFIX [CAPACITY] [SCOPES_PER_THREAD]
 * writes OUT_PREFIX.trace.json and OUT_PREFIX.html and prints {"recorded": N, "dropped": D} on stdout. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tandem/prof.h"

static int per_thread = 200;

static void busy(int n) {
    volatile double x = 1.0;
    for (int i = 0; i < n; i++) x = x * 1.0000001 + 1e-9;
}

static void *worker(void *arg) {
    int id = (int)(long)arg;
    for (int k = 0; k < per_thread; k++) {
        TANDEM_PROF_BEGIN(a, "driver.outer");
        tdm_prof_annotate("cpu", 3, 0, 0);
        busy(200 + 50 * id);
        TANDEM_PROF_BEGIN(b, "driver.middle \"quoted\" \\ name");
        busy(100);
        TANDEM_PROF_BEGIN(c, "driver.inner");
        TANDEM_PROF_BEGIN(odd, "driver.odd\x01\xff<b>&"); /* a control character, a byte that is not UTF-8, markup */
        TANDEM_PROF_END(odd);
        busy(50);
        TANDEM_PROF_END(c);
        TANDEM_PROF_END(b);
        if (k % 10 == 0) {
            /* A routed op: the decision's measured time is the scope's own duration. */
            TANDEM_PROF_BEGIN(r, "driver.routed");
            tdm_prof_route("driver.routed", k % 20 ? "cpu" : "cuda:0", k % 20 ? "MODEL_CPU" : "MODEL_GPU",
                           2000 + 100 * (uint64_t)k, 5000 + 50 * (uint64_t)k);
            busy(300);
            TANDEM_PROF_END(r);
        }
        TANDEM_PROF_END(a);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: prof_driver OUT_PREFIX [CAPACITY] [SCOPES_PER_THREAD]\n");
        return 2;
    }
    tdm_prof_opts o;
    tdm_prof_opts_init(&o);
    if (argc > 2) o.capacity = (uint32_t)strtoul(argv[2], NULL, 10);
    if (argc > 3) per_thread = atoi(argv[3]);
    int rc = tdm_prof_start(&o);
    if (rc) {
        fprintf(stderr, "prof_driver: %s: %s\n", tdm_strerror(rc), tdm_last_error());
        return 1;
    }
    tdm_prof_set_device_info("synthetic device", "0.0");
    uint32_t init = tdm_prof_intern("driver.init"), kern = tdm_prof_intern("driver.kernel");
    tdm_prof_scope s = tdm_prof_begin(init, TDM_PROF_CAT_INIT);
    busy(1000);
    tdm_prof_end(s, 0);
    pthread_t t[3];
    for (long i = 0; i < 3; i++) pthread_create(&t[i], NULL, worker, (void *)i);
    /* Device spans as the CUDA module reports them: H2D, kernel, D2H in order on each stream. */
    uint64_t base = tdm_prof_now();
    for (int k = 0; k < 40; k++) {
        int stream = k % 2;
        uint64_t ts = base + (uint64_t)k * 250000;
        tdm_prof_span sp[3] = {
            {.name = kern, .cat = TDM_PROF_CAT_H2D, .stream = stream, .ts = ts, .dur = 40000, .backend = "cuda:0",
             .h2d_bytes = 4096, .route = -1},
            {.name = kern, .cat = TDM_PROF_CAT_GPU, .stream = stream, .ts = ts + 40000, .dur = 150000, .backend = "cuda:0",
             .work = 100, .mem_used = (uint64_t)(k + 1) << 20, .mem_reserved = (uint64_t)(k + 8) << 20, .route = -1},
            {.name = kern, .cat = TDM_PROF_CAT_D2H, .stream = stream, .ts = ts + 190000, .dur = 30000, .backend = "cuda:0",
             .d2h_bytes = 1024, .route = -1}};
        for (int j = 0; j < 3; j++) tdm_prof_record(&sp[j]);
        tdm_prof_mem_sample((uint64_t)(k + 1) << 20, (uint64_t)(k + 8) << 20, k / 10);
    }
    tdm_prof_fallback("driver.kernel", "cuda:0", "cpu", "OOM_FALLBACK");
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    char path[4096];
    snprintf(path, sizeof path, "%s.trace.json", argv[1]);
    if ((rc = tdm_prof_export_trace(path)) == 0) {
        snprintf(path, sizeof path, "%s.html", argv[1]);
        rc = tdm_prof_export_html(path);
    }
    if (rc) {
        fprintf(stderr, "prof_driver: %s: %s\n", tdm_strerror(rc), tdm_last_error());
        return 1;
    }
    tdm_prof_stats st;
    tdm_prof_stats_get(&st);
    printf("{\"recorded\": %llu, \"dropped\": %llu}\n", (unsigned long long)st.recorded, (unsigned long long)st.dropped);
    tdm_prof_reset();
    return 0;
}
