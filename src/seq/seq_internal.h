/* seq_internal.h: layouts shared by the sequence engine's sources; not installed. */
#ifndef TANDEM_SEQ_INTERNAL_H
#define TANDEM_SEQ_INTERNAL_H

#include "core/internal.h"
#include "tandem/seq.h"

struct tdm_seq_vocab {
    char *bytes;       /* all symbol bytes, back to back */
    size_t nbytes, capbytes;
    uint64_t *off;     /* off[id]..off[id+1] are symbol id's bytes; n+1 entries */
    uint64_t *cpoff;   /* the same for code points */
    uint32_t *cps;
    size_t ncps, capcps;
    uint32_t n;        /* ids */
    size_t capoff, capcpoff, caphash;
    uint32_t *table;   /* open addressing: id+1, 0 = empty */
    uint64_t *hash;    /* hash of each id, for growing the table */
    size_t tcap;       /* power of two */
};

/* Ids of one pattern length, ascending. */
typedef struct {
    uint32_t length;
    uint32_t *ids;
    size_t n, cap;
} tdm_seq_lenbucket;

/* Ids of the patterns that contain a symbol (once per pattern), ascending; rep lists a pattern once more
 * for each further occurrence (c - 1 times for c occurrences, ascending, so a pattern's entries are
 * adjacent), which lets the index bound count min(STM count, pattern count) per symbol. */
typedef struct {
    uint32_t *ids, *rep;
    uint32_t n, cap, nrep, caprep;
} tdm_seq_postings;

struct tdm_seq_store {
    tdm_ctx *ctx;
    tdm_seq_vocab *vocab;
    uint32_t *arena;          /* every pattern's symbols, back to back */
    size_t nsym, capsym;
    uint64_t *off;            /* off[id]..off[id+1]; count+1 entries */
    uint32_t count;
    size_t capoff;
    tdm_seq_lenbucket *buckets; /* sorted by length */
    size_t nbuckets, capbuckets;
    uint32_t max_length;
    tdm_seq_postings *post;   /* inverted index, one entry per vocabulary id */
    size_t npost;
};

/* The similarity formulas (spec/kato.md section 2), inline for the query loops; seq.h's functions call
 * these. Each is monotone non-decreasing in the common-element count, which makes every bound exact. */
/* KATO's scores before the final /100 (RapidFuzz's 0-100 scale): the threshold test checks this too. */
static inline double tdm_seq_pct_lcs(size_t lcs, size_t na, size_t nb) {
    size_t t = na + nb;
    return t ? (2.0 * (double)lcs / (double)t) * 100.0 : 0.0;
}
static inline double tdm_seq_pct_char(size_t lcs, size_t na, size_t nb) {
    size_t t = na + nb;
    return t ? (1.0 - (double)(t - 2 * lcs) / (double)t) * 100.0 : 100.0;
}
static inline double tdm_seq_ratio_lcs(size_t lcs, size_t na, size_t nb) {
    return na + nb ? tdm_seq_pct_lcs(lcs, na, nb) / 100.0 : 0.0;
}
static inline double tdm_seq_ratio_char(size_t lcs, size_t na, size_t nb) {
    return na + nb ? tdm_seq_pct_char(lcs, na, nb) / 100.0 : 1.0;
}
static inline double tdm_seq_ratio_difflib(size_t matches, size_t na, size_t nb) {
    size_t t = na + nb;
    return t ? 2.0 * (double)matches / (double)t : 1.0;
}

/* Adds a pattern whose symbols were already checked. */
int tdm_seq_store_append_checked(tdm_seq_store *s, const uint32_t *syms, size_t n, uint32_t *id);

/* A set of distinct values (symbol ids or code points) with per-value slots, looked up fast: a bitmap
 * rejects most absent values with one load before the hash table is probed. */
typedef struct {
    uint64_t bitmap[1024];  /* 65536 bits */
    uint32_t *keys;         /* table of values, paired with slots */
    uint32_t *slots;        /* slot+1 per table entry, 0 = empty */
    uint32_t mask;          /* table size - 1 */
    uint32_t nslots;        /* distinct values */
} tdm_seq_valset;

/* skip_unknown: leave TDM_SEQ_UNKNOWN out (an STM's unknown symbols match nothing stored). */
int tdm_seq_valset_build(tdm_seq_valset *vs, const uint32_t *vals, size_t n, int skip_unknown);
void tdm_seq_valset_clear(tdm_seq_valset *vs);
static inline uint32_t tdm_seq_valset_hash(uint32_t v) { return (uint32_t)((v * 0x9E3779B97F4A7C15ull) >> 32); }
/* Slot of v (0-based) or -1 when v is not in the set. */
static inline int64_t tdm_seq_valset_find(const tdm_seq_valset *vs, uint32_t v) {
    uint32_t h = tdm_seq_valset_hash(v);
    if (!(vs->bitmap[(h >> 6) & 1023] & (1ull << (h & 63)))) return -1;
    for (uint32_t p = h & vs->mask;; p = (p + 1) & vs->mask) {
        if (!vs->slots[p]) return -1;
        if (vs->keys[p] == v) return (int64_t)vs->slots[p] - 1;
    }
}

/* Bit-parallel LCS against a fixed sequence q: per-slot match masks of W words. */
typedef struct {
    tdm_seq_valset set;
    uint64_t *masks;   /* nslots * words */
    uint32_t *count;   /* occurrences of each slot's value in q (multiset bound) */
    size_t words, len; /* len = |q| (unknown values included) */
} tdm_seq_lcsq;

int tdm_seq_lcsq_build(tdm_seq_lcsq *q, const uint32_t *vals, size_t n, int skip_unknown);
void tdm_seq_lcsq_clear(tdm_seq_lcsq *q);
/* LCS length of q and the text given as its slots (values absent from q omitted: they never match). V is
 * scratch of q->words entries. */
size_t tdm_seq_lcsq_run(const tdm_seq_lcsq *q, const uint32_t *slots, size_t n, uint64_t *V);
/* The bits of a one-word query of m symbols (m <= 64). */
static inline uint64_t tdm_seq_live_bits(size_t m) { return m >= 64 ? ~0ull : (1ull << m) - 1; }
/* The LCS a one-word bit vector v holds over the query's live bits: its zero bits, counted with a popcount
 * that needs no library call on the baseline x86-64 target. */
static inline size_t tdm_seq_lcs_of(uint64_t v, uint64_t live) {
    uint64_t x = ~v & live;
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (size_t)((x * 0x0101010101010101ull) >> 56);
}
/* One step of the bit-parallel LCS of a one-word query: v (all ones at the start) after a text symbol
 * whose positions in the query are the bits of match. */
static inline uint64_t tdm_seq_lcs_step(uint64_t v, uint64_t match) {
    uint64_t u = v & match;
    return (v + u) | (v - u);
}
/* tdm_seq_lcsq_run for q of one word (|q| <= 64), inline for the query loop. */
static inline size_t tdm_seq_lcsq_word(const tdm_seq_lcsq *q, const uint32_t *slots, size_t n) {
    const uint64_t *masks = q->masks;
    uint64_t v = ~0ull;
    for (size_t k = 0; k < n; k++) v = tdm_seq_lcs_step(v, masks[slots[k]]);
    return tdm_seq_lcs_of(v, tdm_seq_live_bits(q->len));
}

/* The character metric's view of symbols: the code points of the symbols joined by single spaces. ids
 * must be vocabulary ids. _length counts them; _write stores them into out (room for _length) and
 * returns the count (vocab.c). */
size_t tdm_seq_joined_length(const tdm_seq_vocab *v, const uint32_t *ids, size_t n);
size_t tdm_seq_joined_write(const tdm_seq_vocab *v, const uint32_t *ids, size_t n, uint32_t *out);

/* tdm_seq_query on the CPU over the patterns with lo <= id < hi (the engine's tiers); stats.patterns is
 * hi - lo. Errors as tdm_seq_query, plus TDM_E_RANGE for a range outside the store. */
int tdm_seq_query_range(const tdm_seq_store *s, const tdm_seq_stm *stm, const tdm_seq_query_opts *o, uint32_t lo,
                        uint32_t hi, tdm_seq_result *out);
/* Validates a query's arguments as tdm_seq_query does (status and message). */
int tdm_seq_query_check(const tdm_seq_store *s, const tdm_seq_stm *stm, const tdm_seq_query_opts *o);
/* A threshold query's need table (query.c): need[n] = the fewest common elements (LCS length or difflib
 * matched count) with which a pattern of length n passes, UINT32_MAX where none passes, for every n up to
 * the store's longest pattern (*n_need = max length + 1). m is the STM's length. -1: no memory. */
int tdm_seq_need_table(const tdm_seq_store *s, size_t m, const tdm_seq_query_opts *o, uint32_t **need, size_t *n_need);

/* difflib's matched count (the sum of get_matching_blocks' sizes) for |b| <= 64 with no junk, what
 * tdm_seq_matcher_blocks computes, without the blocks (difflib.c). The rows of a that occur in b are
 * listed in ascending order: pos[e] is the row (the position in a, of na) and rows[e] the bit set of the
 * positions in b (of nb) holding a[pos[e]]; ne entries. cap is an upper bound of the count known to the
 * caller (the LCS length, or SIZE_MAX): the search stops when the count reaches it. */
size_t tdm_seq_difflib_count_rows(const uint32_t *pos, const uint64_t *rows, size_t ne, size_t na, size_t nb, size_t cap);
/* The same count when the rows hold no run of two (1, *count set; then no LCS is needed), else 0. */
int tdm_seq_difflib_chain(const uint32_t *pos, const uint64_t *rows, size_t ne, size_t *count);
/* The count by the block search alone (what count_rows falls back to after the chain). */
size_t tdm_seq_difflib_count_search(const uint32_t *pos, const uint64_t *rows, size_t ne, size_t na, size_t nb, size_t cap);
/* The matching-block summary (seq.h, tdm_seq_hit_blocks) of a (na elements) against b (nb <= 64, so no
 * junk: autojunk needs 200) from the same row list: what tdm_seq_matcher_summary gives (difflib.c). */
void tdm_seq_rows_summary(const uint32_t *pos, const uint64_t *rows, size_t ne, const uint32_t *a, size_t na, size_t nb,
                          tdm_seq_hit_blocks *out);

/* One row of difflib's chain (tdm_seq_difflib_chain): whether it takes a bit (its lowest one in *above),
 * and then only the bits above that one stay in *above. Branch-free. */
static inline int tdm_seq_chain_take(uint64_t row, uint64_t *above) {
    uint64_t m = row & *above, rest = m ^ (0 - m); /* rest: the bits above m's lowest one (0 when m is 0) */
    *above = m ? rest : *above;                    /* a conditional move: the chain's latency is 4 steps */
    return m != 0;
}

/* First position of an ascending id list holding an id >= x. */
static inline size_t tdm_seq_lower_bound(const uint32_t *ids, size_t n, uint32_t x) {
    size_t a = 0, b = n;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (ids[mid] < x) a = mid + 1;
        else b = mid;
    }
    return a;
}

/* The inverted index's count bound for a threshold query (query_index.c). A walk plan lists the STM's
 * distinct symbols whose postings are walked (sym, with their STM counts cnt), cf = the STM count of the
 * frequent symbols assumed present instead, and cost = the postings walked. usable is 0 when some
 * length needs no common element (then the index cannot exclude anything). */
typedef struct {
    uint32_t *sym, *cnt;
    size_t n;
    uint64_t cf, cost;
    uint16_t *tneed; /* per length: the fewest walked counts that may pass (256: none) */
    int usable;
} tdm_seq_walk;
/* Plans the walk for need table need[0..n_need) (tdm_seq_need_table). Status; release with _clear. */
int tdm_seq_walk_plan(const tdm_seq_store *s, const tdm_seq_stm *q, const uint32_t *need, size_t n_need, tdm_seq_walk *w);
void tdm_seq_walk_clear(tdm_seq_walk *w);
/* The ids of the whole store that may pass, ascending, in *cand (caller frees, tdm_free): for walks over
 * few postings. Status. */
int tdm_seq_walk_candidates(const tdm_seq_store *s, const tdm_seq_walk *w, uint32_t **cand, size_t *ncand);
/* The ids among lo..lo+n-1 that may pass, ascending, into out (room for n); u (n bytes) receives each
 * id's walked count (u[id - lo], 255 = 255 or more). Returns how many. */
size_t tdm_seq_walk_block(const tdm_seq_store *s, const tdm_seq_walk *w, uint32_t lo, uint32_t n, uint8_t *u, uint32_t *out);

/* The LCS of a one-word query (|q| <= 64) against many patterns at once (lcs_groups.c): map8 maps a
 * vocabulary id to its slot + 1 in the query (0 = absent), mask1[s] is the match mask of slot s - 1
 * (mask1[0] = 0, 256 entries), live the query's bits. */
typedef struct {
    const uint32_t *arena;
    const uint64_t *off;
    const uint8_t *map8;
    const uint64_t *mask1;
    uint64_t live;
} tdm_seq_lcs_many_in;
#define TDM_SEQ_GROUP_MAX 64 /* longest pattern length grouped; longer ones go one by one */
/* Scratch of tdm_seq_lcs_many, grown as needed: zero it before the first call, free with _free. */
typedef struct {
    uint32_t *ord, *row;
    uint8_t *buf;
    size_t cap_ord, cap_row, cap_buf;
} tdm_seq_lcs_many_scratch;
/* cnt[i] = the LCS of the query and pattern ids[i], for i < n (ids in any order). Returns 0, or -1
 * without memory. */
int tdm_seq_lcs_many(const tdm_seq_lcs_many_in *in, const uint32_t *ids, size_t n, uint8_t *cnt, tdm_seq_lcs_many_scratch *sc);
void tdm_seq_lcs_many_free(tdm_seq_lcs_many_scratch *sc);

/* lcs threshold queries stms[0..n) (options checked, each fitting the lanes: tdm_seq_lanes_fit) answered
 * together in groups of 16 or 32 lanes over the whole store (query_lanes.c); *out[i] answers stms[i]
 * exactly as tdm_seq_query would (its statistics describe the lanes' work). Status; on error the caller
 * clears every out[i]. */
#define TDM_SEQ_LANES_TABLE 16384 /* most (length, LCS) pairs a lane tabulates */
int tdm_seq_lanes_fit(const tdm_seq_store *s, size_t m);
int tdm_seq_query_lanes(const tdm_seq_store *s, const tdm_seq_stm *const *stms, size_t n, const tdm_seq_query_opts *o,
                        tdm_seq_result *const *out);
/* The LCS of one pattern, as k union slots, in every lane of a group (lanes_kernels.c): masks holds 128
 * bytes a slot (wide: sixteen 64-bit masks; narrow: 32 of 32 bits), live one word a lane (the STM's
 * bits), need one byte a lane (255: the lane cannot pass). Writes each lane's LCS into lcs (16 or 32) and
 * returns the mask of the lanes whose LCS reaches their need. */
typedef uint32_t tdm_seq_lanes_fn(const void *restrict masks, const uint32_t *restrict slots, size_t k,
                                  const void *restrict live, const uint8_t *restrict need, uint32_t *restrict lcs);
/* The fastest kernel this CPU runs, wide or narrow. */
tdm_seq_lanes_fn *tdm_seq_lanes_kernel(int narrow);
/* Nonzero: tdm_seq_lanes_kernel and tdm_seq_lcs_many use their portable code even on a CPU that runs
 * their AVX-512 vector-popcount code (for tests that hold both to the same answers). */
extern int tdm_seq_portable_kernels;
/* Whether this CPU runs that AVX-512 code (the features of TDM_SEQ_AVX512_TARGET) and it is not turned
 * off. */
int tdm_seq_vector_kernels(void);
/* TDM_SEQ_AVX512: that code is compiled (GCC on x86-64; elsewhere only the portable code), each function
 * of it marked TDM_SEQ_AVX512_TARGET, the features tdm_seq_vector_kernels checks. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TDM_SEQ_AVX512 1
#define TDM_SEQ_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vpopcntdq")))
#else
#define TDM_SEQ_AVX512 0
#endif

/* The metric's similarity for every pattern length n < n_need and common count c <= m (STM length m):
 * t[n * (m + 1) + c] (query.c). Owned by the caller (tdm_free); NULL without memory. */
double *tdm_seq_sim_table(tdm_seq_metric metric, size_t m, size_t n_need);

/* Such a table of e entries ranked (hits.c): rank[i] is the rank of sim[i] among the table's distinct
 * values in descending order (bitwise-equal values share a rank), rankval[r] the value of rank r, *nrank
 * their count. Placing hits rank by rank, ids ascending within a rank, gives tdm_seq_hits_sort's order
 * without a sort. Owned by the caller (tdm_free both). Returns 0, or -1 without memory (nothing
 * allocated). */
int tdm_seq_rank_table(const double *sim, size_t e, uint32_t **rank, double **rankval, uint32_t *nrank);
/* A hit kept by its similarity's rank, before placement. */
typedef struct {
    uint32_t id, rank;
} tdm_seq_rank_hit;

/* Room for a result of `rows` hits in out->hits (query.c): with reuse (tdm_seq_query_opts.reuse), out's
 * own arrays when out->cap holds them, else fresh ones (out's old arrays freed); without, fresh ones and
 * out is not read first. out->blocks is then NULL, or (reused) an array of out->cap rows; out->n is the
 * caller's to set. Returns 0, or -1 without memory (out->hits NULL). */
int tdm_seq_result_room(tdm_seq_result *out, int reuse, size_t rows);
/* Frees out->blocks (a reused result's, when the query wants none). */
void tdm_seq_result_drop_blocks(tdm_seq_result *out);
/* Whether a threshold answers many patterns (query.c; need table of n_need lengths, STM length m): the
 * lanes, the ranked placement and the device's ranked rows pay a fixed cost only such queries repay. */
int tdm_seq_answers_many(const uint32_t *need, size_t n_need, size_t m);

/* Sorts hits by similarity descending, then id ascending (hits.c). */
void tdm_seq_hits_sort(tdm_seq_hit *h, size_t n);

/* The matching-block summaries of hits[0..n) (pattern ids of s) against stm with the given autojunk, into
 * blocks[0..n) (hit_blocks.c), over up to `threads` threads (0: the context's). Status. */
int tdm_seq_hits_blocks(const tdm_seq_store *s, const tdm_seq_stm *stm, int autojunk, const tdm_seq_hit *hits, size_t n,
                        int threads, tdm_seq_hit_blocks *blocks);
/* Gives r (a finished query's result over s) its summaries: r->blocks filled (allocated with r->cap rows
 * unless a reused result brought one), the time added to r->stats.blocks_ms. Status. */
int tdm_seq_result_add_blocks(const tdm_seq_store *s, const tdm_seq_stm *stm, const tdm_seq_query_opts *o,
                              tdm_seq_result *r);

#endif
