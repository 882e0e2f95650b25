/* lattice_cuda.cuh: what the CUDA module's lattice sources share: device scratch helpers on the backend's
 * stream, the SplitMix64 stream on the device (bit-identical to src/lattice/xor.c), and the entry points
 * each lattice_*.cu file contributes to tdm_cuda_lattice_ops (lattice_bfs.cu). */
#ifndef TANDEM_LATTICE_CUDA_CUH
#define TANDEM_LATTICE_CUDA_CUH

#include "cuda/cuda_internal.cuh"
#include "lattice/lattice_device.h"

#define TDM_LAT_H tdm_cuda_host_fns

/* A stream-ordered device allocation released by lat_dfree on the same stream. */
static inline cudaError_t lat_dalloc(void **p, size_t bytes, cudaStream_t s) {
    *p = NULL;
    return cudaMallocAsync(p, bytes ? bytes : 1, s);
}
static inline void lat_dfree(void *p, cudaStream_t s) {
    if (p) cudaFreeAsync(p, s);
}

/* SplitMix64 word j of seed: mix(seed + (j+1) * golden), as tdm_lattice_splitmix_word. */
__device__ __forceinline__ uint64_t lat_splitmix_word(uint64_t seed, uint64_t j) {
    uint64_t z = seed + (j + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A grid that covers n items with 256-thread blocks, capped (kernels use grid-stride loops). */
static inline unsigned lat_blocks(size_t n, const cuda_impl *c) {
    size_t b = (n + 255) / 256, cap = (size_t)(c->sms > 0 ? c->sms : 1) * 32;
    if (b > cap) b = cap;
    return (unsigned)(b ? b : 1);
}

#ifdef __cplusplus
extern "C" {
#endif
int tdm_cuda_lat_xor_key(const tdm_backend *b, const void *in, void *out, size_t n, const uint8_t *key, size_t len,
                         uint64_t offset);
int tdm_cuda_lat_xor_seeded(const tdm_backend *b, const void *in, void *out, size_t n, uint64_t seed, uint64_t offset);
int tdm_cuda_lat_xor_key_batch(const tdm_backend *b, const tdm_lattice_xor_job *jobs, size_t count);
int tdm_cuda_lat_gemm(const tdm_backend *b, tdm_lattice_dtype dt, tdm_lattice_trans ta, tdm_lattice_trans tb, int64_t m,
                      int64_t n, int64_t k, double alpha, const void *A, int64_t lda, int64_t stride_a, const void *B,
                      int64_t ldb, int64_t stride_b, double beta, void *C, int64_t ldc, int64_t stride_c, int64_t batch);
int tdm_cuda_lat_ewise(const tdm_backend *b, tdm_lattice_ewise_op op, tdm_lattice_dtype dt, const void *x, const void *y,
                       double alpha, void *out, size_t n);
int tdm_cuda_lat_catalytic(const tdm_backend *b, const tdm_lattice_csr *g, void *aux, int64_t s, int64_t t, int64_t K,
                           uint64_t seed, int64_t fail_at, int64_t *dist);
int tdm_cuda_lat_reduce(const tdm_backend *b, tdm_lattice_reduce_op op, tdm_lattice_dtype dt, const void *x, size_t n,
                        double *out);
#ifdef __cplusplus
}
#endif

/* The lattice engine's device entry points (lattice_bfs.cu). */
extern const struct tdm_lattice_dev_ops tdm_cuda_lattice_ops;

/* The per-backend BFS state (lattice_bfs.cu): _new at backend creation (host memory only; NULL when out of
 * memory, and BFS calls then fail with TDM_E_NOMEM), _free at its destruction (releases the device buffers
 * on the backend's stream; accepts a backend without state). */
struct lat_bfs_state *tdm_cuda_lat_bfs_new(void);
void tdm_cuda_lat_bfs_free(const tdm_backend *b);

#endif
