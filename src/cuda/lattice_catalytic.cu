/* lattice_catalytic.cu: the catalytic distance query (spec section 4) on aux that lives in device memory:
 * the same program P as src/lattice/catalytic.c (r_j ^= B r_{j-1} for j = K..1, r_0[s] ^= 1, r_j ^= B r_{j-1}
 * for j = 1..K, run twice), the same weights (SplitMix64 word v of the seed, 0 -> 1) and the same GF(2^64)
 * product, so every register word equals the CPU's bit for bit. Each B-step is one pull-style kernel (a
 * vertex reads register j-1 and writes its own word of register j: no atomics). The clean memory is the
 * K+1 words of t's column, gathered before and after the first run. A fault injected after N steps, or an
 * error, undoes the applied steps in reverse order when the device still works. */
#include "cuda/lattice_cuda.cuh"

#define H TDM_LAT_H

/* Carry-less product mod x^64 + x^4 + x^3 + x + 1 (shift and xor; the CPU's portable form). */
__device__ __forceinline__ uint64_t lat_gf64_mul(uint64_t a, uint64_t b) {
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < 64; i++) {
        const uint64_t m = 0 - ((b >> i) & 1);
        lo ^= (a << i) & m;
        if (i) hi ^= (a >> (64 - i)) & m;
    }
    const uint64_t spill = (hi >> 60) ^ (hi >> 61) ^ (hi >> 63);
    uint64_t low = hi ^ (hi << 1) ^ (hi << 3) ^ (hi << 4);
    low ^= spill ^ (spill << 1) ^ (spill << 3) ^ (spill << 4);
    return lo ^ low;
}

__global__ void lat_cat_step(const int64_t *__restrict__ row, const int32_t *__restrict__ col, int64_t V, uint64_t seed,
                             const uint64_t *__restrict__ x, uint64_t *__restrict__ r) {
    for (int64_t v = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; v < V; v += (int64_t)gridDim.x * blockDim.x) {
        uint64_t acc = x[v];
        for (int64_t a = row[v], e = row[v + 1]; a < e; a++) acc ^= x[col[a]];
        uint64_t w = lat_splitmix_word(seed, (uint64_t)v);
        if (!w) w = 1;
        r[v] ^= lat_gf64_mul(w, acc);
    }
}

__global__ void lat_cat_toggle(uint64_t *r0, int64_t s) { r0[s] ^= 1; }

__global__ void lat_cat_gather(const uint64_t *aux, int64_t V, int64_t t, int64_t K, uint64_t *out) {
    for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j <= K; j += (int64_t)gridDim.x * blockDim.x)
        out[j] = aux[(size_t)j * (size_t)V + (size_t)t];
}

typedef struct {
    const cuda_impl *c;
    const int64_t *row;
    const int32_t *col;
    uint64_t *aux;
    int64_t V, K, s;
    uint64_t seed;
} prog;

/* Step q of one run of P (0 <= q <= 2K), launched on the backend's stream. */
static void launch_step(const prog *P, int64_t q) {
    const size_t V = (size_t)P->V;
    if (q == P->K) {
        lat_cat_toggle<<<1, 1, 0, P->c->stream>>>(P->aux, P->s);
        return;
    }
    const int64_t j = q < P->K ? P->K - q : q - P->K;
    lat_cat_step<<<lat_blocks(V, P->c), 256, 0, P->c->stream>>>(P->row, P->col, P->V, P->seed, P->aux + (size_t)(j - 1) * V,
                                                               P->aux + (size_t)j * V);
}

/* Applies steps [from, to) of the two-run schedule; with fail_at > 0 stops once fail_at steps are applied,
 * undoes them and reports TDM_E_IO. */
static int run_steps(const prog *P, int64_t from, int64_t to, int64_t fail_at, int64_t *done) {
    const int64_t per = 2 * P->K + 1;
    for (int64_t i = from; i < to; i++) {
        if (fail_at > 0 && *done >= fail_at) {
            for (int64_t u = *done - 1; u >= 0; u--) launch_step(P, u % per);
            cudaError_t e = cudaStreamSynchronize(P->c->stream);
            if (e) {
                tdm_cuda_fail(e, "cuda catalytic (undoing an injected fault)");
                return TDM_E_DEVICE_LOST;
            }
            *done = 0;
            return H->error(TDM_E_IO, "catalytic: fault injected after %lld steps (TANDEM_TEST_FAIL_AT_STEP); aux restored",
                            (long long)fail_at);
        }
        launch_step(P, i % per);
        (*done)++;
    }
    return TDM_OK;
}

extern "C" int tdm_cuda_lat_catalytic(const tdm_backend *b, const tdm_lattice_csr *g, void *aux, int64_t s, int64_t t,
                                      int64_t K, uint64_t seed, int64_t fail_at, int64_t *dist) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    cudaStream_t st = c->stream;
    const size_t V = (size_t)g->nvertices, arcs = (size_t)g->row_ptr[g->nvertices];
    int64_t *row = NULL;
    int32_t *col = NULL;
    uint64_t *words = NULL; /* tau then the values after one run: 2(K+1) words */
    uint64_t *host = (uint64_t *)H->malloc(2 * ((size_t)K + 1) * 8);
    if (!host) return H->error(TDM_E_NOMEM, "cuda catalytic: no host memory");
    cudaError_t e = cudaSetDevice(c->dev);
    if (!e) e = lat_dalloc((void **)&row, (V + 1) * 8, st);
    if (!e) e = lat_dalloc((void **)&col, arcs * 4, st);
    if (!e) e = lat_dalloc((void **)&words, 2 * ((size_t)K + 1) * 8, st);
    if (!e) e = cudaMemcpyAsync(row, g->row_ptr, (V + 1) * 8, cudaMemcpyHostToDevice, st);
    if (!e && arcs) e = cudaMemcpyAsync(col, g->col, arcs * 4, cudaMemcpyHostToDevice, st);
    const unsigned gblocks = lat_blocks((size_t)K + 1, c);
    if (!e) {
        lat_cat_gather<<<gblocks, 256, 0, st>>>((const uint64_t *)aux, (int64_t)V, t, K, words);
        e = cudaGetLastError();
    }
    if (!e) e = cudaStreamSynchronize(st);
    int rc = TDM_OK;
    int64_t done = 0;
    if (e) rc = tdm_cuda_fail(e, "cuda catalytic (setup)"); /* nothing applied yet: aux intact */
    prog P = {c, row, col, (uint64_t *)aux, (int64_t)V, K, s, seed};
    const int64_t per = 2 * K + 1;
    if (!rc) rc = run_steps(&P, 0, per, fail_at, &done);
    if (!rc) {
        lat_cat_gather<<<gblocks, 256, 0, st>>>((const uint64_t *)aux, (int64_t)V, t, K, words + K + 1);
        e = cudaGetLastError();
        if (!e) e = cudaMemcpyAsync(host, words, 2 * ((size_t)K + 1) * 8, cudaMemcpyDeviceToHost, st);
        if (!e) e = cudaStreamSynchronize(st);
        if (e) {
            tdm_cuda_fail(e, "cuda catalytic");
            rc = TDM_E_DEVICE_LOST; /* steps were applied: aux is in an unknown state */
        }
    }
    if (!rc) {
        int64_t d = -1;
        for (int64_t j = 0; j <= K && d < 0; j++)
            if (host[j] != host[K + 1 + j]) d = j;
        rc = run_steps(&P, per, 2 * per, fail_at, &done);
        if (!rc) {
            e = cudaStreamSynchronize(st);
            if (e) {
                tdm_cuda_fail(e, "cuda catalytic");
                rc = TDM_E_DEVICE_LOST;
            }
        }
        if (!rc) *dist = d;
    }
    if (rc == TDM_E_DEVICE_LOST) H->error(TDM_E_DEVICE_LOST, "cuda catalytic: device error mid-program; aux may be changed");
    lat_dfree(row, st), lat_dfree(col, st), lat_dfree(words, st);
    cudaStreamSynchronize(st);
    H->free(host);
    return rc;
}
