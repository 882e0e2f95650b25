/* kato_internal.h: the knowledge base's layout and helpers shared by src/kato's sources; not installed. */
#ifndef TANDEM_KATO_INTERNAL_H
#define TANDEM_KATO_INTERNAL_H

#include <pthread.h>
#include <string.h>

#include "core/internal.h"
#include "tandem/kato.h"
#include "tandem/seq.h"

/* One metadata key of a pattern: its sorted, unique values. */
typedef struct {
    char *key;
    char **vals;
    uint32_t n;
} kato_meta_key;

/* What the knowledge base keeps per pattern beside its symbols (which live in the sequence engine's
 * store under the same index). */
typedef struct {
    /* first, what a prediction's pruning pass reads for every candidate: one cache line, not two */
    uint64_t name_key;       /* the first 16 hex digits as a number: same order as the names */
    uint32_t *event_sizes;
    uint32_t nevents;
    uint32_t length;         /* symbols (the store's length of the pattern, kept here beside the sizes) */
    char name[TDM_KATO_NAME_LEN + 1];
    uint64_t frequency;
    /* emotives window: ndicts dicts, dict d has dsize[d] entries; keys are indices into kb->emokeys */
    uint32_t ndicts;
    uint32_t *dsize;
    uint32_t *ekeys;
    double *evals;
    uint32_t nmeta;
    kato_meta_key *meta;
} kato_pat;

/* A symbol's affinity sums, one per emotive key seen with it. */
typedef struct {
    uint32_t *keys;
    double *sums;
    uint32_t n;
} kato_aff;

struct tdm_kato_kb {
    tdm_ctx *ctx;
    pthread_rwlock_t lock;   /* learns write, predictions read */
    tdm_seq_engine *engine;  /* owns the store: pattern i's flat symbols are store pattern i */
    kato_pat *pats;
    size_t npats, cappats;
    uint32_t *first;         /* per pattern: its first symbol (first event non-empty), else UINT32_MAX; the
                                single-symbol fast path scans this contiguous array */
    size_t capfirst;
    uint32_t *name_table;    /* open addressing on the name's first 16 hex digits: index+1, 0 = empty */
    size_t name_cap;         /* power of two */
    /* per vocabulary id */
    uint64_t *freq, *pmf;
    kato_aff *aff;
    size_t capsym;
    char **emokeys;          /* emotive keys ever seen */
    uint32_t nemokeys;
    size_t capemokeys;
    uint64_t tpf, tspf, nsym;
};

/* SHA-1 of data as 40 lower-case hex digits (name.c). */
int tdm_kato_sha1_hex(const void *data, size_t len, char hex[TDM_KATO_NAME_LEN + 1]);
/* Index of a known emotive key, or UINT32_MAX. Read lock held. */
uint32_t kato_emokey_find(const tdm_kato_kb *kb, const char *key);
/* Orders two patterns by name (strcmp order), cheaply. */
static inline int kato_name_cmp(const tdm_kato_kb *kb, uint32_t a, uint32_t b) {
    uint64_t x = kb->pats[a].name_key, y = kb->pats[b].name_key;
    if (x != y) return x < y ? -1 : 1;
    return strcmp(kb->pats[a].name, kb->pats[b].name);
}
/* Pattern index by name, or UINT32_MAX. Lock held. */
uint32_t kato_name_lookup(const tdm_kato_kb *kb, const char *hex40);

/* Python's float(sum(v)/len(v)) per key over a list of dicts (average_emotives), keys in first-seen order.
 * keys/vals of the ndicts dicts are flattened with dsize; out arrays hold at least the total entries.
 * Returns the number of keys. */
uint32_t kato_average_emotives(uint32_t ndicts, const uint32_t *dsize, const uint32_t *keys, const double *vals,
                               uint32_t *out_keys, double *out_vals);

/* Makes room for count names in the name table (-1 without memory), and inserts hex40 -> index into
 * that room. Write lock held. (kb.c; used by kb_persist.c) */
int kato_reserve_pattern(tdm_kato_kb *kb);
void kato_commit_pattern(tdm_kato_kb *kb, kato_pat *rec);
int kato_copy_affinity(const tdm_kato_kb *kb, uint32_t id, char ***keys, double **sums, size_t *n);
/* Fills *out (tdm_kato_symbol_free) with vocabulary id's name and statistics; the caller holds the lock.
 * Status (TDM_E_NOMEM; *out is then empty). */
int kato_symbol_export(const tdm_kato_kb *kb, uint32_t id, tdm_kato_symbol *out);
/* Index of an emotive key, added when new; -1 without memory. Write lock held. */
int kato_emokey_intern(tdm_kato_kb *kb, const char *key, uint32_t *out);

#endif
