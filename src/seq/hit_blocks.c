/* hit_blocks.c: the matching-block summaries of a query's hits on the CPU (tdm_seq_query_opts.blocks).
 * A caller such as KATO's predictor needs a few figures of difflib's blocks for every hit (seq.h,
 * tdm_seq_hit_blocks) and would otherwise run the matcher over the hits itself; the query computes them
 * where the hits are known, so that a device can compute them with its scores instead (src/cuda) and the
 * CPU tiers here. One matcher per thread holds the STM as b (set once), every hit's pattern is a; an STM
 * of at most 64 symbols instead maps each pattern's symbols through a table indexed by vocabulary id
 * (branch-free, as the query's own scan does) onto the rows of the bit-parallel matcher. */
#include "seq/seq_internal.h"

#include <omp.h>

/* Below this many hits per thread a parallel region costs more than it saves (one summary takes about a
 * microsecond for KATO's short STMs). */
#define HITS_PER_THREAD 2048

/* Many hits are visited in pattern order: (id, hit) pairs sorted by id (LSD radix, 11-bit digits, as
 * many as the largest id uses) turn the reads of the store's offsets and symbols into forward streams,
 * where similarity order made each one a cache miss; the summaries are written back at the hits' places.
 * Returns the order (caller frees), or NULL without memory (then the hits' own order serves). */
#define ORDER_MIN 4096
static uint64_t *id_order(const tdm_seq_hit *hits, size_t n) {
    uint64_t *a = tdm_malloc(n * sizeof *a), *b = tdm_malloc(n * sizeof *b);
    if (!a || !b) {
        tdm_free(a), tdm_free(b);
        return NULL;
    }
    uint32_t maxid = 0;
    for (size_t h = 0; h < n; h++) {
        a[h] = (uint64_t)hits[h].id << 32 | h;
        maxid = hits[h].id > maxid ? hits[h].id : maxid;
    }
    enum { BITS = 11, DIGITS = 1 << BITS };
    for (unsigned shift = 32; shift < 64 && (maxid >> (shift - 32)); shift += BITS) {
        size_t count[DIGITS + 1] = {0};
        for (size_t h = 0; h < n; h++) count[((a[h] >> shift) & (DIGITS - 1)) + 1]++;
        for (int d = 0; d < DIGITS; d++) count[d + 1] += count[d];
        for (size_t h = 0; h < n; h++) b[count[(a[h] >> shift) & (DIGITS - 1)]++] = a[h];
        uint64_t *t = a;
        a = b, b = t;
    }
    tdm_free(b);
    return a;
}

/* STMs of at most 64 symbols: slot[v] = 1 + the slot of vocabulary id v in the STM (0: absent), rows[slot]
 * = the STM positions holding it (rows[0] = 0). The table costs a byte per vocabulary id, so it is made
 * only when the hits outnumber a thousandth of the vocabulary. */
typedef struct {
    uint8_t *slot;
    uint32_t nvocab;
    uint64_t rows[65];
} row_map;

static int row_map_make(const tdm_seq_store *s, const tdm_seq_stm *stm, size_t nhits, row_map *rm) {
    rm->slot = NULL;
    uint32_t V = tdm_seq_vocab_size(s->vocab);
    if (stm->n > 64 || !V || nhits < V / 1000) return 0;
    if (!(rm->slot = tdm_calloc(V, 1))) return 0; /* no room: the matchers serve */
    rm->nvocab = V;
    rm->rows[0] = 0;
    uint32_t nslots = 0;
    for (size_t j = 0; j < stm->n; j++) {
        uint32_t v = stm->ids[j];
        if (v >= V) continue; /* unknown: never matches */
        if (!rm->slot[v]) rm->slot[v] = (uint8_t)++nslots, rm->rows[nslots] = 0;
        rm->rows[rm->slot[v]] |= 1ull << j;
    }
    return 1;
}

/* One hit's summary through the row map; pos and rows have room for the pattern's length. */
static void row_summary(const row_map *rm, const tdm_seq_stm *stm, const uint32_t *P, size_t np, uint32_t *restrict pos,
                        uint64_t *restrict rows, tdm_seq_hit_blocks *out) {
    size_t k = 0;
    for (size_t t = 0; t < np; t++) {
        uint32_t v = P[t], sl = v < rm->nvocab ? rm->slot[v] : 0;
        pos[k] = (uint32_t)t, rows[k] = rm->rows[sl];
        k += sl != 0;
    }
    tdm_seq_rows_summary(pos, rows, k, P, np, stm->n, out);
}

int tdm_seq_hits_blocks(const tdm_seq_store *s, const tdm_seq_stm *stm, int autojunk, const tdm_seq_hit *hits, size_t n,
                        int threads, tdm_seq_hit_blocks *blocks) {
    if (!n) return TDM_OK;
    row_map rm;
    int rowed = row_map_make(s, stm, n, &rm);
    size_t useful = n / HITS_PER_THREAD + 1;
    if (threads < 1) threads = tdm_ctx_threads(s->ctx);
    if ((size_t)threads > useful) threads = (int)useful;
    uint64_t *order = n >= ORDER_MIN ? id_order(hits, n) : NULL;
    int err = TDM_OK;
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        tdm_seq_matcher *m = NULL;
        /* the row map's scratch: room for the store's longest pattern, which no hit exceeds */
        uint32_t *pos = rowed ? tdm_malloc(((size_t)s->max_length + 1) * sizeof *pos) : NULL;
        uint64_t *rows = rowed ? tdm_malloc(((size_t)s->max_length + 1) * sizeof *rows) : NULL;
        int lrc = TDM_OK;
        if (rowed && (!pos || !rows)) lrc = tdm_error(TDM_E_NOMEM, "tdm_seq_query: no memory for a pattern of %u symbols", s->max_length);
        else if (!rowed && !(lrc = tdm_seq_matcher_new(&m))) lrc = tdm_seq_matcher_set_b(m, stm->ids, stm->n, autojunk);
#pragma omp for schedule(dynamic, 256)
        for (size_t k = 0; k < n; k++) {
            if (lrc) continue;
            size_t h = order ? (size_t)(uint32_t)order[k] : k;
            uint32_t id = order ? (uint32_t)(order[k] >> 32) : hits[k].id;
            if (!order) { /* similarity order scatters the patterns: fetch offsets 16 hits ahead, symbols 8 */
                if (k + 16 < n) __builtin_prefetch(&s->off[hits[k + 16].id]);
                if (k + 8 < n) __builtin_prefetch(s->arena + s->off[hits[k + 8].id]);
            }
            const uint32_t *P = s->arena + s->off[id];
            size_t np = (size_t)(s->off[id + 1] - s->off[id]);
            if (rowed) row_summary(&rm, stm, P, np, pos, rows, &blocks[h]);
            else lrc = tdm_seq_matcher_summary(m, P, np, &blocks[h]);
        }
        tdm_seq_matcher_free(m);
        tdm_free(pos), tdm_free(rows);
        if (lrc) {
#pragma omp critical(tdm_seq_hit_blocks_err)
            if (!err) err = lrc;
        }
    }
    tdm_free(order);
    if (rowed) tdm_free(rm.slot);
    if (err) return tdm_error(err, "tdm_seq_query: matching-block summaries failed: %s", tdm_strerror(err));
    return TDM_OK;
}

int tdm_seq_result_add_blocks(const tdm_seq_store *s, const tdm_seq_stm *stm, const tdm_seq_query_opts *o,
                              tdm_seq_result *r) {
    double t0 = tdm_now_ms();
    /* a reused result's array has cap rows (every query path sets cap >= n) */
    if (!r->blocks && !(r->blocks = tdm_malloc((r->cap ? r->cap : 1) * sizeof *r->blocks)))
        return tdm_error(TDM_E_NOMEM, "tdm_seq_query: no memory for %zu block summaries", r->n);
    int rc = tdm_seq_hits_blocks(s, stm, o->autojunk, r->hits, r->n, o->threads, r->blocks);
    if (rc) return rc;
    r->stats.blocks_ms += tdm_now_ms() - t0;
    return TDM_OK;
}
