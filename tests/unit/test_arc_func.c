/* test_arc_func.c: function values and higher-order primitives (spec §1.8, §3.3): closures, rbind/lbind arities (including the 4-argument fallback), power, the mapping primitives, and calls with a wrong arity or on non-functions.
 * Expected values: CPython 3.11 on a Python model of the spec (tests/arc/gen_unit_cases.py regenerates
 * the case lists from the .cases files in tests/arc/cases); "ERROR" marks calls that raise in Python. */
#include "arc_test_util.h"

static void test_func(void **state) {
    (void)state;
    TA_PROG("2", "((1, 2), (3, 4))", "x1 = compose(size, first)\nO = x1(I)");
    TA_PROG("ERROR", "((1, 2), (3, 4))", "x1 = chain(size, first, first)\nO = x1(I)");
    TA_PROG("True", "((1, 2), (3, 4))", "x1 = matcher(size, TWO)\nO = x1(I)");
    TA_PROG("(4, 6)", "((1, 2), (3, 4))", "x1 = fork(add, first, last)\nO = x1(I)");
    TA_PROG("(4, 4)", "((1, 2), (3, 4))", "x1 = rbind(subtract, ONE)\nx2 = x1(FIVE)\nO = astuple(x2, x2)");
    TA_PROG("-4", "((1, 2), (3, 4))", "x1 = lbind(subtract, ONE)\nO = x1(FIVE)");
    TA_PROG("ERROR", "((1, 2), (3, 4))", "x1 = rbind(fill, ORIGIN)\nO = x1(I, ZERO)");
    TA_PROG("((0, 2), (3, 4))", "((1, 2), (3, 4))", "x1 = lbind(fill, I)\nx2 = initset(ORIGIN)\nO = x1(ZERO, x2)");
    TA_PROG("frozenset({frozenset({(2, (0, 1))}), frozenset({(3, (1, 0))}), frozenset({(4, (1, 1))})})", "((1, 2), (3, 4))", "x1 = rbind(objects, T)\nO = x1(I, T, F)");
    TA_PROG("4", "((1, 2), (3, 4))", "x1 = lbind(objects, I)\nx2 = x1(T, F, F)\nO = size(x2)");
    TA_PROG("ERROR", "((1, 2), (3, 4))", "x1 = rbind(size, ONE)\nO = x1(I, I, I)");
    TA_PROG("ERROR", "((1, 2), (3, 4))", "x1 = compose(size, first)\nx2 = rbind(x1, ONE)\nO = x2(I, I, I)");
    TA_PROG("ERROR", "((1, 2), (3, 4))", "x1 = rbind(size, ONE)\nO = x1(I)");
    TA_PROG("ERROR", "((1, 2), (3, 4))", "x1 = rbind(ONE, ONE)\nO = size(I)");
    TA_PROG("4", "((1, 2), (3, 4))", "x1 = power(increment, THREE)\nO = x1(ONE)");
    TA_PROG("((3, 1), (4, 2))", "((1, 2), (3, 4))", "x1 = power(rot90, ONE)\nO = x1(I)");
    TA_PROG("((4, 3), (2, 1))", "((1, 2), (3, 4))", "x1 = power(rot90, TWO)\nO = x1(I)");
    TA_PROG("ERROR", "((1, 2), (3, 4))", "x1 = power(rot90, ZERO)\nO = size(I)");
    TA_PROG("ERROR", "((1, 2), (3, 4))", "x1 = power(rot90, NEG_ONE)\nO = size(I)");
    TA_PROG("((3, 1), (4, 2))", "((1, 2), (3, 4))", "x1 = branch(T, rot90, rot180)\nO = x1(I)");
    TA_PROG("((4, 3), (2, 1))", "((1, 2), (3, 4))", "x1 = branch(ZERO, rot90, rot180)\nO = x1(I)");
    TA_PROG("(1, 3)", "((1, 2), (3, 4))", "O = apply(first, I)");
    TA_PROG("frozenset({1, 2, 3, 4})", "((1, 2), (3, 4))", "x1 = asobject(I)\nO = apply(first, x1)");
    TA_PROG("frozenset({0, 1})", "((1, 2), (3, 4))", "x1 = asindices(I)\nO = apply(first, x1)");
    TA_PROG("(((3, 1), (4, 2)), ((4, 3), (2, 1)))", "((1, 2), (3, 4))", "x1 = astuple(rot90, rot180)\nO = rapply(x1, I)");
    TA_PROG("2", "((1, 2), (3, 4))", "x1 = initset(rot90)\nx2 = insert(hmirror, x1)\nx3 = rapply(x2, I)\nO = size(x3)");
    TA_PROG("frozenset({(4, (1, 1)), (3, (1, 0)), (1, (0, 0)), (2, (0, 1))})", "((1, 2), (3, 4))", "x1 = asobject(I)\nx2 = apply(initset, x1)\nO = mapply(identity, x2)");
    TA_PROG("(1, 2, 3, 4)", "((1, 2), (3, 4))", "O = mapply(identity, I)");
    TA_PROG("(4, 6)", "((1, 2), (3, 4))", "x1 = first(I)\nx2 = last(I)\nO = papply(add, x1, x2)");
    TA_PROG("(1, 3, 2, 4)", "((1, 2), (3, 4))", "x1 = first(I)\nx2 = last(I)\nO = mpapply(astuple, x1, x2)");
    TA_PROG("frozenset({(4, 4), (1, 3), (2, 4), (1, 2), (2, 1), (3, 4), (4, 3), (3, 1), (1, 1), (4, 2), (1, 4), (2, 3), (3, 3), (2, 2), (3, 2), (4, 1)})", "((1, 2), (3, 4))", "x1 = palette(I)\nO = prapply(astuple, x1, x1)");
    TA_PROG("(2, 3, 4, 5, 6, 7, 8)", "((1, 2), (3, 4))", "x1 = palette(I)\nx2 = prapply(add, x1, x1)\nO = totuple(x2)");
    TA_PROG("ERROR", "((1, 2), (3, 4))", "O = size(ONE)");
    TA_PROG("ERROR", "((1, 2), (3, 4))", "O = fill(I, ONE)");
    TA_PROG("ERROR", "((1, 2), (3, 4))", "x1 = ONE(I)\nO = x1");
    TA_PROG("ERROR", "((1, 2), (3, 4))", "x1 = compose(first, first)\nx2 = x1(I, I)\nO = x2");
    TA_PROG("ERROR", "((1, 2), (3, 4))", "x1 = apply(size, ONE)\nO = x1");
}

int main(void) {
    tu_init_seed("test_arc_func");
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_func),};
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
