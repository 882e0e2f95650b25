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
