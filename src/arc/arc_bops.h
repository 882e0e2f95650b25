/* arc_bops.h: the batched primitives of the ARC executor (src/arc/exec.c), shared by the host and the CUDA
 * module (src/cuda/arc_bops.cu): which primitives have a batched form, the kinds of value a lane of a column
 * can hold, the column layout, and the call a kernel receives.
 *
 * A column holds one value per lane (one lane per grid of the batch) in fixed-size cells, so a whole column
 * moves and is computed at once: cells (900 bytes a lane, the 30 x 30 slot), hw (2 bytes a lane) and iv (two
 * int64 a lane). What a lane means is its kind (the host keeps the kinds):
 *   GRID  a grid of 1..30 x 1..30 cells of colours 0..9: cells[i*30 + j], hw = (h, w);
 *   INT   an int (not a bool): iv[0];
 *   PAIR  a tuple of two ints: iv[0], iv[1];
 *   POS   a set of positions: cells[i*30 + j] = 1 for (i, j) in it (only 0 <= i, j < 30 kept). A POS a
 *         kernel makes (ofcolor) stands for the frozenset built row-major, which is exactly ofcolor's;
 *   OBJ   cells of an object: cells[i*30 + j] = the colour at (i, j), 0xFF where none (positions outside
 *         0..29 dropped; objects with two colours at one position are not representable).
 * Every batched primitive is the interpreter's primitive on the lanes where it is defined and its result
 * is representable; elsewhere a lane's status is 0 and the executor asks the interpreter, so the batched
 * form never has to agree with Python on errors or on results it cannot hold. */
#ifndef TANDEM_ARC_BOPS_H
#define TANDEM_ARC_BOPS_H

#include <stddef.h>
#include <stdint.h>

enum { ARC_VK_NONE = 0, ARC_VK_GRID, ARC_VK_INT, ARC_VK_PAIR, ARC_VK_POS, ARC_VK_OBJ };

#define ARC_OBJ_ABSENT 0xFF

/* primitive, result kind, argument kinds (NONE past the arity) */
#define ARC_BOP_LIST(X)                                                                                    \
    X(hmirror, GRID, GRID, NONE, NONE)                                                                     \
    X(vmirror, GRID, GRID, NONE, NONE)                                                                     \
    X(dmirror, GRID, GRID, NONE, NONE)                                                                     \
    X(cmirror, GRID, GRID, NONE, NONE)                                                                     \
    X(rot90, GRID, GRID, NONE, NONE)                                                                       \
    X(rot180, GRID, GRID, NONE, NONE)                                                                      \
    X(rot270, GRID, GRID, NONE, NONE)                                                                      \
    X(tophalf, GRID, GRID, NONE, NONE)                                                                     \
    X(bottomhalf, GRID, GRID, NONE, NONE)                                                                  \
    X(lefthalf, GRID, GRID, NONE, NONE)                                                                    \
    X(righthalf, GRID, GRID, NONE, NONE)                                                                   \
    X(trim, GRID, GRID, NONE, NONE)                                                                        \
    X(replace, GRID, GRID, INT, INT)                                                                       \
    X(switch, GRID, GRID, INT, INT)                                                                        \
    X(upscale, GRID, GRID, INT, NONE)                                                                      \
    X(hupscale, GRID, GRID, INT, NONE)                                                                     \
    X(vupscale, GRID, GRID, INT, NONE)                                                                     \
    X(downscale, GRID, GRID, INT, NONE)                                                                    \
    X(crop, GRID, GRID, PAIR, PAIR)                                                                        \
    X(hconcat, GRID, GRID, GRID, NONE)                                                                     \
    X(vconcat, GRID, GRID, GRID, NONE)                                                                     \
    X(cellwise, GRID, GRID, GRID, INT)                                                                     \
    X(fill, GRID, GRID, INT, POS)                                                                          \
    X(underfill, GRID, GRID, INT, POS)                                                                     \
    X(paint, GRID, GRID, OBJ, NONE)                                                                        \
    X(underpaint, GRID, GRID, OBJ, NONE)                                                                   \
    X(numcolors, INT, GRID, NONE, NONE)                                                                    \
    X(mostcolor, INT, GRID, NONE, NONE)                                                                    \
    X(leastcolor, INT, GRID, NONE, NONE)                                                                   \
    X(colorcount, INT, GRID, INT, NONE)                                                                    \
    X(height, INT, GRID, NONE, NONE)                                                                       \
    X(width, INT, GRID, NONE, NONE)                                                                        \
    X(shape, PAIR, GRID, NONE, NONE)                                                                       \
    X(ofcolor, POS, GRID, INT, NONE)

enum {
#define ARC_X_BOP(p, r, a0, a1, a2) ARC_BOP_##p,
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

/* One batched primitive over the lanes of a chunk. An argument is a column (col[a].iv != NULL) or, for INT
 * and PAIR arguments, a constant k[a] broadcast to every lane (col[a] all NULL). */
typedef struct arc_bop_call {
    int op;      /* ARC_BOP_* */
    size_t n;    /* lanes */
    arc_col arg[3];
    int64_t k[3][2];
    arc_col out;
} arc_bop_call;

#endif
