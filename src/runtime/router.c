/* router.c: placement by the measured cost model (spec section 6.2). A decision is arithmetic on an
 * immutable model snapshot read through an atomic pointer, plus one record written into a ring by an
 * atomic counter: no lock, allocation or string formatting unless TANDEM_DEBUG_ROUTER=1 (the project
 * this replaces spent 28-30 us per decision formatting debug strings). Publishing a new model swaps the
 * pointer under a mutex and keeps the old snapshot until tdm_destroy, so a decision that still reads it
 * is never left with freed memory. */
#define _GNU_SOURCE
#include "runtime/router_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void default_path(const tdm_ctx *ctx, char *buf, size_t cap) {
    const char *p = ctx->cfg.costmodel_path;
    if (p) {
        snprintf(buf, cap, "%s", p);
        return;
    }
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg) snprintf(buf, cap, "%s/tandem/costmodel.json", xdg);
    else if (home && *home) snprintf(buf, cap, "%s/.cache/tandem/costmodel.json", home);
    else buf[0] = '\0'; /* nowhere to keep it: calibrate per process */
}

int tdm_router_init(tdm_ctx *ctx) {
    tdm_router *r = tdm_calloc(1, sizeof *r);
    tdm_costmodel *m = tdm_calloc(1, sizeof *m);
    if (!r || !m || pthread_mutex_init(&r->mu, NULL)) {
        tdm_free(r);
        tdm_free(m);
        return tdm_error(TDM_E_NOMEM, "tdm_init: no memory for the router");
    }
    if (ctx->cfg.route_log > 0) {
        uint64_t n = 1;
        while (n < (uint64_t)ctx->cfg.route_log) n <<= 1;
        r->ring = tdm_calloc(n, sizeof *r->ring);
        if (!r->ring) {
            pthread_mutex_destroy(&r->mu);
            tdm_free(r), tdm_free(m);
            return tdm_error(TDM_E_NOMEM, "tdm_init: no memory for %llu routing records", (unsigned long long)n);
        }
        r->mask = n - 1;
    }
    ctx->router = r;
    default_path(ctx, r->path, sizeof r->path);
    tdm_costmodel_machine_key(ctx, r->key, sizeof r->key);
    snprintf(m->key, sizeof m->key, "%s", r->key);
    if (r->path[0] && ctx->cfg.calibrate != TDM_CALIBRATE_FORCE) {
        int rc = tdm_costmodel_load(r->path, r->key, m);
        if (rc == TDM_E_STALE)
            tdm_log(TDM_LOG_INFO, "cost model %s belongs to another machine or configuration: recalibrating", r->path);
        else if (rc && rc != TDM_E_NOTFOUND)
            tdm_log(TDM_LOG_WARN, "cost model %s not used (%s: %s): recalibrating", r->path, tdm_status_name(rc),
                    tdm_last_error());
        if (rc) {
            memset(m, 0, sizeof *m);
            snprintf(m->key, sizeof m->key, "%s", r->key);
        }
        tdm_clear_error();
    }
    atomic_store(&r->model, m);
    return TDM_OK;
}

void tdm_router_free(tdm_ctx *ctx) {
    tdm_router *r = ctx->router;
    if (!r) return;
    for (size_t i = 0; i < r->nretired; i++) tdm_free(r->retired[i]);
    tdm_free(r->retired);
    tdm_free(atomic_load(&r->model));
    for (int i = 0; i < TDM_MAX_BACKENDS; i++) {
        if (!r->monitors[i]) continue;
        /* Everything the library took on the device must be back by now (the backends are gone). */
        tdm_mem_stats st;
        tdm_mem_monitor_stats(r->monitors[i], &st);
        if (st.live_bytes)
            tdm_log(TDM_LOG_WARN, "device %d: %llu bytes in %llu allocations not freed at tdm_destroy", i,
                    (unsigned long long)st.live_bytes, (unsigned long long)(st.allocations - st.frees));
        tdm_mem_monitor_free(r->monitors[i]);
    }
    tdm_free(r->ring);
    pthread_mutex_destroy(&r->mu);
    tdm_free(r);
    ctx->router = NULL;
}

const char *tdm_costmodel_path(const tdm_ctx *ctx) { return ctx && ctx->router ? ctx->router->path : ""; }

void tdm_costmodel_get(const tdm_ctx *ctx, tdm_costmodel *out) {
    *out = *atomic_load_explicit(&ctx->router->model, memory_order_acquire);
}

int tdm_costmodel_set(tdm_ctx *ctx, const tdm_costmodel *m) {
    if (!ctx || !m) return tdm_error(TDM_E_INVAL, "tdm_costmodel_set: NULL argument");
    tdm_router *r = ctx->router;
    tdm_costmodel *copy = tdm_malloc(sizeof *copy);
    if (!copy) return tdm_error(TDM_E_NOMEM, "tdm_costmodel_set: no memory");
    *copy = *m;
    pthread_mutex_lock(&r->mu);
    if (r->nretired == r->capretired && tdm_grow((void **)&r->retired, &r->capretired, r->nretired + 1, sizeof *r->retired)) {
        pthread_mutex_unlock(&r->mu);
        tdm_free(copy);
        return tdm_error(TDM_E_NOMEM, "tdm_costmodel_set: no memory");
    }
    r->retired[r->nretired++] = atomic_exchange_explicit(&r->model, copy, memory_order_acq_rel);
    pthread_mutex_unlock(&r->mu);
    return TDM_OK;
}

static uint64_t record(tdm_router *r, const tdm_route_req *q, const tdm_route_decision *d, uint64_t moved) {
    if (!r->ring) return 0;
    uint64_t id = atomic_fetch_add_explicit(&r->seq, 1, memory_order_relaxed) + 1;
    tdm_route_slot *s = &r->ring[(id - 1) & r->mask];
    atomic_store_explicit(&s->seq, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    s->r = (tdm_route_record){.seq = id, .ts_ms = tdm_now_ms(), .op = q->op, .work = q->work, .levels = q->levels,
                              .bytes_moved = moved, .t_cpu_us = d->t_cpu_us, .t_gpu_us = d->t_gpu_us,
                              .chosen_gpu = d->backend->kind != TDM_BACKEND_CPU, .reason = d->reason,
                              .measured_us = -1.0};
    atomic_store_explicit(&s->seq, id, memory_order_release);
    return id;
}

void tdm_route_measured(const tdm_ctx *ctx, uint64_t id, double us) {
    tdm_router *r = ctx ? ctx->router : NULL;
    if (!r || !r->ring || !id) return;
    tdm_route_slot *s = &r->ring[(id - 1) & r->mask];
    if (atomic_load_explicit(&s->seq, memory_order_acquire) == id) s->r.measured_us = us;
}

void tdm_route_log_read(const tdm_ctx *ctx, tdm_route_record *out, size_t cap, size_t *n) {
    *n = 0;
    tdm_router *r = ctx ? ctx->router : NULL;
    if (!r || !r->ring || !cap) return;
    uint64_t last = atomic_load_explicit(&r->seq, memory_order_acquire), size = r->mask + 1;
    uint64_t first = last > size ? last - size + 1 : 1;
    if (last - first + 1 > cap) first = last - cap + 1;
    for (uint64_t id = first; id && id <= last; id++) {
        tdm_route_slot *s = &r->ring[(id - 1) & r->mask];
        if (atomic_load_explicit(&s->seq, memory_order_acquire) != id) continue;
        tdm_route_record copy = s->r;
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&s->seq, memory_order_relaxed) == id) out[(*n)++] = copy;
    }
}

/* The first GPU backend that supports op; *any says whether any GPU is registered. */
static const tdm_backend *gpu_for(const tdm_ctx *ctx, tdm_op op, int *any) {
    *any = 0;
    for (int i = 1; i < ctx->nbackends; i++) {
        const tdm_backend *b = ctx->backends[i];
        if (b->kind != TDM_BACKEND_CUDA) continue;
        *any = 1;
        if (b->supports(b, op)) return b;
    }
    return NULL;
}

static double link_us(const tdm_cost_link *l, uint64_t bytes) {
    return bytes ? l->lat_us + (double)bytes * l->us_per_byte : 0.0;
}

/* Memory checks for a GPU placement: pressure and fit. 0 = fine, else the reason against it. */
static int memory_veto(const tdm_ctx *ctx, const tdm_backend *gpu, const tdm_route_req *q) {
    const tdm_mem_monitor *mon = gpu->mem;
    if (!mon) return 0;
    if (!q->resident && tdm_mem_monitor_level(mon) == TDM_PRESSURE_CRITICAL) return TDM_ROUTE_MEM_PRESSURE;
    if (!q->device_bytes) return 0;
    tdm_mem_stats st;
    tdm_mem_monitor_stats(mon, &st);
    if (st.limit && st.live_bytes + q->device_bytes > st.limit) return TDM_ROUTE_MEM_INSUFFICIENT;
    if (st.last.total) {
        double eff = (double)st.last.free + (double)(st.last.reserved - st.last.used);
        if ((double)q->device_bytes > eff * (1.0 - ctx->cfg.mem_safety)) return TDM_ROUTE_MEM_INSUFFICIENT;
    }
    return 0;
}

/* Lazy calibration of op (TANDEM_CALIBRATE=auto): once per op and context, by the first decision that
 * finds the class untrusted with a GPU to compare against. */
static void maybe_calibrate(const tdm_ctx *ctx, tdm_op op) {
    tdm_router *r = ctx->router;
    if (ctx->cfg.calibrate != TDM_CALIBRATE_AUTO || !tdm_cost_family_of(op)) return;
    if (atomic_exchange(&r->tried[op], 1)) return;
    int rc = tdm_calibrate((tdm_ctx *)ctx, 1u << op);
    if (rc) tdm_log(TDM_LOG_WARN, "router: calibrating %s failed (%s: %s)", tdm_op_name(op), tdm_status_name(rc), tdm_last_error());
    tdm_clear_error();
}

int tdm_route(const tdm_ctx *ctx, const tdm_route_req *q, tdm_route_decision *d) {
    if (!ctx || !q || !d || q->op < 0 || q->op >= TDM_OP_COUNT || !(q->work >= 0.0) || !(q->levels >= 0.0))
        return tdm_error(TDM_E_INVAL, "tdm_route: bad argument (op %d)", q ? (int)q->op : -1);
    tdm_router *r = ctx->router;
    int any;
    const tdm_backend *gpu = gpu_for(ctx, q->op, &any), *cpu = ctx->backends[0];
    d->backend = cpu;
    d->t_cpu_us = d->t_gpu_us = -1.0;
    d->record = 0;
    /* Overrides: call hint > TANDEM_ROUTE_<OP> > TANDEM_ROUTE. */
    int force = q->hint, why_forced = TDM_ROUTE_FORCED_CALL;
    if (force == TDM_DEVICE_AUTO) {
        /* TANDEM_ROUTE_<OP>=auto hands the op back to the model even under TANDEM_ROUTE=cpu|gpu. */
        int per_op = ctx->cfg.route_op[q->op];
        force = per_op != TDM_CONFIG_UNSET_OP ? per_op : ctx->cfg.route;
        why_forced = TDM_ROUTE_FORCED_ENV;
    }
    if (force == TDM_DEVICE_CPU) {
        d->reason = (tdm_route_reason)why_forced;
    } else if (force == TDM_DEVICE_CUDA) {
        if (gpu) {
            d->backend = gpu;
            d->reason = (tdm_route_reason)why_forced;
        } else if (ctx->cfg.strict) {
            return tdm_error(TDM_E_UNSUPPORTED, "%s: GPU forced (%s) but no usable GPU implements it (TANDEM_STRICT)",
                             tdm_op_name(q->op), why_forced == TDM_ROUTE_FORCED_CALL ? "by the call" : "TANDEM_ROUTE");
        } else {
            d->reason = TDM_ROUTE_FORCED_GPU_UNAVAILABLE;
        }
    } else if (!gpu) {
        d->reason = any ? TDM_ROUTE_NO_GPU_IMPL : TDM_ROUTE_ONLY_CPU;
    } else {
        int veto = memory_veto(ctx, gpu, q);
        const tdm_costmodel *m = atomic_load_explicit(&r->model, memory_order_acquire);
        if (!veto && (!m->cls[q->op][0].trusted || !m->cls[q->op][1].trusted) && !atomic_load(&r->tried[q->op])) {
            maybe_calibrate(ctx, q->op);
            m = atomic_load_explicit(&r->model, memory_order_acquire);
        }
        double tc = tdm_costmodel_predict(m, q->op, 0, q->work, 0.0);
        double tg = tdm_costmodel_predict(m, q->op, 1, q->work, q->levels);
        if (veto) {
            d->reason = (tdm_route_reason)veto;
        } else if (tc < 0.0 || tg < 0.0) {
            /* No trusted model: run where the inputs live. */
            d->reason = TDM_ROUTE_RESIDENCY_ONLY;
            if (q->resident) d->backend = gpu;
        } else {
            const tdm_cost_link *h2d = m->link_trusted ? &m->h2d : NULL, *d2h = m->link_trusted ? &m->d2h : NULL;
            if (h2d) {
                tg += link_us(h2d, q->h2d_bytes) + link_us(d2h, q->d2h_bytes);
                tc += link_us(d2h, q->to_cpu_bytes);
            }
            d->t_cpu_us = tc, d->t_gpu_us = tg;
            if (tg <= (1.0 - ctx->cfg.route_margin) * tc) {
                d->backend = gpu;
                d->reason = TDM_ROUTE_MODEL_GPU;
            } else {
                d->reason = TDM_ROUTE_MODEL_CPU;
            }
        }
    }
    uint64_t moved = d->backend == cpu ? q->to_cpu_bytes : q->h2d_bytes + q->d2h_bytes;
    d->record = record(r, q, d, moved);
    if (ctx->cfg.debug_router)
        tdm_log(TDM_LOG_WARN, "router: #%llu %s W=%.0f levels=%.0f -> %s (%s; T_cpu %.1f us, T_gpu %.1f us)",
                (unsigned long long)d->record, tdm_op_name(q->op), q->work, q->levels, d->backend->name,
                tdm_route_reason_name(d->reason), d->t_cpu_us, d->t_gpu_us);
    return TDM_OK;
}
