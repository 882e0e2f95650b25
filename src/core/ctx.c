/* ctx.c: the context: resolved configuration, worker-thread count and the registered backends. Each
 * context is independent (no process-wide singleton whose first caller's configuration wins). */
#include "core/internal.h"
#include "runtime/router_internal.h"
#include "runtime/prof_internal.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int tdm_init(tdm_ctx **out, const tdm_config *cfg) {
    if (!out) return tdm_error(TDM_E_INVAL, "tdm_init: ctx is NULL");
    tdm_ctx *ctx = tdm_calloc(1, sizeof *ctx);
    if (!ctx) return tdm_error(TDM_E_NOMEM, "tdm_init: no memory for the context");
    if (cfg)
        ctx->cfg = *cfg;
    else
        tdm_config_init(&ctx->cfg);
    int rc = tdm_config_resolve(&ctx->cfg);
    if (rc) {
        tdm_free(ctx);
        return rc;
    }
    tdm_log_set_level((tdm_log_level)ctx->cfg.log_level);
    if (ctx->cfg.profile && !tdm_prof_running()) {
        /* Started before the backends so that their initialisation is on the record. */
        tdm_prof_opts po = {.capacity = (uint32_t)ctx->cfg.profile_capacity, .nvtx = ctx->cfg.nvtx};
        rc = tdm_prof_start(&po);
        if (rc) {
            tdm_free(ctx);
            return rc;
        }
        ctx->prof_owner = 1;
    }
    ctx->threads = ctx->cfg.threads > 0 ? ctx->cfg.threads : omp_get_num_procs();
    /* Backends and the CUDA module's start-up are the context's init span ("init" in the report). */
    TDM_PROF_OP_BEGIN(init, "init.backends", TDM_PROF_CAT_INIT);
    rc = tdm_backend_cpu_create(&ctx->backends[0]);
    if (rc) {
        TDM_PROF_OP_END(init, rc);
        tdm_free(ctx);
        return rc;
    }
    ctx->nbackends = 1;
    if (ctx->cfg.device != TDM_DEVICE_CPU)
        tdm_cuda_register(ctx);
    TDM_PROF_OP_END(init, TDM_OK);
    if (ctx->cfg.device == TDM_DEVICE_CUDA && ctx->nbackends == 1) {
        if (ctx->cfg.strict) {
            tdm_destroy(ctx);
            return tdm_error(TDM_E_CONFIG, "TANDEM_DEVICE=cuda but no usable CUDA device (TANDEM_STRICT=1)");
        }
        tdm_log(TDM_LOG_WARN, "TANDEM_DEVICE=cuda but no usable CUDA device: running on the CPU");
    }
    /* The router needs the registered backends (its model is keyed by them). */
    rc = tdm_router_init(ctx);
    if (!rc) rc = tdm_devmem_attach(ctx);
    if (!rc && ctx->cfg.calibrate == TDM_CALIBRATE_FORCE) rc = tdm_calibrate(ctx, 0);
    if (rc) {
        tdm_destroy(ctx);
        return rc;
    }
    *out = ctx;
    return TDM_OK;
}

/* TANDEM_PROFILE_OUT: the owner context writes both reports when it ends (device spans are flushed while
 * the backends still exist). */
static void write_profile(const tdm_ctx *ctx) {
    const char *prefix = ctx->cfg.profile_out;
    if (!prefix || !*prefix) return;
    char path[4096];
    snprintf(path, sizeof path, "%s.trace.json", prefix);
    if (tdm_prof_export_trace(path)) tdm_log(TDM_LOG_WARN, "profile not written: %s", tdm_last_error());
    snprintf(path, sizeof path, "%s.html", prefix);
    if (tdm_prof_export_html(path)) tdm_log(TDM_LOG_WARN, "profile report not written: %s", tdm_last_error());
}

void tdm_destroy(tdm_ctx *ctx) {
    if (!ctx) return;
    if (ctx->prof_owner) {
        write_profile(ctx);
        tdm_prof_stop();
    }
    for (int i = ctx->nbackends - 1; i >= 0; i--)
        if (ctx->backends[i] && ctx->backends[i]->destroy) ctx->backends[i]->destroy(ctx->backends[i]);
    tdm_router_free(ctx); /* after the backends: their monitors live here */
    tdm_cuda_unload(ctx);
    tdm_lat_cache_free(atomic_load(&ctx->lattice_cache));
    tdm_lat_ws_free(atomic_load(&ctx->lattice_ws));
    tdm_free(ctx);
}

const tdm_config *tdm_ctx_config(const tdm_ctx *ctx) { return &ctx->cfg; }

int tdm_ctx_threads(const tdm_ctx *ctx) { return ctx->threads; }

int tdm_grow(void **buf, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) return -1;
        ncap *= 2;
    }
    size_t bytes;
    if (tdm_size_mul(ncap, elem, &bytes)) return -1;
    void *p = tdm_realloc(*buf, bytes);
    if (!p) return -1;
    *buf = p;
    *cap = ncap;
    return 0;
}

double tdm_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
