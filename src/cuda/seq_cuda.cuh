/* seq_cuda.cuh: the device-resident pattern store's layout, shared by seq_store.cu (appends) and
 * seq_query.cu (kernels).
 *
 * Layout, chosen for coalesced reads: patterns are grouped into tiles of up to 32 patterns of similar
 * length (each appended batch is sorted by length first). A tile's symbols are interleaved: symbol t of
 * the tile's lane l sits at data[t * width + l], so when the 32 threads of a warp each walk their own
 * pattern, step t reads one contiguous run of width words. Shorter patterns in a tile leave padding up to
 * the tile's longest; a tile is closed early when the next length would pad too much, which keeps long
 * patterns of any length cheap (no length cap anywhere). Tiles live in chunks of device memory taken from
 * the stream-ordered pool; a new chunk is added when the last is full, so growing never copies symbols
 * and never needs twice the memory. Per-tile-lane ids and lengths are in two arrays (32 entries per tile,
 * unused lanes hold id UINT32_MAX). */
#ifndef TANDEM_SEQ_CUDA_CUH
#define TANDEM_SEQ_CUDA_CUH

#include "cuda/cuda_internal.cuh"
#include "seq/seq_device.h"

#include <stdint.h>

#define TILE 32
#define NO_ID UINT32_MAX

typedef struct {
    uint32_t chunk; /* index into the chunk table */
    uint32_t off;   /* first symbol's position in the chunk (in symbols) */
    uint32_t width; /* patterns in the tile, 1..32 (the interleave stride) */
    uint32_t maxlen;
} seq_tile;

/* Scratch a query reuses, grown on demand. */
typedef struct {
    void *p;
    size_t bytes;
} dbuf;

struct tdm_seq_dstore {
    const tdm_backend *backend;
    int dev, sms;
    cudaStream_t stream;
    /* symbol chunks */
    uint32_t **chunk;        /* host copy of the device pointers */
    uint64_t *chunk_cap;     /* symbols each chunk holds */
    uint64_t used_last;      /* symbols used in the last chunk */
    uint32_t nchunks, cap_chunks;
    uint32_t **d_chunk;      /* device copy of the chunk table */
    uint32_t d_chunk_cap;
    /* tiles and their lanes */
    seq_tile *d_tiles;
    uint32_t *d_ids, *d_lens;
    uint32_t ntiles, cap_tiles;
    uint64_t patterns, symbols, padded_symbols;
    uint32_t max_length;
    /* query scratch */
    dbuf q;                  /* the packed query tables */
    void *h_q;               /* its pinned host twin */
    size_t h_q_bytes;
    void *h_small;           /* pinned: counters and the top-k histogram coming back */
    void *h_rows;            /* pinned: large results land here, then one memcpy into the caller's array */
    size_t h_rows_bytes;
    dbuf out_id, out_sim, alt_id, alt_sim, temp, hits, scr, cnt, hist;
    dbuf cslot, xslot;       /* top-k: per tile lane, the LCS count and the exact difflib count */
    dbuf out_blk, blk;       /* block summaries (tdm_seq_dquery.blocks): per kept row, and packed in order */
    dbuf idx, alt_idx;       /* their row indices through the two sorts */
    uint64_t out_cap;        /* rows out_id/out_sim hold */
    cudaEvent_t ev[6];
};

/* Grows b to at least bytes (contents are not kept). */
int tdm_cuda_dbuf_reserve(struct tdm_seq_dstore *d, dbuf *b, size_t bytes, const char *what);
void tdm_cuda_dbuf_free(struct tdm_seq_dstore *d, dbuf *b);

int tdm_cuda_seq_query(struct tdm_seq_dstore *d, const tdm_seq_dquery *q, tdm_seq_dresult *r);

#endif
