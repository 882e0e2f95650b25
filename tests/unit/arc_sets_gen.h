/* arc_sets_gen.h: seeded random lanes for the objects-based batched primitives (src/arc/exec_sets.c), shared
 * by tests/unit/test_arc_sets.c (CPU forms against the interpreter) and test_arc_bops.c (GPU against CPU):
 * grids of every kind objects() finds hard (blobs, noise, checkerboards, one colour, stripes, the 0/8 and 1/9
 * palettes of mostcolor's ties), and OBJS and COLSET lanes made from them by the CPU forms themselves
 * (a maker, then a few random steps), so every lane is one the executor can meet. */
#ifndef TANDEM_ARC_SETS_GEN_H
#define TANDEM_ARC_SETS_GEN_H

#include "unit_common.h"

#include "arc/arc_device.h"
#include "arc/exec_internal.h"

#include <string.h>

enum { SG_BLOBS, SG_ONE, SG_CHECKER, SG_NOISE, SG_STRIPES, SG_TRICKY, SG_NKINDS };

/* A random grid into lane l of col (GRID layout: zeros outside h x w). */
static inline void sg_grid(tu_rng *r, const arc_col *col, size_t l) {
    int kind = (int)tu_below(r, SG_NKINDS), h = 1 + (int)tu_below(r, 30), w = 1 + (int)tu_below(r, 30);
    if (tu_below(r, 2)) h = 1 + (int)tu_below(r, 8), w = 1 + (int)tu_below(r, 8);
    int pal[10], k = 1 + (int)tu_below(r, 10);
    static const int tricky[] = {8, 0, 9, 1, 2, 3};
    for (int x = 0; x < 10; x++) pal[x] = kind == SG_TRICKY && x < 6 ? tricky[x] : (int)tu_below(r, 10);
    if (kind == SG_TRICKY) k = 1 + (int)tu_below(r, 5);
    int a = pal[0], b = pal[1] == pal[0] ? (pal[0] + 1) % 10 : pal[1];
    uint8_t *c = col->cells + l * 900;
    memset(c, 0, 900);
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            uint8_t *v = &c[i * 30 + j];
            switch (kind) {
            case SG_ONE: *v = (uint8_t)a; break;
            case SG_CHECKER: *v = (uint8_t)((i + j) % 2 ? a : b); break;
            case SG_NOISE: *v = (uint8_t)pal[tu_below(r, (uint64_t)k)]; break;
            case SG_STRIPES: *v = (uint8_t)((tu_below(r, 2) ? i : j) % 3 ? a : b); break;
            default:
                *v = (uint8_t)pal[tu_below(r, (uint64_t)k)];
                if (j && tu_below(r, 3)) *v = c[i * 30 + j - 1];
                if (i && tu_below(r, 2)) *v = c[(i - 1) * 30 + j];
            }
        }
    col->hw[2 * l] = (uint8_t)h, col->hw[2 * l + 1] = (uint8_t)w;
    col->iv[2 * l] = col->iv[2 * l + 1] = 0;
}

/* Runs the CPU form op on lane 0 of the given one-lane columns (NULL past the arity, and for SIZEFN),
 * writing lane 0 of out: its status. */
static inline int sg_run(int op, const arc_col *a0, const arc_col *a1, const arc_col *a2, const arc_col *a3, const arc_col *out) {
    arc_bop_call c;
    memset(&c, 0, sizeof c);
    c.op = op, c.n = 1, c.out = *out;
    const arc_col *a[4] = {a0, a1, a2, a3};
    for (int k = 0; k < 4; k++)
        if (a[k]) c.arg[k] = *a[k];
    uint8_t active = 1, status = 0;
    assert_int_equal(arc_cpu_bop_run(&c, &active, &status, 1), TDM_OK);
    return status;
}

static inline void sg_int(const arc_col *col, int64_t v) { col->iv[0] = v, col->iv[1] = 0; }

/* A random OBJS lane into lane l of col: a maker on a random grid, then up to two random steps (each kept
 * only where the CPU form accepts it). tmp: four one-lane scratch columns. */
static inline void sg_objs(tu_rng *r, const arc_col *col, size_t l, const arc_col *tmp) {
    const arc_col *g = &tmp[0], *k = &tmp[1], *x = &tmp[2], *y = &tmp[3];
    sg_grid(r, g, 0);
    int maker = (int)tu_below(r, 10);
    if (maker < 8) {
        arc_bop_call c; /* the flags as TRUTH constants */
        memset(&c, 0, sizeof c);
        c.op = ARC_BOP_objects, c.n = 1, c.out = *x, c.arg[0] = *g;
        for (int q = 0; q < 3; q++) c.k[q + 1][0] = maker >> q & 1;
        uint8_t active = 1, status = 0;
        assert_int_equal(arc_cpu_bop_run(&c, &active, &status, 1), TDM_OK);
        assert_int_equal(status, 1);
    } else {
        assert_int_equal(sg_run(maker == 8 ? ARC_BOP_partition : ARC_BOP_fgpartition, g, NULL, NULL, NULL, x), 1);
    }
    static const int steps[] = {ARC_BOP_sizefilter_os, ARC_BOP_colorfilter_os, ARC_BOP_argmax_os, ARC_BOP_argmin_os,
                                ARC_BOP_merge_os, ARC_BOP_recolor_os};
    int nsteps = (int)tu_below(r, 3);
    for (int q = 0; q < nsteps; q++) {
        int op = steps[tu_below(r, 6)], st;
        sg_int(k, op == ARC_BOP_recolor_os ? (int64_t)tu_below(r, 11) : op == ARC_BOP_sizefilter_os ? 1 + (int64_t)tu_below(r, 4)
                                                                                                   : (int64_t)tu_below(r, 10));
        if (op == ARC_BOP_recolor_os) st = sg_run(op, k, x, NULL, NULL, y);
        else st = sg_run(op, x, k, NULL, NULL, y);
        if (st) memcpy(x->cells, y->cells, 900), memcpy(x->hw, y->hw, 2), memcpy(x->iv, y->iv, 16);
    }
    memcpy(col->cells + l * 900, x->cells, 900), memcpy(col->hw + 2 * l, x->hw, 2), memcpy(col->iv + 2 * l, x->iv, 16);
}

/* A random COLSET lane: palette of a random grid, or of a random object, then maybe a remove. */
static inline void sg_colset(tu_rng *r, const arc_col *col, size_t l, const arc_col *tmp) {
    const arc_col *x = &tmp[2], *y = &tmp[3], *k = &tmp[1];
    int st = 0;
    if (tu_below(r, 3)) {
        sg_grid(r, &tmp[0], 0);
        st = sg_run(ARC_BOP_palette, &tmp[0], NULL, NULL, NULL, y);
    }
    while (!st) {
        sg_objs(r, x, 0, tmp);
        st = sg_run(ARC_BOP_palette_os, x, NULL, NULL, NULL, y);
    }
    if (tu_below(r, 3) == 0) {
        memcpy(x->iv, y->iv, 16);
        sg_int(k, (int64_t)tu_below(r, 10));
        assert_int_equal(sg_run(ARC_BOP_remove_cs, k, x, NULL, NULL, y), 1);
    }
    memcpy(col->iv + 2 * l, y->iv, 16);
}

#endif
