/* cuda_internal.cuh: what the CUDA module's sources share: the backend's private state, the host
 * functions the core lent the module, and the CUDA-error-to-status helper. */
#ifndef TANDEM_CUDA_INTERNAL_CUH
#define TANDEM_CUDA_INTERNAL_CUH

#include "cuda/module.h"

#include <cuda_runtime.h>

typedef struct {
    int dev;
    cudaStream_t stream;
    int sms; /* multiprocessors, to size persistent grids */
    char name[16];
} cuda_impl;

/* The core's error, log and allocation functions (set by the module's init). */
extern const tdm_cuda_host *tdm_cuda_host_fns;

/* Reports a CUDA error as TDM_E_DEVICE_OOM (allocation failures) or TDM_E_DEVICE, naming what failed. */
int tdm_cuda_fail(cudaError_t e, const char *what);

/* The sequence engine's device entry points (seq_store.cu, seq_query.cu). */
extern const struct tdm_seq_dev_ops tdm_cuda_seq_ops;
/* The ARC engine's device entry points (arc_objects.cu). */
extern const struct tdm_arc_dev_ops tdm_cuda_arc_ops;

#endif
