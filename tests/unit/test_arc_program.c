/* test_arc_program.c: the solver-program parser and interpreter (spec §5): programs in the spec's format
 * parse and run (callee variables, partial application, dead lines evaluated), every kind of bad program
 * is refused with file:line:col and the offending token, a raising call reports its line and the
 * reason without stopping later runs, and the lines whose result only a painter reads are marked. */
#include "arc_test_util.h"

static tdm_arc_programs *parse_ok(const char *src) {
    tdm_arc_programs *p = NULL;
    int rc = tdm_arc_programs_parse(src, strlen(src), "t.py", &p);
    if (rc) {
        print_error("parse failed: %s\n", tdm_last_error());
        fail();
    }
    return p;
}

/* Parsing must fail with TDM_E_PARSE and a message containing want. */
static void parse_err(const char *src, const char *want) {
    tdm_arc_programs *p = NULL;
    int rc = tdm_arc_programs_parse(src, strlen(src), "t.py", &p);
    if (rc != TDM_E_PARSE || !strstr(tdm_last_error(), want)) {
        print_error("source:\n%s\nrc %d, message \"%s\", want TDM_E_PARSE with \"%s\"\n", src, rc, tdm_last_error(), want);
        tdm_arc_programs_free(p);
        fail();
    }
    assert_null(p);
}

static const char *SPEC_EXAMPLES =
    "from dsl import *\n"
    "from constants import *\n"
    "\n"
    "\n"
    "def solve_d631b094(I):\n"
    "    x1 = palette(I)\n"
    "    x2 = remove(ZERO, x1)\n"
    "    x3 = first(x2)\n"
    "    x4 = lbind(colorcount, I)\n"
    "    x5 = x4(x3)\n"
    "    x6 = astuple(ONE, x5)\n"
    "    O = canvas(x3, x6)\n"
    "    return O\n"
    "\n"
    "# a comment between solvers\n"
    "def solve_a79310a0(I):\n"
    "    x1 = ofcolor(I, EIGHT)\n"
    "    x2 = shift(x1, DOWN)\n"
    "    x3 = shape(I)\n"
    "    x4 = canvas(ZERO, x3)\n"
    "    O = fill(x4, TWO, x2)\n"
    "    return O\n";

static void test_parse_and_run(void **state) {
    (void)state;
    tdm_arc_programs *p = parse_ok(SPEC_EXAMPLES);
    assert_int_equal(tdm_arc_programs_count(p), 2);
    assert_string_equal(tdm_arc_programs_task(p, 0), "d631b094");
    assert_string_equal(tdm_arc_programs_task(p, 1), "a79310a0");
    size_t k;
    assert_int_equal(tdm_arc_programs_find(p, "a79310a0", &k), TDM_OK);
    assert_int_equal(k, 1);
    assert_int_equal(tdm_arc_programs_find(p, "00000000", &k), TDM_E_NOTFOUND);
    /* d631b094's first training pair: three cells of colour 1 give a 1x3 row of 1s */
    const tdm_arc_val *out;
    assert_int_equal(tdm_arc_program_run(ta_rt, p, 0, ta_parse("((0, 0, 0), (1, 0, 0), (0, 1, 1))"), &out), TDM_OK);
    char *r = ta_repr(out);
    assert_string_equal(r, "((1, 1, 1),)");
    free(r);
    assert_int_equal(tdm_arc_program_run(ta_rt, p, 1, ta_parse("((8, 0), (0, 0))"), &out), TDM_OK);
    r = ta_repr(out);
    assert_string_equal(r, "((0, 0), (2, 0))");
    free(r);
    /* a grid with no colour but 0: first() of an empty set raises on line 8 (x3 = first(x2)) */
    assert_int_equal(tdm_arc_program_run(ta_rt, p, 0, ta_parse("((0, 0), (0, 0))"), &out), TDM_E_ARC_RAISE);
    assert_non_null(strstr(tdm_last_error(), "line 8: x3 = first(x2): first"));
    /* the runtime is usable again after an error */
    tdm_arc_rt_reset(ta_rt);
    assert_int_equal(tdm_arc_program_run(ta_rt, p, 0, ta_parse("((0, 5),)"), &out), TDM_OK);
    tdm_arc_programs_free(p);
}

static void test_dead_lines_run(void **state) {
    (void)state;
    /* x1 is never used but raises: Python evaluates it, so the program fails */
    TA_PROG("ERROR", "((1, 2),)", "x1 = first(())\nO = rot90(I)");
    TA_PROG("((1,), (2,))", "((1, 2),)", "x1 = first(I)\nO = rot90(I)");
    /* whitespace is flexible, trailing comments are allowed */
    tdm_arc_programs *p = parse_ok("def solve_x(I):\n\tx1=rot90( I )  # turn\n    O = rot90(x1)\n    return O\n");
    tdm_arc_programs_free(p);
}

static void test_parse_errors(void **state) {
    (void)state;
    parse_err("def solve_x(I):\n    O = nosuch(I)\n    return O\n", "t.py:2:9: unknown name");
    parse_err("def solve_x(I):\n    O = rot90(x9)\n    return O\n", "t.py:2:15: unknown name (not an earlier variable, a primitive, a constant or I) 'x9'");
    parse_err("def solve_x(I):\n    x1 = rot90(I)\n    x1 = rot90(x1)\n    O = x1\n    return O\n", "t.py:3:5: variable assigned twice 'x1'");
    parse_err("def solve_x(I):\n    rot90 = rot90(I)\n    return O\n", "a primitive's name cannot be assigned 'rot90'");
    parse_err("def solve_x(I):\n    ONE = rot90(I)\n    return O\n", "a constant or I cannot be assigned 'ONE'");
    parse_err("def solve_x(I):\n    O = fill(I, ONE)\n    return O\n", "t.py:2:9: takes 3 arguments, 2 given: 'fill'");
    parse_err("def solve_x(I):\n    O = ONE(I)\n    return O\n", "not callable 'ONE'");
    parse_err("def solve_x(I):\n    O = rot90(I\n    return O\n", "t.py:2:16: expected ',' or ')', found '<end of line>'");
    parse_err("def solve_x(I):\n    O = rot90(I, )\n    return O\n", "t.py:2:18: expected an argument name");
    parse_err("def solve_x(I):\n    O = rot90(rot90(I))\n    return O\n", "t.py:2:20: expected ',' or ')', found '('");
    parse_err("def solve_x(I):\n    O = rot90(I) + 1\n    return O\n", "unexpected text after the call '+'");
    parse_err("def solve_x(I):\n    O = add(I, I, I, I, I)\n    return O\n", "more than 4 arguments");
    parse_err("def solve_x(I):\n    O = rot90(I)\n    return x5\n", "t.py:3:12: return of a name that was not assigned: 'x5'");
    parse_err("def solve_x(I):\n    O = rot90(I)\n", "t.py:2: solver solve_x ends without 'return O'");
    parse_err("def solve_x(I):\n    O = rot90(I)\ndef solve_y(I):\n", "t.py:3:1: solver ends without 'return O' before 'def'");
    parse_err("def solve_x(I):\n    return I\n", "return of a name that was not assigned: 'I'");
    parse_err("def solve_x(I):\n    O = I\n    return O\n", "t.py:2:9: not callable 'I'");
    parse_err("def solve_x(I):\n    x1 = rot90(I)\n    O = x1\n    return O\n", "t.py:3:11: expected '(', found '<end of line>'");
    parse_err("def solve_x(J):\n    O = rot90(J)\n    return O\n", "the solver's parameter must be I, found 'J'");
    parse_err("def solver(I):\n", "a solver's name must be solve_<task>");
    parse_err("x = 1\n", "t.py:1:1: expected 'def solve_<task>(I):', found 'x'");
    parse_err("def solve_x(I):\n    O = rot90(I)\n    return O\ndef solve_x(I):\n    O = rot90(I)\n    return O\n",
              "t.py:4:5: a second solver for the same task: 'solve_x'");
    parse_err("def solve_x(I):\n    O = rot90(I)\n    O = 3\n    return O\n", "variable assigned twice 'O'");
}

static void test_runtime_errors(void **state) {
    (void)state;
    tdm_arc_programs *p = parse_ok("def solve_x(I):\n    x1 = rbind(size, ONE)\n    x2 = x1(I)\n    O = identity(x2)\n    return O\n"
                                   "def solve_y(I):\n    x1 = power(rot90, ZERO)\n    O = x1(I)\n    return O\n"
                                   "def solve_z(I):\n    x1 = size(I)\n    O = x1(I)\n    return O\n");
    const tdm_arc_val *out;
    tdm_arc_val *g = ta_parse("((1, 2),)");
    assert_int_equal(tdm_arc_program_run(ta_rt, p, 0, g, &out), TDM_E_ARC_RAISE);
    assert_non_null(strstr(tdm_last_error(), "line 3: x2 = x1(I): <lambda>() takes 3 positional arguments but 1 were given"));
    assert_int_equal(tdm_arc_program_run(ta_rt, p, 1, g, &out), TDM_E_ARC_RAISE);
    assert_non_null(strstr(tdm_last_error(), "line 7: x1 = power(rot90, ZERO): power: maximum recursion depth"));
    assert_int_equal(tdm_arc_program_run(ta_rt, p, 2, g, &out), TDM_E_ARC_RAISE);
    assert_non_null(strstr(tdm_last_error(), "'int' object is not callable"));
    assert_int_equal(tdm_arc_program_run(ta_rt, p, 9, g, &out), TDM_E_INVAL);
    tdm_arc_programs_free(p);
    /* deep closures stay within the recursion bound instead of overflowing the C stack */
    TA_PROG("991", "((1, 2),)",
            "x1 = multiply(TEN, TEN)\nx2 = multiply(x1, TEN)\nx3 = subtract(x2, TEN)\nx4 = power(increment, x3)\n"
            "O = x4(ONE)");
}

/* Lines whose result only paint, underpaint, fill or underfill read (as the patch) may give a deferred
 * concatenation (cat.c): which lines are marked, and the outputs on random grids against a runtime that
 * defers nothing (lines of different colours overlap, so the parts' order decides). */
static void test_lazy_lines(void **state) {
    (void)state;
    const char *src = "def solve_c(I):\n"
                      "    x1 = objects(I, T, F, T)\n"
                      "    x2 = order(x1, uppermost)\n"
                      "    x3 = rbind(shoot, RIGHT)\n"
                      "    x4 = compose(x3, center)\n"
                      "    x5 = fork(recolor, color, x4)\n"
                      "    x6 = mapply(x5, x2)\n"    /* read by paint, then by underpaint: marked */
                      "    x7 = paint(I, x6)\n"
                      "    x16 = underpaint(x7, x6)\n"
                      "    x17 = mapply(x5, x2)\n"   /* read by last(), which lists items: not marked */
                      "    x18 = last(x17)\n"
                      "    x8 = mapply(x5, x2)\n"    /* read twice */
                      "    x9 = size(x8)\n"
                      "    x10 = underpaint(x16, x8)\n" /* x16: the grid, not the patch */
                      "    x11 = mapply(x5, x2)\n"   /* fill's patch: marked */
                      "    x12 = fill(x10, ONE, x11)\n"
                      "    x13 = mapply(x5, x2)\n"   /* underfill's patch: marked */
                      "    x14 = underfill(x12, TWO, x13)\n"
                      "    x15 = mapply(x5, x2)\n"   /* paint's patch, but returned */
                      "    O = paint(x14, x15)\n"
                      "    return O\n"
                      "def solve_d(I):\n"
                      "    x1 = objects(I, T, F, T)\n"
                      "    x2 = totuple(x1)\n"
                      "    O = merge(x2)\n"
                      "    x3 = paint(I, O)\n"
                      "    return O\n"
                      "def solve_e(I):\n" /* x5 is marked; apply is not the merge that may defer */
                      "    x1 = objects(I, T, F, T)\n"
                      "    x2 = order(x1, uppermost)\n"
                      "    x3 = astuple(identity, identity)\n"
                      "    x4 = lbind(rapply, x3)\n"
                      "    x5 = compose(merge, x4)\n"
                      "    x6 = apply(x5, x2)\n"
                      "    O = paint(I, x6)\n"
                      "    return O\n";
    tdm_arc_programs *p = parse_ok(src);
    /* x6, x11, x13, x15, and the lines nothing reads (x18, x9): a result never read may be deferred too */
    static const int marked[] = {0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0};
    for (int i = 0; i < 19; i++) {
        arc_step st;
        arc_prog_step(p, 0, i, &st);
        assert_int_equal(st.lazy, marked[i]);
    }
    for (int i = 0; i < 4; i++) {
        arc_step st;
        arc_prog_step(p, 1, i, &st);
        assert_int_equal(st.lazy, i == 3); /* O is the result; x3 is not read */
    }
    tdm_arc_rt *eager;
    assert_int_equal(tdm_arc_rt_new(&eager), TDM_OK);
    eager->eager = 1;
    tu_rng r = tu_rng_for(0xca7);
    for (int round = 0; round < 300; round++) {
        int h = 2 + (int)tu_below(&r, 12), w = 2 + (int)tu_below(&r, 12), cells[196];
        for (int k = 0; k < h * w; k++) cells[k] = tu_below(&r, 3) ? 0 : (int)tu_below(&r, 10);
        for (size_t k = 0; k < 3; k++) {
            tdm_arc_val *g[2];
            const tdm_arc_val *out[2];
            int rc[2];
            tdm_arc_rt *rts[2] = {ta_rt, eager};
            for (int s = 0; s < 2; s++) {
                tdm_arc_rt_reset(rts[s]);
                assert_int_equal(tdm_arc_grid_new(rts[s], h, w, cells, &g[s]), TDM_OK);
                rc[s] = tdm_arc_program_run(rts[s], p, k, g[s], &out[s]);
            }
            assert_int_equal(rc[0], rc[1]);
            if (!rc[0]) assert_true(arc_eq((tdm_arc_val *)out[0], (tdm_arc_val *)out[1]));
        }
    }
    tdm_arc_rt_free(eager);
    tdm_arc_programs_free(p);
}

int main(void) {
    tu_init_seed("test_arc_program");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_run), cmocka_unit_test(test_dead_lines_run),
        cmocka_unit_test(test_parse_errors), cmocka_unit_test(test_runtime_errors),
        cmocka_unit_test(test_lazy_lines),
    };
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
