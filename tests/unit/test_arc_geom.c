/* test_arc_geom.c: patch geometry (spec §3.6): extents, corners, sizes and shape predicates, matching and distances, centres, shift/normalize, the mirrors of grids and patches, gravitate and the periods.
 * Expected values: CPython 3.11 on a Python model of the spec (tests/arc/gen_unit_cases.py regenerates
 * the case lists from the .cases files in tests/arc/cases); "ERROR" marks calls that raise in Python. */
#include "arc_test_util.h"

static void test_geom(void **state) {
    (void)state;
    TA_CHECK("1", "uppermost", "{(3, 1), (1, 4)}");
    TA_CHECK("3", "lowermost", "{(3, 1), (1, 4)}");
    TA_CHECK("1", "leftmost", "{(5, (3, 1)), (5, (1, 4))}");
    TA_CHECK("4", "rightmost", "{(5, (3, 1)), (5, (1, 4))}");
    TA_CHECK("ERROR", "uppermost", "frozenset()");
    TA_CHECK("(1, 1)", "ulcorner", "{(3, 1), (1, 4)}");
    TA_CHECK("(1, 4)", "urcorner", "{(3, 1), (1, 4)}");
    TA_CHECK("(3, 1)", "llcorner", "{(3, 1), (1, 4)}");
    TA_CHECK("(3, 4)", "lrcorner", "{(3, 1), (1, 4)}");
    TA_CHECK("()", "ulcorner", "frozenset()");
    TA_CHECK("()", "lrcorner", "frozenset()");
    TA_CHECK("3", "height", "((1, 2), (3, 4), (5, 6))");
    TA_CHECK("3", "height", "{(3, 1), (1, 4)}");
    TA_CHECK("0", "height", "frozenset()");
    TA_CHECK("0", "height", "()");
    TA_CHECK("2", "width", "((1, 2), (3, 4), (5, 6))");
    TA_CHECK("4", "width", "{(3, 1), (1, 4)}");
    TA_CHECK("0", "width", "()");
    TA_CHECK("0", "width", "((), ())");
    TA_CHECK("ERROR", "width", "(1, 2)");
    TA_CHECK("(3, 4)", "shape", "{(1, (3, 1)), (1, (1, 4))}");
    TA_CHECK("(1, 3)", "shape", "((1, 2, 3),)");
    TA_CHECK("True", "portrait", "((1,), (2,))");
    TA_CHECK("False", "portrait", "{(0, 0), (0, 1)}");
    TA_CHECK("True", "square", "((1, 2), (3, 4))");
    TA_CHECK("ERROR", "square", "()");
    TA_CHECK("False", "square", "{(0, 0), (1, 1)}");
    TA_CHECK("True", "square", "{(0, 0), (0, 1), (1, 0), (1, 1)}");
    TA_CHECK("True", "square", "frozenset()");
    TA_CHECK("True", "vline", "{(0, 0), (1, 0), (2, 0)}");
    TA_CHECK("False", "vline", "{(1, (0, 0)), (2, (0, 0))}");
    TA_CHECK("False", "vline", "frozenset()");
    TA_CHECK("True", "hline", "{(0, 0), (0, 1)}");
    TA_CHECK("False", "hline", "{(0, 0), (0, 2)}");
    TA_CHECK("True", "hmatching", "{(0, 0), (2, 2)}", "{(2, 5)}");
    TA_CHECK("False", "hmatching", "{(0, 0)}", "{(1, 0)}");
    TA_CHECK("False", "hmatching", "frozenset()", "{(1, 0)}");
    TA_CHECK("True", "vmatching", "{(0, 0)}", "{(1, 0)}");
    TA_CHECK("4", "manhattan", "{(0, 0), (5, 5)}", "{(2, 3), (7, 7)}");
    TA_CHECK("ERROR", "manhattan", "frozenset()", "{(1, 1)}");
    TA_CHECK("True", "adjacent", "{(0, 0)}", "{(0, 1)}");
    TA_CHECK("False", "adjacent", "{(0, 0)}", "{(1, 1)}");
    TA_CHECK("False", "adjacent", "{(0, 0)}", "{(0, 0)}");
    TA_CHECK("True", "bordering", "{(0, 3)}", "((1, 2), (3, 4))");
    TA_CHECK("True", "bordering", "{(1, 1)}", "((1, 2), (3, 4), (5, 6))");
    TA_CHECK("True", "bordering", "{(2, 1)}", "((1, 2), (3, 4), (5, 6))");
    TA_CHECK("False", "bordering", "{(1, 1)}", "((1, 2, 3), (3, 4, 5), (5, 6, 7))");
    TA_CHECK("ERROR", "bordering", "frozenset()", "((1, 2),)");
    TA_CHECK("True", "bordering", "{(0, 3)}", "()");
    TA_CHECK("ERROR", "bordering", "{(3, 3)}", "()");
    TA_CHECK("(1, 2)", "centerofmass", "{(0, 0), (1, 1), (2, 5)}");
    TA_CHECK("(1, 1)", "centerofmass", "{(1, (0, 0)), (2, (0, 0)), (1, (3, 3))}");
    TA_CHECK("(-2, -1)", "centerofmass", "{(-1, -1), (-2, 0)}");
    TA_CHECK("()", "centerofmass", "frozenset()");
    TA_CHECK("(1, 3)", "center", "{(0, 0), (1, 1), (2, 5)}");
    TA_CHECK("(0, 1)", "center", "{(0, 0), (0, 1)}");
    TA_CHECK("ERROR", "center", "frozenset()");
    TA_CHECK("(0, 1)", "position", "{(0, 0)}", "{(0, 5)}");
    TA_CHECK("(0, -1)", "position", "{(0, 5)}", "{(0, 0)}");
    TA_CHECK("(1, 0)", "position", "{(0, 0)}", "{(5, 0)}");
    TA_CHECK("(-1, -1)", "position", "{(3, 3)}", "{(0, 0)}");
    TA_CHECK("(0, -1)", "position", "{(0, 0)}", "{(0, 0)}");
    TA_CHECK("frozenset({(1, -1), (2, 1)})", "shift", "{(0, 0), (1, 2)}", "(1, -1)");
    TA_CHECK("frozenset({(6, (-2, 5)), (5, (-3, 3))})", "shift", "{(5, (0, 0)), (6, (1, 2))}", "(-3, 3)");
    TA_CHECK("frozenset()", "shift", "frozenset()", "(1, 1)");
    TA_CHECK("ERROR", "shift", "{(0, 0)}", "(1, 1, 1)");
    TA_CHECK("ERROR", "shift", "{(0, 0)}", "1");
    TA_CHECK("frozenset({(2, 2), (0, 0)})", "normalize", "{(2, 3), (4, 5)}");
    TA_CHECK("frozenset({(2, (6, 0)), (1, (0, 8))})", "normalize", "{(1, (-2, 3)), (2, (4, -5))}");
    TA_CHECK("frozenset()", "normalize", "frozenset()");
    TA_CHECK("((5, 6), (3, 4), (1, 2))", "hmirror", "((1, 2), (3, 4), (5, 6))");
    TA_CHECK("frozenset({(0, 2), (1, 2), (2, 0)})", "hmirror", "{(0, 0), (1, 2), (2, 2)}");
    TA_CHECK("frozenset({(2, (0, 2)), (1, (1, 0))})", "hmirror", "{(1, (0, 0)), (2, (1, 2))}");
    TA_CHECK("ERROR", "hmirror", "frozenset()");
    TA_CHECK("()", "hmirror", "()");
    TA_CHECK("((2, 1), (4, 3))", "vmirror", "((1, 2), (3, 4))");
    TA_CHECK("frozenset({(1, 0), (0, 2), (2, 0)})", "vmirror", "{(0, 0), (1, 2), (2, 2)}");
    TA_CHECK("()", "vmirror", "()");
    TA_CHECK("((1, 4), (2, 5), (3, 6))", "dmirror", "((1, 2, 3), (4, 5, 6))");
    TA_CHECK("frozenset({(2, (2, 2)), (1, (0, 1)), (3, (1, 3))})", "dmirror", "{(1, (0, 1)), (2, (1, 3)), (3, (2, 2))}");
    TA_CHECK("()", "dmirror", "()");
    TA_CHECK("((6, 3), (5, 2), (4, 1))", "cmirror", "((1, 2, 3), (4, 5, 6))");
    TA_CHECK("frozenset({(2, (0, 2)), (3, (1, 1)), (1, (2, 3))})", "cmirror", "{(1, (0, 1)), (2, (1, 3)), (3, (2, 2))}");
    TA_CHECK("frozenset({(0, 1), (3, 4), (4, 6), (1, 4), (2, 5)})", "cmirror", "{(0, 1), (1, 3), (2, 2), (5, 5), (2, 4)}");
    TA_CHECK("(0, 4)", "gravitate", "{(0, 0)}", "{(0, 5)}");
    TA_CHECK("(4, 0)", "gravitate", "{(0, 0)}", "{(5, 0)}");
    TA_CHECK("(-4, 0)", "gravitate", "{(5, 5)}", "{(0, 5)}");
    TA_CHECK("(0, 0)", "gravitate", "{(0, 0)}", "{(0, 1)}");
    TA_CHECK("(0, 42)", "gravitate", "{(0, 0)}", "{(3, 3)}");
    TA_CHECK("(-1, 0)", "gravitate", "{(0, 0)}", "{(0, 0)}");
    TA_CHECK("ERROR", "gravitate", "frozenset()", "{(0, 0)}");
    TA_CHECK("2", "hperiod", "{(1, (0, 0)), (2, (0, 1)), (1, (0, 2)), (2, (0, 3))}");
    TA_CHECK("3", "hperiod", "{(1, (0, 0)), (2, (0, 1)), (3, (0, 2))}");
    TA_CHECK("1", "hperiod", "{(1, (5, 5))}");
    TA_CHECK("0", "hperiod", "frozenset()");
    TA_CHECK("ERROR", "hperiod", "{(0, 0), (0, 1)}");
    TA_CHECK("1", "hperiod", "{(0, 0)}");
    TA_CHECK("1", "vperiod", "{(1, (0, 0)), (1, (1, 0)), (1, (2, 0))}");
    TA_CHECK("3", "vperiod", "{(1, (0, 0)), (2, (1, 0)), (3, (2, 0)), (1, (3, 0)), (2, (4, 0))}");
    /* a tuple of positions is measured as a grid by height/width (rows, length of row 0), so its centre differs */
    TA_CHECK("(1, 1)", "center", "((0, 0), (1, 5), (2, 2))");
    TA_CHECK("(0, -1)", "position", "((0, 0), (1, 5), (2, 2))", "{(1, 0)}");
    TA_CHECK("(2, 0)", "gravitate", "((0, 0), (0, 5))", "{(3, 0)}");
}

int main(void) {
    tu_init_seed("test_arc_geom");
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_geom),};
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
