/* arc_bops_sets.cu: the batched executor's objects-based kernels on the GPU (src/arc/arc_bops.h: OBJS and
 * COLSET lanes): objects() in its 8 flag combinations, partition, fgpartition, sizefilter, colorfilter,
 * argmax and argmin by size, merge, size, color, recolor, palette, and the colour-set readers. Each writes
 * the same bytes and statuses as its CPU form (src/arc/exec_sets.c), checked lane by lane in
 * tests/unit/test_arc_bops.c; the CPU forms are held to the interpreter by tests/unit/test_arc_sets.c.
 *
 * One warp per lane, as in arc_bops.cu. The forms that need objects label the marked cells of the lane in
 * shared memory with objects()'s union-find (the labels kernel's, arc_warp.cuh: a component's root is its
 * first cell) or by colour for partition's, and count each object's cells and colours with shared atomics;
 * an object's fate is decided by the lane that holds its root. The grid writers that read an OBJS lane
 * (fill, paint, ...) are in arc_bops.cu with the other grid writers. */
#include "arc/arc_bops.h"
#include "arc/arc_device.h"
#include "cuda/arc_warp.cuh"
#include "cuda/cuda_internal.cuh"

#include <limits.h>

#define WARPS 4
#define SEL_BIT (1 << 30) /* st[root]: the object is kept */

static __device__ __forceinline__ int inside(int s, int h, int w) { return s / ARC_SLOT < h && s % ARC_SLOT < w; }

static __device__ __forceinline__ int patch_form(int64_t iv0) {
    int f = ARC_OS_FORM(iv0);
    return f == ARC_OS_ONE || f == ARC_OS_MSET || f == ARC_OS_MSUB;
}

/* Per-warp shared scratch. */
struct scratch {
    uint8_t *col;
    volatile int *par; /* per slot: its object's root slot, -1 unmarked */
    int *st;           /* per root slot: cells (low 16 bits), colours (bit 16 + c), SEL_BIT */
    int *first;        /* per colour: its first marked slot (partition's objects) */
};

/* Labels the marked cells of a lane of maker `maker` into x.par and x.st; the number of objects, on every
 * lane of the warp. Marked cells are always whole objects, so the components among them are the objects. */
static __device__ int warp_label(const uint8_t *cells, int h, int w, int maker, int lane, const scratch &x) {
    for (int s = lane; s < ARC_SLOT_CELLS; s += 32) {
        int in = inside(s, h, w);
        x.col[s] = in ? cells[s] & ARC_OS_COLOUR : 0;
        x.par[s] = in && cells[s] & ARC_OS_MARK ? s : -1;
        x.st[s] = 0;
    }
    if (lane < ARC_COLOURS) x.first[lane] = INT_MAX;
    __syncwarp();
    if (maker >= ARC_OS_PARTITION) {
        for (int s = lane; s < ARC_SLOT_CELLS; s += 32)
            if (x.par[s] >= 0) atomicMin(&x.first[x.col[s]], s);
        __syncwarp();
        for (int s = lane; s < ARC_SLOT_CELLS; s += 32)
            if (x.par[s] >= 0) x.par[s] = x.first[x.col[s]];
    } else {
        const int links = maker & ARC_OBJ_DIAGONAL ? 4 : 2, uni = maker & ARC_OBJ_UNIVALUED;
        for (int s = lane; s < ARC_SLOT_CELLS; s += 32) {
            if (x.par[s] < 0) continue;
            int i = s / ARC_SLOT, j = s % ARC_SLOT;
            for (int k = 0; k < links; k++) {
                int y = i + (k == 0 ? 0 : 1), z = j + (k == 0 ? 1 : k == 1 ? 0 : k == 2 ? 1 : -1);
                if (y >= h || z < 0 || z >= w) continue;
                int t = y * ARC_SLOT + z;
                if (x.par[t] >= 0 && (!uni || x.col[t] == x.col[s])) arc_uf_unite(x.par, s, t);
            }
        }
        __syncwarp();
        /* every cell straight under its root: all finds first, then the writes (no reader meets a write) */
        int roots[(ARC_SLOT_CELLS + 31) / 32];
        for (int s = lane, k = 0; s < ARC_SLOT_CELLS; s += 32, k++) roots[k] = x.par[s] >= 0 ? arc_uf_find(x.par, s) : -1;
        __syncwarp();
        for (int s = lane, k = 0; s < ARC_SLOT_CELLS; s += 32, k++) x.par[s] = roots[k];
    }
    __syncwarp();
    int n = 0;
    for (int s = lane; s < ARC_SLOT_CELLS; s += 32) {
        int r = x.par[s];
        if (r < 0) continue;
        atomicAdd(&x.st[r], 1);
        atomicOr(&x.st[r], 1 << (16 + x.col[s]));
        n += r == s;
    }
    __syncwarp();
    return arc_warp_sum(n);
}

/* The marked cells of a lane and their colours (bit c), on every lane of the warp. */
static __device__ int warp_marked(const uint8_t *cells, int h, int w, int lane, uint32_t *colours) {
    int n = 0;
    uint32_t m = 0;
    for (int s = lane; s < ARC_SLOT_CELLS; s += 32)
        if (cells[s] & ARC_OS_MARK && inside(s, h, w)) n++, m |= 1u << (cells[s] & ARC_OS_COLOUR);
    *colours = arc_warp_or(m);
    return arc_warp_sum(n);
}

static __device__ void copy_lane(const arc_col &from, size_t l, const arc_col &to, int lane) {
    const uint32_t *f4 = (const uint32_t *)(from.cells + l * ARC_SLOT_CELLS);
    uint32_t *t4 = (uint32_t *)(to.cells + l * ARC_SLOT_CELLS);
    for (int s = lane; s < ARC_SLOT_CELLS / 4; s += 32) t4[s] = f4[s];
    if (lane < 2) to.hw[2 * l + lane] = from.hw[2 * l + lane];
}

/* objects(), partition(), fgpartition() of a grid lane. */
static __device__ int make(const arc_bop_call &c, size_t l, int lane, const scratch &x) {
    const uint8_t *g = c.arg[0].cells + l * ARC_SLOT_CELLS;
    const int h = c.arg[0].hw[2 * l], w = c.arg[0].hw[2 * l + 1];
    int maker = c.op == ARC_BOP_partition ? ARC_OS_PARTITION : c.op == ARC_BOP_fgpartition ? ARC_OS_FGPARTITION : 0;
    if (c.op == ARC_BOP_objects)
        maker = (arc_arg_int(c, 1, l, 0) ? ARC_OBJ_UNIVALUED : 0) | (arc_arg_int(c, 2, l, 0) ? ARC_OBJ_DIAGONAL : 0) |
                (arc_arg_int(c, 3, l, 0) ? ARC_OBJ_WITHOUT_BG : 0);
    int bg = -1;
    if ((maker < ARC_OS_PARTITION && maker & ARC_OBJ_WITHOUT_BG) || maker == ARC_OS_FGPARTITION) {
        uint32_t count[ARC_COLOURS], first[ARC_COLOURS];
        arc_warp_counts(g, h, w, lane, count, first);
        bg = arc_mostcolor_of_counts(count, first);
    }
    uint8_t *o = c.out.cells + l * ARC_SLOT_CELLS;
    for (int s = lane; s < ARC_SLOT_CELLS; s += 32)
        o[s] = inside(s, h, w) ? (uint8_t)(g[s] | (g[s] != bg ? ARC_OS_MARK : 0)) : 0;
    __syncwarp();
    int n = warp_label(o, h, w, maker, lane, x);
    if (lane == 0) {
        c.out.hw[2 * l] = (uint8_t)h, c.out.hw[2 * l + 1] = (uint8_t)w;
        c.out.iv[2 * l] = ARC_OS_IV0(maker, ARC_OS_SET), c.out.iv[2 * l + 1] = n;
    }
    return 1;
}

/* sizefilter, colorfilter of a SET (a SUB); argmax, argmin by size of a SET or SUB (a ONE). */
static __device__ int pick(const arc_bop_call &c, size_t l, int lane, const scratch &x) {
    const arc_col &a = c.arg[0];
    const uint8_t *cells = a.cells + l * ARC_SLOT_CELLS;
    const int h = a.hw[2 * l], w = a.hw[2 * l + 1], maker = ARC_OS_MAKER(a.iv[2 * l]), form = ARC_OS_FORM(a.iv[2 * l]);
    const int filter = c.op == ARC_BOP_sizefilter_os || c.op == ARC_BOP_colorfilter_os, most = c.op == ARC_BOP_argmax_os;
    if (filter ? form != ARC_OS_SET : form != ARC_OS_SET && form != ARC_OS_SUB) return 0;
    int n = warp_label(cells, h, w, maker, lane, x);
    if (!filter && !n) return 0; /* max() of nothing raises */
    const int64_t k = filter ? arc_arg_int(c, 1, l, 0) : 0;
    int unknown = 0, kept = 0, best = 0, nbest = 0, broot = INT_MAX;
    for (int s = lane; s < ARC_SLOT_CELLS; s += 32) {
        if (x.par[s] != s) continue; /* each object once, by the lane holding its root */
        int size = x.st[s] & 0xFFFF, sel = 0;
        uint32_t cm = (uint32_t)x.st[s] >> 16 & 0x3FF;
        if (c.op == ARC_BOP_sizefilter_os) {
            sel = size == k;
        } else if (c.op == ARC_BOP_colorfilter_os) {
            if (cm & (cm - 1)) unknown |= k >= 0 && k < ARC_COLOURS && (cm >> k & 1);
            else sel = cm == 1u << (k >= 0 && k < ARC_COLOURS ? k : 15);
        } else if (!nbest || (most ? size > best : size < best)) {
            best = size, nbest = 1, broot = s;
        } else if (size == best) {
            nbest++, broot = s < broot ? s : broot;
        }
        if (sel) x.st[s] |= SEL_BIT;
        kept += sel;
    }
    if (__any_sync(ARC_FULL_MASK, unknown)) return 0;
    if (!filter) {
        for (int o = 16; o; o >>= 1) {
            int ob = __shfl_xor_sync(ARC_FULL_MASK, best, o), on = __shfl_xor_sync(ARC_FULL_MASK, nbest, o);
            int orr = __shfl_xor_sync(ARC_FULL_MASK, broot, o);
            if (!on) continue;
            if (!nbest || (most ? ob > best : ob < best)) best = ob, nbest = on, broot = orr;
            else if (ob == best) nbest += on, broot = orr < broot ? orr : broot;
        }
        if (nbest != 1) return 0; /* a tie goes to the first in the set's iteration order: not ours to know */
    }
    kept = arc_warp_sum(kept);
    __syncwarp();
    uint8_t *o = c.out.cells + l * ARC_SLOT_CELLS;
    for (int s = lane; s < ARC_SLOT_CELLS; s += 32) {
        int r = x.par[s];
        int sel = r >= 0 && (filter ? (x.st[r] & SEL_BIT) != 0 : r == broot);
        o[s] = inside(s, h, w) ? (uint8_t)(x.col[s] | (sel ? ARC_OS_MARK : 0)) : 0;
    }
    if (lane == 0) {
        c.out.hw[2 * l] = (uint8_t)h, c.out.hw[2 * l + 1] = (uint8_t)w;
        c.out.iv[2 * l] = ARC_OS_IV0(maker, filter ? ARC_OS_SUB : ARC_OS_ONE), c.out.iv[2 * l + 1] = filter ? kept : 0;
    }
    return 1;
}

/* merge, size, color, recolor of an OBJS lane; palette of a grid or an object. */
static __device__ int reshape(const arc_bop_call &c, size_t l, int lane) {
    const arc_col &a = c.arg[c.op == ARC_BOP_recolor_os ? 1 : 0];
    const uint8_t *cells = a.cells + l * ARC_SLOT_CELLS;
    const int h = a.hw[2 * l], w = a.hw[2 * l + 1];
    const int64_t iv0 = a.iv[2 * l], iv1 = a.iv[2 * l + 1];
    const int form = ARC_OS_FORM(iv0), rec = (iv0 & ARC_OS_RECOLOURED) != 0;
    uint32_t colours;
    int64_t r0 = 0, r1 = 0;
    switch (c.op) {
    case ARC_BOP_size_os: {
        int n = warp_marked(cells, h, w, lane, &colours);
        r0 = form == ARC_OS_SET || form == ARC_OS_SUB ? iv1 : n;
        break;
    }
    case ARC_BOP_color_os: {
        if (!patch_form(iv0)) return 0;
        int n = warp_marked(cells, h, w, lane, &colours);
        if (!n || (!rec && (colours & (colours - 1)))) return 0; /* no first cell, or no one colour */
        r0 = rec ? iv1 : __ffs(colours) - 1;
        break;
    }
    case ARC_BOP_merge_os: case ARC_BOP_recolor_os:
        if (c.op == ARC_BOP_merge_os ? form != ARC_OS_SET && form != ARC_OS_SUB : !patch_form(iv0) || rec) return 0;
        copy_lane(a, l, c.out, lane);
        if (c.op == ARC_BOP_merge_os) r0 = ARC_OS_IV0(ARC_OS_MAKER(iv0), form == ARC_OS_SET ? ARC_OS_MSET : ARC_OS_MSUB);
        else r0 = iv0 | ARC_OS_RECOLOURED, r1 = arc_arg_int(c, 0, l, 0);
        break;
    case ARC_BOP_palette: case ARC_BOP_palette_os: {
        int ins[ARC_COLOURS], n = 0;
        if (c.op == ARC_BOP_palette) {
            uint32_t count[ARC_COLOURS], first[ARC_COLOURS];
            arc_warp_counts(cells, h, w, lane, count, first);
            n = arc_colours_by_first(count, first, ins);
        } else {
            if (!patch_form(iv0)) return 0;
            int cn = warp_marked(cells, h, w, lane, &colours);
            if (cn && rec) {
                if (iv1 < 0 || iv1 >= ARC_COLOURS) return 0;
                colours = 1u << iv1;
            }
            for (int q = 0; q < ARC_COLOURS; q++)
                if (colours >> q & 1) ins[n++] = q;
            if (n > 1 && n < 5) return 0; /* the order the object's cells insert them in would matter */
        }
        int64_t iv[2];
        arc_cs_pack(ins, n, 1, iv);
        r0 = iv[0], r1 = iv[1];
        break;
    }
    default: return 0;
    }
    if (lane == 0) c.out.iv[2 * l] = r0, c.out.iv[2 * l + 1] = r1;
    return 1;
}

/* size, first, last, other, remove of a COLSET lane (lane 0 alone: at most 10 colours). */
static __device__ int colset(const arc_bop_call &c, size_t l) {
    int it[ARC_COLOURS], r[ARC_COLOURS], n, m;
    int64_t v = 0, v1 = 0;
    switch (c.op) {
    case ARC_BOP_size_cs: v = ARC_CS_N(c.arg[0].iv[2 * l]); break;
    case ARC_BOP_first_cs: case ARC_BOP_last_cs:
        if (!(n = arc_cs_iter(c.arg[0].iv + 2 * l, it))) return 0;
        v = it[c.op == ARC_BOP_first_cs ? 0 : n - 1];
        break;
    case ARC_BOP_other_cs:
        if (!(m = arc_cs_without(c.arg[0].iv + 2 * l, arc_arg_int(c, 1, l, 0), r))) return 0;
        arc_colour_set_order(r, m, it);
        v = it[0];
        break;
    case ARC_BOP_remove_cs: {
        int64_t iv[2];
        m = arc_cs_without(c.arg[1].iv + 2 * l, arc_arg_int(c, 0, l, 0), r);
        arc_cs_pack(r, m, 0, iv);
        v = iv[0], v1 = iv[1];
        break;
    }
    default: return 0;
    }
    c.out.iv[2 * l] = v, c.out.iv[2 * l + 1] = v1;
    return 1;
}

__global__ void __launch_bounds__(WARPS * 32) sets_kernel(arc_bop_call c, const uint8_t *active, uint8_t *status) {
    __shared__ __align__(16) uint8_t col_s[WARPS][ARC_SLOT_CELLS];
    __shared__ int par_s[WARPS][ARC_SLOT_CELLS], st_s[WARPS][ARC_SLOT_CELLS], first_s[WARPS][ARC_COLOURS];
    const int wid = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const scratch x = {col_s[wid], par_s[wid], st_s[wid], first_s[wid]};
    for (size_t l = (size_t)blockIdx.x * WARPS + wid; l < c.n; l += (size_t)gridDim.x * WARPS) {
        if (!active[l]) continue;
        int ok;
        switch (c.op) {
        case ARC_BOP_objects: case ARC_BOP_partition: case ARC_BOP_fgpartition: ok = make(c, l, lane, x); break;
        case ARC_BOP_sizefilter_os: case ARC_BOP_colorfilter_os: case ARC_BOP_argmax_os: case ARC_BOP_argmin_os:
            ok = pick(c, l, lane, x);
            break;
        case ARC_BOP_size_cs: case ARC_BOP_first_cs: case ARC_BOP_last_cs: case ARC_BOP_other_cs: case ARC_BOP_remove_cs:
            ok = lane == 0 ? colset(c, l) : 0;
            break;
        default: ok = reshape(c, l, lane); break;
        }
        if (lane == 0) status[l] = (uint8_t)ok;
        __syncwarp(); /* the next lane reuses the warp's shared arrays */
    }
}

int tdm_cuda_arc_is_sets_op(int op) {
    switch (op) {
    case ARC_BOP_objects: case ARC_BOP_partition: case ARC_BOP_fgpartition: case ARC_BOP_sizefilter_os:
    case ARC_BOP_colorfilter_os: case ARC_BOP_argmax_os: case ARC_BOP_argmin_os: case ARC_BOP_merge_os: case ARC_BOP_size_os:
    case ARC_BOP_color_os: case ARC_BOP_recolor_os: case ARC_BOP_palette: case ARC_BOP_palette_os: case ARC_BOP_size_cs:
    case ARC_BOP_first_cs: case ARC_BOP_last_cs: case ARC_BOP_other_cs: case ARC_BOP_remove_cs: return 1;
    default: return 0;
    }
}

void tdm_cuda_arc_sets_launch(const arc_bop_call *c, const uint8_t *active, uint8_t *status, unsigned blocks,
                              cudaStream_t st) {
    sets_kernel<<<blocks, WARPS * 32, 0, st>>>(*c, active, status);
}
