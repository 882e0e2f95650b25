/* test_lattice_route.c: where lattice and ARC ops go, with a stand-in GPU (tests/unit/fake_backend.h) and
 * cost models of known shape, so that each decision has a known right answer: small work stays on the
 * CPU and large work goes to the device; BFS pays per level on the device, so a deep 2D lattice stays on
 * the CPU where a shallow 4D one of about the same size goes to the device; anonymous graphs are priced at
 * V-1 levels; a lattice's CSR counts as resident after a device BFS over it; hints, TANDEM_ROUTE_<OP> and
 * TANDEM_ROUTE win in that order; without a trusted model inputs stay where they live (ARC keeps its grid
 * floor); TANDEM_DEBUG_ROUTER prints each decision; results are the same whichever backend answered (the
 * stand-in computes on a CPU context: kernels are checked by the cross drivers on a GPU). Last, the
 * calibration runners measure this machine's CPU (and the stand-in) and give fitted classes. */
#define _GNU_SOURCE
#include "unit_common.h"

#include "arc/arc_device.h"
#include "fake_backend.h"
#include "lattice/lattice_device.h"
#include "runtime/router_internal.h"
#include "tandem/arc.h"
#include "tandem/lattice.h"

static tdm_ctx *ref; /* CPU-only context the stand-in computes with */
static int calls;    /* device entry points called */

static int f_bfs_path(const tdm_backend *b, const tdm_lattice_csr *g, int64_t s, int64_t t, int64_t **path, int64_t *hops) {
    calls++;
    tdm_lattice_path p;
    int rc = tdm_lattice_sp(ref, g, s, t, TDM_DEVICE_CPU, &p);
    if (rc && rc != TDM_E_NOPATH) return rc;
    *path = p.vertex, *hops = p.hops;
    return TDM_OK;
}
static int f_bfs_dist(const tdm_backend *b, const tdm_lattice_csr *g, int64_t s, int32_t *dist) {
    calls++;
    return tdm_lattice_bfs_multi(ref, g, &s, 1, dist, NULL);
}
static int f_xor_key(const tdm_backend *b, const void *in, void *out, size_t n, const uint8_t *key, size_t len, uint64_t off) {
    calls++;
    tdm_lattice_key k = {key, len, off};
    return tdm_lattice_xor(ref, in, out, n, &k, 0);
}
static int f_xor_seeded(const tdm_backend *b, const void *in, void *out, size_t n, uint64_t seed, uint64_t off) {
    calls++;
    return tdm_lattice_xor_seeded(ref, in, out, n, &seed, off, 0);
}
static int f_gemm(const tdm_backend *b, tdm_lattice_dtype dt, tdm_lattice_trans ta, tdm_lattice_trans tb, int64_t m, int64_t n,
                  int64_t k, double alpha, const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb, int64_t sb,
                  double beta, void *C, int64_t ldc, int64_t sc, int64_t batch) {
    calls++;
    return tdm_lattice_gemm_batched(ref, dt, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}
static int f_ewise(const tdm_backend *b, tdm_lattice_ewise_op op, tdm_lattice_dtype dt, const void *x, const void *y,
                   double alpha, void *out, size_t n) {
    calls++;
    return tdm_lattice_ewise(ref, op, dt, x, y, alpha, out, n);
}
static int f_reduce(const tdm_backend *b, tdm_lattice_reduce_op op, tdm_lattice_dtype dt, const void *x, size_t n, double *out) {
    calls++;
    return tdm_lattice_reduce(ref, op, dt, x, n, out);
}
static const tdm_lattice_dev_ops lat_ops = {f_bfs_path, f_bfs_dist, f_xor_key, f_xor_seeded, f_gemm, f_ewise, f_reduce,
                                            NULL, NULL, NULL};

static int f_objects(const tdm_backend *b, const uint8_t *cells, const uint8_t *hw, size_t n, int flags, int16_t *labels,
                     size_t *bad, tdm_arc_dev_times *t) {
    calls++;
    memset(t, 0, sizeof *t);
    return tdm_arc_objects_labels(ref, cells, hw, n, flags & ARC_OBJ_UNIVALUED, flags & ARC_OBJ_DIAGONAL,
                                  flags & ARC_OBJ_WITHOUT_BG, TDM_DEVICE_CPU, 1, labels, NULL);
}
static const tdm_arc_dev_ops arc_ops = {.objects_labels = f_objects}; /* the executor's column entry points stay NULL */

static int f_supports(const tdm_backend *b, tdm_op op) {
    return op == TDM_OP_LATTICE_BFS || op == TDM_OP_LATTICE_XOR || op == TDM_OP_LATTICE_GEMM ||
           op == TDM_OP_LATTICE_GEMM_BATCHED || op == TDM_OP_LATTICE_EWISE || op == TDM_OP_LATTICE_REDUCE ||
           op == TDM_OP_ARC_OBJECTS;
}

/* The synthetic machine: the CPU starts at once and is slow per unit; the device pays 50 us a call and
 * (BFS) 20 us a level, and is 100x faster per unit. */
static void set_model(tdm_ctx *ctx) {
    tdm_costmodel m;
    memset(&m, 0, sizeof m);
    static const tdm_op ops[] = {TDM_OP_LATTICE_BFS,   TDM_OP_LATTICE_XOR,    TDM_OP_LATTICE_GEMM, TDM_OP_LATTICE_GEMM_BATCHED,
                                 TDM_OP_LATTICE_EWISE, TDM_OP_LATTICE_REDUCE, TDM_OP_ARC_OBJECTS};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        tu_model_line(&m, ops[i], 0, 2.0, 0.01, 0);
        tu_model_line(&m, ops[i], 1, 50.0, 0.0001, ops[i] == TDM_OP_LATTICE_BFS ? 20.0 : 0);
    }
    assert_int_equal(tdm_costmodel_set(ctx, &m), TDM_OK);
}

/* route_env / route_bfs: TANDEM_ROUTE and TANDEM_ROUTE_BFS (TDM_CONFIG_UNSET_OP: not set). */
static tdm_ctx *make(int gpu, int model, int route_env, int route_bfs) {
    tdm_config c;
    tu_fake_config(&c);
    c.sp_cache = 0;
    c.route = route_env;
    c.route_op[TDM_OP_LATTICE_BFS] = (signed char)route_bfs;
    tdm_ctx *ctx = tu_fake_ctx(&c);
    if (gpu) {
        tdm_backend *b = tu_fake_gpu(ctx, "fake:0", f_supports);
        b->lattice = &lat_ops;
        b->arc = &arc_ops;
    }
    if (model) set_model(ctx);
    return ctx;
}

/* The newest decision record. */
static tdm_route_record last_record(tdm_ctx *ctx) {
    tdm_route_record r[1];
    size_t n;
    tdm_route_log_read(ctx, r, 1, &n);
    assert_int_equal(n, 1);
    return r[0];
}

static void test_bfs_small_cpu_large_gpu(void **state) {
    (void)state;
    tdm_ctx *ctx = make(1, 1, TDM_DEVICE_AUTO, TDM_CONFIG_UNSET_OP);
    static const struct {
        int d;
        int64_t L;
        int gpu; /* where the model must send a full sweep from vertex 0 */
    } shapes[] = {{4, 4, 0}, {4, 20, 1}, {2, 400, 0}, {3, 60, 1}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        tdm_lattice *lat;
        assert_int_equal(tdm_lattice_new(ctx, shapes[i].d, shapes[i].L, 0, &lat), TDM_OK);
        tdm_lattice_csr g;
        tdm_lattice_get_csr(lat, &g);
        int32_t *d1 = malloc((size_t)g.nvertices * 4), *d2 = malloc((size_t)g.nvertices * 4);
        int64_t s = 0;
        calls = 0;
        assert_int_equal(tdm_lattice_bfs_multi(ctx, &g, &s, 1, d1, NULL), TDM_OK);
        tdm_route_record r = last_record(ctx);
        tu_check(r.chosen_gpu == shapes[i].gpu && calls == shapes[i].gpu, "%dD/%lld: gpu %d (%s), calls %d",
                 shapes[i].d, (long long)shapes[i].L, r.chosen_gpu, tdm_route_reason_name(r.reason), calls);
        assert_int_equal(r.reason, shapes[i].gpu ? TDM_ROUTE_MODEL_GPU : TDM_ROUTE_MODEL_CPU);
        /* The work is the lattice's arcs and the levels its corner's eccentricity d(L-1). */
        assert_true(r.work == (double)g.row_ptr[g.nvertices]);
        assert_true(r.levels == (double)shapes[i].d * (double)(shapes[i].L - 1));
        assert_int_equal(tdm_lattice_bfs_multi(ref, &g, &s, 1, d2, NULL), TDM_OK);
        assert_memory_equal(d1, d2, (size_t)g.nvertices * 4);
        /* A path: the levels are the L1 distance; from corner to corner it is the same size of query. */
        tdm_lattice_path p, want;
        int64_t t = g.nvertices - 1;
        assert_int_equal(tdm_lattice_sp(ctx, &g, 0, t, TDM_DEVICE_AUTO, &p), TDM_OK);
        r = last_record(ctx);
        assert_true(r.levels == (double)shapes[i].d * (double)(shapes[i].L - 1));
        assert_string_equal(p.backend, shapes[i].gpu ? "fake:0" : "cpu");
        assert_int_equal(tdm_lattice_sp(ref, &g, 0, t, TDM_DEVICE_CPU, &want), TDM_OK);
        assert_int_equal(p.hops, want.hops);
        assert_memory_equal(p.vertex, want.vertex, (size_t)(want.hops + 1) * 8);
        tdm_lattice_path_release(&p), tdm_lattice_path_release(&want);
        /* A neighbour of the source: one level, and only the arcs within reach are work. */
        assert_int_equal(tdm_lattice_sp(ctx, &g, 0, 1, TDM_DEVICE_AUTO, &p), TDM_OK);
        r = last_record(ctx);
        assert_true(r.levels == 1.0 && r.work < (double)g.row_ptr[g.nvertices]);
        assert_string_equal(p.backend, "cpu");
        tdm_lattice_path_release(&p);
        /* The measured time lands in the decision's record. */
        assert_true(r.measured_us >= 0.0);
        free(d1), free(d2);
        tdm_lattice_free(lat);
    }
    tdm_destroy(ctx);
}

static void test_bfs_residency_and_anonymous(void **state) {
    (void)state;
    tdm_ctx *ctx = make(1, 1, TDM_DEVICE_AUTO, TDM_CONFIG_UNSET_OP);
    tdm_costmodel m;
    tdm_costmodel_get(ctx, &m);
    m.link_trusted = 1;
    m.h2d = m.d2h = (tdm_cost_link){10.0, 1.0 / 20000.0};
    assert_int_equal(tdm_costmodel_set(ctx, &m), TDM_OK);
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(ctx, 4, 20, 0, &lat), TDM_OK);
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    const uint64_t csr = 8u * (uint64_t)(g.nvertices + 1) + 4u * (uint64_t)g.row_ptr[g.nvertices], back = 4u * (uint64_t)g.nvertices;
    int32_t *dist = malloc((size_t)g.nvertices * 4);
    int64_t s = 0;
    /* First sweep: the CSR moves to the device; the second finds it there. */
    assert_int_equal(tdm_lattice_bfs_multi(ctx, &g, &s, 1, dist, NULL), TDM_OK);
    tdm_route_record r = last_record(ctx);
    assert_true(r.chosen_gpu);
    assert_int_equal(r.bytes_moved, csr + back);
    double first_gpu = r.t_gpu_us;
    assert_int_equal(tdm_lattice_bfs_multi(ctx, &g, &s, 1, dist, NULL), TDM_OK);
    r = last_record(ctx);
    assert_true(r.chosen_gpu);
    assert_int_equal(r.bytes_moved, back);
    assert_true(r.t_gpu_us < first_gpu);
    /* The same arrays as an anonymous graph: nothing known of its depth, so V-1 levels: the CPU. */
    tdm_lattice_csr anon = g;
    anon.id = 0;
    assert_int_equal(tdm_lattice_bfs_multi(ctx, &anon, &s, 1, dist, NULL), TDM_OK);
    r = last_record(ctx);
    assert_true(r.levels == (double)(g.nvertices - 1));
    assert_false(r.chosen_gpu);
    /* A user's CSR with an id but not a lattice's shape (a star: vertex 0's row looks like a 3D lattice's
     * of side 2, the sizes do not) is not taken for one: V-1 levels. */
    int64_t row[5] = {0, 3, 4, 5, 6};
    int32_t col[6] = {1, 2, 3, 0, 0, 0};
    tdm_lattice_csr star = {4, row, col, 777};
    int32_t d4[4];
    assert_int_equal(tdm_lattice_bfs_multi(ctx, &star, &s, 1, d4, NULL), TDM_OK);
    assert_true(last_record(ctx).levels == 3.0);
    assert_int_equal(d4[3], 1);
    free(dist);
    tdm_lattice_free(lat);
    tdm_destroy(ctx);
}

static void test_other_ops_by_size(void **state) {
    (void)state;
    tdm_ctx *ctx = make(1, 1, TDM_DEVICE_AUTO, TDM_CONFIG_UNSET_OP);
    tu_rng r = tu_rng_for(801);
    const size_t big = 1 << 20;
    float *x = malloc(big * 4), *y = malloc(big * 4), *o1 = malloc(big * 4), *o2 = malloc(big * 4);
    for (size_t i = 0; i < big; i++) x[i] = (float)tu_unit(&r) - 0.5f, y[i] = (float)tu_unit(&r) + 0.5f;
    uint8_t key[13];
    for (size_t i = 0; i < sizeof key; i++) key[i] = (uint8_t)tu_next(&r);
    tdm_lattice_key k = {key, sizeof key, 5};
    for (int large = 0; large < 2; large++) {
        const size_t n = large ? big : 100; /* the crossover is near 5,000 units */
        calls = 0;
        assert_int_equal(tdm_lattice_xor(ctx, x, o1, n * 4, &k, 0), TDM_OK);
        assert_int_equal(tdm_lattice_xor(ref, x, o2, n * 4, &k, 0), TDM_OK);
        assert_memory_equal(o1, o2, n * 4);
        assert_int_equal(last_record(ctx).chosen_gpu, large);
        uint64_t seed = 42;
        assert_int_equal(tdm_lattice_xor_seeded(ctx, x, o1, n * 4, &seed, 0, 0), TDM_OK);
        assert_int_equal(tdm_lattice_xor_seeded(ref, x, o2, n * 4, &seed, 0, 0), TDM_OK);
        assert_memory_equal(o1, o2, n * 4);
        assert_int_equal(tdm_lattice_ewise(ctx, TDM_LATTICE_EW_DIV, TDM_LATTICE_F32, x, y, 0, o1, n), TDM_OK);
        assert_int_equal(tdm_lattice_ewise(ref, TDM_LATTICE_EW_DIV, TDM_LATTICE_F32, x, y, 0, o2, n), TDM_OK);
        assert_memory_equal(o1, o2, n * 4);
        assert_int_equal(last_record(ctx).chosen_gpu, large);
        double s1, s2;
        assert_int_equal(tdm_lattice_reduce(ctx, TDM_LATTICE_RED_SUM, TDM_LATTICE_F32, x, n, &s1), TDM_OK);
        assert_int_equal(tdm_lattice_reduce(ref, TDM_LATTICE_RED_SUM, TDM_LATTICE_F32, x, n, &s2), TDM_OK);
        tu_assert_same_double(s1, s2, "sum of %zu", n);
        assert_int_equal(last_record(ctx).chosen_gpu, large);
        /* GEMM: 8^3 = 512 units stays, 64^3 goes; a batch of 64 8^3 items is 32,768 units: the device. */
        const int64_t side = large ? 64 : 8;
        memset(o1, 0, (size_t)(side * side) * 4), memset(o2, 0, (size_t)(side * side) * 4);
        assert_int_equal(tdm_lattice_gemm(ctx, TDM_LATTICE_F32, 0, 0, side, side, side, 1.0, x, side, y, side, 0, o1, side), TDM_OK);
        assert_int_equal(tdm_lattice_gemm(ref, TDM_LATTICE_F32, 0, 0, side, side, side, 1.0, x, side, y, side, 0, o2, side), TDM_OK);
        assert_memory_equal(o1, o2, (size_t)(side * side) * 4);
        tdm_route_record rec = last_record(ctx);
        assert_true(rec.work == (double)(side * side * side));
        assert_int_equal(rec.chosen_gpu, large);
        const int64_t batch = large ? 64 : 1;
        assert_int_equal(tdm_lattice_gemm_batched(ctx, TDM_LATTICE_F32, 0, 0, 8, 8, 8, 1.0, x, 8, 64, y, 8, 64, 0, o1, 8, 64, batch), TDM_OK);
        assert_int_equal(tdm_lattice_gemm_batched(ref, TDM_LATTICE_F32, 0, 0, 8, 8, 8, 1.0, x, 8, 64, y, 8, 64, 0, o2, 8, 64, batch), TDM_OK);
        assert_memory_equal(o1, o2, (size_t)(64 * batch) * 4);
        assert_int_equal(last_record(ctx).chosen_gpu, large);
        assert_int_equal(calls, large ? 6 : 0);
    }
    free(x), free(y), free(o1), free(o2);
    tdm_destroy(ctx);
}

static tdm_route_reason sp_reason(tdm_ctx *ctx, const tdm_lattice_csr *g, int64_t t, int pref, const char *backend) {
    tdm_lattice_path p;
    assert_int_equal(tdm_lattice_sp(ctx, g, 0, t, pref, &p), TDM_OK);
    tu_check(!strcmp(p.backend, backend), "pref %d: ran on %s, expected %s", pref, p.backend, backend);
    tdm_lattice_path_release(&p);
    return last_record(ctx).reason;
}

static void test_overrides_and_hints(void **state) {
    (void)state;
    tdm_lattice *small, *large;
    tdm_lattice_csr gs, gl;
    /* TANDEM_ROUTE_BFS=cpu keeps a large sweep on the CPU; a CUDA hint still wins. */
    tdm_ctx *ctx = make(1, 1, TDM_DEVICE_AUTO, TDM_DEVICE_CPU);
    assert_int_equal(tdm_lattice_new(ctx, 4, 4, 0, &small), TDM_OK);
    assert_int_equal(tdm_lattice_new(ctx, 4, 20, 0, &large), TDM_OK);
    tdm_lattice_get_csr(small, &gs), tdm_lattice_get_csr(large, &gl);
    assert_int_equal(sp_reason(ctx, &gl, gl.nvertices - 1, TDM_DEVICE_AUTO, "cpu"), TDM_ROUTE_FORCED_ENV);
    assert_int_equal(sp_reason(ctx, &gs, gs.nvertices - 1, TDM_DEVICE_CUDA, "fake:0"), TDM_ROUTE_FORCED_CALL);
    /* Other ops are not touched by TANDEM_ROUTE_BFS. */
    static float x[1 << 16], o[1 << 16];
    assert_int_equal(tdm_lattice_ewise(ctx, TDM_LATTICE_EW_NEG, TDM_LATTICE_F32, x, NULL, 0, o, 1 << 16), TDM_OK);
    assert_int_equal(last_record(ctx).reason, TDM_ROUTE_MODEL_GPU);
    tdm_destroy(ctx);
    /* TANDEM_ROUTE=gpu sends a small one to the device; a CPU hint still wins; TANDEM_ROUTE_BFS=auto hands
     * BFS back to the model. */
    ctx = make(1, 1, TDM_DEVICE_CUDA, TDM_CONFIG_UNSET_OP);
    assert_int_equal(sp_reason(ctx, &gs, gs.nvertices - 1, TDM_DEVICE_AUTO, "fake:0"), TDM_ROUTE_FORCED_ENV);
    assert_int_equal(sp_reason(ctx, &gl, gl.nvertices - 1, TDM_DEVICE_CPU, "cpu"), TDM_ROUTE_FORCED_CALL);
    tdm_destroy(ctx);
    ctx = make(1, 1, TDM_DEVICE_CUDA, TDM_DEVICE_AUTO);
    assert_int_equal(sp_reason(ctx, &gs, gs.nvertices - 1, TDM_DEVICE_AUTO, "cpu"), TDM_ROUTE_MODEL_CPU);
    tdm_destroy(ctx);
    /* No trusted model: where the inputs live. The CSR is on the host until a forced device call has put
     * it on the device; host operands of other ops stay on the CPU. */
    ctx = make(1, 0, TDM_DEVICE_AUTO, TDM_CONFIG_UNSET_OP);
    assert_int_equal(sp_reason(ctx, &gl, gl.nvertices - 1, TDM_DEVICE_AUTO, "cpu"), TDM_ROUTE_RESIDENCY_ONLY);
    assert_int_equal(sp_reason(ctx, &gl, 5, TDM_DEVICE_CUDA, "fake:0"), TDM_ROUTE_FORCED_CALL);
    assert_int_equal(sp_reason(ctx, &gl, gl.nvertices - 1, TDM_DEVICE_AUTO, "fake:0"), TDM_ROUTE_RESIDENCY_ONLY);
    assert_int_equal(sp_reason(ctx, &gs, 3, TDM_DEVICE_AUTO, "cpu"), TDM_ROUTE_RESIDENCY_ONLY); /* another graph */
    assert_int_equal(tdm_lattice_ewise(ctx, TDM_LATTICE_EW_NEG, TDM_LATTICE_F32, x, NULL, 0, o, 1 << 16), TDM_OK);
    assert_int_equal(last_record(ctx).reason, TDM_ROUTE_RESIDENCY_ONLY);
    assert_false(last_record(ctx).chosen_gpu);
    tdm_destroy(ctx);
    /* No GPU at all; a GPU without lattice entry points. A forced GPU without one is an error when strict. */
    ctx = make(0, 1, TDM_DEVICE_AUTO, TDM_CONFIG_UNSET_OP);
    assert_int_equal(sp_reason(ctx, &gl, gl.nvertices - 1, TDM_DEVICE_AUTO, "cpu"), TDM_ROUTE_ONLY_CPU);
    assert_int_equal(sp_reason(ctx, &gl, gl.nvertices - 1, TDM_DEVICE_CUDA, "cpu"), TDM_ROUTE_FORCED_GPU_UNAVAILABLE);
    ctx->cfg.strict = 1;
    tdm_lattice_path p;
    assert_int_equal(tdm_lattice_sp(ctx, &gl, 0, 5, TDM_DEVICE_CUDA, &p), TDM_E_UNSUPPORTED);
    tdm_destroy(ctx);
    ctx = make(1, 1, TDM_DEVICE_AUTO, TDM_CONFIG_UNSET_OP);
    ctx->backends[1]->lattice = NULL;
    assert_int_equal(tdm_lattice_sp(ctx, &gl, 0, gl.nvertices - 1, TDM_DEVICE_AUTO, &p), TDM_OK);
    assert_string_equal(p.backend, "cpu");
    tdm_lattice_path_release(&p);
    tdm_destroy(ctx);
    tdm_lattice_free(small), tdm_lattice_free(large);
}

static char logged[8192];
static void capture(tdm_log_level level, const char *msg, void *user) {
    (void)level, (void)user;
    if (strstr(msg, "router:") && strlen(logged) + strlen(msg) + 2 < sizeof logged) strcat(logged, msg), strcat(logged, "\n");
}

static void test_debug_router(void **state) {
    (void)state;
    tdm_ctx *ctx = make(1, 1, TDM_DEVICE_AUTO, TDM_CONFIG_UNSET_OP);
    ctx->cfg.debug_router = 1;
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(ctx, 2, 400, 0, &lat), TDM_OK);
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    logged[0] = '\0';
    tdm_log_set_level(TDM_LOG_WARN); /* the level is global; the fake contexts keep it at ERROR */
    tdm_log_set_callback(capture, NULL);
    tdm_lattice_path p;
    assert_int_equal(tdm_lattice_sp(ctx, &g, 0, g.nvertices - 1, TDM_DEVICE_AUTO, &p), TDM_OK);
    tdm_log_set_callback(NULL, NULL);
    tdm_log_set_level(TDM_LOG_ERROR);
    tdm_lattice_path_release(&p);
    tu_check(strstr(logged, "lattice.bfs") && strstr(logged, "levels=798") && strstr(logged, "MODEL_CPU") &&
                 strstr(logged, "T_gpu"),
             "logged: %s", logged);
    tdm_lattice_free(lat);
    tdm_destroy(ctx);
}

/* n generated grids (shapes 1..30, three colours). */
static void grids(size_t n, uint8_t **cells, uint8_t **hw) {
    tu_rng r = tu_rng_for(802);
    *cells = calloc(n, ARC_SLOT_CELLS), *hw = malloc(2 * n);
    for (size_t g = 0; g < n; g++) {
        int h = 1 + (int)tu_below(&r, 30), w = 1 + (int)tu_below(&r, 30);
        (*hw)[2 * g] = (uint8_t)h, (*hw)[2 * g + 1] = (uint8_t)w;
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++) (*cells)[g * ARC_SLOT_CELLS + i * ARC_SLOT + j] = (uint8_t)tu_below(&r, 3);
    }
}

static void test_arc_objects_routing(void **state) {
    (void)state;
    const size_t n = 300;
    uint8_t *cells, *hw;
    grids(n, &cells, &hw);
    int16_t *l1 = malloc(n * ARC_SLOT_CELLS * 2), *l2 = malloc(n * ARC_SLOT_CELLS * 2);
    assert_int_equal(tdm_arc_objects_labels(ref, cells, hw, n, 1, 0, 1, TDM_DEVICE_CPU, 1, l2, NULL), TDM_OK);
    double cells_n = 0;
    for (size_t g = 0; g < n; g++) cells_n += hw[2 * g] * hw[2 * g + 1];
    /* The model: one grid (a few hundred cells) stays on the CPU, 300 (~70,000 cells) go to the device. */
    tdm_ctx *ctx = make(1, 1, TDM_DEVICE_AUTO, TDM_CONFIG_UNSET_OP);
    tdm_arc_objects_stats st;
    calls = 0;
    assert_int_equal(tdm_arc_objects_labels(ctx, cells, hw, 1, 1, 0, 1, TDM_DEVICE_AUTO, 0, l1, &st), TDM_OK);
    assert_string_equal(st.backend, "cpu");
    assert_int_equal(st.route_reason, TDM_ROUTE_MODEL_CPU);
    assert_int_equal(tdm_arc_objects_labels(ctx, cells, hw, n, 1, 0, 1, TDM_DEVICE_AUTO, 0, l1, &st), TDM_OK);
    assert_string_equal(st.backend, "fake:0");
    assert_int_equal(st.route_reason, TDM_ROUTE_MODEL_GPU);
    assert_memory_equal(l1, l2, n * ARC_SLOT_CELLS * 2);
    tdm_route_record r = last_record(ctx);
    assert_true(r.work == cells_n);
    assert_int_equal(r.bytes_moved, (uint64_t)n * (ARC_SLOT_CELLS + 2 + 2 * ARC_SLOT_CELLS));
    /* Hints: CPU keeps the large batch, CUDA takes a single grid. */
    assert_int_equal(tdm_arc_objects_labels(ctx, cells, hw, n, 1, 0, 1, TDM_DEVICE_CPU, 0, l1, &st), TDM_OK);
    assert_string_equal(st.backend, "cpu");
    assert_int_equal(st.route_reason, TDM_ROUTE_FORCED_CALL);
    assert_memory_equal(l1, l2, n * ARC_SLOT_CELLS * 2);
    assert_int_equal(tdm_arc_objects_labels(ctx, cells, hw, 1, 1, 0, 1, TDM_DEVICE_CUDA, 0, l1, &st), TDM_OK);
    assert_string_equal(st.backend, "fake:0");
    assert_int_equal(calls, 2);
    /* TANDEM_ROUTE_OBJECTS=cpu. */
    ctx->cfg.route_op[TDM_OP_ARC_OBJECTS] = TDM_DEVICE_CPU;
    assert_int_equal(tdm_arc_objects_labels(ctx, cells, hw, n, 1, 0, 1, TDM_DEVICE_AUTO, 0, l1, &st), TDM_OK);
    assert_int_equal(st.route_reason, TDM_ROUTE_FORCED_ENV);
    tdm_destroy(ctx);
    /* No trusted model: the grid floor (4,096 grids) decides, as before the model. */
    ctx = make(1, 0, TDM_DEVICE_AUTO, TDM_CONFIG_UNSET_OP);
    assert_int_equal(tdm_arc_objects_labels(ctx, cells, hw, n, 1, 0, 1, TDM_DEVICE_AUTO, 0, l1, &st), TDM_OK);
    assert_string_equal(st.backend, "cpu");
    assert_int_equal(st.route_reason, TDM_ROUTE_SMALL_INPUT);
    tdm_destroy(ctx);
    free(cells), free(hw), free(l1), free(l2);
}

/* The runners on this machine's CPU and on the stand-in (which computes on the CPU, so its classes are
 * fitted like a device's, levels included): every class gets >= 10 timed runs over >= 2 sizes. */
static void test_calibration_runners(void **state) {
    (void)state;
    tdm_config c;
    tu_fake_config(&c);
    c.calibration_budget_ms = 1400;
    c.threads = 1;
    tdm_ctx *ctx = tu_fake_ctx(&c);
    tdm_backend *b = tu_fake_gpu(ctx, "fake:0", f_supports);
    b->lattice = &lat_ops, b->arc = &arc_ops;
    static const tdm_op ops[] = {TDM_OP_LATTICE_BFS,   TDM_OP_LATTICE_XOR,    TDM_OP_LATTICE_GEMM, TDM_OP_LATTICE_GEMM_BATCHED,
                                 TDM_OP_LATTICE_EWISE, TDM_OP_LATTICE_REDUCE, TDM_OP_ARC_OBJECTS};
    unsigned mask = 0;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        assert_non_null(tdm_cost_family_of(ops[i]));
        mask |= 1u << ops[i];
    }
    assert_int_equal(tdm_calibrate(ctx, mask), TDM_OK);
    tdm_costmodel m;
    tdm_costmodel_get(ctx, &m);
    int trusted = 0;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        for (int g = 0; g < 2; g++) {
            const tdm_cost_class *k = &m.cls[ops[i]][g];
            /* Buckets hold level-free medians: the device BFS class has none (its points carry levels). */
            const int levelled = g && ops[i] == TDM_OP_LATTICE_BFS;
            tu_check(k->samples >= 20 && (levelled ? k->nbuckets == 0 : k->nbuckets >= 2) && k->t0_us + k->us_per_work > 0 &&
                         isfinite(k->residual),
                     "%s %s: %u runs, %u buckets, t0 %g, slope %g", tdm_op_name(ops[i]), g ? "gpu" : "cpu", k->samples,
                     k->nbuckets, k->t0_us, k->us_per_work);
            trusted += k->trusted;
            /* Predictions grow with the work. */
            if (k->trusted)
                tu_check(tdm_costmodel_predict(&m, ops[i], g, 1e9, 0) > tdm_costmodel_predict(&m, ops[i], g, 2048, 0),
                         "%s %s: not increasing", tdm_op_name(ops[i]), g ? "gpu" : "cpu");
        }
    /* Timing on a shared machine is noisy: most classes, not every one, must pass the trust rule. */
    tu_check(trusted >= 10, "%d of 14 classes trusted", trusted);
    tdm_destroy(ctx);
}

/* A device time less its modelled copies, never below a tenth. */
static void test_less_link(void **state) {
    (void)state;
    tdm_config c;
    tu_fake_config(&c);
    tdm_ctx *ctx = tu_fake_ctx(&c);
    assert_true(tdm_cal_less_link(ctx, 100.0, 1000, 1000) == 100.0); /* no trusted link: untouched */
    tdm_costmodel m;
    memset(&m, 0, sizeof m);
    m.link_trusted = 1;
    m.h2d = m.d2h = (tdm_cost_link){10.0, 0.01};
    assert_int_equal(tdm_costmodel_set(ctx, &m), TDM_OK);
    assert_true(fabs(tdm_cal_less_link(ctx, 100.0, 1000, 0) - 80.0) < 1e-9);
    assert_true(fabs(tdm_cal_less_link(ctx, 100.0, 1000, 1000) - 60.0) < 1e-9);
    assert_true(fabs(tdm_cal_less_link(ctx, 100.0, 100000, 0) - 10.0) < 1e-9);
    tdm_destroy(ctx);
}

static int setup(void **state) {
    (void)state;
    tdm_config c;
    tu_fake_config(&c);
    return tdm_init(&ref, &c);
}
static int teardown(void **state) {
    (void)state;
    tdm_destroy(ref);
    return 0;
}

int main(void) {
    tu_init_seed("test_lattice_route");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bfs_small_cpu_large_gpu), cmocka_unit_test(test_bfs_residency_and_anonymous),
        cmocka_unit_test(test_other_ops_by_size),       cmocka_unit_test(test_overrides_and_hints),
        cmocka_unit_test(test_debug_router),            cmocka_unit_test(test_arc_objects_routing),
        cmocka_unit_test(test_less_link),               cmocka_unit_test(test_calibration_runners),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
