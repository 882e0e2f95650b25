/* test_kato_predict.c: predictions (src/kato/predict.c, ensemble.c, result.c) on the examples the spec
 * works by hand (spec/kato.md 2.5 E1, 3.2 golden, 3.5 fix-up) and on small cases whose every metric is
 * derived here from the spec's formulas step by step, plus thresholds, ranking, truncation, pruning,
 * ties by name and bad input. The seeded random comparison with a Python transcription of the spec is
 * tests/oracle/test_kato_oracle.py. */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t under -std=c11 (kato/predict_internal.h) */
#include "kato_util.h"

#include <math.h>

#include "kato/predict_internal.h" /* kato_prune_matcher */

TU_CTX2_GROUP

static tdm_kato_kb *new_kb(void) {
    tdm_kato_kb *kb;
    assert_int_equal(tdm_kato_kb_new(ctx, &kb), TDM_OK);
    return kb;
}

/* spec 2.5 E1: the full KATO prediction of [[A],[B],[C]] for the STM [[B],[D],[C],[A]] at threshold 0.3 */
static void test_e1(void **state) {
    (void)state;
    tdm_kato_kb *kb = new_kb();
    char name[41];
    ku_learn(kb, "A|B|C", name);
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    cfg.recall_threshold = 0.3;
    tdm_kato_result *r = ku_predict(kb, "B|D|C|A", &cfg);
    assert_int_equal(tdm_kato_result_count(r), 1);
    const tdm_kato_prediction *p = tdm_kato_result_get(r, 0);
    assert_string_equal(p->name, name);
    tu_assert_same_double(p->similarity, 0.5714285714285714, "similarity");
    assert_string_equal(ku_syms_str(r, p->matches, p->nmatches, (char[64]){0}, 64), "A");
    assert_string_equal(KU_EV(r, p->past), "");
    assert_int_equal(p->past.nevents, 0);
    assert_string_equal(KU_EV(r, p->present), "A");
    assert_string_equal(KU_EV(r, p->future), "B|C");
    assert_int_equal(p->missing.nevents, 1);
    assert_int_equal(p->missing.nsyms, 0);
    assert_string_equal(KU_EV(r, p->extras), "B|D|C|");
    tu_assert_same_double(p->evidence, 1.0 / 3.0, "evidence");
    tu_assert_same_double(p->confidence, 1.0, "confidence");
    tu_assert_same_double(p->snr, -0.2, "snr");
    tu_assert_same_double(p->fragmentation, 0.0, "fragmentation");
    /* itfdf: only A has a probability (1/1), in state and present alike: cosine 1, itfdf 1 */
    tu_assert_same_double(p->itfdf_similarity, 1.0, "itfdf");
    tu_assert_same_double(p->potential, (1.0 / 3.0 + 1.0) * -0.2 + 1.0 + 1.0, "potential");
    assert_true(fabs(p->potential - 1.733333) < 1e-6);
    tdm_kato_result_free(r);
    /* at threshold 0.6 the LCS similarity 4/7 is below: no prediction */
    cfg.recall_threshold = 0.6;
    r = ku_predict(kb, "B|D|C|A", &cfg);
    assert_int_equal(tdm_kato_result_count(r), 0);
    tdm_kato_result_free(r);
    tdm_kato_kb_free(kb);
}

/* spec 3.2 golden: the single-symbol fast path */
static void test_fast_path(void **state) {
    (void)state;
    tdm_kato_kb *kb = new_kb();
    ku_learn(kb, "a|b|c|d", NULL);
    ku_learn(kb, "b|a", NULL);        /* contains a, but does not start with it: not a candidate */
    ku_learn(kb, "a b|x y z", NULL);  /* starts with a: candidate, future includes the rest of event 0 */
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    cfg.recall_threshold = 0.9; /* ignored on this path */
    tdm_kato_result *r = ku_predict(kb, "a", &cfg);
    assert_int_equal(tdm_kato_result_count(r), 2);
    assert_int_equal(tdm_kato_result_stats(r)->fast_path, 1);
    /* potential = 1/|P| + 2: the 4-symbol pattern (2.25) before the 5-symbol one (2.2) */
    const tdm_kato_prediction *p = tdm_kato_result_get(r, 0);
    tu_assert_same_double(p->similarity, 0.4, "similarity");
    tu_assert_same_double(p->evidence, 0.25, "evidence");
    tu_assert_same_double(p->confidence, 1.0, "confidence");
    tu_assert_same_double(p->snr, 1.0, "snr");
    tu_assert_same_double(p->potential, 2.25, "potential");
    assert_int_equal(p->future.flat, 1);
    assert_string_equal(KU_EV(r, p->future), "b c d");
    assert_string_equal(KU_EV(r, p->present), "a");
    assert_int_equal(p->flags & TDM_KATO_HAS_ENSEMBLE, 0);
    p = tdm_kato_result_get(r, 1);
    tu_assert_same_double(p->similarity, 2.0 / 6.0, "similarity");
    tu_assert_same_double(p->potential, (0.2 + 1.0) * 1.0 + 1.0, "potential");
    assert_string_equal(KU_EV(r, p->future), "b x y z");
    tdm_kato_result_free(r);
    /* an unknown symbol starts nothing */
    r = ku_predict(kb, "zzz", &cfg);
    assert_int_equal(tdm_kato_result_count(r), 0);
    tdm_kato_result_free(r);
    tdm_kato_kb_free(kb);
}

/* spec 3.5 step 4: the fix-up also fires when the previous event merely holds the same symbol */
static void test_fixup(void **state) {
    (void)state;
    tdm_kato_kb *kb = new_kb();
    ku_learn(kb, "a|a|b", NULL);
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    tdm_kato_result *r = ku_predict(kb, "a|b", &cfg);
    assert_int_equal(tdm_kato_result_count(r), 1);
    const tdm_kato_prediction *p = tdm_kato_result_get(r, 0);
    assert_string_equal(KU_EV(r, p->past), "");
    assert_string_equal(KU_EV(r, p->present), "a|a|b");
    tu_assert_same_double(p->confidence, 2.0 / 3.0, "confidence");
    /* missing by membership: every present symbol is among the matches */
    assert_int_equal(p->missing.nsyms, 0);
    assert_int_equal(p->missing.nevents, 3);
    tdm_kato_result_free(r);
    tdm_kato_kb_free(kb);
}


static const tdm_kato_prediction *by_name(const tdm_kato_result *r, const char *name) {
    for (size_t i = 0; i < tdm_kato_result_count(r); i++)
        if (!strcmp(tdm_kato_result_get(r, i)->name, name)) return tdm_kato_result_get(r, i);
    fail_msg("no prediction %s", name);
    return NULL;
}

#define NEAR(x, want, what) tu_check(fabs((x) - (want)) < 1e-12, "%s: %.17g, want %.17g", what, (double)(x), (double)(want))

/* Every metric of a small ensemble, derived by hand from the spec's formulas (the closed forms below).
 * Patterns: abc (learned twice), acd, xy; STM [[a],[c]]. TUP 3, TPF 4, NSYM 6; pmf a 2, b 1, c 2, d 1. */
static void test_metrics_by_hand(void **state) {
    (void)state;
    tdm_kato_kb *kb = new_kb();
    char n1[41], n2[41];
    ku_learn(kb, "a|b|c", n1);
    ku_learn(kb, "a|b|c", n1);
    ku_learn(kb, "a|c|d", n2);
    ku_learn(kb, "x|y", NULL);
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    tdm_kato_result *r = ku_predict(kb, "a|c", &cfg);
    assert_int_equal(tdm_kato_result_count(r), 2); /* xy shares nothing */
    const tdm_kato_prediction *p1 = by_name(r, n1), *p2 = by_name(r, n2);
    /* acd first: potential 2/3+1 + ~1 + 1 against abc's 4/3 + ~0.96 + 1/2 */
    assert_string_equal(tdm_kato_result_get(r, 0)->name, n2);
    /* similarity: LCS 2 of 5 symbols, through the x100/100 round trip */
    tu_assert_same_double(p1->similarity, ((2.0 * 2 / 5) * 100.0) / 100.0, "similarity");
    /* abc: blocks (0,0,1) (2,1,1): fragmentation 1, present a|b|c, missing [[],[b],[]], no future */
    tu_assert_same_double(p1->fragmentation, 1.0, "fragmentation");
    assert_string_equal(KU_EV(r, p1->present), "a|b|c");
    assert_string_equal(KU_EV(r, p1->missing), "|b|");
    assert_int_equal(p1->future.nevents, 0);
    tu_assert_same_double(p1->evidence, 2.0 / 3.0, "evidence");
    tu_assert_same_double(p1->confidence, 2.0 / 3.0, "confidence");
    tu_assert_same_double(p1->snr, 1.0, "snr");
    assert_int_equal(p1->frequency, 2);
    /* acd: one block, present a|c, future d */
    tu_assert_same_double(p2->fragmentation, 0.0, "fragmentation");
    assert_string_equal(KU_EV(r, p2->present), "a|c");
    assert_string_equal(KU_EV(r, p2->future), "d");
    tu_assert_same_double(p2->confidence, 1.0, "confidence");
    /* probabilities: a, b, c are in matches or missing; p = pmf / 3 */
    double pa = 2.0 / 3, pb = 1.0 / 3, pc = 2.0 / 3;
    /* itfdf: abc's present vector (pa, pb, pc) against the state (pa, 0, pc); acd's are parallel */
    double cos1 = (pa * pa + pc * pc) / (sqrt(pa * pa + pc * pc) * sqrt(pa * pa + pb * pb + pc * pc));
    NEAR(p1->itfdf_similarity, 1 - (1 - cos1) * 2 / 3, "itfdf abc");
    NEAR(p2->itfdf_similarity, 1.0, "itfdf acd");
    /* confluence = f/TPF * (1 - product of p over the present) */
    NEAR(p1->confluence, 2.0 / 4 * (1 - pa * pb * pc), "confluence abc");
    NEAR(p2->confluence, 1.0 / 4 * (1 - pa * pc), "confluence acd");
    /* entropies over the present: three distinct symbols */
    NEAR(p1->entropy, log2(3.0), "entropy");
    NEAR(p1->normalized_entropy, log(3.0) / log(6.0), "normalized entropy");
    NEAR(p1->global_normalized_entropy, -(pa * log(pa) + pb * log(pb) + pc * log(pc)) / log(6.0), "global normalized entropy");
    NEAR(p2->entropy, 1.0, "entropy acd");
    /* tfidf: n_x = int(p * TUP): a 2, b 1, c 2 */
    NEAR(p1->tfidf_score, (1.0 / 3 * (log2(1.5) + 1) * 2 + 1.0 / 3 * (log2(3.0) + 1)) / 3, "tfidf");
    /* predictive information: only acd has a future; its group holds all the weight */
    NEAR(p2->pattern_probability, 1.0 / 3, "pattern probability");
    NEAR(p2->weighted_strength, 0.8 / 3, "weighted strength");
    NEAR(p2->predictive_information, 0.8 / 3, "predictive information");
    tu_assert_same_double(p1->predictive_information, 0.0, "no future");
    /* Bayesian: prior = f/F, posterior = sim*prior / sum */
    NEAR(p1->bayesian_prior, 2.0 / 3, "prior");
    NEAR(p1->bayesian_posterior, 2.0 / 3, "posterior");
    tu_assert_same_double(p1->bayesian_likelihood, p1->similarity, "likelihood");
    /* potential = (E + C) * snr + itfdf + 1/(frag+1) */
    tu_assert_same_double(p1->potential, (p1->evidence + p1->confidence) * p1->snr + p1->itfdf_similarity + 0.5, "potential");
    /* future_potentials: one group (d) */
    assert_int_equal(tdm_kato_result_future_count(r), 1);
    const tdm_kato_future_potential *f = tdm_kato_result_future(r, 0);
    tu_assert_same_double(f->aggregate_potential, 1.0, "aggregate");
    assert_int_equal(f->supporting_patterns, 1);
    tdm_kato_result_free(r);
    /* rank by another key: bayesian_prior puts abc (f 2) first */
    cfg.rank_sort_algo = TDM_KATO_RANK_BAYESIAN_PRIOR;
    r = ku_predict(kb, "a|c", &cfg);
    assert_string_equal(tdm_kato_result_get(r, 0)->name, n1);
    tdm_kato_result_free(r);
    tdm_kato_kb_free(kb);
}

/* threshold 0 returns patterns that share nothing (spec 2.3): sim 0, matches [], present = the whole
 * pattern, fragmentation -1, snr -1; unknown STM symbols stay in extras */
static void test_threshold_zero(void **state) {
    (void)state;
    tdm_kato_kb *kb = new_kb();
    ku_learn(kb, "x|y", NULL);
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    cfg.recall_threshold = 0.0;
    tdm_kato_result *r = ku_predict(kb, "never|seen", &cfg);
    assert_int_equal(tdm_kato_result_count(r), 1);
    const tdm_kato_prediction *p = tdm_kato_result_get(r, 0);
    tu_assert_same_double(p->similarity, 0.0, "similarity");
    assert_int_equal(p->nmatches, 0);
    assert_string_equal(KU_EV(r, p->present), "x|y");
    assert_string_equal(KU_EV(r, p->missing), "x|y");
    assert_string_equal(KU_EV(r, p->extras), "never|seen");
    tu_assert_same_double(p->fragmentation, -1.0, "fragmentation");
    tu_assert_same_double(p->snr, -1.0, "snr");
    tu_assert_same_double(p->potential, (0.0 + 0.0) * -1.0 + p->itfdf_similarity + 0.0, "potential without the fragmentation term");
    tdm_kato_result_free(r);
    cfg.recall_threshold = 0.1;
    r = ku_predict(kb, "never|seen", &cfg);
    assert_int_equal(tdm_kato_result_count(r), 0);
    tdm_kato_result_free(r);
    tdm_kato_kb_free(kb);
}

/* equal potentials are ordered by name; max_predictions truncates; more than 3 x max_predictions
 * candidates are pruned first (and say so) */
static void test_ties_truncation_pruning(void **state) {
    (void)state;
    tdm_kato_kb *kb = new_kb();
    char names[12][41];
    for (int i = 0; i < 12; i++) {
        char text[32];
        snprintf(text, sizeof text, "a|b|t%d", i); /* same shape: identical metrics */
        ku_learn(kb, text, names[i]);
    }
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    tdm_kato_result *r = ku_predict(kb, "a|b", &cfg);
    assert_int_equal(tdm_kato_result_count(r), 12);
    assert_int_equal(tdm_kato_result_stats(r)->pruned, 0);
    for (size_t i = 1; i < 12; i++) {
        assert_true(strcmp(tdm_kato_result_get(r, i - 1)->name, tdm_kato_result_get(r, i)->name) < 0);
        tu_assert_same_double(tdm_kato_result_get(r, i)->potential, tdm_kato_result_get(r, 0)->potential, "tie");
    }
    assert_int_equal(tdm_kato_result_future_count(r), 12);
    tdm_kato_result_free(r);
    cfg.max_predictions = 3; /* 12 > 9 candidates: pruning keeps 9, truncation 3 */
    r = ku_predict(kb, "a|b", &cfg);
    assert_int_equal(tdm_kato_result_count(r), 3);
    assert_int_equal(tdm_kato_result_stats(r)->pruned, 1);
    assert_int_equal(tdm_kato_result_stats(r)->candidates, 12);
    assert_true(tdm_kato_result_get(r, 0)->flags & TDM_KATO_HAS_PRE_POTENTIAL);
    assert_int_equal(tdm_kato_result_future_count(r), 9);
    tdm_kato_result_free(r);
    tdm_kato_kb_free(kb);
}

/* spec 2.5 E4b: token similarity 0 but character similarity 0.8 */
static void test_char_mode(void **state) {
    (void)state;
    tdm_kato_kb *kb = new_kb();
    ku_learn(kb, "hello|world", NULL);
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    cfg.recall_threshold = 0.0;
    cfg.use_token_matching = 0;
    tdm_kato_result *r = ku_predict(kb, "help|word", &cfg);
    assert_int_equal(tdm_kato_result_count(r), 1);
    tu_assert_same_double(tdm_kato_result_get(r, 0)->similarity, 0.8, "char similarity");
    tdm_kato_result_free(r);
    /* at a positive threshold a character match with no common token has no block: rejected */
    cfg.recall_threshold = 0.5;
    r = ku_predict(kb, "help|word", &cfg);
    assert_int_equal(tdm_kato_result_count(r), 0);
    tdm_kato_result_free(r);
    tdm_kato_kb_free(kb);
}

static void test_bad_input(void **state) {
    (void)state;
    tdm_kato_kb *kb = new_kb();
    ku_learn(kb, "a|b", NULL);
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    tdm_kato_result *r = ku_predict(kb, "", &cfg); /* empty STM: no predictions */
    assert_int_equal(tdm_kato_result_count(r), 0);
    tdm_kato_result_free(r);
    ku_events e;
    ku_parse(&e, "a|\xFF");
    r = NULL;
    assert_int_equal(tdm_kato_predict(kb, e.ev, e.n, &cfg, &r), TDM_E_UTF8);
    assert_null(r);
    ku_parse(&e, "a|b");
    cfg.recall_threshold = 1.5;
    assert_int_equal(tdm_kato_predict(kb, e.ev, e.n, &cfg, &r), TDM_E_RANGE);
    assert_non_null(strstr(tdm_last_error(), "recall_threshold"));
    cfg.recall_threshold = NAN;
    assert_int_equal(tdm_kato_predict(kb, e.ev, e.n, &cfg, &r), TDM_E_RANGE);
    tdm_kato_config_init(&cfg);
    cfg.max_predictions = 10001;
    assert_int_equal(tdm_kato_predict(kb, e.ev, e.n, &cfg, &r), TDM_E_RANGE);
    assert_int_equal(tdm_kato_predict(NULL, e.ev, e.n, &cfg, &r), TDM_E_INVAL);
    tdm_kato_rank k;
    assert_int_equal(tdm_kato_rank_parse("weighted_snr", &k), TDM_OK);
    assert_int_equal(k, TDM_KATO_RANK_WEIGHTED_SNR);
    assert_int_equal(tdm_kato_rank_parse("potentail", &k), TDM_E_INVAL);
    /* a knowledge base with nothing learned predicts nothing */
    tdm_kato_kb *empty = new_kb();
    tdm_kato_config_init(&cfg);
    r = ku_predict(empty, "a|b", &cfg);
    assert_int_equal(tdm_kato_result_count(r), 0);
    tdm_kato_result_free(r);
    r = ku_predict(empty, "a", &cfg);
    assert_int_equal(tdm_kato_result_count(r), 0);
    tdm_kato_result_free(r);
    tdm_kato_kb_free(empty);
    tdm_kato_kb_free(kb);
    tdm_kato_result_free(NULL);
}

/* results own their symbols: they stay readable after more learning and after the kb is gone */
static void test_result_outlives_kb(void **state) {
    (void)state;
    tdm_kato_kb *kb = new_kb();
    ku_learn(kb, "a|b|c", NULL);
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    tdm_kato_result *r = ku_predict(kb, "a|b", &cfg);
    for (int i = 0; i < 300; i++) {
        char text[64];
        snprintf(text, sizeof text, "long-symbol-name-%d|other-%d", i, i);
        ku_learn(kb, text, NULL);
    }
    tdm_kato_kb_free(kb);
    assert_int_equal(tdm_kato_result_count(r), 1);
    assert_string_equal(KU_EV(r, tdm_kato_result_get(r, 0)->future), "c");
    tdm_kato_result_free(r);
}

/* Two empty knowledge bases in contexts of one and of two threads. */
static void kbs_one_and_two_threads(tdm_ctx **one, tdm_ctx **two, tdm_kato_kb **a, tdm_kato_kb **b) {
    tdm_config c;
    tdm_config_init(&c);
    c.threads = 1;
    assert_int_equal(tdm_init(one, &c), TDM_OK);
    c.threads = 2;
    assert_int_equal(tdm_init(two, &c), TDM_OK);
    assert_int_equal(tdm_kato_kb_new(*one, a), TDM_OK);
    assert_int_equal(tdm_kato_kb_new(*two, b), TDM_OK);
}

/* the same knowledge base under one and two threads (extraction runs in parallel past 4096 candidates)
 * gives the same predictions bit for bit */
static void test_threads_identical(void **state) {
    (void)state;
    tdm_ctx *one, *two;
    tdm_kato_kb *a, *b;
    kbs_one_and_two_threads(&one, &two, &a, &b);
    tu_rng r = tu_rng_for(91);
    for (int i = 0; i < 8000; i++) {
        char text[128];
        ku_random_pattern(&r, 12, text, sizeof text);
        ku_learn(a, text, NULL);
        ku_learn(b, text, NULL);
    }
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    for (int q = 0; q < 12; q++) {
        char stm[128];
        ku_random_pattern(&r, 8, stm, sizeof stm);
        cfg.max_predictions = q % 2 ? 100 : 7;
        cfg.recall_threshold = q % 3 ? 0.1 : 0.0; /* 0: every pattern is a candidate */
        tdm_kato_result *x = ku_predict(a, stm, &cfg), *y = ku_predict(b, stm, &cfg);
        if (q == 0) tu_check(tdm_kato_result_stats(x)->candidates > 4096, "only %llu candidates: the parallel path did not run",
                             (unsigned long long)tdm_kato_result_stats(x)->candidates);
        ku_results_same(x, y);
        tdm_kato_result_free(x), tdm_kato_result_free(y);
    }
    tdm_kato_kb_free(a), tdm_kato_kb_free(b);
    tdm_destroy(one), tdm_destroy(two);
}

/* Long patterns (up to 36 symbols in up to 12 events) over a small alphabet, so that Ratcliff/Obershelp
 * finds several blocks, the fix-up and partly-past events occur, and STMs of more than 64 symbols take the
 * matcher's general path: 24,000 patterns, one vs two threads, with and without pruning, must agree bit
 * for bit, and the stats must count the same candidates. */
static void long_pattern(tu_rng *r, int alpha, int maxev, char *out, size_t cap) {
    size_t at = 0;
    int ne = (int)tu_range(r, 2, (uint64_t)maxev);
    out[0] = '\0';
    for (int e = 0; e < ne; e++) {
        int n = (int)tu_range(r, 1, 3);
        for (int k = 0; k < n; k++)
            at += (size_t)snprintf(out + at, cap - at, "%ss%d", k ? " " : (e ? "|" : ""), (int)tu_below(r, (uint64_t)alpha));
    }
}

static void test_threads_identical_long(void **state) {
    (void)state;
    tdm_ctx *one, *two;
    tdm_kato_kb *a, *b;
    kbs_one_and_two_threads(&one, &two, &a, &b);
    tu_rng r = tu_rng_for(92);
    for (int i = 0; i < 24000; i++) {
        char text[512];
        long_pattern(&r, 40, 12, text, sizeof text);
        ku_learn(a, text, NULL);
        ku_learn(b, text, NULL);
    }
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    int parallel = 0, pruned = 0;
    for (int q = 0; q < 16; q++) {
        char stm[1024];
        long_pattern(&r, 40, q % 4 == 3 ? 40 : 10, stm, sizeof stm); /* some STMs pass 64 symbols */
        const uint32_t mp[] = {1, 7, 100, 5000};
        cfg.max_predictions = mp[q % 4];
        cfg.recall_threshold = q % 5 == 0 ? 0.0 : (q % 5 == 1 ? 0.3 : 0.1);
        tdm_kato_result *x = ku_predict(a, stm, &cfg), *y = ku_predict(b, stm, &cfg);
        const tdm_kato_predict_stats *sx = tdm_kato_result_stats(x), *sy = tdm_kato_result_stats(y);
        tu_check(sx->candidates == sy->candidates && sx->pruned == sy->pruned, "query %d: stats differ", q);
        parallel += sx->candidates > 4096;
        pruned += sx->pruned;
        ku_results_same(x, y);
        tdm_kato_result_free(x), tdm_kato_result_free(y);
    }
    tu_check(parallel >= 8 && pruned >= 8, "only %d parallel and %d pruned queries", parallel, pruned);
    tdm_kato_kb_free(a), tdm_kato_kb_free(b);
    tdm_destroy(one), tdm_destroy(two);
}

/* The full path's pruning keys come from the block summaries the engine's query returns with its hits;
 * before, the pruning pass ran the matcher on every hit itself (kato_prune_matcher = 1 still does). The two
 * must give the same predictions bit for bit, on long patterns over small alphabets (several blocks, the
 * past/present fix-up on both of its branches, symbols repeated before the first block), STMs with
 * unknown symbols and of more than 64 symbols, thresholds 0 to 0.3, every pruning size, token and
 * character mode, with and without an affinity emotive; candidates past 4096 run in parallel. A third
 * knowledge base lives on a context that puts the engine's search on the GPU when there is one (on a
 * machine without, it runs on the CPU like the first), so there its summaries come from the device. */
static void test_summary_path_identical(void **state) {
    (void)state;
    tdm_config c;
    tdm_config_init(&c);
    c.threads = 2;
    c.seq_backend = TDM_DEVICE_CUDA;
    c.seq_gpu_min = 0;
    c.strict = 0;
    tdm_ctx *dev;
    assert_int_equal(tdm_init(&dev, &c), TDM_OK);
    tdm_kato_kb *a = new_kb(), *b;
    assert_int_equal(tdm_kato_kb_new(dev, &b), TDM_OK);
    tu_rng r = tu_rng_for(93);
    for (int i = 0; i < 20000; i++) {
        char text[512];
        long_pattern(&r, i % 3 ? 40 : 9, 12, text, sizeof text);
        ku_learn(a, text, NULL);
        ku_learn(b, text, NULL);
    }
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    int parallel = 0, pruned = 0, unpruned = 0;
    for (int q = 0; q < 24; q++) {
        char stm[1200];
        long_pattern(&r, q % 3 ? 40 : 9, q % 4 == 3 ? 40 : 10, stm, sizeof stm);
        if (q % 5 == 2) strcat(stm, " zz1|s3 zz2"); /* unknown symbols */
        const uint32_t mp[] = {1, 7, 100, 10000};
        cfg.max_predictions = mp[q % 4];
        cfg.recall_threshold = q % 3 == 0 ? 0.0 : (q % 3 == 1 ? 0.3 : 0.1);
        cfg.use_token_matching = q % 6 != 5;
        cfg.affinity_emotive = q % 7 == 3 ? "joy" : NULL;
        kato_prune_matcher = 1;
        tdm_kato_result *old = ku_predict(a, stm, &cfg);
        kato_prune_matcher = 0;
        tdm_kato_result *x = ku_predict(a, stm, &cfg), *y = ku_predict(b, stm, &cfg);
        const tdm_kato_predict_stats *so = tdm_kato_result_stats(old), *sx = tdm_kato_result_stats(x), *sy = tdm_kato_result_stats(y);
        tu_check(so->candidates == sx->candidates && so->pruned == sx->pruned && sx->candidates == sy->candidates &&
                     sx->pruned == sy->pruned,
                 "query %d: stats differ (%" PRIu64 "/%d, %" PRIu64 "/%d, %" PRIu64 "/%d)", q, so->candidates, so->pruned,
                 sx->candidates, sx->pruned, sy->candidates, sy->pruned);
        parallel += sx->candidates > 4096;
        pruned += sx->pruned;
        unpruned += !sx->pruned && sx->candidates > 0;
        ku_results_same(x, old);
        ku_results_same(y, old);
        tdm_kato_result_free(old), tdm_kato_result_free(x), tdm_kato_result_free(y);
    }
    tu_check(parallel >= 6 && pruned >= 8 && unpruned >= 4, "only %d parallel, %d pruned, %d unpruned queries", parallel,
             pruned, unpruned);
    tdm_kato_kb_free(a), tdm_kato_kb_free(b);
    tdm_destroy(dev);
}

/* The value a prediction is ranked by (null weighted values below every number). */
static double rank_of(const tdm_kato_prediction *p, tdm_kato_rank k) {
    int w = (p->flags & TDM_KATO_HAS_WEIGHTED) != 0, ws = (p->flags & TDM_KATO_HAS_WEIGHTED_SIMILARITY) != 0;
    switch (k) {
    case TDM_KATO_RANK_POTENTIAL: return p->potential;
    case TDM_KATO_RANK_SIMILARITY: return p->similarity;
    case TDM_KATO_RANK_EVIDENCE: return p->evidence;
    case TDM_KATO_RANK_CONFIDENCE: return p->confidence;
    case TDM_KATO_RANK_SNR: return p->snr;
    case TDM_KATO_RANK_FRAGMENTATION: return p->fragmentation;
    case TDM_KATO_RANK_FREQUENCY: return (double)p->frequency;
    case TDM_KATO_RANK_NORMALIZED_ENTROPY: return p->normalized_entropy;
    case TDM_KATO_RANK_GLOBAL_NORMALIZED_ENTROPY: return p->global_normalized_entropy;
    case TDM_KATO_RANK_ITFDF_SIMILARITY: return p->itfdf_similarity;
    case TDM_KATO_RANK_CONFLUENCE: return p->confluence;
    case TDM_KATO_RANK_PREDICTIVE_INFORMATION: return p->predictive_information;
    case TDM_KATO_RANK_BAYESIAN_POSTERIOR: return p->bayesian_posterior;
    case TDM_KATO_RANK_BAYESIAN_PRIOR: return p->bayesian_prior;
    case TDM_KATO_RANK_BAYESIAN_LIKELIHOOD: return p->bayesian_likelihood;
    case TDM_KATO_RANK_TFIDF_SCORE: return p->tfidf_score;
    case TDM_KATO_RANK_WEIGHTED_SIMILARITY: return ws ? p->weighted_similarity : -INFINITY;
    case TDM_KATO_RANK_WEIGHTED_EVIDENCE: return w ? p->weighted_evidence : -INFINITY;
    case TDM_KATO_RANK_WEIGHTED_CONFIDENCE: return w ? p->weighted_confidence : -INFINITY;
    case TDM_KATO_RANK_WEIGHTED_SNR: return w ? p->weighted_snr : -INFINITY;
    default: return NAN;
    }
}

/* Invariants every prediction must satisfy, on random knowledge bases with long patterns (past the
 * 64-symbol word of the bit-parallel LCS), empty STM events, unknown symbols and random settings:
 * at most max_predictions, ranked by the key with ties by name, similarity >= threshold, past + present +
 * future = the pattern's events, matches drawn from the STM, missing within the present, one extras list
 * per STM event, confidence/evidence in [0, 1], snr in [-1, 1]. */
static void test_random_invariants(void **state) {
    (void)state;
    tdm_kato_kb *kb = new_kb();
    tu_rng r = tu_rng_for(123);
    char text[4096];
    for (int i = 0; i < 400; i++) {
        int long_one = tu_below(&r, 20) == 0;
        size_t at = 0;
        int ne = long_one ? (int)tu_range(&r, 40, 150) : (int)tu_range(&r, 1, 6);
        for (int e = 0; e < ne; e++) {
            int n = (int)tu_range(&r, 1, 3);
            for (int k = 0; k < n; k++)
                at += (size_t)snprintf(text + at, sizeof text - at, "%ss%d", k ? " " : (e ? "|" : ""), (int)tu_below(&r, 12));
        }
        ku_learn(kb, text, NULL);
    }
    static const double thr[] = {0.0, 0.05, 0.1, 0.3, 0.5, 0.9};
    for (int q = 0; q < 150; q++) {
        size_t at = 0;
        int ne = (int)tu_range(&r, 1, q % 10 == 0 ? 90 : 8);
        for (int e = 0; e < ne; e++) {
            int n = (int)tu_range(&r, 0, 2); /* empty events too */
            if (e) at += (size_t)snprintf(text + at, sizeof text - at, "|");
            for (int k = 0; k < n; k++)
                at += (size_t)snprintf(text + at, sizeof text - at, "%s%s%d", k ? " " : "", tu_below(&r, 8) ? "s" : "unknown", (int)tu_below(&r, 14));
        }
        tdm_kato_config cfg;
        tdm_kato_config_init(&cfg);
        cfg.recall_threshold = thr[tu_below(&r, 6)];
        cfg.max_predictions = (uint32_t)tu_range(&r, 1, 40);
        cfg.rank_sort_algo = (tdm_kato_rank)tu_below(&r, TDM_KATO_RANK_COUNT);
        cfg.use_token_matching = tu_below(&r, 4) != 0;
        cfg.affinity_emotive = tu_below(&r, 2) ? "joy" : NULL;
        ku_events stm;
        ku_parse(&stm, text);
        tdm_kato_result *res = NULL;
        assert_int_equal(tdm_kato_predict(kb, stm.ev, stm.n, &cfg, &res), TDM_OK);
        size_t n = tdm_kato_result_count(res), ns = 0;
        for (size_t e = 0; e < stm.n; e++) ns += stm.ev[e].n;
        tu_check(n <= cfg.max_predictions, "%zu predictions for max %u", n, cfg.max_predictions);
        for (size_t i = 0; i < n; i++) {
            const tdm_kato_prediction *p = tdm_kato_result_get(res, i);
            if (ns > 1) tu_check(p->similarity >= cfg.recall_threshold, "similarity %.17g below %g", p->similarity, cfg.recall_threshold);
            tu_check(p->evidence >= 0 && p->evidence <= 1 && p->confidence >= 0 && p->confidence <= 1, "evidence/confidence");
            tu_check(p->snr >= -1 && p->snr <= 1, "snr %g", p->snr);
            if (ns == 1) continue; /* the fast path's lists are flat */
            /* past + present + future = sequence */
            char a[8192], b[8192];
            tdm_kato_events all = p->sequence;
            size_t at2 = 0;
            const tdm_kato_events *parts[] = {&p->past, &p->present, &p->future};
            a[0] = '\0';
            for (int k = 0; k < 3; k++) {
                if (!parts[k]->nevents) continue;
                at2 += (size_t)snprintf(a + at2, sizeof a - at2, "%s%s", at2 ? "|" : "", ku_events_str(res, parts[k], b, sizeof b));
            }
            tu_check(!strcmp(a, ku_events_str(res, &all, b, sizeof b)), "past|present|future != sequence: %s", a);
            tu_check(p->missing.nevents == p->present.nevents, "one missing list per present event");
            tu_check(p->extras.nevents == stm.n, "one extras list per STM event");
            tu_check(p->nmatches <= ns, "matches");
            for (uint32_t k = 0; k < p->nmatches; k++) {
                const char *sym;
                size_t len;
                int found = 0;
                tdm_kato_result_symbol(res, p->matches[k], &sym, &len);
                for (size_t e = 0; e < stm.n && !found; e++)
                    for (size_t j = 0; j < stm.ev[e].n && !found; j++)
                        found = stm.ev[e].lens[j] == len && !memcmp(stm.ev[e].syms[j], sym, len);
                tu_check(found, "match %.*s is not in the STM", (int)len, sym);
            }
            if (i) { /* ranked by the key, ties by name */
                const tdm_kato_prediction *o = tdm_kato_result_get(res, i - 1);
                double vo = rank_of(o, cfg.rank_sort_algo), vp = rank_of(p, cfg.rank_sort_algo);
                tu_check(vo > vp || (vo == vp && strcmp(o->name, p->name) < 0), "%s: %.17g %s before %.17g %s",
                         tdm_kato_rank_name(cfg.rank_sort_algo), vo, o->name, vp, p->name);
            }
        }
        tdm_kato_result_free(res);
    }
    tdm_kato_kb_free(kb);
}

int main(void) {
    tu_init_seed("test_kato_predict");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e1),
        cmocka_unit_test(test_fast_path),
        cmocka_unit_test(test_fixup),
        cmocka_unit_test(test_metrics_by_hand),
        cmocka_unit_test(test_threshold_zero),
        cmocka_unit_test(test_ties_truncation_pruning),
        cmocka_unit_test(test_char_mode),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_result_outlives_kb),
        cmocka_unit_test(test_threads_identical),
        cmocka_unit_test(test_threads_identical_long),
        cmocka_unit_test(test_summary_path_identical),
        cmocka_unit_test(test_random_invariants),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
