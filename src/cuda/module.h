/* module.h: the contract between the core library and the dlopen'd CUDA module. The module links no
 * tandem code; the core hands it the few host functions it needs (error and log reporting). */
#ifndef TANDEM_CUDA_MODULE_H
#define TANDEM_CUDA_MODULE_H

#include "tandem/backend.h"
#include "tandem/prof.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TDM_CUDA_MODULE_ABI 15 /* 4: memory accounting, pool statistics, trim; 5: ARC; 6: lattice; 7: profiler;
                                 8: batched XOR; 9: BFS kernel choice; 10: 9 withdrawn; 11: 9 again;
                                 12: ARC batched executor columns and kernels; 13: four arguments a call,
                                 lanes of objects and colour sets; 14: sequence queries return
                                 matching-block summaries; 15: threshold rows by rank */

typedef struct {
    int (*error)(int status, const char *fmt, ...);
    void (*log)(tdm_log_level level, const char *fmt, ...);
    /* The core's accounted allocator: memory the module hands to the core (query results). */
    void *(*malloc)(size_t bytes);
    void (*free)(void *p);
    /* Device memory accounting (src/runtime/devmem.c, ABI 4): the module reports every device
     * allocation to the backend's monitor (tdm_backend.mem; each function accepts NULL). reserve may
     * refuse (TANDEM_MEM_LIMIT) after relieving pressure; relieve trims and calls the engines' eviction
     * callbacks before the module's one retry of a failed allocation. */
    int (*mem_reserve)(struct tdm_mem_monitor *m, size_t bytes);
    void (*mem_unreserve)(struct tdm_mem_monitor *m, size_t bytes);
    size_t (*mem_relieve)(struct tdm_mem_monitor *m, size_t wanted);
    void (*mem_failed)(struct tdm_mem_monitor *m);
    /* The profiler (include/tandem/prof.h): the module records device spans as CUDA event pairs and
     * reports them when the core flushes its sources (ABI 7). */
    int (*prof_on)(void);
    uint32_t (*prof_intern)(const char *name);
    uint64_t (*prof_now)(void);
    uint64_t (*prof_current)(void);
    void (*prof_record)(const tdm_prof_span *s);
    int (*prof_source_add)(tdm_prof_flush_fn fn, void *user);
    void (*prof_source_remove)(tdm_prof_flush_fn fn, void *user);
    void (*prof_set_device_info)(const char *device, const char *driver);
} tdm_cuda_host;

typedef struct {
    int abi; /* TDM_CUDA_MODULE_ABI of the module */
    /* Must be called first; host is borrowed for the module's lifetime. */
    void (*init)(const tdm_cuda_host *host);
    /* Usable devices (compute capability >= 7.5). On failure returns a negative status and the reason
     * through host->error. */
    int (*device_count)(int *n);
    /* A backend for device ordinal dev; released by its destroy function. */
    int (*backend_create)(int dev, tdm_backend **out);
} tdm_cuda_module;

/* The one symbol the core looks up with dlsym. */
const tdm_cuda_module *tdm_cuda_module_get(void);
#define TDM_CUDA_MODULE_SYMBOL "tdm_cuda_module_get"

#ifdef __cplusplus
}
#endif
#endif
