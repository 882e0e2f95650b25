/* arc_bops.cu: the batched executor's columns and kernels on the GPU (src/arc/arc_bops.h), the same lanes
 * and statuses as the CPU forms of src/arc/exec_cpu.c (which call the interpreter's primitives), checked
 * against them lane by lane in tests/unit/test_arc_bops.c.
 *
 * One warp per lane (one grid's 30 x 30 slot; a block of 4 warps), the whole slot written (zeros outside the
 * result's shape, as the host's encoder writes them), so a column is the same bytes on both paths. A lane's
 * status is 1 only where the primitive is defined and its result representable (arc_bops.h): every rule
 * below is the Python reference's, written for grids of 1..30 x 1..30 cells of colours 0..9. Colour
 * statistics (mostcolor's tie rule) reduce per-warp counts and first occurrences and then call the host's own
 * arc_pick_colour_of_counts. The grid writers that read an object lane (OBJS: fill, underfill, cover, paint,
 * underpaint, subgrid) are here too, as the CPU's in src/arc/exec_sets.c; the other objects-based kernels
 * are in arc_bops_sets.cu. */
#include "arc/arc_bops.h"
#include "arc/arc_device.h"
#include "cuda/arc_warp.cuh"
#include "cuda/cuda_internal.cuh"

#include <string.h>

#define WARPS 4
#define FULL 0xffffffffu

__device__ int add_overflows(int64_t a, int64_t b) {
    return (b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b);
}

/* The output shape of a grid-to-grid op on lane l (0 when not representable), and its parameters. */
struct geo {
    int oh, ow;
    int64_t r0, c0, a; /* crop offsets; scale factor */
};

__device__ geo shape_of(const arc_bop_call &c, size_t l, int h, int w) {
    geo q = {h, w, 0, 0, 1};
    int hb = 0, wb = 0;
    if (c.arg[1].hw) hb = c.arg[1].hw[2 * l], wb = c.arg[1].hw[2 * l + 1];
    switch (c.op) {
    case ARC_BOP_dmirror: case ARC_BOP_cmirror: case ARC_BOP_rot90: case ARC_BOP_rot270: q.oh = w, q.ow = h; break;
    case ARC_BOP_tophalf: q.oh = h / 2; break;
    case ARC_BOP_bottomhalf: q.r0 = h / 2 + h % 2, q.oh = h - (int)q.r0; break;
    case ARC_BOP_lefthalf: q.ow = w / 2; break;
    case ARC_BOP_righthalf: q.c0 = w / 2 + w % 2, q.ow = w - (int)q.c0; break;
    case ARC_BOP_trim: q.oh = h - 2, q.ow = w - 2, q.r0 = q.c0 = 1; break;
    case ARC_BOP_upscale: case ARC_BOP_hupscale: case ARC_BOP_vupscale: {
        int64_t k = arc_arg_int(c, 1, l, 0);
        if (k < 1 || k > 30) return geo{0, 0, 0, 0, 0};
        q.a = k;
        if (c.op != ARC_BOP_hupscale) q.oh = h * (int)k;
        if (c.op != ARC_BOP_vupscale) q.ow = w * (int)k;
        if (q.oh > 30 || q.ow > 30) q.oh = 0;
        break;
    }
    case ARC_BOP_downscale: {
        int64_t k = arc_arg_int(c, 1, l, 0);
        if (!k) return geo{0, 0, 0, 0, 0};
        uint64_t a = k < 0 ? (uint64_t)0 - (uint64_t)k : (uint64_t)k;
        if (a > 30) a = 30; /* only index 0 is a multiple past 29 */
        q.a = (int64_t)a, q.oh = (int)((h + a - 1) / a), q.ow = (int)((w + a - 1) / a);
        break;
    }
    case ARC_BOP_crop: {
        int64_t s0 = arc_arg_int(c, 1, l, 0), s1 = arc_arg_int(c, 1, l, 1), d0 = arc_arg_int(c, 2, l, 0), d1 = arc_arg_int(c, 2, l, 1);
        if (add_overflows(s0, d0) || add_overflows(s1, d1)) return geo{0, 0, 0, 0, 0};
        int64_t lo, hi, clo, chi;
        arc_py_slice(h, s0, s0 + d0, &lo, &hi);
        arc_py_slice(w, s1, s1 + d1, &clo, &chi);
        q.oh = (int)(hi - lo), q.ow = (int)(chi - clo), q.r0 = lo, q.c0 = clo;
        break;
    }
    case ARC_BOP_hconcat: q.oh = h < hb ? h : hb, q.ow = w + wb; break;
    case ARC_BOP_vconcat: q.oh = w == wb ? h + hb : 0; break;
    case ARC_BOP_cellwise: if (hb < h || wb < w) q.oh = 0; break;
    default: break;
    }
    if (q.oh < 1 || q.ow < 1 || q.oh > 30 || q.ow > 30) q.oh = q.ow = 0;
    return q;
}

/* The OBJS argument of a grid writer that reads one (arc_bops.h), or -1. */
__device__ __forceinline__ int os_patch_arg(int op) {
    switch (op) {
    case ARC_BOP_fill_os: case ARC_BOP_underfill_os: return 2;
    case ARC_BOP_cover_os: case ARC_BOP_paint_os: case ARC_BOP_underpaint_os: return 1;
    default: return -1;
    }
}

/* ONE, MSET, MSUB: the OBJS forms that are patches (an object's cells). */
__device__ __forceinline__ int os_patch_form(int64_t iv0) {
    int f = ARC_OS_FORM(iv0);
    return f == ARC_OS_ONE || f == ARC_OS_MSET || f == ARC_OS_MSUB;
}

__device__ __forceinline__ int warp_min(int v) {
    for (int o = 16; o; o >>= 1) {
        int x = __shfl_xor_sync(FULL, v, o);
        v = x < v ? x : v;
    }
    return v;
}

/* subgrid(patch, grid) of an object lane: the grid cropped to the marked cells' box (crop's clipping). */
__device__ int subgrid_lane(const arc_bop_call &c, size_t l, int lane) {
    const arc_col &p = c.arg[0], &gc = c.arg[1];
    const uint8_t *pc = p.cells + l * ARC_SLOT_CELLS, *g = gc.cells + l * ARC_SLOT_CELLS;
    const int ph = p.hw[2 * l], pw = p.hw[2 * l + 1], gh = gc.hw[2 * l], gw = gc.hw[2 * l + 1];
    if (!os_patch_form(p.iv[2 * l])) return 0;
    int u = ARC_SLOT, lf = ARC_SLOT, d = ARC_SLOT, r = ARC_SLOT; /* d and r as 30 - max */
    for (int s = lane; s < ARC_SLOT_CELLS; s += 32) {
        int i = s / ARC_SLOT, j = s % ARC_SLOT;
        if (!(pc[s] & ARC_OS_MARK) || i >= ph || j >= pw) continue;
        u = i < u ? i : u, lf = j < lf ? j : lf;
        d = ARC_SLOT - i < d ? ARC_SLOT - i : d, r = ARC_SLOT - j < r ? ARC_SLOT - j : r;
    }
    u = warp_min(u), lf = warp_min(lf), d = ARC_SLOT - warp_min(d), r = ARC_SLOT - warp_min(r);
    if (u == ARC_SLOT) return 0; /* no cells: ulcorner is (), which crop cannot index */
    int oh = (d + 1 < gh ? d + 1 : gh) - u, ow = (r + 1 < gw ? r + 1 : gw) - lf;
    if (oh < 1 || ow < 1) return 0;
    uint8_t *o = c.out.cells + l * ARC_SLOT_CELLS;
    for (int s = lane; s < ARC_SLOT_CELLS; s += 32) {
        int i = s / ARC_SLOT, j = s % ARC_SLOT;
        o[s] = i < oh && j < ow ? g[(u + i) * ARC_SLOT + lf + j] : 0;
    }
    if (lane == 0) c.out.hw[2 * l] = (uint8_t)oh, c.out.hw[2 * l + 1] = (uint8_t)ow;
    return 1;
}

/* Output cell (i, j) of a grid-to-grid op (may be outside 0..9: the lane then goes to the CPU). */
__device__ int64_t cell_of(const arc_bop_call &c, size_t l, const uint8_t *g, int h, int w, const geo &q, int i,
                           int j, int bg) {
    const uint8_t *g1 = c.arg[1].cells ? c.arg[1].cells + l * ARC_SLOT_CELLS : NULL;
    switch (c.op) {
    case ARC_BOP_hmirror: return g[(h - 1 - i) * ARC_SLOT + j];
    case ARC_BOP_vmirror: return g[i * ARC_SLOT + w - 1 - j];
    case ARC_BOP_dmirror: return g[j * ARC_SLOT + i];
    case ARC_BOP_cmirror: return g[(h - 1 - j) * ARC_SLOT + w - 1 - i];
    case ARC_BOP_rot90: return g[(h - 1 - j) * ARC_SLOT + i];
    case ARC_BOP_rot180: return g[(h - 1 - i) * ARC_SLOT + w - 1 - j];
    case ARC_BOP_rot270: return g[j * ARC_SLOT + w - 1 - i];
    case ARC_BOP_upscale: case ARC_BOP_hupscale: case ARC_BOP_vupscale:
        return g[(c.op == ARC_BOP_hupscale ? i : i / (int)q.a) * ARC_SLOT + (c.op == ARC_BOP_vupscale ? j : j / (int)q.a)];
    case ARC_BOP_downscale: return g[i * (int)q.a * ARC_SLOT + j * (int)q.a];
    case ARC_BOP_replace: {
        int v = g[i * ARC_SLOT + j];
        return v == arc_arg_int(c, 1, l, 0) ? arc_arg_int(c, 2, l, 0) : v;
    }
    case ARC_BOP_switch: {
        int v = g[i * ARC_SLOT + j];
        int64_t a = arc_arg_int(c, 1, l, 0), b = arc_arg_int(c, 2, l, 0);
        return v == a ? b : v == b ? a : v;
    }
    case ARC_BOP_hconcat: return j < w ? g[i * ARC_SLOT + j] : g1[i * ARC_SLOT + j - w];
    case ARC_BOP_vconcat: return i < h ? g[i * ARC_SLOT + j] : g1[(i - h) * ARC_SLOT + j];
    case ARC_BOP_cellwise: {
        int a = g[i * ARC_SLOT + j];
        return a == g1[i * ARC_SLOT + j] ? a : arc_arg_int(c, 2, l, 0);
    }
    case ARC_BOP_fill: case ARC_BOP_underfill: {
        int v = g[i * ARC_SLOT + j];
        const uint8_t *pos = c.arg[2].cells + l * ARC_SLOT_CELLS;
        return pos[i * ARC_SLOT + j] && (c.op == ARC_BOP_fill || v == bg) ? arc_arg_int(c, 1, l, 0) : v;
    }
    case ARC_BOP_paint: case ARC_BOP_underpaint: {
        int v = g[i * ARC_SLOT + j], o = g1[i * ARC_SLOT + j];
        return o != ARC_OBJ_ABSENT && (c.op == ARC_BOP_paint || v == bg) ? o : v;
    }
    case ARC_BOP_cover: {
        const uint8_t *pos = c.arg[1].cells + l * ARC_SLOT_CELLS;
        return pos[i * ARC_SLOT + j] ? bg : g[i * ARC_SLOT + j];
    }
    case ARC_BOP_fill_os: case ARC_BOP_underfill_os: case ARC_BOP_cover_os: case ARC_BOP_paint_os: case ARC_BOP_underpaint_os: {
        /* an object lane's marked cells: distinct positions, so the order of writes never matters */
        const arc_col &p = c.arg[os_patch_arg(c.op)];
        int v = g[i * ARC_SLOT + j], ph = p.hw[2 * l], pw = p.hw[2 * l + 1];
        int64_t piv0 = p.iv[2 * l];
        uint8_t pc = p.cells[l * ARC_SLOT_CELLS + i * ARC_SLOT + j];
        int hit = pc & ARC_OS_MARK && i < ph && j < pw;
        if (!hit || ((c.op == ARC_BOP_underfill_os || c.op == ARC_BOP_underpaint_os) && v != bg)) return v;
        if (c.op == ARC_BOP_fill_os || c.op == ARC_BOP_underfill_os) return arc_arg_int(c, 1, l, 0);
        if (c.op == ARC_BOP_cover_os) return bg;
        return piv0 & ARC_OS_RECOLOURED ? p.iv[2 * l + 1] : pc & ARC_OS_COLOUR;
    }
    default: /* halves, trim, crop: a window */
        return g[(i + (int)q.r0) * ARC_SLOT + j + (int)q.c0];
    }
}

__global__ void __launch_bounds__(WARPS * 32) bop_kernel(arc_bop_call c, const uint8_t *active, uint8_t *status) {
    const int lane = threadIdx.x & 31;
    for (size_t l = (size_t)blockIdx.x * WARPS + (threadIdx.x >> 5); l < c.n; l += (size_t)gridDim.x * WARPS) {
        if (!active[l]) continue;
        int pa = os_patch_arg(c.op);
        if (c.op == ARC_BOP_subgrid_os || (pa >= 0 && !os_patch_form(c.arg[pa].iv[2 * l]))) {
            int ok = c.op == ARC_BOP_subgrid_os ? subgrid_lane(c, l, lane) : 0;
            if (lane == 0) status[l] = (uint8_t)ok;
            continue;
        }
        const uint8_t *g = c.arg[0].cells + l * ARC_SLOT_CELLS;
        const int h = c.arg[0].hw[2 * l], w = c.arg[0].hw[2 * l + 1];
        uint32_t count[ARC_COLOURS], first[ARC_COLOURS];
        int out_kind = ARC_VK_GRID, ok = 1;
        int64_t r0 = 0, r1 = 0;
        switch (c.op) {
        case ARC_BOP_numcolors: case ARC_BOP_mostcolor: case ARC_BOP_leastcolor: case ARC_BOP_colorcount:
        case ARC_BOP_underfill: case ARC_BOP_underpaint: case ARC_BOP_cover: case ARC_BOP_underfill_os:
        case ARC_BOP_underpaint_os: case ARC_BOP_cover_os: arc_warp_counts(g, h, w, lane, count, first); break;
        default: break;
        }
        switch (c.op) {
        case ARC_BOP_numcolors:
            out_kind = ARC_VK_INT;
            for (int k = 0; k < ARC_COLOURS; k++) r0 += count[k] > 0;
            break;
        case ARC_BOP_mostcolor: case ARC_BOP_leastcolor:
            out_kind = ARC_VK_INT, r0 = arc_pick_colour_of_counts(count, first, c.op == ARC_BOP_leastcolor);
            break;
        case ARC_BOP_colorcount: {
            int64_t v = arc_arg_int(c, 1, l, 0);
            out_kind = ARC_VK_INT, r0 = v >= 0 && v < ARC_COLOURS ? count[v] : 0;
            break;
        }
        case ARC_BOP_height: out_kind = ARC_VK_INT, r0 = h; break;
        case ARC_BOP_width: out_kind = ARC_VK_INT, r0 = w; break;
        case ARC_BOP_shape: out_kind = ARC_VK_PAIR, r0 = h, r1 = w; break;
        case ARC_BOP_ofcolor: {
            int64_t v = arc_arg_int(c, 1, l, 0);
            uint8_t *o = c.out.cells + l * ARC_SLOT_CELLS;
            for (int s = lane; s < ARC_SLOT_CELLS; s += 32) {
                int i = s / ARC_SLOT, j = s % ARC_SLOT;
                o[s] = i < h && j < w && g[s] == v;
            }
            out_kind = ARC_VK_POS;
            break;
        }
        default: break;
        }
        if (out_kind == ARC_VK_GRID) {
            int bg = c.op == ARC_BOP_underfill || c.op == ARC_BOP_underpaint || c.op == ARC_BOP_cover || c.op == ARC_BOP_underfill_os ||
                             c.op == ARC_BOP_underpaint_os || c.op == ARC_BOP_cover_os
                         ? arc_pick_colour_of_counts(count, first, 0)
                         : -1;
            geo q = shape_of(c, l, h, w);
            uint8_t *o = c.out.cells + l * ARC_SLOT_CELLS;
            int bad = !q.oh;
            for (int s = lane; !bad && s < ARC_SLOT_CELLS; s += 32) {
                int i = s / ARC_SLOT, j = s % ARC_SLOT;
                int64_t v = i < q.oh && j < q.ow ? cell_of(c, l, g, h, w, q, i, j, bg) : 0;
                if (v < 0 || v > 9) bad = 1;
                o[s] = (uint8_t)v;
            }
            ok = !__any_sync(FULL, bad);
            if (lane == 0) c.out.hw[2 * l] = (uint8_t)q.oh, c.out.hw[2 * l + 1] = (uint8_t)q.ow;
        } else if (lane == 0 && out_kind != ARC_VK_POS) {
            c.out.iv[2 * l] = r0, c.out.iv[2 * l + 1] = r1;
        }
        if (lane == 0) status[l] = (uint8_t)ok;
    }
}

/* Packed lanes to and from a column: lane k of the packed buffers is lane lanes[k] of the column. */
__global__ void scatter_kernel(arc_col dst, arc_col src, const uint32_t *lanes, size_t m, int put) {
    for (size_t k = blockIdx.x; k < m; k += gridDim.x) {
        size_t l = lanes[k];
        const arc_col &from = put ? src : dst;
        const arc_col &to = put ? dst : src;
        size_t fl = put ? k : l, tl = put ? l : k;
        const uint32_t *f4 = (const uint32_t *)(from.cells + fl * ARC_SLOT_CELLS);
        uint32_t *t4 = (uint32_t *)(to.cells + tl * ARC_SLOT_CELLS);
        for (int s = threadIdx.x; s < ARC_SLOT_CELLS / 4; s += blockDim.x) t4[s] = f4[s];
        if (threadIdx.x < 2) to.hw[2 * tl + threadIdx.x] = from.hw[2 * fl + threadIdx.x];
        if (threadIdx.x < 2) to.iv[2 * tl + threadIdx.x] = from.iv[2 * fl + threadIdx.x];
    }
}

void tdm_cuda_arc_col_free(const tdm_backend *b, arc_col *c) {
    const cuda_impl *ci = (const cuda_impl *)b->impl;
    if (c->cells) tdm_cuda_free(b, c->cells, ci->stream);
    if (c->hw) tdm_cuda_free(b, c->hw, ci->stream);
    if (c->iv) tdm_cuda_free(b, c->iv, ci->stream);
    memset(c, 0, sizeof *c);
}

int tdm_cuda_arc_col_alloc(const tdm_backend *b, size_t n, arc_col *c) {
    const cuda_impl *ci = (const cuda_impl *)b->impl;
    int rc = TDM_OK;
    memset(c, 0, sizeof *c);
    CK_OUT(cudaSetDevice(ci->dev), "cudaSetDevice");
    CK_OUT(tdm_cuda_malloc(b, (void **)&c->cells, n * ARC_SLOT_CELLS + 4, ci->stream), "a column's cells");
    CK_OUT(tdm_cuda_malloc(b, (void **)&c->hw, n * 2 + 2, ci->stream), "a column's shapes");
    CK_OUT(tdm_cuda_malloc(b, (void **)&c->iv, (n * 2 + 2) * sizeof(int64_t), ci->stream), "a column's ints");
    return TDM_OK;
out:
    tdm_cuda_arc_col_free(b, c);
    return rc;
}

/* put: host packed src -> device column dst; get: device column dst -> host packed src. */
static int col_move(const tdm_backend *b, const arc_col *dev, const uint32_t *lanes, size_t m, const arc_col *host,
                    int put) {
    const cuda_impl *ci = (const cuda_impl *)b->impl;
    cudaStream_t st = ci->stream;
    int rc = TDM_OK;
    arc_col tmp = {NULL, NULL, NULL};
    uint32_t *d_lanes = NULL;
    if (!m) return TDM_OK;
    CK_OUT(cudaSetDevice(ci->dev), "cudaSetDevice");
    if ((rc = tdm_cuda_arc_col_alloc(b, m, &tmp))) return rc;
    CK_OUT(tdm_cuda_malloc(b, (void **)&d_lanes, m * sizeof *d_lanes, st), "lane list");
    CK_OUT(cudaMemcpyAsync(d_lanes, lanes, m * sizeof *d_lanes, cudaMemcpyHostToDevice, st), "lane list");
    if (put) {
        CK_OUT(cudaMemcpyAsync(tmp.cells, host->cells, m * ARC_SLOT_CELLS, cudaMemcpyHostToDevice, st), "lanes to the device");
        CK_OUT(cudaMemcpyAsync(tmp.hw, host->hw, m * 2, cudaMemcpyHostToDevice, st), "lanes to the device");
        CK_OUT(cudaMemcpyAsync(tmp.iv, host->iv, m * 2 * sizeof(int64_t), cudaMemcpyHostToDevice, st), "lanes to the device");
    }
    {
        unsigned blocks = (unsigned)(m < 65535 ? m : 65535);
        scatter_kernel<<<blocks, 128, 0, st>>>(*dev, tmp, d_lanes, m, put);
        CK_OUT(cudaGetLastError(), "launching the lane copy");
    }
    if (!put) {
        CK_OUT(cudaMemcpyAsync(host->cells, tmp.cells, m * ARC_SLOT_CELLS, cudaMemcpyDeviceToHost, st), "lanes to the host");
        CK_OUT(cudaMemcpyAsync(host->hw, tmp.hw, m * 2, cudaMemcpyDeviceToHost, st), "lanes to the host");
        CK_OUT(cudaMemcpyAsync(host->iv, tmp.iv, m * 2 * sizeof(int64_t), cudaMemcpyDeviceToHost, st), "lanes to the host");
    }
    CK_OUT(cudaStreamSynchronize(st), "moving lanes");
out:
    if (d_lanes) tdm_cuda_free(b, d_lanes, st);
    tdm_cuda_arc_col_free(b, &tmp);
    return rc;
}

int tdm_cuda_arc_col_put(const tdm_backend *b, const arc_col *dst, const uint32_t *lanes, size_t m, const arc_col *src) {
    return col_move(b, dst, lanes, m, src, 1);
}

int tdm_cuda_arc_col_get(const tdm_backend *b, const arc_col *src, const uint32_t *lanes, size_t m, const arc_col *dst) {
    return col_move(b, src, lanes, m, dst, 0);
}

int tdm_cuda_arc_bop_run(const tdm_backend *b, const arc_bop_call *c, const uint8_t *active, uint8_t *status) {
    const cuda_impl *ci = (const cuda_impl *)b->impl;
    cudaStream_t st = ci->stream;
    int rc = TDM_OK;
    uint8_t *d_flags = NULL;
    if (!c->n) return TDM_OK;
    CK_OUT(cudaSetDevice(ci->dev), "cudaSetDevice");
    CK_OUT(tdm_cuda_malloc(b, (void **)&d_flags, 2 * c->n, st), "lane flags");
    CK_OUT(cudaMemcpyAsync(d_flags, active, c->n, cudaMemcpyHostToDevice, st), "lane flags");
    CK_OUT(cudaMemcpyAsync(d_flags + c->n, status, c->n, cudaMemcpyHostToDevice, st), "lane flags");
    {
        size_t want = (c->n + WARPS - 1) / WARPS, fit = (size_t)ci->sms * 16;
        unsigned blocks = (unsigned)(want < fit ? want : fit);
        if (tdm_cuda_arc_is_sets_op(c->op)) tdm_cuda_arc_sets_launch(c, d_flags, d_flags + c->n, blocks, st);
        else bop_kernel<<<blocks, WARPS * 32, 0, st>>>(*c, d_flags, d_flags + c->n);
        CK_OUT(cudaGetLastError(), "launching a batched primitive");
    }
    CK_OUT(cudaMemcpyAsync(status, d_flags + c->n, c->n, cudaMemcpyDeviceToHost, st), "lane statuses");
    CK_OUT(cudaStreamSynchronize(st), "a batched primitive");
out:
    if (d_flags) tdm_cuda_free(b, d_flags, st);
    return rc;
}
