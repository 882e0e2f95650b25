/* lattice.c: the d-dimensional open-boundary grid as CSR (spec section 1): size checks that refuse L^d
 * overflow before multiplying, the CSR build in O(V+E) without per-vertex coordinate storage, indexing,
 * and validation of arbitrary CSR graphs for the engine's other entry points.
 *
 * The build walks vertices in id order with an odometer over the coordinates (one increment per vertex,
 * no division), in parallel chunks: each chunk starts its odometer from its first id, counts degrees,
 * then after an exclusive scan of the chunk totals fills its own rows. Each row is written as the moves
 * -s_0, ..., -s_{d-1}, +s_{d-1}, ..., +s_0, which is ascending because s_0 > s_1 > ... > s_{d-1}. */
#include "lattice/lattice_internal.h"
#include "lattice/lattice_device.h"

#include <assert.h>
#include <omp.h>
#include <stdatomic.h>
#include <string.h>

static atomic_uint_fast64_t next_graph_id = 1;

uint64_t tdm_lat_next_id(void) { return atomic_fetch_add(&next_graph_id, 1); }

int tdm_lat_device_failed(tdm_ctx *ctx, const tdm_backend *b, tdm_op op, int rc) {
    if (tdm_ctx_config(ctx)->strict) return rc;
    tdm_log(TDM_LOG_WARN, "%s on %s failed (%s: %s): answering on the CPU (DEVICE_ERROR)", tdm_op_name(op), b->name,
            tdm_strerror(rc), tdm_last_error());
    return TDM_OK;
}

int tdm_lattice_sizes(int d, int64_t L, int64_t *vertices, int64_t *edges, uint64_t *csr_bytes) {
    if (d < 1 || d > TDM_LATTICE_MAX_DIMS)
        return tdm_error(TDM_E_INVAL, "lattice: dimensions d=%d outside 1..%d", d, TDM_LATTICE_MAX_DIMS);
    if (L < 2 || L > TDM_LATTICE_MAX_VERTICES)
        return tdm_error(TDM_E_INVAL, "lattice: side L=%lld outside 2..2147483647", (long long)L);
    int64_t V = 1;
    for (int i = 0; i < d; i++) {
        if (V > TDM_LATTICE_MAX_VERTICES / L)
            return tdm_error(TDM_E_OVERFLOW,
                             "lattice: L^d = %lld^%d exceeds 2^31-1 vertices (overflows at dimension %d of %d)",
                             (long long)L, d, i + 1, d);
        V *= L;
    }
    /* E = d * L^(d-1) * (L-1) = d * (V / L) * (L - 1) <= d * V < 2^36: no overflow in int64. */
    int64_t E = (int64_t)d * (V / L) * (L - 1);
    if (vertices) *vertices = V;
    if (edges) *edges = E;
    if (csr_bytes) *csr_bytes = 8u * (uint64_t)(V + 1) + 8u * (uint64_t)E;
    return TDM_OK;
}

/* Coordinates of v by division: used once per chunk to start the odometer and by tdm_lattice_coords. */
static void coords_of(const tdm_lattice *lat, int64_t v, int64_t *c) {
    for (int i = lat->d - 1; i >= 0; i--) {
        c[i] = v % lat->L;
        v /= lat->L;
    }
}

static inline void odometer_step(int64_t *c, int d, int64_t L) {
    for (int i = d - 1; i >= 0; i--) {
        if (++c[i] < L) return;
        c[i] = 0;
    }
}

static void build_csr(tdm_lattice *lat, int threads) {
    const int d = lat->d;
    const int64_t L = lat->L, V = lat->V;
    int64_t *row = lat->row_ptr;
    int32_t *col = lat->col;
    /* Chunks of at least 64K vertices: below that, threading costs more than it saves. */
    int64_t nchunks = V / 65536 + 1;
    if (nchunks > threads * 4) nchunks = threads * 4;
    if (nchunks < 1) nchunks = 1;
    int64_t chunk_total[1024 + 1];
    if (nchunks > 1024) nchunks = 1024;
    const int64_t per = (V + nchunks - 1) / nchunks;
    row[0] = 0;
#pragma omp parallel num_threads(threads) if (nchunks > 1)
    {
#pragma omp for schedule(static)
        for (int64_t k = 0; k < nchunks; k++) {
            int64_t lo = k * per, hi = lo + per < V ? lo + per : V, c[TDM_LATTICE_MAX_DIMS], sum = 0;
            if (lo >= hi) {
                chunk_total[k] = 0;
                continue;
            }
            coords_of(lat, lo, c);
            for (int64_t v = lo; v < hi; v++) {
                int deg = 0;
                for (int i = 0; i < d; i++) deg += (c[i] > 0) + (c[i] < L - 1);
                sum += deg;
                row[v + 1] = deg; /* degree for now; turned into offsets below */
                odometer_step(c, d, L);
            }
            chunk_total[k] = sum;
        }
#pragma omp single
        {
            int64_t acc = 0;
            for (int64_t k = 0; k < nchunks; k++) {
                int64_t t = chunk_total[k];
                chunk_total[k] = acc;
                acc += t;
            }
        }
#pragma omp for schedule(static)
        for (int64_t k = 0; k < nchunks; k++) {
            int64_t lo = k * per, hi = lo + per < V ? lo + per : V, c[TDM_LATTICE_MAX_DIMS];
            if (lo >= hi) continue;
            coords_of(lat, lo, c);
            int64_t off = chunk_total[k];
            for (int64_t v = lo; v < hi; v++) {
                int64_t deg = row[v + 1];
                int32_t *out = col + off;
                for (int i = 0; i < d; i++)
                    if (c[i] > 0) *out++ = (int32_t)(v - lat->stride[i]);
                for (int i = d - 1; i >= 0; i--)
                    if (c[i] < L - 1) *out++ = (int32_t)(v + lat->stride[i]);
                off += deg;
                row[v + 1] = off;
                odometer_step(c, d, L);
            }
        }
    }
}

int tdm_lattice_new(tdm_ctx *ctx, int d, int64_t L, unsigned flags, tdm_lattice **out) {
    if (!ctx || !out) return tdm_error(TDM_E_INVAL, "tdm_lattice_new: %s is NULL", ctx ? "out" : "ctx");
    if (flags & TDM_LATTICE_PERIODIC)
        return tdm_error(TDM_E_INVAL, "tdm_lattice_new: periodic boundaries are reserved and not yet specified");
    if (flags) return tdm_error(TDM_E_INVAL, "tdm_lattice_new: unknown flags 0x%x", flags);
    int64_t V, E;
    uint64_t bytes;
    int rc = tdm_lattice_sizes(d, L, &V, &E, &bytes);
    if (rc) return rc;
    const tdm_config *cfg = tdm_ctx_config(ctx);
    if (bytes > cfg->lattice_max_bytes)
        return tdm_error(TDM_E_NOMEM,
                         "lattice %dD/%lld: CSR needs %llu bytes, above TANDEM_LATTICE_MAX_BYTES=%llu", d,
                         (long long)L, (unsigned long long)bytes, (unsigned long long)cfg->lattice_max_bytes);
    if (bytes > SIZE_MAX) return tdm_error(TDM_E_NOMEM, "lattice: %llu bytes exceed the address space", (unsigned long long)bytes);
    tdm_lat_req q = {.op = TDM_OP_LATTICE_BUILD, .pref = TDM_DEVICE_AUTO};
    tdm_lat_placement pl;
    if ((rc = tdm_lat_place(ctx, &q, &pl))) return rc;
    double t0 = tdm_now_ms();
    tdm_lattice *lat = tdm_calloc(1, sizeof *lat);
    if (!lat) return tdm_error(TDM_E_NOMEM, "tdm_lattice_new: no memory");
    lat->ctx = ctx;
    lat->d = d;
    lat->L = L;
    lat->V = V;
    lat->E = E;
    lat->stride[d - 1] = 1;
    for (int i = d - 2; i >= 0; i--) lat->stride[i] = lat->stride[i + 1] * L;
    lat->row_ptr = tdm_malloc((size_t)(V + 1) * sizeof *lat->row_ptr);
    lat->col = tdm_malloc((size_t)(2 * E) * sizeof *lat->col);
    if (!lat->row_ptr || !lat->col) {
        tdm_lattice_free(lat);
        return tdm_error(TDM_E_NOMEM, "lattice %dD/%lld: cannot allocate %llu bytes of CSR", d, (long long)L,
                         (unsigned long long)bytes);
    }
    build_csr(lat, tdm_ctx_threads(ctx));
    assert(lat->row_ptr[V] == 2 * E);
    lat->id = tdm_lat_next_id();
    lat->build_ms = tdm_now_ms() - t0;
    *out = lat;
    return TDM_OK;
}

void tdm_lattice_free(tdm_lattice *lat) {
    if (!lat) return;
    if (lat->id) tdm_lat_cache_drop_graph(lat->ctx, lat->id);
    tdm_free(lat->row_ptr);
    tdm_free(lat->col);
    tdm_free(lat);
}

int tdm_lattice_dims(const tdm_lattice *lat) { return lat->d; }
int64_t tdm_lattice_side(const tdm_lattice *lat) { return lat->L; }
int64_t tdm_lattice_vertices(const tdm_lattice *lat) { return lat->V; }
int64_t tdm_lattice_edges(const tdm_lattice *lat) { return lat->E; }
uint64_t tdm_lattice_bytes(const tdm_lattice *lat) { return 8u * (uint64_t)(lat->V + 1) + 8u * (uint64_t)lat->E; }
double tdm_lattice_build_ms(const tdm_lattice *lat) { return lat->build_ms; }

void tdm_lattice_get_csr(const tdm_lattice *lat, tdm_lattice_csr *out) {
    out->nvertices = lat->V;
    out->row_ptr = lat->row_ptr;
    out->col = lat->col;
    out->id = lat->id;
}

int tdm_lattice_index(const tdm_lattice *lat, const int64_t *coords, int64_t *v) {
    if (!lat || !coords || !v) return tdm_error(TDM_E_INVAL, "tdm_lattice_index: NULL argument");
    int64_t x = 0;
    for (int i = 0; i < lat->d; i++) {
        if (coords[i] < 0 || coords[i] >= lat->L)
            return tdm_error(TDM_E_RANGE, "tdm_lattice_index: coordinate %d = %lld outside 0..%lld", i,
                             (long long)coords[i], (long long)(lat->L - 1));
        x = x * lat->L + coords[i];
    }
    *v = x;
    return TDM_OK;
}

int tdm_lattice_coords(const tdm_lattice *lat, int64_t v, int64_t *coords) {
    if (!lat || !coords) return tdm_error(TDM_E_INVAL, "tdm_lattice_coords: NULL argument");
    if (v < 0 || v >= lat->V)
        return tdm_error(TDM_E_RANGE, "tdm_lattice_coords: vertex %lld outside 0..%lld", (long long)v,
                         (long long)(lat->V - 1));
    coords_of(lat, v, coords);
    return TDM_OK;
}

/* Binary search of w in the sorted row of u. */
static int row_has(const tdm_lattice_csr *g, int64_t u, int32_t w) {
    int64_t lo = g->row_ptr[u], hi = g->row_ptr[u + 1];
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (g->col[mid] < w) lo = mid + 1;
        else hi = mid;
    }
    return lo < g->row_ptr[u + 1] && g->col[lo] == w;
}

int tdm_lattice_csr_validate(const tdm_lattice_csr *g) {
    if (!g) return tdm_error(TDM_E_INVAL, "csr: graph is NULL");
    const int64_t V = g->nvertices;
    if (V < 0 || V > TDM_LATTICE_MAX_VERTICES)
        return tdm_error(TDM_E_INVAL, "csr: %lld vertices outside 0..2^31-1", (long long)V);
    if (!g->row_ptr) return tdm_error(TDM_E_INVAL, "csr: row_ptr is NULL");
    if (g->row_ptr[0] != 0) return tdm_error(TDM_E_INVAL, "csr: row_ptr[0] = %lld, not 0", (long long)g->row_ptr[0]);
    for (int64_t v = 0; v < V; v++)
        if (g->row_ptr[v + 1] < g->row_ptr[v])
            return tdm_error(TDM_E_INVAL, "csr: row_ptr decreases at vertex %lld", (long long)v);
    if (g->row_ptr[V] > 0 && !g->col) return tdm_error(TDM_E_INVAL, "csr: col is NULL with %lld arcs", (long long)g->row_ptr[V]);
    for (int64_t v = 0; v < V; v++) {
        for (int64_t a = g->row_ptr[v]; a < g->row_ptr[v + 1]; a++) {
            int32_t w = g->col[a];
            if (w < 0 || w >= V)
                return tdm_error(TDM_E_INVAL, "csr: arc %lld of vertex %lld points to %d, outside 0..%lld", (long long)a,
                                 (long long)v, w, (long long)(V - 1));
            if (w == v) return tdm_error(TDM_E_INVAL, "csr: self loop at vertex %lld", (long long)v);
            if (a > g->row_ptr[v] && g->col[a - 1] >= w)
                return tdm_error(TDM_E_INVAL, "csr: row of vertex %lld not strictly ascending at arc %lld", (long long)v,
                                 (long long)a);
        }
    }
    for (int64_t v = 0; v < V; v++)
        for (int64_t a = g->row_ptr[v]; a < g->row_ptr[v + 1]; a++)
            if (!row_has(g, g->col[a], (int32_t)v))
                return tdm_error(TDM_E_INVAL, "csr: arc %lld -> %d has no reverse arc (graph must be undirected)",
                                 (long long)v, g->col[a]);
    return TDM_OK;
}
