/* predict_internal.h: the working state of one prediction call, shared by predict.c (STM encoding, the
 * fast path, candidate extraction), ensemble.c (ensemble metrics, pruning, ranking) and result.c (the
 * self-contained result). Symbols are "work ids": vocabulary ids, and for STM symbols the vocabulary
 * lacks, vocab_n + k (one id per distinct unknown string), so equal strings always have equal ids. */
#ifndef TANDEM_KATO_PREDICT_INTERNAL_H
#define TANDEM_KATO_PREDICT_INTERNAL_H

#include "kato/kato_internal.h"

/* One candidate pattern and everything computed for it. Event ranges index the pattern's events:
 * past = [0, pb), present = [pb, pe), future = [pe, nevents). */
typedef struct {
    uint32_t pid;
    const uint32_t *P; /* flat pattern (the store's) */
    uint32_t np;
    double sim;
    uint32_t *matches, nm; /* in kato_pred.match_arena */
    uint32_t pb, pe;
    uint32_t nblocks;
    uint32_t extras_flat;
    double evidence, confidence, snr, frag, potential, pre_potential;
    double weighted_similarity, weighted_evidence, weighted_confidence, weighted_snr;
    double itfdf, confluence, entropy, nentropy, gnentropy, tfidf;
    double pattern_probability, weighted_strength, pi, prior, likelihood, posterior;
    int has_wsim, has_weighted;
    uint32_t group; /* future group, UINT32_MAX without a future */
} kato_cand;

typedef struct {
    tdm_kato_kb *kb;                   /* read-locked for the whole call */
    const tdm_kato_config *cfg;
    const tdm_seq_store *store;
    const tdm_seq_vocab *vocab;
    uint32_t vocab_n;
    /* the STM */
    uint32_t *S, ns;                    /* flat work ids */
    uint32_t *stm_sizes, nstm;          /* event sizes */
    const char **unk, *const *stm_syms; /* unknown strings by (id - vocab_n); the STM's strings */
    size_t *unk_len;
    uint32_t nunk;
    /* affinity */
    int affinity;
    uint32_t aff_key;
    /* candidates; their matches live in one arena (a candidate has at most min(|P|, |S|) matches) */
    uint32_t *match_arena;
    kato_cand *c;
    size_t nc;
    int pruned, fast;
    /* futures groups (ensemble.c) */
    uint32_t *group_first;              /* first candidate of each group, in order of appearance */
    double *group_w;
    uint32_t *group_count;
    uint32_t *group_pid, *group_pe;      /* pattern and future start of each group's first candidate */
    uint32_t ngroups;
} kato_pred;

/* Tests only (0 otherwise): 1 makes the full path's pruning pass run the matcher itself, as before the
 * engine's queries returned block summaries, so that a test can compare the two paths' predictions. Set
 * it only while no prediction runs. */
extern int kato_prune_matcher;

/* Bytes of a work id. */
void kato_sym_bytes(const kato_pred *p, uint32_t id, const char **s, size_t *len);
/* w(t) of the weighted metrics (spec 3.4 step 6). */
double kato_weight(const kato_pred *p, uint32_t id);
/* Event range of pattern pid (event e starts at *off). */
const uint32_t *kato_event_sizes(const kato_pred *p, uint32_t pid, uint32_t *nevents);

/* Sorts p->c by pattern name (the ensemble order KATO leaves to set iteration). */
void kato_sort_by_name(kato_pred *p);
/* ensemble.c: pruning, ensemble metrics, potential, ranking and truncation of p->c (full path).
 * Errors: TDM_E_NOMEM. */
int kato_ensemble(kato_pred *p);
/* Sorts by the rank key (descending), ties by name, and keeps max_predictions. Errors: TDM_E_NOMEM. */
int kato_rank(kato_pred *p, tdm_kato_rank key);

/* result.c: builds the self-contained result from p (which keeps ownership of its state). */
int kato_result_build(const kato_pred *p, const tdm_kato_predict_stats *st, tdm_kato_result **out);

#endif
