/* engine.c: the dual-tier sequence engine (seq.h): a host store that learns in microseconds, a device
 * store holding the patterns learned before the last sync, and queries that search both and merge them,
 * so that results never depend on where a pattern lives: a query gives exactly what tdm_seq_query gives
 * over every pattern learned before it started. Placement follows TANDEM_SEQ_BACKEND through
 * tdm_backend_select, plus one size rule (a small device tier is not worth a device call); a device error
 * turns the device tier off and the CPU answers instead. Syncs, the background thread and training mode
 * are in engine_sync.c. */
#define _GNU_SOURCE /* pthread_rwlockattr_setkind_np */
#include "seq/engine_internal.h"
#include "runtime/prof_internal.h"

#include "runtime/router_internal.h"

#include <math.h>
#include <string.h>

void tdm_seq_engine_opts_init(const tdm_ctx *ctx, tdm_seq_engine_opts *o) {
    *o = (tdm_seq_engine_opts){.sync_threshold = 1000, .sync_interval_s = 300.0, .gpu_min_patterns = 100000};
    if (!ctx) return;
    const tdm_config *c = tdm_ctx_config(ctx);
    o->sync_threshold = (uint32_t)c->seq_sync_threshold;
    o->sync_interval_s = (double)c->seq_sync_interval;
    o->gpu_min_patterns = (uint64_t)c->seq_gpu_min;
}

/* The device backend under the preference: the first CUDA backend that keeps sequence stores. Returns a
 * status only where TANDEM_STRICT turns the missing device into an error. */
static int choose_device(tdm_seq_engine *e) {
    if (e->pref == TDM_DEVICE_CPU) return TDM_OK;
    const tdm_backend *b;
    tdm_route_reason why;
    int rc = tdm_backend_select(e->ctx, TDM_OP_SEQ_LCS, e->pref, &b, &why);
    if (rc) return rc;
    if (b->kind == TDM_BACKEND_CUDA && b->seq) {
        e->dev = b;
        e->ops = b->seq;
        return TDM_OK;
    }
    if (e->pref == TDM_DEVICE_CUDA && e->strict)
        return tdm_error(TDM_E_UNSUPPORTED, "seq engine: TANDEM_SEQ_BACKEND=cuda but %s keeps no sequence store (TANDEM_STRICT)", b->name);
    if (e->pref == TDM_DEVICE_CUDA)
        tdm_log(TDM_LOG_INFO, "seq engine: TANDEM_SEQ_BACKEND=cuda but no device keeps sequence stores: queries run on the CPU");
    return TDM_OK;
}

/* Makes the device store and loads the existing patterns. A device that fails is logged and left off,
 * unless forced under TANDEM_STRICT. */
static int open_device(tdm_seq_engine *e) {
    int rc = e->ops->store_new(e->dev, &e->dstore);
    if (rc) {
        e->dstore = NULL;
        atomic_store(&e->failed, 1);
        tdm_log(TDM_LOG_WARN, "seq engine: %s: no device store (%s: %s); queries run on the CPU", e->dev->name,
                tdm_status_name(rc), tdm_last_error());
    } else {
        rc = tdm_seq_tier_load(e);
        if (rc == TDM_E_DEVICE_OOM) rc = TDM_OK; /* what does not fit stays in the recent tier */
    }
    if (rc && e->pref == TDM_DEVICE_CUDA && e->strict) return rc;
    return TDM_OK;
}

static int init_locks(tdm_seq_engine *e) {
    pthread_rwlockattr_t ra;
    pthread_condattr_t ca;
    if (pthread_rwlockattr_init(&ra)) return -1;
#ifdef __GLIBC__
    /* glibc prefers readers by default: a steady stream of queries would starve learns. Nothing takes
     * the read lock recursively, so preferring writers is safe. */
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
    int bad = pthread_rwlock_init(&e->lock, &ra) != 0;
    pthread_rwlockattr_destroy(&ra);
    if (bad) return -1;
    if (pthread_condattr_init(&ca)) bad = 1;
    else {
        bad |= pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0;
        bad |= !bad && pthread_cond_init(&e->t_cond, &ca) != 0;
        pthread_condattr_destroy(&ca);
    }
    if (bad) {
        pthread_rwlock_destroy(&e->lock);
        return -1;
    }
    pthread_mutex_t *mu[] = {&e->dev_mu, &e->sync_mu, &e->t_mu, &e->st_mu};
    for (int i = 0; i < 4; i++) {
        if (!pthread_mutex_init(mu[i], NULL)) continue;
        while (i--) pthread_mutex_destroy(mu[i]);
        pthread_cond_destroy(&e->t_cond);
        pthread_rwlock_destroy(&e->lock);
        return -1;
    }
    return 0;
}

int tdm_seq_engine_new(tdm_seq_store *store, const tdm_seq_engine_opts *o, tdm_seq_engine **out) {
    if (!store || !out) {
        tdm_seq_store_free(store);
        return tdm_error(TDM_E_INVAL, "tdm_seq_engine_new: store and out must not be NULL");
    }
    tdm_seq_engine_opts opts;
    if (o) opts = *o;
    else tdm_seq_engine_opts_init(store->ctx, &opts);
    if (!(opts.sync_interval_s >= 0.0 && opts.sync_interval_s <= 1e9)) {
        tdm_seq_store_free(store);
        return tdm_error(TDM_E_INVAL, "tdm_seq_engine_new: sync_interval_s %g outside [0, 1e9]", opts.sync_interval_s);
    }
    tdm_seq_engine *e = tdm_calloc(1, sizeof *e);
    if (!e || init_locks(e)) {
        tdm_free(e);
        tdm_seq_store_free(store);
        return tdm_error(TDM_E_NOMEM, "tdm_seq_engine_new: no memory for the engine");
    }
    e->store = store;
    e->ctx = store->ctx;
    e->opts = opts;
    e->pref = (tdm_device_pref)tdm_ctx_config(e->ctx)->seq_backend;
    e->strict = tdm_ctx_config(e->ctx)->strict;
    int rc = choose_device(e);
    if (!rc && e->dev) rc = open_device(e);
    if (rc) {
        tdm_seq_engine_free(e);
        return rc;
    }
    if (e->dstore && !atomic_load(&e->failed) && opts.sync_interval_s > 0.0) tdm_seq_tier_thread_start(e);
    /* The device tier is a copy of the host store: under memory pressure it is the first thing to give. */
    if (e->dstore && e->dev->mem &&
        tdm_mem_monitor_register(e->dev->mem, tdm_seq_engine_evict, e, 10, &e->evict_handle)) {
        tdm_log(TDM_LOG_WARN, "seq engine: no eviction callback (%s)", tdm_last_error());
        e->evict_handle = 0;
    }
    *out = e;
    return TDM_OK;
}

void tdm_seq_engine_free(tdm_seq_engine *e) {
    if (!e) return;
    if (e->evict_handle) tdm_mem_monitor_unregister(e->dev->mem, e->evict_handle);
    tdm_seq_tier_thread_stop(e);
    if (e->dstore) e->ops->store_free(e->dstore);
    tdm_seq_store_free(e->store);
    pthread_mutex_destroy(&e->st_mu);
    pthread_mutex_destroy(&e->t_mu);
    pthread_mutex_destroy(&e->sync_mu);
    pthread_mutex_destroy(&e->dev_mu);
    pthread_cond_destroy(&e->t_cond);
    pthread_rwlock_destroy(&e->lock);
    tdm_free(e);
}

const tdm_seq_store *tdm_seq_engine_store(const tdm_seq_engine *e) { return e ? e->store : NULL; }

int tdm_seq_engine_encode(tdm_seq_engine *e, const char *const *syms, const size_t *lens, size_t n, tdm_seq_stm *out) {
    if (!e) return tdm_error(TDM_E_INVAL, "tdm_seq_engine_encode: engine is NULL");
    pthread_rwlock_rdlock(&e->lock);
    int rc = tdm_seq_stm_encode(e->store->vocab, syms, lens, n, out);
    pthread_rwlock_unlock(&e->lock);
    return rc;
}

/* What both learns do once the append (rc) is done and the write lock released: report the id, then run
 * the count trigger with the store's size after the append. */
static int learned(tdm_seq_engine *e, int rc, uint32_t got, uint32_t count, uint32_t *id) {
    if (rc) return rc;
    if (id) *id = got;
    tdm_seq_tier_after_learn(e, count);
    return TDM_OK;
}

int tdm_seq_engine_learn(tdm_seq_engine *e, const uint32_t *syms, size_t n, uint32_t *id) {
    if (!e) return tdm_error(TDM_E_INVAL, "tdm_seq_engine_learn: engine is NULL");
    TDM_PROF_OP_BEGIN(ps, "seq.learn", TDM_PROF_CAT_OP);
    if (ps.id) tdm_prof_annotate("cpu", n, 0, 0);
    uint32_t got;
    pthread_rwlock_wrlock(&e->lock);
    int rc = tdm_seq_store_add(e->store, syms, n, &got);
    uint32_t count = e->store->count;
    pthread_rwlock_unlock(&e->lock);
    rc = learned(e, rc, got, count, id); /* an inline sync it triggers nests inside */
    TDM_PROF_OP_END(ps, rc);
    return rc;
}

int tdm_seq_engine_learn_strings(tdm_seq_engine *e, const char *const *syms, const size_t *lens, size_t n, uint32_t *id) {
    if (!e) return tdm_error(TDM_E_INVAL, "tdm_seq_engine_learn_strings: engine is NULL");
    TDM_PROF_OP_BEGIN(ps, "seq.learn", TDM_PROF_CAT_OP);
    if (ps.id) tdm_prof_annotate("cpu", n, 0, 0);
    uint32_t got;
    pthread_rwlock_wrlock(&e->lock);
    int rc = tdm_seq_store_add_strings(e->store, syms, lens, n, &got);
    uint32_t count = e->store->count;
    pthread_rwlock_unlock(&e->lock);
    rc = learned(e, rc, got, count, id);
    TDM_PROF_OP_END(ps, rc);
    return rc;
}

/* ---- queries ------------------------------------------------------------------------------------------ */

typedef struct {
    int device;           /* 1: the device tier is searched on the device */
    tdm_route_reason why;
    uint64_t record;      /* the router's decision record (0: none), for the measured time */
} placement;

static tdm_op metric_op(tdm_seq_metric m) {
    return m == TDM_SEQ_DIFFLIB ? TDM_OP_SEQ_DIFFLIB : m == TDM_SEQ_CHAR ? TDM_OP_SEQ_CHAR : TDM_OP_SEQ_LCS;
}

/* Where a query with this metric runs when the device tier holds dev_count patterns (caller holds the
 * read lock). TANDEM_SEQ_BACKEND=cpu|cuda forces through tdm_backend_select; auto asks the router with
 * the device tier's work (its symbols: the recent tier is searched on the CPU either way, so its cost is
 * the same on both sides) and its residency (the tier lives on the device). Without a trusted model the
 * router answers RESIDENCY_ONLY, and the engine then keeps TANDEM_SEQ_GPU_MIN as a floor: a few patterns
 * are not worth a device call. The engine adds whether its device tier is usable. */
static int place(tdm_seq_engine *e, tdm_seq_metric metric, uint32_t dev_count, placement *p) {
    const tdm_backend *b;
    int rc;
    p->record = 0;
    if (e->pref != TDM_DEVICE_AUTO) {
        rc = tdm_backend_select(e->ctx, metric_op(metric), e->pref, &b, &p->why);
    } else {
        tdm_seq_work_args wa = {.patterns = dev_count, .symbols = e->store->off[dev_count] - e->store->off[0]};
        tdm_route_req q = {.op = metric_op(metric), .work = tdm_seq_query_work(&wa), .resident = 1};
        tdm_route_decision d;
        rc = tdm_route(e->ctx, &q, &d);
        b = d.backend, p->why = d.reason, p->record = d.record;
    }
    if (rc) return rc;
    p->device = 0;
    if (b->kind != TDM_BACKEND_CUDA) return TDM_OK;
    if (b != e->dev || (!e->dstore && !atomic_load(&e->failed))) {
        if (e->pref == TDM_DEVICE_CUDA && e->strict)
            return tdm_error(TDM_E_UNSUPPORTED, "seq engine: %s forced but %s keeps no sequence store (TANDEM_STRICT)",
                             tdm_op_name(metric_op(metric)), b->name);
        p->why = e->pref == TDM_DEVICE_CUDA ? TDM_ROUTE_FORCED_GPU_UNAVAILABLE : TDM_ROUTE_NO_GPU_IMPL;
    } else if (atomic_load(&e->failed)) {
        if (e->pref == TDM_DEVICE_CUDA && e->strict)
            return tdm_error(TDM_E_DEVICE, "seq engine: the device tier on %s is off after a device error (TANDEM_STRICT)", b->name);
        p->why = TDM_ROUTE_DEVICE_ERROR;
    } else if (e->pref == TDM_DEVICE_CUDA || p->why != TDM_ROUTE_RESIDENCY_ONLY || dev_count >= e->opts.gpu_min_patterns) {
        p->device = 1;
    } else {
        p->why = TDM_ROUTE_SMALL_INPUT;
    }
    /* The engine refined the router's choice (size rule, missing or failed device tier): on the record. */
    if (!p->device && TANDEM_PROF_ON())
        tdm_prof_route(tdm_op_name(metric_op(metric)), "cpu", tdm_route_reason_name(p->why), 0, 0);
    if (!p->device && tdm_ctx_config(e->ctx)->debug_router)
        tdm_log(TDM_LOG_WARN, "router: %s -> cpu (%s; device tier %u patterns, TANDEM_SEQ_GPU_MIN %llu)",
                tdm_op_name(metric_op(metric)), tdm_route_reason_name(p->why), dev_count,
                (unsigned long long)e->opts.gpu_min_patterns);
    return TDM_OK;
}

static inline int better(tdm_seq_hit a, tdm_seq_hit b) {
    return a.similarity > b.similarity || (a.similarity == b.similarity && a.id < b.id);
}

/* Merges two ordered hit lists over disjoint ids, keeping the first k (0: all), with their block
 * summaries when both carry them (ab and bb not NULL). Merges b into a (room for acap rows, ab too),
 * which it takes over with ab (from tdm_malloc; freed on error): a large device result is kept where it
 * landed instead of being copied (3M rows are 48 MB, and a fresh array's first touch cost as much as the
 * copy). The merge runs from the back, so no element of a is overwritten before it is read. *cap: the
 * rows the merged arrays have room for. */
static int merge(tdm_seq_hit *a, tdm_seq_hit_blocks *ab, size_t na, size_t acap, const tdm_seq_hit *b,
                 const tdm_seq_hit_blocks *bb, size_t nb, uint32_t k, tdm_seq_hit **out, tdm_seq_hit_blocks **outb,
                 size_t *n, size_t *cap) {
    size_t all = na + nb, total = k && all > k ? k : all;
    int with_blocks = ab && bb;
    tdm_seq_hit *h = a;
    tdm_seq_hit_blocks *hb = ab;
    if (!a || acap < all) {
        h = tdm_realloc(a, (all ? all : 1) * sizeof *h);
        if (!h) {
            tdm_free(a), tdm_free(ab);
            return tdm_error(TDM_E_NOMEM, "tdm_seq_engine_query: no memory for %zu hits", all);
        }
        acap = all;
    }
    if (with_blocks && nb) {
        hb = tdm_realloc(ab, (acap ? acap : 1) * sizeof *hb);
        if (!hb) {
            tdm_free(h), tdm_free(ab);
            return tdm_error(TDM_E_NOMEM, "tdm_seq_engine_query: no memory for %zu block summaries", all);
        }
    }
    size_t i = na, j = nb;
    for (size_t x = all; j > 0; x--) {
        if (i > 0 && !better(h[i - 1], b[j - 1])) {
            --i;
            h[x - 1] = h[i];
            if (with_blocks) hb[x - 1] = hb[i];
        } else {
            --j;
            h[x - 1] = b[j];
            if (with_blocks) hb[x - 1] = bb[j];
        }
    }
    if (!with_blocks) tdm_free(hb), hb = NULL;
    *out = h;
    *outb = hb;
    *n = total;
    *cap = acap;
    return TDM_OK;
}

/* A device result the core can trust: ordered, inside the tier, no more than asked for. */
static int check_dresult(const tdm_seq_dresult *r, uint32_t limit, uint32_t top_k) {
    if (r->n && !r->hits) return tdm_error(TDM_E_DEVICE, "device query: %zu hits but no array", r->n);
    if (r->blocks && !r->hits) return tdm_error(TDM_E_DEVICE, "device query: block summaries but no hits");
    if (top_k && r->n > top_k) return tdm_error(TDM_E_DEVICE, "device query: %zu hits for top %u", r->n, top_k);
    /* Millions of rows at low thresholds: the check is spread over the threads (8.7 ms for 3.2M rows on
     * one core of the developer machine), and reports the first bad row. */
    size_t bad = r->n;
#pragma omp parallel for reduction(min : bad) if (r->n >= (1u << 16))
    for (size_t i = 0; i < r->n; i++)
        if (r->hits[i].id >= limit || (i && !better(r->hits[i - 1], r->hits[i]))) bad = i < bad ? i : bad;
    if (bad < r->n)
        return tdm_error(TDM_E_DEVICE, "device query: hit %zu (id %u) out of order or outside the %u-pattern tier", bad,
                         r->hits[bad].id, limit);
    return TDM_OK;
}

/* Searches the device tier (ids < limit) as it was at `epoch`. *fresh: the error came from this call (not
 * an earlier one). With ranks (rk->nrank), a device that answers by rank has its rows written into out
 * (room for `extra` more: the recent tier's) before the device store is let go: then *placed is 1 and
 * r->n counts them, r->hits stays NULL. */
static int query_device(tdm_seq_engine *e, const tdm_seq_stm *stm, const tdm_seq_query_opts *o, uint32_t limit,
                        uint32_t epoch, const uint32_t *need, size_t n_need, const tdm_seq_ranks *rk, size_t extra,
                        tdm_seq_result *out, tdm_seq_dresult *r, int *fresh, int *placed) {
    tdm_seq_dquery q = {.metric = (int)o->metric, .autojunk = o->autojunk, .stm_first = o->stm_first,
                        .stm = stm->ids, .m = stm->n, .limit = limit, .top_k = o->top_k, .need = need,
                        .n_need = n_need, .no_prefilter = o->no_prefilter, .blocks = o->blocks,
                        .rank = rk->nrank ? rk->rank : NULL, .nrank = rk->nrank};
    memset(r, 0, sizeof *r);
    *fresh = 0;
    *placed = 0;
    pthread_mutex_lock(&e->dev_mu);
    int rc = atomic_load(&e->failed) ? tdm_error(TDM_E_DEVICE, "the device tier is off after an earlier device error")
             : atomic_load(&e->epoch) != epoch
                 ? tdm_error(TDM_E_DEVICE_OOM, "the device tier was dropped under memory pressure during the query")
                 : e->ops->query(e->dstore, &q, r);
    if (!rc && r->ids) {
        if (!rk->nrank || r->hits || r->blocks) {
            rc = tdm_error(TDM_E_DEVICE, "device query: rows by rank that were not asked for");
        } else {
            double tp = tdm_now_ms();
            int threads = o->threads ? o->threads : tdm_ctx_threads(e->ctx);
            rc = tdm_seq_place_rows(r, rk, limit, threads, extra, o->reuse, out);
            r->copy_ms += tdm_now_ms() - tp;
            *placed = !rc;
        }
        r->ids = NULL, r->rank_start = NULL; /* borrowed from the device store, which is let go below */
    } else if (!rc) {
        rc = check_dresult(r, limit, o->top_k);
    }
    /* The bytes this query moved (STM and need table up, rows down); the device's pool figures come with
     * the module's device spans. */
    if (TANDEM_PROF_ON())
        tdm_prof_annotate(e->dev->name, limit, stm->n * sizeof *stm->ids + n_need * sizeof *need,
                          rc ? 0 : r->n * (sizeof *r->hits + (r->blocks ? sizeof *r->blocks : 0)));
    /* Out of device memory (after the monitor's trim, eviction and retry) is not a broken device: this
     * query falls back to the CPU and the tier stays on for the next. */
    if (rc && rc != TDM_E_DEVICE_OOM && !atomic_exchange(&e->failed, 1)) *fresh = 1;
    pthread_mutex_unlock(&e->dev_mu);
    if (rc) {
        tdm_free(r->hits);
        tdm_free(r->blocks);
        r->hits = NULL;
        r->blocks = NULL;
        r->n = 0;
    }
    return rc;
}

static void count_query(tdm_seq_engine *e, int device, int fallback, uint64_t n) {
    pthread_mutex_lock(&e->st_mu);
    if (device) e->st.queries_device += n;
    else e->st.queries_cpu += n;
    if (fallback) e->st.fallbacks += n;
    pthread_mutex_unlock(&e->st_mu);
}

/* A query answered on the CPU alone over count patterns: the host searched all of them. */
static void cpu_stats(tdm_seq_query_stats *st, tdm_route_reason why, uint32_t count) {
    st->route_reason = (int)why;
    st->device_patterns = 0;
    st->recent_patterns = count;
}

/* Joins the older tier's result (device, or the CPU after a device error; ha and hb, with room for acap
 * rows, are taken over, as by merge) with the recent tier's; the summaries come along when both sides
 * have them. With reuse, the answer goes into out's own arrays when they have room (a copy of na rows),
 * and out's arrays that do not carry it are freed. */
static int join(tdm_seq_hit *ha, tdm_seq_hit_blocks *hb, size_t na, size_t acap, const tdm_seq_query_stats *sa,
                const tdm_seq_result *recent, uint32_t top_k, int reuse, tdm_seq_result *out) {
    if (reuse && out->hits && out->hits != ha && out->cap >= na + recent->n &&
        (!hb || out->blocks || (out->blocks = tdm_malloc((out->cap ? out->cap : 1) * sizeof *out->blocks)))) {
        if (na) memcpy(out->hits, ha, na * sizeof *ha);
        tdm_free(ha);
        ha = out->hits, acap = out->cap;
        if (hb) {
            if (na) memcpy(out->blocks, hb, na * sizeof *hb);
            tdm_free(hb);
            hb = out->blocks;
        }
    }
    tdm_seq_hit *h = NULL, *old_h = reuse ? out->hits : NULL;
    tdm_seq_hit_blocks *b = NULL, *old_b = reuse ? out->blocks : NULL;
    size_t n = 0, cap = 0;
    if (old_h != ha) tdm_free(old_h);
    if (old_b != hb) tdm_free(old_b);
    if (reuse) out->hits = NULL, out->blocks = NULL, out->cap = 0; /* out holds nothing while merge may fail */
    int rc = merge(ha, hb, na, acap, recent->hits, recent->blocks, recent->n, top_k, &h, &b, &n, &cap);
    if (rc) return rc;
    const tdm_seq_query_stats *sb = &recent->stats;
    tdm_seq_query_stats st = *sa;
    st.patterns = sa->patterns + sb->patterns;
    st.length_pruned += sb->length_pruned;
    st.index_pruned += sb->index_pruned;
    st.multiset_pruned += sb->multiset_pruned;
    st.lcs_pruned += sb->lcs_pruned;
    st.scored += sb->scored;
    st.returned = n;
    st.filter_ms += sb->filter_ms;
    st.score_ms += sb->score_ms;
    st.select_ms += sb->select_ms;
    st.blocks_ms += sb->blocks_ms;
    out->hits = h;
    out->blocks = b;
    out->n = n;
    out->cap = cap;
    out->stats = st;
    return TDM_OK;
}

static int query_tiers(tdm_seq_engine *e, const tdm_seq_stm *stm, const tdm_seq_query_opts *o, tdm_seq_result *out) {
    tdm_seq_store *s = e->store;
    double t0 = tdm_now_ms();
    tdm_seq_result recent = {0};
    uint32_t *need = NULL;
    size_t n_need = 0;
    placement pl;
    /* One snapshot of the store: the tiers' extents, the recent tier's result and the need table all
     * describe the same patterns, whatever learns and syncs do next. */
    pthread_rwlock_rdlock(&e->lock);
    uint32_t d = atomic_load(&e->dev_count), c = s->count, epoch = atomic_load(&e->epoch);
    int rc = tdm_seq_query_check(s, stm, o);
    if (!rc) rc = place(e, o->metric, d, &pl);
    if (!rc && !pl.device) {
        rc = tdm_seq_query_range(s, stm, o, 0, c, out);
        pthread_rwlock_unlock(&e->lock);
        if (rc) return rc;
        cpu_stats(&out->stats, pl.why, c);
        count_query(e, 0, pl.why == TDM_ROUTE_DEVICE_ERROR, 1);
        tdm_route_measured(e->ctx, pl.record, (tdm_now_ms() - t0) * 1e3);
        return TDM_OK;
    }
    tdm_seq_query_opts ro = {0};
    if (!rc) ro = *o, ro.reuse = 0; /* the recent tier's answer is a fresh one, merged into out below */
    if (!rc) rc = tdm_seq_query_range(s, stm, &ro, d, c, &recent);
    if (!rc && !o->top_k && tdm_seq_need_table(s, stm->n, o, &need, &n_need))
        rc = tdm_error(TDM_E_NOMEM, "tdm_seq_engine_query: no memory for the need table");
    pthread_rwlock_unlock(&e->lock);
    tdm_seq_ranks rk = {0};
    if (!rc) rc = tdm_seq_ranks_prep(o, stm->n, need, n_need, &rk);
    if (rc) {
        tdm_free(need);
        tdm_seq_result_clear(&recent);
        return rc;
    }
    tdm_seq_dresult dr;
    int fresh, placed;
    rc = query_device(e, stm, o, d, epoch, need, n_need, &rk, recent.n, out, &dr, &fresh, &placed);
    tdm_free(need);
    tdm_seq_ranks_clear(&rk);
    double blocks_ms = 0.0;
    if (!rc && o->blocks && !dr.blocks) {
        /* a device that leaves the summaries out: the host computes them for the device tier's hits
         * (ids < d, which learns never move) */
        double tb = tdm_now_ms();
        if (!(dr.blocks = tdm_malloc((dr.n ? dr.n : 1) * sizeof *dr.blocks))) {
            rc = tdm_error(TDM_E_NOMEM, "tdm_seq_engine_query: no memory for %zu block summaries", dr.n);
        } else {
            pthread_rwlock_rdlock(&e->lock);
            rc = tdm_seq_hits_blocks(s, stm, o->autojunk, dr.hits, dr.n, o->threads, dr.blocks);
            pthread_rwlock_unlock(&e->lock);
        }
        blocks_ms = tdm_now_ms() - tb;
        if (rc) {
            tdm_free(dr.hits), tdm_free(dr.blocks);
            tdm_seq_result_clear(&recent);
            return rc;
        }
    }
    if (!rc) {
        tdm_seq_query_stats ds = {.patterns = d, .length_pruned = dr.length_pruned, .lcs_pruned = dr.lcs_pruned,
                                  .scored = dr.scored, .filter_ms = dr.filter_ms, .score_ms = dr.score_ms,
                                  .select_ms = dr.select_ms, .copy_ms = dr.copy_ms, .device_patterns = d,
                                  .recent_patterns = c - d, .blocks_ms = blocks_ms, .backend = e->dev->name,
                                  .route_reason = (int)pl.why};
        /* Rows placed by rank are in out's array already, with room for the recent tier's. */
        rc = placed ? join(out->hits, NULL, dr.n, out->cap, &ds, &recent, o->top_k, 1, out)
                    : join(dr.hits, dr.blocks, dr.n, dr.n, &ds, &recent, o->top_k, o->reuse, out);
        tdm_seq_result_clear(&recent);
        if (!rc) count_query(e, 1, 0, 1);
        if (!rc) tdm_route_measured(e->ctx, pl.record, (tdm_now_ms() - t0) * 1e3);
        return rc;
    }
    /* The device failed: the CPU answers, over the older tier too, unless the device was forced strictly. */
    char msg[512];
    snprintf(msg, sizeof msg, "%s", tdm_last_error());
    int oom = rc == TDM_E_DEVICE_OOM;
    if (fresh)
        tdm_log(TDM_LOG_WARN, "seq engine: %s: query failed (%s: %s); the device tier is off, queries run on the CPU",
                e->dev->name, tdm_status_name(rc), msg);
    if (oom) {
        tdm_mem_monitor_count_fallback(tdm_backend_monitor(e->dev));
        tdm_log(TDM_LOG_WARN, "seq engine: %s: out of device memory for a query (%s); the CPU answers (OOM_FALLBACK)",
                e->dev->name, msg);
    }
    count_query(e, 0, 1, 1);
    tdm_prof_fallback("seq.query", e->dev->name, "cpu", tdm_status_name(rc));
    if (e->pref == TDM_DEVICE_CUDA && e->strict) {
        tdm_seq_result_clear(&recent);
        return tdm_error(rc, "%s: %s (TANDEM_STRICT)", e->dev->name, msg);
    }
    tdm_seq_result older;
    pthread_rwlock_rdlock(&e->lock);
    rc = tdm_seq_query_range(s, stm, &ro, 0, d, &older);
    pthread_rwlock_unlock(&e->lock);
    if (!rc) {
        rc = join(older.hits, older.blocks, older.n, older.cap, &older.stats, &recent, o->top_k, o->reuse, out);
        older.hits = NULL;
        older.blocks = NULL;
        tdm_seq_result_clear(&older);
    }
    tdm_seq_result_clear(&recent);
    if (!rc) cpu_stats(&out->stats, oom ? TDM_ROUTE_OOM_FALLBACK : TDM_ROUTE_DEVICE_ERROR, c);
    return rc;
}

/* One engine query, profiled as "seq.query": the backend that answered is the one in its stats. */
static int query_one(tdm_seq_engine *e, const tdm_seq_stm *stm, const tdm_seq_query_opts *o, tdm_seq_result *out) {
    TDM_PROF_OP_BEGIN(ps, "seq.query", TDM_PROF_CAT_OP);
    int rc = query_tiers(e, stm, o, out);
    if (ps.id) tdm_prof_annotate(!rc && out->stats.device_patterns ? e->dev->name : "cpu", 0, 0, 0);
    TDM_PROF_OP_END(ps, rc);
    return rc;
}

int tdm_seq_engine_query(tdm_seq_engine *e, const tdm_seq_stm *stm, const tdm_seq_query_opts *opts, tdm_seq_result *out) {
    if (!e || !out) return tdm_error(TDM_E_INVAL, "tdm_seq_engine_query: NULL argument");
    return query_one(e, stm, opts, out);
}

int tdm_seq_engine_query_batch(tdm_seq_engine *e, const tdm_seq_stm *stms, size_t n, const tdm_seq_query_opts *o,
                               tdm_seq_result *out) {
    if (!e || !o || !out || (n && !stms)) return tdm_error(TDM_E_INVAL, "tdm_seq_engine_query_batch: NULL argument");
    if (!o->reuse) memset(out, 0, n * sizeof *out);
    if (!n) return TDM_OK;
    /* On the CPU the whole batch shares one snapshot and spreads over the threads as tdm_seq_query_batch
     * does; device queries run one after another (the device store serves one call at a time). */
    pthread_rwlock_rdlock(&e->lock);
    uint32_t c = e->store->count;
    placement pl;
    int rc = place(e, o->metric, atomic_load(&e->dev_count), &pl);
    if (!rc && !pl.device) {
        rc = tdm_seq_query_batch(e->store, stms, n, o, out);
        pthread_rwlock_unlock(&e->lock);
        if (rc) return rc;
        for (size_t i = 0; i < n; i++) cpu_stats(&out[i].stats, pl.why, c);
        count_query(e, 0, pl.why == TDM_ROUTE_DEVICE_ERROR, n);
        return TDM_OK;
    }
    pthread_rwlock_unlock(&e->lock);
    if (rc) return rc;
    for (size_t i = 0; i < n && !rc; i++) {
        rc = query_one(e, &stms[i], o, &out[i]);
        if (rc) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", tdm_last_error());
            tdm_error(rc, "query %zu: %s", i, msg);
        }
    }
    if (rc)
        for (size_t i = 0; i < n; i++) tdm_seq_result_clear(&out[i]);
    return rc;
}

size_t tdm_seq_engine_evict(void *user, tdm_pressure level, size_t wanted) {
    tdm_seq_engine *e = (tdm_seq_engine *)user;
    if (level < TDM_PRESSURE_HIGH || !wanted) return 0;
    /* This may run inside one of this engine's own device allocations (a sync holding sync_mu and dev_mu,
     * a query holding dev_mu, a placement holding the read lock): locks are only tried, and a busy engine
     * frees nothing this time. With all three held nothing reads or changes the tier. */
    if (pthread_mutex_trylock(&e->sync_mu)) return 0;
    if (pthread_rwlock_trywrlock(&e->lock)) {
        pthread_mutex_unlock(&e->sync_mu);
        return 0;
    }
    if (pthread_mutex_trylock(&e->dev_mu)) {
        pthread_rwlock_unlock(&e->lock);
        pthread_mutex_unlock(&e->sync_mu);
        return 0;
    }
    size_t freed = 0;
    tdm_seq_dstore *fresh = NULL;
    if (e->dstore && !atomic_load(&e->failed) && atomic_load(&e->dev_count) > 0 && !e->ops->store_new(e->dev, &fresh)) {
        tdm_seq_dstore_info info = {0};
        e->ops->store_info(e->dstore, &info);
        e->ops->store_free(e->dstore);
        e->dstore = fresh;
        atomic_fetch_add(&e->epoch, 1);
        atomic_store(&e->dev_count, 0);
        atomic_store(&e->full, 1); /* the count trigger waits, as for a full device */
        freed = (size_t)info.reserved_bytes;
        pthread_mutex_lock(&e->st_mu);
        e->st.evictions++;
        pthread_mutex_unlock(&e->st_mu);
    }
    tdm_clear_error();
    pthread_mutex_unlock(&e->dev_mu);
    pthread_rwlock_unlock(&e->lock);
    pthread_mutex_unlock(&e->sync_mu);
    if (freed)
        tdm_log(TDM_LOG_WARN, "seq engine: %s: device tier dropped under %s memory pressure (%zu bytes); the CPU answers until the next sync",
                e->dev->name, tdm_pressure_name(level), freed);
    return freed;
}

void tdm_seq_engine_stats_get(tdm_seq_engine *e, tdm_seq_engine_stats *st) {
    memset(st, 0, sizeof *st);
    if (!e) return;
    pthread_mutex_lock(&e->st_mu);
    *st = e->st;
    pthread_mutex_unlock(&e->st_mu);
    uint32_t d = atomic_load(&e->dev_count); /* before the count: never above it */
    pthread_rwlock_rdlock(&e->lock);
    st->patterns = e->store->count;
    pthread_rwlock_unlock(&e->lock);
    st->device_patterns = d;
    st->recent_patterns = st->patterns - d;
    st->device_full = atomic_load(&e->full);
    st->device_failed = atomic_load(&e->failed);
    st->training = atomic_load(&e->training);
    st->device = e->dev ? e->dev->name : NULL;
    if (e->dstore) {
        tdm_seq_dstore_info info = {0};
        pthread_mutex_lock(&e->dev_mu);
        e->ops->store_info(e->dstore, &info);
        pthread_mutex_unlock(&e->dev_mu);
        st->device_bytes = info.bytes;
        st->device_reserved_bytes = info.reserved_bytes;
    }
}
