/* cuda_internal.cuh: what the CUDA module's sources share: the backend's private state, the host
 * functions the core lent the module, and the CUDA-error-to-status helper. */
#ifndef TANDEM_CUDA_INTERNAL_CUH
#define TANDEM_CUDA_INTERNAL_CUH

#include "cuda/module.h"

#include <cuda_runtime.h>

/* Device spans for the profiler (prof_cuda.cu): marks are events recorded on a stream, spans join two
 * marks, the core's export resolves them. Every function accepts a NULL profiler (does nothing). */
typedef struct tdm_cuda_prof tdm_cuda_prof;
typedef struct {
    int idx;      /* -1: no mark (profiler off, pool full) */
    unsigned gen; /* the flush epoch it belongs to */
} tdm_cuda_mark;
/* One per stream; registers its flush with the core. *out stays NULL when the core has no profiler table. */
int tdm_cuda_prof_new(int dev, cudaStream_t stream, cudaMemPool_t pool, const char *backend, tdm_cuda_prof **out);
void tdm_cuda_prof_free(tdm_cuda_prof *p);
/* Records an event on the stream when the profiler is on (no synchronisation). */
tdm_cuda_mark tdm_cuda_prof_mark(tdm_cuda_prof *p);
/* A span from mark from to mark to, category cat (tdm_prof_cat), parented to this thread's open scope. */
void tdm_cuda_prof_span(tdm_cuda_prof *p, tdm_cuda_mark from, tdm_cuda_mark to, const char *name, int cat,
                        uint64_t h2d, uint64_t d2h, uint64_t work);
/* Resolves pending spans (synchronises the stream once); the core calls it through the source table. */
void tdm_cuda_prof_flush(void *user);

typedef struct {
    int dev;
    cudaStream_t stream;
    cudaMemPool_t pool; /* the library's own pool (NULL where the device has no memory pools) */
    tdm_cuda_prof *prof; /* device spans of this stream; NULL when the core has no profiler */
    int sms; /* multiprocessors, to size persistent grids */
    char name[16];
    struct lat_bfs_state *lat_bfs; /* resident CSR and BFS workspace (lattice_bfs.cu); owned */
} cuda_impl;

/* The core's error, log and allocation functions (set by the module's init). */
extern const tdm_cuda_host *tdm_cuda_host_fns;

/* Reports a CUDA error as TDM_E_DEVICE_OOM (allocation failures) or TDM_E_DEVICE, naming what failed. */
int tdm_cuda_fail(cudaError_t e, const char *what);
/* In a function with an int rc and a label out: a failed CUDA call sets rc from tdm_cuda_fail and jumps to
 * out (which releases what the function took). */
#define CK_OUT(call, what)                                                                                 \
    do {                                                                                                   \
        cudaError_t e_ = (call);                                                                           \
        if (e_ != cudaSuccess) {                                                                           \
            rc = tdm_cuda_fail(e_, what);                                                                  \
            goto out;                                                                                      \
        }                                                                                                  \
    } while (0)

/* Device memory of backend b, stream-ordered from its pool and reported to its monitor: over
 * TANDEM_MEM_LIMIT, or when the device is out of memory after the monitor's trim and eviction and one
 * retry, the result is cudaErrorMemoryAllocation (which tdm_cuda_fail turns into TDM_E_DEVICE_OOM). */
cudaError_t tdm_cuda_malloc(const tdm_backend *b, void **p, size_t bytes, cudaStream_t s);
/* Frees memory from tdm_cuda_malloc on stream s (NULL is fine). */
cudaError_t tdm_cuda_free(const tdm_backend *b, void *p, cudaStream_t s);

/* The sequence engine's device entry points (seq_store.cu, seq_query.cu). */
extern const struct tdm_seq_dev_ops tdm_cuda_seq_ops;
/* The batched executor's columns and kernels (arc_bops.cu), members of tdm_cuda_arc_ops. */
struct arc_col;
struct arc_bop_call;
int tdm_cuda_arc_col_alloc(const tdm_backend *b, size_t n, struct arc_col *c);
void tdm_cuda_arc_col_free(const tdm_backend *b, struct arc_col *c);
int tdm_cuda_arc_col_put(const tdm_backend *b, const struct arc_col *dst, const uint32_t *lanes, size_t m,
                         const struct arc_col *src);
int tdm_cuda_arc_col_get(const tdm_backend *b, const struct arc_col *src, const uint32_t *lanes, size_t m,
                         const struct arc_col *dst);
int tdm_cuda_arc_bop_run(const tdm_backend *b, const struct arc_bop_call *c, const uint8_t *active, uint8_t *status);
/* The objects-based kernels (arc_bops_sets.cu): whether op is one of theirs, and its launch (device arrays). */
int tdm_cuda_arc_is_sets_op(int op);
void tdm_cuda_arc_sets_launch(const struct arc_bop_call *c, const uint8_t *active, uint8_t *status, unsigned blocks,
                              cudaStream_t st);
/* The ARC engine's device entry points (arc_objects.cu, arc_bops.cu). */
extern const struct tdm_arc_dev_ops tdm_cuda_arc_ops;

#endif
