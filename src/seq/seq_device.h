/* seq_device.h: the contract between the dual-tier sequence engine (src/seq/engine.c) and a backend that
 * keeps patterns in its own memory (the CUDA module, src/cuda/seq_*.cu). Plain C with no tandem calls, so
 * the dlopen'd module can implement it: the core prepares everything that needs the vocabulary or the
 * similarity formulas' thresholds (the need table) and the device does the per-pattern work.
 *
 * Exactness: a device query returns the same hits (ids, similarity bits, order) as the CPU engine's
 * tdm_seq_query over the patterns with id < limit. */
#ifndef TANDEM_SEQ_DEVICE_H
#define TANDEM_SEQ_DEVICE_H

#include "tandem/backend.h"
#include "tandem/seq.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A store of patterns in device memory (opaque; owned by the module). */
typedef struct tdm_seq_dstore tdm_seq_dstore;

typedef struct {
    uint64_t patterns;       /* patterns held */
    uint64_t symbols;        /* their symbols (padding excluded) */
    uint64_t bytes;          /* device bytes in use: symbols, padding and per-pattern metadata */
    uint64_t reserved_bytes; /* device bytes taken from the pool (chunks not yet full included) */
} tdm_seq_dstore_info;

/* One query, prepared by the core. */
typedef struct {
    int metric;             /* TDM_SEQ_LCS or TDM_SEQ_DIFFLIB (char stays on the CPU) */
    int autojunk;           /* difflib: CPython's popular-element purge on seq2 */
    int stm_first;          /* difflib: 0 = SequenceMatcher(pattern, stm), 1 = (stm, pattern) */
    const uint32_t *stm;    /* the STM's ids, TDM_SEQ_UNKNOWN for unknown symbols (borrowed) */
    size_t m;               /* its length */
    uint32_t limit;         /* only patterns with id < limit take part (the device tier's extent) */
    uint32_t top_k;         /* > 0: the k best, ties by id; the need table is then unused */
    /* Threshold mode: need[n] is the fewest common elements (LCS length, or difflib's matched count) a
     * pattern of length n must have to pass; UINT32_MAX: no pattern of that length passes. Lengths
     * >= n_need pass never. Both metrics are monotone in that count, so count >= need[n] is exactly
     * KATO's acceptance test (src/seq/query.c builds the table). */
    const uint32_t *need;
    size_t n_need;
    int no_prefilter;       /* 1: score every pattern (no length or LCS bound skips work) */
    /* difflib top-k: run the exact matching blocks first for about top_k_pool x k patterns of the best
     * LCS bounds (0: the backend's default); widening when too few is the backend's job. Tests set 1 to
     * make the widening happen often. */
    uint32_t top_k_pool;
    /* 1: also return each hit's matching-block summary (seq.h, tdm_seq_hit_blocks: pattern as a, the STM
     * as b, this query's autojunk, whatever the metric and stm_first). A device may leave
     * tdm_seq_dresult.blocks NULL, and the engine computes them on the host. */
    int blocks;
    /* Ranked threshold query (NULL otherwise; never with top_k or blocks): rank[n * (m + 1) + c] is the
     * rank, among the distinct similarities of the core's table for this query (0 = the highest; equal
     * doubles share a rank), of a pattern of length n < n_need with common count c <= m; nrank ranks.
     * The device may then return its rows by rank (tdm_seq_dresult.ids) and the core writes the
     * similarities from its own table: only ids and per-rank counts cross the bus. */
    const uint32_t *rank;
    uint32_t nrank;
} tdm_seq_dquery;

typedef struct {
    tdm_seq_hit *hits;      /* similarity descending, then id ascending; from the host's malloc */
    size_t n;
    tdm_seq_hit_blocks *blocks; /* q->blocks: blocks[i] summarises hits[i] (host malloc, n entries, at least
                                   one allocated); NULL when not asked for or left to the host */
    uint64_t length_pruned; /* skipped by the length bound */
    uint64_t lcs_pruned;    /* difflib: skipped by the LCS bound */
    uint64_t scored;        /* exact similarity computed */
    double filter_ms;       /* preparing and uploading the query */
    double score_ms;        /* the scoring kernels */
    double select_ms;       /* threshold / top-k selection and ordering on the device */
    double copy_ms;         /* result rows to the host */
    /* Rows by rank (q->rank given and the device chose it; hits and blocks NULL): ids[i] is row i's
     * pattern id, and rows rank_start[r] .. rank_start[r+1]-1 have the similarity of rank r (nrank + 1
     * entries, rank_start[nrank] == n); ids ascending within a rank. Both borrowed from the device store
     * until the next call on it. */
    const uint32_t *ids;
    const uint64_t *rank_start;
} tdm_seq_dresult;

typedef struct tdm_seq_dev_ops {
    /* A new, empty store on backend b. Errors: TDM_E_NOMEM, TDM_E_DEVICE. */
    int (*store_new)(const tdm_backend *b, tdm_seq_dstore **out);
    void (*store_free)(tdm_seq_dstore *d); /* accepts NULL */
    /* Appends patterns first_id .. first_id+n-1, which must continue the store (first_id == patterns
     * held); pattern k's symbols are syms[off[k]-off[0] .. off[k+1]-off[0]). Host arrays are borrowed. All
     * or nothing: on error (TDM_E_DEVICE_OOM when the device is full, TDM_E_DEVICE, TDM_E_NOMEM,
     * TDM_E_INVAL) the store is unchanged. Not safe together with any other call on d. */
    int (*store_append)(tdm_seq_dstore *d, const uint32_t *syms, const uint64_t *off, uint32_t first_id, uint32_t n);
    void (*store_info)(const tdm_seq_dstore *d, tdm_seq_dstore_info *info);
    /* Runs q over the patterns with id < q->limit. On success r->hits and r->blocks belong to the caller
     * (host free), or the rows come by rank (r->ids, borrowed).
     * Errors: TDM_E_DEVICE_OOM, TDM_E_DEVICE, TDM_E_NOMEM, TDM_E_INVAL. Not safe together with any other
     * call on d. */
    int (*query)(tdm_seq_dstore *d, const tdm_seq_dquery *q, tdm_seq_dresult *r);
} tdm_seq_dev_ops;

#ifdef __cplusplus
}
#endif
#endif
