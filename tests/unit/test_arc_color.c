/* test_arc_color.c: colour statistics (spec §3.4): mostcolor/leastcolor ties that follow the CPython layout of the colour set (8 and 9 collide with 0 and 1 in 8 slots), colour counts and palettes of grids, objects and Indices, and the first-cell rule of color/colorfilter.
 * Expected values: CPython 3.11 on a Python model of the spec (tests/arc/gen_unit_cases.py regenerates
 * the case lists from the .cases files in tests/arc/cases); "ERROR" marks calls that raise in Python. */
#include "arc_test_util.h"

static void test_color(void **state) {
    (void)state;
    TA_CHECK("2", "mostcolor", "((1, 1, 2), (2, 2, 0))");
    TA_CHECK("8", "mostcolor", "((8, 0), (0, 8))");
    TA_CHECK("0", "mostcolor", "((0, 8), (8, 0))");
    TA_CHECK("9", "mostcolor", "((2, 9), (9, 2))");
    TA_CHECK("1", "mostcolor", "((1, 2, 3, 4, 5), (5, 4, 3, 2, 1))");
    TA_CHECK("3", "mostcolor", "{(3, (0, 0)), (3, (1, 1)), (4, (0, 1))}");
    TA_CHECK("0", "mostcolor", "{(0, 0), (0, 1), (1, 1)}");
    TA_CHECK("ERROR", "mostcolor", "()");
    TA_CHECK("ERROR", "mostcolor", "frozenset()");
    TA_CHECK("ERROR", "mostcolor", "((), ())");
    TA_CHECK("0", "leastcolor", "((1, 1, 2), (2, 2, 0))");
    TA_CHECK("8", "leastcolor", "((8, 0), (0, 9))");
    TA_CHECK("4", "leastcolor", "{(3, (0, 0)), (3, (1, 1)), (4, (0, 1))}");
    TA_CHECK("ERROR", "leastcolor", "()");
    TA_CHECK("3", "colorcount", "((1, 1, 2), (2, 2, 0))", "2");
    TA_CHECK("2", "colorcount", "{(3, (0, 0)), (3, (1, 1)), (4, (0, 1))}", "3");
    TA_CHECK("2", "colorcount", "{(0, 0), (0, 1), (1, 1)}", "0");
    TA_CHECK("0", "colorcount", "()", "1");
    TA_CHECK("frozenset({0, 1, 2, 9})", "palette", "((1, 1, 2), (9, 2, 0))");
    TA_CHECK("frozenset({8, 1, 2, 3})", "palette", "((8, 1), (2, 3))");
    TA_CHECK("frozenset({0, 1, 2, 3, 4, 5, 6, 7, 8, 9})", "palette", "((0, 1, 2, 3, 4, 5, 6, 7, 8, 9),)");
    TA_CHECK("frozenset({3, 4})", "palette", "{(3, (0, 0)), (3, (1, 1)), (4, (0, 1))}");
    TA_CHECK("frozenset({2, 5})", "palette", "{(2, 0), (5, 1)}");
    TA_CHECK("frozenset()", "palette", "()");
    TA_CHECK("frozenset()", "palette", "frozenset()");
    TA_CHECK("4", "numcolors", "((1, 1, 2), (9, 2, 0))");
    TA_CHECK("0", "numcolors", "frozenset()");
    TA_CHECK("3", "color", "{(3, (0, 0))}");
    TA_CHECK("4", "color", "{(3, (0, 0)), (9, (1, 1)), (4, (0, 1))}");
    TA_CHECK("ERROR", "color", "frozenset()");
    TA_CHECK("5", "color", "{(5, 7)}");
    TA_CHECK("frozenset({frozenset({(3, (0, 0))}), frozenset({(3, (5, 5))})})", "colorfilter", "{{(3, (0, 0))}, {(4, (1, 1)), (4, (0, 1))}, {(3, (5, 5))}}", "3");
    TA_CHECK("ERROR", "colorfilter", "{{(3, (0, 0))}, frozenset()}", "3");
    TA_CHECK("frozenset()", "colorfilter", "frozenset()", "3");
}

int main(void) {
    tu_init_seed("test_arc_color");
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_color),};
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
