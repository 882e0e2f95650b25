/* test_arc_objects.c: object extraction (spec §3.9, §4.8): objects in all flag combinations with the exact layout of the result and of each object, partition, fgpartition, frontiers and occurrences, with empty and degenerate grids.
 * Expected values: CPython 3.11 on a Python model of the spec (tests/arc/gen_unit_cases.py regenerates
 * the case lists from the .cases files in tests/arc/cases); "ERROR" marks calls that raise in Python. */
#include "arc_test_util.h"

static void test_objects(void **state) {
    (void)state;
    TA_CHECK("frozenset({frozenset({(2, (1, 1))}), frozenset({(2, (2, 2))}), frozenset({(1, (0, 1)), (1, (0, 0))})})", "objects", "((1, 1, 0), (0, 2, 0), (0, 0, 2))", "True", "False", "True");
    TA_CHECK("frozenset({frozenset({(2, (2, 2)), (2, (1, 1))}), frozenset({(1, (0, 1)), (1, (0, 0))})})", "objects", "((1, 1, 0), (0, 2, 0), (0, 0, 2))", "True", "True", "True");
    TA_CHECK("frozenset({frozenset({(1, (0, 1)), (1, (0, 0)), (2, (1, 1))}), frozenset({(2, (2, 2))})})", "objects", "((1, 1, 0), (0, 2, 0), (0, 0, 2))", "False", "False", "True");
    TA_CHECK("frozenset({frozenset({(2, (2, 2)), (1, (0, 1)), (1, (0, 0)), (2, (1, 1))})})", "objects", "((1, 1, 0), (0, 2, 0), (0, 0, 2))", "False", "True", "True");
    TA_CHECK("frozenset({frozenset({(0, (0, 2)), (0, (1, 2))}), frozenset({(2, (2, 2))}), frozenset({(1, (0, 1)), (1, (0, 0))}), frozenset({(0, (2, 0)), (0, (1, 0)), (0, (2, 1))}), frozenset({(2, (1, 1))})})", "objects", "((1, 1, 0), (0, 2, 0), (0, 0, 2))", "True", "False", "False");
    TA_CHECK("frozenset({frozenset({(2, (2, 2)), (1, (0, 1)), (0, (1, 2)), (0, (1, 0)), (0, (0, 2)), (0, (2, 1)), (1, (0, 0)), (0, (2, 0)), (2, (1, 1))})})", "objects", "((1, 1, 0), (0, 2, 0), (0, 0, 2))", "False", "False", "False");
    TA_CHECK("frozenset({frozenset({(2, (2, 2)), (1, (0, 1)), (0, (1, 2)), (0, (1, 0)), (0, (0, 2)), (0, (2, 1)), (1, (0, 0)), (0, (2, 0)), (2, (1, 1))})})", "objects", "((1, 1, 0), (0, 2, 0), (0, 0, 2))", "False", "True", "False");
    TA_CHECK("frozenset({frozenset({(0, (1, 0))}), frozenset({(0, (0, 1))})})", "objects", "((8, 0), (0, 8))", "True", "False", "True");
    TA_CHECK("frozenset()", "objects", "((5,),)", "True", "True", "True");
    TA_CHECK("frozenset({frozenset({(5, (0, 0))})})", "objects", "((5,),)", "True", "True", "False");
    TA_CHECK("ERROR", "objects", "()", "True", "True", "True");
    TA_CHECK("frozenset()", "objects", "((), ())", "True", "False", "False");
    TA_CHECK("frozenset({frozenset({(5, (0, 4))}), frozenset({(5, (1, 1))}), frozenset({(4, (0, 3))}), frozenset({(6, (0, 5))}), frozenset({(3, (0, 2))}), frozenset({(4, (1, 2))}), frozenset({(0, (3, 1))}), frozenset({(8, (4, 2)), (8, (4, 3))}), frozenset({(2, (0, 1))}), frozenset({(3, (3, 2))}), frozenset({(3, (3, 4))}), frozenset({(0, (3, 3))}), frozenset({(3, (1, 3))}), frozenset({(7, (4, 5)), (7, (4, 4))}), frozenset({(3, (3, 0))}), frozenset({(9, (4, 1)), (9, (4, 0))}), frozenset({(2, (2, 5)), (2, (2, 4)), (2, (2, 3)), (2, (1, 4))}), frozenset({(0, (3, 5))}), frozenset({(6, (1, 0))})})", "objects", "((1, 2, 3, 4, 5, 6), (6, 5, 4, 3, 2, 1), (1, 1, 1, 2, 2, 2), (3, 0, 3, 0, 3, 0), (9, 9, 8, 8, 7, 7))", "True", "False", "True");
    TA_CHECK("frozenset({frozenset({(1, (2, 0)), (1, (2, 2)), (1, (2, 1))}), frozenset({(5, (0, 4))}), frozenset({(3, (1, 3)), (3, (0, 2))}), frozenset({(5, (1, 1))}), frozenset({(6, (0, 5))}), frozenset({(0, (3, 1))}), frozenset({(8, (4, 2)), (8, (4, 3))}), frozenset({(2, (0, 1))}), frozenset({(3, (3, 2))}), frozenset({(1, (0, 0))}), frozenset({(3, (3, 4))}), frozenset({(0, (3, 3))}), frozenset({(4, (1, 2)), (4, (0, 3))}), frozenset({(7, (4, 5)), (7, (4, 4))}), frozenset({(3, (3, 0))}), frozenset({(9, (4, 1)), (9, (4, 0))}), frozenset({(2, (2, 3)), (2, (2, 5)), (2, (2, 4)), (2, (1, 4))}), frozenset({(0, (3, 5))}), frozenset({(1, (1, 5))}), frozenset({(6, (1, 0))})})", "objects", "((1, 2, 3, 4, 5, 6), (6, 5, 4, 3, 2, 1), (1, 1, 1, 2, 2, 2), (3, 0, 3, 0, 3, 0), (9, 9, 8, 8, 7, 7))", "True", "True", "False");
    TA_CHECK("frozenset({frozenset({(0, (1, 2)), (0, (1, 0)), (0, (0, 2)), (0, (2, 1)), (0, (2, 0))}), frozenset({(2, (2, 2)), (2, (1, 1))}), frozenset({(1, (0, 1)), (1, (0, 0))})})", "partition", "((1, 1, 0), (0, 2, 0), (0, 0, 2))");
    TA_CHECK("frozenset({frozenset({(9, (1, 1)), (9, (0, 0))}), frozenset({(2, (1, 0)), (2, (0, 1))})})", "partition", "((9, 2), (2, 9))");
    TA_CHECK("frozenset()", "partition", "()");
    TA_CHECK("frozenset({frozenset({(2, (2, 2)), (2, (1, 1))}), frozenset({(1, (0, 1)), (1, (0, 0))})})", "fgpartition", "((1, 1, 0), (0, 2, 0), (0, 0, 2))");
    TA_CHECK("frozenset({frozenset({(0, (0, 1)), (0, (1, 0))})})", "fgpartition", "((8, 0), (0, 8))");
    TA_CHECK("frozenset({frozenset({(2, (0, 1))}), frozenset({(1, (0, 0))}), frozenset({(5, (0, 4))}), frozenset({(7, (0, 6))}), frozenset({(9, (0, 8))}), frozenset({(4, (0, 3))}), frozenset({(8, (0, 7))}), frozenset({(6, (0, 5))}), frozenset({(3, (0, 2))})})", "fgpartition", "((1, 2, 3, 4, 5, 6, 7, 8, 9, 0), (0, 0, 0, 0, 0, 0, 0, 0, 0, 0))");
    TA_CHECK("ERROR", "fgpartition", "()");
    /* the rest inserted in palette's order, not the cells': palette {6, 7, 1, 9} puts 9 past 1, 6 and 7 (slot
       4), so without 7 the rest goes in as (1, 9, 6), 6 moves on to slot 7, and the objects go into the outer
       set in that order (two of their hashes meet in its table) */
    TA_CHECK("frozenset({frozenset({(1, (1, 0))}), frozenset({(6, (1, 1)), (6, (0, 0)), (6, (2, 0))}), frozenset({(9, (1, 2))})})", "fgpartition", "((6, 7, 7), (1, 6, 9), (6, 7, 7))");
    TA_CHECK("frozenset({frozenset({(6, (0, 0)), (6, (0, 2))}), frozenset({(1, (0, 3))}), frozenset({(9, (1, 0))})})", "fgpartition", "((6, 7, 6, 1), (9, 7, 7, 7))");
    /* five colours (palette ascending) whose rest of four holds 0 and 8, met 8 first */
    TA_CHECK("frozenset({frozenset({(1, (0, 2))}), frozenset({(0, (0, 1))}), frozenset({(8, (0, 0))}), frozenset({(2, (0, 3))})})", "fgpartition", "((8, 0, 1, 2, 3), (3, 3, 3, 3, 3))");
    TA_CHECK("frozenset({frozenset({(1, (0, 2))}), frozenset({(9, (0, 3))}), frozenset({(0, (0, 1))}), frozenset({(8, (0, 0))})})", "fgpartition", "((8, 0, 1, 9, 3), (3, 3, 3, 3, 3))");
    TA_CHECK("frozenset({frozenset({(1, (1, 2)), (1, (2, 2)), (1, (0, 2))}), frozenset({(1, (0, 1)), (1, (0, 0)), (1, (0, 2))})})", "frontiers", "((1, 1, 1), (2, 0, 1), (3, 3, 1))");
    TA_CHECK("frozenset({frozenset({(5, (0, 0))})})", "frontiers", "((5,),)");
    TA_CHECK("frozenset()", "frontiers", "((1, 2), (3, 4))");
    TA_CHECK("ERROR", "frontiers", "()");
    TA_CHECK("frozenset({(1, 1), (0, 2), (0, 0)})", "occurrences", "((1, 2, 1, 2), (2, 1, 2, 1))", "{(1, (0, 0)), (2, (0, 1))}");
    TA_CHECK("frozenset()", "occurrences", "((1, 2, 1), (2, 1, 2))", "{(1, (5, 5)), (2, (6, 6))}");
    TA_CHECK("frozenset({(0, 1), (1, 2), (2, 1), (0, 0), (1, 1), (2, 0), (0, 2), (2, 2), (1, 0)})", "occurrences", "((1, 2), (2, 1))", "frozenset()");
    TA_CHECK("ERROR", "occurrences", "((1, 2), (2, 1))", "{(0, 0), (1, 1)}");
    TA_CHECK("frozenset()", "occurrences", "((1, 2), (2, 1))", "{(1, (0, 0)), (2, (0, 9))}");
    TA_CHECK("ERROR", "occurrences", "()", "{(1, (0, 0))}");
}

int main(void) {
    tu_init_seed("test_arc_objects");
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_objects),};
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
