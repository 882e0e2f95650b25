/* lattice_device.h: the contract between the lattice engine (src/lattice/) and a backend that runs its ops
 * on a device (the CUDA module, src/cuda/lattice_*.cu). Plain C, so the dlopen'd module can implement it.
 * Every entry point takes host arrays and returns host results (the module copies as needed; residency
 * through tdm_buf handles is the runtime's job, issue 6 section 6), and assumes the core has already
 * validated every argument. Results must equal the CPU reference: bit for bit for BFS, XOR and the
 * element-wise ops other than exp; within the spec's section 5 bounds for GEMM, exp and sums.
 * Errors: TDM_E_DEVICE_OOM, TDM_E_DEVICE (through the host's error function); the core then answers on the
 * CPU. */
#ifndef TANDEM_LATTICE_DEVICE_H
#define TANDEM_LATTICE_DEVICE_H

#include "tandem/backend.h"
#include "tandem/lattice.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One XOR of a batch (xor_key_batch): out = in ^ key[(offset + i) mod len] over n >= 1 bytes. */
typedef struct {
    const void *in;
    void *out;
    size_t n;
    const uint8_t *key;
    size_t len;
    uint64_t offset;
} tdm_lattice_xor_job;

typedef struct tdm_lattice_dev_ops {
    /* Shortest s-t path by the tie rule (lowest-id neighbour one level closer, walking back from t) over
     * g. On success *path (hops+1 vertices, from the host's malloc) and *hops; *hops = -1 and *path = NULL
     * when t is unreachable (still TDM_OK). */
    int (*bfs_path)(const tdm_backend *b, const tdm_lattice_csr *g, int64_t s, int64_t t, int64_t **path, int64_t *hops);
    /* Full sweep from s: dist[v] (host array of V entries), -1 where unreachable. */
    int (*bfs_dist)(const tdm_backend *b, const tdm_lattice_csr *g, int64_t s, int32_t *dist);
    /* out[i] = in[i] ^ key[(offset + i) mod len]; in == out allowed. */
    int (*xor_key)(const tdm_backend *b, const void *in, void *out, size_t n, const uint8_t *key, size_t len,
                   uint64_t offset);
    /* out[i] = in[i] ^ byte (offset + i) of seed's SplitMix64 stream; in == out allowed. */
    int (*xor_seeded)(const tdm_backend *b, const void *in, void *out, size_t n, uint64_t seed, uint64_t offset);
    /* Row-major GEMM on host operands, batch items at the given element strides (batch 1: a single GEMM). */
    int (*gemm)(const tdm_backend *b, tdm_lattice_dtype dt, tdm_lattice_trans ta, tdm_lattice_trans tb, int64_t m,
                int64_t n, int64_t k, double alpha, const void *A, int64_t lda, int64_t stride_a, const void *B,
                int64_t ldb, int64_t stride_b, double beta, void *C, int64_t ldc, int64_t stride_c, int64_t batch);
    int (*ewise)(const tdm_backend *b, tdm_lattice_ewise_op op, tdm_lattice_dtype dt, const void *x, const void *y,
                 double alpha, void *out, size_t n);
    /* n >= 1. */
    int (*reduce)(const tdm_backend *b, tdm_lattice_reduce_op op, tdm_lattice_dtype dt, const void *x, size_t n,
                  double *out);
    /* The catalytic distance query (src/lattice/catalytic.c, same program P, same weights) on aux in this
     * device's memory: registers r_0..r_K of V words at aux (8-byte aligned). *dist = least j with r_j[t]
     * changed, -1 if none (still TDM_OK). aux is restored before returning; with fail_at > 0 the query stops
     * after fail_at steps, undoes them and returns TDM_E_IO. A CUDA error before the first step: TDM_E_DEVICE
     * (aux untouched); after it: TDM_E_DEVICE_LOST (aux may be changed). NULL when not implemented. */
    int (*catalytic_distance)(const tdm_backend *b, const tdm_lattice_csr *g, void *aux, int64_t s, int64_t t,
                              int64_t K, uint64_t seed, int64_t fail_at, int64_t *dist);
    /* count XORs in one launch (the batch executor's device path, src/lattice/xor_batch.c): inputs and
     * keys staged together, one kernel over the job table, results copied back together. Outputs are
     * written only once every device step succeeded, so a failed call (TDM_E_DEVICE_OOM, TDM_E_DEVICE)
     * leaves them untouched and the executor can rerun the group anywhere. Jobs' outputs are disjoint;
     * in == out is allowed. NULL when not implemented (module ABI 8 and later). */
    int (*xor_key_batch)(const tdm_backend *b, const tdm_lattice_xor_job *jobs, size_t count);
    /* Which BFS kernel bfs_path/bfs_dist use from now on (TDM_LAT_BFS_KERNEL_*), so that tests and benchmarks
     * can cover each: AUTO (the default: a launch per level, since the persistent kernel is experimental),
     * PERSISTENT (one cooperative kernel for all levels; TDM_E_UNSUPPORTED where the device cannot), LEVELS.
     * TDM_E_INVAL for another value. NULL when the backend has one kernel only. */
    int (*bfs_kernel)(const tdm_backend *b, int which);
} tdm_lattice_dev_ops;

#define TDM_LAT_BFS_KERNEL_AUTO 0
#define TDM_LAT_BFS_KERNEL_PERSISTENT 1
#define TDM_LAT_BFS_KERNEL_LEVELS 2

#ifdef __cplusplus
}
#endif
#endif
