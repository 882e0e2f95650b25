/* test_kato_stm.c: the session STM (src/kato/stm.c, spec/kato.md 1.1-1.2): sorting of observed events,
 * empty observations, the accumulators (kept across learns, reset by clear), auto-learn in CLEAR and
 * ROLLING modes, and that auto-learned patterns keep their emotives (KATO drops them; docs/kato-compat.md). */
#include "kato_util.h"

static tdm_ctx *ctx;

static int setup(void **state) {
    (void)state;
    return tdm_init(&ctx, NULL);
}

static int teardown(void **state) {
    (void)state;
    tdm_destroy(ctx);
    return 0;
}

static int observe(tdm_kato_stm *s, tdm_kato_kb *kb, const tdm_kato_config *cfg, const char *syms, const tdm_kato_emotives *emo,
                   char *auto_name) {
    ku_events e;
    ku_parse(&e, syms);
    return tdm_kato_stm_observe(s, kb, cfg, e.n ? e.ev[0].syms : NULL, e.n ? e.ev[0].lens : NULL, e.n ? e.ev[0].n : 0, emo, NULL,
                                auto_name);
}

static const char *event_str(const tdm_kato_stm *s, size_t i, char *buf) {
    tdm_kato_event ev;
    assert_int_equal(tdm_kato_stm_event(s, i, &ev), TDM_OK);
    buf[0] = '\0';
    for (size_t k = 0; k < ev.n; k++) sprintf(buf + strlen(buf), "%s%.*s", k ? " " : "", (int)ev.lens[k], ev.syms[k]);
    return buf;
}

static void test_observe_sort_and_empty(void **state) {
    (void)state;
    tdm_kato_stm *s;
    assert_int_equal(tdm_kato_stm_new(&s), TDM_OK);
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    char buf[256];
    assert_int_equal(observe(s, NULL, &cfg, "z middle a", NULL, NULL), TDM_OK);
    assert_string_equal(event_str(s, 0, buf), "a middle z");
    /* "" sorts first, and a prefix before its extensions (code-point order) */
    const char *syms[] = {"ab", "", "a", "\xC3\xBC", "b"};
    size_t lens[] = {2, 0, 1, 2, 1};
    assert_int_equal(tdm_kato_stm_observe(s, NULL, &cfg, syms, lens, 5, NULL, NULL, NULL), TDM_OK);
    tdm_kato_event ev;
    assert_int_equal(tdm_kato_stm_event(s, 1, &ev), TDM_OK);
    assert_int_equal(ev.lens[0], 0);
    assert_string_equal(ev.syms[1], "a");
    assert_string_equal(ev.syms[2], "ab");
    assert_string_equal(ev.syms[4], "\xC3\xBC");
    cfg.sort_symbols = 0;
    assert_int_equal(observe(s, NULL, &cfg, "z a", NULL, NULL), TDM_OK);
    assert_string_equal(event_str(s, 2, buf), "z a");
    /* an empty observation: no event, but time advances */
    assert_int_equal(observe(s, NULL, &cfg, "", NULL, NULL), TDM_OK);
    assert_int_equal(tdm_kato_stm_nevents(s), 3);
    assert_int_equal(tdm_kato_stm_time(s), 4);
    tdm_kato_stm_clear(s);
    assert_int_equal(tdm_kato_stm_nevents(s), 0);
    assert_int_equal(tdm_kato_stm_time(s), 0);
    /* bad input */
    const char *bad[] = {"\xC0\x80"};
    size_t blen[] = {2};
    assert_int_equal(tdm_kato_stm_observe(s, NULL, &cfg, bad, blen, 1, NULL, NULL, NULL), TDM_E_UTF8);
    cfg.max_predictions = 0;
    assert_int_equal(observe(s, NULL, &cfg, "a", NULL, NULL), TDM_E_RANGE);
    tdm_kato_config_init(&cfg);
    cfg.max_pattern_length = 2;
    assert_int_equal(observe(s, NULL, &cfg, "a", NULL, NULL), TDM_E_INVAL); /* auto-learn needs a kb */
    tdm_kato_stm_free(s);
    tdm_kato_stm_free(NULL);
}

static void test_auto_learn_clear(void **state) {
    (void)state;
    tdm_kato_kb *kb;
    tdm_kato_stm *s;
    assert_int_equal(tdm_kato_kb_new(ctx, &kb), TDM_OK);
    assert_int_equal(tdm_kato_stm_new(&s), TDM_OK);
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    cfg.max_pattern_length = 3;
    char name[41], want[41];
    tdm_kato_emotive d[] = {{"joy", 3.0}};
    tdm_kato_emotives emo = {d, 1};
    assert_int_equal(observe(s, kb, &cfg, "b a", &emo, name), TDM_OK);
    assert_string_equal(name, "");
    assert_int_equal(observe(s, kb, &cfg, "c", NULL, name), TDM_OK);
    assert_string_equal(name, "");
    assert_int_equal(observe(s, kb, &cfg, "d", NULL, name), TDM_OK);
    ku_events e;
    ku_parse(&e, "a b|c|d");
    assert_int_equal(tdm_kato_pattern_name(e.ev, e.n, want), TDM_OK);
    assert_string_equal(name, want);
    assert_int_equal(tdm_kato_stm_nevents(s), 0);
    /* the auto-learned pattern has the session's emotives */
    tdm_kato_pattern p;
    assert_int_equal(tdm_kato_kb_get(kb, 0, &p), TDM_OK);
    assert_int_equal(p.nemotive_dicts, 1);
    tu_assert_same_double(p.emotives[0].value, 3.0, "emotive");
    tdm_kato_pattern_free(&p);
    /* max_pattern_length 1: every event is learned on its own (if it has 2 symbols) */
    cfg.max_pattern_length = 1;
    assert_int_equal(observe(s, kb, &cfg, "x", NULL, name), TDM_OK);
    assert_string_equal(name, ""); /* one symbol: not stored, STM still emptied */
    assert_int_equal(tdm_kato_stm_nevents(s), 0);
    assert_int_equal(observe(s, kb, &cfg, "x y", NULL, name), TDM_OK);
    assert_int_equal(strlen(name), 40);
    assert_int_equal(tdm_kato_kb_count(kb), 2);
    tdm_kato_stm_free(s);
    tdm_kato_kb_free(kb);
}

static void test_auto_learn_rolling(void **state) {
    (void)state;
    tdm_kato_kb *kb;
    tdm_kato_stm *s;
    assert_int_equal(tdm_kato_kb_new(ctx, &kb), TDM_OK);
    assert_int_equal(tdm_kato_stm_new(&s), TDM_OK);
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    cfg.max_pattern_length = 3;
    cfg.stm_mode = TDM_KATO_STM_ROLLING;
    char name[41], buf[64];
    const char *seq[] = {"a", "b", "c", "d", "e"};
    int learned = 0;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(observe(s, kb, &cfg, seq[i], NULL, name), TDM_OK);
        if (name[0]) learned++;
        assert_int_equal(tdm_kato_stm_nevents(s), i < 2 ? (size_t)i + 1 : 2);
    }
    /* windows abc, bcd, cde */
    assert_int_equal(learned, 3);
    assert_int_equal(tdm_kato_kb_count(kb), 3);
    assert_string_equal(event_str(s, 0, buf), "d");
    assert_string_equal(event_str(s, 1, buf), "e");
    tdm_kato_stm_free(s);
    tdm_kato_kb_free(kb);
}

/* learn keeps the accumulators: a second learn carries the first one's emotives too (KATO) */
static void test_learn_keeps_accumulators(void **state) {
    (void)state;
    tdm_kato_kb *kb;
    tdm_kato_stm *s;
    assert_int_equal(tdm_kato_kb_new(ctx, &kb), TDM_OK);
    assert_int_equal(tdm_kato_stm_new(&s), TDM_OK);
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    char name[41];
    int learned;
    assert_int_equal(tdm_kato_stm_learn(s, kb, 5, name, &learned), TDM_E_INVAL);
    tdm_kato_emotive d1[] = {{"joy", 1.0}}, d2[] = {{"joy", 5.0}};
    tdm_kato_emotives e1 = {d1, 1}, e2 = {d2, 1};
    assert_int_equal(observe(s, kb, &cfg, "a b", &e1, NULL), TDM_OK);
    assert_int_equal(tdm_kato_stm_learn(s, kb, 5, name, &learned), TDM_OK);
    assert_int_equal(learned, 1);
    assert_int_equal(tdm_kato_stm_nevents(s), 0);
    assert_int_equal(observe(s, kb, &cfg, "c d", &e2, NULL), TDM_OK);
    assert_int_equal(tdm_kato_stm_learn(s, kb, 5, name, &learned), TDM_OK);
    tdm_kato_pattern p;
    assert_int_equal(tdm_kato_kb_get(kb, 1, &p), TDM_OK);
    assert_int_equal(p.nemotive_dicts, 2);
    tdm_kato_pattern_free(&p);
    double aff;
    assert_int_equal(tdm_kato_kb_symbol_affinity(kb, "c", 1, "joy", &aff), TDM_OK);
    tu_assert_same_double(aff, 3.0, "mean of 1 and 5");
    /* predictions straight from the session's STM */
    assert_int_equal(observe(s, kb, &cfg, "a", NULL, NULL), TDM_OK);
    assert_int_equal(observe(s, kb, &cfg, "b", NULL, NULL), TDM_OK);
    tdm_kato_result *r;
    assert_int_equal(tdm_kato_stm_predict(s, kb, &cfg, &r), TDM_OK);
    assert_int_equal(tdm_kato_result_count(r), 1);
    assert_int_equal(tdm_kato_result_get(r, 0)->nemotives, 1);
    tu_assert_same_double(tdm_kato_result_get(r, 0)->emotive_values[0], 1.0, "emotives of a b");
    tdm_kato_result_free(r);
    tdm_kato_stm_free(s);
    tdm_kato_kb_free(kb);
}

int main(void) {
    tu_init_seed("test_kato_stm");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_observe_sort_and_empty),
        cmocka_unit_test(test_auto_learn_clear),
        cmocka_unit_test(test_auto_learn_rolling),
        cmocka_unit_test(test_learn_keeps_accumulators),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
