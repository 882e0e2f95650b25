/* exec.c: the batched executor (arc.h, tdm_arc_batch_exec): solver programs run line by line over all the
 * grids of a program at once. A variable is a column with a lane per grid (arc_bops.h); a line whose
 * primitive has a batched form runs as one call over every lane whose arguments that form can hold, on the
 * GPU or with the CPU forms (exec_cpu.c); every other lane, and every other line, runs in the interpreter
 * (arc_call), grid by grid, with values moved to the host only for it. The results are the interpreter's by
 * construction: a batched form either computes what the primitive computes or hands the lane back (status
 * 0), and values cross between a lane and the host only through exec_lane.c's exact encode and decode.
 *
 * Host values of a lane live in the runtime of the thread that owns it (lanes are split in contiguous
 * ranges, one per thread), so the interpreter's lines run in parallel with one runtime per thread, as in
 * tdm_arc_batch_run; runtimes are reset between chunks of grids, which bound memory. */
#include "core/internal.h"
#include "exec_internal.h"

#include "arc_device.h"

#include <omp.h>
#include <string.h>
#include <time.h>

#define CPU_CHUNK 2048
#define GPU_CHUNK 32768
#define GPU_MIN_CALLS 4096 /* below this, auto keeps the batch on the CPU (launches and copies dominate) */
#define SLOT_CELLS 900

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Where the batched forms run: the CPU forms (dev NULL) or a device's. */
typedef struct {
    const tdm_backend *b;
    const tdm_arc_dev_ops *dev;
    int threads;
} xdev;

static int x_alloc(const xdev *x, size_t n, arc_col *c) {
    return x->dev ? x->dev->col_alloc(x->b, n, c) : arc_cpu_col_alloc(n, c);
}
static void x_free(const xdev *x, arc_col *c) {
    if (!c->iv) return;
    if (x->dev) x->dev->col_free(x->b, c);
    else arc_cpu_col_free(c);
    memset(c, 0, sizeof *c);
}
static int x_put(const xdev *x, const arc_col *dst, const uint32_t *lanes, size_t m, const arc_col *src) {
    if (!m) return TDM_OK;
    if (x->dev) return x->dev->col_put(x->b, dst, lanes, m, src);
    arc_cpu_col_put(dst, lanes, m, src);
    return TDM_OK;
}
static int x_get(const xdev *x, const arc_col *src, const uint32_t *lanes, size_t m, const arc_col *dst) {
    if (!m) return TDM_OK;
    if (x->dev) return x->dev->col_get(x->b, src, lanes, m, dst);
    arc_cpu_col_get(src, lanes, m, dst);
    return TDM_OK;
}
static int x_run(const xdev *x, const arc_bop_call *c, const uint8_t *active, uint8_t *status) {
    return x->dev ? x->dev->bop_run(x->b, c, active, status) : arc_cpu_bop_run(c, active, status, x->threads);
}

typedef struct {
    arc_col d;          /* the column's buffers; zeroed until a lane is stored there */
    uint8_t *kind;      /* per lane: ARC_VK_* that d holds for it (NONE: nothing) */
    tdm_arc_val **host; /* per lane: the value on the host; NULL when only d holds it */
} xcol;

typedef struct {
    const tdm_arc_programs *p;
    size_t prog;
    arc_prog_info info;
    const xdev *x;
    tdm_arc_batch *b;
    const tdm_arc_call_ref *calls;
    const size_t *call; /* the chunk's call indices, m of them */
    size_t m;
    xcol *col;          /* info.nslots variables, then the input */
    int *last_use;      /* per column: the last line that reads it (-1: none; the result: n) */
    tdm_arc_rt **rt;    /* one per thread; lane l's values live in rt[owner(l)] */
    int nrt;
    uint8_t *dead, *active, *status, *done; /* done: lanes a batched form of the current line computed */
    uint32_t *lanes;
    arc_col stage;      /* m lanes on the host, packed */
} chunk;

static int owner(const chunk *c, size_t l) { return (int)(l * (size_t)c->nrt / c->m); }
static size_t lane_lo(const chunk *c, int t) { return ((size_t)t * c->m + (size_t)c->nrt - 1) / (size_t)c->nrt; }

/* The first of the k gathered lanes (c->lanes, ascending) that thread t's runtime owns, or k. */
static size_t packed_lo(const chunk *c, size_t k, int t) {
    size_t lo = 0, hi = k, first = lane_lo(c, t);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->lanes[mid] < first) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int col_of(const chunk *c, int kind, int idx) {
    return kind == ARC_STEP_VAR ? idx : kind == ARC_STEP_INPUT ? c->info.nslots : -1;
}

static int need_alloc(chunk *c, xcol *xc) { return xc->d.iv ? TDM_OK : x_alloc(c->x, c->m, &xc->d); }

/* The input column: grids a lane can hold go to the device as they are; the rest become host values. */
static int load_input(chunk *c) {
    xcol *in = &c->col[c->info.nslots];
    size_t k = 0;
    int rc = need_alloc(c, in);
    if (rc) return rc;
    for (size_t l = 0; l < c->m; l++) {
        const tdm_arc_grid_ref *g = &c->calls[c->call[l]].grid;
        int ok = g->h >= 1 && g->h <= 30 && g->w >= 1 && g->w <= 30;
        uint8_t *cells = c->stage.cells + k * SLOT_CELLS;
        if (ok) memset(cells, 0, SLOT_CELLS);
        for (int s = 0; ok && s < g->h * g->w; s++) {
            if (g->cells[s] < 0 || g->cells[s] > 9) ok = 0;
            else cells[(s / g->w) * 30 + s % g->w] = (uint8_t)g->cells[s];
        }
        if (ok) {
            c->stage.hw[2 * k] = (uint8_t)g->h, c->stage.hw[2 * k + 1] = (uint8_t)g->w;
            c->lanes[k++] = (uint32_t)l, in->kind[l] = ARC_VK_GRID;
            continue;
        }
        tdm_arc_rt *rt = c->rt[owner(c, l)];
        tdm_arc_val *v;
        int st = tdm_arc_grid_new(rt, g->h, g->w, g->cells, &v);
        if (st) {
            c->dead[l] = 1;
            if (arc_result_error(rt, st, &c->b->res[c->call[l]])) return tdm_error(TDM_E_NOMEM, "batch: out of memory");
        } else {
            in->host[l] = v;
        }
    }
    return x_put(c->x, &in->d, c->lanes, k, &c->stage);
}

/* Gives every lane in want (and live) of column ci a host value, decoding those only the device holds. */
static int materialize(chunk *c, int ci, const uint8_t *want) {
    xcol *xc = &c->col[ci];
    size_t k = 0;
    for (size_t l = 0; l < c->m; l++)
        if (want[l] && !c->dead[l] && !xc->host[l] && xc->kind[l] != ARC_VK_NONE) c->lanes[k++] = (uint32_t)l;
    if (!k) return TDM_OK;
    int rc = x_get(c->x, &xc->d, c->lanes, k, &c->stage), nomem = 0;
    if (rc) return rc;
    /* A runtime's arena is one thread's: each lane is decoded by the thread of its owner's runtime (the
     * gathered list is ascending, so owner t's lanes are the packed range [packed_lo(t), packed_lo(t + 1))),
     * never by a split of the list, which would let two threads fill one arena at once. */
#pragma omp parallel num_threads(c->nrt) reduction(| : nomem) if (k >= 64)
    for (int t = omp_get_thread_num(); t < c->nrt; t += omp_get_num_threads()) {
        tdm_arc_rt *rt = c->rt[t];
        for (size_t q = packed_lo(c, k, t), e = packed_lo(c, k, t + 1); q < e; q++) {
            uint32_t l = c->lanes[q];
            xc->host[l] = arc_lane_decode(rt, xc->kind[l], c->stage.cells + q * SLOT_CELLS, c->stage.hw + 2 * q,
                                          c->stage.iv + 2 * q);
            if (!xc->host[l]) nomem = 1;
        }
    }
    return nomem ? tdm_error(TDM_E_NOMEM, "batch: out of memory moving values to the host") : TDM_OK;
}

/* Sets active[l] for the live lanes not yet done that the batched form bop of line st can take, moving host
 * arguments into their columns where they are representable; fills call. Returns the number of active
 * lanes, or an error. */
static long prepare(chunk *c, const arc_step *st, int bop, arc_bop_call *call) {
    const arc_bop_info *info = &arc_bop_table[bop];
    memset(call, 0, sizeof *call);
    call->op = bop, call->n = c->m;
    if (st->nargs != info->nargs) return 0;
    int cols[4] = {-1, -1, -1, -1};
    for (int a = 0; a < info->nargs; a++) {
        int want = info->arg[a];
        if (st->arg_kind[a] == ARC_STEP_PRIM) { /* a function argument: only size, where the form asks for it */
            if (want != ARC_VK_SIZEFN || st->arg[a] != ARC_P_size) return 0;
            continue;
        }
        if (st->arg_kind[a] == ARC_STEP_CONST) {
            tdm_arc_val *v = arc_const_value(st->arg[a]);
            if ((want != ARC_VK_INT && want != ARC_VK_PAIR && want != ARC_VK_TRUTH) ||
                !arc_lane_encode(c->rt[0], v, want, NULL, NULL, call->k[a]))
                return 0;
            continue;
        }
        cols[a] = col_of(c, st->arg_kind[a], st->arg[a]);
        for (int e = 0; e < a; e++)
            if (cols[e] == cols[a] && info->arg[e] != want) return 0; /* one lane cannot hold both */
    }
    for (size_t l = 0; l < c->m; l++) c->active[l] = !c->dead[l] && !c->done[l];
    for (int a = 0; a < info->nargs; a++) {
        if (cols[a] < 0) continue;
        xcol *xc = &c->col[cols[a]];
        int want = info->arg[a], rc;
        size_t k = 0;
        for (size_t l = 0; l < c->m; l++) {
            if (!c->active[l] || xc->kind[l] == want) continue;
            if (xc->host[l] && arc_lane_encode(c->rt[owner(c, l)], xc->host[l], want, c->stage.cells + k * SLOT_CELLS,
                                               c->stage.hw + 2 * k, c->stage.iv + 2 * k))
                c->lanes[k++] = (uint32_t)l;
            else c->active[l] = 0;
        }
        if ((rc = need_alloc(c, xc)) || (rc = x_put(c->x, &xc->d, c->lanes, k, &c->stage))) return rc;
        for (size_t q = 0; q < k; q++) xc->kind[c->lanes[q]] = (uint8_t)want;
        call->arg[a] = xc->d;
    }
    long n = 0;
    for (size_t l = 0; l < c->m; l++) n += c->active[l];
    return n;
}

/* The interpreter's turn: line st on every live lane not in done (or every live lane when done is NULL). */
static int fallback(chunk *c, const arc_step *st, const uint8_t *done, size_t *count) {
    uint8_t *want = c->status; /* reused: the lanes to compute */
    size_t n = 0;
    for (size_t l = 0; l < c->m; l++) {
        want[l] = !c->dead[l] && !(done && done[l]);
        n += want[l];
    }
    *count = n;
    if (!n) return TDM_OK;
    int rc;
    if (st->callee_kind == ARC_STEP_VAR && (rc = materialize(c, st->callee, want))) return rc;
    for (int a = 0; a < st->nargs; a++) {
        int ci = col_of(c, st->arg_kind[a], st->arg[a]);
        if (ci >= 0 && (rc = materialize(c, ci, want))) return rc;
    }
    xcol *out = &c->col[st->target];
    int nomem = 0;
#pragma omp parallel num_threads(c->nrt) reduction(| : nomem)
    for (int t = omp_get_thread_num(); t < c->nrt; t += omp_get_num_threads()) {
        tdm_arc_rt *rt = c->rt[t];
        for (size_t l = lane_lo(c, t); l < lane_lo(c, t + 1); l++) {
            if (!want[l]) continue;
            tdm_arc_val *args[4], *fn, *r = NULL;
            rt->failed = 0, rt->err[0] = '\0', rt->depth = 0;
            fn = st->callee_kind == ARC_STEP_PRIM ? arc_prim_val(st->callee) : c->col[st->callee].host[l];
            int ok = 1;
            for (int a = 0; ok && a < st->nargs; a++) {
                int ci = col_of(c, st->arg_kind[a], st->arg[a]);
                args[a] = ci >= 0 ? c->col[ci].host[l]
                          : st->arg_kind[a] == ARC_STEP_PRIM ? arc_prim_val(st->arg[a])
                                                             : arc_const_value(st->arg[a]);
                ok = args[a] != NULL;
            }
            if (ok) r = arc_call(rt, fn, st->nargs, args);
            if (r) {
                out->host[l] = r, out->kind[l] = ARC_VK_NONE;
                continue;
            }
            c->dead[l] = 1;
            if (arc_result_error(rt, arc_prog_fail(rt, st->line, st->text), &c->b->res[c->call[l]])) nomem = 1;
        }
    }
    tdm_clear_error();
    return nomem ? tdm_error(TDM_E_NOMEM, "batch: out of memory") : TDM_OK;
}

/* Line i: each batched form of its primitive in turn (arc_bops.h's order) over the lanes it can take, then
 * the interpreter over the rest. */
static int run_step(chunk *c, int i) {
    arc_step st;
    arc_prog_step(c->p, c->prog, i, &st);
    int prim = st.callee_kind == ARC_STEP_PRIM ? st.callee : -1, rc, any = 0;
    tdm_arc_exec_stats *s = prim >= 0 ? &c->b->counts->exec[prim] : NULL;
    memset(c->done, 0, c->m);
    for (int bop = prim >= 0 ? arc_bop_of_prim(prim) : -1; bop >= 0; bop = arc_bop_next(bop)) {
        uint64_t t0 = now_ns();
        arc_bop_call call;
        long nact = prepare(c, &st, bop, &call);
        if (nact < 0) return (int)nact;
        if (!nact) continue;
        xcol *out = &c->col[st.target];
        if ((rc = need_alloc(c, out))) return rc;
        call.out = out->d;
        memset(c->status, 0, c->m);
        if ((rc = x_run(c->x, &call, c->active, c->status))) return rc;
        uint64_t got = 0;
        for (size_t l = 0; l < c->m; l++)
            if (c->active[l] && c->status[l]) c->done[l] = 1, out->kind[l] = (uint8_t)arc_bop_table[bop].out, got++;
        any = 1;
        if (s) s->batched += got, s->launches++, s->batched_ns += now_ns() - t0;
    }
    uint64_t t1 = now_ns();
    size_t n;
    if ((rc = fallback(c, &st, any ? c->done : NULL, &n))) return rc;
    if (s && n) s->fallback += n, s->fallback_ns += now_ns() - t1;
    return TDM_OK;
}

/* Frees the device buffers of the columns no line after i reads. */
static void release_after(chunk *c, int i) {
    for (int k = 0; k <= c->info.nslots; k++)
        if (c->last_use[k] <= i) x_free(c->x, &c->col[k].d);
}

/* The results of the chunk's live lanes. */
static int finish(chunk *c) {
    uint8_t *want = c->active;
    for (size_t l = 0; l < c->m; l++) want[l] = !c->dead[l];
    int rc = materialize(c, c->info.result, want), nomem = 0;
    if (rc) return rc;
    xcol *res = &c->col[c->info.result];
#pragma omp parallel num_threads(c->nrt) reduction(| : nomem)
    for (int t = omp_get_thread_num(); t < c->nrt; t += omp_get_num_threads())
        for (size_t l = lane_lo(c, t); l < lane_lo(c, t + 1); l++)
            if (want[l] && arc_result_fill(c->rt[t], res->host[l], &c->b->res[c->call[l]], NULL)) nomem = 1;
    return nomem ? tdm_error(TDM_E_NOMEM, "batch: out of memory copying results") : TDM_OK;
}

static int run_chunk(chunk *c) {
    for (int t = 0; t < c->nrt; t++) tdm_arc_rt_reset(c->rt[t]);
    size_t ncol = (size_t)c->info.nslots + 1;
    for (size_t k = 0; k < ncol; k++) {
        memset(c->col[k].kind, 0, c->m);
        memset(c->col[k].host, 0, c->m * sizeof *c->col[k].host);
    }
    memset(c->dead, 0, c->m);
    int rc = load_input(c);
    release_after(c, -1);
    for (int i = 0; !rc && i < c->info.n; i++) {
        rc = run_step(c, i);
        release_after(c, i);
    }
    if (!rc) rc = finish(c);
    for (size_t k = 0; k < ncol; k++) x_free(c->x, &c->col[k].d);
    return rc;
}

static void chunk_free(chunk *c) {
    size_t ncol = (size_t)c->info.nslots + 1;
    for (size_t k = 0; c->col && k < ncol; k++) {
        x_free(c->x, &c->col[k].d);
        tdm_free(c->col[k].kind), tdm_free(c->col[k].host);
    }
    tdm_free(c->col), tdm_free(c->last_use);
    tdm_free(c->dead), tdm_free(c->active), tdm_free(c->status), tdm_free(c->done), tdm_free(c->lanes);
    arc_cpu_col_free(&c->stage);
}

/* Every call of program prog (their indices in idx[0..n)), chunk by chunk. */
static int run_program(const xdev *x, tdm_arc_rt **rt, int nrt, const tdm_arc_programs *p, size_t prog,
                       const tdm_arc_call_ref *calls, const size_t *idx, size_t n, tdm_arc_batch *b) {
    size_t cap = x->dev ? GPU_CHUNK : CPU_CHUNK;
    if (cap > n) cap = n;
    chunk c = {.p = p, .prog = prog, .x = x, .b = b, .calls = calls, .rt = rt, .nrt = nrt, .m = cap};
    arc_prog_view(p, prog, &c.info);
    size_t ncol = (size_t)c.info.nslots + 1;
    int rc = TDM_OK;
    c.col = tdm_calloc(ncol, sizeof *c.col);
    c.last_use = tdm_malloc(ncol * sizeof *c.last_use);
    c.dead = tdm_malloc(cap), c.active = tdm_malloc(cap), c.status = tdm_malloc(cap), c.done = tdm_malloc(cap);
    c.lanes = tdm_malloc(cap * sizeof *c.lanes);
    if (!c.col || !c.last_use || !c.dead || !c.active || !c.status || !c.done || !c.lanes) rc = tdm_error(TDM_E_NOMEM, "batch: out of memory");
    for (size_t k = 0; !rc && k < ncol; k++) {
        c.col[k].kind = tdm_malloc(cap), c.col[k].host = tdm_malloc(cap * sizeof *c.col[k].host);
        if (!c.col[k].kind || !c.col[k].host) rc = tdm_error(TDM_E_NOMEM, "batch: out of memory");
    }
    if (!rc) rc = arc_cpu_col_alloc(cap, &c.stage);
    if (!rc) {
        for (size_t k = 0; k < ncol; k++) c.last_use[k] = -1;
        c.last_use[c.info.result] = c.info.n;
        for (int i = 0; i < c.info.n; i++) {
            arc_step st;
            arc_prog_step(p, prog, i, &st);
            if (st.callee_kind == ARC_STEP_VAR) c.last_use[st.callee] = i;
            for (int a = 0; a < st.nargs; a++) {
                int ci = col_of(&c, st.arg_kind[a], st.arg[a]);
                if (ci >= 0 && c.last_use[ci] < i) c.last_use[ci] = i;
            }
        }
    }
    for (size_t at = 0; !rc && at < n; at += cap) {
        c.call = idx + at, c.m = n - at < cap ? n - at : cap;
        rc = run_chunk(&c);
    }
    chunk_free(&c);
    return rc;
}

/* The whole batch on x: calls grouped by program (in call order within a program). */
static int exec_on(const xdev *x, const tdm_arc_programs *p, const tdm_arc_call_ref *calls, size_t n,
                   tdm_arc_batch *b) {
    size_t np = tdm_arc_programs_count(p), *start = tdm_calloc(np + 1, sizeof *start), *idx = tdm_malloc((n ? n : 1) * sizeof *idx);
    tdm_arc_rt **rt = tdm_calloc((size_t)x->threads, sizeof *rt);
    int rc = start && idx && rt ? TDM_OK : tdm_error(TDM_E_NOMEM, "batch: out of memory");
    /* a runtime here holds the values of a whole chunk of lanes (up to 32,768 calls), so the byte limit of
       one interpreter run does not apply; the primitives' own size limits do */
    for (int t = 0; !rc && t < x->threads; t++)
        if (!(rc = tdm_arc_rt_new(&rt[t]))) rt[t]->max_bytes = SIZE_MAX;
    if (!rc) {
        for (size_t k = 0; k < n; k++) start[calls[k].prog + 1]++;
        for (size_t q = 0; q < np; q++) start[q + 1] += start[q];
        size_t *fillp = tdm_malloc((np ? np : 1) * sizeof *fillp);
        if (!fillp) rc = tdm_error(TDM_E_NOMEM, "batch: out of memory");
        for (size_t q = 0; !rc && q < np; q++) fillp[q] = start[q];
        for (size_t k = 0; !rc && k < n; k++) idx[fillp[calls[k].prog]++] = k;
        tdm_free(fillp);
    }
    for (size_t q = 0; !rc && q < np; q++)
        if (start[q + 1] > start[q]) rc = run_program(x, rt, x->threads, p, q, calls, idx + start[q], start[q + 1] - start[q], b);
    for (int t = 0; rt && t < x->threads; t++) tdm_arc_rt_free(rt[t]);
    tdm_free(rt), tdm_free(idx), tdm_free(start);
    return rc;
}

static void clear_results(tdm_arc_batch *b) {
    for (size_t c = 0; c < b->n; c++) {
        tdm_free(b->res[c].cells), tdm_free(b->res[c].repr), tdm_free(b->res[c].error);
        memset(&b->res[c], 0, sizeof b->res[c]);
    }
    memset(b->counts->exec, 0, sizeof b->counts->exec);
}

static void fill_stats(tdm_arc_batch *b) {
    for (int id = 0; id < ARC_NPRIM; id++) {
        b->counts->stats[id].calls = b->counts->exec[id].batched + b->counts->exec[id].fallback;
        b->counts->stats[id].ns = b->counts->exec[id].batched_ns + b->counts->exec[id].fallback_ns;
    }
}

/* Ends a batch run: its time, then its statistics and *out, or on failure the batch freed and rc. */
static int conclude(tdm_arc_batch *b, int rc, uint64_t t0, tdm_arc_batch **out) {
    b->seconds = (double)(now_ns() - t0) * 1e-9;
    if (rc) {
        tdm_arc_batch_free(b);
        return rc;
    }
    fill_stats(b);
    *out = b;
    return TDM_OK;
}

int arc_batch_exec_ops(const tdm_backend *be, const tdm_arc_dev_ops *ops, const tdm_arc_programs *p,
                       const tdm_arc_call_ref *calls, size_t n, int threads, tdm_arc_batch **out) {
    if (!ops || !p || !out || (n && !calls)) return tdm_error(TDM_E_INVAL, "arc_batch_exec_ops: NULL argument");
    int rc = arc_check_calls(p, calls, n, "tdm_arc_batch_exec");
    if (rc) return rc;
    if (threads <= 0) threads = omp_get_max_threads();
    tdm_arc_batch *b = arc_batch_alloc(n, 1);
    if (!b) return tdm_error(TDM_E_NOMEM, "arc_batch_exec_ops: no memory for %zu results", n);
    b->threads = threads, b->backend = "test-device";
    xdev x = {.b = be, .dev = ops, .threads = threads};
    uint64_t t0 = now_ns();
    rc = exec_on(&x, p, calls, n, b);
    return conclude(b, rc, t0, out);
}

int tdm_arc_batch_exec(tdm_ctx *ctx, const tdm_arc_programs *p, const tdm_arc_call_ref *calls, size_t n,
                       tdm_device_pref pref, int threads, tdm_arc_batch **out) {
    if (!ctx || !p || !out || (n && !calls)) return tdm_error(TDM_E_INVAL, "tdm_arc_batch_exec: NULL argument");
    int crc = arc_check_calls(p, calls, n, "tdm_arc_batch_exec");
    if (crc) return crc;
    if (threads <= 0) threads = tdm_ctx_threads(ctx);
    if (threads <= 0) threads = 1;
    tdm_arc_batch *b = arc_batch_alloc(n, 1);
    if (!b) return tdm_error(TDM_E_NOMEM, "tdm_arc_batch_exec: no memory for %zu results", n);
    b->threads = threads;
    xdev cpu = {.threads = threads}, gpu = cpu;
    const tdm_backend *dev = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
    int strict = tdm_ctx_config(ctx)->strict;
    if (dev && dev->arc && dev->arc->bop_run && pref != TDM_DEVICE_CPU && (pref == TDM_DEVICE_CUDA || n >= GPU_MIN_CALLS))
        gpu.b = dev, gpu.dev = dev->arc;
    else if (pref == TDM_DEVICE_CUDA && strict) {
        tdm_arc_batch_free(b);
        return tdm_error(TDM_E_UNSUPPORTED, "tdm_arc_batch_exec: no GPU with the ARC kernels");
    }
    uint64_t t0 = now_ns();
    int rc = TDM_OK;
    if (gpu.dev) {
        b->backend = dev->name;
        rc = exec_on(&gpu, p, calls, n, b);
        if (rc && !(pref == TDM_DEVICE_CUDA && strict) && rc != TDM_E_NOMEM) {
            tdm_log(TDM_LOG_WARN, "arc exec: %s failed (%s: %s); the CPU runs the batch", dev->name, tdm_status_name(rc),
                    tdm_last_error());
            clear_results(b);
            b->backend = "cpu", gpu.dev = NULL;
        }
    }
    if (!gpu.dev) rc = exec_on(&cpu, p, calls, n, b);
    return conclude(b, rc, t0, out);
}
