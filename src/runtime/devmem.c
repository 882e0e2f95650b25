/* devmem.c: device memory monitoring (spec section 6.3). A monitor samples a memory source (a device
 * backend, or a fake in tests), keeps a pressure level with hysteresis, accounts the library's device
 * bytes against TANDEM_MEM_LIMIT, and relieves pressure by trimming the pool and calling the eviction
 * callbacks that engines register.
 *
 * Callbacks are the delicate part (the project this replaces deadlocked at the first trigger by
 * re-taking a non-reentrant lock from its own cleanup): the list is copied under the lock and the
 * callbacks run with no lock held, so they may allocate, free and query the monitor. Only one thread
 * runs callbacks at a time; an event raised meanwhile (by a callback's own allocation, or another thread)
 * sets a pending flag that buys exactly one more pass, never a recursive call. */
#define _GNU_SOURCE
#include "runtime/router_internal.h"

#include <math.h>
#include <sched.h>
#include <string.h>

#define MAX_CALLBACKS 64
#define HYSTERESIS 0.05
#define SAMPLE_EVERY_MS 10.0
#define MAX_PASSES 4 /* the first pass plus the pending ones */

typedef struct {
    tdm_evict_fn fn;
    void *user;
    int priority, handle;
} cb_entry;

struct tdm_mem_monitor {
    tdm_mem_source src;
    double thr[3];
    uint64_t limit;
    pthread_mutex_t mu; /* guards cbs, last, level; never held while calling out */
    cb_entry cbs[MAX_CALLBACKS];
    int ncbs, next_handle;
    tdm_mem_sample last;
    double last_ms, util;
    _Atomic int level;
    atomic_int running, pending;
    _Atomic uint64_t live, peak, allocations, frees, failures, fallbacks, retries_ok, trims, passes, evicted, samples;
};

/* Set while this thread runs callbacks, so that a callback unregistering itself does not wait for itself. */
static _Thread_local int in_callbacks;

const char *tdm_pressure_name(tdm_pressure p) {
    static const char *names[] = {"LOW", "MODERATE", "HIGH", "CRITICAL"};
    return p >= TDM_PRESSURE_LOW && p <= TDM_PRESSURE_CRITICAL ? names[p] : "UNKNOWN";
}

tdm_pressure tdm_pressure_step(tdm_pressure cur, double u, const double thr[3]) {
    int up = 0;
    while (up < 3 && u >= thr[up]) up++;
    int lvl = (int)cur;
    if (up > lvl) return (tdm_pressure)up;
    /* Downwards only once u is HYSTERESIS below the threshold of the level being left. */
    while (lvl > 0 && u < thr[lvl - 1] - HYSTERESIS) lvl--;
    return (tdm_pressure)lvl;
}

int tdm_mem_monitor_new(const tdm_mem_source *src, const double thr[3], uint64_t limit, tdm_mem_monitor **out) {
    static const double defaults[3] = {0.60, 0.80, 0.90};
    if (!src || !src->sample || !out) return tdm_error(TDM_E_INVAL, "tdm_mem_monitor_new: no memory source");
    const double *t = thr ? thr : defaults;
    if (!(t[0] > 0.0 && t[0] < t[1] && t[1] < t[2] && t[2] < 1.0))
        return tdm_error(TDM_E_INVAL, "tdm_mem_monitor_new: thresholds %g,%g,%g must be strictly increasing in (0,1)",
                         t[0], t[1], t[2]);
    tdm_mem_monitor *m = tdm_calloc(1, sizeof *m);
    if (!m || pthread_mutex_init(&m->mu, NULL)) {
        tdm_free(m);
        return tdm_error(TDM_E_NOMEM, "tdm_mem_monitor_new: no memory");
    }
    m->src = *src;
    memcpy(m->thr, t, sizeof m->thr);
    m->limit = limit;
    m->next_handle = 1;
    *out = m;
    return TDM_OK;
}

void tdm_mem_monitor_free(tdm_mem_monitor *m) {
    if (!m) return;
    pthread_mutex_destroy(&m->mu);
    tdm_free(m);
}

int tdm_mem_monitor_register(tdm_mem_monitor *m, tdm_evict_fn fn, void *user, int priority, int *handle) {
    if (!m || !fn) return tdm_error(TDM_E_INVAL, "tdm_mem_monitor_register: NULL argument");
    pthread_mutex_lock(&m->mu);
    if (m->ncbs == MAX_CALLBACKS) {
        pthread_mutex_unlock(&m->mu);
        return tdm_error(TDM_E_NOMEM, "tdm_mem_monitor_register: more than %d callbacks", MAX_CALLBACKS);
    }
    int at = m->ncbs++;
    while (at > 0 && m->cbs[at - 1].priority > priority) { /* keep the list ordered by priority */
        m->cbs[at] = m->cbs[at - 1];
        at--;
    }
    m->cbs[at] = (cb_entry){fn, user, priority, m->next_handle++};
    if (handle) *handle = m->cbs[at].handle;
    pthread_mutex_unlock(&m->mu);
    return TDM_OK;
}

void tdm_mem_monitor_unregister(tdm_mem_monitor *m, int handle) {
    if (!m) return;
    pthread_mutex_lock(&m->mu);
    for (int i = 0; i < m->ncbs; i++)
        if (m->cbs[i].handle == handle) {
            memmove(&m->cbs[i], &m->cbs[i + 1], (size_t)(m->ncbs - i - 1) * sizeof *m->cbs);
            m->ncbs--;
            break;
        }
    pthread_mutex_unlock(&m->mu);
    /* A pass that copied the list before the removal may still call it: wait for that pass, so that the
     * caller may free `user` on return. Later passes copy the list without it. */
    while (!in_callbacks && atomic_load(&m->running)) sched_yield();
}

static double utilisation(const tdm_mem_sample *s) {
    if (!s->total) return 0.0;
    /* Pool-cached bytes (reserved - used) are available to the library, so they do not count. */
    double cached = s->reserved > s->used ? (double)(s->reserved - s->used) : 0.0;
    double u = ((double)s->total - (double)s->free - cached) / (double)s->total;
    return u < 0.0 ? 0.0 : u > 1.0 ? 1.0 : u;
}

/* Reads the source and updates the level; returns the level entered (or -1 when unchanged). */
static int take_sample(tdm_mem_monitor *m, double *u_out) {
    tdm_mem_sample s;
    memset(&s, 0, sizeof s);
    if (m->src.sample(m->src.user, &s)) {
        tdm_clear_error();
        return -1;
    }
    atomic_fetch_add(&m->samples, 1);
    double u = utilisation(&s);
    pthread_mutex_lock(&m->mu);
    m->last = s;
    m->util = u;
    m->last_ms = tdm_now_ms();
    tdm_pressure old = (tdm_pressure)atomic_load(&m->level), now = tdm_pressure_step(old, u, m->thr);
    atomic_store(&m->level, (int)now);
    pthread_mutex_unlock(&m->mu);
    if (u_out) *u_out = u;
    return now > old ? (int)now : -1;
}

static void trim(tdm_mem_monitor *m) {
    if (!m->src.trim) return;
    if (m->src.trim(m->src.user)) tdm_clear_error();
    atomic_fetch_add(&m->trims, 1);
}

/* Calls the callbacks (copied under the lock, called without it) asking for `wanted` bytes at lvl, in
 * priority order, until that much was freed (wanted 0: everyone is told). Re-entrant calls and calls from
 * other threads while a pass runs only set `pending`, which the running thread turns into one more pass.
 * Returns the bytes freed by this thread's passes. */
static size_t run_callbacks(tdm_mem_monitor *m, tdm_pressure lvl, size_t wanted) {
    atomic_store(&m->pending, 1);
    size_t freed = 0;
    while (atomic_load(&m->pending)) {
        if (atomic_exchange(&m->running, 1)) return freed; /* another pass is running and will see pending */
        /* A callback that raises an event at every pass would otherwise keep this thread here. */
        for (int pass = 0; pass < MAX_PASSES && atomic_exchange(&m->pending, 0); pass++) {
            cb_entry cbs[MAX_CALLBACKS];
            pthread_mutex_lock(&m->mu);
            int n = m->ncbs;
            memcpy(cbs, m->cbs, (size_t)n * sizeof *cbs);
            pthread_mutex_unlock(&m->mu);
            atomic_fetch_add(&m->passes, 1);
            size_t got = 0;
            in_callbacks = 1;
            for (int i = 0; i < n && (!wanted || got < wanted); i++)
                got += cbs[i].fn(cbs[i].user, lvl, wanted ? wanted - got : 0);
            in_callbacks = 0;
            freed += got;
            atomic_fetch_add(&m->evicted, got);
        }
        atomic_store(&m->pending, 0);
        atomic_store(&m->running, 0);
        /* An event that arrived between the last check and the release above is not lost: loop. */
    }
    return freed;
}

/* Acts on a level just entered: MODERATE notifies; HIGH and CRITICAL trim, then evict towards u below
 * the HIGH threshold minus the hysteresis (0.75 with the defaults). */
static void on_enter(tdm_mem_monitor *m, int lvl, double u) {
    if (lvl < TDM_PRESSURE_MODERATE) return;
    if (lvl == TDM_PRESSURE_MODERATE) {
        run_callbacks(m, TDM_PRESSURE_MODERATE, 0);
        return;
    }
    trim(m);
    take_sample(m, &u);
    double target = m->thr[1] - HYSTERESIS;
    pthread_mutex_lock(&m->mu);
    double total = (double)m->last.total;
    pthread_mutex_unlock(&m->mu);
    if (u > target && total > 0.0) run_callbacks(m, (tdm_pressure)lvl, (size_t)((u - target) * total) + 1);
}

int tdm_mem_monitor_sample(tdm_mem_monitor *m, tdm_pressure *level) {
    if (!m) return tdm_error(TDM_E_INVAL, "tdm_mem_monitor_sample: monitor is NULL");
    double u = 0.0;
    int entered = take_sample(m, &u);
    if (entered >= 0) on_enter(m, entered, u);
    if (level) *level = (tdm_pressure)atomic_load(&m->level);
    return TDM_OK;
}

tdm_pressure tdm_mem_monitor_level(const tdm_mem_monitor *m) {
    return m ? (tdm_pressure)atomic_load(&((tdm_mem_monitor *)m)->level) : TDM_PRESSURE_LOW;
}

size_t tdm_mem_monitor_relieve(tdm_mem_monitor *m, size_t wanted) {
    if (!m) return 0;
    trim(m);
    size_t freed = run_callbacks(m, TDM_PRESSURE_CRITICAL, wanted ? wanted : 1);
    take_sample(m, NULL);
    return freed;
}

/* Samples on large allocations (>= 1 % of the device) or when the last sample is 10 ms old; never per
 * small allocation. */
static void maybe_sample(tdm_mem_monitor *m, size_t bytes) {
    pthread_mutex_lock(&m->mu);
    int due = !m->last.total || (double)bytes >= 0.01 * (double)m->last.total || tdm_now_ms() - m->last_ms >= SAMPLE_EVERY_MS;
    pthread_mutex_unlock(&m->mu);
    if (due) tdm_mem_monitor_sample(m, NULL);
}

static int try_account(tdm_mem_monitor *m, size_t bytes) {
    uint64_t cur = atomic_load(&m->live);
    do {
        if (m->limit && (cur + bytes > m->limit || cur + bytes < cur)) return -1;
    } while (!atomic_compare_exchange_weak(&m->live, &cur, cur + bytes));
    uint64_t now = cur + bytes, pk = atomic_load(&m->peak);
    while (now > pk && !atomic_compare_exchange_weak(&m->peak, &pk, now)) {
    }
    return 0;
}

int tdm_mem_monitor_reserve(tdm_mem_monitor *m, size_t bytes) {
    if (!m) return TDM_OK;
    maybe_sample(m, bytes);
    if (try_account(m, bytes)) {
        /* Over TANDEM_MEM_LIMIT: relieve as for a real failure, then one more try. */
        tdm_mem_monitor_relieve(m, bytes);
        if (try_account(m, bytes)) {
            atomic_fetch_add(&m->failures, 1);
            return tdm_error(TDM_E_DEVICE_OOM, "device memory: %zu more bytes would pass TANDEM_MEM_LIMIT (%llu, %llu in use)",
                             bytes, (unsigned long long)m->limit, (unsigned long long)atomic_load(&m->live));
        }
        atomic_fetch_add(&m->retries_ok, 1);
    }
    atomic_fetch_add(&m->allocations, 1);
    return TDM_OK;
}

void tdm_mem_monitor_unreserve(tdm_mem_monitor *m, size_t bytes) {
    if (!m) return;
    atomic_fetch_sub(&m->live, bytes);
    atomic_fetch_add(&m->frees, 1);
}

void tdm_mem_monitor_count_failure(tdm_mem_monitor *m) {
    if (m) atomic_fetch_add(&m->failures, 1);
}

void tdm_mem_monitor_count_fallback(tdm_mem_monitor *m) {
    if (m) atomic_fetch_add(&m->fallbacks, 1);
}

void tdm_mem_monitor_stats(const tdm_mem_monitor *cm, tdm_mem_stats *out) {
    tdm_mem_monitor *m = (tdm_mem_monitor *)cm;
    memset(out, 0, sizeof *out);
    if (!m) return;
    pthread_mutex_lock(&m->mu);
    out->last = m->last;
    out->utilisation = m->util;
    pthread_mutex_unlock(&m->mu);
    out->level = (tdm_pressure)atomic_load(&m->level);
    out->limit = m->limit;
    out->live_bytes = atomic_load(&m->live), out->peak_bytes = atomic_load(&m->peak);
    out->allocations = atomic_load(&m->allocations), out->frees = atomic_load(&m->frees);
    out->failures = atomic_load(&m->failures), out->fallbacks = atomic_load(&m->fallbacks);
    out->retries_ok = atomic_load(&m->retries_ok), out->trims = atomic_load(&m->trims);
    out->callback_passes = atomic_load(&m->passes), out->evicted_bytes = atomic_load(&m->evicted);
    out->samples = atomic_load(&m->samples);
}

tdm_mem_monitor *tdm_backend_monitor(const tdm_backend *b) { return b ? b->mem : NULL; }

/* ---- monitors of the context's device backends ----------------------------------------------------------- */

static int backend_sample(void *user, tdm_mem_sample *out) {
    const tdm_backend *b = (const tdm_backend *)user;
    size_t f = 0, t = 0;
    int rc = b->mem_info(b, &f, &t);
    if (rc) return rc;
    out->free = f, out->total = t;
    if (b->pool_stats) return b->pool_stats(b, &out->reserved, &out->used);
    return TDM_OK;
}

static int backend_trim(void *user) {
    const tdm_backend *b = (const tdm_backend *)user;
    return b->trim ? b->trim(b) : TDM_OK;
}

int tdm_devmem_attach(tdm_ctx *ctx) {
    for (int i = 1; i < ctx->nbackends; i++) {
        tdm_backend *b = ctx->backends[i];
        if (b->kind == TDM_BACKEND_CPU || b->mem) continue;
        tdm_mem_source src = {backend_sample, b->trim ? backend_trim : NULL, b};
        int rc = tdm_mem_monitor_new(&src, ctx->cfg.mem_pressure, ctx->cfg.mem_limit, &ctx->router->monitors[i]);
        if (rc) return rc;
        b->mem = ctx->router->monitors[i];
        if (b->set_release_threshold && b->set_release_threshold(b, ctx->cfg.mem_release_threshold)) {
            tdm_log(TDM_LOG_WARN, "%s: release threshold not set (%s)", b->name, tdm_last_error());
            tdm_clear_error();
        }
    }
    return TDM_OK;
}
