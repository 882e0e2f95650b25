/* arc_bops.h: the batched primitives of the ARC executor (src/arc/exec.c), shared by the host and the CUDA
 * module (src/cuda/arc_bops.cu, arc_bops_sets.cu): which primitives have a batched form, the kinds of value a
 * lane of a column can hold, the column layout, and the call a kernel receives.
 *
 * A column holds one value per lane (one lane per grid of the batch) in fixed-size cells, so a whole column
 * moves and is computed at once: cells (900 bytes a lane, the 30 x 30 slot), hw (2 bytes a lane) and iv (two
 * int64 a lane). What a lane means is its kind (the host keeps the kinds):
 *   GRID   a grid of 1..30 x 1..30 cells of colours 0..9: cells[i*30 + j], hw = (h, w);
 *   INT    an int (not a bool): iv[0];
 *   PAIR   a tuple of two ints: iv[0], iv[1];
 *   POS    a set of positions: cells[i*30 + j] = 1 for (i, j) in it (only 0 <= i, j < 30 kept). A POS a
 *          kernel makes (ofcolor) stands for the frozenset built row-major, which is exactly ofcolor's;
 *   OBJ    cells of an object: cells[i*30 + j] = the colour at (i, j), 0xFF where none (positions outside
 *          0..29 dropped; objects with two colours at one position are not representable);
 *   OBJS   a value made from the objects of a grid: the grid (cells & ARC_OS_COLOUR, hw) with a mark
 *          (ARC_OS_MARK) on the cells of the objects the value holds, and in iv[0] its recipe: the maker
 *          (ARC_OS_MAKER: objects() with its ARC_OBJ_* flags, partition or fgpartition of that grid) and the
 *          form (ARC_OS_FORM): SET the maker's own value; SUB the seq of the marked objects in its
 *          iteration order (what sizefilter and colorfilter build); ONE the marked object itself (argmax,
 *          argmin); MSET, MSUB merge of SET or SUB. With ARC_OS_RECOLOURED (ONE, MSET, MSUB only) the value
 *          is recolor(iv[1], that). iv[1] of SET and SUB: the number of objects. The host decodes a lane by
 *          running the interpreter's own primitives on that recipe, so every layout is the interpreter's;
 *          kernels only ever need the marks, the colours and the components the flags define;
 *   COLSET a set of colours 0..9 built by inserting ARC_CS_N(iv[0]) colours in the order packed in iv[1]
 *          (4 bits each, first inserted lowest), then frozen when ARC_CS_FROZEN (palette) or not (remove):
 *          that history fixes its CPython layout (spec 4.9);
 *   TRUTH  an argument only read for its truth (objects()'s flags): iv[0] 0 or 1;
 *   SIZEFN an argument that must be the primitive size itself (argmax(x, size)): nothing stored.
 * Every batched primitive is the interpreter's primitive on the lanes where it is defined and its result
 * is representable; elsewhere a lane's status is 0 and the executor asks the interpreter, so the batched
 * form never has to agree with Python on errors or on results it cannot hold. */
#ifndef TANDEM_ARC_BOPS_H
#define TANDEM_ARC_BOPS_H

#include "arc_device.h" /* ARC_HD, arc_colour_set_order */

#include <stddef.h>
#include <stdint.h>

enum {
    ARC_VK_NONE = 0,
    ARC_VK_GRID,
    ARC_VK_INT,
    ARC_VK_PAIR,
    ARC_VK_POS,
    ARC_VK_OBJ,
    ARC_VK_OBJS,
    ARC_VK_COLSET,
    ARC_VK_TRUTH,
    ARC_VK_SIZEFN
};

#define ARC_OBJ_ABSENT 0xFF

/* OBJS lanes (see above) */
#define ARC_OS_MARK 0x80
#define ARC_OS_COLOUR 0x0F
#define ARC_OS_MAKER(v) ((int)((v) & 15))   /* 0..7: objects() with those ARC_OBJ_* flags; or: */
enum { ARC_OS_PARTITION = 8, ARC_OS_FGPARTITION = 9 };
#define ARC_OS_FORM(v) ((int)((v) >> 4 & 7))
enum { ARC_OS_SET = 0, ARC_OS_SUB, ARC_OS_ONE, ARC_OS_MSET, ARC_OS_MSUB };
#define ARC_OS_RECOLOURED 0x80
#define ARC_OS_IV0(maker, form) ((int64_t)(maker) | (int64_t)(form) << 4)

/* COLSET lanes */
#define ARC_CS_N(v) ((int)((v) & 15))
#define ARC_CS_FROZEN 0x100
#define ARC_CS_AT(order, k) ((int)((uint64_t)(order) >> (4 * (k)) & 15))

/* A COLSET lane's ints from the n colours inserted in the order ins[0..n). From 5 colours on the layout does
 * not depend on the order (spec 4.9), which is then written ascending, so such a set has one lane. */
static inline ARC_HD void arc_cs_pack(const int *ins, int n, int frozen, int64_t *iv) {
    int asc[ARC_COLOURS];
    if (n >= 5) {
        arc_colour_set_order(ins, n, asc);
        ins = asc;
    }
    uint64_t order = 0;
    for (int k = 0; k < n; k++) order |= (uint64_t)ins[k] << (4 * k);
    iv[0] = n | (frozen ? ARC_CS_FROZEN : 0), iv[1] = (int64_t)order;
}

/* The colours of a COLSET lane in its iteration order (spec 4.9's closed form); returns how many. */
static inline ARC_HD int arc_cs_iter(const int64_t *iv, int *it) {
    int ins[ARC_COLOURS], n = ARC_CS_N(iv[0]);
    for (int k = 0; k < n; k++) ins[k] = ARC_CS_AT(iv[1], k);
    arc_colour_set_order(ins, n, it);
    return n;
}

/* remove(v, S)'s survivors in S's iteration order, the order remove inserts them in; returns how many. */
static inline ARC_HD int arc_cs_without(const int64_t *iv, int64_t v, int *out) {
    int it[ARC_COLOURS], n = arc_cs_iter(iv, it), m = 0;
    for (int k = 0; k < n; k++)
        if (it[k] != v) out[m++] = it[k];
    return m;
}

/* name, primitive, result kind, argument kinds (NONE past the arity). A primitive may have several forms
 * (fill of positions, fill of an OBJS lane): the executor tries them in this order. The objects-based forms
 * (OBJS and COLSET arguments or results) are computed natively on both sides: src/arc/exec_sets.c on the
 * CPU, src/cuda/arc_bops.cu and arc_bops_sets.cu on the GPU. */
#define ARC_BOP_LIST(X)                                                                                \
    X(hmirror, hmirror, GRID, GRID, NONE, NONE, NONE)                                                  \
    X(vmirror, vmirror, GRID, GRID, NONE, NONE, NONE)                                                  \
    X(dmirror, dmirror, GRID, GRID, NONE, NONE, NONE)                                                  \
    X(cmirror, cmirror, GRID, GRID, NONE, NONE, NONE)                                                  \
    X(rot90, rot90, GRID, GRID, NONE, NONE, NONE)                                                      \
    X(rot180, rot180, GRID, GRID, NONE, NONE, NONE)                                                    \
    X(rot270, rot270, GRID, GRID, NONE, NONE, NONE)                                                    \
    X(tophalf, tophalf, GRID, GRID, NONE, NONE, NONE)                                                  \
    X(bottomhalf, bottomhalf, GRID, GRID, NONE, NONE, NONE)                                            \
    X(lefthalf, lefthalf, GRID, GRID, NONE, NONE, NONE)                                                \
    X(righthalf, righthalf, GRID, GRID, NONE, NONE, NONE)                                              \
    X(trim, trim, GRID, GRID, NONE, NONE, NONE)                                                        \
    X(replace, replace, GRID, GRID, INT, INT, NONE)                                                    \
    X(switch, switch, GRID, GRID, INT, INT, NONE)                                                      \
    X(upscale, upscale, GRID, GRID, INT, NONE, NONE)                                                   \
    X(hupscale, hupscale, GRID, GRID, INT, NONE, NONE)                                                 \
    X(vupscale, vupscale, GRID, GRID, INT, NONE, NONE)                                                 \
    X(downscale, downscale, GRID, GRID, INT, NONE, NONE)                                               \
    X(crop, crop, GRID, GRID, PAIR, PAIR, NONE)                                                        \
    X(hconcat, hconcat, GRID, GRID, GRID, NONE, NONE)                                                  \
    X(vconcat, vconcat, GRID, GRID, GRID, NONE, NONE)                                                  \
    X(cellwise, cellwise, GRID, GRID, GRID, INT, NONE)                                                 \
    X(fill, fill, GRID, GRID, INT, POS, NONE)                                                          \
    X(underfill, underfill, GRID, GRID, INT, POS, NONE)                                                \
    X(paint, paint, GRID, GRID, OBJ, NONE, NONE)                                                       \
    X(underpaint, underpaint, GRID, GRID, OBJ, NONE, NONE)                                             \
    X(numcolors, numcolors, INT, GRID, NONE, NONE, NONE)                                               \
    X(mostcolor, mostcolor, INT, GRID, NONE, NONE, NONE)                                               \
    X(leastcolor, leastcolor, INT, GRID, NONE, NONE, NONE)                                             \
    X(colorcount, colorcount, INT, GRID, INT, NONE, NONE)                                              \
    X(height, height, INT, GRID, NONE, NONE, NONE)                                                     \
    X(width, width, INT, GRID, NONE, NONE, NONE)                                                       \
    X(shape, shape, PAIR, GRID, NONE, NONE, NONE)                                                      \
    X(ofcolor, ofcolor, POS, GRID, INT, NONE, NONE)                                                    \
    X(cover, cover, GRID, GRID, POS, NONE, NONE)                                                       \
    X(fill_os, fill, GRID, GRID, INT, OBJS, NONE)                                                      \
    X(underfill_os, underfill, GRID, GRID, INT, OBJS, NONE)                                            \
    X(cover_os, cover, GRID, GRID, OBJS, NONE, NONE)                                                   \
    X(paint_os, paint, GRID, GRID, OBJS, NONE, NONE)                                                   \
    X(underpaint_os, underpaint, GRID, GRID, OBJS, NONE, NONE)                                         \
    X(subgrid_os, subgrid, GRID, OBJS, GRID, NONE, NONE)                                               \
    X(objects, objects, OBJS, GRID, TRUTH, TRUTH, TRUTH)                                               \
    X(partition, partition, OBJS, GRID, NONE, NONE, NONE)                                              \
    X(fgpartition, fgpartition, OBJS, GRID, NONE, NONE, NONE)                                          \
    X(sizefilter_os, sizefilter, OBJS, OBJS, INT, NONE, NONE)                                          \
    X(colorfilter_os, colorfilter, OBJS, OBJS, INT, NONE, NONE)                                        \
    X(argmax_os, argmax, OBJS, OBJS, SIZEFN, NONE, NONE)                                               \
    X(argmin_os, argmin, OBJS, OBJS, SIZEFN, NONE, NONE)                                               \
    X(merge_os, merge, OBJS, OBJS, NONE, NONE, NONE)                                                   \
    X(size_os, size, INT, OBJS, NONE, NONE, NONE)                                                      \
    X(color_os, color, INT, OBJS, NONE, NONE, NONE)                                                    \
    X(recolor_os, recolor, OBJS, INT, OBJS, NONE, NONE)                                                \
    X(palette, palette, COLSET, GRID, NONE, NONE, NONE)                                                \
    X(palette_os, palette, COLSET, OBJS, NONE, NONE, NONE)                                             \
    X(size_cs, size, INT, COLSET, NONE, NONE, NONE)                                                    \
    X(first_cs, first, INT, COLSET, NONE, NONE, NONE)                                                  \
    X(last_cs, last, INT, COLSET, NONE, NONE, NONE)                                                    \
    X(other_cs, other, INT, COLSET, INT, NONE, NONE)                                                   \
    X(remove_cs, remove, COLSET, INT, COLSET, NONE, NONE)

enum {
#define ARC_X_BOP(name, p, r, a0, a1, a2, a3) ARC_BOP_##name,
    ARC_BOP_LIST(ARC_X_BOP)
#undef ARC_X_BOP
    ARC_NBOP
};

/* A column of n lanes (device memory on the GPU, host memory on the CPU). Packed host copies of m lanes
 * (col_put/col_get) use the same layout with m lanes. */
typedef struct arc_col {
    uint8_t *cells; /* 900 bytes a lane */
    uint8_t *hw;    /* 2 bytes a lane */
    int64_t *iv;    /* 2 a lane */
} arc_col;

/* One batched primitive over the lanes of a chunk. An argument is a column (col[a].iv != NULL) or, for INT,
 * PAIR and TRUTH arguments, a constant k[a] broadcast to every lane (col[a] all NULL; SIZEFN: nothing). */
typedef struct arc_bop_call {
    int op;      /* ARC_BOP_* */
    size_t n;    /* lanes */
    arc_col arg[4];
    int64_t k[4][2];
    arc_col out;
} arc_bop_call;

#endif
