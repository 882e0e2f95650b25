/* test_arc_patch.c: patch construction (spec §3.5): patches from grids, toindices and its layout rule, neighbourhoods, lines and rays, frontiers and the bounding-box shapes with their build recipes and empty-patch cases.
 * Expected values: CPython 3.11 on a Python model of the spec (tests/arc/gen_unit_cases.py regenerates
 * the case lists from the .cases files in tests/arc/cases); "ERROR" marks calls that raise in Python. */
#include "arc_test_util.h"

static void test_patch(void **state) {
    (void)state;
    TA_CHECK("frozenset({(0, 1), (1, 2), (0, 0), (1, 1), (0, 2), (1, 0)})", "asindices", "((1, 2, 3), (4, 5, 6))");
    TA_CHECK("frozenset()", "asindices", "()");
    TA_CHECK("frozenset()", "asindices", "((), ())");
    TA_CHECK("frozenset({(1, 0), (0, 2), (1, 2), (0, 0)})", "ofcolor", "((1, 2, 1), (1, 0, 1))", "1");
    TA_CHECK("frozenset()", "ofcolor", "((1, 2, 1), (1, 0, 1))", "7");
    TA_CHECK("frozenset({(4, (1, 1)), (3, (1, 0)), (1, (0, 0)), (2, (0, 1))})", "asobject", "((1, 2), (3, 4))");
    TA_CHECK("frozenset()", "asobject", "()");
    TA_CHECK("frozenset({(4, 5), (0, 0)})", "toindices", "{(1, (0, 0)), (2, (0, 0)), (3, (4, 5))}");
    TA_CHECK("frozenset({(4, 5), (0, 0)})", "toindices", "{(0, 0), (4, 5)}");
    TA_CHECK("((0, 0), (4, 5))", "toindices", "((0, 0), (4, 5))");
    TA_CHECK("frozenset()", "toindices", "frozenset()");
    TA_CHECK("frozenset()", "toindices", "()");
    TA_CHECK("frozenset({(7, (0, 1)), (7, (0, 0))})", "recolor", "7", "{(1, (0, 0)), (2, (0, 1))}");
    TA_CHECK("frozenset({(7, (0, 0)), (7, (2, 2))})", "recolor", "7", "{(0, 0), (2, 2)}");
    TA_CHECK("frozenset()", "recolor", "7", "frozenset()");
    TA_CHECK("frozenset({(1, (0, 0)), (4, (1, 1))})", "toobject", "{(0, 0), (1, 1), (5, 5), (-1, 0)}", "((1, 2), (3, 4))");
    TA_CHECK("frozenset({(2, (0, 1))})", "toobject", "{(9, (0, 1))}", "((1, 2), (3, 4))");
    TA_CHECK("ERROR", "toobject", "{(0, 0)}", "()");
    TA_CHECK("frozenset({(2, 4), (3, 3), (1, 3), (2, 2)})", "dneighbors", "(2, 3)");
    TA_CHECK("frozenset({(-1, 0), (1, 0), (0, -1), (0, 1)})", "dneighbors", "(0, 0)");
    TA_CHECK("frozenset({(3, 2), (1, 2), (3, 4), (1, 4)})", "ineighbors", "(2, 3)");
    TA_CHECK("frozenset({(2, 4), (1, 2), (3, 4), (1, 4), (3, 3), (2, 2), (3, 2), (1, 3)})", "neighbors", "(2, 3)");
    TA_CHECK("frozenset({(0, 1), (-1, -1), (-1, 1), (1, 1), (1, -1), (-1, 0), (1, 0), (0, -1)})", "neighbors", "(0, 0)");
    TA_CHECK("ERROR", "neighbors", "(1,)");
    TA_CHECK("frozenset({(1, 1), (1, 2), (1, 3), (1, 4)})", "connect", "(1, 1)", "(1, 4)");
    TA_CHECK("frozenset({(3, 2), (1, 2), (4, 2), (2, 2)})", "connect", "(4, 2)", "(1, 2)");
    TA_CHECK("frozenset({(1, 1), (3, 3), (2, 2), (0, 0)})", "connect", "(0, 0)", "(3, 3)");
    TA_CHECK("frozenset({(1, 2), (0, 3), (2, 1), (3, 0)})", "connect", "(3, 0)", "(0, 3)");
    TA_CHECK("frozenset()", "connect", "(0, 0)", "(1, 2)");
    TA_CHECK("frozenset({(2, 2)})", "connect", "(2, 2)", "(2, 2)");
    TA_CHECK("frozenset({(1, 28), (1, 31), (1, 37), (1, 34), (1, 40), (1, 43), (1, 6), (1, 3), (1, 9), (1, 12), (1, 18), (1, 15), (1, 21), (1, 24), (1, 30), (1, 27), (1, 33), (1, 39), (1, 36), (1, 42), (1, 2), (1, 5), (1, 11), (1, 8), (1, 14), (1, 20), (1, 17), (1, 23), (1, 26), (1, 32), (1, 29), (1, 35), (1, 38), (1, 41), (1, 1), (1, 4), (1, 7), (1, 13), (1, 10), (1, 16), (1, 19), (1, 25), (1, 22)})", "shoot", "(1, 1)", "(0, 1)");
    TA_CHECK("frozenset({(-22, -22), (-3, -3), (-35, -35), (-26, -26), (-17, -17), (-8, -8), (-16, -16), (-7, -7), (2, 2), (-21, -21), (-30, -30), (-12, -12), (-11, -11), (-2, -2), (-1, -1), (-25, -25), (-6, -6), (3, 3), (-20, -20), (-34, -34), (-24, -24), (-15, -15), (-29, -29), (-28, -28), (-19, -19), (-10, -10), (-33, -33), (-23, -23), (-32, -32), (-14, -14), (-5, -5), (-37, -37), (4, 4), (5, 5), (-18, -18), (-9, -9), (0, 0), (1, 1), (-36, -36), (-13, -13), (-4, -4), (-27, -27), (-31, -31)})", "shoot", "(5, 5)", "(-1, -1)");
    TA_CHECK("frozenset({(1, 1)})", "shoot", "(1, 1)", "(0, 0)");
    TA_CHECK("frozenset({(4, 0), (59, 0), (70, 0), (8, 0), (19, 0), (30, 0), (74, 0), (21, 0), (36, 0), (47, 0), (51, 0), (38, 0), (49, 0), (53, 0), (64, 0), (0, 0), (11, 0), (66, 0), (15, 0), (26, 0), (81, 0), (17, 0), (28, 0), (83, 0), (32, 0), (43, 0), (34, 0), (45, 0), (56, 0), (5, 0), (60, 0), (7, 0), (18, 0), (62, 0), (73, 0), (22, 0), (77, 0), (9, 0), (75, 0), (13, 0), (24, 0), (35, 0), (79, 0), (39, 0), (37, 0), (41, 0), (52, 0), (1, 0), (54, 0), (3, 0), (14, 0), (58, 0), (69, 0), (80, 0), (16, 0), (71, 0), (82, 0), (20, 0), (31, 0), (33, 0), (44, 0), (48, 0), (50, 0), (61, 0), (10, 0), (65, 0), (76, 0), (63, 0), (12, 0), (23, 0), (67, 0), (78, 0), (27, 0), (25, 0), (29, 0), (40, 0), (84, 0), (55, 0), (42, 0), (2, 0), (46, 0), (57, 0), (68, 0), (6, 0), (72, 0)})", "shoot", "(0, 0)", "(2, 0)");
    TA_CHECK("frozenset()", "shoot", "(0, 0)", "(1, 2)");
    TA_CHECK("frozenset({(12, 4), (23, 4), (3, 4), (14, 4), (5, 4), (27, 4), (16, 4), (25, 4), (7, 4), (18, 4), (29, 4), (20, 4), (22, 4), (11, 4), (9, 4), (2, 4), (13, 4), (0, 4), (24, 4), (15, 4), (26, 4), (6, 4), (17, 4), (4, 4), (28, 4), (8, 4), (19, 4), (10, 4), (1, 4), (21, 4)})", "vfrontier", "(3, 4)");
    TA_CHECK("frozenset({(3, 4), (3, 1), (3, 7), (3, 10), (3, 16), (3, 13), (3, 19), (3, 25), (3, 22), (3, 28), (3, 0), (3, 3), (3, 9), (3, 6), (3, 12), (3, 18), (3, 15), (3, 21), (3, 24), (3, 27), (3, 2), (3, 5), (3, 11), (3, 8), (3, 14), (3, 17), (3, 23), (3, 20), (3, 26), (3, 29)})", "hfrontier", "(3, 4)");
    TA_CHECK("frozenset({(4, 3), (1, 1), (1, 3), (4, 1)})", "corners", "{(1, 1), (1, 3), (4, 2)}");
    TA_CHECK("frozenset({(2, 2)})", "corners", "{(2, 2)}");
    TA_CHECK("frozenset({()})", "corners", "frozenset()");
    TA_CHECK("frozenset({(2, 0), (0, 0)})", "corners", "{(5, (0, 0)), (6, (2, 0))}");
    TA_CHECK("frozenset({(1, 2), (2, 1), (1, 1), (2, 3), (2, 2), (1, 3)})", "backdrop", "{(1, 1), (2, 3)}");
    TA_CHECK("frozenset({(0, 1), (1, 0), (1, 1), (0, 0)})", "backdrop", "{(5, (0, 0)), (6, (1, 1))}");
    TA_CHECK("frozenset()", "backdrop", "frozenset()");
    TA_CHECK("frozenset({(1, 1)})", "delta", "{(0, 0), (0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1), (2, 2)}");
    TA_CHECK("frozenset({(0, 1), (1, 2), (2, 1), (1, 1), (2, 0), (0, 2), (1, 0)})", "delta", "{(1, (0, 0)), (1, (2, 2))}");
    TA_CHECK("frozenset()", "delta", "frozenset()");
    TA_CHECK("frozenset({(2, 4), (1, 2), (2, 1), (3, 4), (3, 1), (1, 1), (1, 4), (3, 3), (3, 2), (1, 3)})", "box", "{(1, 1), (3, 4)}");
    TA_CHECK("frozenset({(2, 2)})", "box", "{(2, 2)}");
    TA_CHECK("frozenset()", "box", "frozenset()");
    TA_CHECK("frozenset({(0, 1), (0, 2), (1, 2), (0, 0), (1, 0), (1, 1)})", "box", "{(7, (0, 0)), (7, (1, 2))}");
    TA_CHECK("frozenset({(1, 2), (2, 1), (3, 1), (1, 1), (2, 3), (3, 3), (3, 2), (1, 3)})", "inbox", "{(0, 0), (4, 4)}");
    TA_CHECK("frozenset({(1, 2), (2, 1), (3, 1), (1, 1), (2, 3), (3, 3), (3, 2), (1, 3)})", "inbox", "{(2, 2)}");
    TA_CHECK("frozenset({(0, 1), (-1, 0), (0, 0), (1, 0), (-1, 1), (1, 1)})", "inbox", "{(0, 0), (0, 1)}");
    TA_CHECK("ERROR", "inbox", "frozenset()");
    TA_CHECK("frozenset({(0, 1), (2, 4), (0, 4), (3, 4), (0, 0), (3, 1), (0, 3), (2, 0), (1, 4), (3, 0), (0, 2), (3, 3), (1, 0), (3, 2)})", "outbox", "{(1, 1), (2, 3)}");
    TA_CHECK("ERROR", "outbox", "frozenset()");
}

int main(void) {
    tu_init_seed("test_arc_patch");
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_patch),};
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
