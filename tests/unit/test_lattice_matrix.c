/* test_lattice_matrix.c: unit tests of the matrix operations (spec section 5). GEMM on seeded random
 * shapes, transposes, padded leading dimensions and alpha/beta against a naive long-double reference within
 * the spec's bound 2 gamma_k (|alpha| |A||B| + |beta| |C0|) + tiny, plus the Frobenius check; batched GEMM
 * equal to single calls bit for bit; element-wise ops bitwise equal to the one IEEE operation computed
 * here (signed zeros, infinities, NaN positions, subnormals included), exp within the stated ulps;
 * reductions within 2 gamma_n sum|v|, min/max with NaN and signed zeros; argument errors named. */
#include "unit_common.h"

#include "tandem/lattice.h"

#include <float.h>
#include <math.h>

/* The CPU reference: device results are compared with it by tests/cross/test_lattice_cross.c. */
static int cpu_ctx(tdm_ctx **out) {
    tdm_config cfg;
    tdm_config_init(&cfg);
    cfg.device = TDM_DEVICE_CPU;
    return tdm_init(out, &cfg);
}

static tdm_ctx *ctx;

static int setup(void **state) {
    (void)state;
    return cpu_ctx(&ctx);
}
static int teardown(void **state) {
    (void)state;
    tdm_destroy(ctx);
    return 0;
}

static double rnd(tu_rng *r) { return tu_unit(r) * 2.0 - 1.0; }

/* Element (i, j) of op(X) for a row-major X with leading dimension ld. */
static long double at(const void *X, int dt, int trans, int64_t ld, int64_t i, int64_t j) {
    int64_t idx = trans ? j * ld + i : i * ld + j;
    return dt == TDM_LATTICE_F32 ? (long double)((const float *)X)[idx] : (long double)((const double *)X)[idx];
}

static int64_t pick_ld(tu_rng *r, int64_t cols) {
    int64_t ld = cols + tu_range(r, 0, 3);
    return ld > 0 ? ld : 1;
}

static void check_gemm_case(tu_rng *r, int dt, int ta, int tb, int64_t m, int64_t n, int64_t k) {
    /* Exact or padded leading dimensions; BLAS wants ld >= max(1, columns) even for empty operands. */
    const int64_t lda = pick_ld(r, ta ? m : k), ldb = pick_ld(r, tb ? k : n), ldc = pick_ld(r, n);
    const int64_t ra = ta ? k : m, rb = tb ? n : k;
    const size_t es = dt == TDM_LATTICE_F32 ? 4 : 8;
    size_t na = (size_t)(ra * lda + 1), nb = (size_t)(rb * ldb + 1), nc = (size_t)(m * ldc + 1);
    void *A = malloc(na * es), *B = malloc(nb * es), *C = malloc(nc * es), *C0 = malloc(nc * es);
    for (size_t i = 0; i < na; i++) dt ? (((double *)A)[i] = rnd(r)) : (((float *)A)[i] = (float)rnd(r));
    for (size_t i = 0; i < nb; i++) dt ? (((double *)B)[i] = rnd(r)) : (((float *)B)[i] = (float)rnd(r));
    for (size_t i = 0; i < nc; i++) dt ? (((double *)C)[i] = rnd(r)) : (((float *)C)[i] = (float)rnd(r));
    memcpy(C0, C, nc * es);
    double alpha = tu_below(r, 4) ? rnd(r) * 3 : 1.0, beta = tu_below(r, 3) ? rnd(r) : 0.0;
    if (dt == TDM_LATTICE_F32) alpha = (float)alpha, beta = (float)beta; /* the library rounds them to f32 */
    int rc = tdm_lattice_gemm(ctx, dt, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    tu_check(rc == TDM_OK, "gemm %lldx%lldx%lld: %s", (long long)m, (long long)n, (long long)k, tdm_last_error());
    const double u = dt == TDM_LATTICE_F32 ? 0x1p-24 : 0x1p-53, tiny = dt == TDM_LATTICE_F32 ? 0x1p-126 : 0x1p-1022;
    /* k+2 roundings at most per entry: the k products and sums, then alpha and beta. */
    const double kk = (double)(k + 2), gamma = kk * u / (1 - kk * u);
    long double diff2 = 0, ref2 = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            long double s = 0, sa = 0;
            for (int64_t p = 0; p < k; p++) {
                long double x = at(A, dt, ta, lda, i, p), y = at(B, dt, tb, ldb, p, j);
                s += x * y, sa += fabsl(x * y);
            }
            long double c0 = at(C0, dt, 0, ldc, i, j), want = (long double)alpha * s + (long double)beta * c0;
            long double got = at(C, dt, 0, ldc, i, j);
            long double bound = 2 * gamma * (fabsl((long double)alpha) * sa + fabsl((long double)beta) * fabsl(c0)) + tiny;
            tu_check(fabsl(got - want) <= bound, "dt %d ta %d tb %d %lldx%lldx%lld: C[%lld][%lld] = %.17Lg, want %.17Lg (bound %Lg)",
                     dt, ta, tb, (long long)m, (long long)n, (long long)k, (long long)i, (long long)j, got, want, bound);
            diff2 += (got - want) * (got - want), ref2 += sa * sa;
        }
    if (ref2 > 0 && beta == 0.0 && alpha == 1.0)
        tu_check(sqrtl(diff2) / sqrtl(ref2) <= 8 * sqrt((double)k) * u, "Frobenius %Lg", sqrtl(diff2) / sqrtl(ref2));
    /* The padding beyond each row of C is untouched. */
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = n; j < ldc; j++)
            tu_check(at(C, dt, 0, ldc, i, j) == at(C0, dt, 0, ldc, i, j), "padding of C written at %lld,%lld", (long long)i, (long long)j);
    free(A), free(B), free(C), free(C0);
}

static void test_gemm(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(601);
    for (int round = 0; round < 300; round++) {
        int dt = (int)tu_below(&r, 2), ta = (int)tu_below(&r, 2), tb = (int)tu_below(&r, 2);
        int64_t m = tu_range(&r, 0, 40), n = tu_range(&r, 0, 40), k = tu_range(&r, 0, 70);
        if (round < 8) m = n = k = 64 + round;
        if (round >= 8 && round < 16) ta = tb = 0; /* and exactly-fitting leading dimensions (below) */ /* a few sizes where BLAS blocks and threads */
        check_gemm_case(&r, dt, ta, tb, m, n, k);
    }
}

static void test_gemm_batched(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(602);
    for (int round = 0; round < 40; round++) {
        int dt = (int)tu_below(&r, 2), ta = (int)tu_below(&r, 2), tb = (int)tu_below(&r, 2);
        int64_t m = tu_range(&r, 1, 20), n = tu_range(&r, 1, 20), k = tu_range(&r, 1, 20), batch = tu_range(&r, 1, 12);
        int64_t lda = ta ? m : k, ldb = tb ? k : n, ldc = n;
        int64_t sa = (ta ? k : m) * lda + tu_range(&r, 0, 5), sb = tu_below(&r, 4) ? (tb ? n : k) * ldb + tu_range(&r, 0, 5) : 0,
                sc = m * ldc + tu_range(&r, 0, 5);
        const size_t es = dt ? 8 : 4;
        size_t na = (size_t)(sa * batch + (ta ? k : m) * lda), nb = (size_t)(sb * batch + (tb ? n : k) * ldb), nc = (size_t)(sc * batch);
        uint8_t *A = malloc(na * es), *B = malloc(nb * es), *C = malloc(nc * es), *C1 = malloc(nc * es);
        for (size_t i = 0; i < na; i++) dt ? (((double *)A)[i] = rnd(&r)) : (((float *)A)[i] = (float)rnd(&r));
        for (size_t i = 0; i < nb; i++) dt ? (((double *)B)[i] = rnd(&r)) : (((float *)B)[i] = (float)rnd(&r));
        for (size_t i = 0; i < nc; i++) dt ? (((double *)C)[i] = rnd(&r)) : (((float *)C)[i] = (float)rnd(&r));
        memcpy(C1, C, nc * es);
        double alpha = rnd(&r), beta = rnd(&r);
        assert_int_equal(tdm_lattice_gemm_batched(ctx, dt, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch), TDM_OK);
        for (int64_t i = 0; i < batch; i++)
            assert_int_equal(tdm_lattice_gemm(ctx, dt, ta, tb, m, n, k, alpha, A + (size_t)(i * sa) * es, lda,
                                              B + (size_t)(i * sb) * es, ldb, beta, C1 + (size_t)(i * sc) * es, ldc), TDM_OK);
        tu_check(!memcmp(C, C1, nc * es), "round %d: batched differs from single calls", round);
        free(A), free(B), free(C), free(C1);
    }
    /* Overlapping C items are refused. */
    float buf[64] = {0};
    assert_int_equal(tdm_lattice_gemm_batched(ctx, TDM_LATTICE_F32, 0, 0, 2, 2, 2, 1, buf, 2, 4, buf + 16, 2, 4, 0, buf + 32, 2, 3, 2), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "stride_c"));
}

/* The pointer-array form equals one call per item, bit for bit; overlapping outputs are refused. */
static void test_gemm_batched_ptrs(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(605);
    for (int round = 0; round < 30; round++) {
        int dt = (int)tu_below(&r, 2), ta = (int)tu_below(&r, 2), tb = (int)tu_below(&r, 2);
        int64_t m = tu_range(&r, 1, 12), n = tu_range(&r, 1, 12), k = tu_range(&r, 1, 12), batch = tu_range(&r, 1, 8);
        int64_t lda = ta ? m : k, ldb = tb ? k : n, ldc = n;
        const size_t es = dt ? 8 : 4, na = (size_t)((ta ? k : m) * lda), nb = (size_t)((tb ? n : k) * ldb), nc = (size_t)(m * ldc);
        /* Items scattered in one pool in random order; A items may repeat (inputs may be shared). */
        uint8_t *pool = malloc((na + nb + 2 * nc) * es * (size_t)batch);
        const void *A[8], *B[8];
        void *C[8], *C1[8];
        for (size_t i = 0; i < (na + nb + 2 * nc) * (size_t)batch; i++) dt ? (((double *)pool)[i] = rnd(&r)) : (((float *)pool)[i] = (float)rnd(&r));
        for (int64_t i = 0; i < batch; i++) {
            size_t base = (size_t)(batch - 1 - i) * (na + nb + 2 * nc) * es;
            A[i] = pool + base;
            B[i] = pool + base + na * es;
            C[i] = pool + base + (na + nb) * es;
            C1[i] = pool + base + (na + nb + nc) * es;
            memcpy(C1[i], C[i], nc * es);
        }
        if (batch > 1 && tu_below(&r, 2)) A[1] = A[0];
        double alpha = rnd(&r), beta = rnd(&r);
        assert_int_equal(tdm_lattice_gemm_batched_ptrs(ctx, dt, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch), TDM_OK);
        for (int64_t i = 0; i < batch; i++) {
            assert_int_equal(tdm_lattice_gemm(ctx, dt, ta, tb, m, n, k, alpha, A[i], lda, B[i], ldb, beta, C1[i], ldc), TDM_OK);
            tu_check(!memcmp(C[i], C1[i], nc * es), "round %d item %lld: pointer-array result differs", round, (long long)i);
        }
        /* A C item overlapping another C item, or an input, is refused (C[0] untouched then). */
        if (batch > 1) {
            void *save = C[1];
            C[1] = (uint8_t *)C[0] + (nc > 1 ? es : 0); /* starts inside C[0] */
            memcpy(C1[0], C[0], nc * es);
            assert_int_equal(tdm_lattice_gemm_batched_ptrs(ctx, dt, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch), TDM_E_INVAL);
            assert_non_null(strstr(tdm_last_error(), "overlaps"));
            assert_memory_equal(C1[0], C[0], nc * es);
            C[1] = (void *)B[batch - 1];
            assert_int_equal(tdm_lattice_gemm_batched_ptrs(ctx, dt, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch), TDM_E_INVAL);
            C[1] = save;
        }
        free(pool);
    }
    const void *nul[2] = {NULL, NULL};
    void *cn[2] = {NULL, NULL};
    float x[4];
    const void *xa[1] = {x};
    void *xc[1] = {NULL};
    assert_int_equal(tdm_lattice_gemm_batched_ptrs(ctx, TDM_LATTICE_F32, 0, 0, 2, 2, 2, 1, nul, 2, nul, 2, 0, cn, 2, 1), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_gemm_batched_ptrs(ctx, TDM_LATTICE_F32, 0, 0, 1, 1, 1, 1, xa, 1, xa, 1, 0, xc, 1, 1), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "C[0] is NULL"));
}

static void test_gemm_errors(void **state) {
    (void)state;
    float A[16] = {0}, B[16] = {0}, C[16] = {0};
    assert_int_equal(tdm_lattice_gemm(ctx, TDM_LATTICE_F32, 0, 0, 2, 2, 2, 1, A, 2, B, 1, 0, C, 2), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "ldb = 1"));
    assert_int_equal(tdm_lattice_gemm(ctx, TDM_LATTICE_F32, 1, 0, 3, 2, 2, 1, A, 2, B, 2, 0, C, 2), TDM_E_INVAL); /* A^T: lda >= m */
    assert_non_null(strstr(tdm_last_error(), "lda = 2"));
    assert_int_equal(tdm_lattice_gemm(ctx, TDM_LATTICE_F32, 0, 0, 2, 2, 2, 1, A, 2, B, 2, 0, C, 1), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_gemm(ctx, TDM_LATTICE_F32, 0, 0, -1, 2, 2, 1, A, 2, B, 2, 0, C, 2), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "m = -1"));
    assert_int_equal(tdm_lattice_gemm(ctx, TDM_LATTICE_F32, 0, 0, 2, INT64_C(3000000000), 2, 1, A, 2, B, INT64_C(3000000000), 0, C, INT64_C(3000000000)), TDM_E_OVERFLOW);
    assert_non_null(strstr(tdm_last_error(), "n = 3000000000"));
    assert_int_equal(tdm_lattice_gemm(ctx, TDM_LATTICE_F32, 0, 0, 2, 2, 2, 1, A, 2, B, 2, 0, A + 2, 2), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "overlaps A"));
    assert_int_equal(tdm_lattice_gemm(ctx, TDM_LATTICE_F32, 0, 0, 2, 2, 2, 1, NULL, 2, B, 2, 0, C, 2), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_gemm(ctx, 7, 0, 0, 2, 2, 2, 1, A, 2, B, 2, 0, C, 2), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_gemm(ctx, TDM_LATTICE_F32, 3, 0, 2, 2, 2, 1, A, 2, B, 2, 0, C, 2), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_gemm(ctx, TDM_LATTICE_F32, 0, 0, 0, 2, 2, 1, NULL, 2, NULL, 2, 0, NULL, 2), TDM_OK); /* empty */
    /* k = 0: C = beta C. */
    float c2[4] = {1, 2, 3, 4};
    assert_int_equal(tdm_lattice_gemm(ctx, TDM_LATTICE_F32, 0, 0, 2, 2, 0, 1, NULL, 1, NULL, 2, 2, c2, 2), TDM_OK);
    assert_true(c2[0] == 2 && c2[3] == 8);
}

/* ---- element-wise ------------------------------------------------------------------------------------ */

static double special(tu_rng *r, int dt) {
    static const double sp[] = {0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, 0x1p-1074, -0x1p-1060, 0x1p-149,
                                -0x1p-140, 1e300, -1e300, 3.4e38, 88.7, -103.0, 709.7, -745.0, 0.5};
    if (tu_below(r, 3)) return (tu_unit(r) * 2 - 1) * pow(2.0, (double)tu_range(r, -30, 30));
    double v = sp[tu_below(r, sizeof sp / sizeof *sp)];
    return dt ? v : (double)(float)v;
}

static uint64_t bits_of(const void *p, int dt, size_t i) {
    if (dt) {
        uint64_t b;
        memcpy(&b, (const double *)p + i, 8);
        return b;
    }
    uint32_t b;
    memcpy(&b, (const float *)p + i, 4);
    return b;
}

/* Distance in ulps between two finite values of the same type (ordered-integer trick). */
static int64_t ulps(double a, double b, int dt) {
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

#define REF_OP(T, SQRT, FABS)                                                                               \
    static T ref_##T(int op, T x, T y, T a) {                                                               \
        switch (op) {                                                                                       \
        case TDM_LATTICE_EW_ADD: return x + y;                                                              \
        case TDM_LATTICE_EW_SUB: return x - y;                                                              \
        case TDM_LATTICE_EW_MUL: return x * y;                                                              \
        case TDM_LATTICE_EW_DIV: return x / y;                                                              \
        case TDM_LATTICE_EW_SCALE: return a * x;                                                            \
        case TDM_LATTICE_EW_ADDS: return x + a;                                                             \
        case TDM_LATTICE_EW_NEG: return -x;                                                                 \
        case TDM_LATTICE_EW_ABS: return FABS(x);                                                            \
        case TDM_LATTICE_EW_SQUARE: return x * x;                                                           \
        case TDM_LATTICE_EW_SQRT: return SQRT(x);                                                           \
        }                                                                                                   \
        return 0;                                                                                           \
    }
REF_OP(float, sqrtf, fabsf)
REF_OP(double, sqrt, fabs)

static void test_ewise(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(603);
    for (int round = 0; round < 400; round++) {
        int dt = (int)tu_below(&r, 2), op = (int)tu_below(&r, TDM_LATTICE_EW_COUNT);
        size_t n = (size_t)tu_range(&r, 0, 300);
        const size_t es = dt ? 8 : 4;
        void *x = malloc(n * es + 8), *y = malloc(n * es + 8), *out = malloc(n * es + 8);
        for (size_t i = 0; i < n; i++) {
            double a = special(&r, dt), b = special(&r, dt);
            if (dt) ((double *)x)[i] = a, ((double *)y)[i] = b;
            else ((float *)x)[i] = (float)a, ((float *)y)[i] = (float)b;
        }
        double alpha = special(&r, dt);
        int inplace = (int)tu_below(&r, 3);
        void *dst = inplace == 1 ? x : out;
        void *xcopy = malloc(n * es + 8);
        memcpy(xcopy, x, n * es);
        int rc = tdm_lattice_ewise(ctx, op, dt, x, y, alpha, dst, n);
        tu_check(rc == TDM_OK, "ewise op %d: %s", op, tdm_last_error());
        for (size_t i = 0; i < n; i++) {
            double xi = dt ? ((double *)xcopy)[i] : ((float *)xcopy)[i], yi = dt ? ((double *)y)[i] : ((float *)y)[i];
            double got = dt ? ((double *)dst)[i] : ((float *)dst)[i];
            if (op == TDM_LATTICE_EW_EXP) {
                double want = dt ? (double)expl(xi) : (double)(float)expl(xi);
                if (isnan(want) || isinf(want)) {
                    tu_check(isnan(got) == isnan(want) && (isnan(want) || got == want), "exp(%g) = %g, want %g", xi, got, want);
                    continue;
                }
                double tiny = dt ? 0x1p-1022 : 0x1p-126;
                if (fabs(want) < tiny) tu_check(fabs(got - want) <= tiny, "exp(%g) subnormal", xi);
                else tu_check(ulps(got, want, dt) <= (dt ? 2 : 3), "exp(%.17g) = %.17g, want %.17g (%lld ulps)", xi, got, want, (long long)ulps(got, want, dt));
                continue;
            }
            uint64_t want_bits;
            if (dt) {
                double w = ref_double(op, xi, yi, alpha);
                memcpy(&want_bits, &w, 8);
            } else {
                float w = ref_float(op, (float)xi, (float)yi, (float)alpha);
                uint32_t b;
                memcpy(&b, &w, 4);
                want_bits = b;
            }
            uint64_t got_bits = bits_of(dst, dt, i);
            int both_nan = isnan(got) && (dt ? isnan(ref_double(op, xi, yi, alpha)) : isnan(ref_float(op, (float)xi, (float)yi, (float)alpha)));
            tu_check(got_bits == want_bits || both_nan, "dt %d op %d x %.17g y %.17g alpha %.17g: got %.17g want bits %llx", dt, op, xi,
                     yi, alpha, got, (unsigned long long)want_bits);
        }
        free(x), free(y), free(out), free(xcopy);
    }
    double v[4] = {1, 2, 3, 4};
    assert_int_equal(tdm_lattice_ewise(ctx, TDM_LATTICE_EW_ADD, TDM_LATTICE_F64, v, NULL, 0, v, 4), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_ewise(ctx, TDM_LATTICE_EW_NEG, TDM_LATTICE_F64, v, NULL, 0, v + 1, 3), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "overlaps"));
    assert_int_equal(tdm_lattice_ewise(ctx, TDM_LATTICE_EW_COUNT, TDM_LATTICE_F64, v, v, 0, v, 4), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_ewise(ctx, TDM_LATTICE_EW_NEG, TDM_LATTICE_F64, v, NULL, 0, v, 4), TDM_OK);
    assert_true(v[0] == -1 && v[3] == -4);
}

static void test_reduce(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(604);
    for (int round = 0; round < 200; round++) {
        int dt = (int)tu_below(&r, 2);
        size_t n = (size_t)tu_range(&r, 1, 5000);
        void *x = malloc(n * (dt ? 8 : 4));
        long double s = 0, sa = 0;
        double mn = INFINITY, mx = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            double v = rnd(&r) * pow(2.0, (double)tu_range(&r, -10, 10));
            if (!dt) v = (float)v;
            if (dt) ((double *)x)[i] = v;
            else ((float *)x)[i] = (float)v;
            s += v, sa += fabsl((long double)v);
            if (v < mn) mn = v;
            if (v > mx) mx = v;
        }
        double got;
        assert_int_equal(tdm_lattice_reduce(ctx, TDM_LATTICE_RED_SUM, dt, x, n, &got), TDM_OK);
        const double u = dt ? 0x1p-53 : 0x1p-24, gamma = n * u / (1 - n * u);
        tu_check(fabsl(got - s) <= 2 * gamma * sa, "sum of %zu: %.17g vs %.17Lg", n, got, s);
        assert_int_equal(tdm_lattice_reduce(ctx, TDM_LATTICE_RED_MIN, dt, x, n, &got), TDM_OK);
        assert_true(got == mn);
        assert_int_equal(tdm_lattice_reduce(ctx, TDM_LATTICE_RED_MAX, dt, x, n, &got), TDM_OK);
        assert_true(got == mx);
        free(x);
    }
    double z[3] = {0.0, -0.0, 0.0}, got;
    assert_int_equal(tdm_lattice_reduce(ctx, TDM_LATTICE_RED_MIN, TDM_LATTICE_F64, z, 3, &got), TDM_OK);
    assert_true(got == 0 && signbit(got));
    assert_int_equal(tdm_lattice_reduce(ctx, TDM_LATTICE_RED_MAX, TDM_LATTICE_F64, z + 1, 1, &got), TDM_OK);
    assert_true(signbit(got));
    assert_int_equal(tdm_lattice_reduce(ctx, TDM_LATTICE_RED_MAX, TDM_LATTICE_F64, z, 3, &got), TDM_OK);
    assert_true(got == 0 && !signbit(got));
    float f[3] = {1, NAN, 2};
    assert_int_equal(tdm_lattice_reduce(ctx, TDM_LATTICE_RED_MAX, TDM_LATTICE_F32, f, 3, &got), TDM_OK);
    assert_true(isnan(got));
    assert_int_equal(tdm_lattice_reduce(ctx, TDM_LATTICE_RED_SUM, TDM_LATTICE_F32, NULL, 0, &got), TDM_OK);
    assert_true(got == 0);
    assert_int_equal(tdm_lattice_reduce(ctx, TDM_LATTICE_RED_MIN, TDM_LATTICE_F32, f, 0, &got), TDM_E_INVAL);
}

int main(void) {
    tu_init_seed("test_lattice_matrix");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm),  cmocka_unit_test(test_gemm_batched), cmocka_unit_test(test_gemm_batched_ptrs),
        cmocka_unit_test(test_gemm_errors),
        cmocka_unit_test(test_ewise), cmocka_unit_test(test_reduce),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
