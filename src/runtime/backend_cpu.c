/* backend_cpu.c: the CPU backend, always registered: the correctness reference for every operation.
 * Its memory is host memory taken through the accounted allocator. */
#include "core/internal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int cpu_supports(const tdm_backend *b, tdm_op op) { return op >= 0 && op < TDM_OP_COUNT; }

static int cpu_mem_info(const tdm_backend *b, size_t *free_bytes, size_t *total_bytes) {
    long pages = sysconf(_SC_PHYS_PAGES), avail = sysconf(_SC_AVPHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages < 0 || avail < 0 || psize < 0) return tdm_error(TDM_E_IO, "cpu: sysconf failed");
    if (free_bytes) *free_bytes = (size_t)avail * (size_t)psize;
    if (total_bytes) *total_bytes = (size_t)pages * (size_t)psize;
    return TDM_OK;
}

static int cpu_alloc(const tdm_backend *b, size_t bytes, void **ptr) {
    void *p = tdm_malloc(bytes ? bytes : 1);
    if (!p) return tdm_error(TDM_E_NOMEM, "cpu: cannot allocate %zu bytes", bytes);
    *ptr = p;
    return TDM_OK;
}

static int cpu_release(const tdm_backend *b, void *ptr) {
    tdm_free(ptr);
    return TDM_OK;
}

static int cpu_copy(const tdm_backend *b, void *dst, const void *src, size_t bytes, tdm_copy_kind kind) {
    memmove(dst, src, bytes);
    return TDM_OK;
}

static int cpu_sync(const tdm_backend *b) { return TDM_OK; }

static void cpu_destroy(tdm_backend *b) { tdm_free(b); }

/* The CPU model from /proc/cpuinfo, for descriptions, benchmark reports and the profiler's trace. */
void tdm_cpu_model(char *buf, size_t cap) {
    snprintf(buf, cap, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10)) continue;
        char *colon = strchr(line, ':');
        if (!colon) break;
        colon += colon[1] == ' ' ? 2 : 1;
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(buf, cap, "%s", colon);
        break;
    }
    fclose(f);
}

int tdm_backend_cpu_create(tdm_backend **out) {
    tdm_backend *b = tdm_calloc(1, sizeof *b);
    if (!b) return tdm_error(TDM_E_NOMEM, "cpu backend: no memory");
    b->name = "cpu";
    b->kind = TDM_BACKEND_CPU;
    b->device = -1;
    tdm_cpu_model(b->description, sizeof b->description);
    b->supports = cpu_supports;
    b->mem_info = cpu_mem_info;
    b->alloc = cpu_alloc;
    b->release = cpu_release;
    b->copy = cpu_copy;
    b->sync = cpu_sync;
    b->destroy = cpu_destroy;
    *out = b;
    return TDM_OK;
}
