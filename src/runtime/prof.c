/* prof.c: the profiler's recording side (prof.h): the session, name interning, per-thread rings and scopes.
 *
 * Why the rings look like this: the session preallocates `capacity` records as blocks of 64. A thread's
 * ring is a list of blocks it took from that pool, one lock-free fetch-add per block; once the pool is
 * spent, a thread that needs room recycles its own oldest block (counting its records as dropped), so the
 * rings together never hold more than `capacity` records and each thread keeps its newest ones. Each ring
 * has a spin flag that only its writer and a snapshot ever take, so threads never wait for one another
 * while recording. Scope ids are (ring number << 40) + a per-ring counter: unique without a shared counter.
 *
 * The profiler's own memory (pool, rings, names) comes from plain malloc, not the accounted allocator: an
 * observer must not change what it observes, i.e. the library's host-memory figures and leak checks
 * (tdm_alloc_get_stats) are the same with profiling on and off. */
#define _GNU_SOURCE /* gettid */
#include "runtime/prof_internal.h"
#include "core/internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef TANDEM_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

#define BLOCK 64u
#define MAX_DEPTH 64
#define MAX_SOURCES 16

atomic_int tdm_prof_enabled_flag;

typedef struct ring {
    atomic_flag busy;
    uint32_t tid, index;
    uint32_t *blocks; /* pool block numbers, circular from `first` */
    uint32_t nb, first, fill;
    prof_rec *cur;    /* the newest block (fill records used), so the hot path divides nothing */
    uint64_t recorded, dropped, next_id;
    struct ring *next;
} ring;

static struct {
    pthread_mutex_t mu; /* session life, ring list, names, sources, device info */
    prof_rec *pool;
    uint32_t nblocks, capacity;
    atomic_uint next_block;
    atomic_uint gen; /* session number; a thread's cached ring belongs to it only when equal */
    ring *rings;
    uint32_t nrings;
    uint64_t origin; /* CLOCK_MONOTONIC ns at start */
    int nvtx, running;
    char **names;
    uint32_t nnames, cap_names;
    uint32_t *hash; /* open addressing over names, 0 = empty */
    uint32_t hash_cap;
    struct {
        tdm_prof_flush_fn fn;
        void *user;
    } src[MAX_SOURCES];
    int nsrc;
    char device[256], driver[64];
    atomic_llong route_seq;
} P = {.mu = PTHREAD_MUTEX_INITIALIZER};

typedef struct {
    uint64_t id, ts, work, h2d, d2h;
    int64_t route;
    uint32_t name, backend;
    uint8_t cat, nvtx;
} frame;

typedef struct {
    ring *r;
    unsigned gen;
    int depth;
    frame st[MAX_DEPTH];
    const char *bk_ptr[16]; /* last backend, op and reason names seen, with their ids */
    uint32_t bk_id[16];
    int bk_next;
} tls_state;

static _Thread_local tls_state T;

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t tdm_prof_now(void) {
    uint64_t o = P.origin, t = mono_ns();
    return o && t > o ? t - o : 0;
}

int tdm_prof_on(void) { return TANDEM_PROF_ON(); }

const char *tdm_prof_cat_name(tdm_prof_cat cat) {
    static const char *n[] = {"op", "user", "gpu", "h2d", "d2h", "init", "sync"};
    return (unsigned)cat < TDM_PROF_CAT_COUNT ? n[cat] : "unknown";
}

void tdm_prof_opts_init(tdm_prof_opts *o) { *o = (tdm_prof_opts){.capacity = 262144, .nvtx = 0}; }

/* ---- names ------------------------------------------------------------------------------------------- */

static uint32_t fnv(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Under P.mu. */
static int rehash(uint32_t cap) {
    uint32_t *h = calloc(cap, sizeof *h);
    if (!h) return -1;
    for (uint32_t id = 1; id < P.nnames; id++) {
        uint32_t i = fnv(P.names[id]) & (cap - 1);
        while (h[i]) i = (i + 1) & (cap - 1);
        h[i] = id;
    }
    free(P.hash);
    P.hash = h;
    P.hash_cap = cap;
    return 0;
}

/* A copy of name in which control characters and bytes that are not UTF-8 are U+FFFD: names are labels,
 * and the trace, the report and the summaries must all show the same valid text. NULL: no memory. */
static char *clean_name(const char *name) {
    size_t n = strlen(name);
    char *out = malloc(3 * n + 1), *o = out;
    if (!out) return NULL;
    for (const unsigned char *s = (const unsigned char *)name; *s;) {
        int len = s[0] < 0x80 ? 1 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : s[0] >= 0xE0 && s[0] < 0xF0 ? 3 : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : 0;
        for (int i = 1; i < len; i++)
            if ((s[i] & 0xC0) != 0x80) len = 0;
        if (!len || s[0] < 0x20 || s[0] == 0x7f) {
            memcpy(o, "\xef\xbf\xbd", 3); /* U+FFFD */
            o += 3;
            s++;
        } else {
            memcpy(o, s, (size_t)len);
            o += len;
            s += len;
        }
    }
    *o = '\0';
    return out;
}

uint32_t tdm_prof_intern(const char *name) {
    char *clean = clean_name(name ? name : "?"); /* looked up cleaned, so a name interns once */
    if (!clean) return 0;
    pthread_mutex_lock(&P.mu);
    uint32_t id = 0;
    if (!P.nnames) { /* id 0 is the unknown name */
        char *q = malloc(2), **names = q ? malloc(64 * sizeof *names) : NULL;
        if (!names) {
            free(q);
            goto out;
        }
        memcpy(q, "?", 2);
        P.names = names;
        P.cap_names = 64;
        P.names[0] = q;
        P.nnames = 1;
    }
    if ((P.nnames + 1) * 2 > P.hash_cap && rehash(P.hash_cap ? P.hash_cap * 2 : 256)) goto out;
    uint32_t i = fnv(clean) & (P.hash_cap - 1);
    for (; P.hash[i]; i = (i + 1) & (P.hash_cap - 1))
        if (!strcmp(P.names[P.hash[i]], clean)) {
            id = P.hash[i];
            goto out;
        }
    if (P.nnames == P.cap_names) {
        char **names = realloc(P.names, 2 * (size_t)P.cap_names * sizeof *names);
        if (!names) goto out;
        P.names = names;
        P.cap_names *= 2;
    }
    P.names[P.nnames] = clean;
    clean = NULL; /* kept */
    P.hash[i] = id = P.nnames++;
out:
    pthread_mutex_unlock(&P.mu);
    free(clean);
    return id;
}

/* Backend, op and reason names are few and passed as stable strings: a small per-thread cache keyed by
 * the pointer keeps the intern table's lock off the record path. */
static uint32_t backend_id(const char *b) {
    if (!b) return 0;
    for (int i = 0; i < 16; i++)
        if (T.bk_ptr[i] == b) return T.bk_id[i];
    uint32_t id = tdm_prof_intern(b);
    T.bk_ptr[T.bk_next] = b;
    T.bk_id[T.bk_next] = id;
    T.bk_next = (T.bk_next + 1) & 15;
    return id;
}

/* ---- session ----------------------------------------------------------------------------------------- */

static void free_rings(void) {
    for (ring *r = P.rings, *nx; r; r = nx) {
        nx = r->next;
        free(r->blocks);
        free(r);
    }
    P.rings = NULL;
    P.nrings = 0;
}

int tdm_prof_start(const tdm_prof_opts *opts) {
    tdm_prof_opts o;
    if (opts) o = *opts;
    else tdm_prof_opts_init(&o);
    if (o.capacity < 1024 || o.capacity > (1u << 26))
        return tdm_error(TDM_E_INVAL, "tdm_prof_start: capacity %u outside 1024..2^26", o.capacity);
    pthread_mutex_lock(&P.mu);
    if (P.running) {
        pthread_mutex_unlock(&P.mu);
        return tdm_error(TDM_E_BUSY, "tdm_prof_start: a profiling session is already running");
    }
    uint32_t nblocks = o.capacity / BLOCK;
    size_t bytes;
    if (tdm_size_mul((size_t)nblocks * BLOCK, sizeof(prof_rec), &bytes)) bytes = SIZE_MAX;
    prof_rec *pool = bytes == SIZE_MAX ? NULL : malloc(bytes);
    if (!pool) {
        pthread_mutex_unlock(&P.mu);
        return tdm_error(TDM_E_NOMEM, "tdm_prof_start: no memory for %u records", o.capacity);
    }
    /* Touch the pool now so that first use does not fault pages inside timed spans. */
    memset(pool, 0, bytes);
    free_rings();
    free(P.pool);
    P.pool = pool;
    P.nblocks = nblocks;
    P.capacity = nblocks * BLOCK;
    atomic_store(&P.next_block, 0);
    atomic_fetch_add(&P.gen, 1);
    atomic_store(&P.route_seq, 0);
    P.nvtx = o.nvtx;
    P.origin = mono_ns();
    P.running = 1;
    atomic_store_explicit(&tdm_prof_enabled_flag, 1, memory_order_release);
    pthread_mutex_unlock(&P.mu);
    return TDM_OK;
}

int tdm_prof_running(void) { return TANDEM_PROF_ON(); }

void tdm_prof_stop(void) {
    if (!TANDEM_PROF_ON()) return;
    tdm_prof_flush(); /* device spans pending now still belong to this session */
    pthread_mutex_lock(&P.mu);
    atomic_store(&tdm_prof_enabled_flag, 0);
    P.running = 0;
    pthread_mutex_unlock(&P.mu);
}

void tdm_prof_reset(void) {
    tdm_prof_stop();
    pthread_mutex_lock(&P.mu);
    free_rings();
    free(P.pool);
    P.pool = NULL;
    P.nblocks = P.capacity = 0;
    atomic_fetch_add(&P.gen, 1);
    P.origin = 0;
    /* Names stay: sites cache their ids for the life of the process. */
    pthread_mutex_unlock(&P.mu);
}

/* ---- rings ------------------------------------------------------------------------------------------- */

/* This thread's ring in the current session, registering one on first use (NULL: no memory). */
static ring *my_ring(void) {
    unsigned g = atomic_load_explicit(&P.gen, memory_order_acquire);
    if (T.r && T.gen == g) return T.r;
    T.r = NULL;
    T.depth = 0;
    pthread_mutex_lock(&P.mu);
    ring *r = NULL;
    if (P.pool && atomic_load(&P.gen) == g) {
        r = calloc(1, sizeof *r);
        if (r) r->blocks = malloc(P.nblocks * sizeof *r->blocks);
        if (r && !r->blocks) {
            free(r);
            r = NULL;
        }
        if (r) {
            atomic_flag_clear(&r->busy);
            r->tid = (uint32_t)gettid();
            r->index = ++P.nrings;
            r->next = P.rings;
            P.rings = r;
        }
    }
    pthread_mutex_unlock(&P.mu);
    T.r = r;
    T.gen = g;
    return r;
}

static inline void lock_ring(ring *r) {
    while (atomic_flag_test_and_set_explicit(&r->busy, memory_order_acquire)) {
    }
}
static inline void unlock_ring(ring *r) { atomic_flag_clear_explicit(&r->busy, memory_order_release); }

/* A slot for one record in r (locked), or NULL when this ring has no block and the pool is spent. */
static prof_rec *slot(ring *r) {
    r->recorded++;
    if (r->cur && r->fill < BLOCK) return &r->cur[r->fill++];
    uint32_t b = atomic_load_explicit(&P.next_block, memory_order_relaxed) < P.nblocks
                     ? atomic_fetch_add_explicit(&P.next_block, 1, memory_order_relaxed)
                     : P.nblocks;
    if (b < P.nblocks) {
        /* Blocks join in order until the pool is spent, so the circle is still unrotated here. */
        r->blocks[r->nb++] = b;
    } else if (r->nb) {
        r->dropped += BLOCK; /* the oldest block becomes the newest */
        r->first = (r->first + 1) % r->nb;
    } else {
        r->dropped++;
        return NULL;
    }
    r->fill = 1;
    r->cur = &P.pool[(size_t)r->blocks[(r->first + r->nb - 1) % r->nb] * BLOCK];
    return r->cur;
}

static void put(const prof_rec *rec) {
    ring *r = my_ring();
    if (!r) return;
    lock_ring(r);
    prof_rec *s = slot(r);
    if (s) {
        *s = *rec;
        s->tid = r->tid;
    }
    unlock_ring(r);
}

/* ---- scopes ------------------------------------------------------------------------------------------ */

tdm_prof_scope tdm_prof_begin(uint32_t name_id, tdm_prof_cat cat) {
    tdm_prof_scope s = {0};
    if (!TANDEM_PROF_ON()) return s;
    ring *r = my_ring();
    if (!r || T.depth >= MAX_DEPTH) return s;
    frame *f = &T.st[T.depth++];
    s.id = f->id = ((uint64_t)r->index << 40) | ++r->next_id;
    f->name = name_id;
    f->cat = (uint8_t)cat;
    f->backend = f->work = f->h2d = f->d2h = 0;
    f->route = -1;
    f->nvtx = 0;
#ifdef TANDEM_HAVE_NVTX
    if (P.nvtx) {
        pthread_mutex_lock(&P.mu);
        const char *nm = name_id < P.nnames ? P.names[name_id] : "?";
        pthread_mutex_unlock(&P.mu);
        nvtxRangePushA(nm);
        f->nvtx = 1;
    }
#endif
    f->ts = tdm_prof_now(); /* last, so the span measures the caller's work and not ours */
    return s;
}

void tdm_prof_annotate(const char *backend, uint64_t work, uint64_t h2d_bytes, uint64_t d2h_bytes) {
    if (!T.depth || !T.r || T.gen != atomic_load(&P.gen)) return;
    frame *f = &T.st[T.depth - 1];
    if (backend) f->backend = backend_id(backend);
    f->work += work;
    f->h2d += h2d_bytes;
    f->d2h += d2h_bytes;
}

uint64_t tdm_prof_current(void) {
    if (!T.depth || !T.r || T.gen != atomic_load(&P.gen)) return 0;
    return T.st[T.depth - 1].id;
}

void tdm_prof_end(tdm_prof_scope s, int status) {
    uint64_t now = tdm_prof_now();
    if (!s.id || !T.r || T.gen != atomic_load(&P.gen)) return;
    int k = T.depth - 1;
    while (k >= 0 && T.st[k].id != s.id) k--;
    if (k < 0) return; /* not open on this thread (ended twice, or begun elsewhere) */
    /* Scopes left open inside this one end with it, so spans on one thread always nest. */
    for (int j = T.depth - 1; j >= k; j--) {
        frame *f = &T.st[j];
        tdm_alloc_stats as;
        tdm_alloc_get_stats(&as);
        prof_rec rec = {.id = f->id, .parent = j ? T.st[j - 1].id : 0, .ts = f->ts, .dur = now - f->ts,
                        .work = f->work, .h2d = f->h2d, .d2h = f->d2h, .host_mem = as.current_bytes,
                        .route = f->route, .name = f->name, .backend = f->backend, .stream = -1,
                        .status = j == k ? status : 0, .kind = PREC_SPAN, .cat = f->cat};
#ifdef TANDEM_HAVE_NVTX
        if (f->nvtx) nvtxRangePop();
#endif
        put(&rec);
        if (f->route >= 0) {
            prof_rec m = {.ts = now, .work = rec.dur, .route = f->route, .stream = -1, .kind = PREC_MEASURED};
            put(&m);
        }
    }
    T.depth = k;
}

/* ---- other records ----------------------------------------------------------------------------------- */

void tdm_prof_record(const tdm_prof_span *s) {
    if (!TANDEM_PROF_ON() || !s) return;
    prof_rec rec = {.id = 0, .parent = s->parent, .ts = s->ts, .dur = s->dur, .work = s->work,
                    .h2d = s->h2d_bytes, .d2h = s->d2h_bytes, .mem_used = s->mem_used,
                    .mem_reserved = s->mem_reserved, .route = s->route, .name = s->name,
                    .backend = backend_id(s->backend), .stream = s->stream < 0 ? -1 : s->stream,
                    .status = s->status, .kind = PREC_SPAN, .cat = s->cat < TDM_PROF_CAT_COUNT ? s->cat : 0};
    put(&rec);
    if (s->mem_used || s->mem_reserved) { /* the pool after the op: a "device memory" sample at its end */
        prof_rec m = {.ts = s->ts + s->dur, .work = s->mem_used, .h2d = s->mem_reserved, .status = -1, .route = -1,
                      .stream = -1, .kind = PREC_MEM};
        put(&m);
    }
}

void tdm_prof_mem_sample(uint64_t used, uint64_t reserved, int pressure) {
    if (!TANDEM_PROF_ON()) return;
    prof_rec rec = {.ts = tdm_prof_now(), .work = used, .h2d = reserved, .status = pressure, .route = -1,
                    .stream = -1, .kind = PREC_MEM};
    put(&rec);
}

int64_t tdm_prof_route(const char *op, const char *backend, const char *reason, uint64_t predicted_cpu_ns,
                       uint64_t predicted_gpu_ns) {
    if (!TANDEM_PROF_ON()) return -1;
    int64_t id = atomic_fetch_add(&P.route_seq, 1);
    /* The innermost open scope is the op the decision placed: its span carries the decision's id, and its
     * duration becomes the decision's measured time when it ends. */
    if (T.depth && T.r && T.gen == atomic_load(&P.gen) && T.st[T.depth - 1].route < 0) T.st[T.depth - 1].route = id;
    prof_rec rec = {.ts = tdm_prof_now(), .work = predicted_cpu_ns, .h2d = predicted_gpu_ns, .route = id,
                    .name = backend_id(op), .backend = backend_id(backend),
                    .status = (int32_t)backend_id(reason), .stream = -1, .parent = tdm_prof_current(),
                    .kind = PREC_ROUTE};
    put(&rec);
    return id;
}

void tdm_prof_route_measured(int64_t route, uint64_t measured_ns) {
    if (!TANDEM_PROF_ON() || route < 0) return;
    prof_rec rec = {.ts = tdm_prof_now(), .work = measured_ns, .route = route, .stream = -1, .kind = PREC_MEASURED};
    put(&rec);
}

void tdm_prof_fallback(const char *op, const char *from, const char *to, const char *why) {
    if (!TANDEM_PROF_ON()) return;
    prof_rec rec = {.ts = tdm_prof_now(), .name = backend_id(op), .work = backend_id(from),
                    .backend = backend_id(to), .status = (int32_t)backend_id(why), .route = -1,
                    .stream = -1, .parent = tdm_prof_current(), .kind = PREC_FALLBACK};
    put(&rec);
}

/* ---- sources and device info ------------------------------------------------------------------------- */

int tdm_prof_source_add(tdm_prof_flush_fn fn, void *user) {
    pthread_mutex_lock(&P.mu);
    int rc = TDM_OK;
    if (P.nsrc >= MAX_SOURCES) rc = tdm_error(TDM_E_NOMEM, "tdm_prof_source_add: more than %d sources", MAX_SOURCES);
    else P.src[P.nsrc].fn = fn, P.src[P.nsrc++].user = user;
    pthread_mutex_unlock(&P.mu);
    return rc;
}

void tdm_prof_source_remove(tdm_prof_flush_fn fn, void *user) {
    pthread_mutex_lock(&P.mu);
    for (int i = 0; i < P.nsrc; i++)
        if (P.src[i].fn == fn && P.src[i].user == user) {
            P.src[i] = P.src[--P.nsrc];
            break;
        }
    pthread_mutex_unlock(&P.mu);
}

void tdm_prof_flush(void) {
    /* Called without the lock held: a flush records spans, which may register this thread's ring. */
    pthread_mutex_lock(&P.mu);
    int n = P.nsrc;
    tdm_prof_flush_fn fn[MAX_SOURCES];
    void *user[MAX_SOURCES];
    for (int i = 0; i < n; i++) fn[i] = P.src[i].fn, user[i] = P.src[i].user;
    pthread_mutex_unlock(&P.mu);
    for (int i = 0; i < n; i++) fn[i](user[i]);
}

void tdm_prof_set_device_info(const char *device, const char *driver) {
    pthread_mutex_lock(&P.mu);
    if (device) snprintf(P.device, sizeof P.device, "%s", device);
    if (driver) snprintf(P.driver, sizeof P.driver, "%s", driver);
    pthread_mutex_unlock(&P.mu);
}

void prof_device_info(char *device, size_t dcap, char *driver, size_t vcap) {
    pthread_mutex_lock(&P.mu);
    snprintf(device, dcap, "%s", P.device[0] ? P.device : "none");
    snprintf(driver, vcap, "%s", P.driver);
    pthread_mutex_unlock(&P.mu);
}

/* ---- reading ----------------------------------------------------------------------------------------- */

void tdm_prof_stats_get(tdm_prof_stats *out) {
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&P.mu);
    out->capacity = P.capacity;
    for (ring *r = P.rings; r; r = r->next) {
        lock_ring(r);
        out->recorded += r->recorded;
        out->dropped += r->dropped;
        out->threads++;
        unlock_ring(r);
    }
    out->kept = out->recorded - out->dropped;
    pthread_mutex_unlock(&P.mu);
}

static int by_ts(const void *a, const void *b) {
    const prof_rec *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1; /* parents before the children they start with */
    return x->id < y->id ? -1 : x->id > y->id;
}

int prof_snapshot(prof_snap *s) {
    memset(s, 0, sizeof *s);
    s->pid = (int)getpid();
    tdm_prof_flush();
    pthread_mutex_lock(&P.mu);
    /* Every ring is held while it is sized and copied, so no ring grows in between (a writer holds only
     * its own ring, so taking them all in list order cannot deadlock; writers wait for the copy). */
    size_t cap = 0;
    for (ring *r = P.rings; r; r = r->next) {
        lock_ring(r);
        cap += (size_t)r->nb * BLOCK;
    }
    s->r = malloc((cap ? cap : 1) * sizeof *s->r);
    s->names = malloc((P.nnames ? P.nnames : 1) * sizeof *s->names);
    if (!s->r || !s->names) {
        for (ring *r = P.rings; r; r = r->next) unlock_ring(r);
        pthread_mutex_unlock(&P.mu);
        prof_snap_free(s);
        return tdm_error(TDM_E_NOMEM, "profiler: no memory for a snapshot of %zu records", cap);
    }
    for (uint32_t i = 0; i < P.nnames; i++) s->names[i] = P.names[i];
    s->nnames = P.nnames;
    for (ring *r = P.rings; r; r = r->next) {
        for (uint32_t k = 0; k < r->nb; k++) {
            uint32_t cnt = k + 1 == r->nb ? r->fill : BLOCK;
            memcpy(s->r + s->n, P.pool + (size_t)r->blocks[(r->first + k) % r->nb] * BLOCK, cnt * sizeof *s->r);
            s->n += cnt;
        }
        s->recorded += r->recorded;
        s->dropped += r->dropped;
        s->threads++;
        unlock_ring(r);
    }
    pthread_mutex_unlock(&P.mu);
    qsort(s->r, s->n, sizeof *s->r, by_ts);
    return TDM_OK;
}

void prof_snap_free(prof_snap *s) {
    free(s->r);
    free((void *)s->names);
    memset(s, 0, sizeof *s);
}

const char *prof_snap_name(const prof_snap *s, uint32_t id) { return id < s->nnames ? s->names[id] : "?"; }
