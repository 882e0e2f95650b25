/* arc_objects.cu: batched objects() labelling on the GPU (src/arc/arc_device.h), the same labels as the
 * CPU path of src/arc/objects_batch.c, bit for bit.
 *
 * One warp per grid, the 30 x 30 slot in shared memory: colours, then a union-find forest whose links always
 * point from the larger slot index to the smaller (atomicMin on the root), so every component's root is its
 * smallest index, the label the CPU gives. Each lane links its cells to their right and lower neighbours
 * (and both lower diagonals for diagonal objects); after __syncwarp every cell finds its root.
 * mostcolor() for without_bg comes from shared counts and first occurrences through the host's own function
 * (arc_mostcolor_of_counts). Bad grids (shape outside 1..30, colour above 9) are reported by index: the
 * smallest one through atomicMin, so the host can name it. Large batches run in chunks, so device memory
 * stays bounded whatever n is; copies and kernels are timed with CUDA events. */
#include "arc/arc_device.h"
#include "cuda/arc_warp.cuh"
#include "cuda/cuda_internal.cuh"

#include <stdio.h>
#include <string.h>

#define H tdm_cuda_host_fns
#define WARPS 4 /* grids per block, a warp each */
#define CHUNK ((size_t)1 << 18) /* grids per chunk: 236 MB of cells, 472 MB of labels */
#define NO_BAD 0xFFFFFFFFFFFFFFFFull

/* One warp per grid: no block-wide barrier, and many grids in flight per multiprocessor (12 blocks of 4
 * warps fit its shared memory) instead of the 8 that a block per grid allowed: on the H100, 25.9M grids/s
 * for objects(I, T, F, T) and 15.2M for objects(I, F, T, T), against 20.6M and 9.9M with a block per grid. */
__global__ void __launch_bounds__(WARPS * 32) objects_kernel(const uint8_t *cells, const uint8_t *hw, size_t n,
                                                             size_t base, int flags, int16_t *labels,
                                                             unsigned long long *bad) {
    __shared__ __align__(16) uint8_t col_s[WARPS][ARC_SLOT_CELLS];
    __shared__ int par_s[WARPS][ARC_SLOT_CELLS];
    __shared__ uint32_t count_s[WARPS][ARC_COLOURS], first_s[WARPS][ARC_COLOURS];
    const unsigned FULL = 0xffffffffu;
    const int wid = threadIdx.x >> 5, lane = threadIdx.x & 31;
    uint8_t *col = col_s[wid];
    volatile int *par = par_s[wid];
    uint32_t *count = count_s[wid], *first = first_s[wid];
    const int links = flags & ARC_OBJ_DIAGONAL ? 4 : 2, uni = flags & ARC_OBJ_UNIVALUED;
    for (size_t g = (size_t)blockIdx.x * WARPS + wid; g < n; g += (size_t)gridDim.x * WARPS) {
        const int h = hw[2 * g], w = hw[2 * g + 1];
        if (h < 1 || h > ARC_SLOT || w < 1 || w > ARC_SLOT) { /* the same for the whole warp */
            if (lane == 0) atomicMin(bad, (unsigned long long)(base + g));
            continue;
        }
        if (lane < ARC_COLOURS) count[lane] = 0, first[lane] = UINT32_MAX;
        __syncwarp();
        /* 900 colour bytes as 225 words (slots are 900 bytes apart, so words stay aligned) */
        const uint32_t *c4 = (const uint32_t *)(cells + g * ARC_SLOT_CELLS);
        int wrong = 0;
        for (int k = lane; k < ARC_SLOT_CELLS / 4; k += 32) {
            uint32_t v4 = c4[k];
            ((uint32_t *)col)[k] = v4;
            for (int b = 0; b < 4; b++) {
                int s = 4 * k + b, i = s / ARC_SLOT, j = s % ARC_SLOT;
                uint32_t v = v4 >> (8 * b) & 0xFF;
                if (i >= h || j >= w) continue;
                if (v >= ARC_COLOURS) wrong = 1;
                else if (flags & ARC_OBJ_WITHOUT_BG) {
                    atomicAdd(&count[v], 1u);
                    atomicMin(&first[v], (uint32_t)(i * w + j));
                }
            }
        }
        if (__any_sync(FULL, wrong)) {
            if (lane == 0) atomicMin(bad, (unsigned long long)(base + g));
            __syncwarp();
            continue;
        }
        __syncwarp();
        int bg = -1;
        if (flags & ARC_OBJ_WITHOUT_BG) bg = __shfl_sync(FULL, lane == 0 ? arc_mostcolor_of_counts(count, first) : 0, 0);
        for (int s = lane; s < ARC_SLOT_CELLS; s += 32) {
            int i = s / ARC_SLOT, j = s % ARC_SLOT;
            par[s] = i < h && j < w && col[s] != bg ? s : -1;
        }
        __syncwarp();
        for (int s = lane; s < ARC_SLOT_CELLS; s += 32) {
            if (par[s] < 0) continue;
            int i = s / ARC_SLOT, j = s % ARC_SLOT;
            for (int k = 0; k < links; k++) {
                int y = i + (k == 0 ? 0 : 1), x = j + (k == 0 ? 1 : k == 1 ? 0 : k == 2 ? 1 : -1);
                if (y >= h || x < 0 || x >= w) continue;
                int t = y * ARC_SLOT + x;
                if (par[t] >= 0 && (!uni || col[t] == col[s])) arc_uf_unite(par, s, t);
            }
        }
        __syncwarp();
        /* labels two at a time: 450 words per grid */
        uint32_t *out2 = (uint32_t *)(labels + g * ARC_SLOT_CELLS);
        for (int k = lane; k < ARC_SLOT_CELLS / 2; k += 32) {
            uint32_t pair = 0;
            for (int b = 0; b < 2; b++) {
                int s = 2 * k + b, r = par[s] < 0 ? -1 : arc_uf_find(par, s);
                int16_t l = (int16_t)(r < 0 ? -1 : (r / ARC_SLOT) * w + r % ARC_SLOT);
                pair |= (uint32_t)(uint16_t)l << (16 * b);
            }
            out2[k] = pair;
        }
        __syncwarp(); /* the next grid reuses the warp's shared arrays */
    }
}

static int arc_objects_labels(const tdm_backend *b, const uint8_t *cells, const uint8_t *hw, size_t n, int flags,
                              int16_t *labels, size_t *bad_out, tdm_arc_dev_times *t) {
    const cuda_impl *ci = (const cuda_impl *)b->impl;
    int rc = TDM_OK;
    uint8_t *d_cells = NULL, *d_hw = NULL;
    int16_t *d_labels = NULL;
    unsigned long long *d_bad = NULL, h_bad = NO_BAD;
    cudaEvent_t ev[4] = {NULL, NULL, NULL, NULL};
    size_t chunk = n < CHUNK ? n : CHUNK;
    cudaStream_t st = ci->stream;
    *bad_out = n;
    memset(t, 0, sizeof *t);
    if (!n) return TDM_OK;
    CK_OUT(cudaSetDevice(ci->dev), "cudaSetDevice");
    for (int k = 0; k < 4; k++) CK_OUT(cudaEventCreate(&ev[k]), "event");
    CK_OUT(cudaMallocAsync((void **)&d_cells, chunk * ARC_SLOT_CELLS, st), "grid cells");
    CK_OUT(cudaMallocAsync((void **)&d_hw, chunk * 2, st), "grid shapes");
    CK_OUT(cudaMallocAsync((void **)&d_labels, chunk * ARC_SLOT_CELLS * sizeof(int16_t), st), "labels");
    CK_OUT(cudaMallocAsync((void **)&d_bad, sizeof *d_bad, st), "error slot");
    CK_OUT(cudaMemcpyAsync(d_bad, &h_bad, sizeof h_bad, cudaMemcpyHostToDevice, st), "error slot");
    for (size_t at = 0; at < n; at += chunk) {
        size_t m = n - at < chunk ? n - at : chunk;
        CK_OUT(cudaEventRecord(ev[0], st), "event");
        CK_OUT(cudaMemcpyAsync(d_cells, cells + at * ARC_SLOT_CELLS, m * ARC_SLOT_CELLS, cudaMemcpyHostToDevice, st), "copying grids");
        CK_OUT(cudaMemcpyAsync(d_hw, hw + 2 * at, m * 2, cudaMemcpyHostToDevice, st), "copying shapes");
        CK_OUT(cudaEventRecord(ev[1], st), "event");
        size_t want = (m + WARPS - 1) / WARPS, fit = (size_t)ci->sms * 12;
        unsigned blocks = (unsigned)(want < fit ? want : fit);
        objects_kernel<<<blocks, WARPS * 32, 0, st>>>(d_cells, d_hw, m, at, flags, d_labels, d_bad);
        CK_OUT(cudaGetLastError(), "launching the objects kernel");
        CK_OUT(cudaEventRecord(ev[2], st), "event");
        CK_OUT(cudaMemcpyAsync(labels + at * ARC_SLOT_CELLS, d_labels, m * ARC_SLOT_CELLS * sizeof(int16_t),
                           cudaMemcpyDeviceToHost, st), "copying labels");
        CK_OUT(cudaEventRecord(ev[3], st), "event");
        CK_OUT(cudaStreamSynchronize(st), "objects kernel");
        float a = 0, k = 0, d = 0;
        cudaEventElapsedTime(&a, ev[0], ev[1]);
        cudaEventElapsedTime(&k, ev[1], ev[2]);
        cudaEventElapsedTime(&d, ev[2], ev[3]);
        t->h2d_ms += a, t->kernel_ms += k, t->d2h_ms += d;
    }
    CK_OUT(cudaMemcpyAsync(&h_bad, d_bad, sizeof h_bad, cudaMemcpyDeviceToHost, st), "error slot");
    CK_OUT(cudaStreamSynchronize(st), "error slot");
    if (h_bad != NO_BAD) {
        *bad_out = (size_t)h_bad;
        rc = H->error(TDM_E_INVAL, "cuda: grid %llu is not a grid of 1..30 x 1..30 cells of colours 0..9", h_bad);
    }
out:
    if (d_cells) cudaFreeAsync(d_cells, st);
    if (d_hw) cudaFreeAsync(d_hw, st);
    if (d_labels) cudaFreeAsync(d_labels, st);
    if (d_bad) cudaFreeAsync(d_bad, st);
    for (int k = 0; k < 4; k++)
        if (ev[k]) cudaEventDestroy(ev[k]);
    return rc;
}

const tdm_arc_dev_ops tdm_cuda_arc_ops = {arc_objects_labels, tdm_cuda_arc_col_alloc, tdm_cuda_arc_col_free,
                                          tdm_cuda_arc_col_put, tdm_cuda_arc_col_get, tdm_cuda_arc_bop_run};
