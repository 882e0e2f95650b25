/* arc_device.h: what the ARC engine's batched objects() labelling shares between the CPU path
 * (src/arc/objects_batch.c) and the CUDA module (src/cuda/arc_objects.cu): the device entry point, the
 * grid slot layout, and mostcolor()'s tie rule and Python's slice bounds written once for host and device.
 *
 * mostcolor(grid) is max(set(values), key=values.count): the first colour of largest count in the
 * iteration order of a CPython set of the colours inserted in row-major first-occurrence order. Spec §4.9
 * gives that order in closed form: ascending for 5 or more colours; for 4 or fewer, each colour in turn
 * takes slot c mod 8 of an 8-slot table, or the first free slot along s -> (5s + 1) mod 8, and iteration
 * reads slots 0..7 (so 8 and 9, which share slots with 0 and 1, can come first). */
#ifndef TANDEM_ARC_DEVICE_H
#define TANDEM_ARC_DEVICE_H

#include "tandem/backend.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define ARC_HD __host__ __device__
#else
#define ARC_HD
#endif

#define ARC_SLOT 30                     /* grids live in 30 x 30 slots */
#define ARC_SLOT_CELLS (ARC_SLOT * ARC_SLOT)
#define ARC_COLOURS 10

enum { ARC_OBJ_UNIVALUED = 1, ARC_OBJ_DIAGONAL = 2, ARC_OBJ_WITHOUT_BG = 4 };

/* Python's slice t[a:b] of a length-n sequence as [lo, hi): negatives count from the end, then clamped
 * (the interpreter's primitives and the device kernels). */
static inline ARC_HD void arc_py_slice(int64_t n, int64_t a, int64_t b, int64_t *lo, int64_t *hi) {
    if (a < 0) a += n;
    if (b < 0) b += n;
    if (a < 0) a = 0;
    if (b < 0) b = 0;
    if (a > n) a = n;
    if (b > n) b = n;
    *lo = a, *hi = b > a ? b : a;
}

/* mostcolor (least = 0) or leastcolor (least = 1) of a grid from its colour counts and each colour's first
 * row-major occurrence (UINT32_MAX: absent): the first colour of best count in the set's iteration order. */
static inline ARC_HD int arc_pick_colour_of_counts(const uint32_t *count, const uint32_t *first, int least) {
    int order[ARC_COLOURS], k = 0;
    /* distinct colours in first-occurrence order (at most 10: a selection sort is plenty) */
    uint32_t done = 0;
    for (;;) {
        int best = -1;
        for (int c = 0; c < ARC_COLOURS; c++)
            if (count[c] && !(done >> c & 1) && (best < 0 || first[c] < first[best])) best = c;
        if (best < 0) break;
        done |= 1u << best;
        order[k++] = best;
    }
    int iter[ARC_COLOURS], n = 0;
    if (k >= 5) {
        for (int c = 0; c < ARC_COLOURS; c++)
            if (count[c]) iter[n++] = c;
    } else {
        int slot[8];
        for (int s = 0; s < 8; s++) slot[s] = -1;
        for (int x = 0; x < k; x++) {
            int s = order[x] % 8;
            while (slot[s] >= 0) s = (5 * s + 1) % 8;
            slot[s] = order[x];
        }
        for (int s = 0; s < 8; s++)
            if (slot[s] >= 0) iter[n++] = slot[s];
    }
    int bg = -1;
    for (int x = 0; x < n; x++)
        if (bg < 0 || (least ? count[iter[x]] < count[bg] : count[iter[x]] > count[bg])) bg = iter[x];
    return bg;
}

/* bg of a grid: mostcolor() by arc_pick_colour_of_counts. */
static inline ARC_HD int arc_mostcolor_of_counts(const uint32_t *count, const uint32_t *first) {
    return arc_pick_colour_of_counts(count, first, 0);
}

/* Timings of one call, for the caller's statistics (device time from CUDA events). */
typedef struct {
    double h2d_ms, kernel_ms, d2h_ms;
} tdm_arc_dev_times;

struct arc_bop_call;
struct arc_col;

/* The device entry points of the ARC engine. */
typedef struct tdm_arc_dev_ops {
    /* Labels the objects of n grids (layout and labels as tdm_arc_objects_labels in arc.h; flags:
     * ARC_OBJ_*). Validates shapes (1..30) and colours (0..9): on a bad grid returns TDM_E_INVAL with
     * *bad = its index (the smallest such) and leaves labels unspecified. Errors: TDM_E_DEVICE_OOM,
     * TDM_E_DEVICE. */
    int (*objects_labels)(const tdm_backend *b, const uint8_t *cells, const uint8_t *hw, size_t n, int flags,
                          int16_t *labels, size_t *bad, tdm_arc_dev_times *t);
    /* The batched executor's columns and kernels (src/arc/arc_bops.h, CUDA module ABI 12). col_alloc makes
     * the device buffers of a column of n lanes (*c zeroed on failure); col_free accepts a zeroed column.
     * col_put writes m lanes given packed on the host (src lane k -> dst lane lanes[k]); col_get reads them
     * back packed. bop_run runs c->op on the lanes whose active byte is 1 (host array of c->n bytes) and
     * writes each such lane's status (1: result in c->out; 0: the CPU must compute it) to status (host).
     * Errors: TDM_E_DEVICE_OOM, TDM_E_DEVICE. */
    int (*col_alloc)(const tdm_backend *b, size_t n, struct arc_col *c);
    void (*col_free)(const tdm_backend *b, struct arc_col *c);
    int (*col_put)(const tdm_backend *b, const struct arc_col *dst, const uint32_t *lanes, size_t m,
                   const struct arc_col *src);
    int (*col_get)(const tdm_backend *b, const struct arc_col *src, const uint32_t *lanes, size_t m,
                   const struct arc_col *dst);
    int (*bop_run)(const tdm_backend *b, const struct arc_bop_call *c, const uint8_t *active, uint8_t *status);
} tdm_arc_dev_ops;

#endif
