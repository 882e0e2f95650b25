/* cuda_loader.c: finds and loads libtandem_cuda.so with dlopen and registers one backend per usable
 * device. Keeping CUDA in a module means the core library and the tandem command start and run on
 * machines without the CUDA runtime or a GPU; why no GPU was used is logged once at info level. */
#define _GNU_SOURCE
#include "core/internal.h"
#include "cuda/module.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const tdm_cuda_host host = {tdm_error,
                                   tdm_log,
                                   tdm_malloc,
                                   tdm_free,
                                   tdm_mem_monitor_reserve,
                                   tdm_mem_monitor_unreserve,
                                   tdm_mem_monitor_relieve,
                                   tdm_mem_monitor_count_failure,
                                   tdm_prof_on,
                                   tdm_prof_intern,
                                   tdm_prof_now,
                                   tdm_prof_current,
                                   tdm_prof_record,
                                   tdm_prof_source_add,
                                   tdm_prof_source_remove,
                                   tdm_prof_set_device_info};

static void *try_open(const char *path, char *why, size_t cap) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, cap, "%.480s", e ? e : path);
    }
    return h;
}

static void *open_module(const tdm_ctx *ctx, char *why, size_t cap) {
    const char *forced = ctx->cfg.cuda_module;
    if (forced && *forced) return try_open(forced, why, cap);
    char path[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", path, PATH_MAX);
    if (n > 0) {
        path[n] = '\0';
        char *slash = strrchr(path, '/');
        if (slash) {
            strcpy(slash + 1, "libtandem_cuda.so");
            if (access(path, R_OK) == 0) return try_open(path, why, cap);
        }
    }
    const char *dirs[] = {TANDEM_CUDA_MODULE_BUILD_DIR, TANDEM_CUDA_MODULE_INSTALL_DIR};
    for (size_t i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/libtandem_cuda.so", dirs[i]);
        if (access(path, R_OK) == 0) return try_open(path, why, cap);
    }
    return try_open("libtandem_cuda.so", why, cap);
}

void tdm_cuda_register(tdm_ctx *ctx) {
    char why[512] = "";
    void *h = open_module(ctx, why, sizeof why);
    if (!h) {
        tdm_log(TDM_LOG_INFO, "no CUDA backend: module not loaded (%s)", why);
        return;
    }
    const tdm_cuda_module *(*get)(void) = (const tdm_cuda_module *(*)(void))dlsym(h, TDM_CUDA_MODULE_SYMBOL);
    const tdm_cuda_module *m = get ? get() : NULL;
    if (!m || m->abi != TDM_CUDA_MODULE_ABI) {
        tdm_log(TDM_LOG_WARN, "no CUDA backend: module has ABI %d, expected %d", m ? m->abi : -1,
                TDM_CUDA_MODULE_ABI);
        dlclose(h);
        return;
    }
    m->init(&host);
    int n = 0;
    if (m->device_count(&n) || n == 0) {
        tdm_log(TDM_LOG_INFO, "no CUDA backend: %s", n == 0 && !*tdm_last_error() ? "no device" : tdm_last_error());
        tdm_clear_error();
        dlclose(h);
        return;
    }
    ctx->cuda_module = h;
    int first = ctx->cfg.device == TDM_DEVICE_CUDA ? ctx->cfg.device_index : 0;
    for (int d = first; d < n && ctx->nbackends < TDM_MAX_BACKENDS; d++) {
        tdm_backend *b = NULL;
        if (m->backend_create(d, &b)) {
            tdm_log(TDM_LOG_WARN, "CUDA device %d not used: %s", d, tdm_last_error());
            continue;
        }
        ctx->backends[ctx->nbackends++] = b;
        tdm_log(TDM_LOG_INFO, "registered backend %s (%s)", b->name, b->description);
        if (ctx->cfg.device == TDM_DEVICE_CUDA) break; /* cuda:N names one device */
    }
}

void tdm_cuda_unload(tdm_ctx *ctx) {
    if (ctx->cuda_module) dlclose(ctx->cuda_module);
    ctx->cuda_module = NULL;
}
