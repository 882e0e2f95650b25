/* kato.h: KATO-compatible knowledge bases and predictions (spec/kato.md sections 1 and 3).
 *
 * A knowledge base (tdm_kato_kb) is the long-term memory of one node: learned patterns (lists of events,
 * an event being a list of symbols), their frequencies, emotives windows and metadata, per-symbol
 * statistics and the global counters KATO's metrics read. Candidate search runs through the sequence
 * engine (tdm_seq_engine: exact prefilters, CPU or GPU), everything else on the CPU.
 *
 * A short-term memory (tdm_kato_stm) is the per-session state: events observed so far, the emotives and
 * metadata accumulators and the time counter, with KATO's auto-learn (CLEAR and ROLLING).
 *
 * tdm_kato_predict computes KATO's predictions for an STM: the single-symbol fast path, per-candidate
 * Ratcliff/Obershelp extraction, every ensemble metric in KATO's order, pruning, ranking and truncation.
 * Doubles are computed with KATO's operation order; where KATO's own order is undefined (set iteration,
 * thread completion) tandem fixes one, listed in docs/kato-compat.md with every other deliberate
 * difference. Ties in every ordering are broken by pattern name ascending.
 *
 * Symbols are byte strings (valid UTF-8, any length, "" allowed) passed as (pointer, length) pairs.
 *
 * Thread safety: a knowledge base may be used from many threads: predictions run together, a learn waits
 * for them (a read-write lock). A tdm_kato_stm belongs to one thread at a time (one session). Results are
 * self-contained: they own copies of every symbol they mention and outlive the knowledge base. */
#ifndef TANDEM_KATO_H
#define TANDEM_KATO_H

#include "tandem/tandem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- pattern names ------------------------------------------------------------------------------------
 * name = sha1(UTF-8 of Python's str() of the list of event lists), lower-case hex (spec 1.3). */
#define TDM_KATO_NAME_LEN 40

/* One event: n symbols (borrowed). */
typedef struct {
    const char *const *syms;
    const size_t *lens;
    size_t n;
} tdm_kato_event;

/* Writes Python's repr of the list of events (str(pattern_data)) into *out (NUL-terminated, tdm_malloc'd,
 * caller frees with tdm_free) and its length into *len. Errors: TDM_E_UTF8 (a symbol that is not valid
 * UTF-8), TDM_E_NOMEM, TDM_E_INVAL (NULL). */
int tdm_kato_repr(const tdm_kato_event *events, size_t nevents, char **out, size_t *len);
/* The pattern name of the events: 40 hex digits and a NUL into name[41]. Errors as tdm_kato_repr. */
int tdm_kato_pattern_name(const tdm_kato_event *events, size_t nevents, char name[TDM_KATO_NAME_LEN + 1]);

/* ---- emotives and metadata -----------------------------------------------------------------------------
 * An emotives dict is a list of (key, value) pairs with distinct keys (KATO: {str: number}); a metadata
 * dict is a list of (key, value) pairs whose values are already the text Python's str() gives for them. */
typedef struct {
    const char *key; /* NUL-terminated UTF-8 */
    double value;
} tdm_kato_emotive;

typedef struct {
    const tdm_kato_emotive *items;
    size_t n;
} tdm_kato_emotives;

typedef struct {
    const char *key;   /* NUL-terminated UTF-8 */
    const char *value; /* NUL-terminated: str(value) */
} tdm_kato_meta;

typedef struct {
    const tdm_kato_meta *items;
    size_t n;
} tdm_kato_metadata;

/* ---- configuration (spec 1.5) -------------------------------------------------------------------------- */
typedef enum { TDM_KATO_STM_CLEAR = 0, TDM_KATO_STM_ROLLING = 1 } tdm_kato_stm_mode;

/* Ranking keys (rank_sort_algo). */
typedef enum {
    TDM_KATO_RANK_POTENTIAL = 0, TDM_KATO_RANK_SIMILARITY, TDM_KATO_RANK_EVIDENCE, TDM_KATO_RANK_CONFIDENCE,
    TDM_KATO_RANK_SNR, TDM_KATO_RANK_FRAGMENTATION, TDM_KATO_RANK_FREQUENCY, TDM_KATO_RANK_NORMALIZED_ENTROPY,
    TDM_KATO_RANK_GLOBAL_NORMALIZED_ENTROPY, TDM_KATO_RANK_ITFDF_SIMILARITY, TDM_KATO_RANK_CONFLUENCE,
    TDM_KATO_RANK_PREDICTIVE_INFORMATION, TDM_KATO_RANK_BAYESIAN_POSTERIOR, TDM_KATO_RANK_BAYESIAN_PRIOR,
    TDM_KATO_RANK_BAYESIAN_LIKELIHOOD, TDM_KATO_RANK_TFIDF_SCORE, TDM_KATO_RANK_WEIGHTED_SIMILARITY,
    TDM_KATO_RANK_WEIGHTED_EVIDENCE, TDM_KATO_RANK_WEIGHTED_CONFIDENCE, TDM_KATO_RANK_WEIGHTED_SNR,
    TDM_KATO_RANK_COUNT
} tdm_kato_rank;

/* The KATO name of a rank key ("potential", "weighted_snr", ...). */
const char *tdm_kato_rank_name(tdm_kato_rank r);
/* Errors: TDM_E_INVAL (unknown name; the message lists the valid ones). */
int tdm_kato_rank_parse(const char *name, tdm_kato_rank *out);

typedef struct {
    double recall_threshold;     /* [0,1], default 0.1 */
    uint32_t max_predictions;    /* 1..10000, default 100 */
    uint32_t max_pattern_length; /* auto-learn when the STM has this many events; 0 = never (default) */
    uint32_t persistence;        /* 1..100 emotives kept per pattern, default 5 */
    tdm_kato_stm_mode stm_mode;  /* default CLEAR */
    int sort_symbols;            /* sort each observed event's symbols (default 1) */
    int use_token_matching;      /* 1 = token LCS similarity (default), 0 = character mode */
    tdm_kato_rank rank_sort_algo;/* default potential */
    const char *affinity_emotive;/* NULL or "" (default: off) or an emotive key: turns the weighted metrics on
                                    (docs/kato-compat.md); borrowed */
} tdm_kato_config;

/* KATO's defaults (above). */
void tdm_kato_config_init(tdm_kato_config *c);
/* Checks every field's range. Errors: TDM_E_RANGE (message names the field and the value). */
int tdm_kato_config_check(const tdm_kato_config *c);

/* ---- knowledge base ------------------------------------------------------------------------------------- */
typedef struct tdm_kato_kb tdm_kato_kb;

/* ctx is borrowed and must outlive the knowledge base. Errors: TDM_E_INVAL, TDM_E_NOMEM, and the sequence
 * engine's errors (tdm_seq_engine_new). The caller owns *out. */
int tdm_kato_kb_new(tdm_ctx *ctx, tdm_kato_kb **out);
void tdm_kato_kb_free(tdm_kato_kb *kb);

/* Learns a pattern from events (spec 1.4). emotives: the accumulator (ndicts dicts, may be 0), of which
 * the last `persistence` are stored (appended to the stored window on a re-learn, then trimmed);
 * metadata: the accumulator (may be 0 dicts), merged per key as sorted sets of unique values.
 * A pattern of fewer than 2 symbols is not stored: *learned = 0 and name = "". Otherwise *learned = 1 and
 * name holds the 40-hex name. name and learned may be NULL.
 * Errors: TDM_E_INVAL (no events: "cannot learn from an empty STM"; NULL arguments; persistence 0 or
 * above 100; an emotive value that is not finite), TDM_E_UTF8, TDM_E_NOMEM, TDM_E_OVERFLOW. Nothing
 * changes on error, with one exception: TDM_E_NOMEM while recording the symbols' affinities comes after
 * the pattern and its counts were stored (the message says so); only that learn's affinity is missing. */
int tdm_kato_kb_learn(tdm_kato_kb *kb, const tdm_kato_event *events, size_t nevents,
                      const tdm_kato_emotives *emotives, size_t nemotives, const tdm_kato_metadata *metadata,
                      size_t nmetadata, uint32_t persistence, char name[TDM_KATO_NAME_LEN + 1], int *learned);

/* Global counters (spec 3.6 step 2). */
typedef struct {
    uint64_t patterns;                  /* distinct patterns (total_unique_patterns) */
    uint64_t total_pattern_frequencies; /* learns of patterns of >= 2 symbols, re-learns included */
    uint64_t total_symbols_in_patterns_frequencies; /* sum of length over those learns */
    uint64_t symbols;                   /* distinct symbols ever learned */
} tdm_kato_kb_totals;
void tdm_kato_kb_totals_get(tdm_kato_kb *kb, tdm_kato_kb_totals *out);

/* Index of the pattern with this 40-hex name (a "PTRN|" prefix is accepted). Errors: TDM_E_NOTFOUND,
 * TDM_E_INVAL (not 40 hex digits). */
int tdm_kato_kb_find(tdm_kato_kb *kb, const char *name, uint32_t *index);

/* A copy of one pattern, for export or display: owned by the caller, released by tdm_kato_pattern_free. */
typedef struct {
    char name[TDM_KATO_NAME_LEN + 1];
    uint64_t frequency;
    size_t nevents, nsyms;
    size_t *event_sizes;   /* nevents */
    char **syms;           /* nsyms NUL-terminated copies, events concatenated */
    size_t *sym_lens;      /* nsyms */
    size_t nemotive_dicts; /* the stored window, oldest first */
    size_t *emotive_sizes; /* entries per dict */
    tdm_kato_emotive *emotives; /* all dicts' entries concatenated; keys owned by this struct */
    size_t nmeta;          /* metadata keys, in first-seen order */
    char **meta_keys;
    size_t *meta_nvalues;  /* values per key, sorted, unique */
    char **meta_values;    /* all keys' values concatenated */
} tdm_kato_pattern;

/* Pattern count and one pattern by index (0 .. count-1, learn order). Errors: TDM_E_RANGE, TDM_E_NOMEM. */
uint32_t tdm_kato_kb_count(tdm_kato_kb *kb);
int tdm_kato_kb_get(tdm_kato_kb *kb, uint32_t index, tdm_kato_pattern *out);
void tdm_kato_pattern_free(tdm_kato_pattern *p);

/* ---- export and import (a durable store saves these and rebuilds the knowledge base from them) ---------
 * Patterns: tdm_kato_kb_get for 0 .. count-1. tdm_kato_kb_import adds one back: its name must be the name of
 * its events (else TDM_E_CORRUPT) and not yet present (else TDM_E_INVAL); its frequency, emotives window and
 * metadata are taken as they are, and the counters that follow from patterns alone (symbol frequencies and
 * member frequencies, the four totals) are rebuilt: importing every exported pattern gives the same totals
 * and statistics as the original. Affinities depend on the accumulators of past learns, so they travel per
 * symbol: tdm_kato_kb_symbol_get exports them, tdm_kato_kb_set_affinity restores one (after the patterns
 * that introduce the symbol). Errors also TDM_E_UTF8, TDM_E_NOMEM. */
int tdm_kato_kb_import(tdm_kato_kb *kb, const tdm_kato_pattern *p);

typedef struct {
    char *sym;            /* NUL-terminated copy (the symbol may itself contain NUL: use len) */
    size_t len;
    uint64_t frequency, pattern_member_frequency;
    size_t naff;          /* affinity sums by emotive key */
    char **aff_keys;
    double *aff_values;
} tdm_kato_symbol;

/* Symbols ever learned (indices 0 .. count-1) and one symbol's statistics by index, owned by the caller
 * (tdm_kato_symbol_free; tdm_kato_kb_symbol_find gives the same by name). Errors: TDM_E_RANGE,
 * TDM_E_NOMEM. */
uint32_t tdm_kato_kb_symbol_count(tdm_kato_kb *kb);
int tdm_kato_kb_symbol_get(tdm_kato_kb *kb, uint32_t index, tdm_kato_symbol *out);
void tdm_kato_symbol_free(tdm_kato_symbol *s);
/* Sets a symbol's affinity sum for an emotive. Errors: TDM_E_NOTFOUND (symbol never learned),
 * TDM_E_INVAL (value not finite), TDM_E_NOMEM. */
int tdm_kato_kb_set_affinity(tdm_kato_kb *kb, const char *sym, size_t len, const char *emotive, double value);

/* Per-symbol statistics: occurrences in learned patterns (frequency, re-learns included), number of
 * distinct patterns containing it (pattern_member_frequency). Errors: TDM_E_NOTFOUND. */
int tdm_kato_kb_symbol_stats(tdm_kato_kb *kb, const char *sym, size_t len, uint64_t *frequency,
                             uint64_t *pattern_member_frequency);
/* The summed affinity of a symbol for an emotive (0 and TDM_OK when never recorded). Errors:
 * TDM_E_NOTFOUND (unknown symbol). */
int tdm_kato_kb_symbol_affinity(tdm_kato_kb *kb, const char *sym, size_t len, const char *emotive, double *out);

/* ---- short-term memory ----------------------------------------------------------------------------------- */
typedef struct tdm_kato_stm tdm_kato_stm;

int tdm_kato_stm_new(tdm_kato_stm **out);
void tdm_kato_stm_free(tdm_kato_stm *s);

/* One observation (spec 1.1, 1.2): the symbols (sorted when cfg->sort_symbols) become a new event unless
 * there are none; non-empty emotives and metadata dicts join the accumulators; time advances. Then, when
 * cfg->max_pattern_length > 0 and the STM holds that many events, the STM is learned into kb (with the
 * accumulators; KATO drops them there, docs/kato-compat.md) and cleared or rolled per cfg->stm_mode.
 * auto_name (may be NULL) receives the learned name, or "" when nothing was learned.
 * Errors: TDM_E_INVAL, TDM_E_RANGE (bad cfg), TDM_E_UTF8, TDM_E_NOMEM, and tdm_kato_kb_learn's errors
 * (the observation itself is kept). */
int tdm_kato_stm_observe(tdm_kato_stm *s, tdm_kato_kb *kb, const tdm_kato_config *cfg, const char *const *syms,
                         const size_t *lens, size_t n, const tdm_kato_emotives *emotives,
                         const tdm_kato_metadata *metadata, char auto_name[TDM_KATO_NAME_LEN + 1]);
/* Learns the STM into kb (with the accumulators) and empties the STM; the accumulators are kept, as in
 * KATO (until tdm_kato_stm_clear). Errors: TDM_E_INVAL for an empty STM, else tdm_kato_kb_learn's. */
int tdm_kato_stm_learn(tdm_kato_stm *s, tdm_kato_kb *kb, uint32_t persistence, char name[TDM_KATO_NAME_LEN + 1],
                       int *learned);
/* Empties the STM and the accumulators, time = 0. */
void tdm_kato_stm_clear(tdm_kato_stm *s);
/* Events and time. The event view is owned by s and valid until the next call that changes s. */
size_t tdm_kato_stm_nevents(const tdm_kato_stm *s);
uint64_t tdm_kato_stm_time(const tdm_kato_stm *s);
int tdm_kato_stm_event(const tdm_kato_stm *s, size_t i, tdm_kato_event *out);

/* ---- predictions ------------------------------------------------------------------------------------------ */

/* A symbol in a result: an index into the result's own symbol table (tdm_kato_result_symbol). */
typedef uint32_t tdm_kato_sym;

/* A list of events inside a result (arrays owned by the result). When flat is set (the single-symbol
 * fast path's past/present/future), the list is one flat list of symbols rather than events: nevents is
 * 1 and the JSON form is ["a", "b"] instead of [["a"], ["b"]]. */
typedef struct {
    const tdm_kato_sym *syms;
    const uint32_t *sizes;
    uint32_t nevents;
    uint32_t nsyms;
    int flat;
} tdm_kato_events;

/* Which optional fields a prediction has. */
enum {
    TDM_KATO_HAS_ENSEMBLE = 1,          /* full path: type, sequence, entropy*, itfdf, confluence, tfidf,
                                           predictive_information, pattern_probability, weighted_strength,
                                           bayesian_* (absent on the single-symbol fast path) */
    TDM_KATO_HAS_PRE_POTENTIAL = 2,     /* pruning ran (more than 3 x max_predictions candidates) */
    TDM_KATO_HAS_WEIGHTED_SIMILARITY = 4, /* else null */
    TDM_KATO_HAS_WEIGHTED = 8           /* weighted_evidence/confidence/snr (else null) */
};

typedef struct {
    char name[TDM_KATO_NAME_LEN + 1];
    uint32_t pattern; /* index in the knowledge base */
    unsigned flags;   /* TDM_KATO_HAS_* */
    uint64_t frequency;
    double similarity, evidence, confidence, snr, fragmentation, potential;
    double confluence, predictive_information, entropy, normalized_entropy, global_normalized_entropy;
    double itfdf_similarity, tfidf_score, pattern_probability, weighted_strength;
    double bayesian_posterior, bayesian_prior, bayesian_likelihood, pre_potential;
    double weighted_similarity, weighted_evidence, weighted_confidence, weighted_snr;
    const tdm_kato_sym *matches; /* flat */
    uint32_t nmatches;
    tdm_kato_events past, present, future, missing, extras;
    tdm_kato_events sequence; /* the pattern's events (KATO: sequence; pattern_data on the fast path) */
    /* emotives = per-key mean over the stored window, keys in first-seen order */
    const uint32_t *emotive_keys; /* indices into the result's symbol table */
    const double *emotive_values;
    uint32_t nemotives;
} tdm_kato_prediction;

/* future_potentials (spec 3.6 step 10), sorted by aggregate_potential descending. */
typedef struct {
    tdm_kato_events future;
    double aggregate_potential, total_weighted_frequency;
    uint32_t supporting_patterns;
} tdm_kato_future_potential;

typedef struct {
    uint64_t candidates; /* patterns that passed the threshold (before pruning) */
    int fast_path;       /* 1 = single-symbol path */
    int pruned;          /* pruning to 3 x max_predictions ran */
    double search_ms, extract_ms, ensemble_ms;
    double blocks_ms;    /* of search_ms: the host's time on the candidates' matching-block summaries (0 when
                            the device computed them with the scores) */
} tdm_kato_predict_stats;

typedef struct tdm_kato_result tdm_kato_result;

/* Predictions for the STM events (spec section 3) under cfg (recall_threshold, max_predictions,
 * use_token_matching, rank_sort_algo, affinity_emotive are used). An STM of no symbol gives no
 * predictions. The caller owns *out (tdm_kato_result_free), also when it holds none.
 * Errors: TDM_E_INVAL (NULL), TDM_E_RANGE (bad cfg), TDM_E_UTF8, TDM_E_NOMEM, the engine's query errors. */
int tdm_kato_predict(tdm_kato_kb *kb, const tdm_kato_event *stm, size_t nevents, const tdm_kato_config *cfg,
                     tdm_kato_result **out);
/* The same for a session's STM. */
int tdm_kato_stm_predict(const tdm_kato_stm *s, tdm_kato_kb *kb, const tdm_kato_config *cfg, tdm_kato_result **out);
void tdm_kato_result_free(tdm_kato_result *r);

size_t tdm_kato_result_count(const tdm_kato_result *r);
/* Prediction i (0 = best); owned by r. NULL when i is out of range. */
const tdm_kato_prediction *tdm_kato_result_get(const tdm_kato_result *r, size_t i);
size_t tdm_kato_result_future_count(const tdm_kato_result *r);
const tdm_kato_future_potential *tdm_kato_result_future(const tdm_kato_result *r, size_t i);
/* The bytes of a symbol of r (owned by r). Symbol 0.. are strings; emotive keys live there too. */
void tdm_kato_result_symbol(const tdm_kato_result *r, tdm_kato_sym s, const char **str, size_t *len);
const tdm_kato_predict_stats *tdm_kato_result_stats(const tdm_kato_result *r);

/* Where tdm_kato_result_write_json sends its text: put appends bytes, str a JSON string literal for a
 * symbol's bytes (valid UTF-8), num a JSON number (or null) for a double; each caller keeps its own target,
 * escaping and number format. */
typedef struct {
    void *user;
    void (*put)(void *user, const char *s, size_t n);
    void (*str)(void *user, const char *s, size_t n);
    void (*num)(void *user, double x);
} tdm_kato_json_sink;

enum {
    TDM_KATO_JSON_LIST = 0, /* [prediction, ...] */
    TDM_KATO_JSON_OPEN = 1  /* {"predictions": [...], "future_potentials": [...] or null  (left open for the
                               caller's own fields and the closing brace) */
};
/* Writes r's predictions as KATO's JSON objects, fields in KATO's order (spec 3.5-3.7). */
void tdm_kato_result_write_json(const tdm_kato_result *r, int form, const tdm_kato_json_sink *s);
/* One list of events of r (past, future, ...) as JSON: [["a", "b"], ["c"]], or ["a", "b"] when flat. */
void tdm_kato_events_write_json(const tdm_kato_result *r, const tdm_kato_events *ev, const tdm_kato_json_sink *s);
/* Python's repr() of a float (shortest round-trip digits, exponent form below 1e-4 and from 1e16; nan,
 * inf), the text KATO keeps for a float metadata value (tdm_kato_meta). out: at least 32 bytes. */
void tdm_kato_py_float(double x, char *out, size_t cap);

/* ---- export and restore (what the durable store, src/store, needs) -------------------------------------
 * A learn changes one pattern, the statistics of that pattern's distinct symbols and the totals; these
 * functions read those pieces out after a learn and put them back into an empty knowledge base at start-up,
 * so that the restored knowledge base answers every query exactly as the one that learned. */

/* A symbol's statistics by name (a tdm_kato_symbol, above, release with tdm_kato_symbol_free): what the
 * store writes after each learn. Errors: TDM_E_NOTFOUND (never learned), TDM_E_INVAL, TDM_E_NOMEM. */
int tdm_kato_kb_symbol_find(tdm_kato_kb *kb, const char *sym, size_t len, tdm_kato_symbol *out);
/* Appends a pattern exactly as exported by tdm_kato_kb_get (name, frequency, events, emotives window,
 * metadata) without touching symbol statistics or totals; restore patterns in index order so that indices
 * match. The name is taken as given (not recomputed from the events: loading stays one pass of copies).
 * Errors: TDM_E_INVAL (bad name or NULL), TDM_E_CORRUPT (the name is already there, fewer than 2 symbols,
 * event sizes that do not add up, frequency 0), TDM_E_UTF8, TDM_E_NOMEM. Nothing changes on error. */
int tdm_kato_kb_restore_pattern(tdm_kato_kb *kb, const tdm_kato_pattern *p);
/* Sets the statistics of symbol s->sym (s->len bytes; it must belong to a restored pattern) from s, which
 * is only read. Errors: TDM_E_NOTFOUND, TDM_E_INVAL, TDM_E_NOMEM. */
int tdm_kato_kb_restore_symbol(tdm_kato_kb *kb, const tdm_kato_symbol *s);
/* Sets the totals (total_pattern_frequencies, total_symbols_in_patterns_frequencies, symbols); patterns
 * must equal the restored count. Errors: TDM_E_CORRUPT. */
int tdm_kato_kb_restore_totals(tdm_kato_kb *kb, const tdm_kato_kb_totals *t);

#ifdef __cplusplus
}
#endif
#endif
