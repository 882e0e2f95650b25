/* xor.c: the reversible XOR mask (spec section 4) with an explicit cyclic key or the counter-based
 * SplitMix64 stream of a seed. Both work on raw bytes at any alignment and depend only on the absolute
 * key position of each byte, so chunked processing equals one shot and a GPU thread can compute its bytes
 * independently. A random seed is always written back to the caller: a mask nobody can undo is a bug. */
#define _GNU_SOURCE
#include "lattice/lattice_internal.h"
#include "lattice/lattice_device.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#define GOLDEN UINT64_C(0x9E3779B97F4A7C15)

static inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

uint64_t tdm_lattice_splitmix_word(uint64_t seed, uint64_t j) { return mix64(seed + (j + 1) * GOLDEN); }

void tdm_lattice_key_from_seed(uint64_t seed, uint64_t offset, size_t len, uint8_t *buf) {
    for (size_t i = 0; i < len; i++) {
        uint64_t p = offset + i;
        buf[i] = (uint8_t)(tdm_lattice_splitmix_word(seed, p >> 3) >> (8 * (p & 7)));
    }
}

int tdm_lat_random_seed(uint64_t *seed) {
    uint64_t s;
    ssize_t got;
    do got = getrandom(&s, sizeof s, 0);
    while (got < 0 && errno == EINTR);
    if (got != (ssize_t)sizeof s) return tdm_error(TDM_E_IO, "random seed: getrandom failed: %s", strerror(errno));
    *seed = s;
    return TDM_OK;
}

/* in and out must be the same buffer or disjoint. */
static int check_overlap(const char *fn, const void *in, const void *out, size_t n) {
    const uintptr_t a = (uintptr_t)in, b = (uintptr_t)out;
    if (a != b && a < b + n && b < a + n)
        return tdm_error(TDM_E_INVAL, "%s: input and output overlap partially (in %p, out %p, %zu bytes)", fn, in, out, n);
    return TDM_OK;
}

/* out = in ^ key over n contiguous bytes, a word at a time (memcpy keeps any alignment legal; -O2's cheap
 * vectoriser leaves a byte loop of unknown length alone). */
static void xor_run(const uint8_t *in, uint8_t *out, const uint8_t *key, size_t n) {
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t a[4], k[4];
        memcpy(a, in + i, 32);
        memcpy(k, key + i, 32);
        a[0] ^= k[0], a[1] ^= k[1], a[2] ^= k[2], a[3] ^= k[3];
        memcpy(out + i, a, 32);
    }
    for (; i < n; i++) out[i] = in[i] ^ key[i];
}

int tdm_lat_xor_check(const char *fn, const void *in, const void *out, size_t n, const tdm_lattice_key *key,
                      unsigned flags) {
    if (!key || !key->bytes) return tdm_error(TDM_E_INVAL, "%s: key is NULL", fn);
    if (key->len == 0) return tdm_error(TDM_E_INVAL, "%s: key length 0", fn);
    if (flags & ~TDM_LATTICE_XOR_NO_CYCLE) return tdm_error(TDM_E_INVAL, "%s: unknown flags 0x%x", fn, flags);
    if ((flags & TDM_LATTICE_XOR_NO_CYCLE) && (key->offset > key->len || n > key->len - key->offset))
        return tdm_error(TDM_E_INVAL, "%s: no-cycle key of %zu bytes cannot cover offset %llu + %zu bytes", fn,
                         key->len, (unsigned long long)key->offset, n);
    if (n == 0) return TDM_OK;
    if (!in || !out) return tdm_error(TDM_E_INVAL, "%s: %s is NULL", fn, in ? "out" : "in");
    return check_overlap(fn, in, out, n);
}

/* Bytes [i, end) of a cyclic-key XOR whose byte 0 sits at key position p0. */
static void xor_span(const uint8_t *src, uint8_t *dst, const uint8_t *kb, size_t klen, size_t p0, size_t i, size_t end) {
    size_t p = (p0 + i % klen) % klen;
    while (i < end) {
        size_t run = klen - p < end - i ? klen - p : end - i;
        xor_run(src + i, dst + i, kb + p, run);
        i += run;
        p = 0;
    }
}

void tdm_lat_xor_cpu(const void *in, void *out, size_t n, const tdm_lattice_key *key, int threads) {
    const uint8_t *src = in;
    uint8_t *dst = out;
    const uint8_t *kb = key->bytes;
    size_t klen = key->len;
    /* A short cyclic key is unrolled to >= 256 bytes (a whole number of periods), so the inner loop runs
     * over long contiguous stretches instead of restarting every few bytes. */
    uint8_t unrolled[512];
    if (klen < 256 && n > klen) {
        size_t reps = (256 + klen - 1) / klen;
        for (size_t r = 0; r < reps; r++) memcpy(unrolled + r * klen, kb, klen);
        kb = unrolled;
        klen *= reps;
    }
    /* Key position of byte 0; the same residue as modulo the original length, since klen is a multiple. */
    const size_t p0 = (size_t)(key->offset % klen);
    /* Large inputs in parallel chunks, each starting at its own key position (threads only split the
     * work; every byte's result is the same). One chunk runs without entering a parallel region: inside
     * the batch executor's threads every such region would be a nested team, allocated and freed per call,
     * which cost more than a small item's XOR. */
    const size_t chunk = (size_t)1 << 20;
    const size_t nchunks = (n + chunk - 1) / chunk;
    if (nchunks <= 1) {
        xor_span(src, dst, kb, klen, p0, 0, n);
        return;
    }
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (size_t c = 0; c < nchunks; c++) {
        size_t i = c * chunk, end = i + chunk < n ? i + chunk : n;
        xor_span(src, dst, kb, klen, p0, i, end);
    }
}

int tdm_lattice_xor(tdm_ctx *ctx, const void *in, void *out, size_t n, const tdm_lattice_key *key, unsigned flags) {
    if (!ctx) return tdm_error(TDM_E_INVAL, "tdm_lattice_xor: ctx is NULL");
    int rc = tdm_lat_xor_check("tdm_lattice_xor", in, out, n, key, flags);
    if (rc || n == 0) return rc;
    tdm_lat_req q = {.op = TDM_OP_LATTICE_XOR, .pref = TDM_DEVICE_AUTO, .device_ok = 1, .work = (double)n,
                     .h2d_bytes = n + key->len, .d2h_bytes = n, .device_bytes = n + key->len};
    tdm_lat_placement pl;
    if ((rc = tdm_lat_place(ctx, &q, &pl))) return rc;
    const tdm_backend *b = pl.backend;
    if (b->kind != TDM_BACKEND_CPU) {
        if ((rc = b->lattice->xor_key(b, in, out, n, key->bytes, key->len, key->offset)) == TDM_OK) {
            tdm_lat_placed_done(ctx, &pl);
            return TDM_OK;
        }
        if ((rc = tdm_lat_device_failed(ctx, b, TDM_OP_LATTICE_XOR, rc))) return rc;
    }
    tdm_lat_xor_cpu(in, out, n, key, tdm_ctx_threads(ctx));
    if (pl.backend->kind == TDM_BACKEND_CPU) tdm_lat_placed_done(ctx, &pl); /* not after a fallback */
    return TDM_OK;
}

/* Stream bytes [offset, offset+n) XORed into dst from src (no checks). */
static void seeded_range(const uint8_t *src, uint8_t *dst, size_t n, uint64_t sd, uint64_t offset) {
    size_t i = 0;
    /* Bytes up to the next word boundary of the stream, then whole words (memcpy keeps any alignment
     * legal), then the tail. */
    while (i < n && ((offset + i) & 7)) {
        uint64_t p = offset + i;
        dst[i] = src[i] ^ (uint8_t)(tdm_lattice_splitmix_word(sd, p >> 3) >> (8 * (p & 7)));
        i++;
    }
    uint64_t word = (offset + i) >> 3;
    for (; i + 8 <= n; i += 8, word++) {
        uint64_t x, k = tdm_lattice_splitmix_word(sd, word);
        memcpy(&x, src + i, 8);
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
        k = __builtin_bswap64(k);
#endif
        x ^= k;
        memcpy(dst + i, &x, 8);
    }
    for (; i < n; i++) {
        uint64_t p = offset + i;
        dst[i] = src[i] ^ (uint8_t)(tdm_lattice_splitmix_word(sd, p >> 3) >> (8 * (p & 7)));
    }
}

int tdm_lattice_xor_seeded(tdm_ctx *ctx, const void *in, void *out, size_t n, uint64_t *seed, uint64_t offset,
                           unsigned flags) {
    if (!ctx || !seed) return tdm_error(TDM_E_INVAL, "tdm_lattice_xor_seeded: %s is NULL", ctx ? "seed" : "ctx");
    if (flags & ~TDM_LATTICE_SEED_RANDOM)
        return tdm_error(TDM_E_INVAL, "tdm_lattice_xor_seeded: unknown flags 0x%x", flags);
    if (n && (!in || !out)) return tdm_error(TDM_E_INVAL, "tdm_lattice_xor_seeded: %s is NULL", in ? "out" : "in");
    int rc = n ? check_overlap("tdm_lattice_xor_seeded", in, out, n) : TDM_OK;
    if (rc) return rc;
    if ((flags & TDM_LATTICE_SEED_RANDOM) && (rc = tdm_lat_random_seed(seed))) return rc;
    if (n == 0) return TDM_OK;
    tdm_lat_req q = {.op = TDM_OP_LATTICE_XOR, .pref = TDM_DEVICE_AUTO, .device_ok = 1, .work = (double)n,
                     .h2d_bytes = n, .d2h_bytes = n, .device_bytes = n};
    tdm_lat_placement pl;
    if ((rc = tdm_lat_place(ctx, &q, &pl))) return rc;
    const tdm_backend *b = pl.backend;
    if (b->kind != TDM_BACKEND_CPU) {
        if ((rc = b->lattice->xor_seeded(b, in, out, n, *seed, offset)) == TDM_OK) {
            tdm_lat_placed_done(ctx, &pl);
            return TDM_OK;
        }
        if ((rc = tdm_lat_device_failed(ctx, b, TDM_OP_LATTICE_XOR, rc))) return rc;
    }
    const uint64_t sd = *seed;
    const uint8_t *src = in;
    uint8_t *dst = out;
    /* The stream is counter-based, so chunks run in parallel, each from its own stream position. */
    const size_t chunk = (size_t)1 << 20;
    const size_t nchunks = (n + chunk - 1) / chunk;
    const int threads = nchunks > 1 ? tdm_ctx_threads(ctx) : 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (size_t c = 0; c < nchunks; c++) {
        size_t i = c * chunk, m = i + chunk < n ? chunk : n - i;
        seeded_range(src + i, dst + i, m, sd, offset + i);
    }
    if (pl.backend->kind == TDM_BACKEND_CPU) tdm_lat_placed_done(ctx, &pl); /* not after a fallback */
    return TDM_OK;
}
