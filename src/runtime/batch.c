/* batch.c: the batch executor (spec section 6.4). Many small independent items are worth running as
 * groups because every call pays a fixed cost (a routing decision, a launch, a transfer's latency) that a
 * group pays once. This file decides the groups and runs them; what an item *is* stays with the engine,
 * which registers a family (op, run function) and submits items with their cost (work, bytes).
 *
 * Per family: the device group size is the smallest group that reaches 90 % of the device's peak
 * throughput under the measured t(B) = t0 + B t1 (B_thr = ceil(9 t0 / t1)), capped by TANDEM_BATCH_MAX and
 * by the device bytes two groups in flight may take (free + pool-cached bytes, less TANDEM_MEM_SAFETY,
 * less the live bytes under TANDEM_MEM_LIMIT; halved at CRITICAL pressure). Each such group is routed as
 * one operation (tdm_route with its summed work and bytes), so the router compares the backends at the
 * size that actually runs. Groups the router leaves on the CPU are split again into CPU groups small
 * enough to give every thread several (the CPU's t0 is tiny, so its own B_thr rarely binds).
 *
 * Running: device groups go one after another on the first thread of an OpenMP team (a device backend is
 * driven from one thread), CPU groups are taken from a shared counter by every thread, that one included
 * once the device is done. A device failure is absorbed here, not in the engine: out of memory gets one
 * retry after relief (trim, eviction callbacks), then the group and the family's remaining device groups
 * run on the CPU; the run function wrote no outputs on failure (its contract), so the rerun gives exactly
 * the CPU's results and nothing is lost. */
#define _GNU_SOURCE
#include "runtime/prof_internal.h"
#include "runtime/router_internal.h"

#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <string.h>

#define MAX_FAMILIES 64
/* CPU groups per thread when the model does not ask for larger ones: enough for dynamic balancing. */
#define CPU_GROUPS_PER_THREAD 4

typedef struct {
    int family;
    tdm_batch_cost cost;
} item_rec;

/* A planned group: positions [lo, hi) of the family-sorted order array. */
typedef struct {
    size_t lo, hi;
    const tdm_backend *backend;
} plan_rec;

struct tdm_batch {
    tdm_ctx *ctx;
    tdm_batch_opts opts;
    tdm_batch_family fam[MAX_FAMILIES];
    int nfam;
    item_rec *items;
    size_t n, cap;
    size_t *order; /* submission indices grouped by family, submission order inside a family */
    tdm_batch_group *groups;
    plan_rec *plan;
    size_t ngroups, capgroups, capplan;
    tdm_batch_stats stats;
    uint32_t prof_name[MAX_FAMILIES]; /* "batch.<op>" interned when profiling */
};

void tdm_batch_opts_init(tdm_batch_opts *o) {
    memset(o, 0, sizeof *o);
    o->hint = TDM_DEVICE_AUTO;
}

int tdm_batch_new(tdm_ctx *ctx, const tdm_batch_opts *opts, tdm_batch **out) {
    if (!ctx || !out) return tdm_error(TDM_E_INVAL, "tdm_batch_new: %s is NULL", ctx ? "out" : "ctx");
    tdm_batch_opts o;
    if (opts) o = *opts;
    else tdm_batch_opts_init(&o);
    if (o.hint != TDM_DEVICE_AUTO && o.hint != TDM_DEVICE_CPU && o.hint != TDM_DEVICE_CUDA)
        return tdm_error(TDM_E_INVAL, "tdm_batch_new: unknown backend preference %d", (int)o.hint);
    if (o.threads < 0) return tdm_error(TDM_E_INVAL, "tdm_batch_new: threads %d < 0", o.threads);
    tdm_batch *b = tdm_calloc(1, sizeof *b);
    if (!b) return tdm_error(TDM_E_NOMEM, "tdm_batch_new: no memory");
    b->ctx = ctx;
    b->opts = o;
    *out = b;
    return TDM_OK;
}

void tdm_batch_clear(tdm_batch *b) {
    if (!b) return;
    b->n = 0;
    b->ngroups = 0;
    memset(&b->stats, 0, sizeof b->stats);
}

void tdm_batch_free(tdm_batch *b) {
    if (!b) return;
    tdm_free(b->items);
    tdm_free(b->order);
    tdm_free(b->groups);
    tdm_free(b->plan);
    tdm_free(b);
}

int tdm_batch_add_family(tdm_batch *b, const tdm_batch_family *f, int *id) {
    if (!b || !f || !f->run) return tdm_error(TDM_E_INVAL, "tdm_batch_add_family: %s is NULL", !b ? "batch" : !f ? "family" : "run");
    if (f->op < 0 || f->op >= TDM_OP_COUNT) return tdm_error(TDM_E_INVAL, "tdm_batch_add_family: op %d outside the op list", (int)f->op);
    if (b->nfam == MAX_FAMILIES) return tdm_error(TDM_E_NOMEM, "tdm_batch_add_family: more than %d families", MAX_FAMILIES);
    b->fam[b->nfam] = *f;
    if (id) *id = b->nfam;
    b->nfam++;
    return TDM_OK;
}

int tdm_batch_add(tdm_batch *b, int family, const tdm_batch_cost *cost, size_t *index) {
    if (!b || !cost) return tdm_error(TDM_E_INVAL, "tdm_batch_add: %s is NULL", b ? "cost" : "batch");
    if (family < 0 || family >= b->nfam) return tdm_error(TDM_E_INVAL, "tdm_batch_add: unknown family %d (%d added)", family, b->nfam);
    if (!(cost->work >= 0.0) || isinf(cost->work)) return tdm_error(TDM_E_INVAL, "tdm_batch_add: work %g is not a finite number >= 0", cost->work);
    if (b->n == b->cap && tdm_grow((void **)&b->items, &b->cap, b->n + 1, sizeof *b->items))
        return tdm_error(TDM_E_NOMEM, "tdm_batch_add: no memory for %zu items", b->n + 1);
    b->items[b->n] = (item_rec){family, *cost};
    if (index) *index = b->n;
    b->n++;
    return TDM_OK;
}

size_t tdm_batch_count(const tdm_batch *b) { return b ? b->n : 0; }

const tdm_batch_group *tdm_batch_groups(const tdm_batch *b, size_t *n) {
    if (n) *n = b ? b->ngroups : 0;
    return b ? b->groups : NULL;
}

void tdm_batch_stats_get(const tdm_batch *b, tdm_batch_stats *out) {
    if (b) *out = b->stats;
    else memset(out, 0, sizeof *out);
}

/* ---- planning ------------------------------------------------------------------------------------------- */

static uint64_t item_bytes(const tdm_batch_cost *c) { return c->in_bytes + c->out_bytes + c->scratch_bytes; }

/* The first device backend that supports op, when the family has a device path. */
static const tdm_backend *device_for(const tdm_batch *b, const tdm_batch_family *f) {
    if (!f->device_ok || b->opts.hint == TDM_DEVICE_CPU) return NULL;
    for (int i = 1; i < b->ctx->nbackends; i++) {
        const tdm_backend *be = b->ctx->backends[i];
        if (be->kind != TDM_BACKEND_CPU && be->supports(be, f->op)) return be;
    }
    return NULL;
}

/* B_thr = ceil(9 t0 / t1): the smallest group whose throughput B / (t0 + B t1) reaches 90 % of the peak
 * 1 / t1. 0 when the class is not trusted (no figure: the other caps decide). */
static size_t size_for_throughput(const tdm_costmodel *m, tdm_op op, int gpu, double mean_work, double mean_in,
                                  double mean_out) {
    const tdm_cost_class *c = &m->cls[op][gpu];
    if (!c->trusted) return 0;
    double t1 = mean_work * c->us_per_work;
    if (gpu && m->link_trusted) t1 += mean_in * m->h2d.us_per_byte + mean_out * m->d2h.us_per_byte;
    double t0 = c->t0_us + (gpu && m->link_trusted ? m->h2d.lat_us + m->d2h.lat_us : 0.0);
    if (!(t1 > 0.0)) return SIZE_MAX; /* free per item: only the caps bound it */
    double bt = ceil(9.0 * t0 / t1);
    return bt < 1.0 ? 1 : bt > 1e15 ? SIZE_MAX : (size_t)bt;
}

/* Bytes one device group may take: half (two groups in flight) of what the device has for us, less the
 * family's per-group bytes; UINT64_MAX without figures (no monitor). */
static uint64_t device_budget(const tdm_ctx *ctx, const tdm_backend *dev, uint64_t group_bytes, int *critical) {
    *critical = 0;
    tdm_mem_monitor *mon = tdm_backend_monitor(dev);
    if (!mon) return UINT64_MAX;
    tdm_pressure lvl;
    tdm_mem_monitor_sample(mon, &lvl);
    tdm_mem_stats st;
    tdm_mem_monitor_stats(mon, &st);
    double avail = INFINITY;
    if (st.last.total) {
        double cached = st.last.reserved > st.last.used ? (double)(st.last.reserved - st.last.used) : 0.0;
        avail = ((double)st.last.free + cached) * (1.0 - ctx->cfg.mem_safety);
    }
    if (st.limit) {
        double room = st.limit > st.live_bytes ? (double)(st.limit - st.live_bytes) : 0.0;
        if (room < avail) avail = room;
    }
    if (isinf(avail)) return UINT64_MAX;
    *critical = lvl == TDM_PRESSURE_CRITICAL;
    double per = (avail - (double)group_bytes) / 2.0;
    return per < 1.0 ? 0 : (uint64_t)per;
}

static int push_group(tdm_batch *b, const tdm_batch_group *g, const plan_rec *p) {
    if (b->ngroups == b->capgroups && tdm_grow((void **)&b->groups, &b->capgroups, b->ngroups + 1, sizeof *b->groups))
        return -1;
    if (b->ngroups == b->capplan && tdm_grow((void **)&b->plan, &b->capplan, b->ngroups + 1, sizeof *b->plan)) return -1;
    b->groups[b->ngroups] = *g;
    b->plan[b->ngroups] = *p;
    b->ngroups++;
    return 0;
}

/* A group of order[lo, hi) of family fi on backend be, with the decision d. */
static int add_group(tdm_batch *b, int fi, size_t lo, size_t hi, const tdm_backend *be, const tdm_route_decision *d) {
    const tdm_batch_family *f = &b->fam[fi];
    tdm_batch_group g = {.family = fi, .op = f->op, .first = b->order[lo], .count = hi - lo, .backend = be->name,
                         .reason = d->reason, .device_bytes = f->group_bytes, .record = d->record, .status = TDM_OK};
    for (size_t i = lo; i < hi; i++) {
        const tdm_batch_cost *c = &b->items[b->order[i]].cost;
        g.work += c->work;
        g.device_bytes += item_bytes(c);
    }
    g.predicted_us = be->kind == TDM_BACKEND_CPU ? d->t_cpu_us : d->t_gpu_us;
    plan_rec p = {lo, hi, be};
    return push_group(b, &g, &p);
}

/* Plans family fi's items order[lo, hi). */
static int plan_family(tdm_batch *b, int fi, size_t lo, size_t hi, int threads) {
    const tdm_batch_family *f = &b->fam[fi];
    const size_t n = hi - lo;
    const size_t cap = b->opts.max_group ? b->opts.max_group : (size_t)b->ctx->cfg.batch_max;
    double work = 0, in = 0, out = 0;
    for (size_t i = lo; i < hi; i++) {
        const tdm_batch_cost *c = &b->items[b->order[i]].cost;
        work += c->work, in += (double)c->in_bytes, out += (double)c->out_bytes;
    }
    const tdm_costmodel *m = atomic_load_explicit(&b->ctx->router->model, memory_order_acquire);
    /* CPU groups: the model's B_thr, or a share giving each thread several groups, whichever is larger. */
    size_t cpu_size = (n + (size_t)threads * CPU_GROUPS_PER_THREAD - 1) / ((size_t)threads * CPU_GROUPS_PER_THREAD);
    size_t cpu_thr = size_for_throughput(m, f->op, 0, work / n, 0, 0);
    if (cpu_thr > cpu_size) cpu_size = cpu_thr;
    if (cpu_size > cap) cpu_size = cap;
    if (cpu_size < 1) cpu_size = 1;

    const tdm_backend *dev = device_for(b, f);
    size_t dev_size = n;      /* the routed chunk: the whole family when there is no device */
    uint64_t budget = UINT64_MAX;
    if (dev) {
        size_t thr = size_for_throughput(m, f->op, 1, work / n, in / n, out / n);
        dev_size = thr ? thr : cap;
        if (dev_size > cap) dev_size = cap;
        int critical;
        budget = device_budget(b->ctx, dev, f->group_bytes, &critical);
        if (critical && dev_size > 1) dev_size /= 2;
        if (budget != UINT64_MAX && budget > b->stats.mem_budget) b->stats.mem_budget = budget;
    }
    for (size_t c0 = lo; c0 < hi;) {
        /* The next routed chunk: up to dev_size items whose bytes fit the budget (at least one item; one
         * that does not fit alone is left to the router, which refuses it the device). */
        size_t c1 = c0;
        uint64_t bytes = 0;
        tdm_route_req q = {.op = f->op, .hint = b->opts.hint};
        while (c1 < hi && c1 - c0 < dev_size) {
            const tdm_batch_cost *c = &b->items[b->order[c1]].cost;
            uint64_t ib = item_bytes(c);
            if (c1 > c0 && (bytes + ib < bytes || bytes + ib > budget)) break;
            bytes += ib;
            q.work += c->work, q.h2d_bytes += c->in_bytes, q.d2h_bytes += c->out_bytes;
            c1++;
        }
        q.device_bytes = bytes + f->group_bytes;
        tdm_route_decision d;
        int rc = tdm_route(b->ctx, &q, &d);
        if (rc) return rc;
        const tdm_backend *be = d.backend;
        /* The router may name a device this family cannot use (no device path): the CPU answers. */
        if (be->kind != TDM_BACKEND_CPU && be != dev) be = b->ctx->backends[0];
        if (be->kind != TDM_BACKEND_CPU) {
            if (add_group(b, fi, c0, c1, be, &d)) return TDM_E_NOMEM;
            b->stats.device_groups++;
            if (c1 - c0 > b->stats.device_group_items) b->stats.device_group_items = c1 - c0;
        } else {
            for (size_t s = c0; s < c1; s += cpu_size) {
                if (add_group(b, fi, s, s + cpu_size < c1 ? s + cpu_size : c1, be, &d)) return TDM_E_NOMEM;
                b->stats.cpu_groups++;
            }
        }
        c0 = c1;
    }
    return TDM_OK;
}

static int plan(tdm_batch *b, int threads) {
    size_t *order = tdm_malloc(b->n * sizeof *order);
    size_t *start = tdm_calloc((size_t)b->nfam + 1, sizeof *start);
    if (!order || !start) {
        tdm_free(order);
        tdm_free(start);
        return tdm_error(TDM_E_NOMEM, "tdm_batch_run: no memory to plan %zu items", b->n);
    }
    /* Counting sort by family keeps submission order inside each family. */
    for (size_t i = 0; i < b->n; i++) start[b->items[i].family + 1]++;
    for (int f = 0; f < b->nfam; f++) start[f + 1] += start[f];
    size_t *next = tdm_malloc((size_t)b->nfam * sizeof *next);
    if (!next) {
        tdm_free(order);
        tdm_free(start);
        return tdm_error(TDM_E_NOMEM, "tdm_batch_run: no memory to plan %zu items", b->n);
    }
    memcpy(next, start, (size_t)b->nfam * sizeof *next);
    for (size_t i = 0; i < b->n; i++) order[next[b->items[i].family]++] = i;
    tdm_free(next);
    tdm_free(b->order);
    b->order = order;
    int rc = TDM_OK;
    for (int f = 0; f < b->nfam && !rc; f++)
        if (start[f + 1] > start[f]) rc = plan_family(b, f, start[f], start[f + 1], threads);
    tdm_free(start);
    if (rc == TDM_E_NOMEM) return tdm_error(TDM_E_NOMEM, "tdm_batch_run: no memory for the groups");
    return rc;
}

/* ---- running -------------------------------------------------------------------------------------------- */

/* Calls the family's run function on be for group gi, inside a profiler span. */
static int call_group(tdm_batch *b, size_t gi, const tdm_backend *be, int *status) {
    const plan_rec *p = &b->plan[gi];
    tdm_batch_group *g = &b->groups[gi];
    const tdm_batch_family *f = &b->fam[g->family];
    for (size_t i = p->lo; i < p->hi; i++) status[b->order[i]] = TDM_OK;
    tdm_prof_scope ps = {0};
    if (TANDEM_PROF_ON() && b->prof_name[g->family]) {
        ps = tdm_prof_begin(b->prof_name[g->family], TDM_PROF_CAT_OP);
        uint64_t in = 0, out = 0;
        if (be->kind != TDM_BACKEND_CPU)
            for (size_t i = p->lo; i < p->hi; i++) {
                in += b->items[b->order[i]].cost.in_bytes;
                out += b->items[b->order[i]].cost.out_bytes;
            }
        tdm_prof_annotate(be->name, (uint64_t)g->work, in, out);
    }
    int rc = f->run(f->user, be, b->order + p->lo, p->hi - p->lo, status);
    TDM_PROF_OP_END(ps, rc);
    return rc;
}

/* Gives a group-wide error to the items of group gi that still say TDM_OK. */
static void spread_error(tdm_batch *b, size_t gi, int rc, int *status) {
    for (size_t i = b->plan[gi].lo; i < b->plan[gi].hi; i++)
        if (status[b->order[i]] == TDM_OK) status[b->order[i]] = rc;
    b->groups[gi].status = rc;
}

static void run_cpu_group(tdm_batch *b, size_t gi, int *status) {
    double t0 = tdm_now_ms();
    int rc = call_group(b, gi, b->ctx->backends[0], status);
    if (rc) {
        spread_error(b, gi, rc, status);
        tdm_clear_error();
    }
    b->groups[gi].ms = tdm_now_ms() - t0;
    tdm_route_measured(b->ctx, b->groups[gi].record, b->groups[gi].ms * 1e3);
}

/* Runs device group gi; a failure is retried (out of memory) or rerun on the CPU. Returns 1 when the
 * family's remaining device groups must go to the CPU, or a negative status under TANDEM_STRICT. */
static int run_device_group(tdm_batch *b, size_t gi, int *status) {
    tdm_batch_group *g = &b->groups[gi];
    const tdm_backend *dev = b->plan[gi].backend;
    double t0 = tdm_now_ms();
    int rc = call_group(b, gi, dev, status);
    if (rc == TDM_E_DEVICE_OOM) {
        tdm_mem_monitor *mon = tdm_backend_monitor(dev);
        tdm_clear_error();
        tdm_mem_monitor_relieve(mon, (size_t)g->device_bytes);
        g->retried = 1;
        b->stats.retries++;
        rc = call_group(b, gi, dev, status);
    }
    int rest_to_cpu = 0;
    if (rc) {
        tdm_route_reason why = rc == TDM_E_DEVICE_OOM ? TDM_ROUTE_OOM_FALLBACK : TDM_ROUTE_DEVICE_ERROR;
        if (b->ctx->cfg.strict) {
            spread_error(b, gi, rc, status);
            g->ms = tdm_now_ms() - t0;
            return rc;
        }
        tdm_log(TDM_LOG_WARN, "batch: %s group of %zu items on %s failed (%s: %s): rerun on the CPU (%s)",
                tdm_op_name(g->op), g->count, dev->name, tdm_status_name(rc), tdm_last_error(),
                tdm_route_reason_name(why));
        tdm_clear_error();
        if (rc == TDM_E_DEVICE_OOM) tdm_mem_monitor_count_fallback(tdm_backend_monitor(dev));
        if (TANDEM_PROF_ON()) tdm_prof_fallback(tdm_op_name(g->op), dev->name, "cpu", tdm_route_reason_name(why));
        g->fell_back = 1;
        g->reason = why;
        g->backend = b->ctx->backends[0]->name;
        b->stats.fallbacks++;
        rc = call_group(b, gi, b->ctx->backends[0], status);
        if (rc) {
            spread_error(b, gi, rc, status);
            tdm_clear_error();
        }
        rest_to_cpu = 1;
    }
    g->ms = tdm_now_ms() - t0;
    tdm_route_measured(b->ctx, g->record, g->ms * 1e3);
    return rest_to_cpu;
}

int tdm_batch_run(tdm_batch *b, int *status) {
    if (!b) return tdm_error(TDM_E_INVAL, "tdm_batch_run: batch is NULL");
    b->ngroups = 0;
    memset(&b->stats, 0, sizeof b->stats);
    if (!b->n) return TDM_OK;
    if (!status) return tdm_error(TDM_E_INVAL, "tdm_batch_run: status is NULL for %zu items", b->n);
    double t0 = tdm_now_ms();
    int threads = b->opts.threads ? b->opts.threads : tdm_ctx_threads(b->ctx);
    if (threads < 1) threads = 1;
    int rc = plan(b, threads);
    if (rc) return rc;
    b->stats.items = b->n;
    b->stats.groups = b->ngroups;
    if (TANDEM_PROF_ON())
        for (int f = 0; f < b->nfam; f++)
            if (!b->prof_name[f]) {
                char name[64];
                snprintf(name, sizeof name, "batch.%s", tdm_op_name(b->fam[f].op));
                b->prof_name[f] = tdm_prof_intern(name);
            }
    /* Device groups first in the list of the first thread; the CPU groups shared by all. */
    size_t *dev = tdm_malloc((b->ngroups + 1) * sizeof *dev), *cpu = tdm_malloc((b->ngroups + 1) * sizeof *cpu);
    if (!dev || !cpu) {
        tdm_free(dev);
        tdm_free(cpu);
        return tdm_error(TDM_E_NOMEM, "tdm_batch_run: no memory for %zu groups", b->ngroups);
    }
    size_t nd = 0, nc = 0;
    for (size_t g = 0; g < b->ngroups; g++) {
        if (b->plan[g].backend->kind != TDM_BACKEND_CPU) dev[nd++] = g;
        else cpu[nc++] = g;
    }
    size_t team = nc + (nd ? 1 : 0);
    if ((size_t)threads > team) threads = (int)(team ? team : 1);
    atomic_size_t next_cpu = 0;
    int strict_rc = TDM_OK;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        if (omp_get_thread_num() == 0 && nd) {
            unsigned char gone[MAX_FAMILIES] = {0}; /* families whose device groups now run on the CPU */
            for (size_t k = 0; k < nd; k++) {
                size_t gi = dev[k];
                tdm_batch_group *g = &b->groups[gi];
                if (gone[g->family]) {
                    double s = tdm_now_ms();
                    g->backend = b->ctx->backends[0]->name;
                    g->reason = gone[g->family] == 2 ? TDM_ROUTE_DEVICE_ERROR : TDM_ROUTE_OOM_FALLBACK;
                    g->fell_back = 1;
                    b->stats.fallbacks++;
                    int r = call_group(b, gi, b->ctx->backends[0], status);
                    if (r) spread_error(b, gi, r, status), tdm_clear_error();
                    g->ms = tdm_now_ms() - s;
                    continue;
                }
                int r = run_device_group(b, gi, status);
                if (r < 0 && strict_rc == TDM_OK) strict_rc = r;
                if (r > 0) gone[g->family] = g->reason == TDM_ROUTE_OOM_FALLBACK ? 1 : 2;
            }
        }
        for (size_t k; (k = atomic_fetch_add(&next_cpu, 1)) < nc;) run_cpu_group(b, cpu[k], status);
    }
    tdm_free(dev);
    tdm_free(cpu);
    for (size_t g = 0; g < b->ngroups; g++)
        if (b->groups[g].fell_back && b->plan[g].backend->kind != TDM_BACKEND_CPU) {
            b->stats.device_groups--;
            b->stats.cpu_groups++;
        }
    b->stats.ms = tdm_now_ms() - t0;
    if (strict_rc) return tdm_error(strict_rc, "tdm_batch_run: a device group failed (TANDEM_STRICT: not rerun on the CPU)");
    return TDM_OK;
}
