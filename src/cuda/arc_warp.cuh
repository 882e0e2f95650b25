/* arc_warp.cuh: device helpers the ARC kernels share (arc_objects.cu, arc_bops.cu, arc_bops_sets.cu): a
 * lane's int argument (a column or a broadcast constant), warp reductions, a grid's colour counts and first
 * occurrences reduced over a warp, and the union-find of objects() labelling (links always from the larger
 * slot index to the smaller, so a component's root is its smallest slot: its first cell row-major). */
#ifndef TANDEM_CUDA_ARC_WARP_CUH
#define TANDEM_CUDA_ARC_WARP_CUH

#include "arc/arc_bops.h"
#include "arc/arc_device.h"

#define ARC_FULL_MASK 0xffffffffu

static __device__ __forceinline__ int64_t arc_arg_int(const arc_bop_call &c, int a, size_t l, int part) {
    return c.arg[a].iv ? c.arg[a].iv[2 * l + part] : c.k[a][part];
}

static __device__ __forceinline__ int arc_warp_sum(int v) {
    for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(ARC_FULL_MASK, v, o);
    return v;
}

static __device__ __forceinline__ uint32_t arc_warp_or(uint32_t v) {
    for (int o = 16; o; o >>= 1) v |= __shfl_xor_sync(ARC_FULL_MASK, v, o);
    return v;
}

/* Colour counts and first row-major occurrences of a grid (colours: cells & mask), reduced over the warp
 * (every lane gets them). */
static __device__ void arc_warp_counts(const uint8_t *g, int h, int w, int lane, uint32_t *count, uint32_t *first,
                                       uint8_t mask = 0xFF) {
    for (int c = 0; c < ARC_COLOURS; c++) count[c] = 0, first[c] = UINT32_MAX;
    for (int s = lane; s < h * w; s += 32) {
        int v = g[(s / w) * ARC_SLOT + s % w] & mask;
        count[v]++;
        if ((uint32_t)s < first[v]) first[v] = (uint32_t)s;
    }
    for (int c = 0; c < ARC_COLOURS; c++)
        for (int o = 16; o; o >>= 1) {
            count[c] += __shfl_xor_sync(ARC_FULL_MASK, count[c], o);
            uint32_t f = __shfl_xor_sync(ARC_FULL_MASK, first[c], o);
            if (f < first[c]) first[c] = f;
        }
}

static __device__ __forceinline__ int arc_uf_find(volatile int *par, int x) {
    for (;;) {
        int p = par[x];
        if (p == x) return x;
        x = p;
    }
}

static __device__ void arc_uf_unite(volatile int *par, int a, int b) {
    for (;;) {
        a = arc_uf_find(par, a), b = arc_uf_find(par, b);
        if (a == b) return;
        if (a < b) {
            int t = a;
            a = b, b = t;
        }
        /* a > b: hang root a under b unless someone hung it elsewhere first; then join that tree. */
        int old = atomicMin((int *)&par[a], b);
        if (old == a) return;
        a = old;
    }
}

#endif
