/* calibrate.c: measuring the cost model on this machine. The op-family table says how each op is
 * measured (its runner lives with its engine: src/seq/calib.c, src/lattice/calib.c, src/arc/calib.c);
 * this file runs the runners over every backend that supports the op, measures the
 * host-device link, fits each class, publishes the model and persists it. Calibration, not guesses: the
 * project this replaces routed by a static speedup table from mis-measured baselines. */
#define _GNU_SOURCE
#include "runtime/router_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const tdm_cost_family families[] = {
    {TDM_OP_SEQ_LCS, tdm_seq_query_work, tdm_seq_calibrate},
    {TDM_OP_SEQ_DIFFLIB, tdm_seq_query_work, tdm_seq_calibrate},
    {TDM_OP_LATTICE_BFS, tdm_lat_op_work, tdm_lat_calibrate},
    {TDM_OP_LATTICE_XOR, tdm_lat_op_work, tdm_lat_calibrate},
    {TDM_OP_LATTICE_GEMM, tdm_lat_op_work, tdm_lat_calibrate},
    {TDM_OP_LATTICE_GEMM_BATCHED, tdm_lat_op_work, tdm_lat_calibrate},
    {TDM_OP_LATTICE_EWISE, tdm_lat_op_work, tdm_lat_calibrate},
    {TDM_OP_LATTICE_REDUCE, tdm_lat_op_work, tdm_lat_calibrate},
    {TDM_OP_ARC_OBJECTS, tdm_arc_objects_work, tdm_arc_calibrate},
};
#define NFAMILIES (sizeof families / sizeof *families)

const tdm_cost_family *tdm_cost_family_of(tdm_op op) {
    for (size_t i = 0; i < NFAMILIES; i++)
        if (families[i].op == op) return &families[i];
    return NULL;
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

double tdm_cal_median(double *v, size_t n) {
    if (!n) return 0.0;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void tdm_cal_add_point(tdm_cost_points *p, double work, double levels, double us) {
    p->work[p->n] = work;
    p->levels[p->n] = levels;
    p->us[p->n++] = us > 0.01 ? us : 0.01;
    p->runs += TDM_CAL_RUNS;
}

double tdm_cal_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

double tdm_cal_less_link(const tdm_ctx *ctx, double us, uint64_t h2d_bytes, uint64_t d2h_bytes) {
    /* Runners run inside tdm_calibrate, whose link figures are not published yet. */
    const tdm_costmodel *m = ctx->router->cal ? ctx->router->cal : atomic_load_explicit(&ctx->router->model, memory_order_acquire);
    if (!m->link_trusted) return us;
    double link = 0.0;
    if (h2d_bytes) link += m->h2d.lat_us + (double)h2d_bytes * m->h2d.us_per_byte;
    if (d2h_bytes) link += m->d2h.lat_us + (double)d2h_bytes * m->d2h.us_per_byte;
    return us - link > 0.1 * us ? us - link : 0.1 * us;
}

/* Host<->device copies of 4 KiB .. 64 MiB (x4) from pageable host memory, median of 10 runs each,
 * fitted as lat + bytes * us_per_byte per direction. */
static int calibrate_link(const tdm_backend *g, tdm_costmodel *m, double budget_us) {
    const size_t maxb = (size_t)64 << 20;
    unsigned char *host = tdm_malloc(maxb);
    void *dev = NULL;
    if (!host) return tdm_error(TDM_E_NOMEM, "calibration: no host memory for the link test");
    memset(host, 0x5A, maxb);
    int rc = g->alloc(g, maxb, &dev);
    if (rc) {
        tdm_free(host);
        return rc;
    }
    double start = tdm_cal_now_us();
    tdm_cost_points pts[2];
    memset(pts, 0, sizeof pts);
    for (size_t bytes = 4096; bytes <= maxb && !rc; bytes *= 4) {
        for (int dir = 0; dir < 2 && !rc; dir++) {
            double t[TDM_CAL_RUNS];
            for (int i = 0; i < TDM_CAL_WARMUPS + TDM_CAL_RUNS && !rc; i++) {
                double t0 = tdm_cal_now_us();
                rc = dir == 0 ? g->copy(g, dev, host, bytes, TDM_COPY_H2D) : g->copy(g, host, dev, bytes, TDM_COPY_D2H);
                if (i >= TDM_CAL_WARMUPS) t[i - TDM_CAL_WARMUPS] = tdm_cal_now_us() - t0;
            }
            tdm_cost_points *p = &pts[dir];
            p->work[p->n] = (double)bytes;
            p->levels[p->n] = 0.0;
            p->us[p->n++] = tdm_cal_median(t, TDM_CAL_RUNS);
            p->runs += TDM_CAL_RUNS;
        }
        if (tdm_cal_now_us() - start > budget_us) break;
    }
    g->release(g, dev);
    tdm_free(host);
    if (rc) return rc;
    tdm_cost_class c[2];
    for (int dir = 0; dir < 2; dir++) {
        rc = tdm_costmodel_fit(&c[dir], pts[dir].work, pts[dir].levels, pts[dir].us, pts[dir].n, pts[dir].runs);
        if (rc) return rc;
    }
    m->h2d = (tdm_cost_link){c[0].t0_us, c[0].us_per_work};
    m->d2h = (tdm_cost_link){c[1].t0_us, c[1].us_per_work};
    m->link_trusted = c[0].trusted && c[1].trusted;
    return TDM_OK;
}

int tdm_calibrate(tdm_ctx *ctx, unsigned mask) {
    if (!ctx) return tdm_error(TDM_E_INVAL, "tdm_calibrate: ctx is NULL");
    tdm_router *r = ctx->router;
    pthread_mutex_lock(&r->mu); /* one calibration at a time; decisions never wait for it */
    tdm_costmodel m = *atomic_load(&r->model);
    snprintf(m.key, sizeof m.key, "%s", r->key);
    int nfam = 0;
    for (size_t f = 0; f < NFAMILIES; f++)
        if (!mask || (mask & (1u << families[f].op))) nfam++;
    const tdm_backend *gpu = NULL;
    for (int i = 1; i < ctx->nbackends && !gpu; i++)
        if (ctx->backends[i]->kind == TDM_BACKEND_CUDA) gpu = ctx->backends[i];
    double budget_ms = ctx->cfg.calibration_budget_ms;
    int link = gpu && gpu->alloc && gpu->copy && (!m.link_trusted || mask == 0);
    double share = budget_ms / (nfam + (link ? 1 : 0) > 0 ? nfam + (link ? 1 : 0) : 1);
    int rc = TDM_OK;
    if (link) {
        rc = calibrate_link(gpu, &m, share * 1e3);
        if (rc) {
            tdm_log(TDM_LOG_WARN, "calibration: link not measured (%s: %s)", tdm_status_name(rc), tdm_last_error());
            rc = TDM_OK;
        }
    }
    r->cal = &m;
    for (size_t f = 0; f < NFAMILIES && !rc; f++) {
        const tdm_cost_family *fam = &families[f];
        if (mask && !(mask & (1u << fam->op))) continue;
        const tdm_backend *bs[TDM_MAX_BACKENDS];
        int kind[TDM_MAX_BACKENDS], nb = 0, have_gpu = 0;
        /* The CPU and the first GPU that supports the op: the model has one GPU class per op. */
        for (int i = 0; i < ctx->nbackends; i++) {
            const tdm_backend *b = ctx->backends[i];
            if (!b->supports(b, fam->op) || (b->kind != TDM_BACKEND_CPU && have_gpu)) continue;
            have_gpu |= b->kind != TDM_BACKEND_CPU;
            kind[nb] = b->kind != TDM_BACKEND_CPU;
            bs[nb++] = b;
        }
        tdm_cost_points *pts = tdm_calloc((size_t)nb, sizeof *pts);
        if (!pts) {
            rc = tdm_error(TDM_E_NOMEM, "calibration: no memory");
            break;
        }
        rc = fam->calibrate(ctx, fam->op, bs, nb, share, pts);
        for (int i = 0; i < nb && !rc; i++) {
            if (!pts[i].n) continue;
            rc = tdm_costmodel_fit(&m.cls[fam->op][kind[i]], pts[i].work, pts[i].levels, pts[i].us, pts[i].n, pts[i].runs);
            if (!rc && !m.cls[fam->op][kind[i]].trusted)
                tdm_log(TDM_LOG_INFO, "calibration: %s on %s not trusted (%u runs, residual %.2f)", tdm_op_name(fam->op),
                        bs[i]->name, m.cls[fam->op][kind[i]].samples, m.cls[fam->op][kind[i]].residual);
        }
        tdm_free(pts);
    }
    r->cal = NULL;
    if (rc) {
        pthread_mutex_unlock(&r->mu);
        return rc;
    }
    tdm_costmodel_stamp(&m);
    pthread_mutex_unlock(&r->mu);
    rc = tdm_costmodel_set(ctx, &m);
    if (!rc && r->path[0]) rc = tdm_costmodel_save(&m, r->path);
    return rc;
}
