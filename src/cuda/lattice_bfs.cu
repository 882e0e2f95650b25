/* lattice_bfs.cu: level-synchronous BFS over a CSR on the device (spec section 3) and the table of the
 * lattice engine's device entry points. A top-down expansion claims each neighbour with
 * atomicCAS(dist[w], -1, level+1) and appends it to the next frontier (warp-aggregated atomics); the
 * discovery order varies from run to run but the distances do not, and the path is rebuilt from distances
 * alone by the tie rule (lowest-id neighbour one level closer, from t back to s), on the device by one
 * warp, so it equals the CPU's.
 *
 * No host round trip per level. The default is one persistent cooperative kernel whose grid (sized to be
 * co-resident) runs every level and meets at a grid barrier between levels; it stops by itself when the
 * frontier empties or t is labelled. Where cooperative launches are unavailable (or a test asks for it),
 * levels are launched 8 at a time and the host reads the termination state once per 8 levels (extra empty
 * levels are harmless).
 *
 * Residency: each backend keeps the last graph's CSR on the device, keyed by the graph id (nonzero ids
 * belong to immutable lattices; anonymous graphs, id 0, are uploaded at every call), plus the BFS
 * workspace, so repeated queries on one lattice pay no upload. It is released when another graph
 * replaces it, after a device error, and with the backend. One BFS at a time per backend (a mutex): they
 * share the backend's stream and this state. */
#include "cuda/lattice_cuda.cuh"

#include <cooperative_groups.h>
#include <pthread.h>
#include <stdlib.h>

namespace cg = cooperative_groups;

#define H TDM_LAT_H
#define LEVELS_PER_CHECK 8
#define BFS_THREADS 256
#define BFS_LANES 8 /* threads per frontier vertex (a 4D lattice vertex has 8 arcs) */
#define BFS_BLOCKS_PER_SM 2 /* persistent grid: enough threads for the widest lattice levels, cheap barriers */

struct lat_bfs_state {
    pthread_mutex_t mu;
    int kernel;      /* TDM_LAT_BFS_KERNEL_*: what tests or benchmarks asked for */
    int coop_blocks; /* co-resident grid for the persistent kernel; 0 = not yet known, -1 = unavailable */
    /* The resident CSR: valid when id != 0 and the key matches. */
    uint64_t id;
    int64_t nv, arcs;
    const void *hrow, *hcol;
    int64_t *row;
    int32_t *col;
    size_t row_cap, col_cap; /* elements */
    /* Workspace: dist and two frontiers of v_cap entries, three frontier counters, the path. */
    int32_t *dist, *fa, *fb;
    int64_t *path;
    unsigned *cnt;
    size_t v_cap, path_cap;
};

/* ---- kernels ------------------------------------------------------------------------------------------ */

/* dist = -1 everywhere but s (0); the frontier holds s; counters {1, 0, 0}. */
__global__ void lat_bfs_init(int32_t *dist, size_t n, int32_t s, int32_t *frontier, unsigned *cnt) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dist[i] = i == (size_t)s ? 0 : -1;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        frontier[0] = s;
        cnt[0] = 1, cnt[1] = 0, cnt[2] = 0;
    }
}

/* Expands one level: the frontier cur of nf vertices, labels level+1, appends to nxt and *ncnt. Reads of
 * data other blocks wrote (frontier entries, dist) go to L2 (__ldcg): L1 is not coherent across SMs. The
 * threads of a warp that claimed a vertex in the same step append with one atomicAdd (warp-aggregated:
 * the frontier counter is a single hot address). */
__device__ __forceinline__ void lat_bfs_expand(const int64_t *__restrict__ row, const int32_t *__restrict__ col,
                                               int32_t *dist, const int32_t *cur, unsigned nf, int32_t *nxt,
                                               unsigned *ncnt, int32_t level, unsigned tid, unsigned nthreads) {
    /* BFS_LANES threads per frontier vertex, each taking every BFS_LANES-th arc: a lattice vertex's 2d
     * arcs are checked at once rather than one after another by one thread (each check is an L2 round
     * trip; a level's frontier alone leaves most of the grid idle). nthreads is a multiple of BFS_LANES. */
    const unsigned lane = tid % BFS_LANES;
    for (unsigned i = tid / BFS_LANES; i < nf; i += nthreads / BFS_LANES) {
        const int32_t u = __ldcg(&cur[i]);
        for (int64_t a = row[u] + lane, e = row[u + 1]; a < e; a += BFS_LANES) {
            const int32_t w = col[a];
            /* The load is a cheap pre-check; the CAS decides. */
            const bool claimed = __ldcg(&dist[w]) < 0 && atomicCAS(&dist[w], -1, level + 1) == -1;
            if (claimed) {
                cg::coalesced_group g = cg::coalesced_threads();
                unsigned base = 0;
                if (g.thread_rank() == 0) base = atomicAdd(ncnt, g.size());
                base = g.shfl(base, 0);
                nxt[base + g.thread_rank()] = w;
            }
        }
    }
}

/* Every level in one launch (cooperative: the grid is co-resident). Level L reads its frontier size from
 * cnt[L % 3], appends into cnt[(L+1) % 3] and zeroes cnt[(L+2) % 3], which was last read at the start of
 * level L-1 and is next appended to in level L+1, both on the other side of a barrier. Every thread takes
 * the same stop decision from values that cannot change during the level: the frontier size, and dist[t]
 * when it is <= L (a label written during level L is L+1, which does not stop it). */
__global__ void __launch_bounds__(BFS_THREADS) lat_bfs_persistent(const int64_t *__restrict__ row,
                                                                  const int32_t *__restrict__ col, int32_t *dist,
                                                                  int32_t *fa, int32_t *fb, unsigned *cnt, int32_t t) {
    cg::grid_group grid = cg::this_grid();
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x, nthreads = gridDim.x * blockDim.x;
    for (int32_t level = 0;; level++) {
        const unsigned nf = __ldcg(&cnt[level % 3]);
        if (nf == 0) break;
        if (t >= 0) {
            const int32_t dt = __ldcg(&dist[t]);
            if (dt >= 0 && dt <= level) break;
        }
        if (tid == 0) cnt[(level + 2) % 3] = 0;
        const int32_t *cur = (level & 1) ? fb : fa;
        int32_t *nxt = (level & 1) ? fa : fb;
        lat_bfs_expand(row, col, dist, cur, nf, nxt, &cnt[(level + 1) % 3], level, tid, nthreads);
        grid.sync();
    }
}

/* One level per launch, the counters rotated as in the persistent kernel: cnt[level % 3] is this level's
 * frontier size, the launch appends into cnt[(level + 1) % 3] and zeroes cnt[(level + 2) % 3], which the
 * previous launch read as its frontier size and the next one appends to (launches on one stream run in
 * order, so no barrier is needed within a launch). */
__global__ void lat_bfs_level(const int64_t *__restrict__ row, const int32_t *__restrict__ col, int32_t *dist,
                              const int32_t *__restrict__ cur, int32_t *next, unsigned *cnt, int32_t level) {
    const unsigned nf = cnt[level % 3], tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid == 0) cnt[(level + 2) % 3] = 0;
    lat_bfs_expand(row, col, dist, cur, nf, next, &cnt[(level + 1) % 3], level, tid, gridDim.x * blockDim.x);
}

/* The tie-rule walk by one warp: at each step the lanes read up to 32 entries of v's sorted row at once and
 * the lowest lane whose neighbour lies one level closer wins (the first such entry of the row). k =
 * dist[t] >= 0; path gets k+1 vertices. */
__global__ void lat_bfs_walk(const int64_t *__restrict__ row, const int32_t *__restrict__ col,
                             const int32_t *__restrict__ dist, int32_t t, int32_t k, int64_t *path) {
    const int lane = threadIdx.x;
    int32_t v = t;
    if (lane == 0) path[k] = t;
    for (int32_t j = k; j > 0; j--) {
        int32_t found = -1;
        for (int64_t a = row[v], e = row[v + 1]; found < 0 && a < e; a += 32) {
            const int32_t w = a + lane < e ? col[a + lane] : -1;
            const unsigned m = __ballot_sync(0xffffffffu, w >= 0 && dist[w] == j - 1);
            if (m) found = __shfl_sync(0xffffffffu, w, __ffs(m) - 1);
        }
        if (found < 0) return; /* cannot happen: dist came from a BFS over this graph */
        v = found;
        if (lane == 0) path[j - 1] = v;
    }
}

/* ---- state -------------------------------------------------------------------------------------------- */

lat_bfs_state *tdm_cuda_lat_bfs_new(void) {
    lat_bfs_state *st = (lat_bfs_state *)calloc(1, sizeof *st);
    if (st) pthread_mutex_init(&st->mu, NULL);
    return st;
}

/* Frees the device buffers (on the backend's stream) and forgets the resident graph. */
static void state_release(const tdm_backend *b, lat_bfs_state *st, cudaStream_t s) {
    void *bufs[] = {st->row, st->col, st->dist, st->fa, st->fb, st->path, st->cnt};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) tdm_cuda_free(b, bufs[i], s);
    st->row = NULL, st->path = NULL, st->col = st->dist = st->fa = st->fb = NULL, st->cnt = NULL;
    st->row_cap = st->col_cap = st->v_cap = st->path_cap = 0;
    st->id = 0;
}

void tdm_cuda_lat_bfs_free(const tdm_backend *b) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    lat_bfs_state *st = c->lat_bfs;
    if (!st) return;
    state_release(b, st, c->stream);
    pthread_mutex_destroy(&st->mu);
    free(st);
}

/* Grows a device buffer to n elements of size elem (contents not kept). */
static cudaError_t grow(const tdm_backend *b, void **p, size_t *cap, size_t n, size_t elem, cudaStream_t s) {
    if (*p && *cap >= n) return cudaSuccess;
    tdm_cuda_free(b, *p, s);
    *p = NULL, *cap = 0;
    cudaError_t e = tdm_cuda_malloc(b, p, (n ? n : 1) * elem, s);
    if (e == cudaSuccess) *cap = n;
    return e;
}

/* Makes g's CSR resident (uploading unless the same lattice is already there) and the workspace large
 * enough for it. */
static cudaError_t prepare(const tdm_backend *b, lat_bfs_state *st, const tdm_lattice_csr *g, cudaStream_t s) {
    const size_t V = (size_t)g->nvertices, arcs = (size_t)g->row_ptr[g->nvertices];
    cudaError_t e;
    if (!st->dist || st->v_cap < V) { /* dist and both frontiers share one capacity */
        tdm_cuda_free(b, st->dist, s), tdm_cuda_free(b, st->fa, s), tdm_cuda_free(b, st->fb, s);
        st->dist = st->fa = st->fb = NULL, st->v_cap = 0;
        const size_t n = V ? V : 1;
        if ((e = tdm_cuda_malloc(b, (void **)&st->dist, n * 4, s)) || (e = tdm_cuda_malloc(b, (void **)&st->fa, n * 4, s)) ||
            (e = tdm_cuda_malloc(b, (void **)&st->fb, n * 4, s)))
            return e;
        st->v_cap = n;
    }
    if (!st->cnt && (e = tdm_cuda_malloc(b, (void **)&st->cnt, 3 * sizeof(unsigned), s))) return e;
    if (g->id && g->id == st->id && st->nv == g->nvertices && st->arcs == (int64_t)arcs && st->hrow == g->row_ptr &&
        st->hcol == g->col)
        return cudaSuccess;
    st->id = 0; /* invalid until the upload is done */
    if ((e = grow(b, (void **)&st->row, &st->row_cap, V + 1, 8, s)) || (e = grow(b, (void **)&st->col, &st->col_cap, arcs, 4, s)))
        return e;
    if ((e = cudaMemcpyAsync(st->row, g->row_ptr, (V + 1) * 8, cudaMemcpyHostToDevice, s)) ||
        (arcs && (e = cudaMemcpyAsync(st->col, g->col, arcs * 4, cudaMemcpyHostToDevice, s))))
        return e;
    st->id = g->id, st->nv = g->nvertices, st->arcs = (int64_t)arcs, st->hrow = g->row_ptr, st->hcol = g->col;
    return cudaSuccess;
}

/* The persistent kernel's co-resident grid on this device (computed once): -1 where cooperative launches
 * are unsupported. */
static int coop_blocks(const cuda_impl *c, lat_bfs_state *st) {
    if (st->coop_blocks) return st->coop_blocks;
    int coop = 0, per_sm = 0;
    if (cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, c->dev) != cudaSuccess || !coop ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, lat_bfs_persistent, BFS_THREADS, 0) != cudaSuccess ||
        per_sm < 1) {
        cudaGetLastError();
        return st->coop_blocks = -1;
    }
    if (per_sm > BFS_BLOCKS_PER_SM) per_sm = BFS_BLOCKS_PER_SM;
    return st->coop_blocks = per_sm * (c->sms > 0 ? c->sms : 1);
}

/* BFS from s until the frontier empties or (t >= 0) t is labelled; dist is left in st->dist. */
static cudaError_t bfs_run(const cuda_impl *c, lat_bfs_state *st, int64_t V, int64_t s, int64_t t) {
    cudaStream_t strm = c->stream;
    cudaError_t e;
    lat_bfs_init<<<lat_blocks((size_t)V, c), BFS_THREADS, 0, strm>>>(st->dist, (size_t)V, (int32_t)s, st->fa, st->cnt);
    if ((e = cudaGetLastError())) return e;
    /* The persistent kernel only when pinned: under a full parallel test run on the H100 one run hung and
     * one crashed with it in use (not reproduced alone, cause not found), so AUTO launches per level. */
    const int grid_max = st->kernel == TDM_LAT_BFS_KERNEL_PERSISTENT ? coop_blocks(c, st) : -1;
    if (grid_max > 0) {
        /* Small graphs get a smaller grid: the barrier costs grow with the blocks that meet at it. */
        int blocks = (int)(((size_t)V + BFS_THREADS - 1) / BFS_THREADS);
        if (blocks > grid_max) blocks = grid_max;
        if (blocks < 1) blocks = 1;
        int32_t t32 = (int32_t)t;
        void *args[] = {&st->row, &st->col, &st->dist, &st->fa, &st->fb, &st->cnt, &t32};
        e = cudaLaunchCooperativeKernel((const void *)lat_bfs_persistent, dim3(blocks), dim3(BFS_THREADS), args, 0, strm);
        if (e == cudaSuccess || st->kernel == TDM_LAT_BFS_KERNEL_PERSISTENT) return e;
        /* Refused (e.g. under MPS limits): remember, and run this and later calls level by level. */
        cudaGetLastError();
        H->log(TDM_LOG_WARN, "%s: cooperative BFS launch refused (%s); launching per level", c->name, cudaGetErrorString(e));
        st->coop_blocks = -1;
    } else if (st->kernel == TDM_LAT_BFS_KERNEL_PERSISTENT) {
        return cudaErrorNotSupported;
    }
    /* A frontier is a small part of the graph: a few blocks per SM cover it (grid-stride) and launch faster
     * than a grid sized to the whole vertex set. */
    unsigned blocks = lat_blocks((size_t)V, c);
    const unsigned level_cap = (unsigned)(c->sms > 0 ? c->sms : 1) * 4;
    if (blocks > level_cap) blocks = level_cap;
    for (int32_t level = 0;; level += LEVELS_PER_CHECK) {
        for (int32_t l = level; l < level + LEVELS_PER_CHECK; l++) {
            int32_t *cur = (l & 1) ? st->fb : st->fa, *nxt = (l & 1) ? st->fa : st->fb;
            lat_bfs_level<<<blocks, BFS_THREADS, 0, strm>>>(st->row, st->col, st->dist, cur, nxt, st->cnt, l);
        }
        if ((e = cudaGetLastError())) return e;
        unsigned next_count;
        int32_t dt = -1;
        const int32_t after = level + LEVELS_PER_CHECK; /* frontier size of level `after` */
        if ((e = cudaMemcpyAsync(&next_count, st->cnt + (after % 3), sizeof next_count, cudaMemcpyDeviceToHost, strm)) ||
            (t >= 0 && (e = cudaMemcpyAsync(&dt, st->dist + t, 4, cudaMemcpyDeviceToHost, strm))) ||
            (e = cudaStreamSynchronize(strm)))
            return e;
        if (next_count == 0 || dt >= 0) return cudaSuccess;
        if (after > V) return cudaSuccess; /* cannot happen: a level per vertex at most */
    }
}

/* Ends a locked call that hit a CUDA error: the device state is dropped (re-made by the next call), the lock
 * released, the error reported. */
static int locked_fail(const tdm_backend *b, lat_bfs_state *st, cudaError_t e, const char *what) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    cudaGetLastError();
    state_release(b, st, c->stream);
    cudaStreamSynchronize(c->stream);
    pthread_mutex_unlock(&st->mu);
    return tdm_cuda_fail(e, what);
}

static int bfs_path(const tdm_backend *b, const tdm_lattice_csr *g, int64_t s, int64_t t, int64_t **path, int64_t *hops) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    lat_bfs_state *st = c->lat_bfs;
    *path = NULL;
    *hops = -1;
    if (!st) return H->error(TDM_E_NOMEM, "cuda bfs: no BFS state on %s", c->name);
    pthread_mutex_lock(&st->mu);
    cudaError_t e = cudaSetDevice(c->dev);
    int32_t k = -1;
    if (!e) e = prepare(b, st, g, c->stream);
    if (!e) e = bfs_run(c, st, g->nvertices, s, t);
    if (!e) e = cudaMemcpyAsync(&k, st->dist + t, 4, cudaMemcpyDeviceToHost, c->stream);
    if (!e) e = cudaStreamSynchronize(c->stream);
    if (e) return locked_fail(b, st, e, "cuda bfs");
    if (k < 0) {
        pthread_mutex_unlock(&st->mu);
        return TDM_OK;
    }
    int64_t *hp = (int64_t *)H->malloc(((size_t)k + 1) * 8);
    if (!hp) {
        pthread_mutex_unlock(&st->mu);
        return H->error(TDM_E_NOMEM, "cuda bfs: no host memory for the path");
    }
    e = grow(b, (void **)&st->path, &st->path_cap, (size_t)k + 1, 8, c->stream);
    if (!e) {
        lat_bfs_walk<<<1, 32, 0, c->stream>>>(st->row, st->col, st->dist, (int32_t)t, k, st->path);
        e = cudaGetLastError();
    }
    if (!e) e = cudaMemcpyAsync(hp, st->path, ((size_t)k + 1) * 8, cudaMemcpyDeviceToHost, c->stream);
    if (!e) e = cudaStreamSynchronize(c->stream);
    if (e) {
        H->free(hp);
        return locked_fail(b, st, e, "cuda bfs path");
    }
    pthread_mutex_unlock(&st->mu);
    *path = hp;
    *hops = k;
    return TDM_OK;
}

static int bfs_dist(const tdm_backend *b, const tdm_lattice_csr *g, int64_t s, int32_t *dist) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    lat_bfs_state *st = c->lat_bfs;
    if (!st) return H->error(TDM_E_NOMEM, "cuda bfs: no BFS state on %s", c->name);
    pthread_mutex_lock(&st->mu);
    cudaError_t e = cudaSetDevice(c->dev);
    if (!e) e = prepare(b, st, g, c->stream);
    if (!e) e = bfs_run(c, st, g->nvertices, s, -1);
    if (!e) e = cudaMemcpyAsync(dist, st->dist, (size_t)g->nvertices * 4, cudaMemcpyDeviceToHost, c->stream);
    if (!e) e = cudaStreamSynchronize(c->stream);
    if (e) return locked_fail(b, st, e, "cuda bfs sweep");
    pthread_mutex_unlock(&st->mu);
    return TDM_OK;
}

static int bfs_kernel(const tdm_backend *b, int which) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    lat_bfs_state *st = c->lat_bfs;
    if (which < TDM_LAT_BFS_KERNEL_AUTO || which > TDM_LAT_BFS_KERNEL_LEVELS)
        return H->error(TDM_E_INVAL, "cuda bfs: unknown kernel choice %d", which);
    if (!st) return H->error(TDM_E_NOMEM, "cuda bfs: no BFS state on %s", c->name);
    pthread_mutex_lock(&st->mu);
    int rc = TDM_OK;
    if (which == TDM_LAT_BFS_KERNEL_PERSISTENT && (cudaSetDevice(c->dev) != cudaSuccess || coop_blocks(c, st) < 0))
        rc = H->error(TDM_E_UNSUPPORTED, "%s: no cooperative launches for the persistent BFS kernel", c->name);
    else
        st->kernel = which;
    pthread_mutex_unlock(&st->mu);
    return rc;
}

const struct tdm_lattice_dev_ops tdm_cuda_lattice_ops = {
    bfs_path, bfs_dist, tdm_cuda_lat_xor_key, tdm_cuda_lat_xor_seeded, tdm_cuda_lat_gemm, tdm_cuda_lat_ewise,
    tdm_cuda_lat_reduce, tdm_cuda_lat_catalytic, tdm_cuda_lat_xor_key_batch, bfs_kernel,
};
