/* backend_cuda.cu: the CUDA backend module. It probes devices and gives each usable one a backend whose
 * memory comes from the device's stream-ordered pool (cudaMallocAsync on a non-blocking stream). The
 * sequence, ARC and lattice kernels attach their ops to this backend's supports switch as they land. */
#include "cuda/cuda_internal.cuh"
#include "arc/arc_device.h"
#include "seq/seq_device.h"
#include "cuda/lattice_cuda.cuh"

#include <pthread.h>
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

/* ---- device memory: the library's pool, accounting and the live-allocation table ---------------------
 * The monitor needs each allocation's size at its free; the module keeps them in a small open-addressing
 * table (live allocations are few: store chunks and scratch buffers), shared by the devices. */
typedef struct {
    void *p;
    size_t bytes;
    struct tdm_mem_monitor *mon;
} live_entry;
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static live_entry *live_tab;
static size_t live_cap, live_n;
#define TOMB ((void *)1)

static size_t live_hash(void *p) { return (size_t)(((uintptr_t)p >> 8) * 0x9E3779B97F4A7C15ull); }

/* Inserts under live_mu; grows at half full. Returns -1 without host memory. */
static int live_put(void *p, size_t bytes, struct tdm_mem_monitor *mon) {
    if (2 * (live_n + 1) > live_cap) {
        size_t nc = live_cap ? 2 * live_cap : 256;
        live_entry *nt = (live_entry *)calloc(nc, sizeof *nt);
        if (!nt) return -1;
        for (size_t i = 0; i < live_cap; i++) {
            if (!live_tab[i].p || live_tab[i].p == TOMB) continue;
            size_t j = live_hash(live_tab[i].p) & (nc - 1);
            while (nt[j].p) j = (j + 1) & (nc - 1);
            nt[j] = live_tab[i];
        }
        free(live_tab);
        live_tab = nt, live_cap = nc;
    }
    size_t j = live_hash(p) & (live_cap - 1);
    while (live_tab[j].p && live_tab[j].p != TOMB) j = (j + 1) & (live_cap - 1);
    live_tab[j] = (live_entry){p, bytes, mon};
    live_n++;
    return 0;
}

static int live_take(void *p, live_entry *out) {
    if (!live_cap) return -1;
    for (size_t j = live_hash(p) & (live_cap - 1);; j = (j + 1) & (live_cap - 1)) {
        if (!live_tab[j].p) return -1;
        if (live_tab[j].p == p) {
            *out = live_tab[j];
            live_tab[j].p = TOMB; /* tombstones are dropped at the next growth */
            live_n--;
            return 0;
        }
    }
}

static cudaError_t raw_alloc(const cuda_impl *c, void **p, size_t n, cudaStream_t s) {
    return c->pool ? cudaMallocFromPoolAsync(p, n, c->pool, s) : cudaMalloc(p, n);
}

cudaError_t tdm_cuda_malloc(const tdm_backend *b, void **p, size_t n, cudaStream_t s) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    if (!n) n = 1;
    if (H->mem_reserve(b->mem, n)) return cudaErrorMemoryAllocation; /* TANDEM_MEM_LIMIT, after relief */
    cudaError_t e = raw_alloc(c, p, n, s);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        H->mem_relieve(b->mem, n); /* trim the pool, eviction callbacks; then one retry */
        e = raw_alloc(c, p, n, s);
    }
    if (e == cudaSuccess) {
        pthread_mutex_lock(&live_mu);
        int bad = live_put(*p, n, b->mem);
        pthread_mutex_unlock(&live_mu);
        if (!bad) return cudaSuccess;
        c->pool ? cudaFreeAsync(*p, s) : cudaFree(*p);
        e = cudaErrorMemoryAllocation;
    }
    H->mem_unreserve(b->mem, n);
    H->mem_failed(b->mem);
    return e;
}

cudaError_t tdm_cuda_free(const tdm_backend *b, void *p, cudaStream_t s) {
    if (!p) return cudaSuccess;
    const cuda_impl *c = (const cuda_impl *)b->impl;
    live_entry le;
    pthread_mutex_lock(&live_mu);
    int found = !live_take(p, &le);
    pthread_mutex_unlock(&live_mu);
    cudaError_t e = c->pool ? cudaFreeAsync(p, s) : cudaFree(p);
    if (found) H->mem_unreserve(le.mon, le.bytes);
    return e;
}

static int cu_pool_stats(const tdm_backend *b, uint64_t *reserved, uint64_t *used) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    *reserved = *used = 0;
    if (!c->pool) return TDM_OK;
    uint64_t r = 0, u = 0;
    cudaError_t e = cudaMemPoolGetAttribute(c->pool, cudaMemPoolAttrReservedMemCurrent, &r);
    if (e == cudaSuccess) e = cudaMemPoolGetAttribute(c->pool, cudaMemPoolAttrUsedMemCurrent, &u);
    if (e != cudaSuccess) return fail(e, "cudaMemPoolGetAttribute");
    *reserved = r, *used = u;
    return TDM_OK;
}

static int cu_trim(const tdm_backend *b) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    if (!c->pool) return TDM_OK;
    /* Blocks freed on the stream return to the pool only once the stream reaches the free. */
    cudaError_t e = cudaStreamSynchronize(c->stream);
    if (e == cudaSuccess) e = cudaMemPoolTrimTo(c->pool, 0);
    return e == cudaSuccess ? TDM_OK : fail(e, "cudaMemPoolTrimTo");
}

static int cu_set_release_threshold(const tdm_backend *b, uint64_t bytes) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    if (!c->pool) return TDM_OK;
    uint64_t v = bytes;
    cudaError_t e = cudaMemPoolSetAttribute(c->pool, cudaMemPoolAttrReleaseThreshold, &v);
    return e == cudaSuccess ? TDM_OK : fail(e, "cudaMemPoolSetAttribute");
}

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
    /* The lattice engine's kernels (lattice_*.cu): BFS paths and XOR bit for bit, matrices within the
     * spec's section 5 bounds; checked against the CPU by tests/cross/test_lattice_cross.c. */
    case TDM_OP_LATTICE_BFS:
    case TDM_OP_LATTICE_XOR:
    case TDM_OP_LATTICE_GEMM:
    case TDM_OP_LATTICE_GEMM_BATCHED:
    case TDM_OP_LATTICE_EWISE:
    case TDM_OP_LATTICE_REDUCE:
    /* Catalytic queries run here when their aux lives in this device's memory (lattice_catalytic.cu). */
    case TDM_OP_LATTICE_CATALYTIC: return 1;
    /* No device kernels: the char metric, the lattice build. */
    case TDM_OP_SEQ_CHAR:
    case TDM_OP_LATTICE_BUILD:
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
    if (e == cudaSuccess) e = tdm_cuda_malloc(b, ptr, bytes ? bytes : 1, c->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(c->stream);
    if (e != cudaSuccess) return fail(e, "cudaMallocAsync");
    return TDM_OK;
}

static int cu_release(const tdm_backend *b, void *ptr) {
    if (!ptr) return TDM_OK;
    const cuda_impl *c = (const cuda_impl *)b->impl;
    cudaError_t e = cudaSetDevice(c->dev);
    if (e == cudaSuccess) e = tdm_cuda_free(b, ptr, c->stream);
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
        tdm_cuda_lat_bfs_free(b); /* its device buffers, on the stream, before the stream goes */
        cudaStreamSynchronize(c->stream);
        cudaStreamDestroy(c->stream);
        if (c->pool) cudaMemPoolDestroy(c->pool);
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
    int pools = 0;
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, dev);
    if (e == cudaSuccess && pools) {
        /* The library's own pool, so that trimming and statistics are the library's (not another user's
         * of the device's default pool). Freed blocks stay in it (release threshold: all memory, until
         * TANDEM_MEM_RELEASE_THRESHOLD says otherwise) instead of going back to the driver at each sync. */
        cudaMemPoolProps props;
        memset(&props, 0, sizeof props);
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = dev;
        uint64_t keep = UINT64_MAX;
        e = cudaMemPoolCreate(&c->pool, &props);
        if (e == cudaSuccess) e = cudaMemPoolSetAttribute(c->pool, cudaMemPoolAttrReleaseThreshold, &keep);
    } else if (e == cudaSuccess) {
        H->log(TDM_LOG_WARN, "cuda:%d has no memory pools: plain cudaMalloc/cudaFree", dev);
    }
    if (e != cudaSuccess) {
        if (c->pool) cudaMemPoolDestroy(c->pool);
        if (c->stream) cudaStreamDestroy(c->stream);
        free(b);
        free(c);
        return fail(e, "device setup");
    }
    snprintf(c->name, sizeof c->name, "cuda:%d", dev);
    /* Device spans for the profiler on this stream; a profiler that cannot start here only loses them. */
    if (tdm_cuda_prof_new(dev, c->stream, c->pool, c->name, &c->prof)) {
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
    b->pool_stats = cu_pool_stats;
    b->trim = cu_trim;
    b->set_release_threshold = cu_set_release_threshold;
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    char uuid[40];
    for (int i = 0; i < 16; i++) snprintf(uuid + 2 * i, 3, "%02x", (unsigned char)p.uuid.bytes[i]);
    snprintf(b->identity, sizeof b->identity, "uuid %s driver %d runtime %d", uuid, drv, rt);
    b->lattice = &tdm_cuda_lattice_ops;
    c->lat_bfs = tdm_cuda_lat_bfs_new();
    if (H->prof_set_device_info) {
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
