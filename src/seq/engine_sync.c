/* engine_sync.c: how the dual-tier engine moves its recent tier (host-only patterns) into the device
 * store: the initial load, the four sync triggers (count, interval, manual, end of training), the
 * background thread and training mode. A sync copies a batch of the recent tier under the store's read
 * lock (a memcpy: learns and CPU queries wait no longer than that), then appends it to the device under
 * the device lock alone, and publishes the new device extent only after the append succeeded, so queries
 * always see two consistent tiers. Batches are bounded so that, when the device fills up, what fits still
 * goes in (an append is all or nothing: a batch the device refuses is halved and retried). */
#define _GNU_SOURCE /* pthread_condattr_setclock under -std=c11 */
#include "seq/engine_internal.h"
#include "runtime/prof_internal.h"

#include <string.h>
#include <time.h>

/* At most this many patterns / symbols per store_append: large transfers, bounded staging memory. */
#define BATCH_PATTERNS (1u << 20)
#define BATCH_SYMBOLS (1ull << 26)

uint32_t tdm_seq_tier_pending(tdm_seq_engine *e) {
    /* dev_count first: it never exceeds a count read after it. */
    uint32_t d = atomic_load(&e->dev_count);
    pthread_rwlock_rdlock(&e->lock);
    uint32_t c = e->store->count;
    pthread_rwlock_unlock(&e->lock);
    return c - d;
}

/* Appends patterns first..first+n-1 (syms/off as store_append takes them) and publishes each part that
 * went in. On TDM_E_DEVICE_OOM the batch is halved until a single pattern does not fit. *done receives
 * how many went in. */
static int append_batch(tdm_seq_engine *e, const uint32_t *syms, const uint64_t *off, uint32_t first, uint32_t n,
                        uint32_t *done) {
    uint32_t k = 0, step = n;
    int rc = TDM_OK;
    while (k < n) {
        if (step > n - k) step = n - k;
        pthread_mutex_lock(&e->dev_mu);
        rc = e->ops->store_append(e->dstore, syms + (off[k] - off[0]), off + k, first + k, step);
        if (!rc) atomic_store(&e->dev_count, first + k + step);
        if (!rc && TANDEM_PROF_ON()) /* symbols and offsets went up */
            tdm_prof_annotate(e->dev->name, step, (off[k + step] - off[k]) * sizeof *syms + (step + 1ull) * sizeof *off, 0);
        pthread_mutex_unlock(&e->dev_mu);
        if (!rc) k += step;
        else if (rc == TDM_E_DEVICE_OOM && step > 1) step /= 2;
        else break;
    }
    *done = k;
    return k == n ? TDM_OK : rc;
}

/* Patterns of a batch starting at id lo, below hi: at least one, at most the batch bounds. */
static uint32_t batch_end(const tdm_seq_store *s, uint32_t lo, uint32_t hi) {
    uint32_t end = hi - lo > BATCH_PATTERNS ? lo + BATCH_PATTERNS : hi;
    while (end > lo + 1 && s->off[end] - s->off[lo] > BATCH_SYMBOLS) end = lo + (end - lo) / 2;
    return end;
}

/* Moves patterns dev_count..upto-1 to the device. direct: hand the store's arrays over without staging
 * (only while no other thread can touch the store). *moved counts what went in. Device errors are
 * recorded (full, failed) and logged, not returned: the patterns simply stay in the recent tier. Returns
 * TDM_E_NOMEM when staging memory is missing, else TDM_OK. *dev_rc receives the device's status. */
static int move_patterns(tdm_seq_engine *e, uint32_t upto, int direct, uint64_t *moved, int *dev_rc) {
    tdm_seq_store *s = e->store;
    uint32_t *ssyms = NULL;
    uint64_t *soff = NULL;
    size_t capsyms = 0, capoff = 0;
    int rc = TDM_OK;
    *moved = 0;
    *dev_rc = TDM_OK;
    for (uint32_t lo = atomic_load(&e->dev_count); lo < upto;) {
        const uint32_t *syms;
        const uint64_t *off;
        uint32_t hi;
        if (direct) {
            hi = batch_end(s, lo, upto);
            syms = s->arena + s->off[lo];
            off = s->off + lo;
        } else {
            /* The arena and offsets may move when a learn grows them: copy while they cannot. */
            pthread_rwlock_rdlock(&e->lock);
            hi = batch_end(s, lo, upto);
            size_t nsym = (size_t)(s->off[hi] - s->off[lo]), noff = (size_t)(hi - lo) + 1;
            if (tdm_grow((void **)&ssyms, &capsyms, nsym ? nsym : 1, sizeof *ssyms) ||
                tdm_grow((void **)&soff, &capoff, noff, sizeof *soff)) {
                pthread_rwlock_unlock(&e->lock);
                rc = tdm_error(TDM_E_NOMEM, "seq engine sync: no memory to stage %zu symbols", nsym);
                break;
            }
            memcpy(ssyms, s->arena + s->off[lo], nsym * sizeof *ssyms);
            memcpy(soff, s->off + lo, noff * sizeof *soff);
            pthread_rwlock_unlock(&e->lock);
            syms = ssyms;
            off = soff;
        }
        uint32_t done;
        int drc = append_batch(e, syms, off, lo, hi - lo, &done);
        *moved += done;
        lo += done;
        if (drc == TDM_E_DEVICE_OOM) {
            if (!atomic_exchange(&e->full, 1))
                tdm_log(TDM_LOG_INFO, "seq engine: %s is full at %u patterns; %u stay in the recent tier (searched on the CPU)",
                        e->dev->name, lo, upto - lo);
            *dev_rc = drc;
            break;
        }
        if (drc) {
            atomic_store(&e->failed, 1);
            tdm_log(TDM_LOG_WARN, "seq engine: %s: appending patterns %u..%u failed (%s: %s); the device tier is off, queries run on the CPU",
                    e->dev->name, lo, hi - 1, tdm_status_name(drc), tdm_last_error());
            *dev_rc = drc;
            break;
        }
    }
    if (!rc && !*dev_rc) atomic_store(&e->full, 0);
    tdm_free(ssyms);
    tdm_free(soff);
    return rc;
}

int tdm_seq_tier_load(tdm_seq_engine *e) {
    double t0 = tdm_now_ms();
    uint64_t moved;
    int dev_rc;
    TDM_PROF_OP_BEGIN(ps, "seq.load", TDM_PROF_CAT_SYNC);
    move_patterns(e, e->store->count, 1, &moved, &dev_rc); /* direct: no staging, cannot fail on the host */
    TDM_PROF_OP_END(ps, dev_rc);
    double ms = tdm_now_ms() - t0;
    e->st.synced_patterns += moved; /* no other thread yet */
    e->st.sync_ms += ms;
    e->st.last_sync_ms = ms;
    tdm_log(TDM_LOG_INFO, "seq engine: %llu of %u patterns loaded on %s in %.1f ms", (unsigned long long)moved,
            e->store->count, e->dev->name, ms);
    return dev_rc;
}

int tdm_seq_tier_sync(tdm_seq_engine *e, tdm_seq_sync_trigger trigger) {
    if (!e->dstore) return TDM_OK;
    pthread_mutex_lock(&e->sync_mu);
    uint32_t d = atomic_load(&e->dev_count);
    pthread_rwlock_rdlock(&e->lock);
    uint32_t upto = e->store->count;
    pthread_rwlock_unlock(&e->lock);
    uint32_t pending = upto - d;
    int go;
    switch (trigger) {
    case TDM_SEQ_SYNC_COUNT:
        go = e->opts.sync_threshold && pending >= e->opts.sync_threshold && !atomic_load(&e->training);
        break;
    case TDM_SEQ_SYNC_INTERVAL: go = pending > 0 && !atomic_load(&e->training); break;
    case TDM_SEQ_SYNC_TRAINING: go = pending > 0; break;
    default: go = 1; break;
    }
    /* Another sync may have run while this one waited for the lock: its work is done. */
    if (!go || atomic_load(&e->failed)) {
        pthread_mutex_unlock(&e->sync_mu);
        return TDM_OK;
    }
    double t0 = tdm_now_ms();
    uint64_t moved;
    TDM_PROF_OP_BEGIN(ps, "seq.sync", TDM_PROF_CAT_SYNC);
    int dev_rc, rc = move_patterns(e, upto, 0, &moved, &dev_rc);
    TDM_PROF_OP_END(ps, rc ? rc : dev_rc);
    if (dev_rc) tdm_prof_fallback("seq.sync", e->dev->name, "cpu", tdm_status_name(dev_rc)); /* patterns stay on the host */
    double ms = tdm_now_ms() - t0;
    pthread_mutex_lock(&e->st_mu);
    e->st.syncs[trigger]++;
    e->st.synced_patterns += moved;
    e->st.sync_ms += ms;
    e->st.last_sync_ms = ms;
    pthread_mutex_unlock(&e->st_mu);
    pthread_mutex_unlock(&e->sync_mu);
    if (tdm_ctx_config(e->ctx)->debug_router)
        tdm_log(TDM_LOG_WARN, "seq engine: sync (trigger %d) moved %llu patterns to %s in %.2f ms", (int)trigger,
                (unsigned long long)moved, e->dev->name, ms);
    return rc;
}

void tdm_seq_tier_after_learn(tdm_seq_engine *e, uint32_t count) {
    /* A full device would refuse every count-triggered retry: the interval, manual and training
     * triggers still try. */
    if (!e->dstore || !e->opts.sync_threshold || atomic_load(&e->training) || atomic_load(&e->failed) ||
        atomic_load(&e->full))
        return;
    if (count - atomic_load(&e->dev_count) < e->opts.sync_threshold) return;
    if (e->has_thread) {
        pthread_mutex_lock(&e->t_mu);
        e->kick = 1;
        pthread_cond_signal(&e->t_cond);
        pthread_mutex_unlock(&e->t_mu);
        return;
    }
    int rc = tdm_seq_tier_sync(e, TDM_SEQ_SYNC_COUNT);
    if (rc) tdm_log(TDM_LOG_WARN, "seq engine: sync after learn failed (%s: %s); the patterns stay in the recent tier",
                    tdm_status_name(rc), tdm_last_error());
}

static struct timespec after(double seconds) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double whole = (double)(time_t)seconds;
    ts.tv_sec += (time_t)whole;
    ts.tv_nsec += (long)((seconds - whole) * 1e9);
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    return ts;
}

static int reached(const struct timespec *deadline) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec > deadline->tv_sec || (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

/* Wakes when a learn reaches the threshold (kick) or the interval has passed; syncs unless training. */
static void *sync_main(void *arg) {
    tdm_seq_engine *e = arg;
    pthread_mutex_lock(&e->t_mu);
    struct timespec deadline = after(e->opts.sync_interval_s);
    while (!e->stop) {
        if (!e->kick) pthread_cond_timedwait(&e->t_cond, &e->t_mu, &deadline);
        if (e->stop) break;
        int due = reached(&deadline), kicked = e->kick;
        e->kick = 0;
        if (!due && !kicked) continue; /* spurious wake-up */
        pthread_mutex_unlock(&e->t_mu);
        if (!atomic_load(&e->training) && !atomic_load(&e->failed)) {
            uint32_t pending = tdm_seq_tier_pending(e), thr = e->opts.sync_threshold;
            int rc = TDM_OK;
            if (thr && pending >= thr && !atomic_load(&e->full)) rc = tdm_seq_tier_sync(e, TDM_SEQ_SYNC_COUNT);
            else if (due && pending > 0) rc = tdm_seq_tier_sync(e, TDM_SEQ_SYNC_INTERVAL);
            if (rc) tdm_log(TDM_LOG_WARN, "seq engine: background sync failed (%s: %s)", tdm_status_name(rc), tdm_last_error());
        }
        pthread_mutex_lock(&e->t_mu);
        if (due) deadline = after(e->opts.sync_interval_s);
    }
    pthread_mutex_unlock(&e->t_mu);
    return NULL;
}

void tdm_seq_tier_thread_start(tdm_seq_engine *e) {
    int err = pthread_create(&e->thread, NULL, sync_main, e);
    if (err) {
        tdm_log(TDM_LOG_WARN, "seq engine: cannot start the sync thread (error %d): syncs run inside learns", err);
        return;
    }
    e->has_thread = 1;
}

void tdm_seq_tier_thread_stop(tdm_seq_engine *e) {
    if (!e->has_thread) return;
    pthread_mutex_lock(&e->t_mu);
    e->stop = 1;
    pthread_cond_signal(&e->t_cond);
    pthread_mutex_unlock(&e->t_mu);
    pthread_join(e->thread, NULL);
    e->has_thread = 0;
}

int tdm_seq_engine_sync(tdm_seq_engine *e) {
    if (!e) return tdm_error(TDM_E_INVAL, "tdm_seq_engine_sync: engine is NULL");
    return tdm_seq_tier_sync(e, TDM_SEQ_SYNC_MANUAL);
}

int tdm_seq_engine_training(tdm_seq_engine *e, int on, int sync) {
    if (!e) return tdm_error(TDM_E_INVAL, "tdm_seq_engine_training: engine is NULL");
    atomic_store(&e->training, on ? 1 : 0);
    if (on || !sync) return TDM_OK;
    return tdm_seq_tier_sync(e, TDM_SEQ_SYNC_TRAINING);
}
