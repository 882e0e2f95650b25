/* seq_store.cu: the device-resident pattern store (layout in seq_cuda.cuh): creating it, appending
 * batches of patterns in large transfers (all or nothing, so a full device loses nothing), and its
 * memory figures. */
#include "cuda/seq_cuda.cuh"

#include <stdlib.h>
#include <string.h>

#define H tdm_cuda_host_fns
/* Every device allocation goes through the backend's accounting (cuda_internal.cuh). */
#define DMALLOC(pp, n) tdm_cuda_malloc(d->backend, (void **)(pp), (n), d->stream)
#define DFREE(p) tdm_cuda_free(d->backend, (p), d->stream)
/* The first chunk holds at least this many symbols, later ones up to MAX_CHUNK (larger only for a tile
 * that needs more). */
#define MIN_CHUNK (1u << 20)
#define MAX_CHUNK (1u << 26)

int tdm_cuda_dbuf_reserve(struct tdm_seq_dstore *d, dbuf *b, size_t bytes, const char *what) {
    if (b->bytes >= bytes && b->p) return TDM_OK;
    size_t nb = b->bytes ? b->bytes : 4096;
    while (nb < bytes) nb *= 2;
    void *p = NULL;
    cudaError_t e = DMALLOC(&p, nb);
    if (e != cudaSuccess) return tdm_cuda_fail(e, what);
    if (b->p) DFREE(b->p);
    b->p = p;
    b->bytes = nb;
    return TDM_OK;
}

void tdm_cuda_dbuf_free(struct tdm_seq_dstore *d, dbuf *b) {
    if (b->p) DFREE(b->p);
    b->p = NULL;
    b->bytes = 0;
}

static int store_new(const tdm_backend *b, tdm_seq_dstore **out) {
    const cuda_impl *c = (const cuda_impl *)b->impl;
    tdm_seq_dstore *d = (tdm_seq_dstore *)calloc(1, sizeof *d);
    if (!d) return H->error(TDM_E_NOMEM, "cuda: no host memory for a device store");
    d->backend = b;
    d->dev = c->dev;
    d->sms = c->sms;
    d->stream = c->stream;
    cudaError_t e = cudaSetDevice(d->dev);
    for (int i = 0; i < 6 && e == cudaSuccess; i++) e = cudaEventCreate(&d->ev[i]);
    if (e != cudaSuccess) {
        free(d);
        return tdm_cuda_fail(e, "creating a device store");
    }
    *out = d;
    return TDM_OK;
}

static void store_free(tdm_seq_dstore *d) {
    if (!d) return;
    cudaSetDevice(d->dev);
    for (uint32_t i = 0; i < d->nchunks; i++) DFREE(d->chunk[i]);
    void *dev[] = {d->d_chunk, d->d_tiles, d->d_ids, d->d_lens};
    for (size_t i = 0; i < sizeof dev / sizeof *dev; i++)
        if (dev[i]) DFREE(dev[i]);
    dbuf *bufs[] = {&d->q, &d->out_id, &d->out_sim, &d->alt_id, &d->alt_sim, &d->temp, &d->hits, &d->scr, &d->cnt, &d->hist, &d->cslot, &d->xslot,
                    &d->out_blk, &d->blk, &d->idx, &d->alt_idx};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) tdm_cuda_dbuf_free(d, bufs[i]);
    cudaStreamSynchronize(d->stream);
    if (d->h_q) cudaFreeHost(d->h_q);
    if (d->h_small) cudaFreeHost(d->h_small);
    if (d->h_rows) cudaFreeHost(d->h_rows);
    for (int i = 0; i < 6; i++)
        if (d->ev[i]) cudaEventDestroy(d->ev[i]);
    free(d->chunk);
    free(d->chunk_cap);
    free(d);
}

static void store_info(const tdm_seq_dstore *d, tdm_seq_dstore_info *info) {
    uint64_t chunks = 0;
    for (uint32_t i = 0; i < d->nchunks; i++) chunks += d->chunk_cap[i] * 4;
    uint64_t meta = (uint64_t)d->cap_tiles * (sizeof(seq_tile) + 2 * TILE * 4) + (uint64_t)d->d_chunk_cap * 8;
    info->patterns = d->patterns;
    info->symbols = d->symbols;
    info->bytes = d->padded_symbols * 4 + (uint64_t)d->ntiles * (sizeof(seq_tile) + 2 * TILE * 4) + (uint64_t)d->nchunks * 8;
    info->reserved_bytes = chunks + meta;
}

/* Sort key of the batch: (length, position) so equal lengths keep insertion order. */
typedef struct {
    uint32_t len, k;
} lenkey;

static int cmp_lenkey(const void *x, const void *y) {
    const lenkey *a = (const lenkey *)x, *b = (const lenkey *)y;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}

/* Moves a device array of `have` bytes to a new one of `want` bytes (stream-ordered). */
static cudaError_t regrow(tdm_seq_dstore *d, void **p, size_t have, size_t want) {
    void *np = NULL;
    cudaError_t e = DMALLOC(&np, want);
    if (e != cudaSuccess) return e;
    if (have) e = cudaMemcpyAsync(np, *p, have, cudaMemcpyDeviceToDevice, d->stream);
    if (e != cudaSuccess) {
        DFREE(np);
        return e;
    }
    if (*p) DFREE(*p);
    *p = np;
    return cudaSuccess;
}

static int store_append(tdm_seq_dstore *d, const uint32_t *syms, const uint64_t *off, uint32_t first_id, uint32_t n) {
    if (first_id != d->patterns)
        return H->error(TDM_E_INVAL, "cuda store: append of ids from %u, but the store holds %llu patterns", first_id,
                        (unsigned long long)d->patterns);
    if (!n) return TDM_OK;
    cudaError_t e = cudaSetDevice(d->dev);
    if (e != cudaSuccess) return tdm_cuda_fail(e, "cudaSetDevice");
    /* Plan: sort by length, cut into tiles, place tiles into chunks. */
    lenkey *order = (lenkey *)malloc((size_t)n * sizeof *order);
    seq_tile *tiles = (seq_tile *)malloc((size_t)n * sizeof *tiles);
    if (!order || !tiles) {
        free(order);
        free(tiles);
        return H->error(TDM_E_NOMEM, "cuda store: no host memory to plan an append of %u patterns", n);
    }
    uint64_t base = off[0];
    for (uint32_t k = 0; k < n; k++) order[k] = (lenkey){(uint32_t)(off[k + 1] - off[k]), k};
    qsort(order, n, sizeof *order, cmp_lenkey);
    uint32_t nt = 0;
    for (uint32_t k = 0; k < n;) {
        uint32_t first = order[k].len, slack = first / 8 > 4 ? first / 8 : 4, w = 0;
        while (k + w < n && w < TILE && order[k + w].len - first <= slack) w++;
        tiles[nt++] = (seq_tile){0, 0, w, order[k + w - 1].len};
        k += w;
    }
    /* Chunks: keep filling the last one, then open new ones. */
    uint32_t new_chunks = 0;
    uint64_t used = d->used_last, cap = d->nchunks ? d->chunk_cap[d->nchunks - 1] : 0, total = 0;
    uint64_t new_cap[64];
    for (uint32_t t = 0; t < nt; t++) {
        uint64_t need = (uint64_t)tiles[t].width * tiles[t].maxlen;
        if (used + need > cap || !(d->nchunks + new_chunks)) {
            if (new_chunks == 64) {
                free(order);
                free(tiles);
                return H->error(TDM_E_INVAL, "cuda store: append too large for one call (split it)");
            }
            uint64_t want = d->padded_symbols + total;
            want = want < MIN_CHUNK ? MIN_CHUNK : want > MAX_CHUNK ? MAX_CHUNK : want;
            if (want < need) want = need;
            new_cap[new_chunks++] = cap = want;
            used = 0;
        }
        tiles[t].chunk = d->nchunks + new_chunks - 1; /* the chunk being filled */
        tiles[t].off = (uint32_t)used;
        used += need;
        total += need;
    }
    /* Host staging, in upload order: each touched chunk's new region is contiguous. */
    uint32_t *stage = (uint32_t *)malloc((size_t)total * sizeof *stage);
    uint32_t *ids = (uint32_t *)malloc((size_t)nt * TILE * sizeof *ids), *lens = (uint32_t *)malloc((size_t)nt * TILE * sizeof *lens);
    if (!stage || !ids || !lens) {
        free(order), free(tiles), free(stage), free(ids), free(lens);
        return H->error(TDM_E_NOMEM, "cuda store: no host memory to stage %llu symbols", (unsigned long long)total);
    }
    uint64_t at = 0, nsym = 0;
    for (uint32_t t = 0, k = 0; t < nt; t++) {
        uint32_t w = tiles[t].width, L = tiles[t].maxlen;
        for (uint32_t l = 0; l < TILE; l++) {
            ids[(size_t)t * TILE + l] = NO_ID;
            lens[(size_t)t * TILE + l] = 0;
        }
        for (uint32_t l = 0; l < w; l++, k++) {
            uint32_t src = order[k].k, len = order[k].len;
            const uint32_t *P = syms + (off[src] - base);
            ids[(size_t)t * TILE + l] = first_id + src;
            lens[(size_t)t * TILE + l] = len;
            for (uint32_t s = 0; s < len; s++) stage[at + (uint64_t)s * w + l] = P[s];
            for (uint32_t s = len; s < L; s++) stage[at + (uint64_t)s * w + l] = NO_ID;
            nsym += len;
        }
        at += (uint64_t)w * L;
    }
    free(order);
    /* Device memory first (all or nothing), then the copies. */
    uint32_t *fresh[64] = {0};
    uint32_t fresh_n = 0;
    for (; fresh_n < new_chunks; fresh_n++) {
        e = DMALLOC((void **)&fresh[fresh_n], new_cap[fresh_n] * 4);
        if (e != cudaSuccess) break;
    }
    uint32_t want_tiles = d->ntiles + nt;
    if (e == cudaSuccess && want_tiles > d->cap_tiles) {
        uint32_t nc = d->cap_tiles ? d->cap_tiles : 1024;
        while (nc < want_tiles) nc = nc > UINT32_MAX / 2 ? want_tiles : nc * 2;
        e = regrow(d, (void **)&d->d_tiles, (size_t)d->ntiles * sizeof(seq_tile), (size_t)nc * sizeof(seq_tile));
        if (e == cudaSuccess) e = regrow(d, (void **)&d->d_ids, (size_t)d->ntiles * TILE * 4, (size_t)nc * TILE * 4);
        if (e == cudaSuccess) e = regrow(d, (void **)&d->d_lens, (size_t)d->ntiles * TILE * 4, (size_t)nc * TILE * 4);
        if (e == cudaSuccess) d->cap_tiles = nc; /* a partial regrow keeps the old contents: harmless */
    }
    uint32_t want_chunks = d->nchunks + new_chunks;
    if (e == cudaSuccess && want_chunks > d->d_chunk_cap) {
        uint32_t nc = want_chunks * 2;
        e = regrow(d, (void **)&d->d_chunk, 0, (size_t)nc * sizeof(uint32_t *));
        if (e == cudaSuccess) d->d_chunk_cap = nc, d->cap_chunks = 0; /* re-upload the whole table below */
    }
    if (e == cudaSuccess && want_chunks > d->cap_chunks) {
        uint32_t **nc = (uint32_t **)realloc(d->chunk, (size_t)d->d_chunk_cap * sizeof *nc);
        uint64_t *ncap = nc ? (uint64_t *)realloc(d->chunk_cap, (size_t)d->d_chunk_cap * sizeof *ncap) : NULL;
        if (nc) d->chunk = nc;
        if (ncap) d->chunk_cap = ncap;
        if (!nc || !ncap) e = cudaErrorMemoryAllocation;
        else d->cap_chunks = d->d_chunk_cap;
    }
    if (e != cudaSuccess) {
        for (uint32_t i = 0; i < fresh_n; i++) DFREE(fresh[i]);
        cudaStreamSynchronize(d->stream);
        free(tiles), free(stage), free(ids), free(lens);
        return tdm_cuda_fail(e, "growing the device store");
    }
    for (uint32_t i = 0; i < new_chunks; i++) {
        d->chunk[d->nchunks + i] = fresh[i];
        d->chunk_cap[d->nchunks + i] = new_cap[i];
    }
    /* Upload: symbols chunk by chunk, then the tables (one H2D span for the profiler). */
    tdm_cuda_prof *prof = ((const cuda_impl *)d->backend->impl)->prof;
    tdm_cuda_mark m0 = tdm_cuda_prof_mark(prof);
    at = 0;
    for (uint32_t t = 0; t < nt && e == cudaSuccess;) {
        uint32_t t2 = t;
        uint64_t bytes = 0;
        while (t2 < nt && tiles[t2].chunk == tiles[t].chunk) bytes += (uint64_t)tiles[t2].width * tiles[t2].maxlen, t2++;
        e = cudaMemcpyAsync(d->chunk[tiles[t].chunk] + tiles[t].off, stage + at, bytes * 4, cudaMemcpyHostToDevice, d->stream);
        at += bytes;
        t = t2;
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(d->d_tiles + d->ntiles, tiles, (size_t)nt * sizeof *tiles, cudaMemcpyHostToDevice, d->stream);
    if (e == cudaSuccess) e = cudaMemcpyAsync(d->d_ids + (size_t)d->ntiles * TILE, ids, (size_t)nt * TILE * 4, cudaMemcpyHostToDevice, d->stream);
    if (e == cudaSuccess) e = cudaMemcpyAsync(d->d_lens + (size_t)d->ntiles * TILE, lens, (size_t)nt * TILE * 4, cudaMemcpyHostToDevice, d->stream);
    if (e == cudaSuccess) e = cudaMemcpyAsync(d->d_chunk, d->chunk, (size_t)want_chunks * sizeof(uint32_t *), cudaMemcpyHostToDevice, d->stream);
    tdm_cuda_mark m1 = tdm_cuda_prof_mark(prof);
    if (e == cudaSuccess) e = cudaStreamSynchronize(d->stream);
    if (e == cudaSuccess)
        tdm_cuda_prof_span(prof, m0, m1, "seq.store_append", TDM_PROF_CAT_H2D,
                           (uint64_t)total * 4 + (uint64_t)nt * (sizeof *tiles + 2 * TILE * 4) + (uint64_t)want_chunks * 8, 0, n);
    uint64_t last_used = tiles[nt - 1].off + (uint64_t)tiles[nt - 1].width * tiles[nt - 1].maxlen;
    free(tiles), free(stage), free(ids), free(lens);
    if (e != cudaSuccess) {
        /* The new chunks are not referenced by any tile the store counts: release them. */
        for (uint32_t i = 0; i < new_chunks; i++) DFREE(fresh[i]);
        return tdm_cuda_fail(e, "uploading patterns");
    }
    d->nchunks = want_chunks;
    d->used_last = last_used;
    d->ntiles = want_tiles;
    d->patterns += n;
    d->symbols += nsym;
    d->padded_symbols += total;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t len = (uint32_t)(off[k + 1] - off[k]);
        if (len > d->max_length) d->max_length = len;
    }
    return TDM_OK;
}

const struct tdm_seq_dev_ops tdm_cuda_seq_ops = {store_new, store_free, store_append, store_info,
                                                            tdm_cuda_seq_query};
