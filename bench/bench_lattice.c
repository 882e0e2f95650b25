/* bench_lattice.c: timings of the lattice engine for bench/RESULTS.md (spec section 8 protocol: median of
 * >= 20 runs after 3 warm-ups, host clock after synchronisation): lattice build, BFS sweeps and s-t paths
 * (CPU; GPU through the CUDA backend's entry points when a GPU is present: with the CSR resident on the
 * device, with an upload per call, and with each BFS kernel pinned), structure analysis, the catalytic
 * distance, XOR and GEMM. When built with igraph (libigraph-dev, bench/CMakeLists.txt), igraph's lattice
 * construction, BFS sweep and shortest path on the same shapes run beside ours in the same process, and
 * its distances and hop counts must equal ours (exit 1 otherwise). One line per measurement, as JSON with
 * --json. TANDEM_BENCH_QUICK=1 (or --quick) runs smaller sizes and fewer repetitions (a smoke run);
 * --large adds 4D/56 and 3D/215 (about 10^7 vertices) with 5 timed runs each instead of 20. */
#define BENCH_NAME "bench_lattice"
#include "bench_common.h" /* die, xmalloc, now_s, median */

#include "lattice/lattice_device.h"
#include "tandem/backend.h"
#include "tandem/lattice.h"

#ifdef TANDEM_HAVE_IGRAPH
#include <igraph.h>
#endif

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

#ifdef TANDEM_HAVE_IGRAPH
/* igraph's rows for the d-dimensional lattice of side L. igraph_square_lattice (open boundaries) numbers
 * vertices first coordinate fastest, ours last coordinate fastest; with equal sides that only renumbers
 * vertices and keeps each one's distance from the corner 0 (its digit sum in base L) and the far corner
 * V-1, so igraph's BFS distances from 0 must equal ours entry by entry and its 0 -> V-1 hop count ours. */
static void igraph_rows(int d, int L, const char *shape, const int32_t *dist, int64_t hops, double arcs) {
    igraph_vector_int_t dims, path;
    igraph_matrix_t idist; /* 1 x V distances (igraph_real_t) */
    igraph_vector_int_init(&dims, d);
    for (int i = 0; i < d; i++) VECTOR(dims)[i] = L;
    igraph_matrix_init(&idist, 0, 0);
    igraph_vector_int_init(&path, 0);
    igraph_t g;
    int have = 0;
    TIME("build", shape, "igraph", 0, {
        if (have) igraph_destroy(&g);
        if (igraph_square_lattice(&g, &dims, 1, 0, 0, NULL)) die("igraph_square_lattice", TDM_E_INVAL);
        have = 1;
    });
    const igraph_integer_t V = igraph_vcount(&g);
    /* igraph_distances from one source is igraph's fastest unweighted sweep here (igraph_bfs with its
     * distance output took 3x longer on 4D/18, igraph_bfs_simple about the same). */
    TIME("bfs sweep", shape, "igraph", arcs, {
        if (igraph_distances(&g, &idist, igraph_vss_1(0), igraph_vss_all(), IGRAPH_ALL)) die("igraph_distances", TDM_E_INVAL);
    });
    TIME("path 0->V-1", shape, "igraph", arcs, {
        if (igraph_get_shortest_path(&g, &path, NULL, 0, V - 1, IGRAPH_ALL)) die("igraph_get_shortest_path", TDM_E_INVAL);
    });
    int64_t bad = 0;
    for (igraph_integer_t v = 0; v < V; v++) bad += MATRIX(idist, 0, v) != (igraph_real_t)dist[v];
    const int64_t ihops = (int64_t)igraph_vector_int_size(&path) - 1;
    fprintf(stderr, "bench_lattice: igraph %s: %lld vertices, %lld distances differ from ours, hops %lld (ours %lld)\n",
            shape, (long long)V, (long long)bad, (long long)ihops, (long long)hops);
    if (bad || ihops != hops) {
        fprintf(stderr, "bench_lattice: igraph disagrees with the lattice engine on %s\n", shape);
        exit(1);
    }
    igraph_destroy(&g);
    igraph_vector_int_destroy(&dims);
    igraph_matrix_destroy(&idist);
    igraph_vector_int_destroy(&path);
}
#endif

int main(int argc, char **argv) {
    int quick = getenv("TANDEM_BENCH_QUICK") && !strcmp(getenv("TANDEM_BENCH_QUICK"), "1");
    int large = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--large")) large = 1;
        else {
            fprintf(stderr, "usage: bench_lattice [--json] [--quick] [--large]\n"
                            "  --large  also 4D/56 and 3D/215 (about 10^7 vertices; 5 timed runs each)\n");
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
#ifdef TANDEM_HAVE_IGRAPH
    fprintf(stderr, "bench_lattice: igraph %s peer rows on (same lattices, same process)\n", TANDEM_IGRAPH_VERSION);
#else
    fprintf(stderr, "bench_lattice: built without igraph (libigraph-dev not found at configure time): no peer rows\n");
#endif

    /* The last two (--large): about 10^7 vertices, 400 MB of CSR each. */
    static const int shapes[][2] = {{4, 10}, {4, 18}, {4, 32}, {5, 16}, {3, 100}, {2, 1000}, {4, 56}, {3, 215}};
    const int nall = (int)(sizeof shapes / sizeof *shapes), nshapes = quick ? 2 : large ? nall : nall - 2;
    const int base_reps = reps;
    for (int i = 0; i < nshapes; i++) {
        int d = shapes[i][0], L = shapes[i][1];
        reps = i >= nall - 2 ? 5 : base_reps; /* a 10^7-vertex sweep takes a quarter second on one core */
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
        int64_t hops = -1;
        TIME("path 0->V-1", shape, "cpu", arcs, {
            if ((rc = tdm_lattice_sp(cpu_ctx, &g, s, t, TDM_DEVICE_CPU, &p))) die("path", rc);
            hops = p.hops;
            tdm_lattice_path_release(&p);
        });
        /* The sweep above left the CPU's distances from s in dist: the peers' and the GPU's must match. */
        int32_t *dev_dist = gpu ? xmalloc((size_t)g.nvertices * 4) : NULL;
        if (gpu) {
            /* Resident: the lattice's CSR stays on the device after the first call (keyed by its id). */
            TIME("bfs sweep", shape, "cuda", arcs, {
                if ((rc = gpu->lattice->bfs_dist(gpu, &g, s, dev_dist))) die("gpu sweep", rc);
            });
            if (memcmp(dev_dist, dist, (size_t)g.nvertices * 4)) die("gpu sweep differs from the CPU's", TDM_E_INVAL);
            /* The same graph without an id (anonymous): uploaded at every call. */
            tdm_lattice_csr anon = g;
            anon.id = 0;
            TIME("bfs sweep+upload", shape, "cuda", arcs, {
                if ((rc = gpu->lattice->bfs_dist(gpu, &anon, s, dev_dist))) die("gpu sweep", rc);
            });
            /* Each kernel pinned (resident graph): the default's choice and the alternative, side by side. */
            static const int kernels[] = {TDM_LAT_BFS_KERNEL_LEVELS, TDM_LAT_BFS_KERNEL_PERSISTENT};
            static const char *const knames[] = {"bfs sweep levels", "bfs sweep persistent"};
            for (int k = 0; k < 2 && gpu->lattice->bfs_kernel; k++) {
                if (gpu->lattice->bfs_kernel(gpu, kernels[k]) != TDM_OK) continue;
                TIME(knames[k], shape, "cuda", arcs, {
                    if ((rc = gpu->lattice->bfs_dist(gpu, &g, s, dev_dist))) die("gpu sweep", rc);
                });
                if (memcmp(dev_dist, dist, (size_t)g.nvertices * 4)) die("gpu sweep differs from the CPU's", TDM_E_INVAL);
            }
            if (gpu->lattice->bfs_kernel) gpu->lattice->bfs_kernel(gpu, TDM_LAT_BFS_KERNEL_AUTO);
            TIME("path 0->V-1", shape, "cuda", arcs, {
                if ((rc = tdm_lattice_sp(ctx, &g, s, t, TDM_DEVICE_CUDA, &p))) die("gpu path", rc);
                if (p.hops != hops) die("gpu path length differs from the CPU's", TDM_E_INVAL);
                tdm_lattice_path_release(&p);
            });
        }
        free(dev_dist);
#ifdef TANDEM_HAVE_IGRAPH
        igraph_rows(d, L, shape, dist, hops, arcs);
#endif
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
