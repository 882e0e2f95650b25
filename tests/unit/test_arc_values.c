/* test_arc_values.c: unit tests of the ARC DSL's values: CPython 3.11's hashes (the spec's test vectors,
 * §4.4), Python equality and ordering (§1.6, §0), and the set-table layout rules (§4.5-4.6, §4.9): the
 * iteration order after insertion, growth, copy (freeze re-lays 5-7 elements), union, difference and
 * intersection. Expected orders were printed by CPython 3.11.7. */
#include "arc_test_util.h"

static void test_hash_vectors(void **state) {
    (void)state;
    assert_true(arc_hash(ta_parse("()")) == 5740354900026072187ll);
    assert_true(arc_hash(ta_parse("(0, 0)")) == -8458139203682520985ll);
    assert_true(arc_hash(ta_parse("(1, (2, 3))")) == 7267574591690527098ll);
    assert_true(arc_hash(ta_parse("(-1,)")) == 8078679518589016365ll);
    assert_true(arc_hash(ta_parse("(-2,)")) == 8078679518589016365ll);
    assert_true(arc_hash(ta_parse("((0, 1), (2, 3))")) == 8408620485545502573ll);
    assert_true(arc_hash(ta_parse("frozenset()")) == 133146708735736ll);
    assert_true(arc_hash(ta_parse("{(0, 0)}")) == 4106448062860913137ll);
    assert_true(arc_hash(ta_parse("{1, 2, 3}")) == -272375401224217160ll);
    assert_true(arc_hash(ta_parse("{(1, (2, 3)), (4, (5, 6))}")) == 7017231347868284342ll);
    assert_true(arc_hash(ta_parse("{{(1, (2, 3)), (4, (5, 6))}, frozenset()}")) == 168026136757278293ll);
    /* ints: -1 hashes as -2, values reduce modulo 2^61 - 1, bools as ints */
    assert_true(arc_hash(arc_int(ta_rt, -1)) == -2);
    assert_true(arc_hash(arc_int(ta_rt, (int64_t)1 << 61)) == 1);
    assert_true(arc_hash(arc_int(ta_rt, -((int64_t)1 << 61) - 5)) == -6);
    assert_true(arc_hash(arc_bool(1)) == 1 && arc_hash(arc_bool(0)) == 0);
    /* a frozenset's hash does not depend on its layout */
    assert_true(arc_hash(ta_parse("{9, 2, 5, 1, 17}")) == arc_hash(ta_parse("{1, 2, 5, 9, 17}")));
}

static void test_equality(void **state) {
    (void)state;
    assert_true(arc_eq(ta_parse("{(1, 2), (3, 4)}"), ta_parse("{(3, 4), (1, 2)}")));
    assert_true(arc_eq(ta_parse("True"), ta_parse("1")));
    assert_true(arc_eq(ta_parse("((True,),)"), ta_parse("((1,),)")));
    assert_false(arc_eq(ta_parse("(1, 2)"), ta_parse("{1, 2}")));
    assert_false(arc_eq(ta_parse("1"), ta_parse("(1,)")));
    assert_false(arc_eq(ta_parse("()"), ta_parse("((),)")));
    assert_false(arc_eq(ta_parse("None"), ta_parse("0")));
    assert_true(arc_eq(ta_parse("None"), ta_parse("None")));
    assert_false(arc_eq(ta_parse("{1, 2}"), ta_parse("{1, 2, 3}")));
    /* functions: identity only */
    assert_true(arc_eq(ta_parse("size"), ta_parse("size")));
    assert_false(arc_eq(ta_parse("size"), ta_parse("width")));
}

static void test_ordering(void **state) {
    (void)state;
    assert_int_equal(arc_cmp(ta_rt, ta_parse("(1, 2)"), ta_parse("(1, 3)"), 0), 1);
    assert_int_equal(arc_cmp(ta_rt, ta_parse("(1, 2)"), ta_parse("(1, 2, 0)"), 0), 1);  /* a prefix is smaller */
    assert_int_equal(arc_cmp(ta_rt, ta_parse("(2,)"), ta_parse("(1, 9)"), 1), 1);
    assert_int_equal(arc_cmp(ta_rt, ta_parse("True"), ta_parse("0"), 1), 1);
    assert_int_equal(arc_cmp(ta_rt, ta_parse("{1}"), ta_parse("{1, 2}"), 0), 1);      /* proper subset */
    assert_int_equal(arc_cmp(ta_rt, ta_parse("{1, 3}"), ta_parse("{1, 2}"), 0), 0);   /* incomparable */
    assert_int_equal(arc_cmp(ta_rt, ta_parse("{1, 3}"), ta_parse("{1, 2}"), 1), 0);
    assert_int_equal(arc_cmp(ta_rt, ta_parse("{1, 2}"), ta_parse("{1}"), 1), 1);
    tdm_arc_rt_reset(ta_rt);
    assert_int_equal(arc_cmp(ta_rt, ta_parse("1"), ta_parse("(1,)"), 0), -1); /* TypeError */
    assert_true(strstr(tdm_arc_rt_error(ta_rt), "not supported") != NULL);
    tdm_arc_rt_reset(ta_rt);
    /* the first unequal position decides, even if later ones could not be compared */
    assert_int_equal(arc_cmp(ta_rt, ta_parse("(1, 5)"), ta_parse("(2, (0,))"), 0), 1);
}

static void check_repr(tdm_arc_val *v, const char *want) {
    char *got = ta_repr(v);
    if (strcmp(got, want)) {
        print_error("repr %s, want %s\n", got, want);
        free(got);
        fail();
    }
    free(got);
}

static void test_layouts(void **state) {
    (void)state;
    /* spec 4.9: 9 collides into slot 1; 8 into slot 0 */
    check_repr(ta_parse("{2, 9}"), "frozenset({9, 2})");
    check_repr(ta_parse("{1, 2, 3, 8}"), "frozenset({8, 1, 2, 3})");
    check_repr(ta_parse("{8, 0}"), "frozenset({8, 0})");
    /* growth: 8 slots hold 4, the 5th insert grows to 32; the 19th to 128 */
    tdm_arc_val *s = arc_set_new(ta_rt);
    for (int k = 0; k < 19; k++) {
        assert_int_equal(arc_set_add(ta_rt, s, arc_int(ta_rt, k * 7)), 0);
        assert_int_equal(s->u.set.mask + 1, k < 4 ? 8 : k < 18 ? 32 : 128);
    }
    assert_int_equal(arc_set_add(ta_rt, s, arc_int(ta_rt, 7)), 0); /* present: no change */
    assert_int_equal(s->n, 19);
    /* freeze re-lays 5-7 elements from 32 into 16 slots, so the copy iterates differently */
    s = arc_set_new(ta_rt);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) arc_set_add(ta_rt, s, arc_ipair(ta_rt, i, j));
    check_repr(s, "frozenset({(0, 1), (2, 1), (0, 0), (1, 1), (2, 0), (1, 0)})");
    tdm_arc_val *f = arc_set_copy(ta_rt, s);
    check_repr(f, "frozenset({(0, 1), (2, 1), (0, 0), (1, 0), (1, 1), (2, 0)})");
    assert_int_equal(f->u.set.mask + 1, 16);
    assert_true(arc_eq(s, f));
    /* composite operations */
    tdm_arc_val *a = ta_parse("{(0, 0), (0, 1), (1, 0), (5, 5), (2, 2), (3, 3)}"), *b = ta_parse("{(0, 1), (5, 5)}");
    check_repr(arc_set_union(ta_rt, a, b), "frozenset({(0, 1), (5, 5), (3, 3), (2, 2), (0, 0), (1, 0)})");
    check_repr(arc_set_minus(ta_rt, a, b), "frozenset({(1, 0), (3, 3), (2, 2), (0, 0)})");
    check_repr(arc_set_meet(ta_rt, a, b), "frozenset({(0, 1), (5, 5)})");
    check_repr(arc_set_meet(ta_rt, b, a), "frozenset({(0, 1), (5, 5)})");
    /* the copy-and-delete branch of difference (len(a) // 4 > len(b)) */
    tdm_arc_val *sq = arc_set_new(ta_rt);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) arc_set_add(ta_rt, sq, arc_ipair(ta_rt, i, j));
    check_repr(arc_set_minus(ta_rt, sq, ta_parse("{(1, 1), (2, 2)}")),
               "frozenset({(0, 1), (1, 2), (2, 1), (3, 1), (0, 2), (1, 0), (3, 2), (1, 3), (0, 0), (0, 3), (2, 0), (3, 0), "
               "(2, 3), (3, 3)})");
}

static void test_grids_and_repr(void **state) {
    (void)state;
    int cells[6] = {1, 2, 3, 4, 5, 6}, back[6], h, w;
    tdm_arc_val *g;
    assert_int_equal(tdm_arc_grid_new(ta_rt, 2, 3, cells, &g), TDM_OK);
    check_repr(g, "((1, 2, 3), (4, 5, 6))");
    assert_int_equal(tdm_arc_grid_read(g, &h, &w, back, 6), TDM_OK);
    assert_int_equal(h, 2);
    assert_int_equal(w, 3);
    assert_memory_equal(back, cells, sizeof cells);
    assert_int_equal(tdm_arc_grid_new(ta_rt, 0, 3, NULL, &g), TDM_OK);
    check_repr(g, "()");
    assert_int_equal(tdm_arc_grid_new(ta_rt, 2, 0, NULL, &g), TDM_OK);
    check_repr(g, "((), ())");
    assert_int_equal(tdm_arc_grid_read(ta_parse("((1, 2), (3,))"), &h, &w, NULL, 0), TDM_E_INVAL);
    assert_int_equal(tdm_arc_grid_read(ta_parse("{1}"), &h, &w, NULL, 0), TDM_E_INVAL);
    check_repr(ta_parse("(1,)"), "(1,)");
    check_repr(ta_parse("frozenset()"), "frozenset()");
    check_repr(ta_parse("(True, None, size)"), "(True, None, <function size>)");
    assert_int_equal(tdm_arc_grid_new(ta_rt, -1, 3, cells, &g), TDM_E_INVAL);
}

static void test_prim_table(void **state) {
    (void)state;
    assert_int_equal(tdm_arc_prim_count(), 160);
    int id;
    assert_int_equal(tdm_arc_prim_lookup("objects", &id), TDM_OK);
    assert_string_equal(tdm_arc_prim_name(id), "objects");
    assert_int_equal(tdm_arc_prim_arity(id), 4);
    assert_int_equal(tdm_arc_prim_lookup("nosuch", &id), TDM_E_NOTFOUND);
    for (int k = 1; k < 160; k++) assert_true(strcmp(tdm_arc_prim_name(k - 1), tdm_arc_prim_name(k)) < 0);
    const tdm_arc_val *v;
    assert_int_equal(tdm_arc_name_value(ta_rt, "THREE_BY_THREE", &v), TDM_OK);
    check_repr((tdm_arc_val *)v, "(3, 3)");
    assert_int_equal(tdm_arc_name_value(ta_rt, "T", &v), TDM_OK);
    check_repr((tdm_arc_val *)v, "True");
    assert_int_equal(tdm_arc_name_value(ta_rt, "NEG_TWO", &v), TDM_OK);
    check_repr((tdm_arc_val *)v, "-2");
    assert_int_equal(tdm_arc_name_value(ta_rt, "size", &v), TDM_OK);
    assert_true(v == tdm_arc_prim_value(tdm_arc_prim_lookup("size", &id) == TDM_OK ? id : -1));
    assert_int_equal(tdm_arc_name_value(ta_rt, "ELEVEN", &v), TDM_E_NOTFOUND);
}

int main(void) {
    tu_init_seed("test_arc_values");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_vectors), cmocka_unit_test(test_equality), cmocka_unit_test(test_ordering),
        cmocka_unit_test(test_layouts),      cmocka_unit_test(test_grids_and_repr), cmocka_unit_test(test_prim_table),
    };
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
