/* prof_cuda.cu: device spans for the profiler (§6.5). A mark is a CUDA event recorded on a stream; a span
 * joins two marks. Nothing here waits for the device: events come from a pool grown in chunks (creating an
 * event does not synchronise) and spans stay pending until the core's export or stop calls the flush
 * function registered with it. The flush synchronises once: it records an anchor event E0 after all pending
 * work and waits for it, then records E0 again on the idle stream between two host clock reads (polling,
 * retried when the window is wide) to take its host time T0, and maps each event E to
 * T0 - elapsed(E, E0), so device times land on the profiler's clock (to the events' ≈0.5 µs resolution
 * plus half the window: at most 10 µs unless every try was descheduled).
 * The pool is then reused. When the pool is exhausted (65,536 events between two flushes) new marks are
 * refused and the spans they would have made are counted as dropped in the log. */
#include "cuda/cuda_internal.cuh"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define H tdm_cuda_host_fns
#define CHUNK 64
#define MAX_EVENTS 65536

typedef struct {
    int from, to;
    uint32_t name;
    int cat;
    uint64_t parent, h2d, d2h, work;
    uint64_t used, reserved; /* the device's pool when the span was issued */
} pending;

struct tdm_cuda_prof {
    pthread_mutex_t mu;
    int dev, sid;
    cudaStream_t stream;
    cudaMemPool_t pool; /* the library's pool, which the backend allocates from (or NULL) */
    const char *backend;
    cudaEvent_t *ev, anchor;
    int nev, used;
    unsigned gen;  /* flushes so far: marks of an earlier epoch are stale */
    pending *p;
    int np, cap_p;
    unsigned long long dropped;
    const char *names[16]; /* span names (string literals) with their interned ids: no lock in the core */
    uint32_t ids[16];
    int nnames;
};

static int next_sid; /* stream pseudo-thread numbers, unique in the process (atomic) */

int tdm_cuda_prof_new(int dev, cudaStream_t stream, cudaMemPool_t pool, const char *backend, tdm_cuda_prof **out) {
    *out = NULL;
    if (!H->prof_on) return TDM_OK; /* a core without the profiler table */
    tdm_cuda_prof *p = (tdm_cuda_prof *)calloc(1, sizeof *p);
    if (!p) return H->error(TDM_E_NOMEM, "cuda: no host memory for the profiler's events");
    pthread_mutex_init(&p->mu, NULL);
    p->dev = dev;
    p->stream = stream;
    p->backend = backend;
    p->sid = __atomic_fetch_add(&next_sid, 1, __ATOMIC_RELAXED);
    cudaError_t e = cudaSetDevice(dev);
    if (e == cudaSuccess) e = cudaEventCreate(&p->anchor);
    p->pool = pool; /* NULL where the device has no pools: spans then carry no pool figures */
    if (e != cudaSuccess) {
        pthread_mutex_destroy(&p->mu);
        free(p);
        return tdm_cuda_fail(e, "creating the profiler's anchor event");
    }
    int rc = H->prof_source_add(tdm_cuda_prof_flush, p);
    if (rc) {
        cudaEventDestroy(p->anchor);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return rc;
    }
    *out = p;
    return TDM_OK;
}

void tdm_cuda_prof_free(tdm_cuda_prof *p) {
    if (!p) return;
    tdm_cuda_prof_flush(p); /* spans of this stream are kept, not lost with it */
    H->prof_source_remove(tdm_cuda_prof_flush, p);
    cudaSetDevice(p->dev);
    for (int i = 0; i < p->nev; i++) cudaEventDestroy(p->ev[i]);
    cudaEventDestroy(p->anchor);
    if (p->dropped) H->log(TDM_LOG_INFO, "profiler: %llu device spans dropped on stream %d (event pool full)", p->dropped, p->sid);
    free(p->ev);
    free(p->p);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

tdm_cuda_mark tdm_cuda_prof_mark(tdm_cuda_prof *p) {
    tdm_cuda_mark m = {-1, 0};
    if (!p || !H->prof_on()) return m;
    pthread_mutex_lock(&p->mu);
    if (p->used == p->nev && p->nev < MAX_EVENTS) { /* grow the pool by a chunk; no synchronisation */
        cudaEvent_t *ev = (cudaEvent_t *)realloc(p->ev, (size_t)(p->nev + CHUNK) * sizeof *ev);
        if (ev && cudaSetDevice(p->dev) == cudaSuccess) { /* events belong to the device current at creation */
            p->ev = ev;
            int k = 0;
            while (k < CHUNK && cudaEventCreate(&ev[p->nev]) == cudaSuccess) p->nev++, k++;
            cudaGetLastError();
        }
    }
    if (p->used < p->nev && cudaEventRecord(p->ev[p->used], p->stream) == cudaSuccess) {
        m.idx = p->used++;
        m.gen = p->gen;
    } else {
        cudaGetLastError();
        p->dropped++;
    }
    pthread_mutex_unlock(&p->mu);
    return m;
}

/* Doubles the pending list (under p->mu); 0 when it cannot. */
static int grow_pending(tdm_cuda_prof *p) {
    if (p->cap_p >= MAX_EVENTS) return 0;
    int cap = p->cap_p ? p->cap_p * 2 : 64;
    pending *np = (pending *)realloc(p->p, (size_t)cap * sizeof *np);
    if (!np) return 0;
    p->p = np;
    p->cap_p = cap;
    return 1;
}

void tdm_cuda_prof_span(tdm_cuda_prof *p, tdm_cuda_mark from, tdm_cuda_mark to, const char *name, int cat,
                        uint64_t h2d, uint64_t d2h, uint64_t work) {
    if (!p || from.idx < 0 || to.idx < 0) return;
    uint64_t parent = H->prof_current(); /* the host op that issued the work, on this thread */
    /* Pool figures are host-side bookkeeping of the stream-ordered allocator: reading them does not wait. */
    unsigned long long used = 0, reserved = 0; /* the attributes are 64-bit values */
    if (p->pool && (cudaMemPoolGetAttribute(p->pool, cudaMemPoolAttrUsedMemCurrent, &used) != cudaSuccess ||
                    cudaMemPoolGetAttribute(p->pool, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess)) {
        cudaGetLastError();
        used = reserved = 0;
    }
    pthread_mutex_lock(&p->mu);
    uint32_t id = 0;
    int k = 0;
    while (k < p->nnames && p->names[k] != name) k++;
    if (k < p->nnames) id = p->ids[k];
    else if ((id = H->prof_intern(name)) && p->nnames < 16) p->names[p->nnames] = name, p->ids[p->nnames++] = id;
    if (from.gen != p->gen || to.gen != p->gen) { /* a flush ran in between: the marks were reused */
        p->dropped++;
    } else if (p->np < p->cap_p || grow_pending(p)) {
        p->p[p->np++] = pending{from.idx, to.idx, id, cat, parent, h2d, d2h, work, (uint64_t)used, (uint64_t)reserved};
    } else {
        p->dropped++;
    }
    pthread_mutex_unlock(&p->mu);
}

/* Longest host-clock window accepted for the anchor, and how many tries it gets. */
#define ANCHOR_WINDOW_NS 20000
#define ANCHOR_TRIES 8

/* The host time of the anchor, re-recorded on the idle stream: the device stamps it between a host clock
 * read before the record and one after a polling wait sees it done, and the middle of that window is its
 * time. A try in which the thread was descheduled (a window over ANCHOR_WINDOW_NS: a loaded machine once
 * shifted every device span by 8 ms when the time was read after a blocking wait) is repeated, up to
 * ANCHOR_TRIES times (the anchor holds the last try, so that one serves). *e: the first CUDA error, if any. */
static uint64_t anchor_time(tdm_cuda_prof *p, cudaError_t *e) {
    uint64_t mid = 0, width = UINT64_MAX;
    for (int t = 0; t < ANCHOR_TRIES && *e == cudaSuccess && width > ANCHOR_WINDOW_NS; t++) {
        uint64_t h1 = H->prof_now();
        *e = cudaEventRecord(p->anchor, p->stream);
        while (*e == cudaSuccess && (*e = cudaEventQuery(p->anchor)) == cudaErrorNotReady) *e = cudaSuccess;
        uint64_t h2 = H->prof_now();
        if (*e == cudaSuccess) mid = h1 + (h2 - h1) / 2, width = h2 - h1; /* the anchor now holds this try */
    }
    if (cudaPeekAtLastError() == cudaErrorNotReady) cudaGetLastError(); /* the polls' "not yet" is no error */
    return mid;
}

void tdm_cuda_prof_flush(void *user) {
    tdm_cuda_prof *p = (tdm_cuda_prof *)user;
    pthread_mutex_lock(&p->mu);
    if (!p->np && !p->used) {
        pthread_mutex_unlock(&p->mu);
        return;
    }
    cudaError_t e = cudaSetDevice(p->dev);
    if (e == cudaSuccess) e = cudaEventRecord(p->anchor, p->stream);
    if (e == cudaSuccess) e = cudaEventSynchronize(p->anchor); /* every pending event has happened */
    uint64_t t0 = anchor_time(p, &e);
    for (int i = 0; i < p->np && e == cudaSuccess; i++) {
        const pending *s = &p->p[i];
        /* Both ends measured back from the anchor: the conversion is monotone, so spans that follow each
         * other on the stream (or nest) keep that order after rounding, which a start plus a separately
         * rounded duration does not guarantee. */
        float before = 0.f, after = 0.f;
        if (cudaEventElapsedTime(&before, p->ev[s->from], p->anchor) != cudaSuccess ||
            cudaEventElapsedTime(&after, p->ev[s->to], p->anchor) != cudaSuccess) {
            cudaGetLastError();
            p->dropped++;
            continue;
        }
        uint64_t back = before > 0.f ? (uint64_t)((double)before * 1e6) : 0;
        uint64_t back_end = after > 0.f ? (uint64_t)((double)after * 1e6) : 0;
        tdm_prof_span sp;
        memset(&sp, 0, sizeof sp);
        sp.name = s->name;
        sp.cat = (uint8_t)s->cat;
        sp.stream = p->sid;
        sp.ts = t0 > back ? t0 - back : 0;
        uint64_t end = t0 > back_end ? t0 - back_end : 0;
        sp.dur = end > sp.ts ? end - sp.ts : 0;
        sp.parent = s->parent;
        sp.backend = p->backend;
        sp.work = s->work;
        sp.h2d_bytes = s->h2d;
        sp.d2h_bytes = s->d2h;
        sp.mem_used = s->used;
        sp.mem_reserved = s->reserved;
        sp.route = -1;
        H->prof_record(&sp);
    }
    if (e != cudaSuccess) {
        H->log(TDM_LOG_WARN, "profiler: device spans of stream %d lost: %s", p->sid, cudaGetErrorString(e));
        cudaGetLastError();
    }
    p->np = 0;
    p->used = 0;
    p->gen++;
    pthread_mutex_unlock(&p->mu);
}
