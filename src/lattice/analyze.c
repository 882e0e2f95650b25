/* analyze.c: structure analysis of any CSR graph (spec section 2). Every metric is computed from the graph
 * itself, never taken from the lattice's closed forms (those are the tests' oracles): degrees in one pass,
 * components and bipartiteness by BFS labelling, triangles by merging sorted adjacency lists over u < v
 * edges, and the exact diameter by BoundingDiameters (Takes and Kosters, CIKM 2011) with the spec's
 * deterministic selection rule, so the number of BFS sweeps is reproducible. */
#include "lattice/lattice_internal.h"
#include "lattice/lattice_device.h"

#include <stdlib.h>
#include <string.h>

static int degrees(const tdm_lattice_csr *g, tdm_lattice_analysis *out) {
    const int64_t V = g->nvertices;
    int64_t dmin = V ? INT64_MAX : 0, dmax = 0;
    for (int64_t v = 0; v < V; v++) {
        int64_t k = g->row_ptr[v + 1] - g->row_ptr[v];
        if (k < dmin) dmin = k;
        if (k > dmax) dmax = k;
    }
    int64_t *hist = tdm_calloc((size_t)dmax + 1, sizeof *hist);
    if (!hist) return tdm_error(TDM_E_NOMEM, "analyze: no memory for a degree histogram of %lld entries", (long long)dmax + 1);
    for (int64_t v = 0; v < V; v++) hist[g->row_ptr[v + 1] - g->row_ptr[v]]++;
    out->degree_min = dmin;
    out->degree_max = dmax;
    out->degree_hist = hist;
    out->degree_mean = V ? 2.0 * (double)out->edges / (double)V : 0.0;
    out->density = V >= 2 ? 2.0 * (double)out->edges / ((double)V * (double)(V - 1)) : 0.0;
    return TDM_OK;
}

/* Labels components by BFS; level parity decides bipartiteness (no edge may join equal parities). */
static void components(const tdm_lattice_csr *g, int32_t *dist, int32_t *queue, tdm_lattice_analysis *out) {
    const int64_t V = g->nvertices;
    memset(dist, 0xff, (size_t)V * sizeof *dist);
    int64_t ncomp = 0;
    for (int64_t v = 0; v < V; v++) {
        if (dist[v] >= 0) continue;
        tdm_lat_bfs(g, v, dist, queue, NULL, 0, NULL);
        ncomp++;
    }
    int bip = 1;
    for (int64_t v = 0; v < V && bip; v++)
        for (int64_t a = g->row_ptr[v]; a < g->row_ptr[v + 1]; a++)
            if (((dist[v] ^ dist[g->col[a]]) & 1) == 0) {
                bip = 0;
                break;
            }
    out->components = ncomp;
    out->connected = ncomp == 1;
    out->bipartite = bip;
}

static int triangles(const tdm_lattice_csr *g, tdm_lattice_analysis *out) {
    const int64_t V = g->nvertices;
    int64_t *tv = tdm_calloc((size_t)V + 1, sizeof *tv);
    if (!tv) return tdm_error(TDM_E_NOMEM, "analyze: no memory for per-vertex triangle counts");
    int64_t total = 0;
    for (int64_t u = 0; u < V; u++) {
        const int64_t ue = g->row_ptr[u + 1];
        for (int64_t a = g->row_ptr[u]; a < ue; a++) {
            const int32_t v = g->col[a];
            if (v <= u) continue;
            /* Common neighbours w > v of u and v: each triangle u < v < w is counted once. */
            int64_t i = a + 1, j = g->row_ptr[v];
            const int64_t ve = g->row_ptr[v + 1];
            while (j < ve && g->col[j] <= v) j++;
            while (i < ue && j < ve) {
                const int32_t x = g->col[i], y = g->col[j];
                if (x < y) i++;
                else if (y < x) j++;
                else {
                    tv[u]++, tv[v]++, tv[x]++, total++;
                    i++, j++;
                }
            }
        }
    }
    double csum = 0.0, wedges = 0.0;
    for (int64_t v = 0; v < V; v++) {
        const double k = (double)(g->row_ptr[v + 1] - g->row_ptr[v]);
        if (k < 2) continue;
        csum += 2.0 * (double)tv[v] / (k * (k - 1.0));
        wedges += k * (k - 1.0) / 2.0;
    }
    tdm_free(tv);
    out->triangles = total;
    out->avg_clustering = V ? csum / (double)V : 0.0;
    out->transitivity = wedges > 0 ? 3.0 * (double)total / wedges : 0.0;
    return TDM_OK;
}

/* BoundingDiameters with the spec's rule: odd rounds take the candidate with the largest upper bound,
 * even rounds the smallest lower bound; ties go to the larger degree, then the lower id. */
static int diameter(tdm_ctx *ctx, const tdm_lattice_csr *g, const tdm_backend *dev, int32_t *dist, int32_t *queue,
                    tdm_lattice_analysis *out) {
    const int max_bfs = tdm_ctx_config(ctx)->analyze_max_bfs;
    const int64_t V = g->nvertices;
    if (V < 1) return TDM_OK; /* only called on connected graphs; keeps the sizes below visibly positive */
    int32_t *lo = tdm_calloc((size_t)V, sizeof *lo), *hi = tdm_malloc((size_t)V * sizeof *hi);
    unsigned char *cand = tdm_malloc((size_t)V);
    if (!lo || !hi || !cand) {
        tdm_free(lo), tdm_free(hi), tdm_free(cand);
        return tdm_error(TDM_E_NOMEM, "analyze: no memory for eccentricity bounds of %lld vertices", (long long)V);
    }
    for (int64_t v = 0; v < V; v++) hi[v] = INT32_MAX;
    memset(cand, 1, (size_t)V);
    int64_t ncand = V, runs = 0;
    int32_t dlo = 0, dhi = INT32_MAX;
    for (int64_t round = 1; dlo != dhi && ncand > 0 && runs < max_bfs; round++) {
        int64_t best = -1, best_deg = -1;
        for (int64_t v = 0; v < V; v++) {
            if (!cand[v]) continue;
            const int64_t deg = g->row_ptr[v + 1] - g->row_ptr[v];
            int better;
            if (best < 0) better = 1;
            else if (round & 1) better = hi[v] > hi[best] || (hi[v] == hi[best] && deg > best_deg);
            else better = lo[v] < lo[best] || (lo[v] == lo[best] && deg > best_deg);
            if (better) best = v, best_deg = deg;
        }
        int32_t e = -1;
        if (dev->kind != TDM_BACKEND_CPU) {
            /* A device sweep (large graphs): same distances, so the same bounds and the same run count. */
            int rc = dev->lattice->bfs_dist(dev, g, best, dist);
            tdm_lat_bfs_device_ran(ctx, g, rc == TDM_OK);
            if (rc == TDM_OK) {
                for (int64_t v = 0; v < V; v++)
                    if (dist[v] > e) e = dist[v];
            } else if ((rc = tdm_lat_device_failed(ctx, dev, TDM_OP_LATTICE_BFS, rc))) {
                tdm_free(lo), tdm_free(hi), tdm_free(cand);
                return rc;
            } else {
                dev = tdm_backend_get(ctx, 0);
            }
        }
        if (e < 0) {
            memset(dist, 0xff, (size_t)V * sizeof *dist);
            tdm_lat_bfs(g, best, dist, queue, NULL, 0, &e);
        }
        runs++;
        dlo = 0, dhi = 0;
        for (int64_t v = 0; v < V; v++) {
            const int32_t d = dist[v], far = e - d;
            int32_t l = lo[v];
            if (d > l) l = d;
            if (far > l) l = far;
            lo[v] = l;
            if (e + d < hi[v]) hi[v] = e + d;
            if (lo[v] > dlo) dlo = lo[v];
            if (hi[v] > dhi) dhi = hi[v];
        }
        for (int64_t v = 0; v < V; v++)
            if (cand[v] && (lo[v] == hi[v] || (hi[v] <= dlo && 2 * (int64_t)lo[v] >= dhi))) cand[v] = 0, ncand--;
    }
    out->diameter_bfs = runs;
    out->diameter_lo = dlo;
    out->diameter_hi = dlo == dhi || ncand == 0 ? dlo : dhi;
    out->diameter_exact = out->diameter_lo == out->diameter_hi;
    out->diameter = dlo;
    out->backend_diameter = dev->name;
    tdm_free(lo), tdm_free(hi), tdm_free(cand);
    return TDM_OK;
}

int tdm_lattice_analyze(tdm_ctx *ctx, const tdm_lattice_csr *g, unsigned flags, tdm_lattice_analysis *out) {
    if (!ctx || !g || !out) return tdm_error(TDM_E_INVAL, "tdm_lattice_analyze: NULL argument");
    if (flags & ~TDM_LATTICE_ANALYZE_ALL) return tdm_error(TDM_E_INVAL, "tdm_lattice_analyze: unknown flags 0x%x", flags);
    if (flags & TDM_LATTICE_ANALYZE_DIAMETER) flags |= TDM_LATTICE_ANALYZE_COMPONENTS;
    tdm_lattice_analysis a;
    memset(&a, 0, sizeof a);
    a.diameter = a.diameter_lo = a.diameter_hi = -1;
    a.flags = flags;
    double t = tdm_now_ms();
    int rc = tdm_lattice_csr_validate(g);
    if (rc) return rc;
    tdm_lat_req q = {.op = TDM_OP_LATTICE_BFS, .pref = TDM_DEVICE_AUTO};
    tdm_lat_placement pl;
    if ((rc = tdm_lat_place(ctx, &q, &pl))) return rc;
    a.backend = pl.backend->name;
    a.ms_validate = tdm_now_ms() - t;
    a.vertices = g->nvertices;
    a.edges = g->row_ptr[g->nvertices] / 2;
    if (flags & TDM_LATTICE_ANALYZE_DEGREES) {
        t = tdm_now_ms();
        if ((rc = degrees(g, &a))) return rc;
        a.ms_degrees = tdm_now_ms() - t;
    }
    int32_t *dist = NULL, *queue = NULL;
    if (flags & (TDM_LATTICE_ANALYZE_COMPONENTS | TDM_LATTICE_ANALYZE_DIAMETER)) {
        dist = tdm_malloc((size_t)g->nvertices * sizeof *dist + 1);
        queue = tdm_malloc((size_t)g->nvertices * sizeof *queue + 1);
        if (!dist || !queue) {
            rc = tdm_error(TDM_E_NOMEM, "analyze: no memory for BFS over %lld vertices", (long long)g->nvertices);
            goto fail;
        }
        t = tdm_now_ms();
        components(g, dist, queue, &a);
        a.ms_components = tdm_now_ms() - t;
    }
    if (flags & TDM_LATTICE_ANALYZE_TRIANGLES) {
        t = tdm_now_ms();
        if ((rc = triangles(g, &a))) goto fail;
        a.ms_triangles = tdm_now_ms() - t;
    }
    if ((flags & TDM_LATTICE_ANALYZE_DIAMETER) && a.connected) {
        t = tdm_now_ms();
        /* The sweeps are BFS ops of their own: a device may take them. Placed as one sweep from some
         * vertex; the CSR upload, when it is not resident yet, is paid once for all of them. */
        tdm_lat_bfs_est est;
        tdm_lat_bfs_estimate(ctx, g, -1, -1, &est);
        const uint64_t V4 = 4u * (uint64_t)g->nvertices;
        tdm_lat_req dq = {.op = TDM_OP_LATTICE_BFS, .pref = TDM_DEVICE_AUTO, .device_ok = 1, .work = est.arcs,
                          .levels = est.levels, .h2d_bytes = est.resident ? 0 : est.csr_bytes, .d2h_bytes = V4,
                          .device_bytes = est.resident ? 0 : est.csr_bytes + 3 * V4, .resident = est.resident};
        if ((rc = tdm_lat_place(ctx, &dq, &pl))) goto fail;
        if ((rc = diameter(ctx, g, pl.backend, dist, queue, &a))) goto fail;
        a.ms_diameter = tdm_now_ms() - t;
    }
    tdm_free(dist);
    tdm_free(queue);
    *out = a;
    return TDM_OK;
fail:
    tdm_free(dist);
    tdm_free(queue);
    tdm_free(a.degree_hist);
    return rc;
}

void tdm_lattice_analysis_release(tdm_lattice_analysis *a) {
    if (!a) return;
    tdm_free(a->degree_hist);
    a->degree_hist = NULL;
}
