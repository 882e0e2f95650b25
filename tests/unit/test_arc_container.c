/* test_arc_container.c: container primitives (spec §3.2): type-preserving rebuilds, set layouts of the results, the selection rules (first, last, argmax ties, mostcommon over the set layout) and the empty and error cases.
 * Expected values: CPython 3.11 on a Python model of the spec (tests/arc/gen_unit_cases.py regenerates
 * the case lists from the .cases files in tests/arc/cases); "ERROR" marks calls that raise in Python. */
#include "arc_test_util.h"

static void test_container(void **state) {
    (void)state;
    TA_CHECK("3", "size", "(1, 2, 3)");
    TA_CHECK("2", "size", "{(1, 2), (3, 4)}");
    TA_CHECK("3", "size", "((1, 2), (3, 4), (5, 6))");
    TA_CHECK("ERROR", "size", "5");
    TA_CHECK("(1, 2, 2, 3)", "combine", "(1, 2)", "(2, 3)");
    TA_CHECK("frozenset({1, 2, 3, 9})", "combine", "{1, 2}", "{9, 3}");
    TA_CHECK("(1, 2, 9, 2, 17)", "combine", "(1, 2)", "{9, 2, 17}");
    TA_CHECK("frozenset({(5, 1), (0, 0)})", "combine", "{(0, 0), (5, 1)}", "frozenset()");
    TA_CHECK("ERROR", "combine", "1", "(1,)");
    TA_CHECK("frozenset({9, 3})", "intersection", "{1, 2, 3, 9}", "{9, 3, 4}");
    TA_CHECK("frozenset({(0, 1), (2, 2)})", "intersection", "{(0, 1), (1, 1), (2, 2), (3, 3), (4, 4)}", "{(2, 2), (0, 1), (7, 7)}");
    TA_CHECK("ERROR", "intersection", "(1, 2)", "{1}");
    TA_CHECK("frozenset({1, 2, 9})", "difference", "{1, 2, 3, 9}", "{3}");
    TA_CHECK("(2, 3)", "difference", "(1, 2, 1, 3)", "(1,)");
    TA_CHECK("frozenset({(1, 0), (1, 1), (3, 3), (0, 0)})", "difference", "{(0, 0), (0, 1), (1, 0), (1, 1), (2, 2), (3, 3)}", "((0, 1), (2, 2))");
    TA_CHECK("ERROR", "difference", "{1, 2}", "5");
    TA_CHECK("(3, 1, 2)", "dedupe", "(3, 1, 3, 2, 1)");
    TA_CHECK("()", "dedupe", "()");
    TA_CHECK("ERROR", "dedupe", "{1, 2}");
    TA_CHECK("((2, 0), (1, 2), (3, 3), (0, 5))", "order", "{(1, 2), (0, 5), (3, 3), (2, 0)}", "last");
    TA_CHECK("(1, 3, 5, 9)", "order", "(5, 3, 9, 1)", "identity");
    TA_CHECK("(frozenset({(1, 1)}), frozenset({(5, 5)}), frozenset({(0, 1), (0, 0)}), frozenset({(4, 4), (3, 3), (2, 2)}))", "order", "{{(1, 1)}, {(0, 0), (0, 1)}, {(5, 5)}, {(2, 2), (3, 3), (4, 4)}}", "size");
    TA_CHECK("ERROR", "order", "(1, (2,))", "identity");
    TA_CHECK("(7, 7, 7)", "repeat", "7", "3");
    TA_CHECK("((1, 2), (1, 2), (1, 2), (1, 2), (1, 2), (1, 2), (1, 2))", "repeat", "(1, 2)", "7"); /* four a turn, then three */
    TA_CHECK("(0, 0, 0, 0, 0, 0, 0, 0)", "repeat", "0", "8");
    TA_CHECK("()", "repeat", "(1, 2)", "0");
    TA_CHECK("()", "repeat", "1", "-2");
    TA_CHECK("(1, 2, 3)", "merge", "((1, 2), (3,), ())");
    TA_CHECK("frozenset({9, 2, 3, 1})", "merge", "{{1, 2}, {2, 3, 9}}");
    TA_CHECK("(9, 2, 1, 17, 33)", "merge", "({9, 2}, {1, 17, 33})");
    TA_CHECK("()", "merge", "()");
    TA_CHECK("frozenset()", "merge", "frozenset()");
    TA_CHECK("ERROR", "merge", "(1, 2)");
    TA_CHECK("9", "maximum", "{3, 9, 1}");
    TA_CHECK("2", "minimum", "(4, 2, 8)");
    TA_CHECK("0", "maximum", "frozenset()");
    TA_CHECK("0", "minimum", "()");
    TA_CHECK("(1, 5)", "maximum", "{(1, 2), (1, 5), (0, 9)}");
    TA_CHECK("ERROR", "maximum", "{1, (1, 2)}");
    TA_CHECK("3", "valmax", "{(1, 2), (3, 4)}", "first");
    TA_CHECK("1", "valmin", "{(1, 2), (3, 4)}", "first");
    TA_CHECK("ERROR", "valmax", "frozenset()", "size");
    TA_CHECK("0", "valmax", "()", "identity");
    TA_CHECK("frozenset({(6, 6), (5, 5)})", "argmax", "{{(1, 1)}, {(0, 0), (0, 1)}, {(5, 5), (6, 6)}}", "size");
    TA_CHECK("frozenset({(1, 1)})", "argmin", "{{(1, 1)}, {(0, 0), (0, 1)}, {(5, 5)}}", "size");
    TA_CHECK("ERROR", "argmax", "()", "size");
    TA_CHECK("(3, 0)", "argmax", "{(3, 0), (1, 1), (2, 5)}", "identity");
    TA_CHECK("frozenset({1, 2})", "argmax", "({1, 2}, {1}, {3})", "identity");
    TA_CHECK("frozenset({2})", "argmin", "({1, 2}, {2}, {1})", "identity");
    TA_CHECK("1", "mostcommon", "(1, 2, 2, 1, 3)");
    TA_CHECK("9", "mostcommon", "(9, 2, 2, 9)");
    TA_CHECK("1", "leastcommon", "(1, 2, 2, 1, 3, 3)");
    TA_CHECK("ERROR", "mostcommon", "{1, 2}");
    TA_CHECK("ERROR", "mostcommon", "()");
    TA_CHECK("frozenset({(1, 2)})", "initset", "(1, 2)");
    TA_CHECK("(2, 4)", "sfilter", "(1, 2, 3, 4)", "even");
    TA_CHECK("frozenset({2, 10, 4})", "sfilter", "{1, 2, 3, 4, 9, 10}", "even");
    TA_CHECK("ERROR", "mfilter", "{{1, 2}, {3}, {4, 5, 6}}", "even");
    TA_CHECK("frozenset({1, 2, 3, 4, 5, 6})", "mfilter", "{{1, 2}, {3}, {4, 5, 6}}", "size");
    TA_CHECK("(1, 2, 3, 4, 5)", "mfilter", "((1, 2), (3,), (4, 5))", "size");
    TA_CHECK("4", "extract", "(1, 3, 4, 6)", "even");
    TA_CHECK("ERROR", "extract", "{1, 3, 5}", "even");
    TA_CHECK("(9, 2, 17)", "totuple", "{9, 2, 17}");
    TA_CHECK("(1, 2)", "totuple", "(1, 2)");
    TA_CHECK("9", "first", "{9, 2, 17}");
    TA_CHECK("(1, 2)", "first", "((1, 2), (3, 4))");
    TA_CHECK("ERROR", "first", "frozenset()");
    TA_CHECK("ERROR", "first", "()");
    TA_CHECK("17", "last", "{9, 2, 17}");
    TA_CHECK("3", "last", "(1, 2, 3)");
    TA_CHECK("ERROR", "last", "frozenset()");
    TA_CHECK("frozenset({1, 2, 3, 4, 5})", "insert", "5", "{1, 2, 3, 4}");
    TA_CHECK("frozenset({(0, 0)})", "insert", "(0, 0)", "frozenset()");
    TA_CHECK("ERROR", "insert", "1", "(2,)");
    TA_CHECK("(1, 3)", "remove", "2", "(1, 2, 3, 2)");
    TA_CHECK("frozenset({1, 10, 3})", "remove", "2", "{1, 2, 3, 10}");
    TA_CHECK("2", "other", "{1, 2}", "1");
    TA_CHECK("ERROR", "other", "{5}", "5");
    TA_CHECK("(0, 2, 4)", "interval", "0", "5", "2");
    TA_CHECK("(5, 3, 1)", "interval", "5", "0", "-2");
    TA_CHECK("()", "interval", "1", "1", "1");
    TA_CHECK("ERROR", "interval", "0", "3", "0");
    TA_CHECK("frozenset({(2, 3), (2, 9), (1, 3), (1, 9)})", "product", "{1, 2}", "{9, 3}");
    TA_CHECK("frozenset()", "product", "(1, 2)", "()");
    TA_CHECK("((1, 4), (2, 5))", "pair", "(1, 2, 3)", "(4, 5)");
    TA_CHECK("((9, 0), (2, 1))", "pair", "{9, 2}", "(0, 1)");
    TA_CHECK("frozenset({(4, 5), (1, 2)})", "sizefilter", "{(1, 2), (3,), (4, 5)}", "2");
    TA_CHECK("frozenset({(3,)})", "sizefilter", "((1, 2), (3,), (4, 5))", "1");
    TA_CHECK("ERROR", "sizefilter", "(1, 2)", "1");
    /* a & a and a | a are copies in CPython (a copy of 5-7 elements is re-laid into 16 slots) */
    TA_PROG("frozenset({(0, 1), (0, 2), (1, 2), (0, 0), (1, 0), (1, 1)})", "((1, 2, 3), (4, 5, 6))", "x1 = asindices(I)\nO = intersection(x1, x1)");
    TA_PROG("((0, 1), (0, 2), (1, 2), (0, 0), (1, 0), (1, 1))", "((1, 2, 3), (4, 5, 6))", "x1 = asindices(I)\nx2 = intersection(x1, x1)\nO = totuple(x2)");
}

int main(void) {
    tu_init_seed("test_arc_container");
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_container),};
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
