/* test_arc_grid.c: grid geometry (spec §3.7): rotations, crop with Python's slice rules (negative starts, clipping, degenerate grids), halves, splits with separators, concatenation, scaling of grids and objects, compress and index.
 * Expected values: CPython 3.11 on a Python model of the spec (tests/arc/gen_unit_cases.py regenerates
 * the case lists from the .cases files in tests/arc/cases); "ERROR" marks calls that raise in Python. */
#include "arc_test_util.h"

static void test_grid(void **state) {
    (void)state;
    TA_CHECK("((4, 1), (5, 2), (6, 3))", "rot90", "((1, 2, 3), (4, 5, 6))");
    TA_CHECK("((6, 5, 4), (3, 2, 1))", "rot180", "((1, 2, 3), (4, 5, 6))");
    TA_CHECK("((3, 6), (2, 5), (1, 4))", "rot270", "((1, 2, 3), (4, 5, 6))");
    TA_CHECK("()", "rot90", "()");
    TA_CHECK("()", "rot270", "()");
    TA_CHECK("()", "rot90", "((), ())");
    TA_CHECK("((5, 6), (8, 9))", "crop", "((1, 2, 3), (4, 5, 6), (7, 8, 9))", "(1, 1)", "(2, 2)");
    TA_CHECK("((5, 6), (8, 9))", "crop", "((1, 2, 3), (4, 5, 6), (7, 8, 9))", "(1, 1)", "(5, 5)");
    TA_CHECK("()", "crop", "((1, 2, 3), (4, 5, 6), (7, 8, 9))", "(-1, 0)", "(2, 2)");
    TA_CHECK("((1, 2),)", "crop", "((1, 2, 3),)", "(-1, 0)", "(2, 2)");
    TA_CHECK("((), ())", "crop", "((1, 2, 3), (4, 5, 6))", "(0, 5)", "(2, 2)");
    TA_CHECK("()", "crop", "((1, 2, 3), (4, 5, 6))", "(5, 0)", "(2, 2)");
    TA_CHECK("((2,),)", "crop", "((1, 2, 3), (4, 5, 6))", "(0, -2)", "(1, 1)");
    TA_CHECK("((5, 6), (8, 9))", "subgrid", "{(1, 1), (2, 2)}", "((1, 2, 3), (4, 5, 6), (7, 8, 9))");
    TA_CHECK("()", "subgrid", "{(5, (-1, 0)), (5, (0, 1))}", "((1, 2, 3), (4, 5, 6), (7, 8, 9))");
    TA_CHECK("ERROR", "subgrid", "frozenset()", "((1, 2),)");
    TA_CHECK("((5,),)", "trim", "((1, 2, 3), (4, 5, 6), (7, 8, 9))");
    TA_CHECK("()", "trim", "((1, 2), (3, 4))");
    TA_CHECK("((5,), (8,))", "trim", "((1, 2, 3), (4, 5, 6), (7, 8, 9), (1, 1, 1))");
    TA_CHECK("((),)", "trim", "((1,), (2,), (3,))");
    TA_CHECK("((1,),)", "tophalf", "((1,), (2,), (3,))");
    TA_CHECK("((3,),)", "bottomhalf", "((1,), (2,), (3,))");
    TA_CHECK("()", "tophalf", "((1, 2),)");
    TA_CHECK("((1,), (4,))", "lefthalf", "((1, 2, 3), (4, 5, 6))");
    TA_CHECK("((3,), (6,))", "righthalf", "((1, 2, 3), (4, 5, 6))");
    TA_CHECK("()", "lefthalf", "((1,), (2,))");
    TA_CHECK("((3, 4),)", "righthalf", "((1, 2, 3, 4),)");
    TA_CHECK("(((1, 2),), ((3, 4),))", "hsplit", "((1, 2, 0, 3, 4),)", "2");
    TA_CHECK("(((1, 2),), ((3, 4),))", "hsplit", "((1, 2, 3, 4),)", "2");
    TA_CHECK("(((1,),), ((2,),), ((3,),))", "hsplit", "((1, 2, 3),)", "3");
    TA_CHECK("ERROR", "hsplit", "((1, 2),)", "0");
    TA_CHECK("ERROR", "hsplit", "()", "2");
    TA_CHECK("(((1,), (2,)), ((3,), (4,)))", "vsplit", "((1,), (2,), (0,), (3,), (4,))", "2");
    TA_CHECK("(((1, 1),), ((2, 2),), ((3, 3),))", "vsplit", "((1, 1), (2, 2), (3, 3))", "3");
    TA_CHECK("((1, 2, 5), (3, 4, 6))", "hconcat", "((1, 2), (3, 4))", "((5,), (6,))");
    TA_CHECK("((1, 2, 5),)", "hconcat", "((1, 2), (3, 4))", "((5,),)");
    TA_CHECK("((1, 2), (3,))", "vconcat", "((1, 2),)", "((3,),)");
    TA_CHECK("((3,),)", "vconcat", "()", "((3,),)");
    TA_CHECK("((1, 1, 2, 2), (3, 3, 4, 4))", "hupscale", "((1, 2), (3, 4))", "2");
    TA_CHECK("((),)", "hupscale", "((1, 2),)", "0");
    TA_CHECK("((1, 2), (1, 2), (3, 4), (3, 4))", "vupscale", "((1, 2), (3, 4))", "2");
    TA_CHECK("()", "vupscale", "((1, 2),)", "0");
    TA_CHECK("((1, 1, 2, 2), (1, 1, 2, 2), (3, 3, 4, 4), (3, 3, 4, 4))", "upscale", "((1, 2), (3, 4))", "2");
    TA_CHECK("()", "upscale", "((1, 2),)", "-1");
    TA_CHECK("frozenset({(2, (2, 4)), (1, (1, 1)), (2, (1, 3)), (1, (2, 2)), (2, (2, 3)), (2, (1, 4)), (1, (1, 2)), (1, (2, 1))})", "upscale", "{(1, (1, 1)), (2, (1, 2))}", "2");
    TA_CHECK("frozenset({(2, (6, 2)), (1, (3, 1)), (2, (6, 3)), (2, (5, 1)), (1, (3, 2)), (3, (8, 8)), (3, (8, 9)), (1, (1, 3)), (2, (4, 1)), (3, (7, 7)), (3, (7, 8)), (2, (5, 2)), (3, (7, 9)), (1, (3, 3)), (3, (9, 7)), (2, (5, 3)), (1, (2, 1)), (1, (1, 1)), (2, (4, 2)), (3, (8, 7)), (3, (9, 8)), (1, (2, 2)), (2, (6, 1)), (1, (1, 2)), (3, (9, 9)), (1, (2, 3)), (2, (4, 3))})", "upscale", "{(1, (1, 1)), (2, (2, 1)), (3, (3, 3))}", "3");
    TA_CHECK("frozenset()", "upscale", "frozenset()", "2");
    TA_CHECK("frozenset()", "upscale", "{(1, (1, 1))}", "0");
    TA_CHECK("ERROR", "upscale", "{(1, 1), (2, 2)}", "2");
    TA_CHECK("((1, 3), (9, 2))", "downscale", "((1, 2, 3, 4), (5, 6, 7, 8), (9, 1, 2, 3))", "2");
    TA_CHECK("((1, 4),)", "downscale", "((1, 2, 3, 4),)", "3");
    TA_CHECK("ERROR", "downscale", "((1, 2),)", "0");
    TA_CHECK("ERROR", "downscale", "()", "2");
    TA_CHECK("((2, 0, 3),)", "compress", "((1, 1, 1), (2, 0, 3), (4, 4, 4))");
    TA_CHECK("((2,), (5,), (6,))", "compress", "((1, 2, 3), (1, 5, 3), (1, 6, 3))");
    TA_CHECK("()", "compress", "((1, 1), (2, 2))");
    TA_CHECK("((), ())", "compress", "((1, 2), (1, 2))");
    TA_CHECK("3", "index", "((1, 2), (3, 4))", "(1, 0)");
    TA_CHECK("None", "index", "((1, 2), (3, 4))", "(2, 0)");
    TA_CHECK("None", "index", "((1, 2), (3, 4))", "(-1, 0)");
    TA_CHECK("ERROR", "index", "()", "(0, 0)");
}

int main(void) {
    tu_init_seed("test_arc_grid");
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_grid),};
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
