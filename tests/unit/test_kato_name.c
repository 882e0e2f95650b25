/* test_kato_name.c: KATO pattern names (src/kato/name.c). The spec's SHA-1 vectors (spec/kato.md 1.3),
 * Python repr's quoting and escaping rules one by one (expected strings written from CPython 3.11's
 * behaviour), and bad input. The random comparison with CPython itself is tests/oracle/test_kato_oracle.py. */
#include "unit_common.h"

#include "tandem/kato.h"

/* events from a NULL-separated list of symbols, "|" starting a new event */
typedef struct {
    tdm_kato_event ev[8];
    const char *syms[8][8];
    size_t lens[8][8];
    size_t n;
} evs;

static void build(evs *e, const char *const *list) {
    memset(e, 0, sizeof *e);
    e->n = 1;
    for (size_t i = 0; list[i]; i++) {
        if (!strcmp(list[i], "|")) {
            e->n++;
            continue;
        }
        size_t k = e->ev[e->n - 1].n++;
        e->syms[e->n - 1][k] = list[i];
        e->lens[e->n - 1][k] = strlen(list[i]);
    }
    for (size_t j = 0; j < e->n; j++) e->ev[j].syms = e->syms[j], e->ev[j].lens = e->lens[j];
}

static void check_name(const char *const *list, const char *want) {
    evs e;
    build(&e, list);
    char name[41];
    assert_int_equal(tdm_kato_pattern_name(e.ev, e.n, name), TDM_OK);
    assert_string_equal(name, want);
}

static void check_repr(const char *const *list, const char *want) {
    evs e;
    build(&e, list);
    char *r;
    size_t len;
    assert_int_equal(tdm_kato_repr(e.ev, e.n, &r, &len), TDM_OK);
    assert_string_equal(r, want);
    assert_int_equal(len, strlen(want));
    tdm_free(r);
}

static void test_spec_vectors(void **state) {
    (void)state;
    check_name((const char *[]){"hello", "|", "world", NULL}, "7d0678ba6305341ce0d25133ab086208656a562f");
    check_name((const char *[]){"alpha", "|", "beta", "|", "gamma", NULL}, "24e0f524f26eecfb14849cf3b3b57c44f3e705c2");
    check_name((const char *[]){"a", "b", "|", "c", "d", NULL}, "0979c1024e7a5c6bf7c542ef1a2b8226d8fd50a3");
    check_name((const char *[]){"A", "|", "B", NULL}, "3651a86de198b54b13e1d7a02407dc4faaa622ff");
    check_name((const char *[]){"it's", "|", "x", NULL}, "271339250f33fe945c5a24f7deb31f02ce16ddb5");
    check_name((const char *[]){"\xC3\xBC", "|", "b", NULL}, "ee7646316b86cb2e33e0daa6d4771ace4620660c");
    check_name((const char *[]){"a\\b", "|", "c", NULL}, "928fef07414415b75a4768ca886c27dd52bfd169");
}

static void test_repr_rules(void **state) {
    (void)state;
    check_repr((const char *[]){"hello", "|", "world", NULL}, "[['hello'], ['world']]");
    check_repr((const char *[]){"a", "b", "|", "c", "d", NULL}, "[['a', 'b'], ['c', 'd']]");
    /* quote choice: ' unless the string has ' and no " */
    check_repr((const char *[]){"it's", NULL}, "[[\"it's\"]]");
    check_repr((const char *[]){"say \"hi\"", NULL}, "[['say \"hi\"']]");
    check_repr((const char *[]){"it's \"x\"", NULL}, "[['it\\'s \"x\"']]");
    /* escapes */
    check_repr((const char *[]){"a\\b", NULL}, "[['a\\\\b']]");
    check_repr((const char *[]){"t\tn\nr\r", NULL}, "[['t\\tn\\nr\\r']]");
    check_repr((const char *[]){"\x01\x1f\x7f", NULL}, "[['\\x01\\x1f\\x7f']]");
    check_repr((const char *[]){"", NULL}, "[['']]");
    /* non-ASCII: printable kept, non-printable escaped by size */
    check_repr((const char *[]){"\xC3\xBC\xE6\x97\xA5\xF0\x9F\x98\x80", NULL}, "[['\xC3\xBC\xE6\x97\xA5\xF0\x9F\x98\x80']]");
    check_repr((const char *[]){"\xC2\x85\xC2\xA0\xC2\xAD", NULL}, "[['\\x85\\xa0\\xad']]"); /* NEL, NBSP, soft hyphen */
    check_repr((const char *[]){"\xE2\x80\xA8\xEF\xBB\xBF", NULL}, "[['\\u2028\\ufeff']]");   /* line separator, BOM */
    check_repr((const char *[]){"\xF3\xA0\x80\x81\xF4\x8F\xBF\xBF", NULL}, "[['\\U000e0001\\U0010ffff']]");
    /* an empty event list and an empty event */
    evs e;
    char *r;
    size_t len;
    assert_int_equal(tdm_kato_repr(NULL, 0, &r, &len), TDM_OK);
    assert_string_equal(r, "[]");
    tdm_free(r);
    build(&e, (const char *[]){"a", "|", NULL});
    e.ev[1].n = 0;
    assert_int_equal(tdm_kato_repr(e.ev, 2, &r, &len), TDM_OK);
    assert_string_equal(r, "[['a'], []]");
    tdm_free(r);
}

static void test_bad_input(void **state) {
    (void)state;
    char name[41];
    evs e;
    build(&e, (const char *[]){"ok", "\xC3\x28", NULL}); /* invalid UTF-8 */
    assert_int_equal(tdm_kato_pattern_name(e.ev, e.n, name), TDM_E_UTF8);
    assert_non_null(strstr(tdm_last_error(), "symbol 1"));
    build(&e, (const char *[]){"\xED\xA0\x80", NULL}); /* a surrogate */
    assert_int_equal(tdm_kato_pattern_name(e.ev, e.n, name), TDM_E_UTF8);
    assert_int_equal(tdm_kato_pattern_name(NULL, 1, name), TDM_E_INVAL);
    build(&e, (const char *[]){"a", NULL});
    assert_int_equal(tdm_kato_pattern_name(e.ev, e.n, NULL), TDM_E_INVAL);
}

int main(void) {
    tu_init_seed("test_kato_name");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_vectors),
        cmocka_unit_test(test_repr_rules),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
