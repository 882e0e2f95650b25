/* matrix.c: matrix operations of the lattice engine (spec section 5) on the CPU: GEMM and strided batched
 * GEMM through CBLAS (OpenBLAS from Debian), element-wise ops and reductions as plain loops.
 *
 * OpenBLAS is loaded at the first GEMM (dlopen), not linked: its pthread build starts a thread per core
 * when it loads, and those threads spin for a fraction of a second, which took the second core from every
 * short process that never multiplies a matrix (an ARC solver run on two threads was 3x slower than on
 * one). Only this file calls BLAS. A machine without it gets TDM_E_UNSUPPORTED from the GEMM calls.
 *
 * This file is compiled with -ffp-contract=off (CMakeLists.txt): each element-wise result must be exactly
 * one IEEE operation so that a GPU kernel built with --fmad=false gives the same bits. Arguments are
 * checked before BLAS sees them, because reference BLAS reports bad arguments by printing and exiting
 * (xerbla), which a library must never do. */
#include "lattice/lattice_internal.h"
#include "lattice/lattice_device.h"

#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Debian's OpenBLAS soname (libopenblas0-pthread, what libopenblas-dev pulls in). */
#define BLAS_SONAME "libopenblas.so.0"

typedef void (*sgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint, blasint, float,
                         const float *, blasint, const float *, blasint, float, float *, blasint);
typedef void (*dgemm_fn)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint, blasint, double,
                         const double *, blasint, const double *, blasint, double, double *, blasint);
static struct {
    pthread_once_t once;
    sgemm_fn sgemm;
    dgemm_fn dgemm;
    int (*get_threads)(void);
    void (*set_threads)(int);
    char why[256];
} blas = {.once = PTHREAD_ONCE_INIT};

static void blas_load(void) {
    void *h = dlopen(BLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(blas.why, sizeof blas.why, "%s", e ? e : "dlopen failed");
        return;
    }
    /* dlsym returns object pointers; the POSIX way to turn them into function pointers is a copy */
    void *f[4] = {dlsym(h, "cblas_sgemm"), dlsym(h, "cblas_dgemm"), dlsym(h, "openblas_get_num_threads"),
                  dlsym(h, "openblas_set_num_threads")};
    if (!f[0] || !f[1]) {
        snprintf(blas.why, sizeof blas.why, "%s has no cblas_sgemm/cblas_dgemm", BLAS_SONAME);
        return;
    }
    memcpy(&blas.sgemm, &f[0], sizeof f[0]);
    memcpy(&blas.dgemm, &f[1], sizeof f[1]);
    if (f[2] && f[3]) memcpy(&blas.get_threads, &f[2], sizeof f[2]), memcpy(&blas.set_threads, &f[3], sizeof f[3]);
}

/* Loads BLAS once; OpenBLAS runs its own thread pool: give it TANDEM_THREADS so that the library's
 * thread budget holds. Errors: TDM_E_UNSUPPORTED (no BLAS on this machine). */
static int blas_ready(tdm_ctx *ctx, const char *fn) {
    pthread_once(&blas.once, blas_load);
    if (!blas.sgemm) return tdm_error(TDM_E_UNSUPPORTED, "%s: no CPU BLAS (%s: %s; install libopenblas0)", fn, BLAS_SONAME, blas.why);
    int want = tdm_ctx_threads(ctx);
    if (blas.get_threads && blas.get_threads() != want) blas.set_threads(want);
    return TDM_OK;
}

static size_t dtype_size(tdm_lattice_dtype dt) { return dt == TDM_LATTICE_F32 ? 4 : 8; }

/* Elements an operand of rows x cols with leading dimension ld spans: (rows-1)*ld + cols, 0 if empty. */
static int extent(const char *fn, const char *name, int64_t rows, int64_t cols, int64_t ld, size_t *out) {
    if (ld < (cols > 1 ? cols : 1))
        return tdm_error(TDM_E_INVAL, "%s: leading dimension ld%s = %lld is smaller than max(1, its %lld columns)", fn, name,
                         (long long)ld, (long long)cols);
    if (ld > INT32_MAX) return tdm_error(TDM_E_OVERFLOW, "%s: ld%s = %lld exceeds INT32_MAX", fn, name, (long long)ld);
    if (!rows || !cols) return *out = 0, TDM_OK;
    size_t e;
    if (tdm_size_mul((size_t)(rows - 1), (size_t)ld, &e) || e > SIZE_MAX - (size_t)cols)
        return tdm_error(TDM_E_OVERFLOW, "%s: operand %s of %lld x %lld (ld %lld) overflows", fn, name, (long long)rows,
                         (long long)cols, (long long)ld);
    *out = e + (size_t)cols;
    return TDM_OK;
}

static int overlaps(const void *a, size_t abytes, const void *b, size_t bbytes) {
    if (!abytes || !bbytes) return 0;
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + bbytes && y < x + abytes;
}

typedef struct {
    size_t ea, eb, ec; /* extents in elements */
} gemm_shape;

static int check_gemm(const char *fn, tdm_lattice_dtype dt, tdm_lattice_trans ta, tdm_lattice_trans tb, int64_t m,
                      int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc, gemm_shape *sh) {
    if (dt != TDM_LATTICE_F32 && dt != TDM_LATTICE_F64) return tdm_error(TDM_E_INVAL, "%s: unknown dtype %d", fn, (int)dt);
    if ((ta != TDM_LATTICE_NOTRANS && ta != TDM_LATTICE_TRANS) || (tb != TDM_LATTICE_NOTRANS && tb != TDM_LATTICE_TRANS))
        return tdm_error(TDM_E_INVAL, "%s: unknown transpose flag", fn);
    const int64_t dims[3] = {m, n, k};
    static const char *const dname[3] = {"m", "n", "k"};
    for (int i = 0; i < 3; i++) {
        if (dims[i] < 0) return tdm_error(TDM_E_INVAL, "%s: %s = %lld is negative", fn, dname[i], (long long)dims[i]);
        if (dims[i] > INT32_MAX) return tdm_error(TDM_E_OVERFLOW, "%s: %s = %lld exceeds INT32_MAX", fn, dname[i], (long long)dims[i]);
    }
    int rc;
    /* Row-major storage: A is m x k (k x m when transposed), B is k x n (n x k), C is m x n. */
    if ((rc = extent(fn, "a", ta ? k : m, ta ? m : k, lda, &sh->ea)) || (rc = extent(fn, "b", tb ? n : k, tb ? k : n, ldb, &sh->eb)) ||
        (rc = extent(fn, "c", m, n, ldc, &sh->ec)))
        return rc;
    return TDM_OK;
}

static void gemm_one(tdm_lattice_dtype dt, tdm_lattice_trans ta, tdm_lattice_trans tb, int m, int n, int k, double alpha,
                     const void *A, int lda, const void *B, int ldb, double beta, void *C, int ldc) {
    const enum CBLAS_TRANSPOSE oa = ta ? CblasTrans : CblasNoTrans, ob = tb ? CblasTrans : CblasNoTrans;
    if (dt == TDM_LATTICE_F32)
        blas.sgemm(CblasRowMajor, oa, ob, m, n, k, (float)alpha, A, lda, B, ldb, (float)beta, C, ldc);
    else
        blas.dgemm(CblasRowMajor, oa, ob, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

int tdm_lattice_gemm(tdm_ctx *ctx, tdm_lattice_dtype dt, tdm_lattice_trans ta, tdm_lattice_trans tb, int64_t m,
                     int64_t n, int64_t k, double alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                     double beta, void *C, int64_t ldc) {
    static const char fn[] = "tdm_lattice_gemm";
    if (!ctx) return tdm_error(TDM_E_INVAL, "%s: ctx is NULL", fn);
    gemm_shape sh;
    int rc = check_gemm(fn, dt, ta, tb, m, n, k, lda, ldb, ldc, &sh);
    if (rc) return rc;
    if (!m || !n) return TDM_OK;
    if ((k && (!A || !B)) || !C) return tdm_error(TDM_E_INVAL, "%s: %s is NULL", fn, !C ? "C" : !A ? "A" : "B");
    const size_t es = dtype_size(dt);
    if (k && (overlaps(C, sh.ec * es, A, sh.ea * es) || overlaps(C, sh.ec * es, B, sh.eb * es)))
        return tdm_error(TDM_E_INVAL, "%s: C overlaps %s", fn, overlaps(C, sh.ec * es, A, sh.ea * es) ? "A" : "B");
    const uint64_t in = (uint64_t)((k ? sh.ea + sh.eb : 0) + sh.ec) * es, out = (uint64_t)sh.ec * es;
    tdm_lat_req q = {.op = TDM_OP_LATTICE_GEMM, .pref = TDM_DEVICE_AUTO, .device_ok = 1,
                     .work = (double)m * (double)n * (double)k, .h2d_bytes = in, .d2h_bytes = out, .device_bytes = in};
    tdm_lat_placement pl;
    if ((rc = tdm_lat_place(ctx, &q, &pl))) return rc;
    const tdm_backend *b = pl.backend;
    if (b->kind != TDM_BACKEND_CPU) {
        rc = b->lattice->gemm(b, dt, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
        if (rc == TDM_OK) return tdm_lat_placed_done(ctx, &pl), TDM_OK;
        if ((rc = tdm_lat_device_failed(ctx, b, TDM_OP_LATTICE_GEMM, rc))) return rc;
    }
    if ((rc = blas_ready(ctx, fn))) return rc;
    gemm_one(dt, ta, tb, (int)m, (int)n, (int)k, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
    if (pl.backend->kind == TDM_BACKEND_CPU) tdm_lat_placed_done(ctx, &pl); /* not after a fallback */
    return TDM_OK;
}

int tdm_lattice_gemm_batched(tdm_ctx *ctx, tdm_lattice_dtype dt, tdm_lattice_trans ta, tdm_lattice_trans tb,
                             int64_t m, int64_t n, int64_t k, double alpha, const void *A, int64_t lda,
                             int64_t stride_a, const void *B, int64_t ldb, int64_t stride_b, double beta, void *C,
                             int64_t ldc, int64_t stride_c, int64_t batch) {
    static const char fn[] = "tdm_lattice_gemm_batched";
    if (!ctx) return tdm_error(TDM_E_INVAL, "%s: ctx is NULL", fn);
    gemm_shape sh;
    int rc = check_gemm(fn, dt, ta, tb, m, n, k, lda, ldb, ldc, &sh);
    if (rc) return rc;
    if (batch < 0) return tdm_error(TDM_E_INVAL, "%s: batch = %lld is negative", fn, (long long)batch);
    if (stride_a < 0 || stride_b < 0 || stride_c < 0) return tdm_error(TDM_E_INVAL, "%s: negative stride", fn);
    if (!batch || !m || !n) return TDM_OK;
    if (batch > 1 && (size_t)stride_c < sh.ec)
        return tdm_error(TDM_E_INVAL, "%s: stride_c = %lld is smaller than one C item (%zu elements): items would overlap",
                         fn, (long long)stride_c, sh.ec);
    if ((k && (!A || !B)) || !C) return tdm_error(TDM_E_INVAL, "%s: %s is NULL", fn, !C ? "C" : !A ? "A" : "B");
    const size_t es = dtype_size(dt);
    /* Whole spans of each operand over the batch, overflow-checked. */
    size_t span[3];
    const int64_t strides[3] = {stride_a, stride_b, stride_c};
    const size_t ext[3] = {sh.ea, sh.eb, sh.ec};
    for (int i = 0; i < 3; i++) {
        size_t s;
        if (tdm_size_mul((size_t)(batch - 1), (size_t)strides[i], &s) || s > SIZE_MAX / es - ext[i])
            return tdm_error(TDM_E_OVERFLOW, "%s: operand %c spans more than the address space", fn, "ABC"[i]);
        span[i] = (s + ext[i]) * es;
    }
    if (k && (overlaps(C, span[2], A, span[0]) || overlaps(C, span[2], B, span[1])))
        return tdm_error(TDM_E_INVAL, "%s: C overlaps %s", fn, overlaps(C, span[2], A, span[0]) ? "A" : "B");
    const uint64_t in = (uint64_t)(k ? span[0] + span[1] : 0) + span[2], out = span[2];
    tdm_lat_req q = {.op = TDM_OP_LATTICE_GEMM_BATCHED, .pref = TDM_DEVICE_AUTO, .device_ok = 1,
                     .work = (double)m * (double)n * (double)k * (double)batch, .h2d_bytes = in, .d2h_bytes = out,
                     .device_bytes = in};
    tdm_lat_placement pl;
    if ((rc = tdm_lat_place(ctx, &q, &pl))) return rc;
    const tdm_backend *b = pl.backend;
    if (b->kind != TDM_BACKEND_CPU) {
        rc = b->lattice->gemm(b, dt, ta, tb, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C, ldc, stride_c, batch);
        if (rc == TDM_OK) return tdm_lat_placed_done(ctx, &pl), TDM_OK;
        if ((rc = tdm_lat_device_failed(ctx, b, TDM_OP_LATTICE_GEMM_BATCHED, rc))) return rc;
    }
    if ((rc = tdm_lat_gemm_cpu(ctx, dt, ta, tb, m, n, k, alpha, A, lda, stride_a, B, ldb, stride_b, beta, C, ldc, stride_c, batch)))
        return rc;
    if (pl.backend->kind == TDM_BACKEND_CPU) tdm_lat_placed_done(ctx, &pl); /* not after a fallback */
    return TDM_OK;
}

int tdm_lat_gemm_cpu(tdm_ctx *ctx, tdm_lattice_dtype dt, tdm_lattice_trans ta, tdm_lattice_trans tb, int64_t m,
                     int64_t n, int64_t k, double alpha, const void *A, int64_t lda, int64_t stride_a, const void *B,
                     int64_t ldb, int64_t stride_b, double beta, void *C, int64_t ldc, int64_t stride_c,
                     int64_t batch) {
    const size_t es = dtype_size(dt);
    int rc = blas_ready(ctx, "tdm_lattice_gemm_strided_batched");
    if (rc) return rc;
    /* Items one after another on threaded BLAS: each item is exactly the single call. (Item-parallel
     * execution of small items with single-threaded BLAS belongs to the batch executor.) */
    for (int64_t i = 0; i < batch; i++)
        gemm_one(dt, ta, tb, (int)m, (int)n, (int)k, alpha, (const char *)A + (size_t)(i * stride_a) * es, (int)lda,
                 (const char *)B + (size_t)(i * stride_b) * es, (int)ldb, beta, (char *)C + (size_t)(i * stride_c) * es,
                 (int)ldc);
    return TDM_OK;
}

/* Byte ranges of pointer-array operands, sorted by start to find overlaps in O(b log b). */
typedef struct {
    uintptr_t lo, hi;
    int64_t item;
} range;

static int cmp_range(const void *a, const void *b) {
    const range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Index of the first C item that overlaps another C item or any input range, or -1. c[nc] and in[nin] are
 * sorted by start on return; in_reach receives prefix maxima of the inputs' ends. */
static int64_t find_overlap(range *c, size_t nc, range *in, size_t nin, uintptr_t *in_reach) {
    qsort(c, nc, sizeof *c, cmp_range);
    qsort(in, nin, sizeof *in, cmp_range);
    for (size_t i = 1; i < nc; i++)
        if (c[i].lo < c[i - 1].hi) return c[i].item < c[i - 1].item ? c[i].item : c[i - 1].item;
    uintptr_t reach = 0;
    for (size_t i = 0; i < nin; i++) in_reach[i] = reach = in[i].hi > reach ? in[i].hi : reach;
    for (size_t i = 0; i < nc; i++) {
        /* Inputs starting before c[i] ends: the furthest of them must end at or before c[i] starts. */
        size_t lo = 0, hi = nin;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (in[mid].lo < c[i].hi) lo = mid + 1;
            else hi = mid;
        }
        if (lo && in_reach[lo - 1] > c[i].lo) return c[i].item;
    }
    return -1;
}

int tdm_lattice_gemm_batched_ptrs(tdm_ctx *ctx, tdm_lattice_dtype dt, tdm_lattice_trans ta, tdm_lattice_trans tb,
                                  int64_t m, int64_t n, int64_t k, double alpha, const void *const *A, int64_t lda,
                                  const void *const *B, int64_t ldb, double beta, void *const *C, int64_t ldc,
                                  int64_t batch) {
    static const char fn[] = "tdm_lattice_gemm_batched_ptrs";
    if (!ctx) return tdm_error(TDM_E_INVAL, "%s: ctx is NULL", fn);
    gemm_shape sh;
    int rc = check_gemm(fn, dt, ta, tb, m, n, k, lda, ldb, ldc, &sh);
    if (rc) return rc;
    if (batch < 0) return tdm_error(TDM_E_INVAL, "%s: batch = %lld is negative", fn, (long long)batch);
    if (!batch || !m || !n) return TDM_OK;
    if (!C || (k && (!A || !B))) return tdm_error(TDM_E_INVAL, "%s: pointer array %s is NULL", fn, !C ? "C" : !A ? "A" : "B");
    if ((uint64_t)batch > SIZE_MAX / (4 * sizeof(range))) return tdm_error(TDM_E_OVERFLOW, "%s: batch too large", fn);
    const size_t es = dtype_size(dt), nb = (size_t)batch;
    range *c = tdm_malloc(nb * sizeof *c), *in = tdm_malloc(2 * nb * sizeof *in);
    uintptr_t *reach = tdm_malloc(2 * nb * sizeof *reach);
    if (!c || !in || !reach) {
        tdm_free(c), tdm_free(in), tdm_free(reach);
        return tdm_error(TDM_E_NOMEM, "%s: no memory for %lld items", fn, (long long)batch);
    }
    size_t nin = 0;
    int64_t null_item = -1;
    for (int64_t i = 0; i < batch && null_item < 0; i++) {
        if (!C[i] || (k && (!A[i] || !B[i]))) {
            null_item = i;
            break;
        }
        c[i] = (range){(uintptr_t)C[i], (uintptr_t)C[i] + sh.ec * es, i};
        if (k) {
            in[nin++] = (range){(uintptr_t)A[i], (uintptr_t)A[i] + sh.ea * es, i};
            in[nin++] = (range){(uintptr_t)B[i], (uintptr_t)B[i] + sh.eb * es, i};
        }
    }
    int64_t bad = null_item < 0 ? find_overlap(c, nb, in, nin, reach) : -1;
    tdm_free(c), tdm_free(in), tdm_free(reach);
    if (null_item >= 0)
        return tdm_error(TDM_E_INVAL, "%s: %s[%lld] is NULL", fn, !C[null_item] ? "C" : !A[null_item] ? "A" : "B",
                         (long long)null_item);
    if (bad >= 0) return tdm_error(TDM_E_INVAL, "%s: C[%lld] overlaps another operand", fn, (long long)bad);
    tdm_lat_req q = {.op = TDM_OP_LATTICE_GEMM_BATCHED, .pref = TDM_DEVICE_AUTO};
    tdm_lat_placement pl;
    if ((rc = tdm_lat_place(ctx, &q, &pl))) return rc;
    if ((rc = blas_ready(ctx, fn))) return rc;
    for (int64_t i = 0; i < batch; i++)
        gemm_one(dt, ta, tb, (int)m, (int)n, (int)k, alpha, k ? A[i] : NULL, (int)lda, k ? B[i] : NULL, (int)ldb, beta, C[i],
                 (int)ldc);
    return TDM_OK;
}

/* ---- element-wise ------------------------------------------------------------------------------------- */

#define EWISE_LOOP(T, SQRT, EXP, FABS)                                                                      \
    do {                                                                                                    \
        const T *x = xv, *y = yv;                                                                           \
        T *o = ov;                                                                                          \
        const T a = (T)alpha;                                                                               \
        switch (op) {                                                                                       \
        case TDM_LATTICE_EW_ADD: for (size_t i = 0; i < n; i++) o[i] = x[i] + y[i]; break;                  \
        case TDM_LATTICE_EW_SUB: for (size_t i = 0; i < n; i++) o[i] = x[i] - y[i]; break;                  \
        case TDM_LATTICE_EW_MUL: for (size_t i = 0; i < n; i++) o[i] = x[i] * y[i]; break;                  \
        case TDM_LATTICE_EW_DIV: for (size_t i = 0; i < n; i++) o[i] = x[i] / y[i]; break;                  \
        case TDM_LATTICE_EW_SCALE: for (size_t i = 0; i < n; i++) o[i] = a * x[i]; break;                   \
        case TDM_LATTICE_EW_ADDS: for (size_t i = 0; i < n; i++) o[i] = x[i] + a; break;                    \
        case TDM_LATTICE_EW_NEG: for (size_t i = 0; i < n; i++) o[i] = -x[i]; break;                        \
        case TDM_LATTICE_EW_ABS: for (size_t i = 0; i < n; i++) o[i] = FABS(x[i]); break;                   \
        case TDM_LATTICE_EW_SQUARE: for (size_t i = 0; i < n; i++) o[i] = x[i] * x[i]; break;               \
        case TDM_LATTICE_EW_SQRT: for (size_t i = 0; i < n; i++) o[i] = SQRT(x[i]); break;                  \
        case TDM_LATTICE_EW_EXP: for (size_t i = 0; i < n; i++) o[i] = EXP(x[i]); break;                    \
        case TDM_LATTICE_EW_COUNT: break;                                                                   \
        }                                                                                                   \
    } while (0)

static int binary_op(tdm_lattice_ewise_op op) { return op <= TDM_LATTICE_EW_DIV; }

int tdm_lattice_ewise(tdm_ctx *ctx, tdm_lattice_ewise_op op, tdm_lattice_dtype dt, const void *xv, const void *yv,
                      double alpha, void *ov, size_t n) {
    static const char fn[] = "tdm_lattice_ewise";
    if (!ctx) return tdm_error(TDM_E_INVAL, "%s: ctx is NULL", fn);
    if ((int)op < 0 || op >= TDM_LATTICE_EW_COUNT) return tdm_error(TDM_E_INVAL, "%s: unknown op %d", fn, (int)op);
    if (dt != TDM_LATTICE_F32 && dt != TDM_LATTICE_F64) return tdm_error(TDM_E_INVAL, "%s: unknown dtype %d", fn, (int)dt);
    if (!n) return TDM_OK;
    const size_t es = dtype_size(dt);
    if (n > SIZE_MAX / es) return tdm_error(TDM_E_OVERFLOW, "%s: %zu elements overflow", fn, n);
    if (!xv || !ov || (binary_op(op) && !yv))
        return tdm_error(TDM_E_INVAL, "%s: %s is NULL", fn, !xv ? "x" : !ov ? "out" : "y");
    const size_t bytes = n * es;
    if ((ov != xv && overlaps(ov, bytes, xv, bytes)) || (binary_op(op) && ov != yv && overlaps(ov, bytes, yv, bytes)))
        return tdm_error(TDM_E_INVAL, "%s: out overlaps an input partially", fn);
    const uint64_t in = (binary_op(op) ? 2u : 1u) * (uint64_t)bytes;
    tdm_lat_req q = {.op = TDM_OP_LATTICE_EWISE, .pref = TDM_DEVICE_AUTO, .device_ok = 1, .work = (double)n,
                     .h2d_bytes = in, .d2h_bytes = bytes, .device_bytes = in + bytes};
    tdm_lat_placement pl;
    int rc = tdm_lat_place(ctx, &q, &pl);
    if (rc) return rc;
    const tdm_backend *b = pl.backend;
    if (b->kind != TDM_BACKEND_CPU) {
        if ((rc = b->lattice->ewise(b, op, dt, xv, yv, alpha, ov, n)) == TDM_OK) return tdm_lat_placed_done(ctx, &pl), TDM_OK;
        if ((rc = tdm_lat_device_failed(ctx, b, TDM_OP_LATTICE_EWISE, rc))) return rc;
    }
    tdm_lat_ewise_cpu(op, dt, xv, yv, alpha, ov, n);
    if (pl.backend->kind == TDM_BACKEND_CPU) tdm_lat_placed_done(ctx, &pl); /* not after a fallback */
    return TDM_OK;
}

void tdm_lat_ewise_cpu(tdm_lattice_ewise_op op, tdm_lattice_dtype dt, const void *xv, const void *yv, double alpha,
                       void *ov, size_t n) {
    if (dt == TDM_LATTICE_F32) EWISE_LOOP(float, sqrtf, expf, fabsf);
    else EWISE_LOOP(double, sqrt, exp, fabs);
}

/* ---- reductions --------------------------------------------------------------------------------------- */

/* Pairwise summation: error grows with log n instead of n, and the split points are fixed, so the result
 * does not depend on threads. */
#define PAIRWISE(T, NAME)                                                                                   \
    static T NAME(const T *x, size_t n) {                                                                   \
        if (n <= 16) {                                                                                      \
            T s = 0;                                                                                        \
            for (size_t i = 0; i < n; i++) s += x[i];                                                       \
            return s;                                                                                       \
        }                                                                                                   \
        size_t h = n / 2;                                                                                   \
        return NAME(x, h) + NAME(x + h, n - h);                                                             \
    }
PAIRWISE(float, sum_f32)
PAIRWISE(double, sum_f64)

/* min/max with NaN propagation and -0 < +0, so that the answer is one defined element. */
#define EXTREME(T, NAME)                                                                                    \
    static T NAME(const T *x, size_t n, int want_max) {                                                     \
        T r = x[0];                                                                                         \
        for (size_t i = 0; i < n; i++) {                                                                    \
            T v = x[i];                                                                                     \
            if (isnan(v)) return v;                                                                         \
            int better = want_max ? (v > r || (v == r && !signbit(v) && signbit(r)))                        \
                                  : (v < r || (v == r && signbit(v) && !signbit(r)));                       \
            if (better) r = v;                                                                              \
        }                                                                                                   \
        return r;                                                                                           \
    }
EXTREME(float, ext_f32)
EXTREME(double, ext_f64)

int tdm_lattice_reduce(tdm_ctx *ctx, tdm_lattice_reduce_op op, tdm_lattice_dtype dt, const void *x, size_t n,
                       double *out) {
    static const char fn[] = "tdm_lattice_reduce";
    if (!ctx || !out) return tdm_error(TDM_E_INVAL, "%s: %s is NULL", fn, ctx ? "out" : "ctx");
    if ((int)op < 0 || op > TDM_LATTICE_RED_MAX) return tdm_error(TDM_E_INVAL, "%s: unknown op %d", fn, (int)op);
    if (dt != TDM_LATTICE_F32 && dt != TDM_LATTICE_F64) return tdm_error(TDM_E_INVAL, "%s: unknown dtype %d", fn, (int)dt);
    if (!n) {
        if (op != TDM_LATTICE_RED_SUM) return tdm_error(TDM_E_INVAL, "%s: %s of no elements", fn, op == TDM_LATTICE_RED_MIN ? "min" : "max");
        *out = 0.0;
        return TDM_OK;
    }
    if (!x) return tdm_error(TDM_E_INVAL, "%s: x is NULL", fn);
    /* Partial results come back, a few KiB whatever n: no d2h term worth a link latency beyond one. */
    const uint64_t bytes = (uint64_t)n * dtype_size(dt);
    tdm_lat_req q = {.op = TDM_OP_LATTICE_REDUCE, .pref = TDM_DEVICE_AUTO, .device_ok = 1, .work = (double)n,
                     .h2d_bytes = bytes, .d2h_bytes = 8, .device_bytes = bytes};
    tdm_lat_placement pl;
    int rc = tdm_lat_place(ctx, &q, &pl);
    if (rc) return rc;
    const tdm_backend *b = pl.backend;
    if (b->kind != TDM_BACKEND_CPU) {
        if ((rc = b->lattice->reduce(b, op, dt, x, n, out)) == TDM_OK) return tdm_lat_placed_done(ctx, &pl), TDM_OK;
        if ((rc = tdm_lat_device_failed(ctx, b, TDM_OP_LATTICE_REDUCE, rc))) return rc;
    }
    *out = tdm_lat_reduce_cpu(op, dt, x, n);
    if (pl.backend->kind == TDM_BACKEND_CPU) tdm_lat_placed_done(ctx, &pl); /* not after a fallback */
    return TDM_OK;
}

double tdm_lat_reduce_cpu(tdm_lattice_reduce_op op, tdm_lattice_dtype dt, const void *x, size_t n) {
    if (op == TDM_LATTICE_RED_SUM) return dt == TDM_LATTICE_F32 ? (double)sum_f32(x, n) : sum_f64(x, n);
    return dt == TDM_LATTICE_F32 ? (double)ext_f32(x, n, op == TDM_LATTICE_RED_MAX) : ext_f64(x, n, op == TDM_LATTICE_RED_MAX);
}
