/* seq.h: the sequence engine. A vocabulary of symbols, an append-only pattern store with a length index,
 * the three similarity measures KATO uses (token LCS, Ratcliff/Obershelp as CPython's difflib, and
 * character LCS), exact prefilters, and threshold / top-k queries of one STM against the store.
 *
 * Exactness: every similarity is the same IEEE double as its reference (spec/kato.md section 2):
 *   lcs      r = (2.0*L/T)*100.0, sim = r/100.0 (0.0 when T = 0)          L = LCS length, T = |a|+|b|
 *   difflib  2.0*M/T with M the summed sizes of difflib's matching blocks (1.0 when T = 0)
 *   char     r = (1.0 - (A+B-2*Lc)/(A+B))*100.0, sim = r/100.0 (1.0 when A+B = 0), over the code points
 *            of the space-joined symbols
 * A threshold test is inclusive. For lcs and char KATO's two checks are reproduced: r >= thr*100-1e-6 and
 * sim >= thr; for difflib ratio >= thr.
 *
 * Thread safety: a store may be queried from many threads at once; adding patterns must not overlap any
 * other use of the same store. Vocabularies follow the store that owns them. */
#ifndef TANDEM_SEQ_H
#define TANDEM_SEQ_H

#include "tandem/tandem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Symbol id of an STM symbol that the vocabulary has never seen: it never matches a stored symbol. */
#define TDM_SEQ_UNKNOWN UINT32_MAX

/* ---- vocabulary: symbol strings <-> dense ids 0,1,2,... in first-seen order, stable once assigned ---- */
typedef struct tdm_seq_vocab tdm_seq_vocab;

int tdm_seq_vocab_new(tdm_seq_vocab **out);
void tdm_seq_vocab_free(tdm_seq_vocab *v);
/* Id of the symbol s[0..len) (any valid UTF-8, NUL bytes and the empty string included), adding it if new.
 * s is borrowed (copied). Errors: TDM_E_UTF8 (message gives the byte offset), TDM_E_NOMEM,
 * TDM_E_OVERFLOW (more than 2^32-2 symbols). */
int tdm_seq_vocab_intern(tdm_seq_vocab *v, const char *s, size_t len, uint32_t *id);
/* Id of an existing symbol; never grows the vocabulary. Errors: TDM_E_NOTFOUND. */
int tdm_seq_vocab_find(const tdm_seq_vocab *v, const char *s, size_t len, uint32_t *id);
/* Bytes of symbol id (not NUL-terminated; owned by v, valid while v lives). Errors: TDM_E_RANGE. */
int tdm_seq_vocab_get(const tdm_seq_vocab *v, uint32_t id, const char **s, size_t *len);
/* Unicode code points of symbol id (owned by v, valid while v lives). Errors: TDM_E_RANGE. */
int tdm_seq_vocab_codepoints(const tdm_seq_vocab *v, uint32_t id, const uint32_t **cps, size_t *n);
uint32_t tdm_seq_vocab_size(const tdm_seq_vocab *v);

/* Checks that s[0..len) is well-formed UTF-8 (no overlongs, surrogates or values above U+10FFFF).
 * Returns TDM_OK or TDM_E_UTF8 with the byte offset in the message. */
int tdm_seq_utf8_check(const char *s, size_t len);
/* Decodes valid UTF-8 into code points; out must hold len entries. Returns the count written. */
size_t tdm_seq_utf8_decode(const char *s, size_t len, uint32_t *out);

/* ---- pattern store ----------------------------------------------------------------------------------
 * Append-only. Pattern ids are dense (0, 1, 2, ... in insertion order). Symbols live in one contiguous
 * arena addressed by 64-bit offsets; patterns have any length >= 0 (no cap but memory). A length index
 * lists the ids of each length in ascending order. The store owns its vocabulary. */
typedef struct tdm_seq_store tdm_seq_store;

/* ctx is borrowed and must outlive the store (threads, logging). */
int tdm_seq_store_new(tdm_ctx *ctx, tdm_seq_store **out);
void tdm_seq_store_free(tdm_seq_store *s);
/* The store's vocabulary (owned by the store). Interning new symbols does not change stored patterns. */
tdm_seq_vocab *tdm_seq_store_vocab(tdm_seq_store *s);
const tdm_seq_vocab *tdm_seq_store_vocab_const(const tdm_seq_store *s);
/* Appends a pattern of n vocabulary ids (syms borrowed, copied); *id receives its id (may be NULL).
 * Errors: TDM_E_RANGE (a symbol that is not a vocabulary id; message gives its position),
 * TDM_E_NOMEM, TDM_E_OVERFLOW. Nothing is added on error. */
int tdm_seq_store_add(tdm_seq_store *s, const uint32_t *syms, size_t n, uint32_t *id);
/* Appends a pattern given as strings (interned into the vocabulary). Errors as above plus TDM_E_UTF8;
 * a failed call may have interned some of the symbols but adds no pattern. */
int tdm_seq_store_add_strings(tdm_seq_store *s, const char *const *syms, const size_t *lens, size_t n,
                              uint32_t *id);
uint32_t tdm_seq_store_count(const tdm_seq_store *s);
uint64_t tdm_seq_store_total_symbols(const tdm_seq_store *s);
uint32_t tdm_seq_store_max_length(const tdm_seq_store *s);
/* Symbols of pattern id (owned by the store; valid until the next add). Errors: TDM_E_RANGE. */
int tdm_seq_store_get(const tdm_seq_store *s, uint32_t id, const uint32_t **syms, size_t *n);
/* Ids of all patterns of exactly this length, ascending (owned by the store; valid until the next add).
 * A length with no pattern gives n = 0. */
void tdm_seq_store_by_length(const tdm_seq_store *s, uint32_t length, const uint32_t **ids, size_t *n);
/* Gives back spare capacity kept for appends (after a bulk load, say); appends still work afterwards.
 * Never fails: an array that cannot be shrunk is kept as it is. Loading a store does this itself. */
void tdm_seq_store_shrink(tdm_seq_store *s);
/* Host bytes held by the store: arena, offsets, length index, inverted index and vocabulary. */
uint64_t tdm_seq_store_bytes(const tdm_seq_store *s);

/* Writes the store (vocabulary included) to path atomically (temporary file + rename). File format:
 * a versioned header, the sections, and an XXH64 checksum over everything before it (docs/seq.md).
 * Errors: TDM_E_IO (message names the path and errno text). */
int tdm_seq_store_save(const tdm_seq_store *s, const char *path);
/* Reads a store written by tdm_seq_store_save. The whole file is validated (magic, version, section
 * sizes against the file size, checksum, every symbol a vocabulary id, vocabulary UTF-8 and uniqueness)
 * before anything is returned: a bad file is never half-loaded. Errors: TDM_E_IO, TDM_E_CORRUPT (message
 * says what is wrong), TDM_E_VERSION, TDM_E_NOMEM. The caller owns *out. */
int tdm_seq_store_load(tdm_ctx *ctx, const char *path, tdm_seq_store **out);

/* ---- an encoded STM (query) -------------------------------------------------------------------------- */
typedef struct {
    uint32_t *ids; /* vocabulary ids, TDM_SEQ_UNKNOWN for symbols the vocabulary lacks; owned */
    size_t n;
    uint32_t *cps; /* code points of the space-joined symbols (for the char metric); owned */
    size_t ncp;
} tdm_seq_stm;

/* Encodes n symbols (borrowed) against v without growing it. Errors: TDM_E_UTF8, TDM_E_NOMEM. On success
 * the caller owns *out's arrays and releases them with tdm_seq_stm_clear. */
int tdm_seq_stm_encode(const tdm_seq_vocab *v, const char *const *syms, const size_t *lens, size_t n,
                       tdm_seq_stm *out);
/* Encodes a sequence of vocabulary ids (copied). Errors: TDM_E_RANGE, TDM_E_NOMEM. */
int tdm_seq_stm_from_ids(const tdm_seq_vocab *v, const uint32_t *ids, size_t n, tdm_seq_stm *out);
void tdm_seq_stm_clear(tdm_seq_stm *stm);

/* ---- similarity ------------------------------------------------------------------------------------- */
typedef enum { TDM_SEQ_LCS = 0, TDM_SEQ_DIFFLIB = 1, TDM_SEQ_CHAR = 2 } tdm_seq_metric;
/* "lcs", "difflib", "char"; parse returns TDM_E_INVAL for other names. */
const char *tdm_seq_metric_name(tdm_seq_metric m);
int tdm_seq_metric_parse(const char *name, tdm_seq_metric *out);

/* Length of the longest common subsequence of a and b, by the bit-parallel algorithm (64 symbols of a per
 * machine word, any length). Works on any uint32 values (symbol ids or code points). Errors:
 * TDM_E_NOMEM (for a longer than 64 the bit vectors are allocated). */
int tdm_seq_lcs_length(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, size_t *len);
/* KATO's token similarity from an LCS length: ((2.0*L/T)*100.0)/100.0, 0.0 when T = 0. */
double tdm_seq_lcs_ratio(size_t lcs, size_t na, size_t nb);
/* KATO's character similarity from a code-point LCS length (1.0 when both are empty). */
double tdm_seq_char_ratio(size_t lcs, size_t na, size_t nb);
/* difflib's ratio: 2.0*M/T, 1.0 when T = 0. */
double tdm_seq_difflib_ratio(size_t matches, size_t na, size_t nb);

/* One matching block: a[i..i+n) == b[j..j+n). */
typedef struct {
    uint32_t i, j, n;
} tdm_seq_block;

/* A difflib SequenceMatcher with isjunk None: set b once (its index is kept, as CPython's set_seq2), then
 * match many a against it. Not thread-safe; use one matcher per thread. */
typedef struct tdm_seq_matcher tdm_seq_matcher;
int tdm_seq_matcher_new(tdm_seq_matcher **out);
void tdm_seq_matcher_free(tdm_seq_matcher *m);
/* Sets seq2 (copied). autojunk = 1 applies CPython's popular-element heuristic (|b| >= 200: elements seen
 * more than 1 + |b|/100 times are dropped from the index); 0 reproduces KATO's extractor. Errors:
 * TDM_E_NOMEM, TDM_E_OVERFLOW (|b| >= 2^32). */
int tdm_seq_matcher_set_b(tdm_seq_matcher *m, const uint32_t *b, size_t nb, int autojunk);
/* Matching blocks of (a, b) exactly as difflib.SequenceMatcher(None, a, b, autojunk).
 * get_matching_blocks(), without the final sentinel. *blocks is owned by m and valid until the next call
 * on m; *matches (may be NULL) receives the summed sizes. a is borrowed. Errors: TDM_E_NOMEM,
 * TDM_E_OVERFLOW. */
int tdm_seq_matcher_blocks(tdm_seq_matcher *m, const uint32_t *a, size_t na, const tdm_seq_block **blocks,
                           size_t *nblocks, size_t *matches);

/* Character-mode LCS between two symbol sequences of one vocabulary (space-joined code points). */
int tdm_seq_char_lcs(const tdm_seq_vocab *v, const uint32_t *a, size_t na, const uint32_t *b, size_t nb,
                     size_t *lcs, size_t *len_a, size_t *len_b);

/* ---- queries ---------------------------------------------------------------------------------------- */
typedef struct {
    tdm_seq_metric metric;
    int autojunk;       /* difflib only: CPython's default heuristic (1) or KATO's extractor (0) */
    int stm_first;      /* difflib only: 0 = SequenceMatcher(pattern, stm) as KATO; 1 = (stm, pattern) */
    double threshold;   /* used when top_k = 0: every pattern with similarity >= threshold */
    uint32_t top_k;     /* > 0: the k best (ties at the boundary broken by id), threshold ignored */
    int no_prefilter;   /* 1 = score every pattern (tests compare this with the filtered path) */
    int threads;        /* 0 = the context's TANDEM_THREADS */
    int blocks;         /* 1 = also return each hit's matching-block summary (tdm_seq_hit_blocks, below) in
                           tdm_seq_result.blocks; any metric, top-k included */
    int reuse;          /* 1 = each result passed in holds an earlier answer (or zeroes) whose arrays the
                           query writes into when they have room (tdm_seq_result.cap), growing them
                           otherwise; 0 = results are overwritten unread. A caller that keeps its results
                           between queries saves the first touch of fresh memory, the larger part of
                           returning millions of hits (docs/seq.md, "Keeping results") */
} tdm_seq_query_opts;

/* Defaults: lcs, autojunk 0, stm_first 0, threshold 0.1, top_k 0, prefilters on, threads 0, blocks 0,
 * reuse 0. */
void tdm_seq_query_opts_init(tdm_seq_query_opts *o);

typedef struct {
    uint32_t id;
    double similarity;
} tdm_seq_hit;

/* What a hit's Ratcliff/Obershelp matching blocks look like, for callers that need a few figures of them
 * (KATO's pruning key) without running the matcher again: the blocks of
 * difflib.SequenceMatcher(None, pattern, stm, autojunk).get_matching_blocks() without the sentinel, with
 * the pattern as a and the STM as b whatever the query's metric and stm_first, autojunk the query's. An
 * unknown STM symbol (TDM_SEQ_UNKNOWN) matches nothing, as a symbol no pattern holds would. With no block
 * every field is 0. (With isjunk None, CPython never finds two adjacent blocks to merge: each block found
 * is already extended over every equal neighbour inside its range; nblocks counts the blocks after
 * get_matching_blocks' merge all the same.) */
typedef struct {
    uint32_t matched;  /* summed block sizes (difflib's M) */
    uint32_t nblocks;  /* blocks */
    uint32_t a_first;  /* the first block's i (position in the pattern) ... */
    uint32_t b_first;  /* ... and j (position in the STM) */
    uint32_t a_end;    /* the last block's i + n */
    uint32_t a_repeat; /* how far back the pattern last held its symbol at a_first before it: a_first - t for
                          the largest t < a_first with pattern[t] == pattern[a_first]; 0 when none (KATO's
                          past/present fix-up asks whether that symbol occurs in the event before a_first) */
} tdm_seq_hit_blocks;

/* The summary of blocks bl[0..nb) (get_matching_blocks' order, without the sentinel; total = their summed
 * sizes) of a against some b, as tdm_seq_matcher_blocks returns them. Never fails. */
void tdm_seq_blocks_summary(const tdm_seq_block *bl, size_t nb, size_t total, const uint32_t *a, tdm_seq_hit_blocks *out);
/* The summary of the matching blocks of (a, m's b), as tdm_seq_matcher_blocks computes them (with the
 * autojunk given to tdm_seq_matcher_set_b). Errors as tdm_seq_matcher_blocks, plus TDM_E_INVAL (NULL). */
int tdm_seq_matcher_summary(tdm_seq_matcher *m, const uint32_t *a, size_t na, tdm_seq_hit_blocks *out);

/* What a query did. Prefilters are exact: a pattern is removed only if it cannot reach the threshold. */
typedef struct {
    uint64_t patterns;        /* patterns in the store */
    uint64_t length_pruned;   /* removed by the length bound (whole length ranges skipped) */
    uint64_t index_pruned;    /* never visited: the count bound applied through the inverted index (the
                                 STM counts of the symbols a pattern contains, checked against the
                                 count its length needs; docs/seq.md) */
    uint64_t multiset_pruned; /* removed by the symbol-multiset overlap bound */
    uint64_t lcs_pruned;      /* difflib only: removed by the LCS bound (RO <= LCS) */
    uint64_t scored;          /* patterns whose exact similarity was computed */
    uint64_t returned;        /* hits returned */
    double filter_ms, score_ms, select_ms; /* wall time split */
    double copy_ms;           /* device queries: result rows to the host (0 on the CPU) */
    uint64_t device_patterns; /* engine queries: patterns searched on the device tier */
    uint64_t recent_patterns; /* engine queries: patterns searched on the host: the recent tier, or every
                                 pattern when the CPU answers alone (device_patterns then 0) */
    double blocks_ms;         /* opts.blocks: host time spent on the block summaries (0 where the device
                                 computed them with the scores) */
    const char *backend;      /* where it ran ("cpu", "cuda:0"; owned by the context) */
    int route_reason;         /* why (a tdm_route_reason of backend.h) */
} tdm_seq_query_stats;

/* Results of one query: hits in deterministic order (similarity descending, then id ascending). */
typedef struct {
    tdm_seq_hit *hits; /* owned by the caller, release with tdm_free (or tdm_seq_result_clear) */
    size_t n;
    tdm_seq_hit_blocks *blocks; /* opts.blocks: blocks[i] summarises hits[i] (n entries); NULL otherwise.
                                   Owned by the caller like hits (tdm_free, or tdm_seq_result_clear) */
    tdm_seq_query_stats stats;
    size_t cap; /* rows hits has room for (and blocks, when not NULL): what opts.reuse may fill */
} tdm_seq_result;
/* Frees the arrays and zeroes r (a zeroed result is a valid empty one for opts.reuse). Accepts NULL. */
void tdm_seq_result_clear(tdm_seq_result *r);

/* Runs one query on the CPU over the whole store. stm is borrowed. (A bare store lives on the host only;
 * the GPU searches the stores of a tdm_seq_engine, below.) Errors: TDM_E_INVAL (bad options: threshold
 * outside [0,1] or NaN, unknown metric), TDM_E_RANGE (an STM id outside the vocabulary), TDM_E_NOMEM.
 * On success the caller owns out->hits. */
int tdm_seq_query(const tdm_seq_store *s, const tdm_seq_stm *stm, const tdm_seq_query_opts *opts,
                  tdm_seq_result *out);
/* Runs n queries with the same options, spreading them over the threads; out[i] answers stms[i] exactly
 * as tdm_seq_query would (the same hits in the same order, bit for bit). Low-threshold lcs queries are
 * answered sixteen at a time in one pass over the store (docs/seq.md, "lanes"); their statistics then
 * describe that pass (index_pruned 0, the union bound under multiset_pruned, the group's times shared
 * out). On error every out[i] is cleared. */
int tdm_seq_query_batch(const tdm_seq_store *s, const tdm_seq_stm *stms, size_t n,
                        const tdm_seq_query_opts *opts, tdm_seq_result *out);

/* ---- the dual-tier engine ----------------------------------------------------------------------------
 * KATO's planned GPU design, made exact and safe. The engine owns a store; on a machine with a CUDA
 * backend (and TANDEM_SEQ_BACKEND not cpu) the store's patterns are copied to device memory, the device
 * tier. A pattern learned afterwards goes to the host store at once (the recent tier: ids from the device
 * tier's extent up) and is visible to the very next query; a sync moves the recent tier to the device
 * in one large transfer. A query searches the device tier on the GPU and the recent tier on the CPU and
 * merges the two (they hold disjoint id ranges), giving exactly what tdm_seq_query gives on the whole
 * store. Nothing is lost when the device is full: patterns stay in the recent tier and the statistics
 * say so. After a device error every query runs on the CPU (same results), which logs and stats report.
 *
 * Sync triggers (KATO's four): the recent tier reaching sync_threshold patterns (checked at each learn),
 * a background thread every sync_interval_s seconds (syncs when the count is reached, or when the
 * interval has passed with anything pending), a manual tdm_seq_engine_sync, and leaving training mode.
 * Training mode holds the automatic triggers back.
 *
 * Thread safety: every engine function may be called from any thread at any time (queries run together;
 * a learn waits for running queries to finish reading; a sync copies the recent tier without blocking
 * learns or CPU queries for longer than a memcpy). */
typedef struct tdm_seq_engine tdm_seq_engine;

typedef struct {
    uint32_t sync_threshold;   /* recent-tier size that triggers a sync; 0 = never by count */
    double sync_interval_s;    /* period of the background sync thread; 0 = no thread */
    uint64_t gpu_min_patterns; /* auto placement: the device tier is used from this many patterns up */
} tdm_seq_engine_opts;

/* From the context's configuration: TANDEM_SEQ_SYNC_THRESHOLD (default 1000), TANDEM_SEQ_SYNC_INTERVAL
 * (seconds, default 300) and TANDEM_SEQ_GPU_MIN (default in docs/configuration.md, measured). */
void tdm_seq_engine_opts_init(const tdm_ctx *ctx, tdm_seq_engine_opts *o);

/* Makes an engine that takes over store (freed with the engine, also when this call fails). With a
 * usable CUDA backend and TANDEM_SEQ_BACKEND auto or cuda the existing patterns are moved to the device
 * now, in large transfers; what does not fit stays in the recent tier. o may be NULL (the defaults).
 * Errors: TDM_E_INVAL (store or out NULL, sync_interval_s negative, NaN or above 1e9), TDM_E_NOMEM,
 * TDM_E_UNSUPPORTED (TANDEM_SEQ_BACKEND=cuda with TANDEM_STRICT and no usable device), and with those two
 * settings the device's own error (TDM_E_DEVICE, ...) when its store cannot be made or loaded (otherwise
 * a failing device is logged and the engine runs on the CPU). */
int tdm_seq_engine_new(tdm_seq_store *store, const tdm_seq_engine_opts *o, tdm_seq_engine **out);
/* Stops the background thread and frees everything, the store included. Accepts NULL. */
void tdm_seq_engine_free(tdm_seq_engine *e);
/* The engine's store, for reading (names, lengths, saving) while no learn runs. */
const tdm_seq_store *tdm_seq_engine_store(const tdm_seq_engine *e);

/* tdm_seq_stm_encode against the engine's vocabulary, safe against concurrent learns. */
int tdm_seq_engine_encode(tdm_seq_engine *e, const char *const *syms, const size_t *lens, size_t n, tdm_seq_stm *out);
/* Learns a pattern (tdm_seq_store_add / _add_strings): visible to every query that starts after the call
 * returns. May start a sync (threshold trigger): in the background thread when there is one, else in
 * this call. Errors as tdm_seq_store_add. */
int tdm_seq_engine_learn(tdm_seq_engine *e, const uint32_t *syms, size_t n, uint32_t *id);
int tdm_seq_engine_learn_strings(tdm_seq_engine *e, const char *const *syms, const size_t *lens, size_t n, uint32_t *id);

/* Same contract and results as tdm_seq_query / tdm_seq_query_batch over every pattern learned so far;
 * out->stats says where each tier ran. */
int tdm_seq_engine_query(tdm_seq_engine *e, const tdm_seq_stm *stm, const tdm_seq_query_opts *opts, tdm_seq_result *out);
int tdm_seq_engine_query_batch(tdm_seq_engine *e, const tdm_seq_stm *stms, size_t n, const tdm_seq_query_opts *opts,
                               tdm_seq_result *out);

/* Manual sync: moves the recent tier to the device. TDM_OK also when there is no device, the device is
 * full or fails (the patterns stay in the recent tier; stats say why). Errors: TDM_E_NOMEM. */
int tdm_seq_engine_sync(tdm_seq_engine *e);
/* Training mode: on = 1 holds automatic syncs back; on = 0 leaves it, and with sync = 1 syncs what is
 * pending (the end-of-training trigger). Errors: as tdm_seq_engine_sync when it syncs. */
int tdm_seq_engine_training(tdm_seq_engine *e, int on, int sync);

typedef enum {
    TDM_SEQ_SYNC_COUNT = 0, /* the recent tier reached sync_threshold */
    TDM_SEQ_SYNC_INTERVAL,  /* the background thread's timer */
    TDM_SEQ_SYNC_MANUAL,    /* tdm_seq_engine_sync */
    TDM_SEQ_SYNC_TRAINING,  /* leaving training mode */
    TDM_SEQ_SYNC_TRIGGERS
} tdm_seq_sync_trigger;

typedef struct {
    uint64_t patterns;               /* in the engine */
    uint64_t device_patterns;        /* device tier */
    uint64_t recent_patterns;        /* host-side recent tier (patterns - device_patterns) */
    uint64_t device_bytes;           /* device memory used by the device tier */
    uint64_t device_reserved_bytes;  /* device memory taken from the pool for it */
    uint64_t syncs[TDM_SEQ_SYNC_TRIGGERS]; /* syncs run, by trigger */
    uint64_t synced_patterns;        /* patterns moved by all syncs (the initial load included) */
    double sync_ms;                  /* time spent in syncs, total */
    double last_sync_ms;
    uint64_t queries_device;         /* queries that searched the device tier */
    uint64_t queries_cpu;            /* queries answered on the CPU alone */
    uint64_t fallbacks;              /* queries the CPU answered after a device error or out of device memory */
    uint64_t evictions;              /* device tiers dropped under device memory pressure (the host store
                                        stays; the next interval/manual/training sync uploads again) */
    int device_full;                 /* the last sync stopped because the device was full */
    int device_failed;               /* a device error turned the device tier off */
    int training;                    /* training mode is on */
    const char *device;              /* "cuda:0", or NULL without a device tier */
} tdm_seq_engine_stats;
void tdm_seq_engine_stats_get(tdm_seq_engine *e, tdm_seq_engine_stats *st);

/* ---- the shared data generator (tests and benchmarks) -----------------------------------------------
 * Seeded and platform-independent: symbols Zipf-distributed (exponent `zipf_s`) over `vocab` ranks,
 * pattern lengths from a truncated geometric distribution on [min_len, max_len] with the given mean. */
typedef struct {
    uint64_t seed;
    uint32_t vocab;   /* default 50000 */
    double zipf_s;    /* default 1.0 */
    uint32_t min_len; /* default 2 */
    uint32_t max_len; /* default 60 */
    double mean_len;  /* default 20 */
} tdm_seq_gen_opts;
void tdm_seq_gen_opts_init(tdm_seq_gen_opts *o);

typedef struct tdm_seq_gen tdm_seq_gen;
/* Errors: TDM_E_INVAL (vocab 0, min_len > max_len, max_len = 2^32-1, mean outside [min_len, max_len],
 * zipf_s outside [0, 10]), TDM_E_NOMEM. */
int tdm_seq_gen_new(const tdm_seq_gen_opts *o, tdm_seq_gen **out);
void tdm_seq_gen_free(tdm_seq_gen *g);
/* Next pattern: writes its length to *n and its symbol ranks (0 = most frequent) to syms, which must
 * hold max_len entries. */
void tdm_seq_gen_next(tdm_seq_gen *g, uint32_t *syms, size_t *n);
/* One symbol rank drawn from the Zipf distribution. */
uint32_t tdm_seq_gen_symbol(tdm_seq_gen *g);
/* Uniform integer in [0, bound) from the generator's stream (bound > 0). */
uint64_t tdm_seq_gen_uniform(tdm_seq_gen *g, uint64_t bound);
/* The generator's name for a rank: "s<rank>" into buf (at least 16 bytes); returns its length. */
size_t tdm_seq_gen_symbol_name(uint32_t rank, char *buf);

#ifdef __cplusplus
}
#endif
#endif
