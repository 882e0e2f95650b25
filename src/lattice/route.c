/* route.c: where a lattice op runs. Each entry point with a device path describes its call to the router
 * (tdm_route): work in its op family's units, BFS levels, the bytes a device run would move and need, and
 * whether its inputs already live on the device; the router weighs them with the cost model measured on
 * this machine (src/lattice/calib.c), so a 4D/10 sweep stays on the CPU and a 4D/32 one goes to the GPU.
 * BFS needs what is known before it runs: the level count a level-synchronous device BFS will pay for
 * (from the lattice's shape, recognised from the CSR of any graph with an id) and whether the device still
 * holds the graph's CSR from an earlier call. */
#include "lattice/lattice_internal.h"
#include "lattice/lattice_device.h"
#include "tandem/prof.h"

#include <math.h>

int tdm_lat_place(tdm_ctx *ctx, const tdm_lat_req *q, tdm_lat_placement *out) {
    const int pref = q->pref;
    if (pref != TDM_DEVICE_AUTO && pref != TDM_DEVICE_CPU && pref != TDM_DEVICE_CUDA)
        return tdm_error(TDM_E_INVAL, "%s: unknown backend preference %d", tdm_op_name(q->op), pref);
    const tdm_config *cfg = tdm_ctx_config(ctx);
    const tdm_backend *b;
    int rc;
    out->record = 0;
    if (!q->device_ok) {
        /* Nothing to weigh: the CPU answers. The preference is still checked (a forced GPU without one is
         * an error under TANDEM_STRICT) and the decision shows under TANDEM_DEBUG_ROUTER. */
        if ((rc = tdm_backend_select(ctx, q->op, (tdm_device_pref)pref, &b, &out->reason))) return rc;
        if (b->kind != TDM_BACKEND_CPU) {
            if (cfg->debug_router)
                tdm_log(TDM_LOG_WARN, "router: %s -> cpu (this call has no device path on %s)", tdm_op_name(q->op), b->name);
            b = tdm_backend_get(ctx, 0);
            out->reason = TDM_ROUTE_NO_GPU_IMPL;
        }
    } else {
        tdm_route_req rq = {.op = q->op, .work = q->work, .levels = q->levels, .h2d_bytes = q->h2d_bytes,
                            .d2h_bytes = q->d2h_bytes, .device_bytes = q->device_bytes, .resident = q->resident,
                            .hint = (tdm_device_pref)pref};
        tdm_route_decision d;
        if ((rc = tdm_route(ctx, &rq, &d))) return rc;
        b = d.backend, out->reason = d.reason, out->record = d.record;
        if (b->kind != TDM_BACKEND_CPU && !b->lattice) {
            if (cfg->debug_router)
                tdm_log(TDM_LOG_WARN, "router: %s -> cpu (%s offers no lattice entry points)", tdm_op_name(q->op), b->name);
            b = tdm_backend_get(ctx, 0);
            out->reason = TDM_ROUTE_NO_GPU_IMPL;
        }
        if (TANDEM_PROF_ON())
            tdm_prof_route(tdm_op_name(q->op), b->name, tdm_route_reason_name(out->reason),
                           d.t_cpu_us > 0 ? (uint64_t)(d.t_cpu_us * 1e3) : 0, d.t_gpu_us > 0 ? (uint64_t)(d.t_gpu_us * 1e3) : 0);
    }
    out->backend = b;
    out->t0_ms = tdm_now_ms();
    return TDM_OK;
}

void tdm_lat_placed_done(tdm_ctx *ctx, const tdm_lat_placement *p) {
    if (p->record) tdm_route_measured(ctx, p->record, (tdm_now_ms() - p->t0_ms) * 1e3);
}

/* d and L when g is the CSR of a d-dimensional lattice of side L (the row of vertex 0 is +1, +L, +L^2, ...
 * and the sizes match), else 0. A few loads: the sizes decide, the rows are not walked. Only graphs with
 * an id (every tdm_lattice has one) are considered: an anonymous caller's arrays may match a lattice's
 * sizes and still be another, deeper graph, so they get the safe bound instead. */
static int lattice_shape(const tdm_lattice_csr *g, int *d_out, int64_t *L_out) {
    const int64_t V = g->nvertices;
    if (!g->id || V < 2 || !g->row_ptr || !g->col) return 0;
    const int64_t deg = g->row_ptr[1] - g->row_ptr[0];
    if (deg < 1 || deg > TDM_LATTICE_MAX_DIMS) return 0;
    const int d = (int)deg;
    const int64_t L = d == 1 ? V : g->col[g->row_ptr[0] + 1];
    if (g->col[g->row_ptr[0]] != 1 || L < 2) return 0;
    int64_t v, e;
    if (tdm_lattice_sizes(d, L, &v, &e, NULL)) {
        tdm_clear_error();
        return 0;
    }
    if (v != V || g->row_ptr[V] != 2 * e) return 0;
    *d_out = d, *L_out = L;
    return 1;
}

void tdm_lat_bfs_estimate(tdm_ctx *ctx, const tdm_lattice_csr *g, int64_t s, int64_t t, tdm_lat_bfs_est *out) {
    const int64_t V = g->nvertices, arcs = V > 0 ? g->row_ptr[V] : 0;
    out->arcs = (double)arcs;
    out->levels = V > 1 ? (double)(V - 1) : 0.0;
    out->csr_bytes = 8u * (uint64_t)(V + 1) + 4u * (uint64_t)arcs;
    out->resident = g->id && atomic_load_explicit(&ctx->lattice_resident, memory_order_relaxed) == g->id;
    int d;
    int64_t L;
    if (!lattice_shape(g, &d, &L)) return;
    if (s < 0) {
        out->levels = (double)d * (double)(L - 1);
        return;
    }
    int64_t ecc = 0, dist = 0, a = s, b = t;
    for (int i = 0; i < d; i++) {
        const int64_t ca = a % L, cb = t >= 0 ? b % L : 0;
        ecc += ca > L - 1 - ca ? ca : L - 1 - ca;
        dist += ca > cb ? ca - cb : cb - ca;
        a /= L, b /= L;
    }
    if (t < 0) {
        out->levels = (double)ecc;
        return;
    }
    out->levels = (double)dist;
    if (ecc > 0 && dist < ecc) out->arcs *= pow((double)dist / (double)ecc, d);
}

void tdm_lat_bfs_device_ran(tdm_ctx *ctx, const tdm_lattice_csr *g, int ok) {
    atomic_store_explicit(&ctx->lattice_resident, ok ? g->id : 0, memory_order_relaxed);
}
