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

/* The iteration order of a CPython set of the n distinct colours 0..9 inserted in the order ins[0..n),
 * and of its frozen copies (spec 4.9): ascending from 5 colours on; for 4 or fewer, each colour in turn takes
 * slot c mod 8 of an 8-slot table or the first free slot along s -> (5s + 1) mod 8, read in slot order.
 * Writes it[0..n). */
static inline ARC_HD void arc_colour_set_order(const int *ins, int n, int *it) {
    if (n >= 5) {
        unsigned present = 0;
        for (int x = 0; x < n; x++) present |= 1u << ins[x];
        for (int c = 0, k = 0; c < ARC_COLOURS; c++)
            if (present >> c & 1) it[k++] = c;
        return;
    }
    int slot[8];
    for (int s = 0; s < 8; s++) slot[s] = -1;
    for (int x = 0; x < n; x++) {
        int s = ins[x] % 8;
        while (slot[s] >= 0) s = (5 * s + 1) % 8;
        slot[s] = ins[x];
    }
    for (int s = 0, k = 0; s < 8; s++)
        if (slot[s] >= 0) it[k++] = slot[s];
}

/* The distinct colours of a grid in first row-major occurrence order, from each colour's count and first
 * occurrence (UINT32_MAX: absent): their number, and the colours in ins[]. */
static inline ARC_HD int arc_colours_by_first(const uint32_t *count, const uint32_t *first, int *ins) {
    int k = 0;
    uint32_t done = 0; /* at most 10 colours: a selection sort is plenty */
    for (;;) {
        int best = -1;
        for (int c = 0; c < ARC_COLOURS; c++)
            if (count[c] && !(done >> c & 1) && (best < 0 || first[c] < first[best])) best = c;
        if (best < 0) return k;
        done |= 1u << best;
        ins[k++] = best;
    }
}

/* The colour whose count is the most (least: the fewest) of those present when no other present colour
 * has that count: the answer in any set order; -2 when another has it (the order decides); -1 when none
 * is present. */
static inline ARC_HD int arc_unique_best_count(const uint32_t *count, int least) {
    int bg = -1, tie = 0;
    for (int c = 0; c < ARC_COLOURS; c++) {
        if (!count[c]) continue;
        if (bg < 0 || (least ? count[c] < count[bg] : count[c] > count[bg])) bg = c, tie = 0;
        else if (count[c] == count[bg]) tie = 1;
    }
    return tie ? -2 : bg;
}

/* mostcolor (least = 0) or leastcolor (least = 1) of a grid from its colour counts and each colour's first
 * row-major occurrence (UINT32_MAX: absent): the first colour of best count in the set's iteration order. */
static inline ARC_HD int arc_pick_colour_in_order(const uint32_t *count, const uint32_t *first, int least) {
    int order[ARC_COLOURS], iter[ARC_COLOURS];
    int n = arc_colours_by_first(count, first, order);
    arc_colour_set_order(order, n, iter);
    int bg = -1;
    for (int x = 0; x < n; x++)
        if (bg < 0 || (least ? count[iter[x]] < count[bg] : count[iter[x]] > count[bg])) bg = iter[x];
    return bg;
}

/* The same, the set's order worked out only for a tie (arc_unique_best_count). */
static inline ARC_HD int arc_pick_colour_of_counts(const uint32_t *count, const uint32_t *first, int least) {
    int bg = arc_unique_best_count(count, least);
    return bg != -2 ? bg : arc_pick_colour_in_order(count, first, least);
}

/* bg of a grid: mostcolor() by arc_pick_colour_of_counts. */
static inline ARC_HD int arc_mostcolor_of_counts(const uint32_t *count, const uint32_t *first) {
    return arc_pick_colour_of_counts(count, first, 0);
}

/* Timings of one call, for the caller's statistics (device time from CUDA events). */
typedef struct {
    double h2d_ms, kernel_ms, d2h_ms;
} tdm_arc_dev_times;

/* objects() labels of one grid in a 30 x 30 slot (flags ARC_OBJ_*): per slot cell, the row-major index of
 * its component's first cell, -1 for background and outside h x w (src/arc/objects_batch.c: the CPU path of
 * tdm_arc_objects_labels, also the batched executor's CPU labels). */
void arc_objects_label_grid(const uint8_t *cells, int h, int w, int flags, int16_t *out);

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
    /* The batched executor's columns and kernels (src/arc/arc_bops.h, CUDA module ABI 12; four arguments from 13). col_alloc makes
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
