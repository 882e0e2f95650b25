/* lattice_bfs.cu: level-synchronous BFS over a CSR on the device (spec section 3) and the table of the
 * lattice engine's device entry points. A top-down kernel claims each neighbour with
 * atomicCAS(dist[w], -1, level+1) and appends it to the next frontier; the discovery order varies from run
 * to run but the distances do not, and the path is rebuilt from distances alone by the tie rule (lowest-id
 * neighbour one level closer, from t back to s), on the device, so it equals the CPU's.
 *
 * Levels are launched 8 at a time without a host round trip: each kernel reads its frontier size from
 * device memory, and the host reads the termination state (frontier empty, t labelled) once per 8 levels.
 * Extra empty levels are harmless. (A persistent kernel or a CUDA graph with a WHILE node would remove the
 * per-level launches; that is the next step.) The CSR is uploaded per call; the device-resident, device-
 * generated CSR belongs with the runtime's residency (tdm_buf). */
#include "cuda/lattice_cuda.cuh"

#include <stdlib.h>

#define H TDM_LAT_H
#define LEVELS_PER_CHECK 8

/* cnt[level & 1] is this level's frontier size; the kernel appends into cnt[(level + 1) & 1], which the
 * previous launch's reset kernel zeroed. */
__global__ void lat_bfs_level(const int64_t *__restrict__ row, const int32_t *__restrict__ col, int32_t *dist,
                              const int32_t *__restrict__ cur, int32_t *next, unsigned *cnt, int32_t level) {
    const unsigned nf = cnt[level & 1];
    unsigned *ncnt = &cnt[(level + 1) & 1];
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < nf; i += gridDim.x * blockDim.x) {
        const int32_t u = cur[i];
        for (int64_t a = row[u], e = row[u + 1]; a < e; a++) {
            const int32_t w = col[a];
            if (dist[w] >= 0) continue; /* cheap pre-check; the CAS decides */
            if (atomicCAS(&dist[w], -1, level + 1) == -1) next[atomicAdd(ncnt, 1u)] = w;
        }
    }
}

/* Zeroes the count the next level will append into (runs after the level that read it as "next"). */
__global__ void lat_bfs_reset(unsigned *cnt, int32_t level) { cnt[level & 1] = 0; }

__global__ void lat_fill_i32(int32_t *p, size_t n, int32_t v) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = v;
}

/* The tie-rule walk, one thread: the path is at most the diameter long and each step scans one row. */
__global__ void lat_bfs_walk(const int64_t *__restrict__ row, const int32_t *__restrict__ col,
                             const int32_t *__restrict__ dist, int32_t t, int64_t *path) {
    int32_t v = t, k = dist[t];
    path[k] = t;
    for (int32_t j = k; j > 0; j--) {
        int64_t a = row[v];
        while (dist[col[a]] != j - 1) a++;
        v = col[a];
        path[j - 1] = v;
    }
}

typedef struct {
    int64_t *row;
    int32_t *col, *dist, *fa, *fb;
    unsigned *cnt;
} bfs_bufs;

static void bfs_release(bfs_bufs *d, cudaStream_t s) {
    lat_dfree(d->row, s), lat_dfree(d->col, s), lat_dfree(d->dist, s), lat_dfree(d->fa, s), lat_dfree(d->fb, s);
    lat_dfree(d->cnt, s);
}

/* Uploads g and runs BFS from s until the frontier empties or (t >= 0) t is labelled. */
static cudaError_t bfs_run(const cuda_impl *c, const tdm_lattice_csr *g, int64_t s, int64_t t, bfs_bufs *d) {
    const size_t V = (size_t)g->nvertices, arcs = (size_t)g->row_ptr[g->nvertices];
    cudaStream_t st = c->stream;
    cudaError_t e;
    if ((e = lat_dalloc((void **)&d->row, (V + 1) * 8, st)) || (e = lat_dalloc((void **)&d->col, arcs * 4, st)) ||
        (e = lat_dalloc((void **)&d->dist, V * 4, st)) || (e = lat_dalloc((void **)&d->fa, V * 4, st)) ||
        (e = lat_dalloc((void **)&d->fb, V * 4, st)) || (e = lat_dalloc((void **)&d->cnt, 2 * sizeof(unsigned), st)))
        return e;
    if ((e = cudaMemcpyAsync(d->row, g->row_ptr, (V + 1) * 8, cudaMemcpyHostToDevice, st)) ||
        (arcs && (e = cudaMemcpyAsync(d->col, g->col, arcs * 4, cudaMemcpyHostToDevice, st))))
        return e;
    lat_fill_i32<<<lat_blocks(V, c), 256, 0, st>>>(d->dist, V, -1);
    const int32_t s32 = (int32_t)s, zero = 0;
    const unsigned init[2] = {1u, 0u};
    if ((e = cudaMemcpyAsync(d->dist + s32, &zero, 4, cudaMemcpyHostToDevice, st)) ||
        (e = cudaMemcpyAsync(d->fa, &s32, 4, cudaMemcpyHostToDevice, st)) ||
        (e = cudaMemcpyAsync(d->cnt, init, sizeof init, cudaMemcpyHostToDevice, st)))
        return e;
    const unsigned blocks = lat_blocks(V, c);
    for (int32_t level = 0;; level += LEVELS_PER_CHECK) {
        for (int32_t l = level; l < level + LEVELS_PER_CHECK; l++) {
            int32_t *cur = (l & 1) ? d->fb : d->fa, *nxt = (l & 1) ? d->fa : d->fb;
            lat_bfs_level<<<blocks, 256, 0, st>>>(d->row, d->col, d->dist, cur, nxt, d->cnt, l);
            lat_bfs_reset<<<1, 1, 0, st>>>(d->cnt, l);
        }
        if ((e = cudaGetLastError())) return e;
        unsigned next_count;
        int32_t dt = -1;
        const int32_t after = level + LEVELS_PER_CHECK; /* frontier size of level `after` */
        if ((e = cudaMemcpyAsync(&next_count, d->cnt + (after & 1), sizeof next_count, cudaMemcpyDeviceToHost, st)) ||
            (t >= 0 && (e = cudaMemcpyAsync(&dt, d->dist + t, 4, cudaMemcpyDeviceToHost, st))) ||
            (e = cudaStreamSynchronize(st)))
            return e;
        if (next_count == 0 || dt >= 0) return cudaSuccess;
        if (after > g->nvertices) return cudaSuccess; /* cannot happen: a level per vertex at most */
    }
}

static int bfs_path(const tdm_backend *b, const tdm_lattice_csr *g, int64_t s, int64_t t, int64_t **path, int64_t *hops) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    bfs_bufs d = {};
    int64_t *dpath = NULL;
    cudaError_t e = cudaSetDevice(c->dev);
    if (!e) e = bfs_run(c, g, s, t, &d);
    int32_t k = -1;
    if (!e) e = cudaMemcpyAsync(&k, d.dist + t, 4, cudaMemcpyDeviceToHost, c->stream);
    if (!e) e = cudaStreamSynchronize(c->stream);
    *path = NULL;
    *hops = -1;
    if (!e && k >= 0) {
        int64_t *hp = (int64_t *)H->malloc(((size_t)k + 1) * 8);
        if (!hp) {
            bfs_release(&d, c->stream);
            cudaStreamSynchronize(c->stream);
            return H->error(TDM_E_NOMEM, "cuda bfs: no host memory for the path");
        }
        e = lat_dalloc((void **)&dpath, ((size_t)k + 1) * 8, c->stream);
        if (!e) {
            lat_bfs_walk<<<1, 1, 0, c->stream>>>(d.row, d.col, d.dist, (int32_t)t, dpath);
            e = cudaGetLastError();
        }
        if (!e) e = cudaMemcpyAsync(hp, dpath, ((size_t)k + 1) * 8, cudaMemcpyDeviceToHost, c->stream);
        if (!e) e = cudaStreamSynchronize(c->stream);
        if (e) H->free(hp);
        else *path = hp, *hops = k;
    }
    lat_dfree(dpath, c->stream);
    bfs_release(&d, c->stream);
    cudaError_t e2 = cudaStreamSynchronize(c->stream);
    if (!e) e = e2;
    if (e) {
        if (*path) H->free(*path), *path = NULL, *hops = -1;
        return tdm_cuda_fail(e, "cuda bfs");
    }
    return TDM_OK;
}

static int bfs_dist(const tdm_backend *b, const tdm_lattice_csr *g, int64_t s, int32_t *dist) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    bfs_bufs d = {};
    cudaError_t e = cudaSetDevice(c->dev);
    if (!e) e = bfs_run(c, g, s, -1, &d);
    if (!e) e = cudaMemcpyAsync(dist, d.dist, (size_t)g->nvertices * 4, cudaMemcpyDeviceToHost, c->stream);
    bfs_release(&d, c->stream);
    cudaError_t e2 = cudaStreamSynchronize(c->stream);
    if (!e) e = e2;
    return e ? tdm_cuda_fail(e, "cuda bfs sweep") : TDM_OK;
}

const struct tdm_lattice_dev_ops tdm_cuda_lattice_ops = {
    bfs_path, bfs_dist, tdm_cuda_lat_xor_key, tdm_cuda_lat_xor_seeded, tdm_cuda_lat_gemm, tdm_cuda_lat_ewise,
    tdm_cuda_lat_reduce, tdm_cuda_lat_catalytic, tdm_cuda_lat_xor_key_batch,
};
