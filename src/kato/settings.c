/* settings.c: KATO's configuration defaults and ranges (spec/kato.md 1.5) and the rank_sort_algo names.
 * These are per-session values a caller passes with each call, not TANDEM_* environment variables. */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t and clock_gettime under -std=c11 */
#include "kato/kato_internal.h"

#include <math.h>
#include <string.h>

static const char *const rank_names[TDM_KATO_RANK_COUNT] = {
    "potential", "similarity", "evidence", "confidence", "snr", "fragmentation", "frequency",
    "normalized_entropy", "global_normalized_entropy", "itfdf_similarity", "confluence",
    "predictive_information", "bayesian_posterior", "bayesian_prior", "bayesian_likelihood", "tfidf_score",
    "weighted_similarity", "weighted_evidence", "weighted_confidence", "weighted_snr"};

const char *tdm_kato_rank_name(tdm_kato_rank r) {
    return (unsigned)r < TDM_KATO_RANK_COUNT ? rank_names[r] : "unknown";
}

int tdm_kato_rank_parse(const char *name, tdm_kato_rank *out) {
    if (!name || !out) return tdm_error(TDM_E_INVAL, "tdm_kato_rank_parse: NULL argument");
    for (int i = 0; i < TDM_KATO_RANK_COUNT; i++)
        if (!strcmp(name, rank_names[i])) return *out = (tdm_kato_rank)i, TDM_OK;
    return tdm_error(TDM_E_INVAL, "rank_sort_algo \"%.60s\": expected one of potential, similarity, evidence, "
                     "confidence, snr, fragmentation, frequency, normalized_entropy, global_normalized_entropy, "
                     "itfdf_similarity, confluence, predictive_information, bayesian_posterior, bayesian_prior, "
                     "bayesian_likelihood, tfidf_score, weighted_similarity, weighted_evidence, "
                     "weighted_confidence, weighted_snr", name);
}

void tdm_kato_config_init(tdm_kato_config *c) {
    memset(c, 0, sizeof *c);
    c->recall_threshold = 0.1;
    c->max_predictions = 100;
    c->max_pattern_length = 0;
    c->persistence = 5;
    c->stm_mode = TDM_KATO_STM_CLEAR;
    c->sort_symbols = 1;
    c->use_token_matching = 1;
    c->rank_sort_algo = TDM_KATO_RANK_POTENTIAL;
    c->affinity_emotive = NULL;
}

int tdm_kato_config_check(const tdm_kato_config *c) {
    if (!c) return tdm_error(TDM_E_INVAL, "KATO configuration is NULL");
    if (!(c->recall_threshold >= 0.0 && c->recall_threshold <= 1.0))
        return tdm_error(TDM_E_RANGE, "recall_threshold=%g: expected a number in [0, 1]", c->recall_threshold);
    if (c->max_predictions < 1 || c->max_predictions > 10000)
        return tdm_error(TDM_E_RANGE, "max_predictions=%u: expected 1..10000", c->max_predictions);
    if (c->persistence < 1 || c->persistence > 100)
        return tdm_error(TDM_E_RANGE, "persistence=%u: expected 1..100", c->persistence);
    if (c->stm_mode != TDM_KATO_STM_CLEAR && c->stm_mode != TDM_KATO_STM_ROLLING)
        return tdm_error(TDM_E_RANGE, "stm_mode=%d: expected CLEAR (0) or ROLLING (1)", (int)c->stm_mode);
    if ((unsigned)c->rank_sort_algo >= TDM_KATO_RANK_COUNT)
        return tdm_error(TDM_E_RANGE, "rank_sort_algo=%d: not a rank key", (int)c->rank_sort_algo);
    return TDM_OK;
}
