/* batch.c: many programs over many grids in one call (tdm_arc_batch_run). The CPU backend spreads the
 * (program, grid) calls over OpenMP threads with one runtime per thread, resets the runtime after each call
 * (so memory stays bounded by the largest call) and copies each result out as ints (into slabs each thread
 * takes from, so a call costs no malloc), or as its repr when it is not a grid. Results never depend on the thread count: every call is independent and deterministic.
 * The batched executor (exec.c) fills the same results, on the CPU or on a GPU. */
#define _POSIX_C_SOURCE 200809L
#include "arc_internal.h"

#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char *dup_str(const char *s) { return tdm_strndup(s, strlen(s)); }

/* Each thread keeps the runtime of its last batch for its next one: making a runtime costs a calloc and
 * the arena's first 256 KB block, and freeing that block makes glibc consolidate its free lists, which
 * cost a batch of light calls about as much as the calls. The thread's own variable holds it between
 * batches (read and written in a few instructions: the key's get and set cost a batch of a few light
 * calls about 3 %); the key holds it too, from the first batch that kept it, so that its destructor frees it
 * when the thread exits (the process's own thread keeps its one until exit). */
static pthread_key_t kept_key;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;
static int kept_ok;
static _Thread_local tdm_arc_rt *kept_rt;  /* kept for this thread's next batch (NULL while one runs) */
static _Thread_local tdm_arc_rt *keyed_rt; /* what kept_key holds for this thread */

static void kept_drop(void *rt) { tdm_arc_rt_free(rt); }
static void kept_make(void) { kept_ok = pthread_key_create(&kept_key, kept_drop) == 0; }

/* The thread's kept runtime (statistics as asked), or a new one; NULL out of memory. */
static tdm_arc_rt *rt_take(int stats) {
    tdm_arc_rt *rt = kept_rt;
    kept_rt = NULL;
    if (!rt && tdm_arc_rt_new(&rt)) return NULL;
    if (stats || rt->stats) tdm_arc_rt_stats_enable(rt, stats);
    return rt;
}

/* Keeps rt for the thread's next batch when it holds 1 MiB or less and the thread keeps none already; else
 * frees it. The last call's values stay in its arena until the next call resets it (run_one). */
static void rt_give(tdm_arc_rt *rt) {
    if (!rt) return;
    /* a large one reset: gives back what one large call took past the first block (a kept runtime is
       reset by each call that takes it, before the call) */
    if (tdm_arc_rt_bytes(rt) > ((size_t)1 << 20)) tdm_arc_rt_reset(rt);
    int keep = !kept_rt && tdm_arc_rt_bytes(rt) <= ((size_t)1 << 20);
    if (keep && keyed_rt != rt) { /* the key learns it, for the thread's exit */
        pthread_once(&kept_once, kept_make);
        if ((keep = kept_ok && !pthread_setspecific(kept_key, rt))) keyed_rt = rt;
    }
    if (keep) {
        kept_rt = rt;
        return;
    }
    if (keyed_rt == rt) pthread_setspecific(kept_key, NULL), keyed_rt = NULL;
    tdm_arc_rt_free(rt);
}

static char *repr_of(const tdm_arc_val *v) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return NULL;
    tdm_arc_val_print(m, v);
    fclose(m);
    char *r = buf ? tdm_strndup(buf, len) : NULL;
    free(buf);
    return r;
}

int arc_result_error(tdm_arc_rt *rt, int status, tdm_arc_result *r) {
    r->status = status, r->h = r->w = -1;
    return (r->error = dup_str(tdm_arc_rt_error(rt)[0] ? tdm_arc_rt_error(rt) : tdm_last_error())) ? 0 : -1;
}

/* A block of result cells that many results share (tdm_arc_batch_run's threads each fill their own). */
struct arc_cells_slab {
    arc_cells_slab *next;
    size_t size, used; /* ints */
    int data[];
};

/* under glibc's mmap threshold (128 KiB): the heap reuses the blocks batch after batch, where fresh mmaps
 * would fault their pages in on every run */
#define SLAB_INTS ((size_t)16 * 1024 - 8)

/* One slab of SLAB_INTS that a freed batch left for the next batch's first: a batch of a few calls (a task's
 * pairs) paid as much for the malloc of its slab, and glibc's consolidation when it was freed, as for a
 * call. Any thread may take it or put one back (one exchange each). It is freed at exit. */
static _Atomic(arc_cells_slab *) spare_slab;

static void spare_drop(void) { tdm_free(atomic_exchange(&spare_slab, NULL)); }

/* slab_take's fresh head for n ints: the spare slab when it is free and n fits it, else a new one. */
static __attribute__((noinline)) int *slab_new(arc_cells_slab **slab, size_t n) {
    size_t size = n > SLAB_INTS ? n : SLAB_INTS;
    arc_cells_slab *s = NULL;
    if (size == SLAB_INTS && atomic_load_explicit(&spare_slab, memory_order_relaxed)) s = atomic_exchange(&spare_slab, NULL);
    if (!s && !(s = tdm_malloc(sizeof *s + size * sizeof *s->data))) return NULL;
    s->next = *slab, s->size = size, s->used = n;
    *slab = s;
    return s->data;
}

/* n ints from *slab's head, a fresh head when it is full: NULL out of memory. */
static inline int *slab_take(arc_cells_slab **slab, size_t n) {
    arc_cells_slab *s = *slab;
    if (!s || s->size - s->used < n) return slab_new(slab, n);
    int *p = s->data + s->used;
    s->used += n;
    return p;
}

static pthread_once_t spare_once = PTHREAD_ONCE_INIT;
static void spare_make(void) { atexit(spare_drop); }

static void slabs_free(arc_cells_slab *s) {
    if (s) pthread_once(&spare_once, spare_make); /* the spare is freed at exit */
    while (s) {
        arc_cells_slab *next = s->next, *none = NULL;
        if (s->size != SLAB_INTS || !atomic_compare_exchange_strong(&spare_slab, &none, s)) tdm_free(s);
        s = next;
    }
}

int arc_result_fill(tdm_arc_rt *rt, const tdm_arc_val *out, tdm_arc_result *r, arc_cells_slab **slab) {
    r->status = TDM_OK, r->h = r->w = -1;
    int h, w;
    arc_gview v;
    if (arc_grid_view_kept(rt, out, &v)) { /* its bytes (the input's, or a paint's or fill's) */
        size_t n = (size_t)v.h * (size_t)v.w;
        int *cells = slab ? slab_take(slab, n) : tdm_malloc(n * sizeof *r->cells);
        if (!cells) return -1;
        arc_bytes_to_ints(cells, v.c, n);
        r->h = v.h, r->w = v.w, r->cells = cells;
        return 0;
    }
    if (arc_is_tuple(out)) {
        /* room for the cells the shape promises, then one pass that checks the grid and copies it */
        const tdm_arc_val *r0 = out->n ? out->u.items[0] : NULL;
        size_t cap = r0 && arc_is_tuple(r0) ? (size_t)out->n * r0->n : 0;
        size_t room = cap + ARC_ROWS_SLACK; /* arc_grid_input_rows writes past the cells */
        int *cells = slab ? slab_take(slab, room) : tdm_malloc(room * sizeof *r->cells);
        if (!cells) return -1;
        if (slab) (*slab)->used -= ARC_ROWS_SLACK; /* the slack given back: the next result's cells take it */
        if (cap && arc_grid_input_rows(rt, out, cells)) { /* rows of the input, or slices of them: its bytes */
            r->h = (int)out->n, r->w = (int)out->u.items[0]->n, r->cells = cells;
            return 0;
        }
        if (tdm_arc_grid_read(out, &h, &w, cells, cap) == TDM_OK) {
            r->h = h, r->w = w, r->cells = cells;
            return 0;
        }
        if (slab) (*slab)->used -= cap; /* the last taken: given back */
        else tdm_free(cells);
    }
    r->repr = repr_of(out);
    if (rt->failed && rt->status == TDM_E_NOMEM) { /* laying out a lazy frozenset of the result failed */
        tdm_free(r->repr);
        r->repr = NULL, r->status = TDM_E_NOMEM;
        return (r->error = dup_str(tdm_arc_rt_error(rt))) ? 0 : -1;
    }
    return r->repr ? 0 : -1;
}

/* One call; fills r. Returns 0, or -1 when memory ran out copying the result. */
static int run_one(tdm_arc_rt *rt, const tdm_arc_programs *p, const tdm_arc_inputs *inputs, size_t k,
                   const tdm_arc_grid_ref *g, tdm_arc_result *r, arc_cells_slab **slab) {
    tdm_arc_rt_reset(rt);
    const tdm_arc_val *in, *out;
    tdm_arc_val *made;
    int st = TDM_OK;
    if (!arc_inputs_take(rt, inputs, g, &in)) st = tdm_arc_grid_new(rt, g->h, g->w, g->cells, &made), in = made;
    if (!st) st = arc_program_run(rt, p, k, in, &out, 1); /* a grid of bytes is read as such below */
    if (st) return arc_result_error(rt, st, r);
    return arc_result_fill(rt, out, r, slab);
}

/* A thread's result slabs added to b's. */
static void slabs_join(tdm_arc_batch *b, arc_cells_slab *slab) {
    arc_cells_slab *last = slab;
    while (last->next) last = last->next;
    last->next = b->slabs, b->slabs = slab;
}

/* One thread's share of tdm_arc_batch_run: in a team (its loop an orphaned omp for, the calls shared out
 * among the team), or alone, every call its own. Alone takes no worksharing construct, which would bind to
 * a caller's own parallel region. Returns 1 when memory ran out. */
static int batch_worker(const tdm_arc_programs *p, const tdm_arc_inputs *in, const tdm_arc_call_ref *calls, size_t n,
                        int stats, tdm_arc_batch *b, int team) {
    int failed = 0;
    tdm_arc_rt *rt = NULL;
    arc_cells_slab *slab = NULL; /* this thread's result cells: one malloc per 16 Ki ints, not per call */
    if (!(rt = rt_take(stats))) failed = 1;
    if (team) {
#pragma omp for schedule(dynamic, 4)
        for (size_t c = 0; c < n; c++)
            if (rt && !failed && run_one(rt, p, in, calls[c].prog, &calls[c].grid, &b->res[c], &slab)) failed = 1;
    } else {
        for (size_t c = 0; c < n; c++)
            if (rt && !failed && run_one(rt, p, in, calls[c].prog, &calls[c].grid, &b->res[c], &slab)) failed = 1;
    }
    if (slab && team) {
#pragma omp critical(tdm_arc_batch_slabs)
        slabs_join(b, slab);
    } else if (slab) {
        slabs_join(b, slab); /* alone: no other thread to keep out */
    }
    if (rt && stats && rt->stats) {
#pragma omp critical(tdm_arc_batch_stats)
        for (int id = 0; id < ARC_NPRIM; id++)
            b->counts->stats[id].calls += rt->stats[id].calls, b->counts->stats[id].ns += rt->stats[id].ns;
    }
    rt_give(rt);
    return failed;
}

int tdm_arc_batch_run(const tdm_arc_programs *p, const tdm_arc_call_ref *calls, size_t n, int threads, int stats,
                      tdm_arc_batch **out) {
    return tdm_arc_batch_run_on(p, NULL, calls, n, threads, stats, out);
}

int tdm_arc_batch_run_on(const tdm_arc_programs *p, const tdm_arc_inputs *in, const tdm_arc_call_ref *calls, size_t n,
                         int threads, int stats, tdm_arc_batch **out) {
    if (!p || !out || (n && !calls)) return tdm_error(TDM_E_INVAL, "tdm_arc_batch_run: NULL argument");
    int rc = arc_check_calls(p, calls, n, "tdm_arc_batch_run");
    if (rc) return rc;
    tdm_arc_batch *b = arc_batch_alloc(n, stats);
    if (!b) return tdm_error(TDM_E_NOMEM, "tdm_arc_batch_run: no memory for %zu results", n);
    if (threads <= 0) threads = omp_get_max_threads();
    if ((size_t)threads > n) threads = n ? (int)n : 1;
    b->threads = threads;
    int failed = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (threads == 1) /* no team to start: a small batch would pay more for it than for its calls */
        failed = batch_worker(p, in, calls, n, stats, b, 0);
    else {
#pragma omp parallel num_threads(threads) reduction(| : failed)
        failed = batch_worker(p, in, calls, n, stats, b, 1);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    b->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (failed) {
        tdm_arc_batch_free(b);
        return tdm_error(TDM_E_NOMEM, "tdm_arc_batch_run: out of memory");
    }
    *out = b;
    return TDM_OK;
}

int arc_check_calls(const tdm_arc_programs *p, const tdm_arc_call_ref *calls, size_t n, const char *who) {
    for (size_t c = 0; c < n; c++) {
        if (calls[c].prog >= tdm_arc_programs_count(p))
            return tdm_error(TDM_E_INVAL, "%s: call %zu: program index %zu out of range", who, c, calls[c].prog);
        if (!arc_grid_ref_ok(&calls[c].grid))
            return tdm_error(TDM_E_INVAL, "%s: call %zu: the grid has a bad size or no cells", who, c);
    }
    return TDM_OK;
}

tdm_arc_batch *arc_batch_alloc(size_t n, int counts) {
    tdm_arc_batch *b = tdm_calloc(1, sizeof *b);
    if (!b || !(b->res = tdm_calloc(n ? n : 1, sizeof *b->res)) || (counts && !(b->counts = tdm_calloc(1, sizeof *b->counts)))) {
        if (b) tdm_free(b->res);
        tdm_free(b);
        return NULL;
    }
    b->n = n, b->backend = "cpu";
    return b;
}

void tdm_arc_batch_free(tdm_arc_batch *b) {
    if (!b) return;
    for (size_t c = 0; b->res && c < b->n; c++) {
        if (!b->slabs) tdm_free(b->res[c].cells); /* else they lie in the slabs */
        tdm_free(b->res[c].repr);
        tdm_free(b->res[c].error);
    }
    tdm_free(b->res);
    tdm_free(b->counts);
    slabs_free(b->slabs);
    tdm_free(b);
}

const tdm_arc_result *tdm_arc_batch_result(const tdm_arc_batch *b, size_t c) {
    if (!b || c >= b->n) return NULL;
    return &b->res[c];
}

tdm_arc_prim_stats tdm_arc_batch_prim_stats(const tdm_arc_batch *b, int id) {
    tdm_arc_prim_stats z = {0, 0};
    if (!b || !b->counts || id < 0 || id >= ARC_NPRIM) return z;
    return b->counts->stats[id];
}

double tdm_arc_batch_seconds(const tdm_arc_batch *b) { return b ? b->seconds : 0; }
int tdm_arc_batch_threads(const tdm_arc_batch *b) { return b ? b->threads : 0; }

tdm_arc_exec_stats tdm_arc_batch_exec_stats(const tdm_arc_batch *b, int id) {
    tdm_arc_exec_stats z = {0};
    if (!b || !b->counts || id < 0 || id >= ARC_NPRIM) return z;
    return b->counts->exec[id];
}

const char *tdm_arc_batch_backend(const tdm_arc_batch *b) { return b ? b->backend : NULL; }
