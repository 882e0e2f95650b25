/* test_arc_math.c: integer, vector and logic primitives (spec §3.1): the dispatch order of the arithmetic, floor division, the unary maps, predicates, and both/either returning an argument.
 * Expected values: CPython 3.11 on a Python model of the spec (tests/arc/gen_unit_cases.py regenerates
 * the case lists from the .cases files in tests/arc/cases); "ERROR" marks calls that raise in Python. */
#include "arc_test_util.h"

static void test_math(void **state) {
    (void)state;
    TA_CHECK("5", "add", "2", "3");
    TA_CHECK("(11, 22)", "add", "(1, 2)", "(10, 20)");
    TA_CHECK("(11, 21)", "add", "1", "(10, 20)");
    TA_CHECK("(11, 21)", "add", "(10, 20)", "1");
    TA_CHECK("(4, 6)", "add", "(1, 2, 99)", "(3, 4, 5)");
    TA_CHECK("2", "add", "True", "True");
    TA_CHECK("ERROR", "add", "(1,)", "(2, 3)");
    TA_CHECK("ERROR", "add", "None", "1");
    TA_CHECK("ERROR", "add", "{1, 2}", "1");
    TA_CHECK("-3", "subtract", "2", "5");
    TA_CHECK("(-2, -1)", "subtract", "(1, 2)", "3");
    TA_CHECK("(2, 1)", "subtract", "3", "(1, 2)");
    TA_CHECK("(6, -12)", "multiply", "3", "(2, -4)");
    TA_CHECK("(8, 15)", "multiply", "(2, 3)", "(4, 5)");
    TA_CHECK("-4", "divide", "-7", "2");
    TA_CHECK("-4", "divide", "7", "-2");
    TA_CHECK("(3, -4)", "divide", "(7, -7)", "2");
    TA_CHECK("ERROR", "divide", "1", "0");
    TA_CHECK("ERROR", "divide", "(4, 4)", "(2, 0)");
    TA_CHECK("-3", "invert", "3");
    TA_CHECK("(-1, 2)", "invert", "(1, -2)");
    TA_CHECK("(6, -8)", "double", "(3, -4)");
    TA_CHECK("-2", "halve", "-3");
    TA_CHECK("(2, -3)", "halve", "(5, -5)");
    TA_CHECK("10", "increment", "9");
    TA_CHECK("(-1, -1)", "decrement", "(0, 0)");
    TA_CHECK("0", "crement", "0");
    TA_CHECK("-4", "crement", "-3");
    TA_CHECK("(3, -3)", "crement", "(2, -2)");
    TA_CHECK("-1", "sign", "-7");
    TA_CHECK("(0, 1)", "sign", "(0, 5)");
    TA_CHECK("True", "even", "4");
    TA_CHECK("False", "even", "-3");
    TA_CHECK("ERROR", "even", "(2, 2)");
    TA_CHECK("False", "positive", "0");
    TA_CHECK("True", "positive", "3");
    TA_CHECK("ERROR", "positive", "(1, 1)");
    TA_CHECK("True", "greater", "3", "2");
    TA_CHECK("True", "greater", "(1, 2)", "(1, 1)");
    TA_CHECK("False", "greater", "(1, 2)", "(1, 2, 0)");
    TA_CHECK("ERROR", "greater", "1", "(0, 0)");
    TA_CHECK("(4, 0)", "toivec", "4");
    TA_CHECK("(0, -2)", "tojvec", "-2");
    TA_CHECK("(1, (2, 3))", "astuple", "1", "(2, 3)");
    TA_CHECK("frozenset({1, 2})", "identity", "{1, 2}");
    TA_CHECK("True", "flip", "0");
    TA_CHECK("False", "flip", "(1,)");
    TA_CHECK("True", "flip", "frozenset()");
    TA_CHECK("0", "both", "0", "5");
    TA_CHECK("5", "both", "3", "5");
    TA_CHECK("()", "both", "()", "5");
    TA_CHECK("5", "either", "0", "5");
    TA_CHECK("3", "either", "3", "5");
    TA_CHECK("()", "either", "frozenset()", "()");
    TA_CHECK("True", "equality", "{1, 2}", "{2, 1}");
    TA_CHECK("False", "equality", "(1, 2)", "{1, 2}");
    TA_CHECK("True", "contained", "2", "(1, 2, 3)");
    TA_CHECK("True", "contained", "(1, 2)", "((1, 2), (3, 4))");
    TA_CHECK("True", "contained", "(0, 0)", "{(0, 0), (1, 1)}");
    TA_CHECK("ERROR", "contained", "1", "5");
}

int main(void) {
    tu_init_seed("test_arc_math");
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_math),};
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
