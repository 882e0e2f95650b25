/* bench_lattice.c: timings of the lattice engine for bench/RESULTS.md (spec section 8 protocol: median of
 * >= 20 runs after 3 warm-ups, host clock after synchronisation): lattice build, BFS sweeps and s-t paths
 * (CPU; GPU through the CUDA backend's entry points, CSR upload included, when a GPU is present),
 * structure analysis, the catalytic distance, XOR and GEMM. One line per measurement, as JSON with --json.
 * TANDEM_BENCH_QUICK=1 (or --quick) runs smaller sizes and fewer repetitions (a smoke run). */
#define BENCH_NAME "bench_lattice"
#include "bench_common.h" /* die, xmalloc, now_s, median */

#include "lattice/lattice_device.h"
#include "tandem/backend.h"
#include "tandem/lattice.h"

static int json, reps = 20;

static void report(const char *what, const char *shape, const char *backend, double *t, int n, double work) {
    double med = median(t, (size_t)n) * 1e3;
    if (json)
        printf("{\"op\": \"%s\", \"shape\": \"%s\", \"backend\": \"%s\", \"median_ms\": %.6f, \"runs\": %d, \"work\": %.0f}\n",
               what, shape, backend, med, n, work);
    else
        printf("%-22s %-14s %-8s %12.4f ms  (median of %d)\n", what, shape, backend, med, n);
    fflush(stdout);
}

/* Runs fn(arg) 3 times untimed, then reps times timed, and reports the median. */
#define TIME(what, shape, backend, work, stmt)                                                              \
    do {                                                                                                    \
        double t_[256];                                                                                     \
        for (int w_ = 0; w_ < 3; w_++) { stmt; }                                                            \
        for (int r_ = 0; r_ < reps; r_++) {                                                                 \
            double t0_ = now_s();                                                                           \
            stmt;                                                                                           \
            t_[r_] = now_s() - t0_;                                                                         \
        }                                                                                                   \
        report(what, shape, backend, t_, reps, work);                                                       \
    } while (0)

int main(int argc, char **argv) {
    int quick = getenv("TANDEM_BENCH_QUICK") && !strcmp(getenv("TANDEM_BENCH_QUICK"), "1");
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else {
            fprintf(stderr, "usage: bench_lattice [--json] [--quick]\n");
            return 2;
        }
    }
    if (quick) reps = 3;
    tdm_config cfg;
    tdm_config_init(&cfg);
    cfg.sp_cache = 0; /* every path computed */
    tdm_ctx *ctx;
    int rc = tdm_init(&ctx, &cfg);
    if (rc) die("tdm_init", rc);
    /* CPU measurements use a CPU-only context, so that a GPU present cannot take them over. */
    tdm_ctx *cpu_ctx;
    tdm_config cc = cfg;
    cc.device = TDM_DEVICE_CPU;
    if ((rc = tdm_init(&cpu_ctx, &cc))) die("tdm_init", rc);
    const tdm_backend *gpu = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
    if (gpu && !gpu->lattice) gpu = NULL;
    fprintf(stderr, "bench_lattice: %d threads, GPU %s\n", tdm_ctx_threads(ctx), gpu ? gpu->description : "none");

    static const int shapes[][2] = {{4, 10}, {4, 18}, {4, 32}, {5, 16}, {3, 100}, {2, 1000}};
    const int nshapes = quick ? 2 : (int)(sizeof shapes / sizeof *shapes);
    for (int i = 0; i < nshapes; i++) {
        int d = shapes[i][0], L = shapes[i][1];
        char shape[32];
        snprintf(shape, sizeof shape, "%dD/%d", d, L);
        tdm_lattice *lat = NULL;
        TIME("build", shape, "cpu", 0, {
            tdm_lattice_free(lat);
            if ((rc = tdm_lattice_new(cpu_ctx, d, L, 0, &lat))) die("build", rc);
        });
        tdm_lattice_csr g;
        tdm_lattice_get_csr(lat, &g);
        const double arcs = (double)g.row_ptr[g.nvertices];
        int32_t *dist = xmalloc((size_t)g.nvertices * 4);
        int64_t s = 0, t = g.nvertices - 1;
        tdm_lattice_path p;
        TIME("bfs sweep", shape, "cpu", arcs, {
            if ((rc = tdm_lattice_bfs_multi(cpu_ctx, &g, &s, 1, dist, NULL))) die("sweep", rc);
        });
        TIME("path 0->V-1", shape, "cpu", arcs, {
            if ((rc = tdm_lattice_sp(cpu_ctx, &g, s, t, TDM_DEVICE_CPU, &p))) die("path", rc);
            tdm_lattice_path_release(&p);
        });
        if (gpu) {
            TIME("bfs sweep+upload", shape, "cuda", arcs, {
                if ((rc = gpu->lattice->bfs_dist(gpu, &g, s, dist))) die("gpu sweep", rc);
            });
            TIME("path 0->V-1", shape, "cuda", arcs, {
                if ((rc = tdm_lattice_sp(ctx, &g, s, t, TDM_DEVICE_CUDA, &p))) die("gpu path", rc);
                tdm_lattice_path_release(&p);
            });
        }
        free(dist);
        tdm_lattice_free(lat);
    }

    /* Analysis and the catalytic distance (CPU). */
    static const int ashapes[][2] = {{4, 8}, {4, 10}, {5, 10}};
    for (int i = 0; i < (quick ? 1 : 3); i++) {
        tdm_lattice *lat;
        if ((rc = tdm_lattice_new(cpu_ctx, ashapes[i][0], ashapes[i][1], 0, &lat))) die("build", rc);
        tdm_lattice_csr g;
        tdm_lattice_get_csr(lat, &g);
        char shape[32];
        snprintf(shape, sizeof shape, "%dD/%d", ashapes[i][0], ashapes[i][1]);
        tdm_lattice_analysis a;
        TIME("analyze (all)", shape, "cpu", 0, {
            if ((rc = tdm_lattice_analyze(cpu_ctx, &g, TDM_LATTICE_ANALYZE_ALL, &a))) die("analyze", rc);
            tdm_lattice_analysis_release(&a);
        });
        if (i == 1) {
            const int64_t K = 36;
            tdm_lattice_aux *aux;
            if ((rc = tdm_lattice_aux_new(cpu_ctx, (size_t)(K + 1) * 8 * (size_t)g.nvertices, &aux))) die("aux", rc);
            memset(tdm_lattice_aux_data(aux), 0x5a, tdm_lattice_aux_bytes(aux));
            uint64_t seed = 1;
            int64_t dd;
            TIME("catalytic K=36", shape, "cpu", 0, {
                if ((rc = tdm_lattice_catalytic_distance(cpu_ctx, &g, aux, 0, g.nvertices - 1, K, &seed, 0, &dd))) die("catalytic", rc);
            });
            tdm_lattice_aux_free(aux);
        }
        tdm_lattice_free(lat);
    }

    /* XOR: 5 bytes and 10 MB. */
    static const size_t xs[] = {5, 10u << 20};
    for (int i = 0; i < 2; i++) {
        size_t n = quick && i ? 1u << 20 : xs[i];
        uint8_t *buf = xmalloc(n), key[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
        memset(buf, 7, n);
        tdm_lattice_key k = {key, 16, 0};
        char shape[32];
        snprintf(shape, sizeof shape, "%zu B", n);
        TIME("xor", shape, "cpu", (double)n, {
            if ((rc = tdm_lattice_xor(cpu_ctx, buf, buf, n, &k, 0))) die("xor", rc);
        });
        if (gpu) TIME("xor+transfers", shape, "cuda", (double)n, {
            if ((rc = gpu->lattice->xor_key(gpu, buf, buf, n, key, 16, 0))) die("gpu xor", rc);
        });
        free(buf);
    }

    /* GEMM 1024^2 f32 and 10 x 256^2 batched. */
    const int64_t N = quick ? 256 : 1024;
    float *A = xmalloc((size_t)N * N * 4), *B = xmalloc((size_t)N * N * 4), *C = xmalloc((size_t)N * N * 4);
    for (int64_t i = 0; i < N * N; i++) A[i] = (float)(i % 7) * 0.25f, B[i] = (float)(i % 5) * 0.5f;
    char shape[32];
    snprintf(shape, sizeof shape, "%lld^2 f32", (long long)N);
    TIME("gemm", shape, "cpu", 2.0 * N * N * N, {
        if ((rc = tdm_lattice_gemm(cpu_ctx, TDM_LATTICE_F32, 0, 0, N, N, N, 1, A, N, B, N, 0, C, N))) die("gemm", rc);
    });
    if (gpu) TIME("gemm+transfers", shape, "cuda", 2.0 * N * N * N, {
        if ((rc = gpu->lattice->gemm(gpu, TDM_LATTICE_F32, 0, 0, N, N, N, 1, A, N, 0, B, N, 0, 0, C, N, 0, 1))) die("gpu gemm", rc);
    });
    TIME("gemm batched", N >= 1024 ? "10 x 256^2 f32" : "1 x 256^2 f32", "cpu", 2.0 * 256 * 256 * 256 * 10, {
        if ((rc = tdm_lattice_gemm_batched(cpu_ctx, TDM_LATTICE_F32, 0, 0, 256, 256, 256, 1, A, 256, 65536, B, 256, 65536, 0, C, 256,
                                           65536, N >= 1024 ? 10 : 1)))
            die("gemm batched", rc);
    });
    free(A), free(B), free(C);
    tdm_destroy(cpu_ctx);
    tdm_destroy(ctx);
    return 0;
}
