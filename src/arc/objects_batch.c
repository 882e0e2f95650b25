/* objects_batch.c: batched objects() labelling (arc.h, tdm_arc_objects_labels): the connected components
 * that objects() finds, for thousands of grids in one call, on the CPU or on a GPU with the same labels.
 * Program search runs objects() on every grid of every task again and again; its partition is the costly
 * part, and it is a plain connected-components problem that a GPU does for many grids at once. The CPU
 * path here is the reference the GPU is checked against, and it is itself checked against the interpreter's
 * objects() (tests/unit/test_arc_objects_batch.c). */
#include "arc/arc_device.h"
#include "core/internal.h"
#include "runtime/router_internal.h"
#include "tandem/arc.h"
#include "tandem/prof.h"

#include <omp.h>
#include <string.h>

/* Below this many grids a device call costs more than it saves (launch, copies): the floor used while the
 * cost model has no trusted arc.objects class (the router answers RESIDENCY_ONLY then). */
#define GPU_MIN_GRIDS 4096

/* The first bad grid at or after `from` (n when none), with what is wrong in msg. */
static size_t find_bad(const uint8_t *cells, const uint8_t *hw, size_t from, size_t n, char *msg, size_t cap) {
    for (size_t g = from; g < n; g++) {
        int h = hw[2 * g], w = hw[2 * g + 1];
        if (h < 1 || h > TDM_ARC_SLOT || w < 1 || w > TDM_ARC_SLOT) {
            snprintf(msg, cap, "grid %zu: shape %dx%d outside 1..30", g, h, w);
            return g;
        }
        const uint8_t *c = cells + g * ARC_SLOT_CELLS;
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++)
                if (c[i * ARC_SLOT + j] >= ARC_COLOURS) {
                    snprintf(msg, cap, "grid %zu: colour %d at row %d, column %d (colours are 0..9)", g,
                             c[i * ARC_SLOT + j], i, j);
                    return g;
                }
    }
    return n;
}

static int root(int16_t *par, int x) {
    while (par[x] != x) {
        par[x] = par[par[x]]; /* path halving */
        x = par[x];
    }
    return x;
}

static void unite(int16_t *par, int a, int b) {
    a = root(par, a), b = root(par, b);
    if (a == b) return;
    if (a < b) par[b] = (int16_t)a; /* the smaller index stays the root: it becomes the label */
    else par[a] = (int16_t)b;
}

/* One grid: union-find over slot indices, then each cell's root written as a row-major index. */
void arc_objects_label_grid(const uint8_t *c, int h, int w, int flags, int16_t *out) {
    int16_t par[ARC_SLOT_CELLS];
    int bg = -1;
    if (flags & ARC_OBJ_WITHOUT_BG) {
        uint32_t count[ARC_COLOURS] = {0}, first[ARC_COLOURS];
        for (int k = 0; k < ARC_COLOURS; k++) first[k] = UINT32_MAX;
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++) {
                int v = c[i * ARC_SLOT + j];
                if (!count[v]++) first[v] = (uint32_t)(i * w + j);
            }
        bg = arc_mostcolor_of_counts(count, first);
    }
    for (int s = 0; s < ARC_SLOT_CELLS; s++) par[s] = -1;
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            int s = i * ARC_SLOT + j;
            if (c[s] != bg) par[s] = (int16_t)s;
        }
    /* Links to the right and downwards (and both lower diagonals) cover every neighbour pair once. */
    static const int di[4] = {0, 1, 1, 1}, dj[4] = {1, 0, 1, -1};
    int links = flags & ARC_OBJ_DIAGONAL ? 4 : 2, uni = flags & ARC_OBJ_UNIVALUED;
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            int s = i * ARC_SLOT + j;
            if (par[s] < 0) continue;
            for (int k = 0; k < links; k++) {
                int y = i + di[k], x = j + dj[k];
                if (y >= h || x < 0 || x >= w) continue;
                int t = y * ARC_SLOT + x;
                if (par[t] >= 0 && (!uni || c[t] == c[s])) unite(par, s, t);
            }
        }
    for (int s = 0; s < ARC_SLOT_CELLS; s++) out[s] = -1;
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            int s = i * ARC_SLOT + j;
            if (par[s] < 0) continue;
            int r = root(par, s);
            out[s] = (int16_t)((r / ARC_SLOT) * w + r % ARC_SLOT);
        }
}

/* Where a batch runs: the router weighs the cells to label (W, src/arc/calib.c) and the slots' copies in
 * and the labels' copies back; pref CPU/CUDA is the call's hint. Without a trusted model the router
 * answers RESIDENCY_ONLY (the grids are on the host: the CPU), and the floor GPU_MIN_GRIDS decides
 * instead, as before the model existed. A device without ARC entry points leaves the batch to the CPU. */
static int place(tdm_ctx *ctx, const uint8_t *hw, size_t n, tdm_device_pref pref, const tdm_backend **out,
                 tdm_route_reason *why) {
    const uint64_t in = (uint64_t)n * (ARC_SLOT_CELLS + 2), back = (uint64_t)n * ARC_SLOT_CELLS * 2;
    tdm_arc_work_args wa = {.hw = hw, .n = n};
    tdm_route_req q = {.op = TDM_OP_ARC_OBJECTS, .work = n ? tdm_arc_objects_work(&wa) : 0.0, .h2d_bytes = in,
                       .d2h_bytes = back, .device_bytes = in + back, .hint = pref};
    tdm_route_decision d;
    int rc = tdm_route(ctx, &q, &d);
    if (rc) return rc;
    const tdm_backend *b = d.backend, *cpu = tdm_backend_get(ctx, 0);
    *why = d.reason;
    if (d.reason == TDM_ROUTE_RESIDENCY_ONLY) {
        for (int i = 1; i < tdm_backend_count(ctx) && b == cpu; i++) {
            const tdm_backend *g = tdm_backend_get(ctx, i);
            if (g->kind == TDM_BACKEND_CUDA && g->supports(g, TDM_OP_ARC_OBJECTS)) b = g;
        }
        if (n < GPU_MIN_GRIDS) b = cpu, *why = TDM_ROUTE_SMALL_INPUT;
    }
    if (b->kind == TDM_BACKEND_CUDA && !b->arc) b = cpu, *why = TDM_ROUTE_NO_GPU_IMPL;
    if (b != d.backend && tdm_ctx_config(ctx)->debug_router)
        tdm_log(TDM_LOG_WARN, "router: %s -> %s (%s; %zu grids, floor %d without a trusted model)",
                tdm_op_name(TDM_OP_ARC_OBJECTS), b->name, tdm_route_reason_name(*why), n, GPU_MIN_GRIDS);
    if (TANDEM_PROF_ON())
        tdm_prof_route(tdm_op_name(TDM_OP_ARC_OBJECTS), b->name, tdm_route_reason_name(*why),
                       d.t_cpu_us > 0 ? (uint64_t)(d.t_cpu_us * 1e3) : 0, d.t_gpu_us > 0 ? (uint64_t)(d.t_gpu_us * 1e3) : 0);
    *out = b;
    return TDM_OK;
}

static int cpu_labels(const uint8_t *cells, const uint8_t *hw, size_t n, int flags, int threads, int16_t *labels) {
    char msg[160];
    size_t bad = find_bad(cells, hw, 0, n, msg, sizeof msg);
    if (bad < n) return tdm_error(TDM_E_INVAL, "tdm_arc_objects_labels: %s", msg);
#pragma omp parallel for schedule(static) num_threads(threads) if (n >= 64)
    for (size_t g = 0; g < n; g++)
        arc_objects_label_grid(cells + g * ARC_SLOT_CELLS, hw[2 * g], hw[2 * g + 1], flags, labels + g * ARC_SLOT_CELLS);
    return TDM_OK;
}

int tdm_arc_objects_labels(tdm_ctx *ctx, const uint8_t *cells, const uint8_t *hw, size_t n, int univalued,
                           int diagonal, int without_bg, tdm_device_pref pref, int threads, int16_t *labels,
                           tdm_arc_objects_stats *st) {
    double t0 = tdm_now_ms();
    if (!ctx || (n && (!cells || !hw || !labels)))
        return tdm_error(TDM_E_INVAL, "tdm_arc_objects_labels: NULL argument");
    int flags = (univalued ? ARC_OBJ_UNIVALUED : 0) | (diagonal ? ARC_OBJ_DIAGONAL : 0) |
                (without_bg ? ARC_OBJ_WITHOUT_BG : 0);
    if (threads <= 0) threads = tdm_ctx_threads(ctx);
    tdm_arc_objects_stats s = {.backend = "cpu"};
    const tdm_backend *b = NULL;
    tdm_route_reason why;
    int rc = place(ctx, hw, n, pref, &b, &why);
    if (rc) return rc;
    if (b->kind == TDM_BACKEND_CUDA) {
        tdm_arc_dev_times t = {0};
        size_t bad = n;
        rc = b->arc->objects_labels(b, cells, hw, n, flags, labels, &bad, &t);
        if (rc == TDM_E_INVAL && bad < n) {
            /* the device found the first bad grid; the host names what is wrong with it */
            char msg[160];
            find_bad(cells, hw, bad, n, msg, sizeof msg);
            return tdm_error(TDM_E_INVAL, "tdm_arc_objects_labels: %s", msg);
        }
        if (!rc) {
            s.backend = b->name, s.route_reason = (int)why;
            s.h2d_ms = t.h2d_ms, s.kernel_ms = t.kernel_ms, s.d2h_ms = t.d2h_ms;
            s.total_ms = tdm_now_ms() - t0;
            if (st) *st = s;
            return TDM_OK;
        }
        if (pref == TDM_DEVICE_CUDA && tdm_ctx_config(ctx)->strict) return rc;
        tdm_log(TDM_LOG_WARN, "arc objects: %s failed (%s: %s); the CPU labels the %zu grids", b->name,
                tdm_status_name(rc), tdm_last_error(), n);
        why = TDM_ROUTE_DEVICE_ERROR;
    }
    if ((rc = cpu_labels(cells, hw, n, flags, threads, labels))) return rc;
    s.route_reason = (int)why;
    s.total_ms = tdm_now_ms() - t0;
    if (st) *st = s;
    return TDM_OK;
}
