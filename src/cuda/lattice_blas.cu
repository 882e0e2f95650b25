/* lattice_blas.cu: the lattice engine's matrix operations on the device (spec section 5): GEMM and
 * strided batched GEMM on cuBLAS (row-major C = op(A) op(B) issued as column-major C^T = op(B)^T op(A)^T,
 * operands swapped and m <-> n; cuBLAS loaded on first use), element-wise kernels and reductions. The module is compiled with
 * --fmad=false and without fast math, so each element-wise result is the one IEEE operation the CPU
 * computes (exp: CUDA's exp/expf, within the spec's ulp bounds). cuBLAS runs in its default math mode: no
 * TF32 (TANDEM_ALLOW_TF32 is the runtime's switch to add). Host operands are staged through device memory. */
#include "cuda/lattice_cuda.cuh"

#include <cublas_v2.h>
#include <dlfcn.h>
#include <math.h>
#include <mutex>

#define H TDM_LAT_H

/* cuBLAS is loaded with dlopen at the first GEMM, not linked: linking it would make every process that
 * loads the CUDA module (every tandem command on a GPU machine) map several hundred MB of cuBLAS at start
 * even when it never multiplies a matrix. */
#define STR2(x) #x
#define STR(x) STR2(x)
static struct {
    int tried, ok;
    decltype(&cublasCreate_v2) create;
    decltype(&cublasSetStream_v2) set_stream;
    decltype(&cublasSetMathMode) set_math;
    decltype(&cublasSgemmStridedBatched) sgemm;
    decltype(&cublasDgemmStridedBatched) dgemm;
} blas;

/* One handle per device, made on first use (creation costs milliseconds) and kept for the process; each
 * call binds it to the backend's stream. */
static cublasHandle_t handles[64];
static std::mutex handles_lock;

static int load_cublas(void) {
    if (blas.tried) return blas.ok ? TDM_OK : H->error(TDM_E_DEVICE, "cuda gemm: cuBLAS could not be loaded");
    blas.tried = 1;
    static const char *const names[] = {"libcublas.so." STR(CUBLAS_VER_MAJOR),
#ifdef TANDEM_CUBLAS_DIR
                                        TANDEM_CUBLAS_DIR "/libcublas.so." STR(CUBLAS_VER_MAJOR),
#endif
                                        "libcublas.so"};
    void *lib = NULL;
    for (size_t i = 0; i < sizeof names / sizeof *names && !lib; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) return H->error(TDM_E_DEVICE, "cuda gemm: cannot load cuBLAS (%s): %s", names[0], dlerror());
    blas.create = (decltype(blas.create))dlsym(lib, "cublasCreate_v2");
    blas.set_stream = (decltype(blas.set_stream))dlsym(lib, "cublasSetStream_v2");
    blas.set_math = (decltype(blas.set_math))dlsym(lib, "cublasSetMathMode");
    blas.sgemm = (decltype(blas.sgemm))dlsym(lib, "cublasSgemmStridedBatched");
    blas.dgemm = (decltype(blas.dgemm))dlsym(lib, "cublasDgemmStridedBatched");
    if (!blas.create || !blas.set_stream || !blas.set_math || !blas.sgemm || !blas.dgemm)
        return H->error(TDM_E_DEVICE, "cuda gemm: %s lacks an expected symbol", names[0]);
    blas.ok = 1;
    return TDM_OK;
}

static int get_handle(const cuda_impl *c, cublasHandle_t *out) {
    if (c->dev < 0 || c->dev >= 64) return H->error(TDM_E_DEVICE, "cuda gemm: device %d out of range", c->dev);
    std::lock_guard<std::mutex> g(handles_lock);
    int rc = load_cublas();
    if (rc) return rc;
    if (!handles[c->dev]) {
        cublasStatus_t s = blas.create(&handles[c->dev]);
        if (s != CUBLAS_STATUS_SUCCESS) {
            handles[c->dev] = NULL;
            return H->error(s == CUBLAS_STATUS_ALLOC_FAILED ? TDM_E_DEVICE_OOM : TDM_E_DEVICE, "cublasCreate failed (%d)", (int)s);
        }
        blas.set_math(handles[c->dev], CUBLAS_DEFAULT_MATH);
    }
    *out = handles[c->dev];
    return TDM_OK;
}

/* Elements spanned by batch items of rows x cols at ld, stride apart. */
static size_t span(int64_t rows, int64_t cols, int64_t ld, int64_t stride, int64_t batch) {
    if (!rows || !cols) return 0;
    return (size_t)(batch - 1) * (size_t)stride + (size_t)(rows - 1) * (size_t)ld + (size_t)cols;
}

extern "C" int tdm_cuda_lat_gemm(const tdm_backend *b, tdm_lattice_dtype dt, tdm_lattice_trans ta, tdm_lattice_trans tb,
                                 int64_t m, int64_t n, int64_t k, double alpha, const void *A, int64_t lda,
                                 int64_t stride_a, const void *B, int64_t ldb, int64_t stride_b, double beta, void *C,
                                 int64_t ldc, int64_t stride_c, int64_t batch) {
    if (!m || !n || !batch) return TDM_OK;
    const cuda_impl *c = (const cuda_impl *)b->impl;
    cudaStream_t st = c->stream;
    const size_t es = dt == TDM_LATTICE_F32 ? 4 : 8;
    const size_t na = span(ta ? k : m, ta ? m : k, lda, stride_a, batch) * es,
                 nb = span(tb ? n : k, tb ? k : n, ldb, stride_b, batch) * es, nc = span(m, n, ldc, stride_c, batch) * es;
    cublasHandle_t h = NULL;
    int rc = get_handle(c, &h);
    if (rc) return rc;
    void *dA = NULL, *dB = NULL, *dC = NULL;
    cudaError_t e = cudaSetDevice(c->dev);
    if (!e) e = lat_dalloc(&dA, na, st);
    if (!e) e = lat_dalloc(&dB, nb, st);
    if (!e) e = lat_dalloc(&dC, nc, st);
    if (!e && na) e = cudaMemcpyAsync(dA, A, na, cudaMemcpyHostToDevice, st);
    if (!e && nb) e = cudaMemcpyAsync(dB, B, nb, cudaMemcpyHostToDevice, st);
    if (!e) e = cudaMemcpyAsync(dC, C, nc, cudaMemcpyHostToDevice, st);
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    if (!e) {
        blas.set_stream(h, st);
        const cublasOperation_t oa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
        if (dt == TDM_LATTICE_F32) {
            const float fa = (float)alpha, fb = (float)beta;
            s = blas.sgemm(h, ob, oa, (int)n, (int)m, (int)k, &fa, (const float *)dB, (int)ldb, stride_b,
                                          (const float *)dA, (int)lda, stride_a, &fb, (float *)dC, (int)ldc, stride_c, (int)batch);
        } else {
            s = blas.dgemm(h, ob, oa, (int)n, (int)m, (int)k, &alpha, (const double *)dB, (int)ldb, stride_b,
                                          (const double *)dA, (int)lda, stride_a, &beta, (double *)dC, (int)ldc, stride_c,
                                          (int)batch);
        }
    }
    if (!e && s == CUBLAS_STATUS_SUCCESS) e = cudaMemcpyAsync(C, dC, nc, cudaMemcpyDeviceToHost, st);
    lat_dfree(dA, st), lat_dfree(dB, st), lat_dfree(dC, st);
    cudaError_t e2 = cudaStreamSynchronize(st);
    if (!e) e = e2;
    if (e) return tdm_cuda_fail(e, "cuda gemm");
    if (s != CUBLAS_STATUS_SUCCESS) return H->error(TDM_E_DEVICE, "cuda gemm: cuBLAS status %d", (int)s);
    return TDM_OK;
}

/* ---- element-wise ------------------------------------------------------------------------------------- */

__device__ __forceinline__ float lat_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double lat_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float lat_exp(float x) { return expf(x); }
__device__ __forceinline__ double lat_exp(double x) { return exp(x); }
__device__ __forceinline__ float lat_abs(float x) { return fabsf(x); }
__device__ __forceinline__ double lat_abs(double x) { return fabs(x); }

template <typename T>
__global__ void lat_ewise_kernel(int op, const T *__restrict__ x, const T *__restrict__ y, T a, T *o, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const T v = x[i];
        T r;
        switch (op) {
        case TDM_LATTICE_EW_ADD: r = v + y[i]; break;
        case TDM_LATTICE_EW_SUB: r = v - y[i]; break;
        case TDM_LATTICE_EW_MUL: r = v * y[i]; break;
        case TDM_LATTICE_EW_DIV: r = v / y[i]; break;
        case TDM_LATTICE_EW_SCALE: r = a * v; break;
        case TDM_LATTICE_EW_ADDS: r = v + a; break;
        case TDM_LATTICE_EW_NEG: r = -v; break;
        case TDM_LATTICE_EW_ABS: r = lat_abs(v); break;
        case TDM_LATTICE_EW_SQUARE: r = v * v; break;
        case TDM_LATTICE_EW_SQRT: r = lat_sqrt(v); break;
        default: r = lat_exp(v); break;
        }
        o[i] = r;
    }
}

extern "C" int tdm_cuda_lat_ewise(const tdm_backend *b, tdm_lattice_ewise_op op, tdm_lattice_dtype dt, const void *x,
                                  const void *y, double alpha, void *out, size_t n) {
    if (!n) return TDM_OK;
    const cuda_impl *c = (const cuda_impl *)b->impl;
    cudaStream_t st = c->stream;
    const size_t bytes = n * (dt == TDM_LATTICE_F32 ? 4 : 8);
    const int binary = op <= TDM_LATTICE_EW_DIV;
    void *dx = NULL, *dy = NULL, *dout = NULL;
    cudaError_t e = cudaSetDevice(c->dev);
    if (!e) e = lat_dalloc(&dx, bytes, st);
    if (!e && binary) e = lat_dalloc(&dy, bytes, st);
    if (!e) e = lat_dalloc(&dout, bytes, st);
    if (!e) e = cudaMemcpyAsync(dx, x, bytes, cudaMemcpyHostToDevice, st);
    if (!e && binary) e = cudaMemcpyAsync(dy, y, bytes, cudaMemcpyHostToDevice, st);
    if (!e) {
        if (dt == TDM_LATTICE_F32)
            lat_ewise_kernel<float><<<lat_blocks(n, c), 256, 0, st>>>((int)op, (const float *)dx, (const float *)dy,
                                                                      (float)alpha, (float *)dout, n);
        else
            lat_ewise_kernel<double><<<lat_blocks(n, c), 256, 0, st>>>((int)op, (const double *)dx, (const double *)dy,
                                                                       alpha, (double *)dout, n);
        e = cudaGetLastError();
    }
    if (!e) e = cudaMemcpyAsync(out, dout, bytes, cudaMemcpyDeviceToHost, st);
    lat_dfree(dx, st), lat_dfree(dy, st), lat_dfree(dout, st);
    cudaError_t e2 = cudaStreamSynchronize(st);
    if (!e) e = e2;
    return e ? tdm_cuda_fail(e, "cuda ewise") : TDM_OK;
}

/* ---- reductions --------------------------------------------------------------------------------------- */

/* The CPU's rules (src/lattice/matrix.c): NaN wins; -0 is below +0. */
template <typename T> __host__ __device__ __forceinline__ T lat_combine(int op, T a, T b) {
    if (op == TDM_LATTICE_RED_SUM) return a + b;
    if (a != a) return a;
    if (b != b) return b;
    if (op == TDM_LATTICE_RED_MIN) return (b < a || (b == a && signbit(b) && !signbit(a))) ? b : a;
    return (b > a || (b == a && !signbit(b) && signbit(a))) ? b : a;
}

template <typename T> __host__ __device__ __forceinline__ T lat_identity(int op) {
    return op == TDM_LATTICE_RED_SUM ? (T)0 : op == TDM_LATTICE_RED_MIN ? (T)INFINITY : (T)-INFINITY;
}

/* Each block reduces a contiguous slice (threads stride within it), then a shared-memory tree; one
 * partial per block goes back to the host, which combines them in block order. */
template <typename T> __global__ void lat_reduce_kernel(int op, const T *__restrict__ x, size_t n, T *partial) {
    __shared__ T sh[256];
    const size_t per = (n + gridDim.x - 1) / gridDim.x, lo = blockIdx.x * per, hi = lo + per < n ? lo + per : n;
    T acc = lat_identity<T>(op);
    for (size_t i = lo + threadIdx.x; i < hi; i += blockDim.x) acc = lat_combine<T>(op, acc, x[i]);
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) sh[threadIdx.x] = lat_combine<T>(op, sh[threadIdx.x], sh[threadIdx.x + w]);
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = sh[0];
}

template <typename T> static int reduce_t(const cuda_impl *c, int op, const void *x, size_t n, double *out) {
    cudaStream_t st = c->stream;
    const unsigned blocks = lat_blocks(n, c);
    T *dx = NULL, *dp = NULL;
    T *hp = (T *)H->malloc(blocks * sizeof(T));
    if (!hp) return H->error(TDM_E_NOMEM, "cuda reduce: no host memory");
    cudaError_t e = cudaSetDevice(c->dev);
    if (!e) e = lat_dalloc((void **)&dx, n * sizeof(T), st);
    if (!e) e = lat_dalloc((void **)&dp, blocks * sizeof(T), st);
    if (!e) e = cudaMemcpyAsync(dx, x, n * sizeof(T), cudaMemcpyHostToDevice, st);
    if (!e) {
        lat_reduce_kernel<T><<<blocks, 256, 0, st>>>(op, dx, n, dp);
        e = cudaGetLastError();
    }
    if (!e) e = cudaMemcpyAsync(hp, dp, blocks * sizeof(T), cudaMemcpyDeviceToHost, st);
    lat_dfree(dx, st), lat_dfree(dp, st);
    cudaError_t e2 = cudaStreamSynchronize(st);
    if (!e) e = e2;
    if (e) {
        H->free(hp);
        return tdm_cuda_fail(e, "cuda reduce");
    }
    T r = hp[0];
    for (unsigned i = 1; i < blocks; i++) r = lat_combine<T>(op, r, hp[i]);
    H->free(hp);
    *out = (double)r;
    return TDM_OK;
}

extern "C" int tdm_cuda_lat_reduce(const tdm_backend *b, tdm_lattice_reduce_op op, tdm_lattice_dtype dt, const void *x,
                                   size_t n, double *out) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    return dt == TDM_LATTICE_F32 ? reduce_t<float>(c, (int)op, x, n, out) : reduce_t<double>(c, (int)op, x, n, out);
}
