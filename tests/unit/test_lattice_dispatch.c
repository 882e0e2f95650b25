/* test_lattice_dispatch.c: unit tests of how lattice ops reach a device backend, with a fake device (no GPU
 * needed): a chosen device answers through its lattice entry points and the result names it; a CPU
 * preference bypasses it; calls without a device path (analysis, batches, multi-source sweeps) stay on the
 * CPU; a failing device is logged and the CPU answers with the same results, except under TANDEM_STRICT,
 * where the device's error is returned. The fake computes its answers with a CPU context, so what is
 * tested is the dispatch, not kernels (tests/cross/test_lattice_cross.c checks those on a GPU). */
#include "unit_common.h"

#include "fake_backend.h"
#include "lattice/lattice_device.h"
#include "tandem/lattice.h"

static tdm_ctx *ref; /* CPU-only context the fake computes with */
static int fake_fail;
static int calls;

static int fake_bfs_path(const tdm_backend *b, const tdm_lattice_csr *g, int64_t s, int64_t t, int64_t **path, int64_t *hops) {
    calls++;
    if (fake_fail) return tdm_error(TDM_E_DEVICE_OOM, "fake: device full");
    tdm_lattice_path p;
    int rc = tdm_lattice_sp(ref, g, s, t, TDM_DEVICE_CPU, &p);
    if (rc && rc != TDM_E_NOPATH) return rc;
    *path = p.vertex, *hops = p.hops;
    return TDM_OK;
}
static int fake_bfs_dist(const tdm_backend *b, const tdm_lattice_csr *g, int64_t s, int32_t *dist) {
    calls++;
    if (fake_fail) return tdm_error(TDM_E_DEVICE, "fake: failed");
    return tdm_lattice_bfs_multi(ref, g, &s, 1, dist, NULL);
}
static int fake_xor_key(const tdm_backend *b, const void *in, void *out, size_t n, const uint8_t *key, size_t len, uint64_t off) {
    calls++;
    if (fake_fail) return tdm_error(TDM_E_DEVICE, "fake: failed");
    tdm_lattice_key k = {key, len, off};
    return tdm_lattice_xor(ref, in, out, n, &k, 0);
}
static int fake_xor_seeded(const tdm_backend *b, const void *in, void *out, size_t n, uint64_t seed, uint64_t off) {
    calls++;
    if (fake_fail) return tdm_error(TDM_E_DEVICE, "fake: failed");
    return tdm_lattice_xor_seeded(ref, in, out, n, &seed, off, 0);
}
static int fake_gemm(const tdm_backend *b, tdm_lattice_dtype dt, tdm_lattice_trans ta, tdm_lattice_trans tb, int64_t m, int64_t n,
                     int64_t k, double alpha, const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb, int64_t sb,
                     double beta, void *C, int64_t ldc, int64_t sc, int64_t batch) {
    calls++;
    if (fake_fail) return tdm_error(TDM_E_DEVICE, "fake: failed");
    return tdm_lattice_gemm_batched(ref, dt, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}
static int fake_ewise(const tdm_backend *b, tdm_lattice_ewise_op op, tdm_lattice_dtype dt, const void *x, const void *y,
                      double alpha, void *out, size_t n) {
    calls++;
    if (fake_fail) return tdm_error(TDM_E_DEVICE, "fake: failed");
    return tdm_lattice_ewise(ref, op, dt, x, y, alpha, out, n);
}
static int fake_reduce(const tdm_backend *b, tdm_lattice_reduce_op op, tdm_lattice_dtype dt, const void *x, size_t n, double *out) {
    calls++;
    if (fake_fail) return tdm_error(TDM_E_DEVICE, "fake: failed");
    return tdm_lattice_reduce(ref, op, dt, x, n, out);
}
/* "Device" aux is host memory here: the fake runs the CPU query on it. */
static int fake_catalytic(const tdm_backend *b, const tdm_lattice_csr *g, void *aux, int64_t s, int64_t t, int64_t K,
                          uint64_t seed, int64_t fail_at, int64_t *dist) {
    calls++;
    if (fake_fail) return tdm_error(TDM_E_DEVICE, "fake: failed");
    tdm_lattice_aux *h;
    int rc = tdm_lattice_aux_wrap(ref, aux, (size_t)(K + 1) * 8 * (size_t)g->nvertices, &h);
    if (rc) return rc;
    rc = tdm_lattice_catalytic_distance(ref, g, h, s, t, K, &seed, 0, dist);
    tdm_lattice_aux_free(h);
    return rc == TDM_E_NOPATH ? TDM_OK : rc;
}

static const tdm_lattice_dev_ops fake_ops = {fake_bfs_path, fake_bfs_dist, fake_xor_key, fake_xor_seeded,
                                             fake_gemm,     fake_ewise,    fake_reduce,  fake_catalytic, NULL, NULL};

static int fake_supports(const tdm_backend *b, tdm_op op) {
    return op == TDM_OP_LATTICE_BFS || op == TDM_OP_LATTICE_XOR || op == TDM_OP_LATTICE_GEMM || op == TDM_OP_LATTICE_CATALYTIC ||
           op == TDM_OP_LATTICE_GEMM_BATCHED || op == TDM_OP_LATTICE_EWISE || op == TDM_OP_LATTICE_REDUCE;
}
/* TANDEM_DEVICE=cpu (no real GPU even on a GPU machine) plus the fake device, and a cost model under which
 * the device wins every lattice op at every size: what is tested here is the dispatch once the router
 * has chosen the device (test_lattice_route.c tests the choice). */
static tdm_ctx *fake_ctx(int strict) {
    tdm_config c;
    tu_fake_config(&c);
    c.strict = strict;
    c.sp_cache = 0; /* repeated queries must reach the device, not the cache */
    tdm_ctx *ctx = tu_fake_ctx(&c);
    tu_fake_gpu(ctx, "fake:0", fake_supports)->lattice = &fake_ops;
    tdm_costmodel m;
    memset(&m, 0, sizeof m);
    static const tdm_op ops[] = {TDM_OP_LATTICE_BFS, TDM_OP_LATTICE_XOR, TDM_OP_LATTICE_GEMM, TDM_OP_LATTICE_GEMM_BATCHED,
                                 TDM_OP_LATTICE_EWISE, TDM_OP_LATTICE_REDUCE};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        tu_model_line(&m, ops[i], 0, 100.0, 1.0, 0);
        tu_model_line(&m, ops[i], 1, 1.0, 0.001, 0);
    }
    assert_int_equal(tdm_costmodel_set(ctx, &m), TDM_OK);
    return ctx;
}

static int setup(void **state) {
    (void)state;
    tdm_config c;
    tdm_config_init(&c);
    c.device = TDM_DEVICE_CPU;
    return tdm_init(&ref, &c);
}
static int teardown(void **state) {
    (void)state;
    tdm_destroy(ref);
    return 0;
}

static void test_paths(void **state) {
    (void)state;
    tdm_ctx *ctx = fake_ctx(0), *strict = fake_ctx(1);
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(ctx, 3, 5, 0, &lat), TDM_OK);
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    tdm_lattice_path want, p;
    assert_int_equal(tdm_lattice_sp(ref, &g, 3, 117, TDM_DEVICE_CPU, &want), TDM_OK);
    fake_fail = 0, calls = 0;
    assert_int_equal(tdm_lattice_sp(ctx, &g, 3, 117, TDM_DEVICE_AUTO, &p), TDM_OK);
    assert_int_equal(calls, 1);
    assert_string_equal(p.backend, "fake:0");
    assert_int_equal(p.hops, want.hops);
    assert_memory_equal(p.vertex, want.vertex, (size_t)(want.hops + 1) * 8);
    tdm_lattice_path_release(&p);
    /* A CPU preference never touches the device. */
    assert_int_equal(tdm_lattice_sp(ctx, &g, 3, 117, TDM_DEVICE_CPU, &p), TDM_OK);
    assert_int_equal(calls, 1);
    assert_string_equal(p.backend, "cpu");
    tdm_lattice_path_release(&p);
    /* A failing device: the CPU answers the same path; under strict the device's error comes back. */
    fake_fail = 1;
    assert_int_equal(tdm_lattice_sp(ctx, &g, 3, 117, TDM_DEVICE_CUDA, &p), TDM_OK);
    assert_int_equal(calls, 2);
    assert_string_equal(p.backend, "cpu");
    assert_memory_equal(p.vertex, want.vertex, (size_t)(want.hops + 1) * 8);
    tdm_lattice_path_release(&p);
    assert_int_equal(tdm_lattice_sp(strict, &g, 3, 117, TDM_DEVICE_AUTO, &p), TDM_E_DEVICE_OOM);
    /* Single-source sweeps may use the device; multi-source ones, batches and analysis stay on the CPU. */
    fake_fail = 0, calls = 0;
    int32_t d1[125], d2[125];
    int64_t src[2] = {0, 124};
    assert_int_equal(tdm_lattice_bfs_multi(ctx, &g, src, 1, d1, NULL), TDM_OK);
    assert_int_equal(calls, 1);
    assert_int_equal(tdm_lattice_bfs_multi(ref, &g, src, 1, d2, NULL), TDM_OK);
    assert_memory_equal(d1, d2, sizeof d1);
    int64_t nearest[125];
    assert_int_equal(tdm_lattice_bfs_multi(ctx, &g, src, 2, d1, nearest), TDM_OK);
    assert_int_equal(tdm_lattice_bfs_multi(ctx, &g, src, 1, d1, nearest), TDM_OK);
    assert_int_equal(calls, 1);
    tdm_lattice_path bp[2];
    int st[2];
    int64_t dst[2] = {117, 5};
    assert_int_equal(tdm_lattice_sp_batch(ctx, &g, 2, src, dst, TDM_DEVICE_AUTO, bp, st), TDM_OK);
    assert_string_equal(bp[0].backend, "cpu");
    tdm_lattice_path_release(&bp[0]), tdm_lattice_path_release(&bp[1]);
    assert_int_equal(calls, 1);
    /* Analysis: the diameter's sweeps go to the device, the other metrics stay on the CPU; a failing
     * device gives the same diameter from CPU sweeps (the device's error under strict). */
    tdm_lattice_analysis a;
    assert_int_equal(tdm_lattice_analyze(ctx, &g, TDM_LATTICE_ANALYZE_ALL, &a), TDM_OK);
    assert_string_equal(a.backend, "cpu");
    assert_string_equal(a.backend_diameter, "fake:0");
    assert_int_equal(a.diameter, 12);
    assert_true(a.diameter_exact);
    assert_int_equal(calls, 1 + a.diameter_bfs);
    int64_t runs = a.diameter_bfs;
    tdm_lattice_analysis_release(&a);
    fake_fail = 1;
    assert_int_equal(tdm_lattice_analyze(ctx, &g, TDM_LATTICE_ANALYZE_ALL, &a), TDM_OK);
    assert_string_equal(a.backend_diameter, "cpu");
    assert_int_equal(a.diameter, 12);
    assert_int_equal(a.diameter_bfs, runs);
    tdm_lattice_analysis_release(&a);
    assert_int_equal(tdm_lattice_analyze(strict, &g, TDM_LATTICE_ANALYZE_ALL, &a), TDM_E_DEVICE);
    fake_fail = 0;
    tdm_lattice_path_release(&want);
    tdm_lattice_free(lat);
    tdm_destroy(ctx);
    tdm_destroy(strict);
}

static void test_other_ops(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(701);
    tdm_ctx *ctx = fake_ctx(0), *strict = fake_ctx(1);
    for (int fail = 0; fail < 2; fail++) {
        fake_fail = fail, calls = 0;
        uint8_t in[300], want[300], got[300], key[7];
        for (size_t i = 0; i < sizeof in; i++) in[i] = (uint8_t)tu_next(&r);
        for (size_t i = 0; i < sizeof key; i++) key[i] = (uint8_t)tu_next(&r);
        tdm_lattice_key k = {key, 7, 3};
        assert_int_equal(tdm_lattice_xor(ref, in, want, 300, &k, 0), TDM_OK);
        assert_int_equal(tdm_lattice_xor(ctx, in, got, 300, &k, 0), TDM_OK);
        assert_memory_equal(got, want, 300);
        uint64_t seed = 99;
        assert_int_equal(tdm_lattice_xor_seeded(ref, in, want, 300, &seed, 5, 0), TDM_OK);
        assert_int_equal(tdm_lattice_xor_seeded(ctx, in, got, 300, &seed, 5, 0), TDM_OK);
        assert_memory_equal(got, want, 300);
        double A[12], B[12], C1[9] = {0}, C2[9] = {0}, x[12], o1[12], o2[12], s1, s2;
        for (int i = 0; i < 12; i++) A[i] = tu_unit(&r), B[i] = tu_unit(&r), x[i] = tu_unit(&r) - 0.5;
        assert_int_equal(tdm_lattice_gemm(ref, TDM_LATTICE_F64, 0, 0, 3, 3, 4, 1.5, A, 4, B, 3, 0, C1, 3), TDM_OK);
        assert_int_equal(tdm_lattice_gemm(ctx, TDM_LATTICE_F64, 0, 0, 3, 3, 4, 1.5, A, 4, B, 3, 0, C2, 3), TDM_OK);
        assert_memory_equal(C1, C2, sizeof C1);
        assert_int_equal(tdm_lattice_ewise(ref, TDM_LATTICE_EW_DIV, TDM_LATTICE_F64, x, A, 0, o1, 12), TDM_OK);
        assert_int_equal(tdm_lattice_ewise(ctx, TDM_LATTICE_EW_DIV, TDM_LATTICE_F64, x, A, 0, o2, 12), TDM_OK);
        assert_memory_equal(o1, o2, sizeof o1);
        assert_int_equal(tdm_lattice_reduce(ref, TDM_LATTICE_RED_MAX, TDM_LATTICE_F64, x, 12, &s1), TDM_OK);
        assert_int_equal(tdm_lattice_reduce(ctx, TDM_LATTICE_RED_MAX, TDM_LATTICE_F64, x, 12, &s2), TDM_OK);
        assert_true(s1 == s2);
        assert_int_equal(calls, 5); /* every op went to the device first */
        if (fail) {
            assert_int_equal(tdm_lattice_xor(strict, in, got, 300, &k, 0), TDM_E_DEVICE);
            assert_int_equal(tdm_lattice_reduce(strict, TDM_LATTICE_RED_SUM, TDM_LATTICE_F64, x, 12, &s2), TDM_E_DEVICE);
        }
    }
    tdm_destroy(ctx);
    tdm_destroy(strict);
}

/* Catalytic queries run where aux lives: device aux on its device (no CPU fallback), host aux on the CPU. */
static void test_device_aux(void **state) {
    (void)state;
    tdm_ctx *ctx = fake_ctx(0);
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(ctx, 2, 5, 0, &lat), TDM_OK);
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    const size_t bytes = 9 * 8 * 25;
    uint64_t *mem = malloc(bytes), *copy = malloc(bytes);
    tu_rng r = tu_rng_for(702);
    for (size_t i = 0; i < bytes / 8; i++) mem[i] = tu_next(&r);
    memcpy(copy, mem, bytes);
    tdm_lattice_aux *aux;
    assert_int_equal(tdm_lattice_aux_wrap_device(ctx, 0, mem, bytes, &aux), TDM_OK);
    fake_fail = 0, calls = 0;
    uint64_t seed = 5;
    int64_t d;
    assert_int_equal(tdm_lattice_catalytic_distance(ctx, &g, aux, 0, 24, 8, &seed, 0, &d), TDM_OK);
    assert_int_equal(d, 8);
    assert_int_equal(calls, 1);
    assert_int_equal(tdm_lattice_catalytic_distance(ctx, &g, aux, 0, 24, 7, &seed, 0, &d), TDM_E_NOPATH);
    assert_int_equal(d, -1);
    tdm_lattice_path p;
    assert_int_equal(tdm_lattice_catalytic_path(ctx, &g, aux, 0, 12, 8, &seed, 0, &p), TDM_OK);
    assert_string_equal(p.backend, "fake:0");
    assert_int_equal(p.hops, 4);
    tdm_lattice_path_release(&p);
    assert_memory_equal(mem, copy, bytes);
    /* A failing device is an error (the CPU may not touch device memory). */
    fake_fail = 1;
    assert_int_equal(tdm_lattice_catalytic_distance(ctx, &g, aux, 0, 24, 8, &seed, 0, &d), TDM_E_DEVICE);
    fake_fail = 0;
    tdm_lattice_aux_free(aux);
    /* Host aux stays on the CPU even with a device that supports the op. */
    calls = 0;
    assert_int_equal(tdm_lattice_aux_wrap(ctx, mem, bytes, &aux), TDM_OK);
    assert_int_equal(tdm_lattice_catalytic_distance(ctx, &g, aux, 0, 24, 8, &seed, 0, &d), TDM_OK);
    assert_int_equal(d, 8);
    assert_int_equal(calls, 0);
    tdm_lattice_aux_free(aux);
    /* No such device, misaligned memory. */
    assert_int_equal(tdm_lattice_aux_wrap_device(ctx, 3, mem, bytes, &aux), TDM_E_UNSUPPORTED);
    assert_int_equal(tdm_lattice_aux_wrap_device(ctx, 0, (char *)mem + 4, bytes - 8, &aux), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_aux_wrap_device(ref, 0, mem, bytes, &aux), TDM_E_UNSUPPORTED);
    free(mem), free(copy);
    tdm_lattice_free(lat);
    tdm_destroy(ctx);
}

int main(void) {
    tu_init_seed("test_lattice_dispatch");
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_paths), cmocka_unit_test(test_other_ops),
                                       cmocka_unit_test(test_device_aux)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
