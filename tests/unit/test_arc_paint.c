/* test_arc_paint.c: grid construction and painting (spec §3.8): canvas sizes, clipped fills, the last-cell-wins rule of paint and first-non-background rule of underpaint, background from mostcolor ties, cover, move, replace, switch and cellwise.
 * Expected values: CPython 3.11 on a Python model of the spec (tests/arc/gen_unit_cases.py regenerates
 * the case lists from the .cases files in tests/arc/cases); "ERROR" marks calls that raise in Python. */
#include "arc_test_util.h"

static void test_paint(void **state) {
    (void)state;
    TA_CHECK("((5, 5, 5), (5, 5, 5))", "canvas", "5", "(2, 3)");
    TA_CHECK("()", "canvas", "5", "(0, 3)");
    TA_CHECK("((), ())", "canvas", "5", "(2, 0)");
    TA_CHECK("()", "canvas", "5", "(-1, 2)");
    TA_CHECK("ERROR", "canvas", "5", "2");
    TA_CHECK("((0, 2), (3, 0))", "fill", "((1, 2), (3, 4))", "0", "{(0, 0), (1, 1), (5, 5), (-1, 0)}");
    TA_CHECK("((1, 0), (3, 4))", "fill", "((1, 2), (3, 4))", "0", "{(7, (0, 1))}");
    TA_CHECK("((1, 2), (3, 4))", "fill", "((1, 2), (3, 4))", "0", "frozenset()");
    TA_CHECK("ERROR", "fill", "()", "0", "{(0, 0)}");
    TA_CHECK("((1, 7), (8, 4))", "paint", "((1, 2), (3, 4))", "{(7, (0, 1)), (8, (1, 0)), (9, (2, 2))}");
    TA_CHECK("((7, 2), (3, 4))", "paint", "((1, 2), (3, 4))", "{(7, (0, 0)), (8, (0, 0))}");
    TA_CHECK("((7, 2), (3, 4))", "paint", "((1, 2), (3, 4))", "{(8, (0, 0)), (7, (0, 0))}");
    TA_CHECK("((8, 2), (3, 4))", "paint", "((1, 2), (3, 4))", "((7, (0, 0)), (8, (0, 0)))");
    TA_CHECK("ERROR", "paint", "((1, 2), (3, 4))", "{(0, 0)}");
    TA_CHECK("ERROR", "paint", "()", "{(7, (0, 0))}");
    TA_CHECK("((5, 0, 1), (0, 2, 2))", "underfill", "((0, 0, 1), (0, 2, 2))", "5", "{(0, 0), (0, 2), (1, 1)}");
    TA_CHECK("((5, 0), (0, 8))", "underfill", "((8, 0), (0, 8))", "5", "{(0, 0), (0, 1)}");
    TA_CHECK("((5, 0, 1), (0, 2, 2))", "underpaint", "((0, 0, 1), (0, 2, 2))", "{(5, (0, 0)), (6, (0, 2))}");
    TA_CHECK("((5, 0, 1), (0, 2, 2))", "underpaint", "((0, 0, 1), (0, 2, 2))", "{(5, (0, 0)), (6, (0, 0))}");
    TA_CHECK("((6, 0, 1), (0, 2, 2))", "underpaint", "((0, 0, 1), (0, 2, 2))", "((0, (0, 0)), (6, (0, 0)))");
    TA_CHECK("((0, 0, 1), (0, 0, 0))", "cover", "((0, 0, 1), (0, 2, 2))", "{(2, (1, 1)), (2, (1, 2))}");
    TA_CHECK("((1, 1), (2, 2))", "cover", "((1, 1), (2, 2))", "{(0, 0)}");
    TA_CHECK("((0, 0, 0), (1, 2, 2))", "move", "((0, 0, 1), (0, 2, 2))", "{(1, (0, 2))}", "(1, -2)");
    TA_CHECK("((0, 0, 0), (0, 2, 2))", "move", "((0, 0, 1), (0, 2, 2))", "{(1, (0, 2))}", "(0, 5)");
    TA_CHECK("((9, 2), (2, 9))", "replace", "((1, 2), (2, 1))", "1", "9");
    TA_CHECK("((1, 2), (2, 1))", "replace", "((1, 2), (2, 1))", "3", "9");
    TA_CHECK("((2, 1), (1, 3))", "switch", "((1, 2), (2, 3))", "1", "2");
    TA_CHECK("((1, 2), (2, 3))", "switch", "((1, 2), (2, 3))", "2", "2");
    TA_CHECK("((1, 7), (3, 7))", "cellwise", "((1, 2), (3, 4))", "((1, 0), (3, 0))", "7");
    TA_CHECK("((1, 2), (3, 4))", "cellwise", "((1, 2), (3, 4))", "((1, 2, 5), (3, 4, 5), (0, 0, 0))", "7");
    TA_CHECK("ERROR", "cellwise", "((1, 2), (3, 4))", "((1, 2),)", "7");
}

int main(void) {
    tu_init_seed("test_arc_paint");
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_paint),};
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
