/* lattice_xor.cu: the XOR transform on the device (spec section 4): a cyclic key with offset, or the
 * counter-based SplitMix64 stream of a seed, computed per byte from its absolute position, so every thread
 * works independently and the result is byte-identical to src/lattice/xor.c. Host in/out: the bytes are
 * staged through device memory (a resident variant comes with tdm_buf). */
#include "cuda/lattice_cuda.cuh"

#define H TDM_LAT_H

__global__ void lat_xor_key_kernel(const uint8_t *__restrict__ in, uint8_t *out, size_t n, const uint8_t *__restrict__ key,
                                   size_t len, uint64_t p0) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = in[i] ^ key[(p0 + i % len) % len];
}

__global__ void lat_xor_seeded_kernel(const uint8_t *__restrict__ in, uint8_t *out, size_t n, uint64_t seed, uint64_t offset) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint64_t p = offset + i;
        out[i] = in[i] ^ (uint8_t)(lat_splitmix_word(seed, p >> 3) >> (8 * (p & 7)));
    }
}

/* Copies in to the device, runs the kernel chosen by key (NULL: seeded), copies the result to out. */
static int xor_common(const tdm_backend *b, const void *in, void *out, size_t n, const uint8_t *key, size_t len,
                      uint64_t offset, uint64_t seed) {
    if (!n) return TDM_OK;
    const cuda_impl *c = (const cuda_impl *)b->impl;
    cudaStream_t st = c->stream;
    uint8_t *d = NULL, *dk = NULL;
    cudaError_t e = cudaSetDevice(c->dev);
    if (!e) e = lat_dalloc((void **)&d, n, st);
    if (!e && key) e = lat_dalloc((void **)&dk, len, st);
    if (!e) e = cudaMemcpyAsync(d, in, n, cudaMemcpyHostToDevice, st);
    if (!e && key) e = cudaMemcpyAsync(dk, key, len, cudaMemcpyHostToDevice, st);
    if (!e) {
        if (key) lat_xor_key_kernel<<<lat_blocks(n, c), 256, 0, st>>>(d, d, n, dk, len, offset % len);
        else lat_xor_seeded_kernel<<<lat_blocks(n, c), 256, 0, st>>>(d, d, n, seed, offset);
        e = cudaGetLastError();
    }
    if (!e) e = cudaMemcpyAsync(out, d, n, cudaMemcpyDeviceToHost, st);
    lat_dfree(d, st);
    lat_dfree(dk, st);
    cudaError_t e2 = cudaStreamSynchronize(st);
    if (!e) e = e2;
    return e ? tdm_cuda_fail(e, "cuda xor") : TDM_OK;
}

extern "C" int tdm_cuda_lat_xor_key(const tdm_backend *b, const void *in, void *out, size_t n, const uint8_t *key,
                                    size_t len, uint64_t offset) {
    return xor_common(b, in, out, n, key, len, offset, 0);
}

extern "C" int tdm_cuda_lat_xor_seeded(const tdm_backend *b, const void *in, void *out, size_t n, uint64_t seed,
                                       uint64_t offset) {
    return xor_common(b, in, out, n, NULL, 0, offset, seed);
}

/* ---- many small XORs in one launch (the batch executor's device path) -------------------------------------
 * Per call the host packs the inputs, the distinct keys (consecutive jobs sharing a key pointer share its
 * copy) and a job table into one staging buffer, so a group costs one allocation, one copy each way and
 * one kernel instead of a round trip per item. Outputs are scattered from the staging buffer only after
 * the stream finished without error, so a failed call leaves them untouched. */
struct lat_xor_batch_job {
    uint64_t data, n, key, len, p0; /* offsets into the staged data and keys; p0 = offset mod len */
};

/* One block per job (grid-stride over jobs), threads over the job's bytes. */
__global__ void lat_xor_batch_kernel(uint8_t *data, const uint8_t *__restrict__ keys,
                                     const lat_xor_batch_job *__restrict__ jobs, size_t count) {
    for (size_t j = blockIdx.x; j < count; j += gridDim.x) {
        const lat_xor_batch_job q = jobs[j];
        for (uint64_t i = threadIdx.x; i < q.n; i += blockDim.x) data[q.data + i] ^= keys[q.key + (q.p0 + i % q.len) % q.len];
    }
}

static size_t align16(size_t x) { return (x + 15) & ~(size_t)15; }

extern "C" int tdm_cuda_lat_xor_key_batch(const tdm_backend *b, const tdm_lattice_xor_job *jobs, size_t count) {
    if (!count) return TDM_OK;
    const cuda_impl *c = (const cuda_impl *)b->impl;
    cudaStream_t st = c->stream;
    size_t data = 0, keys = 0;
    for (size_t j = 0; j < count; j++) {
        data += jobs[j].n;
        if (!j || jobs[j].key != jobs[j - 1].key || jobs[j].len != jobs[j - 1].len) keys += jobs[j].len;
    }
    const size_t table = count * sizeof(lat_xor_batch_job);
    const size_t at_keys = align16(data), at_table = at_keys + align16(keys), total = at_table + table;
    uint8_t *h = (uint8_t *)H->malloc(total);
    if (!h) return H->error(TDM_E_NOMEM, "cuda xor batch: no host memory for %zu staged bytes", total);
    lat_xor_batch_job *tab = (lat_xor_batch_job *)(h + at_table);
    for (size_t j = 0, d = 0, k = 0; j < count; j++) {
        memcpy(h + d, jobs[j].in, jobs[j].n);
        if (j && jobs[j].key == jobs[j - 1].key && jobs[j].len == jobs[j - 1].len) {
            tab[j].key = tab[j - 1].key;
        } else {
            memcpy(h + at_keys + k, jobs[j].key, jobs[j].len);
            tab[j].key = k;
            k += jobs[j].len;
        }
        tab[j].data = d, tab[j].n = jobs[j].n, tab[j].len = jobs[j].len, tab[j].p0 = jobs[j].offset % jobs[j].len;
        d += jobs[j].n;
    }
    uint8_t *dv = NULL;
    cudaError_t e = cudaSetDevice(c->dev);
    if (!e) e = tdm_cuda_malloc(b, (void **)&dv, total, st);
    if (!e) e = cudaMemcpyAsync(dv, h, total, cudaMemcpyHostToDevice, st);
    if (!e) {
        size_t blocks = count < (size_t)(c->sms > 0 ? c->sms : 1) * 32 ? count : (size_t)(c->sms > 0 ? c->sms : 1) * 32;
        lat_xor_batch_kernel<<<(unsigned)blocks, 256, 0, st>>>(dv, dv + at_keys, (const lat_xor_batch_job *)(dv + at_table), count);
        e = cudaGetLastError();
    }
    if (!e) e = cudaMemcpyAsync(h, dv, data, cudaMemcpyDeviceToHost, st);
    if (dv) tdm_cuda_free(b, dv, st);
    cudaError_t e2 = cudaStreamSynchronize(st);
    if (!e) e = e2;
    if (!e)
        for (size_t j = 0; j < count; j++) memcpy(jobs[j].out, h + tab[j].data, jobs[j].n);
    H->free(h);
    return e ? tdm_cuda_fail(e, "cuda xor batch") : TDM_OK;
}
