/* backend.c: the backend registry and placement. tdm_backend_select is the single point where an engine
 * learns where an operation runs and why; the measured cost model (runtime issue) plugs in here. */
#include "core/internal.h"
#include "tandem/prof.h"

const char *tdm_op_name(tdm_op op) {
    switch (op) {
#define TDM_X_OPNAME(name, text)                                                                           \
    case name:                                                                                             \
        return text;
        TDM_OP_LIST(TDM_X_OPNAME)
#undef TDM_X_OPNAME
    case TDM_OP_COUNT: break;
    }
    return "unknown";
}

const char *tdm_route_reason_name(tdm_route_reason r) {
    switch (r) {
#define TDM_X_RNAME(name, text)                                                                            \
    case name:                                                                                             \
        return text;
        TDM_ROUTE_REASON_LIST(TDM_X_RNAME)
#undef TDM_X_RNAME
    }
    return "UNKNOWN";
}

int tdm_backend_count(const tdm_ctx *ctx) { return ctx->nbackends; }

const tdm_backend *tdm_backend_get(const tdm_ctx *ctx, int i) {
    return i >= 0 && i < ctx->nbackends ? ctx->backends[i] : NULL;
}

const tdm_backend *tdm_backend_find(const tdm_ctx *ctx, tdm_backend_kind kind) {
    for (int i = 0; i < ctx->nbackends; i++)
        if (ctx->backends[i]->kind == kind) return ctx->backends[i];
    return NULL;
}

static const tdm_backend *first_gpu_for(const tdm_ctx *ctx, tdm_op op, int *any_gpu) {
    *any_gpu = 0;
    for (int i = 1; i < ctx->nbackends; i++) {
        if (ctx->backends[i]->kind != TDM_BACKEND_CUDA) continue;
        *any_gpu = 1;
        if (ctx->backends[i]->supports(ctx->backends[i], op)) return ctx->backends[i];
    }
    return NULL;
}

int tdm_backend_select(const tdm_ctx *ctx, tdm_op op, tdm_device_pref pref, const tdm_backend **out,
                       tdm_route_reason *reason) {
    if (!ctx || !out || op < 0 || op >= TDM_OP_COUNT)
        return tdm_error(TDM_E_INVAL, "tdm_backend_select: bad argument (op %d)", (int)op);
    int any_gpu;
    const tdm_backend *gpu = first_gpu_for(ctx, op, &any_gpu);
    const tdm_backend *chosen = ctx->backends[0];
    tdm_route_reason why;
    if (pref == TDM_DEVICE_CPU) {
        why = TDM_ROUTE_FORCED_CPU;
    } else if (gpu) {
        chosen = gpu;
        why = pref == TDM_DEVICE_CUDA ? TDM_ROUTE_FORCED_GPU : TDM_ROUTE_PREFER_GPU;
    } else if (pref == TDM_DEVICE_CUDA) {
        if (ctx->cfg.strict)
            return tdm_error(TDM_E_UNSUPPORTED, "%s: CUDA forced but no usable device implements it",
                             tdm_op_name(op));
        why = TDM_ROUTE_FORCED_GPU_UNAVAILABLE;
    } else {
        why = any_gpu ? TDM_ROUTE_NO_GPU_IMPL : TDM_ROUTE_ONLY_CPU;
    }
    /* The profiler's routing instant; it also tags the op's open scope with the decision. */
    if (TANDEM_PROF_ON()) tdm_prof_route(tdm_op_name(op), chosen->name, tdm_route_reason_name(why), 0, 0);
    if (ctx->cfg.debug_router)
        tdm_log(TDM_LOG_WARN, "router: %s -> %s (%s)", tdm_op_name(op), chosen->name, tdm_route_reason_name(why));
    *out = chosen;
    if (reason) *reason = why;
    return TDM_OK;
}
