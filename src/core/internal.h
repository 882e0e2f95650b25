/* internal.h: the context's layout and helpers shared by the library's own sources; not installed. */
#ifndef TANDEM_CORE_INTERNAL_H
#define TANDEM_CORE_INTERNAL_H

#include "tandem/backend.h"
#include "tandem/tandem.h"

#include <stdatomic.h>

#define TDM_MAX_BACKENDS 17

struct tdm_ctx {
    tdm_config cfg;
    int threads;
    int nbackends;
    tdm_backend *backends[TDM_MAX_BACKENDS]; /* [0] is the CPU; owned */
    void *cuda_module;                        /* dlopen handle or NULL */
    struct tdm_router *router;                /* routing, cost model, device monitors (src/runtime/router.c) */
    _Atomic(struct tdm_lat_cache *) lattice_cache; /* shortest-path LRU (src/lattice/sp_cache.c), lazy */
    _Atomic(struct tdm_lat_ws *) lattice_ws;       /* kept BFS workspace (src/lattice/bfs_ws.c), lazy */
    _Atomic uint64_t lattice_resident;             /* id of the graph whose CSR the device BFS holds (0: none) */
    int prof_owner;                           /* this context started the profiler (TANDEM_PROFILE=1) */
};

/* Frees the lattice engine's path cache (accepts NULL); tdm_destroy calls it. */
void tdm_lat_cache_free(struct tdm_lat_cache *c);
/* Frees the lattice engine's kept BFS workspace (accepts NULL); tdm_destroy calls it. */
void tdm_lat_ws_free(struct tdm_lat_ws *ws);

/* The CPU model from /proc/cpuinfo ("unknown CPU" when it cannot be read). */
void tdm_cpu_model(char *buf, size_t cap);
/* Creates the CPU backend (src/runtime/backend_cpu.c). */
int tdm_backend_cpu_create(tdm_backend **out);
/* Loads the CUDA module and registers one backend per usable device (src/runtime/cuda_loader.c).
 * Never fails for want of a GPU: it logs the reason and registers nothing. */
void tdm_cuda_register(tdm_ctx *ctx);
void tdm_cuda_unload(tdm_ctx *ctx);

/* Overflow-checked size arithmetic: return 0 on success, -1 on overflow. */
static inline int tdm_size_mul(size_t a, size_t b, size_t *out) {
    if (b && a > SIZE_MAX / b) return -1;
    *out = a * b;
    return 0;
}

/* Grows *buf (elements of size elem) to hold at least need elements, doubling; 0 or -1 (no memory). */
int tdm_grow(void **buf, size_t *cap, size_t need, size_t elem);
/* CLOCK_MONOTONIC in milliseconds: the timings the library reports in its statistics. */
double tdm_now_ms(void);

#endif
