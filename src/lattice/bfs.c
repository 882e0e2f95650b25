/* bfs.c: breadth-first search over CSR (spec section 3): the top-down queue kernel every lattice metric
 * builds on, shortest paths by the tie rule (lowest-id predecessor, walking back from t), batches grouped
 * by source, and multi-source sweeps.
 *
 * The path is rebuilt from distances only, never from a "first discoverer" parent array, because the
 * discovery order of a parallel (GPU) frontier is not deterministic while distances are: this is what
 * makes every backend return the same path. An s-t query stops once t is labelled; at that point every
 * vertex closer than t is labelled, which is all the backward walk reads. */
#include "lattice/lattice_internal.h"
#include "lattice/lattice_device.h"

#include <assert.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* The queue is level-ordered but not id-ordered, so on large graphs each dequeued vertex's row offset and
 * adjacency list are cache misses; fetching them a few vertices ahead hides most of that latency (about a
 * third off a 10^6-vertex sweep). Graphs whose CSR fits in cache skip it: there the prefetches cost about
 * 15 % (4D/10) and save nothing. */
#define BFS_PREFETCH_ROW 8 /* row_ptr of the vertex this many places ahead in the queue */
#define BFS_PREFETCH_COL 2 /* its adjacency list for the vertex this many places ahead */
#define BFS_PREFETCH_MIN_V 32768 /* vertices from which the prefetches pay (4D/10 no, 4D/18 yes) */

/* always_inline: GCC 12 otherwise may judge a function holding only prefetches free of effects and drop
 * every call to it (seen at -O2). */
static inline __attribute__((always_inline)) void bfs_prefetch(const int64_t *row, const int32_t *col, const int32_t *queue, int64_t head, int64_t tail) {
    if (head + BFS_PREFETCH_ROW < tail) __builtin_prefetch(&row[queue[head + BFS_PREFETCH_ROW]]);
    if (head + BFS_PREFETCH_COL < tail) __builtin_prefetch(&col[row[queue[head + BFS_PREFETCH_COL]]]);
}

int64_t tdm_lat_bfs(const tdm_lattice_csr *g, int64_t s, int32_t *dist, int32_t *queue, const int64_t *stop,
                    size_t nstop, int32_t *ecc) {
    const int64_t *row = g->row_ptr;
    const int32_t *col = g->col;
    int64_t head = 0, tail = 0;
    int32_t maxd = 0;
    size_t cursor = 0; /* several targets: first one not yet known to be labelled */
    dist[s] = 0;
    queue[tail++] = (int32_t)s;
    const int64_t single = nstop == 1 ? stop[0] : -1;
    if (single == s) goto done;
    if (nstop > 1) {
        while (cursor < nstop && dist[stop[cursor]] >= 0) cursor++;
        if (cursor == nstop) goto done;
    }
    /* One pass per level: the label is the loop's, not loaded from dist[u] per vertex (a dependent load
     * that cost a quarter of a 4D/10 sweep). */
    const int prefetch = g->nvertices >= BFS_PREFETCH_MIN_V;
    for (int32_t du = 1; head < tail; du++) {
        const int64_t level_end = tail;
        for (; head < level_end; head++) {
            if (prefetch) bfs_prefetch(row, col, queue, head, tail);
            const int32_t u = queue[head];
            for (int64_t a = row[u], e = row[u + 1]; a < e; a++) {
                const int32_t w = col[a];
                if (dist[w] >= 0) continue;
                dist[w] = du;
                queue[tail++] = w;
                if (w == single) {
                    maxd = du;
                    goto done;
                }
            }
        }
        if (tail > level_end) maxd = du;
        /* A level is complete: with several targets this is where we check them (amortised O(nstop)). */
        if (nstop > 1) {
            while (cursor < nstop && dist[stop[cursor]] >= 0) cursor++;
            if (cursor == nstop) break;
        }
    }
done:
    if (ecc) *ecc = maxd;
    return tail;
}

int tdm_lat_path_from_dist(const tdm_lattice_csr *g, const int32_t *dist, int64_t t, tdm_lattice_path *out) {
    const int64_t k = dist[t];
    int64_t *vx = tdm_malloc((size_t)(k + 1) * sizeof *vx);
    if (!vx) return tdm_error(TDM_E_NOMEM, "shortest path: no memory for %lld vertices", (long long)(k + 1));
    int64_t v = t;
    vx[k] = t;
    for (int64_t j = k; j > 0; j--) {
        int64_t a = g->row_ptr[v], e = g->row_ptr[v + 1];
        while (a < e && dist[g->col[a]] != j - 1) a++;
        /* dist came from a BFS over this graph, so a predecessor one level closer always exists. */
        assert(a < e);
        v = g->col[a];
        vx[j - 1] = v;
    }
    out->hops = k;
    out->vertex = vx;
    return TDM_OK;
}

void tdm_lattice_path_release(tdm_lattice_path *p) {
    if (!p) return;
    tdm_free(p->vertex);
    p->vertex = NULL;
    p->hops = -1;
}

static int check_graph(const char *fn, const tdm_lattice_csr *g) {
    if (!g || !g->row_ptr || (g->nvertices > 0 && g->row_ptr[g->nvertices] > 0 && !g->col))
        return tdm_error(TDM_E_INVAL, "%s: graph is NULL or incomplete", fn);
    if (g->nvertices < 0 || g->nvertices > TDM_LATTICE_MAX_VERTICES)
        return tdm_error(TDM_E_INVAL, "%s: %lld vertices outside 0..2^31-1", fn, (long long)g->nvertices);
    return TDM_OK;
}

static int check_vertex(const char *fn, const char *what, const tdm_lattice_csr *g, int64_t v) {
    if (v < 0 || v >= g->nvertices)
        return tdm_error(TDM_E_RANGE, "%s: %s vertex %lld outside 0..%lld", fn, what, (long long)v,
                         (long long)(g->nvertices - 1));
    return TDM_OK;
}

int tdm_lattice_sp(tdm_ctx *ctx, const tdm_lattice_csr *g, int64_t s, int64_t t, int pref, tdm_lattice_path *out) {
    if (!ctx || !out) return tdm_error(TDM_E_INVAL, "tdm_lattice_sp: %s is NULL", ctx ? "out" : "ctx");
    int rc;
    if ((rc = check_graph("tdm_lattice_sp", g)) || (rc = check_vertex("tdm_lattice_sp", "source", g, s)) ||
        (rc = check_vertex("tdm_lattice_sp", "target", g, t)))
        return rc;
    double t0 = tdm_now_ms();
    tdm_lattice_path p = {.hops = -1, .vertex = NULL, .cache_hit = 0};
    if (tdm_lat_cache_get(ctx, g->id, s, t, &p)) {
        p.backend = "cache";
        p.cache_hit = 1;
        p.ms = tdm_now_ms() - t0;
        *out = p;
        return TDM_OK;
    }
    tdm_lat_bfs_est est;
    tdm_lat_bfs_estimate(ctx, g, s, t, &est);
    tdm_lat_req q = {.op = TDM_OP_LATTICE_BFS, .pref = pref, .device_ok = 1, .work = est.arcs, .levels = est.levels,
                     .h2d_bytes = est.resident ? 0 : est.csr_bytes, .d2h_bytes = 8u * (uint64_t)(est.levels + 1),
                     .device_bytes = est.resident ? 0 : est.csr_bytes + 12u * (uint64_t)g->nvertices,
                     .resident = est.resident};
    tdm_lat_placement pl;
    if ((rc = tdm_lat_place(ctx, &q, &pl))) return rc;
    const tdm_backend *b = pl.backend;
    if (b->kind != TDM_BACKEND_CPU) {
        int64_t *vx, hops;
        rc = b->lattice->bfs_path(b, g, s, t, &vx, &hops);
        tdm_lat_bfs_device_ran(ctx, g, rc == TDM_OK);
        if (rc == TDM_OK) {
            tdm_lat_placed_done(ctx, &pl);
            p.backend = b->name;
            p.vertex = vx;
            p.hops = hops;
            p.ms = tdm_now_ms() - t0;
            *out = p;
            if (hops >= 0) tdm_lat_cache_put(ctx, g->id, s, t, &p);
            if (hops < 0)
                return tdm_error(TDM_E_NOPATH, "tdm_lattice_sp: vertex %lld is not reachable from %lld", (long long)t,
                                 (long long)s);
            return TDM_OK;
        }
        if ((rc = tdm_lat_device_failed(ctx, b, TDM_OP_LATTICE_BFS, rc))) return rc;
        b = tdm_backend_get(ctx, 0);
    }
    p.backend = b->name;
    tdm_lat_ws *ws = tdm_lat_ws_take(ctx, (size_t)g->nvertices);
    if (!ws) return tdm_error(TDM_E_NOMEM, "tdm_lattice_sp: no memory for BFS over %lld vertices", (long long)g->nvertices);
    const int64_t labelled = tdm_lat_bfs(g, s, ws->dist, ws->queue, &t, 1, NULL);
    if (ws->dist[t] < 0)
        rc = tdm_error(TDM_E_NOPATH, "tdm_lattice_sp: vertex %lld is not reachable from %lld", (long long)t, (long long)s);
    else
        rc = tdm_lat_path_from_dist(g, ws->dist, t, &p);
    tdm_lat_ws_clean(ws, labelled);
    tdm_lat_ws_give(ctx, ws);
    if (rc && rc != TDM_E_NOPATH) return rc;
    if (rc == TDM_OK) tdm_lat_cache_put(ctx, g->id, s, t, &p);
    if (pl.backend->kind == TDM_BACKEND_CPU) tdm_lat_placed_done(ctx, &pl); /* not after a fallback */
    p.ms = tdm_now_ms() - t0;
    *out = p;
    return rc;
}

/* Batch items sorted by (source, target) so that each source's targets are contiguous. */
typedef struct {
    int64_t s, t;
    size_t item;
} pair_ref;

static int cmp_pair(const void *a, const void *b) {
    const pair_ref *x = a, *y = b;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->item < y->item ? -1 : x->item > y->item;
}

int tdm_lattice_sp_batch(tdm_ctx *ctx, const tdm_lattice_csr *g, size_t n, const int64_t *src, const int64_t *dst,
                         int pref, tdm_lattice_path *paths, int *status) {
    if (!ctx || (n && (!src || !dst || !paths || !status)))
        return tdm_error(TDM_E_INVAL, "tdm_lattice_sp_batch: NULL argument");
    int rc = check_graph("tdm_lattice_sp_batch", g);
    if (rc) return rc;
    tdm_lat_req q = {.op = TDM_OP_LATTICE_BFS, .pref = pref};
    tdm_lat_placement pl;
    if ((rc = tdm_lat_place(ctx, &q, &pl))) return rc;
    const char *backend = pl.backend->name;
    if (!n) return TDM_OK;
    pair_ref *refs = tdm_malloc(n * sizeof *refs);
    int64_t *targets = tdm_malloc(n * sizeof *targets);
    if (!refs || !targets) {
        tdm_free(refs);
        tdm_free(targets);
        return tdm_error(TDM_E_NOMEM, "tdm_lattice_sp_batch: no memory for %zu items", n);
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        paths[i] = (tdm_lattice_path){.hops = -1, .vertex = NULL, .backend = backend};
        status[i] = TDM_OK;
        if (src[i] < 0 || src[i] >= g->nvertices || dst[i] < 0 || dst[i] >= g->nvertices) {
            int bad_src = src[i] < 0 || src[i] >= g->nvertices;
            status[i] = TDM_E_RANGE;
            tdm_error(TDM_E_RANGE, "tdm_lattice_sp_batch: item %zu: %s vertex %lld outside 0..%lld", i,
                      bad_src ? "source" : "target", (long long)(bad_src ? src[i] : dst[i]),
                      (long long)(g->nvertices - 1));
            continue;
        }
        refs[m++] = (pair_ref){src[i], dst[i], i};
    }
    qsort(refs, m, sizeof *refs, cmp_pair);
    for (size_t i = 0; i < m; i++) targets[i] = refs[i].t;
    /* Group starts: one BFS per distinct source. */
    size_t ngroups = 0;
    size_t *start = tdm_malloc((m + 1) * sizeof *start);
    if (!start) {
        tdm_free(refs);
        tdm_free(targets);
        return tdm_error(TDM_E_NOMEM, "tdm_lattice_sp_batch: no memory for %zu items", n);
    }
    for (size_t i = 0; i < m; i++)
        if (i == 0 || refs[i].s != refs[i - 1].s) start[ngroups++] = i;
    start[ngroups] = m;
    const size_t V = (size_t)g->nvertices;
    int nomem = 0;
    int threads = tdm_ctx_threads(ctx);
    if ((size_t)threads > ngroups) threads = (int)ngroups;
#pragma omp parallel num_threads(threads) if (threads > 1) reduction(| : nomem)
    {
        tdm_lat_ws *ws = tdm_lat_ws_take(ctx, V);
#pragma omp for schedule(dynamic, 1)
        for (size_t gi = 0; gi < ngroups; gi++) {
            const size_t lo = start[gi], hi = start[gi + 1];
            if (!ws) {
                for (size_t i = lo; i < hi; i++) status[refs[i].item] = TDM_E_NOMEM;
                nomem = 1;
                continue;
            }
            double t0 = tdm_now_ms();
            const int32_t *dist = ws->dist;
            const int64_t labelled = tdm_lat_bfs(g, refs[lo].s, ws->dist, ws->queue, targets + lo, hi - lo, NULL);
            double bfs_ms = tdm_now_ms() - t0;
            for (size_t i = lo; i < hi; i++) {
                double t1 = tdm_now_ms();
                tdm_lattice_path *p = &paths[refs[i].item];
                if (dist[refs[i].t] < 0) status[refs[i].item] = TDM_E_NOPATH;
                else if (tdm_lat_path_from_dist(g, dist, refs[i].t, p)) status[refs[i].item] = TDM_E_NOMEM, nomem = 1;
                p->ms = bfs_ms + (tdm_now_ms() - t1);
            }
            tdm_lat_ws_clean(ws, labelled);
        }
        tdm_lat_ws_give(ctx, ws);
    }
    if (nomem) tdm_error(TDM_E_NOMEM, "tdm_lattice_sp_batch: some items ran out of memory (status TDM_E_NOMEM)");
    tdm_free(start);
    tdm_free(refs);
    tdm_free(targets);
    return TDM_OK;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int tdm_lattice_bfs_multi(tdm_ctx *ctx, const tdm_lattice_csr *g, const int64_t *sources, size_t nsources,
                          int32_t *dist, int64_t *nearest) {
    if (!ctx || !sources || !dist) return tdm_error(TDM_E_INVAL, "tdm_lattice_bfs_multi: NULL argument");
    if (!nsources) return tdm_error(TDM_E_INVAL, "tdm_lattice_bfs_multi: no sources");
    int rc = check_graph("tdm_lattice_bfs_multi", g);
    if (rc) return rc;
    for (size_t i = 0; i < nsources; i++)
        if (sources[i] < 0 || sources[i] >= g->nvertices)
            return tdm_error(TDM_E_RANGE, "tdm_lattice_bfs_multi: sources[%zu] = %lld outside 0..%lld", i,
                             (long long)sources[i], (long long)(g->nvertices - 1));
    /* A single source is a plain sweep, which a device can run; several sources stay on the CPU. */
    const int sweep = nsources == 1 && !nearest;
    tdm_lat_bfs_est est;
    tdm_lat_bfs_estimate(ctx, g, sources[0], -1, &est);
    const uint64_t V4 = 4u * (uint64_t)g->nvertices;
    tdm_lat_req q = {.op = TDM_OP_LATTICE_BFS, .pref = TDM_DEVICE_AUTO, .device_ok = sweep, .work = est.arcs,
                     .levels = est.levels, .h2d_bytes = est.resident ? 0 : est.csr_bytes, .d2h_bytes = V4,
                     .device_bytes = est.resident ? 0 : est.csr_bytes + 3 * V4, .resident = est.resident};
    tdm_lat_placement pl;
    if ((rc = tdm_lat_place(ctx, &q, &pl))) return rc;
    const tdm_backend *b = pl.backend;
    if (b->kind != TDM_BACKEND_CPU) {
        rc = b->lattice->bfs_dist(b, g, sources[0], dist);
        tdm_lat_bfs_device_ran(ctx, g, rc == TDM_OK);
        if (rc == TDM_OK) {
            tdm_lat_placed_done(ctx, &pl);
            return TDM_OK;
        }
        if ((rc = tdm_lat_device_failed(ctx, b, TDM_OP_LATTICE_BFS, rc))) return rc;
    }
    const size_t V = (size_t)g->nvertices;
    int64_t *srt = tdm_malloc(nsources * sizeof *srt);
    tdm_lat_ws *ws = tdm_lat_ws_take(ctx, V); /* its queue only: dist is the caller's */
    if (!srt || !ws) {
        tdm_free(srt);
        tdm_lat_ws_give(ctx, ws);
        return tdm_error(TDM_E_NOMEM, "tdm_lattice_bfs_multi: no memory for %zu vertices", V);
    }
    int32_t *queue = ws->queue;
    if (nsources == 1 && !nearest) { /* the plain sweep: the shortest paths' kernel */
        memset(dist, 0xff, V * sizeof *dist);
        tdm_lat_bfs(g, sources[0], dist, queue, NULL, 0, NULL);
        tdm_free(srt);
        tdm_lat_ws_give(ctx, ws);
        if (pl.backend->kind == TDM_BACKEND_CPU) tdm_lat_placed_done(ctx, &pl); /* not after a fallback */
        return TDM_OK;
    }
    memcpy(srt, sources, nsources * sizeof *srt);
    qsort(srt, nsources, sizeof *srt, cmp_i64);
    memset(dist, 0xff, V * sizeof *dist);
    if (nearest)
        for (size_t v = 0; v < V; v++) nearest[v] = -1;
    int64_t tail = 0, head = 0;
    for (size_t i = 0; i < nsources; i++) {
        if (i && srt[i] == srt[i - 1]) continue;
        dist[srt[i]] = 0;
        if (nearest) nearest[srt[i]] = srt[i];
        queue[tail++] = (int32_t)srt[i];
    }
    /* Level order means every vertex of level k is final before level k+1 is scanned, so a level-(k+1)
     * vertex takes the minimum nearest source over all its level-k neighbours, whatever the queue order. */
    const int64_t *row = g->row_ptr;
    const int32_t *col = g->col;
    const int prefetch = g->nvertices >= BFS_PREFETCH_MIN_V;
    while (head < tail) {
        if (prefetch) bfs_prefetch(row, col, queue, head, tail);
        const int32_t u = queue[head++];
        const int32_t du = dist[u] + 1;
        for (int64_t a = row[u], e = row[u + 1]; a < e; a++) {
            const int32_t w = col[a];
            if (dist[w] < 0) {
                dist[w] = du;
                if (nearest) nearest[w] = nearest[u];
                queue[tail++] = w;
            } else if (nearest && dist[w] == du && nearest[u] < nearest[w]) {
                nearest[w] = nearest[u];
            }
        }
    }
    tdm_free(srt);
    tdm_lat_ws_give(ctx, ws); /* its dist was not touched */
    return TDM_OK;
}
