/* calib.c: the ARC engine's row of the cost model's op-family table: arc.objects, batched objects()
 * labelling (tdm_arc_objects_labels). Work W is the cells labelled, the sum of h*w over the batch's grids:
 * the CPU's union-find is linear in it, and the slots' padding costs neither side much. The runner grows a
 * batch of generated grids (fixed seed: shapes 1..30, few colours in runs, as program search meets them)
 * along the size ladder and times the CPU path of tdm_arc_objects_labels and each device's entry point
 * (the copies of the slots in and the labels back included, as every call makes them) on the host clock;
 * a device's time is kept less the modelled copies, which the router adds per call from its bytes. */
#include "arc/arc_device.h"
#include "runtime/router_internal.h"
#include "tandem/arc.h"

#include <string.h>

#define CAL_FLAGS (ARC_OBJ_UNIVALUED | ARC_OBJ_WITHOUT_BG) /* objects(grid, T, F, T): the common call */
#define CAL_MAX_GRIDS ((size_t)1 << 18)                     /* 700 MB of slots and labels: the ladder stops */
#define GRID_BYTES ((uint64_t)ARC_SLOT_CELLS + 2)           /* a slot and its shape, moved in */
#define LABEL_BYTES ((uint64_t)ARC_SLOT_CELLS * 2)          /* a slot of labels, moved back */

double tdm_arc_objects_work(const void *args) {
    const tdm_arc_work_args *a = (const tdm_arc_work_args *)args;
    double cells = 0.0;
    for (size_t g = 0; g < a->n; g++) cells += (double)a->hw[2 * g] * (double)a->hw[2 * g + 1];
    return cells;
}

static uint64_t next64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Grid g of the generated batch: a shape, a palette of 1..4 colours, runs along rows and columns. */
static void gen_grid(uint64_t *rng, uint8_t *cells, uint8_t *hw) {
    int h = 1 + (int)(next64(rng) % 30), w = 1 + (int)(next64(rng) % 30), k = 1 + (int)(next64(rng) % 4);
    memset(cells, 0, ARC_SLOT_CELLS);
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            uint64_t r = next64(rng);
            int v = (int)(r % (uint64_t)k);
            if (j && (r >> 8) % 3) v = cells[i * ARC_SLOT + j - 1];
            else if (i && (r >> 16) % 2) v = cells[(i - 1) * ARC_SLOT + j];
            cells[i * ARC_SLOT + j] = (uint8_t)v;
        }
    hw[0] = (uint8_t)h, hw[1] = (uint8_t)w;
}

/* One labelling of the first n grids on b. */
static int run_once(tdm_ctx *ctx, const tdm_backend *b, const uint8_t *cells, const uint8_t *hw, size_t n, int16_t *labels) {
    if (b->kind == TDM_BACKEND_CPU)
        return tdm_arc_objects_labels(ctx, cells, hw, n, 1, 0, 1, TDM_DEVICE_CPU, 0, labels, NULL);
    tdm_arc_dev_times t;
    size_t bad = n;
    return b->arc->objects_labels(b, cells, hw, n, CAL_FLAGS, labels, &bad, &t);
}

int tdm_arc_calibrate(tdm_ctx *ctx, tdm_op op, const tdm_backend *const *bs, int nb, double budget_ms,
                      tdm_cost_points *pts) {
    if (op != TDM_OP_ARC_OBJECTS) return tdm_error(TDM_E_UNSUPPORTED, "arc calibration: %s is not an ARC op", tdm_op_name(op));
    int done[TDM_MAX_BACKENDS], live = 0;
    for (int i = 0; i < nb; i++) {
        done[i] = bs[i]->kind != TDM_BACKEND_CPU && !bs[i]->arc; /* no entry point: nothing to time */
        live += !done[i];
    }
    uint8_t *cells = NULL, *hw = NULL;
    int16_t *labels = NULL;
    size_t have = 0, cap = 0;
    uint64_t rng = 0x6172632d63616cull; /* fixed: every calibration measures the same grids */
    double start = tdm_cal_now_us(), budget_us = budget_ms * 1e3, last_us = 0.0, cells_done = 0.0, gen_rate = 0.0;
    int rc = TDM_OK;
    for (double w = TDM_CAL_FIRST_WORK; !rc && live > 0; w *= TDM_CAL_STEP) {
        double next = TDM_CAL_STEP * last_us * (TDM_CAL_WARMUPS + TDM_CAL_RUNS) * live + gen_rate * (w - cells_done);
        if (w > TDM_CAL_FIRST_WORK && tdm_cal_now_us() - start + next > budget_us) break;
        /* Grow the batch until it holds w cells. */
        double g0 = tdm_cal_now_us(), before = cells_done;
        while (cells_done < w) {
            if (have == cap) {
                size_t ncap = cap ? 2 * cap : 64;
                if (ncap > CAL_MAX_GRIDS) break;
                uint8_t *nc = tdm_realloc(cells, ncap * ARC_SLOT_CELLS), *nh = nc ? tdm_realloc(hw, ncap * 2) : NULL;
                if (nc) cells = nc;
                if (nh) hw = nh;
                int16_t *nl = nh ? tdm_realloc(labels, ncap * LABEL_BYTES) : NULL;
                if (!nl) break; /* out of memory: what was measured stands */
                labels = nl, cap = ncap;
            }
            gen_grid(&rng, cells + have * ARC_SLOT_CELLS, hw + 2 * have);
            cells_done += (double)hw[2 * have] * hw[2 * have + 1];
            have++;
        }
        if (cells_done < w) break;
        if (cells_done > before) gen_rate = (tdm_cal_now_us() - g0) / (cells_done - before);
        last_us = 0.0;
        for (int i = 0; i < nb && !rc; i++) {
            if (done[i] || pts[i].n >= 32) continue;
            double t[TDM_CAL_RUNS];
            for (int r = 0; r < TDM_CAL_WARMUPS + TDM_CAL_RUNS && !rc; r++) {
                double t0 = tdm_cal_now_us();
                rc = run_once(ctx, bs[i], cells, hw, have, labels);
                if (r >= TDM_CAL_WARMUPS) t[r - TDM_CAL_WARMUPS] = tdm_cal_now_us() - t0;
            }
            const int gpu = bs[i]->kind != TDM_BACKEND_CPU;
            if (rc == TDM_E_DEVICE_OOM && gpu) { /* the device is full */
                tdm_clear_error();
                rc = TDM_OK;
                done[i] = 1, live--;
                continue;
            }
            if (rc) break;
            double med = tdm_cal_median(t, TDM_CAL_RUNS);
            double us = gpu ? tdm_cal_less_link(ctx, med, have * GRID_BYTES, have * LABEL_BYTES) : med;
            tdm_cal_add_point(&pts[i], cells_done, 0.0, us);
            if (med > last_us) last_us = med;
            if (med > TDM_CAL_STOP_US) done[i] = 1, live--;
        }
        if (tdm_cal_now_us() - start > budget_us) break;
    }
    tdm_free(cells), tdm_free(hw), tdm_free(labels);
    return rc;
}
