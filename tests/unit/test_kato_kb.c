/* test_kato_kb.c: the knowledge base (src/kato/kb.c): learning and re-learning (spec/kato.md 1.4),
 * frequency and the global counters (total_pattern_frequencies counts re-learns, as KATO's documentation
 * says; docs/kato-compat.md), the 2-symbol minimum, the emotives window, metadata sets, symbol statistics
 * and affinities, lookup by name, and bad input that must change nothing. */
#include "kato_util.h"

#include <math.h>

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

static tdm_kato_kb *new_kb(void) {
    tdm_kato_kb *kb;
    assert_int_equal(tdm_kato_kb_new(ctx, &kb), TDM_OK);
    return kb;
}

static void totals(tdm_kato_kb *kb, uint64_t pat, uint64_t tpf, uint64_t tspf, uint64_t sym) {
    tdm_kato_kb_totals t;
    tdm_kato_kb_totals_get(kb, &t);
    assert_int_equal(t.patterns, pat);
    assert_int_equal(t.total_pattern_frequencies, tpf);
    assert_int_equal(t.total_symbols_in_patterns_frequencies, tspf);
    assert_int_equal(t.symbols, sym);
}

static void stats(tdm_kato_kb *kb, const char *s, uint64_t freq, uint64_t pmf) {
    uint64_t f, p;
    assert_int_equal(tdm_kato_kb_symbol_stats(kb, s, strlen(s), &f, &p), TDM_OK);
    assert_int_equal(f, freq);
    assert_int_equal(p, pmf);
}

static void test_learn_and_relearn(void **state) {
    (void)state;
    tdm_kato_kb *kb = new_kb();
    char n1[41], n2[41], n3[41];
    ku_learn(kb, "hello|world", n1);
    assert_string_equal(n1, "7d0678ba6305341ce0d25133ab086208656a562f");
    ku_learn(kb, "a b|a", n2);
    totals(kb, 2, 2, 5, 4);
    stats(kb, "a", 2, 1);
    ku_learn(kb, "a b|a", n3); /* a re-learn: same name, frequency 2, members unchanged */
    assert_string_equal(n2, n3);
    totals(kb, 2, 3, 8, 4);
    stats(kb, "a", 4, 1);
    stats(kb, "b", 2, 1);
    uint32_t idx;
    assert_int_equal(tdm_kato_kb_find(kb, n2, &idx), TDM_OK);
    assert_int_equal(idx, 1);
    char ptrn[64];
    snprintf(ptrn, sizeof ptrn, "PTRN|%s", n1);
    assert_int_equal(tdm_kato_kb_find(kb, ptrn, &idx), TDM_OK);
    assert_int_equal(idx, 0);
    tdm_kato_pattern p;
    assert_int_equal(tdm_kato_kb_get(kb, 1, &p), TDM_OK);
    assert_string_equal(p.name, n2);
    assert_int_equal(p.frequency, 2);
    assert_int_equal(p.nevents, 2);
    assert_int_equal(p.event_sizes[0], 2);
    assert_int_equal(p.nsyms, 3);
    assert_string_equal(p.syms[0], "a");
    assert_string_equal(p.syms[1], "b");
    assert_string_equal(p.syms[2], "a");
    tdm_kato_pattern_free(&p);
    assert_int_equal(tdm_kato_kb_count(kb), 2);
    tdm_kato_kb_free(kb);
}

static void test_minimum_two_symbols(void **state) {
    (void)state;
    tdm_kato_kb *kb = new_kb();
    char name[41] = "x";
    int learned = 1;
    ku_events e;
    ku_parse(&e, "only");
    assert_int_equal(tdm_kato_kb_learn(kb, e.ev, e.n, NULL, 0, NULL, 0, 5, name, &learned), TDM_OK);
    assert_int_equal(learned, 0);
    assert_string_equal(name, "");
    totals(kb, 0, 0, 0, 0);
    assert_int_equal(tdm_kato_kb_symbol_stats(kb, "only", 4, NULL, NULL), TDM_E_NOTFOUND);
    ku_parse(&e, "one|"); /* an empty event adds no symbol */
    assert_int_equal(tdm_kato_kb_learn(kb, e.ev, e.n, NULL, 0, NULL, 0, 5, name, &learned), TDM_OK);
    assert_int_equal(learned, 0);
    ku_parse(&e, "x y"); /* one event of two symbols is enough */
    assert_int_equal(tdm_kato_kb_learn(kb, e.ev, e.n, NULL, 0, NULL, 0, 5, name, &learned), TDM_OK);
    assert_int_equal(learned, 1);
    totals(kb, 1, 1, 2, 2);
    /* an empty STM is an error */
    assert_int_equal(tdm_kato_kb_learn(kb, e.ev, 0, NULL, 0, NULL, 0, 5, name, &learned), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "empty STM"));
    tdm_kato_kb_free(kb);
}

static void test_emotives_metadata_affinity(void **state) {
    (void)state;
    tdm_kato_kb *kb = new_kb();
    ku_events e;
    ku_parse(&e, "a|b|a");
    tdm_kato_emotive d1[] = {{"joy", 1.0}}, d2[] = {{"joy", 2.0}, {"fear", -4.0}}, d3[] = {{"fear", 2.0}};
    tdm_kato_emotives emo[] = {{d1, 1}, {d2, 2}, {d3, 1}};
    tdm_kato_meta m1[] = {{"src", "b"}, {"n", "1"}}, m2[] = {{"src", "a"}, {"src", "b"}};
    tdm_kato_metadata meta[] = {{m1, 2}, {m2, 2}};
    char name[41];
    int learned;
    /* persistence 2: the window keeps the last two dicts */
    assert_int_equal(tdm_kato_kb_learn(kb, e.ev, e.n, emo, 3, meta, 1, 2, name, &learned), TDM_OK);
    tdm_kato_pattern p;
    assert_int_equal(tdm_kato_kb_get(kb, 0, &p), TDM_OK);
    assert_int_equal(p.nemotive_dicts, 2);
    assert_int_equal(p.emotive_sizes[0], 2);
    assert_string_equal(p.emotives[0].key, "joy");
    tu_assert_same_double(p.emotives[2].value, 2.0, "fear of the last dict");
    assert_int_equal(p.nmeta, 2);
    assert_string_equal(p.meta_keys[0], "src");
    assert_string_equal(p.meta_keys[1], "n");
    tdm_kato_pattern_free(&p);
    /* affinity: the accumulator's means (joy 1.5, fear -1.0) once per distinct symbol */
    double aff;
    assert_int_equal(tdm_kato_kb_symbol_affinity(kb, "a", 1, "joy", &aff), TDM_OK);
    tu_assert_same_double(aff, 1.5, "aff(a, joy)");
    assert_int_equal(tdm_kato_kb_symbol_affinity(kb, "b", 1, "fear", &aff), TDM_OK);
    tu_assert_same_double(aff, -1.0, "aff(b, fear)");
    assert_int_equal(tdm_kato_kb_symbol_affinity(kb, "b", 1, "none", &aff), TDM_OK);
    tu_assert_same_double(aff, 0.0, "aff(b, none)");
    /* re-learn: window = (old + new)[-2:], metadata sets united and sorted, affinities summed */
    tdm_kato_emotives emo2[] = {{d1, 1}};
    assert_int_equal(tdm_kato_kb_learn(kb, e.ev, e.n, emo2, 1, &meta[1], 1, 2, name, &learned), TDM_OK);
    assert_int_equal(tdm_kato_kb_get(kb, 0, &p), TDM_OK);
    assert_int_equal(p.frequency, 2);
    assert_int_equal(p.nemotive_dicts, 2);
    assert_int_equal(p.emotive_sizes[0], 1);
    assert_string_equal(p.emotives[0].key, "fear");
    assert_string_equal(p.emotives[1].key, "joy");
    assert_int_equal(p.meta_nvalues[0], 2); /* src: a, b */
    assert_string_equal(p.meta_values[0], "a");
    assert_string_equal(p.meta_values[1], "b");
    assert_string_equal(p.meta_values[2], "1");
    tdm_kato_pattern_free(&p);
    assert_int_equal(tdm_kato_kb_symbol_affinity(kb, "a", 1, "joy", &aff), TDM_OK);
    tu_assert_same_double(aff, 2.5, "aff(a, joy) after the re-learn");
    tdm_kato_kb_free(kb);
}

static void test_bad_input(void **state) {
    (void)state;
    tdm_kato_kb *kb = new_kb();
    char name[41];
    int learned;
    ku_events e;
    ku_parse(&e, "ok|also");
    e.syms[1] = "\xFF", e.lens[1] = 1;
    assert_int_equal(tdm_kato_kb_learn(kb, e.ev, e.n, NULL, 0, NULL, 0, 5, name, &learned), TDM_E_UTF8);
    ku_parse(&e, "a|b");
    tdm_kato_emotive bad[] = {{"joy", NAN}};
    tdm_kato_emotives emo = {bad, 1};
    assert_int_equal(tdm_kato_kb_learn(kb, e.ev, e.n, &emo, 1, NULL, 0, 5, name, &learned), TDM_E_INVAL);
    assert_int_equal(tdm_kato_kb_learn(kb, e.ev, e.n, NULL, 0, NULL, 0, 0, name, &learned), TDM_E_INVAL);
    assert_int_equal(tdm_kato_kb_learn(kb, e.ev, e.n, NULL, 0, NULL, 0, 101, name, &learned), TDM_E_INVAL);
    assert_int_equal(tdm_kato_kb_learn(NULL, e.ev, e.n, NULL, 0, NULL, 0, 5, name, &learned), TDM_E_INVAL);
    totals(kb, 0, 0, 0, 0); /* nothing changed */
    uint32_t idx;
    assert_int_equal(tdm_kato_kb_find(kb, "7d0678ba6305341ce0d25133ab086208656a562f", &idx), TDM_E_NOTFOUND);
    assert_int_equal(tdm_kato_kb_find(kb, "7D0678", &idx), TDM_E_INVAL);
    tdm_kato_pattern p;
    assert_int_equal(tdm_kato_kb_get(kb, 0, &p), TDM_E_RANGE);
    tdm_kato_kb_free(kb);
    tdm_kato_kb_free(NULL);
}

/* many patterns: the name table grows and every name still resolves to its index */
static void test_many_patterns(void **state) {
    (void)state;
    tdm_kato_kb *kb = new_kb();
    tu_rng r = tu_rng_for(41);
    char names[600][41];
    for (int i = 0; i < 600; i++) {
        char text[64];
        snprintf(text, sizeof text, "p%d s%d|s%d", i, (int)tu_below(&r, 9), (int)tu_below(&r, 9));
        ku_learn(kb, text, names[i]);
    }
    for (int i = 0; i < 600; i++) {
        uint32_t idx;
        assert_int_equal(tdm_kato_kb_find(kb, names[i], &idx), TDM_OK);
        assert_int_equal(idx, (uint32_t)i);
    }
    tdm_kato_kb_free(kb);
}


/* export every pattern and symbol, import them into a fresh knowledge base: same totals, statistics,
 * affinities, and the same predictions bit for bit (weighted metrics included) */
static void test_export_import(void **state) {
    (void)state;
    tdm_kato_kb *kb = new_kb(), *copy = new_kb();
    tu_rng r = tu_rng_for(77);
    for (int i = 0; i < 300; i++) {
        char text[128];
        ku_random_pattern(&r, 9, text, sizeof text);
        ku_events e;
        ku_parse(&e, text);
        tdm_kato_emotive d[] = {{"joy", (double)tu_range(&r, -8, 8) / 4}, {"fear", tu_unit(&r)}};
        tdm_kato_emotives emo[] = {{d, 2}, {d + 1, 1}};
        tdm_kato_meta m[] = {{"src", tu_below(&r, 2) ? "a" : "b"}};
        tdm_kato_metadata meta = {m, 1};
        int learned;
        assert_int_equal(tdm_kato_kb_learn(kb, e.ev, e.n, emo, (size_t)tu_range(&r, 0, 2), &meta, 1, 3, NULL, &learned), TDM_OK);
        if (tu_below(&r, 10) == 0) /* a re-learn */
            assert_int_equal(tdm_kato_kb_learn(kb, e.ev, e.n, emo, 1, NULL, 0, 3, NULL, &learned), TDM_OK);
    }
    for (uint32_t i = 0; i < tdm_kato_kb_count(kb); i++) {
        tdm_kato_pattern p;
        assert_int_equal(tdm_kato_kb_get(kb, i, &p), TDM_OK);
        assert_int_equal(tdm_kato_kb_import(copy, &p), TDM_OK);
        assert_int_equal(tdm_kato_kb_import(copy, &p), TDM_E_INVAL); /* already there */
        tdm_kato_pattern_free(&p);
    }
    for (uint32_t i = 0; i < tdm_kato_kb_symbol_count(kb); i++) {
        tdm_kato_symbol sy;
        assert_int_equal(tdm_kato_kb_symbol_get(kb, i, &sy), TDM_OK);
        for (size_t k = 0; k < sy.naff; k++)
            assert_int_equal(tdm_kato_kb_set_affinity(copy, sy.sym, sy.len, sy.aff_keys[k], sy.aff_values[k]), TDM_OK);
        uint64_t f, pm;
        assert_int_equal(tdm_kato_kb_symbol_stats(copy, sy.sym, sy.len, &f, &pm), TDM_OK);
        assert_int_equal(f, sy.frequency);
        assert_int_equal(pm, sy.pattern_member_frequency);
        tdm_kato_symbol_free(&sy);
    }
    tdm_kato_kb_totals ta, tb;
    tdm_kato_kb_totals_get(kb, &ta);
    tdm_kato_kb_totals_get(copy, &tb);
    assert_memory_equal(&ta, &tb, sizeof ta);
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    for (int q = 0; q < 60; q++) {
        char stm[128];
        ku_random_pattern(&r, 11, stm, sizeof stm);
        cfg.affinity_emotive = q % 2 ? "joy" : NULL;
        cfg.max_predictions = q % 3 ? 100 : 4;
        cfg.recall_threshold = q % 5 ? 0.1 : 0.0;
        tdm_kato_result *a = ku_predict(kb, stm, &cfg), *b = ku_predict(copy, stm, &cfg);
        ku_results_same(a, b);
        tdm_kato_result_free(a), tdm_kato_result_free(b);
    }
    /* a pattern whose name does not match its events is refused */
    tdm_kato_pattern p;
    assert_int_equal(tdm_kato_kb_get(kb, 0, &p), TDM_OK);
    p.name[0] = p.name[0] == 'a' ? 'b' : 'a';
    tdm_kato_kb *third = new_kb();
    assert_int_equal(tdm_kato_kb_import(third, &p), TDM_E_CORRUPT);
    p.event_sizes[0]++;
    assert_int_equal(tdm_kato_kb_import(third, &p), TDM_E_CORRUPT);
    p.event_sizes[0]--;
    tdm_kato_pattern_free(&p);
    assert_int_equal(tdm_kato_kb_count(third), 0);
    assert_int_equal(tdm_kato_kb_set_affinity(third, "s1", 2, "joy", 1.0), TDM_E_NOTFOUND);
    tdm_kato_symbol sy;
    assert_int_equal(tdm_kato_kb_symbol_get(third, 0, &sy), TDM_E_RANGE);
    tdm_kato_kb_free(third);
    tdm_kato_kb_free(kb);
    tdm_kato_kb_free(copy);
}

int main(void) {
    tu_init_seed("test_kato_kb");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_learn_and_relearn),
        cmocka_unit_test(test_minimum_two_symbols),
        cmocka_unit_test(test_emotives_metadata_affinity),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_many_patterns),
        cmocka_unit_test(test_export_import),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
