/* test_lattice_cross.c: the lattice engine's CUDA kernels against the CPU reference on seeded random inputs
 * (design principle 6). BFS paths and sweeps, XOR (explicit and seeded keys, misaligned buffers) and the
 * element-wise ops other than exp must be bit-identical; GEMM, batched GEMM, exp and sums must lie within
 * the spec's section 5 bounds; min/max must be the same element (signed zeros included, NaN where NaN).
 *
 * The CPU half checks the CPU's paths against the closed-form lattice oracle, so it can fail on its own.
 * Without a GPU the driver prints "CUDA half: NOT RUN (<reason>)" once the CPU half has passed, which CTest
 * reads as skipped; TANDEM_TEST_REQUIRE_GPU=1 turns that into a failure (the GPU machine). Paths go through
 * the library (tdm_lattice_sp with a CUDA preference must answer on the device); the other ops call the
 * backend's lattice entry points directly, so a silent CPU fallback cannot pass for a device result. Paths
 * and sweeps run once per device BFS kernel (persistent cooperative, launch per level), and over lattices
 * kept resident on the device interleaved with anonymous graphs that are uploaded at every call. */
#include "../unit/lattice_oracle.h"
#include "lattice/lattice_device.h"
#include "tandem/backend.h"
#include "tandem/lattice.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;
static uint64_t next64(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static uint64_t below(uint64_t n) { return next64() % n; }
static double unit(void) { return (double)(next64() >> 11) * 0x1.0p-53; }

static long failures;
#define CHECK(cond, ...)                                                                                    \
    do {                                                                                                    \
        if (!(cond)) {                                                                                      \
            if (++failures <= 20) {                                                                         \
                printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                 \
                printf(__VA_ARGS__);                                                                        \
                printf("\n");                                                                               \
            }                                                                                               \
        }                                                                                                   \
    } while (0)

static tdm_ctx *make_ctx(int device) {
    tdm_config cfg;
    tdm_config_init(&cfg);
    cfg.device = device;
    cfg.strict = 0;
    cfg.sp_cache = 0; /* every path computed by the backend under test */
    tdm_ctx *ctx;
    if (tdm_init(&ctx, &cfg)) {
        printf("tdm_init failed: %s\n", tdm_last_error());
        exit(1);
    }
    return ctx;
}

/* ---- paths and sweeps ---------------------------------------------------------------------------------- */

/* queries: per lattice shape; rounds: random general graphs (10 queries each). */
static void cross_paths(tdm_ctx *cpu, tdm_ctx *gpu, int run_gpu, int queries, int rounds) {
    static const int shapes[][2] = {{2, 3}, {4, 10}, {3, 10}, {4, 18}, {2, 200}, {5, 8}, {1, 500}, {6, 4}};
    /* Few rounds (the sanitizers) also keep the shapes small: racecheck makes each level's launch slow. */
    int64_t max_v = rounds < 6 ? 600 : 60000, max_hops = rounds < 6 ? 100 : INT64_MAX;
    for (size_t sh = 0; sh < sizeof shapes / sizeof *shapes + 6; sh++) {
        int d;
        int64_t L;
        if (sh < sizeof shapes / sizeof *shapes) d = shapes[sh][0], L = shapes[sh][1];
        else {
            d = (int)(1 + below(5));
            L = 2;
            while (ipow(L + 1, d) <= max_v) L++;
            L = 2 + (int64_t)below((uint64_t)L - 1);
        }
        if ((int64_t)d * (L - 1) > max_hops) continue; /* one kernel launch per level: too slow under racecheck */
        tdm_lattice *lat;
        if (tdm_lattice_new(cpu, d, L, 0, &lat)) {
            CHECK(0, "%dD/%lld: %s", d, (long long)L, tdm_last_error());
            continue;
        }
        /* The closed-form path of the farthest pair has d * (L - 1) hops (a 1D shape can have 60,000). */
        int64_t *want = malloc(((size_t)d * (size_t)(L - 1) + 1) * sizeof *want);
        tdm_lattice_csr g;
        tdm_lattice_get_csr(lat, &g);
        int32_t *dc = malloc((size_t)g.nvertices * 4), *dg = malloc((size_t)g.nvertices * 4);
        for (int q = 0; q < queries; q++) {
            int64_t s = (int64_t)below((uint64_t)g.nvertices), t = (int64_t)below((uint64_t)g.nvertices);
            if (q == 0) s = 0, t = g.nvertices - 1;
            int64_t hops = oracle_path(d, L, s, t, want);
            tdm_lattice_path pc, pg;
            int rc = tdm_lattice_sp(cpu, &g, s, t, TDM_DEVICE_CPU, &pc);
            CHECK(rc == TDM_OK && pc.hops == hops && !memcmp(pc.vertex, want, (size_t)(hops + 1) * 8),
                  "CPU path %dD/%lld %lld->%lld differs from the closed form", d, (long long)L, (long long)s, (long long)t);
            if (run_gpu) {
                rc = tdm_lattice_sp(gpu, &g, s, t, TDM_DEVICE_CUDA, &pg);
                CHECK(rc == TDM_OK && strncmp(pg.backend, "cuda", 4) == 0, "GPU path %dD/%lld %lld->%lld: rc %d backend %s (%s)", d,
                      (long long)L, (long long)s, (long long)t, rc, rc == TDM_OK ? pg.backend : "-", tdm_last_error());
                if (rc == TDM_OK) {
                    CHECK(pg.hops == pc.hops && !memcmp(pg.vertex, pc.vertex, (size_t)(pc.hops + 1) * 8),
                          "GPU path %dD/%lld %lld->%lld differs from the CPU's", d, (long long)L, (long long)s, (long long)t);
                    tdm_lattice_path_release(&pg);
                }
            }
            tdm_lattice_path_release(&pc);
            if (run_gpu && q < 3) {
                tdm_lattice_bfs_multi(cpu, &g, &s, 1, dc, NULL);
                const tdm_backend *cb = tdm_backend_find(gpu, TDM_BACKEND_CUDA);
                rc = cb->lattice->bfs_dist(cb, &g, s, dg);
                CHECK(rc == TDM_OK && !memcmp(dc, dg, (size_t)g.nvertices * 4), "GPU sweep %dD/%lld from %lld differs", d,
                      (long long)L, (long long)s);
            }
        }
        free(dc), free(dg);
        free(want);
        tdm_lattice_free(lat);
    }
    /* Random general graphs, unreachable targets included. */
    for (int round = 0; round < rounds && run_gpu; round++) {
        int n = (int)(2 + below(300));
        double p = unit() * 4.0 / n;
        unsigned char *adj = calloc((size_t)n * n, 1);
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                if (unit() < p) adj[i * n + j] = adj[j * n + i] = 1;
        int64_t *row = malloc((size_t)(n + 1) * 8), k = 0;
        int32_t *col = malloc((size_t)n * n * 4 + 4);
        for (int i = 0; i < n; i++) {
            row[i] = k;
            for (int j = 0; j < n; j++)
                if (adj[i * n + j]) col[k++] = j;
        }
        row[n] = k;
        tdm_lattice_csr g = {n, row, col, 0};
        for (int q = 0; q < 10; q++) {
            int64_t s = (int64_t)below((uint64_t)n), t = (int64_t)below((uint64_t)n);
            tdm_lattice_path pc, pg;
            int rc1 = tdm_lattice_sp(cpu, &g, s, t, TDM_DEVICE_CPU, &pc), rc2 = tdm_lattice_sp(gpu, &g, s, t, TDM_DEVICE_CUDA, &pg);
            CHECK(rc1 == rc2 && pc.hops == pg.hops && (pc.hops < 0 || !memcmp(pc.vertex, pg.vertex, (size_t)(pc.hops + 1) * 8)),
                  "graph round %d %lld->%lld: CPU rc %d hops %lld, GPU rc %d hops %lld", round, (long long)s, (long long)t, rc1,
                  (long long)pc.hops, rc2, (long long)pg.hops);
            if (rc1 == TDM_OK || rc1 == TDM_E_NOPATH) tdm_lattice_path_release(&pc);
            if (rc2 == TDM_OK || rc2 == TDM_E_NOPATH) tdm_lattice_path_release(&pg);
        }
        free(adj), free(row), free(col);
    }
}

/* The device keeps the last lattice's CSR resident (keyed by graph id) and re-uploads anonymous graphs at
 * every call: queries interleaved over two live lattices and an anonymous graph whose arrays are rewritten
 * in place between queries (same pointers, same sizes, other edges) must all equal the CPU. */
static void cross_resident(tdm_ctx *cpu, tdm_ctx *gpu, const tdm_backend *cb) {
    tdm_lattice *la, *lb;
    if (tdm_lattice_new(cpu, 4, 9, 0, &la) || tdm_lattice_new(cpu, 3, 20, 0, &lb)) {
        CHECK(0, "resident: lattice build: %s", tdm_last_error());
        return;
    }
    tdm_lattice_csr ga, gb;
    tdm_lattice_get_csr(la, &ga);
    tdm_lattice_get_csr(lb, &gb);
    /* The anonymous graph: a ring of n vertices, rewired each round as a ring over another permutation. */
    enum { n = 500 };
    int64_t arow[n + 1];
    int32_t acol[2 * n], perm[n];
    tdm_lattice_csr gn = {n, arow, acol, 0};
    int32_t *dc = malloc(8000 * 4), *dg = malloc(8000 * 4);
    for (int q = 0; q < 90; q++) {
        const int which = (int)below(3);
        if (which == 2) {
            for (int i = 0; i < n; i++) perm[i] = i;
            for (int i = n - 1; i > 0; i--) {
                int j = (int)below((uint64_t)i + 1), x = perm[i];
                perm[i] = perm[j], perm[j] = x;
            }
            /* Ring edges perm[i] - perm[i+1]: every vertex has degree 2; rows sorted. */
            int32_t nb[n][2];
            for (int i = 0; i < n; i++) {
                int32_t u = perm[i], v = perm[(i + 1) % n];
                nb[u][1] = v, nb[v][0] = u;
            }
            for (int v = 0; v < n; v++) {
                arow[v] = 2 * v;
                acol[2 * v] = nb[v][0] < nb[v][1] ? nb[v][0] : nb[v][1];
                acol[2 * v + 1] = nb[v][0] < nb[v][1] ? nb[v][1] : nb[v][0];
            }
            arow[n] = 2 * n;
        }
        const tdm_lattice_csr *g = which == 0 ? &ga : which == 1 ? &gb : &gn;
        int64_t s = (int64_t)below((uint64_t)g->nvertices), t = (int64_t)below((uint64_t)g->nvertices);
        tdm_lattice_path pc, pg;
        int rc1 = tdm_lattice_sp(cpu, g, s, t, TDM_DEVICE_CPU, &pc), rc2 = tdm_lattice_sp(gpu, g, s, t, TDM_DEVICE_CUDA, &pg);
        CHECK(rc1 == TDM_OK && rc2 == TDM_OK && pc.hops == pg.hops && !memcmp(pc.vertex, pg.vertex, (size_t)(pc.hops + 1) * 8),
              "resident: query %d graph %d %lld->%lld: CPU rc %d hops %lld, GPU rc %d hops %lld", q, which, (long long)s,
              (long long)t, rc1, (long long)pc.hops, rc2, rc2 == TDM_OK ? (long long)pg.hops : -2LL);
        if (rc1 == TDM_OK) tdm_lattice_path_release(&pc);
        if (rc2 == TDM_OK) tdm_lattice_path_release(&pg);
        if (q % 5 == 0) {
            tdm_lattice_bfs_multi(cpu, g, &s, 1, dc, NULL);
            int rc = cb->lattice->bfs_dist(cb, g, s, dg);
            CHECK(rc == TDM_OK && !memcmp(dc, dg, (size_t)g->nvertices * 4), "resident: sweep %d graph %d from %lld differs", q,
                  which, (long long)s);
        }
    }
    free(dc), free(dg);
    tdm_lattice_free(la);
    tdm_lattice_free(lb);
}

/* ---- XOR ---------------------------------------------------------------------------------------------- */

static void cross_xor(tdm_ctx *cpu, const tdm_backend *cb) {
    static const size_t ns[] = {1, 7, 8, 9, 4095, 4096, 1000003, 5u << 20};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++) {
        size_t n = ns[a], lens[] = {1, 3, 8, n, n + 5};
        uint8_t *in = malloc(n + 16), *oc = malloc(n + 16), *og = malloc(n + 16), *key = malloc(n + 16);
        for (size_t i = 0; i < n + 16; i++) in[i] = (uint8_t)next64();
        for (int b = 0; b < 5; b++) {
            uint64_t offs[] = {0, 1, 13, next64()};
            for (int c = 0; c < 4; c++) {
                size_t mis = (size_t)below(16);
                for (size_t i = 0; i < lens[b]; i++) key[i] = (uint8_t)next64();
                tdm_lattice_key k = {key, lens[b], offs[c]};
                tdm_lattice_xor(cpu, in + mis, oc, n, &k, 0);
                int rc = cb->lattice->xor_key(cb, in + mis, og, n, key, lens[b], offs[c]);
                CHECK(rc == TDM_OK && !memcmp(oc, og, n), "xor n %zu len %zu offset %" PRIu64 ": rc %d", n, lens[b], offs[c], rc);
                uint64_t seed = next64();
                tdm_lattice_xor_seeded(cpu, in + mis, oc, n, &seed, offs[c], 0);
                rc = cb->lattice->xor_seeded(cb, in + mis, og, n, seed, offs[c]);
                CHECK(rc == TDM_OK && !memcmp(oc, og, n), "seeded xor n %zu offset %" PRIu64 ": rc %d", n, offs[c], rc);
            }
        }
        free(in), free(oc), free(og), free(key);
    }
}

/* Batched XOR (the batch executor's device path): random small items, keys shared by runs of items, some in
 * place, every group forced onto the device, against one CPU call per item; then the entry point itself on
 * one table (outputs untouched until it returns). */
static void cross_xor_batch(tdm_ctx *cpu, tdm_ctx *gpu) {
    enum { N = 20000 };
    tdm_lattice_xor_item *items = malloc(N * sizeof *items);
    uint8_t *in = malloc((size_t)N * 600), *og = malloc((size_t)N * 600), *oc = malloc((size_t)N * 600), *keys = malloc(16 * 100);
    int *st = malloc(N * sizeof *st);
    for (size_t i = 0; i < (size_t)N * 600; i++) in[i] = (uint8_t)next64();
    for (int i = 0; i < 1600; i++) keys[i] = (uint8_t)next64();
    memcpy(oc, in, (size_t)N * 600);
    memcpy(og, in, (size_t)N * 600);
    for (size_t i = 0; i < N; i++) {
        size_t n = 1 + (size_t)below(i % 100 ? 300 : 600), kb = (i / 37) % 16; /* runs of 37 items share a key */
        tdm_lattice_key k = {keys + kb * 100, 1 + (size_t)((kb * 7) % 100), next64() % 5000};
        int inplace = i % 3 == 0;
        tdm_lattice_xor(cpu, inplace ? oc + i * 600 : in + i * 600, oc + i * 600, n, &k, 0);
        items[i] = (tdm_lattice_xor_item){inplace ? og + i * 600 : in + i * 600, og + i * 600, n, k, 0};
    }
    tdm_batch_stats bs;
    int rc = tdm_lattice_xor_batch(gpu, items, N, TDM_DEVICE_CUDA, st, &bs);
    int bad = 0;
    for (size_t i = 0; i < N; i++) bad += st[i] != TDM_OK;
    CHECK(rc == TDM_OK && !bad && bs.device_groups > 0 && !bs.fallbacks && !memcmp(oc, og, (size_t)N * 600),
          "xor batch: rc %d, %d item errors, %zu device groups, %zu fallbacks", rc, bad, bs.device_groups, bs.fallbacks);
    free(items), free(in), free(og), free(oc), free(keys), free(st);
}

/* ---- matrices ----------------------------------------------------------------------------------------- */

static double elem(const void *p, int dt, size_t i) { return dt ? ((const double *)p)[i] : ((const float *)p)[i]; }
static void set_elem(void *p, int dt, size_t i, double v) {
    if (dt) ((double *)p)[i] = v;
    else ((float *)p)[i] = (float)v;
}

static void cross_gemm(tdm_ctx *cpu, const tdm_backend *cb) {
    for (int round = 0; round < 120; round++) {
        int dt = (int)below(2), ta = (int)below(2), tb = (int)below(2);
        int64_t m = 1 + (int64_t)below(96), n = 1 + (int64_t)below(96), k = 1 + (int64_t)below(200), batch = 1 + (int64_t)below(4);
        if (round < 4) m = n = k = 256 << (round & 1);
        int64_t lda = (ta ? m : k) + (int64_t)below(3), ldb = (tb ? k : n) + (int64_t)below(3), ldc = n + (int64_t)below(3);
        int64_t sa = (ta ? k : m) * lda, sb = (tb ? n : k) * ldb, sc = m * ldc;
        size_t na = (size_t)(sa * batch), nb = (size_t)(sb * batch), nc = (size_t)(sc * batch), es = dt ? 8 : 4;
        void *A = malloc(na * es), *B = malloc(nb * es), *C0 = malloc(nc * es), *Cc = malloc(nc * es), *Cg = malloc(nc * es);
        for (size_t i = 0; i < na; i++) set_elem(A, dt, i, unit() * 2 - 1);
        for (size_t i = 0; i < nb; i++) set_elem(B, dt, i, unit() * 2 - 1);
        for (size_t i = 0; i < nc; i++) set_elem(C0, dt, i, unit() * 2 - 1);
        memcpy(Cc, C0, nc * es), memcpy(Cg, C0, nc * es);
        double alpha = dt ? unit() * 4 - 2 : (float)(unit() * 4 - 2), beta = below(3) ? (dt ? unit() - 0.5 : (float)(unit() - 0.5)) : 0.0;
        int rc1 = tdm_lattice_gemm_batched(cpu, dt, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, Cc, ldc, sc, batch);
        int rc2 = cb->lattice->gemm(cb, dt, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, Cg, ldc, sc, batch);
        CHECK(rc1 == TDM_OK && rc2 == TDM_OK, "gemm round %d: rc %d / %d (%s)", round, rc1, rc2, tdm_last_error());
        /* Each side is within gamma_{k+2} of the exact alpha*AB + beta*C (k products and sums, the alpha
         * scaling, the beta term's add), so the two differ by at most twice that; with k = 1 the extra two
         * roundings are most of it (a random 49x29x1 case once exceeded gamma_k). */
        const double u = dt ? 0x1p-53 : 0x1p-24, tiny = dt ? 0x1p-1022 : 0x1p-126, gk = (k + 2) * u / (1 - (k + 2) * u);
        long bad = 0;
        for (int64_t bi = 0; bi < batch && !bad; bi++)
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    double absab = 0;
                    for (int64_t p = 0; p < k; p++) {
                        double x = elem(A, dt, (size_t)(bi * sa + (ta ? p * lda + i : i * lda + p)));
                        double y = elem(B, dt, (size_t)(bi * sb + (tb ? j * ldb + p : p * ldb + j)));
                        absab += fabs(x * y);
                    }
                    size_t ci = (size_t)(bi * sc + i * ldc + j);
                    double bound = 2 * gk * (fabs(alpha) * absab + fabs(beta) * fabs(elem(C0, dt, ci))) + tiny;
                    if (fabs(elem(Cc, dt, ci) - elem(Cg, dt, ci)) > bound) bad++;
                }
        CHECK(!bad, "gemm round %d (dt %d ta %d tb %d %lldx%lldx%lld batch %lld): %ld entries outside the bound", round, dt, ta, tb,
              (long long)m, (long long)n, (long long)k, (long long)batch, bad);
        free(A), free(B), free(C0), free(Cc), free(Cg);
    }
}

static int64_t ulp_dist(double a, double b, int dt) {
    if (dt) {
        int64_t x, y;
        memcpy(&x, &a, 8), memcpy(&y, &b, 8);
        if (x < 0) x = INT64_MIN - x;
        if (y < 0) y = INT64_MIN - y;
        return x > y ? x - y : y - x;
    }
    float fa = (float)a, fb = (float)b;
    int32_t x, y;
    memcpy(&x, &fa, 4), memcpy(&y, &fb, 4);
    if (x < 0) x = INT32_MIN - x;
    if (y < 0) y = INT32_MIN - y;
    return x > y ? (int64_t)x - y : (int64_t)y - x;
}

static void cross_ewise_reduce(tdm_ctx *cpu, const tdm_backend *cb) {
    static const double sp[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 0x1p-1074, 0x1p-149, 1e300, 88.7, -103.0, 709.7, -745.0};
    for (int round = 0; round < 200; round++) {
        int dt = (int)below(2), op = (int)below(TDM_LATTICE_EW_COUNT);
        size_t n = 1 + (size_t)below(100000), es = dt ? 8 : 4;
        void *x = malloc(n * es), *y = malloc(n * es), *oc = malloc(n * es), *og = malloc(n * es);
        for (size_t i = 0; i < n; i++) {
            double a = below(4) ? (unit() * 2 - 1) * pow(2.0, (double)(int)below(60) - 30) : sp[below(sizeof sp / sizeof *sp)];
            double b = below(4) ? (unit() * 2 - 1) * pow(2.0, (double)(int)below(60) - 30) : sp[below(sizeof sp / sizeof *sp)];
            set_elem(x, dt, i, a), set_elem(y, dt, i, b);
        }
        double alpha = unit() * 8 - 4;
        int rc1 = tdm_lattice_ewise(cpu, op, dt, x, y, alpha, oc, n), rc2 = cb->lattice->ewise(cb, op, dt, x, y, alpha, og, n);
        CHECK(rc1 == TDM_OK && rc2 == TDM_OK, "ewise op %d: rc %d / %d", op, rc1, rc2);
        long bad = 0;
        for (size_t i = 0; i < n; i++) {
            double c = elem(oc, dt, i), g = elem(og, dt, i);
            if (isnan(c) || isnan(g)) bad += isnan(c) != isnan(g);
            else if (op == TDM_LATTICE_EW_EXP) {
                double tiny = dt ? 0x1p-1022 : 0x1p-126;
                if (isinf(c) || isinf(g)) bad += c != g;
                else if (fabs(c) < tiny || fabs(g) < tiny) bad += fabs(c - g) > tiny;
                else bad += ulp_dist(c, g, dt) > (dt ? 2 : 3);
            } else bad += dt ? memcmp((double *)oc + i, (double *)og + i, 8) != 0 : memcmp((float *)oc + i, (float *)og + i, 4) != 0;
        }
        CHECK(!bad, "ewise op %d dt %d n %zu: %ld elements differ", op, dt, n, bad);
        for (int rop = 0; rop < 3; rop++) {
            /* Sums only over finite values, so that the bound means something. */
            if (rop == TDM_LATTICE_RED_SUM)
                for (size_t i = 0; i < n; i++)
                    if (!isfinite(elem(x, dt, i))) set_elem(x, dt, i, unit());
            double rc_, rg_;
            rc1 = tdm_lattice_reduce(cpu, rop, dt, x, n, &rc_);
            rc2 = cb->lattice->reduce(cb, rop, dt, x, n, &rg_);
            CHECK(rc1 == TDM_OK && rc2 == TDM_OK, "reduce %d: rc %d / %d", rop, rc1, rc2);
            if (rop == TDM_LATTICE_RED_SUM) {
                double sa = 0, u = dt ? 0x1p-53 : 0x1p-24, gn = n * u / (1 - n * u);
                for (size_t i = 0; i < n; i++) sa += fabs(elem(x, dt, i));
                CHECK(fabs(rc_ - rg_) <= 2 * gn * sa, "sum dt %d n %zu: %.17g vs %.17g", dt, n, rc_, rg_);
            } else {
                CHECK((isnan(rc_) && isnan(rg_)) || (rc_ == rg_ && signbit(rc_) == signbit(rg_)), "%s dt %d n %zu: %.17g vs %.17g",
                      rop == 1 ? "min" : "max", dt, n, rc_, rg_);
            }
        }
        free(x), free(y), free(oc), free(og);
    }
}

/* ---- catalytic distance on device aux ------------------------------------------------------------------ */

static void cross_catalytic(tdm_ctx *gpu, const tdm_backend *cb) {
    tdm_lattice *lat;
    if (tdm_lattice_new(gpu, 4, 8, 0, &lat)) {
        CHECK(0, "4D/8: %s", tdm_last_error());
        return;
    }
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    const int64_t K = 28, V = g.nvertices;
    const size_t bytes = (size_t)(K + 1) * 8 * (size_t)V;
    uint8_t *host = malloc(bytes), *back = malloc(bytes);
    for (size_t i = 0; i < bytes; i++) host[i] = (uint8_t)next64();
    void *dmem = NULL;
    int rc = cb->alloc(cb, bytes, &dmem);
    if (!rc) rc = cb->copy(cb, dmem, host, bytes, TDM_COPY_H2D);
    tdm_lattice_aux *aux = NULL;
    if (!rc) rc = tdm_lattice_aux_wrap_device(gpu, cb->device, dmem, bytes, &aux);
    CHECK(rc == TDM_OK, "device aux: %s", tdm_last_error());
    for (int q = 0; q < 100 && !rc; q++) {
        int64_t s = (int64_t)below((uint64_t)V), t = (int64_t)below((uint64_t)V), l1 = 0, d = -2;
        for (int i = 0; i < 4; i++) {
            int64_t a = (s >> (3 * i)) & 7, b = (t >> (3 * i)) & 7; /* L = 8: three bits per coordinate */
            l1 += a > b ? a - b : b - a;
        }
        uint64_t seed = next64();
        int r2 = tdm_lattice_catalytic_distance(gpu, &g, aux, s, t, K, &seed, 0, &d);
        CHECK(r2 == TDM_OK && d == l1, "device catalytic %lld->%lld: rc %d dist %lld, want %lld (%s)", (long long)s, (long long)t, r2,
              (long long)d, (long long)l1, tdm_last_error());
    }
    if (!rc) {
        rc = cb->copy(cb, back, dmem, bytes, TDM_COPY_D2H);
        CHECK(rc == TDM_OK && !memcmp(back, host, bytes), "device aux not restored bit for bit after 100 queries");
        CHECK(!tdm_lattice_aux_dirty(aux), "device aux marked dirty");
    }
    /* Injected faults still restore device aux. */
    for (int64_t f = 1; f <= 2 * (2 * K + 1) && !rc; f += 13) {
        tdm_config cfg;
        tdm_config_init(&cfg);
        cfg.test_fail_at_step = (int)f;
        cfg.sp_cache = 0;
        tdm_ctx *fctx;
        if (tdm_init(&fctx, &cfg)) break;
        tdm_lattice_aux *fa;
        const tdm_backend *fb = tdm_backend_find(fctx, TDM_BACKEND_CUDA);
        if (fb && !tdm_lattice_aux_wrap_device(fctx, fb->device, dmem, bytes, &fa)) {
            uint64_t seed = next64();
            int64_t d;
            int r2 = tdm_lattice_catalytic_distance(fctx, &g, fa, 0, V - 1, K, &seed, 0, &d);
            CHECK(r2 == (f < 2 * (2 * K + 1) ? TDM_E_IO : TDM_OK), "fault at %lld: rc %d", (long long)f, r2);
            tdm_lattice_aux_free(fa);
        }
        tdm_destroy(fctx);
        rc = cb->copy(cb, back, dmem, bytes, TDM_COPY_D2H);
        CHECK(rc == TDM_OK && !memcmp(back, host, bytes), "fault at %lld: device aux not restored", (long long)f);
    }
    tdm_lattice_aux_free(aux);
    if (dmem) cb->release(cb, dmem);
    free(host), free(back);
    tdm_lattice_free(lat);
}

int main(void) {
    const char *env = getenv("TANDEM_TEST_SEED");
    uint64_t seed = env && *env ? strtoull(env, NULL, 0) : 20240611ull;
    rng_state = seed;
    const char *req = getenv("TANDEM_TEST_REQUIRE_GPU");
    int require_gpu = req && !strcmp(req, "1");
    setvbuf(stdout, NULL, _IOLBF, 0); /* each phase's line shows even if a later one hangs */
    printf("test_lattice_cross: seed %" PRIu64 " (replay with TANDEM_TEST_SEED=%" PRIu64 ")\n", seed, seed);
    tdm_ctx *cpu = make_ctx(TDM_DEVICE_CPU), *gpu = make_ctx(TDM_DEVICE_AUTO);
    const tdm_backend *cb = tdm_backend_find(gpu, TDM_BACKEND_CUDA);
    int run_gpu = cb && cb->lattice;
    /* TANDEM_TEST_CASES scales the queries per shape and the random rounds down for the sanitizers. */
    const char *cases = getenv("TANDEM_TEST_CASES");
    int rounds = cases && atoi(cases) > 0 ? atoi(cases) : 40;
    printf("paths (%d rounds)\n", rounds);
    cross_paths(cpu, gpu, run_gpu, rounds < 25 ? rounds : 25, rounds);
    long cpu_failures = failures;
    /* Each BFS kernel the device has (the default above is the persistent one where it runs). */
    if (run_gpu && cb->lattice->bfs_kernel) {
        static const int kernels[] = {TDM_LAT_BFS_KERNEL_PERSISTENT, TDM_LAT_BFS_KERNEL_LEVELS, TDM_LAT_BFS_KERNEL_AUTO};
        static const char *const names[] = {"persistent", "levels", "auto"};
        for (int k = 0; k < 3; k++) {
            if (k == 0 && !getenv("TANDEM_TEST_BFS_PERSISTENT")) { /* opt-in while it is not the default */
                printf("BFS kernel persistent: not checked (experimental; TANDEM_TEST_BFS_PERSISTENT=1 checks it)\n");
                continue;
            }
            int rc = cb->lattice->bfs_kernel(cb, kernels[k]);
            printf("BFS kernel %s: %s\n", names[k], rc ? tdm_last_error() : "checking");
            if (rc) continue;
            if (k < 2) cross_paths(cpu, gpu, 1, 8, rounds < 12 ? rounds : 12); /* lighter: the full pass above ran the default */
            cross_resident(cpu, gpu, cb);
        }
        cb->lattice->bfs_kernel(cb, TDM_LAT_BFS_KERNEL_AUTO);
    }
    if (run_gpu) {
        printf("xor\n");
        cross_xor(cpu, cb);
        printf("xor batch\n");
        if (cb->lattice->xor_key_batch) cross_xor_batch(cpu, gpu);
        printf("gemm\n");
        cross_gemm(cpu, cb);
        printf("element-wise and reductions\n");
        cross_ewise_reduce(cpu, cb);
        printf("catalytic\n");
        cross_catalytic(gpu, cb);
    }
    int rc = failures ? 1 : 0;
    printf("CPU half: %s\n", cpu_failures ? "FAILED" : "passed");
    if (run_gpu) printf("CUDA half (%s): %s, %ld failure(s)\n", cb->description, failures ? "FAILED" : "passed", failures);
    else if (require_gpu) printf("CUDA half: REQUIRED BUT NOT RUN (no CUDA backend; TANDEM_TEST_REQUIRE_GPU=1)\n"), rc = 1;
    else if (!cpu_failures) printf("CUDA half: NOT RUN (no CUDA backend: no GPU, or libtandem_cuda.so did not load)\n");
    tdm_destroy(cpu);
    tdm_destroy(gpu);
    return rc;
}
