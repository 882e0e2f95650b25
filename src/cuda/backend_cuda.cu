/* backend_cuda.cu: the CUDA backend module. It probes devices and gives each usable one a backend whose
 * memory comes from the device's stream-ordered pool (cudaMallocAsync on a non-blocking stream). The
 * sequence, ARC and lattice kernels attach their ops to this backend's supports switch as they land. */
#include "cuda/cuda_internal.cuh"
#include "arc/arc_device.h"
#include "seq/seq_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const tdm_cuda_host *tdm_cuda_host_fns;
#define H tdm_cuda_host_fns

int tdm_cuda_fail(cudaError_t e, const char *what) {
    int code = e == cudaErrorMemoryAllocation ? TDM_E_DEVICE_OOM : TDM_E_DEVICE;
    cudaGetLastError(); /* clear a non-sticky error so the next call starts clean */
    return H->error(code, "cuda: %s: %s", what, cudaGetErrorString(e));
}
#define fail tdm_cuda_fail

static int cu_supports(const tdm_backend *b, tdm_op op) {
    switch (op) {
    /* Exact device kernels of the sequence engine (seq_query.cu), checked bit for bit against the CPU by
     * tests/cross. The char metric stays on the CPU. */
    case TDM_OP_SEQ_LCS:
    case TDM_OP_SEQ_DIFFLIB:
    case TDM_OP_SEQ_PREFILTER:
    case TDM_OP_SEQ_SELECT: return 1;
    /* Batched objects() labels (arc_objects.cu), checked against the CPU by tests/unit/test_arc_objects_batch. */
    case TDM_OP_ARC_OBJECTS: return 1;
    case TDM_OP_SEQ_CHAR:
    case TDM_OP_COUNT: return 0;
    }
    return 0;
}

static int cu_mem_info(const tdm_backend *b, size_t *free_bytes, size_t *total_bytes) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    cudaError_t e = cudaSetDevice(c->dev);
    size_t f = 0, t = 0;
    if (e == cudaSuccess) e = cudaMemGetInfo(&f, &t);
    if (e != cudaSuccess) return fail(e, "cudaMemGetInfo");
    if (free_bytes) *free_bytes = f;
    if (total_bytes) *total_bytes = t;
    return TDM_OK;
}

static int cu_alloc(const tdm_backend *b, size_t bytes, void **ptr) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    cudaError_t e = cudaSetDevice(c->dev);
    if (e == cudaSuccess) e = cudaMallocAsync(ptr, bytes ? bytes : 1, c->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    if (e != cudaSuccess) return fail(e, "cudaMallocAsync");
    return TDM_OK;
}

static int cu_release(const tdm_backend *b, void *ptr) {
    if (!ptr) return TDM_OK;
    const cuda_impl *c = (const cuda_impl *)b->impl;
    cudaError_t e = cudaSetDevice(c->dev);
    if (e == cudaSuccess) e = cudaFreeAsync(ptr, c->stream);
    if (e != cudaSuccess) return fail(e, "cudaFreeAsync");
    return TDM_OK;
}

static int cu_copy(const tdm_backend *b, void *dst, const void *src, size_t bytes, tdm_copy_kind kind) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    cudaMemcpyKind k = kind == TDM_COPY_H2D ? cudaMemcpyHostToDevice
                       : kind == TDM_COPY_D2H ? cudaMemcpyDeviceToHost
                                              : cudaMemcpyDeviceToDevice;
    cudaError_t e = cudaSetDevice(c->dev);
    tdm_cuda_mark m0 = tdm_cuda_prof_mark(c->prof);
    if (e == cudaSuccess) e = cudaMemcpyAsync(dst, src, bytes, k, c->stream);
    tdm_cuda_mark m1 = tdm_cuda_prof_mark(c->prof);
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    if (e != cudaSuccess) return fail(e, "cudaMemcpyAsync");
    if (kind != TDM_COPY_D2D)
        tdm_cuda_prof_span(c->prof, m0, m1, "copy", kind == TDM_COPY_H2D ? TDM_PROF_CAT_H2D : TDM_PROF_CAT_D2H,
                           kind == TDM_COPY_H2D ? bytes : 0, kind == TDM_COPY_D2H ? bytes : 0, 0);
    return TDM_OK;
}

static int cu_sync(const tdm_backend *b) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    cudaError_t e = cudaStreamSynchronize(c->stream);
    return e == cudaSuccess ? TDM_OK : fail(e, "cudaStreamSynchronize");
}

static void cu_destroy(tdm_backend *b) {
    if (!b) return;
    cuda_impl *c = (cuda_impl *)b->impl;
    if (c) {
        tdm_cuda_prof_free(c->prof); /* its spans are flushed to the core first */
        cudaSetDevice(c->dev);
        cudaStreamSynchronize(c->stream);
        cudaStreamDestroy(c->stream);
        free(c);
    }
    free(b);
}

static void mod_init(const tdm_cuda_host *host) { H = host; }

static int mod_device_count(int *n) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        *n = 0;
        return fail(e, "cudaGetDeviceCount");
    }
    *n = count;
    return TDM_OK;
}

static int mod_backend_create(int dev, tdm_backend **out) {
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, dev);
    if (e != cudaSuccess) return fail(e, "cudaGetDeviceProperties");
    if (p.major * 10 + p.minor < 75)
        return H->error(TDM_E_UNSUPPORTED, "cuda:%d (%s) has compute capability %d.%d; 7.5 or newer is needed",
                        dev, p.name, p.major, p.minor);
    tdm_backend *b = (tdm_backend *)calloc(1, sizeof *b);
    cuda_impl *c = (cuda_impl *)calloc(1, sizeof *c);
    if (!b || !c) {
        free(b);
        free(c);
        return H->error(TDM_E_NOMEM, "cuda: no host memory for the backend");
    }
    c->dev = dev;
    c->sms = p.multiProcessorCount;
    e = cudaSetDevice(dev);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) {
        /* Keep freed blocks in the pool instead of returning them to the driver at every sync. */
        cudaMemPool_t pool;
        uint64_t keep = UINT64_MAX;
        e = cudaDeviceGetDefaultMemPool(&pool, dev);
        if (e == cudaSuccess) e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    }
    if (e != cudaSuccess) {
        free(b);
        free(c);
        return fail(e, "device setup");
    }
    snprintf(c->name, sizeof c->name, "cuda:%d", dev);
    /* Device spans for the profiler on this stream; a profiler that cannot start here only loses them. */
    if (tdm_cuda_prof_new(dev, c->stream, c->name, &c->prof)) {
        H->log(TDM_LOG_WARN, "cuda:%d: no device spans for the profiler", dev);
        c->prof = NULL;
    }
    b->name = c->name;
    b->kind = TDM_BACKEND_CUDA;
    b->device = dev;
    snprintf(b->description, sizeof b->description, "%.64s, sm_%d%d, %d SMs, %.1f GiB", p.name, p.major, p.minor,
             p.multiProcessorCount, p.totalGlobalMem / 1073741824.0);
    b->impl = c;
    b->supports = cu_supports;
    b->mem_info = cu_mem_info;
    b->alloc = cu_alloc;
    b->release = cu_release;
    b->copy = cu_copy;
    b->sync = cu_sync;
    b->destroy = cu_destroy;
    b->seq = &tdm_cuda_seq_ops;
    b->arc = &tdm_cuda_arc_ops;
    if (H->prof_set_device_info) {
        int drv = 0, rt = 0;
        cudaDriverGetVersion(&drv);
        cudaRuntimeGetVersion(&rt);
        char ver[64];
        snprintf(ver, sizeof ver, "CUDA driver %d.%d, runtime %d.%d", drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
        H->prof_set_device_info(b->description, ver);
    }
    *out = b;
    return TDM_OK;
}

static const tdm_cuda_module module = {TDM_CUDA_MODULE_ABI, mod_init, mod_device_count, mod_backend_create};

extern "C" __attribute__((visibility("default"))) const tdm_cuda_module *tdm_cuda_module_get(void) {
    return &module;
}
