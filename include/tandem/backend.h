/* backend.h: the backend interface. A backend is a struct of function pointers plus a context (the
 * ggml-style interface): the CPU backend is always registered and is the correctness reference for every
 * operation; the CUDA backend lives in a separately built module (libtandem_cuda.so) that tdm_init loads
 * with dlopen and registers only when a device is present, so the core library has no link-time CUDA
 * dependency and everything works without a GPU.
 *
 * Each backend answers one `supports` switch over the operation list below; engines ask
 * tdm_backend_select() where an operation may run. */
#ifndef TANDEM_BACKEND_H
#define TANDEM_BACKEND_H

#include "tandem/tandem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { TDM_BACKEND_CPU = 0, TDM_BACKEND_CUDA = 1 } tdm_backend_kind;

/* Operations that backends may implement. Append only. */
#define TDM_OP_LIST(X)                                                                                     \
    X(TDM_OP_SEQ_LCS, "seq.lcs")                                                                           \
    X(TDM_OP_SEQ_DIFFLIB, "seq.difflib")                                                                   \
    X(TDM_OP_SEQ_CHAR, "seq.char")                                                                         \
    X(TDM_OP_SEQ_PREFILTER, "seq.prefilter")                                                               \
    X(TDM_OP_SEQ_SELECT, "seq.select")                                                                     \
    X(TDM_OP_ARC_OBJECTS, "arc.objects")

typedef enum {
#define TDM_X_OP(name, text) name,
    TDM_OP_LIST(TDM_X_OP)
#undef TDM_X_OP
        TDM_OP_COUNT
} tdm_op;

/* "seq.lcs" etc.; "unknown" outside the list. */
const char *tdm_op_name(tdm_op op);

typedef enum { TDM_COPY_H2D = 0, TDM_COPY_D2H = 1, TDM_COPY_D2D = 2 } tdm_copy_kind;

typedef struct tdm_backend tdm_backend;
struct tdm_backend {
    const char *name;      /* "cpu", "cuda:0"; owned by the backend */
    tdm_backend_kind kind;
    int device;            /* device ordinal; -1 for the CPU */
    char description[128]; /* e.g. the GPU's name and compute capability, or the CPU model */
    void *impl;            /* backend-private state */

    /* 1 if this backend computes op exactly (bit-identical to the CPU reference), else 0. */
    int (*supports)(const tdm_backend *b, tdm_op op);
    /* Free and total memory the backend can allocate from, in bytes. */
    int (*mem_info)(const tdm_backend *b, size_t *free_bytes, size_t *total_bytes);
    /* Memory on the backend (device memory for CUDA, host memory for the CPU). Errors: TDM_E_NOMEM
     * (CPU), TDM_E_DEVICE_OOM, TDM_E_DEVICE. */
    int (*alloc)(const tdm_backend *b, size_t bytes, void **ptr);
    int (*release)(const tdm_backend *b, void *ptr); /* accepts NULL */
    /* Synchronous copy of bytes between host and this backend's memory. */
    int (*copy)(const tdm_backend *b, void *dst, const void *src, size_t bytes, tdm_copy_kind kind);
    /* Waits until all work issued to the backend has finished. */
    int (*sync)(const tdm_backend *b);
    /* Releases impl and the struct itself; called by tdm_destroy. */
    void (*destroy)(tdm_backend *b);
    /* The sequence engine's device entry points (src/seq/seq_device.h) where the backend keeps patterns
     * in its own memory; NULL otherwise (the CPU works on the host store directly). */
    const struct tdm_seq_dev_ops *seq;
    /* The ARC engine's device entry points (src/arc/arc_device.h); NULL where there are none. */
    const struct tdm_arc_dev_ops *arc;
};

/* Number of registered backends (>= 1: index 0 is always the CPU). */
int tdm_backend_count(const tdm_ctx *ctx);
/* Backend i (0 <= i < count), owned by ctx; NULL out of range. */
const tdm_backend *tdm_backend_get(const tdm_ctx *ctx, int i);
/* First backend of this kind, or NULL. */
const tdm_backend *tdm_backend_find(const tdm_ctx *ctx, tdm_backend_kind kind);

/* Why tdm_backend_select (or an engine on top of it) chose what it chose. SMALL_INPUT: auto kept the work
 * on the CPU because it is below the size where the GPU was measured to win. DEVICE_ERROR: the device
 * failed (an error or a full device) and the CPU gave the answer instead. */
#define TDM_ROUTE_REASON_LIST(X)                                                                           \
    X(TDM_ROUTE_ONLY_CPU, "NO_GPU")                                                                        \
    X(TDM_ROUTE_NO_GPU_IMPL, "NO_GPU_IMPL")                                                                \
    X(TDM_ROUTE_FORCED_CPU, "FORCED_CPU")                                                                  \
    X(TDM_ROUTE_FORCED_GPU, "FORCED_GPU")                                                                  \
    X(TDM_ROUTE_FORCED_GPU_UNAVAILABLE, "FORCED_GPU_UNAVAILABLE")                                          \
    X(TDM_ROUTE_PREFER_GPU, "PREFER_GPU")                                                                  \
    X(TDM_ROUTE_SMALL_INPUT, "SMALL_INPUT")                                                                \
    X(TDM_ROUTE_DEVICE_ERROR, "DEVICE_ERROR")

typedef enum {
#define TDM_X_REASON(name, text) name,
    TDM_ROUTE_REASON_LIST(TDM_X_REASON)
#undef TDM_X_REASON
} tdm_route_reason;
const char *tdm_route_reason_name(tdm_route_reason r);

/* Chooses the backend for op under preference pref (TDM_DEVICE_AUTO/CPU/CUDA): a backend is considered
 * only if it supports op. Forced CUDA without a usable device falls back to the CPU with reason
 * FORCED_GPU_UNAVAILABLE, or fails with TDM_E_UNSUPPORTED when TANDEM_STRICT is on. With
 * TANDEM_DEBUG_ROUTER=1 each decision and its reason is logged (at warn level, so it shows by default). This is the placement hook the measured
 * cost model plugs into; until the model exists, auto prefers a GPU that supports the op. */
int tdm_backend_select(const tdm_ctx *ctx, tdm_op op, tdm_device_pref pref, const tdm_backend **out,
                       tdm_route_reason *reason);

#ifdef __cplusplus
}
#endif
#endif
