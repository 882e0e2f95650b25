/* engine_internal.h: the dual-tier engine's state, shared by engine.c (life cycle, learning, queries) and
 * engine_sync.c (moving the recent tier to the device, the background thread, training mode); not
 * installed.
 *
 * Locks, and why there are four: `lock` (a read/write lock) guards the host store, which learns change
 * and queries and syncs read; `dev_mu` serialises calls on the device store, which is not thread-safe;
 * `sync_mu` lets one sync run at a time, so the extent it publishes only grows; `st_mu` guards the
 * counters. No thread holds `lock` while it waits for `dev_mu` or the other way round (a query reads the
 * store, lets go, then searches the device; a sync copies under the read lock, lets go, then appends),
 * so a learn never waits for device work and no lock order can deadlock. `t_mu`/`t_cond` only wake the
 * background thread. */
#ifndef TANDEM_SEQ_ENGINE_INTERNAL_H
#define TANDEM_SEQ_ENGINE_INTERNAL_H

#include "seq/seq_device.h"
#include "seq/seq_internal.h"

#include <pthread.h>
#include <stdatomic.h>

struct tdm_seq_engine {
    tdm_seq_store *store; /* owned; the authoritative copy of every pattern */
    tdm_ctx *ctx;
    tdm_seq_engine_opts opts;
    tdm_device_pref pref; /* TANDEM_SEQ_BACKEND */
    int strict;           /* TANDEM_STRICT */
    pthread_rwlock_t lock;

    /* The device tier: patterns with id < dev_count live in dstore. dev_count is published after each
     * successful append, so a query that read it never asks for patterns the device lacks. */
    const tdm_backend *dev; /* NULL: no device tier */
    const tdm_seq_dev_ops *ops;
    tdm_seq_dstore *dstore;
    pthread_mutex_t dev_mu;
    _Atomic uint32_t dev_count;
    atomic_int failed;   /* a device error turned the tier off for good */
    atomic_int full;     /* the last sync (or the load) stopped because the device was full */
    atomic_int training; /* automatic syncs held back */
    /* Bumped when memory pressure drops the device tier (engine.c, engine_evict): a query that read
     * dev_count under an older epoch must not search the new, emptier store. */
    _Atomic uint32_t epoch;
    int evict_handle;    /* registration with the device's memory monitor; 0 = none */
    pthread_mutex_t sync_mu;

    /* The background sync thread (sync_interval_s > 0 with a device tier). */
    pthread_t thread;
    int has_thread;
    pthread_mutex_t t_mu;
    pthread_cond_t t_cond; /* on CLOCK_MONOTONIC */
    int stop, kick;        /* under t_mu */

    pthread_mutex_t st_mu;
    tdm_seq_engine_stats st; /* counters only; the rest is filled in by tdm_seq_engine_stats_get */
};

/* A query's similarity table ranked for the device (engine_rows.c): rank[n * (m + 1) + c] and the value
 * of each rank, the core's own doubles. */
typedef struct {
    uint32_t *rank;
    double *value;
    uint32_t nrank; /* 0: the query goes unranked */
} tdm_seq_ranks;
/* The rank table for a threshold query with STM length m and need table need[0..n_need), when the device
 * should return that query's rows by rank: no top-k and no block summaries, a table of at most 64K
 * entries, an answer of many patterns (tdm_seq_answers_many). Otherwise rk->nrank is 0. Errors:
 * TDM_E_NOMEM. */
int tdm_seq_ranks_prep(const tdm_seq_query_opts *o, size_t m, const uint32_t *need, size_t n_need, tdm_seq_ranks *rk);
void tdm_seq_ranks_clear(tdm_seq_ranks *rk);
/* Writes a ranked device answer r (tdm_seq_dresult.ids, before the device store's next call) into out
 * as hits with rk's values: room for r->n + extra rows (tdm_seq_result_room with reuse), out->n = r->n,
 * over up to `threads` threads. Checks what the engine checks of any device answer (ids below limit, in
 * order). Errors: TDM_E_DEVICE (a bad answer; out cleared unless reused), TDM_E_NOMEM. */
int tdm_seq_place_rows(const tdm_seq_dresult *r, const tdm_seq_ranks *rk, uint32_t limit, int threads, size_t extra,
                       int reuse, tdm_seq_result *out);
/* The device memory monitor's eviction callback (engine.c). */
size_t tdm_seq_engine_evict(void *user, tdm_pressure level, size_t wanted);

/* Recent-tier size now (takes the read lock briefly). */
uint32_t tdm_seq_tier_pending(tdm_seq_engine *e);

/* The initial load: moves every pattern of the store to the device (no thread runs yet, so the arena is
 * handed to the device directly). A full device leaves the rest in the recent tier; a device error turns
 * the tier off. Returns the device's status (TDM_OK when everything or what fits went in). */
int tdm_seq_tier_load(tdm_seq_engine *e);

/* Runs a sync for trigger if its condition still holds once this sync has the sync lock (count: the
 * recent tier reached the threshold outside training; interval and training: anything pending; manual:
 * always). TDM_OK also when there is no device tier, it is off or full. Errors: TDM_E_NOMEM (staging). */
int tdm_seq_tier_sync(tdm_seq_engine *e, tdm_seq_sync_trigger trigger);

/* The count trigger after a learn that left count patterns: wakes the background thread, or syncs here
 * when there is none. Never fails (a failed inline sync is logged). */
void tdm_seq_tier_after_learn(tdm_seq_engine *e, uint32_t count);

/* Starts / stops and joins the background thread. Start failing is logged and leaves syncs inline. */
void tdm_seq_tier_thread_start(tdm_seq_engine *e);
void tdm_seq_tier_thread_stop(tdm_seq_engine *e);

#endif
