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

/* A runtime keeps the last program's frame, its constants written (arc_program_run): a program parsed
 * after that one is freed (often at the same address) or another program of the same set, run on the same
 * runtime, reads its own constants, and so does the first one run again. */
static void test_kept_frame(void **state) {
    (void)state;
    const char *src[2] = {"def solve_a(I):\n    x1 = astuple(ONE, TWO)\n    O = canvas(THREE, x1)\n    return O\n"
                          "def solve_b(I):\n    x1 = astuple(TWO, ONE)\n    O = canvas(FOUR, x1)\n    return O\n",
                          "def solve_a(I):\n    x1 = astuple(TWO, TWO)\n    O = canvas(FIVE, x1)\n    return O\n"};
    const char *want[3] = {"((3, 3),)", "((4,), (4,))", "((5, 5), (5, 5))"};
    const tdm_arc_val *out;
    for (int round = 0; round < 2; round++) {
        tdm_arc_programs *p = parse_ok(src[round]);
        for (size_t k = 0; k < tdm_arc_programs_count(p) + 1; k++) { /* each, then the first again */
            size_t at = k % tdm_arc_programs_count(p);
            tdm_arc_rt_reset(ta_rt);
            assert_int_equal(tdm_arc_program_run(ta_rt, p, at, ta_parse("((0,),)"), &out), TDM_OK);
            char *r = ta_repr(out);
            assert_string_equal(r, want[round ? 2 : at]);
            free(r);
        }
        tdm_arc_programs_free(p);
    }
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

/* Runs solver k of p on the h x w grid cells in the deferring runtime (out[0]) and in eager, which defers
 * nothing (out[1]): their status, which must agree. */
static int run_both(tdm_arc_programs *p, size_t k, int h, int w, const int *cells, tdm_arc_rt *eager, const tdm_arc_val *out[2]) {
    tdm_arc_rt *rts[2] = {ta_rt, eager};
    int rc[2];
    for (int s = 0; s < 2; s++) {
        tdm_arc_val *g;
        tdm_arc_rt_reset(rts[s]);
        assert_int_equal(tdm_arc_grid_new(rts[s], h, w, cells, &g), TDM_OK);
        rc[s] = tdm_arc_program_run(rts[s], p, k, g, &out[s]);
    }
    assert_int_equal(rc[0], rc[1]);
    return rc[0];
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
            const tdm_arc_val *out[2];
            if (!run_both(p, k, h, w, cells, eager, out)) assert_true(arc_eq((tdm_arc_val *)out[0], (tdm_arc_val *)out[1]));
        }
    }
    tdm_arc_rt_free(eager);
    tdm_arc_programs_free(p);
}

/* A line objects(...) that only colorfilter(·, C) reads, C a constant colour, whose result only mfilter
 * reads, runs for that colour's objects when univalued, and the filter gives them back as its result
 * (program.c mark_only): which lines are marked, and on random grids the outputs' reprs (every layout) against
 * a runtime that defers nothing, for marked lines (one whose merged result is laid out, which lays the
 * filter out from the full objects()) and lines that are not. */
static void test_colour_lines(void **state) {
    (void)state;
    const char *src = "def solve_a(I):\n" /* marked (a5313dff's) */
                      "    x1 = objects(I, T, F, F)\n"
                      "    x2 = colorfilter(x1, ZERO)\n"
                      "    x3 = rbind(bordering, I)\n"
                      "    x4 = mfilter(x2, x3)\n"
                      "    O = fill(I, FOUR, x4)\n"
                      "    return O\n"
                      "def solve_b(I):\n" /* marked; the merge laid out (its order is the filter's) */
                      "    x1 = objects(I, T, T, T)\n"
                      "    x2 = colorfilter(x1, TWO)\n"
                      "    x3 = rbind(bordering, I)\n"
                      "    x4 = compose(flip, x3)\n"
                      "    x5 = mfilter(x2, x4)\n"
                      "    x6 = mfilter(x2, x3)\n"
                      "    O = astuple(x5, x6)\n"
                      "    return O\n"
                      "def solve_c(I):\n" /* x1 read twice: not marked */
                      "    x1 = objects(I, T, F, T)\n"
                      "    x2 = colorfilter(x1, ONE)\n"
                      "    x3 = size(x1)\n"
                      "    x4 = mfilter(x2, x3)\n"
                      "    O = astuple(x4, x3)\n"
                      "    return O\n"
                      "def solve_d(I):\n" /* marked, not univalued: the call makes every object */
                      "    x1 = objects(I, F, T, F)\n"
                      "    x2 = colorfilter(x1, ONE)\n"
                      "    x3 = rbind(bordering, I)\n"
                      "    O = mfilter(x2, x3)\n"
                      "    return O\n"
                      "def solve_e(I):\n" /* a colour that is a variable, one that is none, a filter argmax reads */
                      "    x1 = objects(I, T, F, F)\n"
                      "    x2 = mostcolor(I)\n"
                      "    x3 = colorfilter(x1, x2)\n"
                      "    x4 = objects(I, T, F, F)\n"
                      "    x5 = colorfilter(x4, TEN)\n"
                      "    x6 = objects(I, T, F, F)\n"
                      "    x7 = colorfilter(x6, ZERO)\n"
                      "    x8 = argmax(x7, size)\n"
                      "    O = astuple(x3, x8)\n"
                      "    return O\n";
    tdm_arc_programs *p = parse_ok(src);
    static const int nlines[] = {5, 7, 5, 4, 9};
    static const int only[][9] = {{0, 0, -1, -1, -1}, {2, 2, -1, -1, -1, -1, -1}, {-1, -1, -1, -1, -1},
                                  {1, 1, -1, -1}, {-1, -1, -1, -1, -1, -1, -1, -1, -1}};
    for (size_t k = 0; k < 5; k++)
        for (int i = 0; i < nlines[k]; i++) {
            arc_step st;
            arc_prog_step(p, k, i, &st);
            if (st.only != only[k][i]) fail_msg("solver %zu line %d: only %d, want %d", k, i + 1, st.only, only[k][i]);
        }
    tdm_arc_rt *eager;
    assert_int_equal(tdm_arc_rt_new(&eager), TDM_OK);
    eager->eager = 1;
    tu_rng r = tu_rng_for(0xc01f);
    for (int round = 0; round < 200; round++) {
        int h = 1 + (int)tu_below(&r, 14), w = 1 + (int)tu_below(&r, 14), cells[196];
        for (int k = 0; k < h * w; k++) cells[k] = tu_below(&r, 2) ? 0 : (int)tu_below(&r, 4);
        for (size_t k = 0; k < 5; k++) {
            const tdm_arc_val *out[2];
            if (run_both(p, k, h, w, cells, eager, out)) continue;
            char *a = ta_repr(out[0]), *b = ta_repr(out[1]);
            if (strcmp(a, b)) fail_msg("solver %zu on %dx%d: %s\n  want %s", k, h, w, a, b);
            free(a), free(b);
        }
    }
    tdm_arc_rt_free(eager);
    tdm_arc_programs_free(p);
}

/* Lines of fill, paint and their kin (and canvas) whose result only such a line reads as its grid, or the
 * program returns, may give a grid of bytes: which lines are marked; on random grids, against a runtime that
 * defers nothing, the output forced (tdm_arc_program_run), left as bytes (arc_program_run) and read as the
 * batch runner reads it (arc_result_fill). The values written include some that are no colour (10, -1),
 * which make a copy of bytes take rows mid-way, and recolourings to them. */
static void test_grid_lines(void **state) {
    (void)state;
    const char *src = "def solve_a(I):\n"
                      "    x1 = objects(I, T, F, T)\n"
                      "    x2 = merge(x1)\n"
                      "    x3 = shift(x2, DOWN)\n"
                      "    x4 = fill(I, FIVE, x3)\n"        /* read by paint: marked, and so on down */
                      "    x5 = paint(x4, x3)\n"
                      "    x6 = underfill(x5, ONE, x3)\n"
                      "    x7 = cover(x6, x2)\n"
                      "    x8 = replace(x7, ZERO, TWO)\n"
                      "    x9 = switch(x8, TWO, FIVE)\n"
                      "    O = underpaint(x9, x3)\n"
                      "    return O\n"
                      "def solve_b(I):\n"
                      "    x1 = objects(I, T, T, T)\n"
                      "    x2 = first(x1)\n"
                      "    x3 = recolor(TEN, x2)\n"
                      "    x4 = fill(I, SEVEN, x2)\n"       /* read by paint, replace, fill: marked */
                      "    x5 = paint(x4, x3)\n"            /* writes 10: rows made */
                      "    x6 = replace(x5, TEN, THREE)\n"
                      "    x7 = canvas(ZERO, THREE_BY_THREE)\n"
                      "    x8 = paint(x7, x2)\n"            /* read by ofcolor: not marked */
                      "    x9 = ofcolor(x8, ZERO)\n"
                      "    x10 = fill(x4, NEG_ONE, x9)\n"   /* read by palette: not marked; x4 forced */
                      "    x11 = underfill(x10, TWO, x3)\n" /* x10 read as cells: -1 is no colour */
                      "    x12 = palette(x10)\n"
                      "    x13 = replace(x4, FIVE, TEN)\n"  /* to 10: the general path */
                      "    x14 = underpaint(x13, x3)\n"
                      "    x15 = fill(x6, ONE, x2)\n"       /* read as replace's value: not marked */
                      "    x16 = replace(x11, x15, TWO)\n"
                      "    O = underfill(x16, FOUR, x2)\n"
                      "    return O\n"
                      "def solve_c(I):\n"
                      "    x1 = shape(I)\n"
                      "    x2 = canvas(SIX, x1)\n"          /* read by a call of a variable's function: not marked */
                      "    x3 = lbind(paint, x2)\n"
                      "    x4 = asobject(I)\n"
                      "    x5 = x3(x4)\n"
                      "    x6 = canvas(SIX, x1)\n"          /* returned as it is: marked */
                      "    x7 = cover(x5, x4)\n"            /* replace's value: not marked */
                      "    x8 = replace(x6, x7, ONE)\n"
                      "    O = canvas(SIX, x1)\n"
                      "    return O\n"
                      "def solve_d(I):\n"                  /* listed patches, values that are no colour */
                      "    x1 = objects(I, T, F, T)\n"
                      "    x2 = merge(x1)\n"
                      "    x3 = shift(x2, RIGHT)\n"
                      "    x4 = totuple(x3)\n"
                      "    x5 = underfill(I, ONE, x4)\n"    /* cell by cell, over bg only */
                      "    x6 = underpaint(x5, x4)\n"
                      "    x7 = initset(ORIGIN)\n"
                      "    x8 = recolor(TEN, x7)\n"
                      "    x9 = paint(x6, x8)\n"            /* 10 from a listed object: rows made */
                      "    x10 = replace(x9, TEN, SEVEN)\n"
                      "    x11 = ofcolor(I, ONE)\n"
                      "    x12 = fill(x10, TEN, x11)\n"     /* 10 from a lazy patch: rows made */
                      "    O = replace(x12, TEN, EIGHT)\n"
                      "    return O\n"
                      "def solve_e(I):\n"                  /* the grid primitives that move cells (gbytes.c) */
                      "    x1 = vmirror(I)\n"
                      "    x2 = hmirror(I)\n"               /* I's rows, shared: not marked */
                      "    x3 = hconcat(x2, x1)\n"
                      "    x4 = cmirror(x3)\n"
                      "    x5 = rot180(x4)\n"
                      "    x6 = vconcat(x4, x5)\n"
                      "    x7 = dmirror(x6)\n"
                      "    x8 = rot270(x7)\n"
                      "    x9 = ofcolor(x8, ZERO)\n"        /* x8 read by ofcolor and fill: not marked */
                      "    x10 = fill(x8, FIVE, x9)\n"
                      "    x11 = rot90(x10)\n"
                      "    x12 = hmirror(x8)\n"             /* of a line not marked: not marked */
                      "    O = upscale(x11, TWO)\n"         /* over 30 cells a side: rows */
                      "    return O\n"
                      "def solve_f(I):\n"                  /* results that are no grid of bytes */
                      "    x1 = rot90(I)\n"
                      "    x2 = vconcat(I, x1)\n"           /* rows of two widths unless square */
                      "    x3 = hmirror(x2)\n"
                      "    x4 = hconcat(I, x1)\n"           /* zip: the fewer rows */
                      "    x5 = dmirror(x3)\n"
                      "    x6 = upscale(x4, THREE)\n"
                      "    x7 = upscale(x1, ZERO)\n"        /* () */
                      "    x8 = vconcat(x7, x6)\n"
                      "    x9 = rot90(x8)\n"
                      "    O = hconcat(x5, x9)\n"
                      "    return O\n"
                      "def solve_g(I):\n"                  /* apply(mostcommon | leastcommon, g) reads g's bytes */
                      "    x1 = dmirror(I)\n"
                      "    x2 = apply(mostcommon, x1)\n"
                      "    x3 = rot90(I)\n"
                      "    x4 = apply(leastcommon, x3)\n"
                      "    x5 = vmirror(I)\n"              /* read by apply(first, .): not marked */
                      "    x6 = apply(first, x5)\n"
                      "    x7 = hmirror(I)\n"              /* I's rows, shared: not marked */
                      "    x8 = apply(mostcommon, x7)\n"
                      "    x9 = repeat(x2, ONE)\n"
                      "    x10 = repeat(x4, ONE)\n"
                      "    x11 = vconcat(x9, x10)\n"
                      "    x12 = repeat(x6, ONE)\n"
                      "    x13 = repeat(x8, ONE)\n"
                      "    x14 = vconcat(x12, x13)\n"
                      "    O = hconcat(x11, x14)\n"
                      "    return O\n";
    tdm_arc_programs *p = parse_ok(src);
    enum { NPROG = 7 };
    static const int lines[NPROG] = {10, 17, 9, 13, 13, 10, 15}, marked[NPROG][17] = {
        {0, 0, 0, 1, 1, 1, 1, 1, 1, 1},
        {0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1, 1},
        {0, 0, 0, 0, 0, 1, 0, 1, 1},
        {0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 0, 1, 1},
        {1, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1}, /* hmirror of rows (not of a grid of bytes): not marked */
        {1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        {1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}};
    for (int k = 0; k < NPROG; k++)
        for (int i = 0; i < lines[k]; i++) {
            arc_step st;
            arc_prog_step(p, (size_t)k, i, &st);
            if (st.grid != marked[k][i]) {
                print_error("program %d line %d: grid mark %d, want %d\n", k, i + 1, st.grid, marked[k][i]);
                fail();
            }
        }
    tdm_arc_rt *eager, *counted;
    assert_int_equal(tdm_arc_rt_new(&eager), TDM_OK);
    assert_int_equal(tdm_arc_rt_new(&counted), TDM_OK);
    eager->eager = 1;
    tdm_arc_rt_stats_enable(counted, 1);
    tu_rng r = tu_rng_for(0x9a1d);
    int bytes_seen = 0, ran[NPROG] = {0};
    for (int round = 0; round < 300; round++) {
        int h = 1 + (int)tu_below(&r, 12), w = 1 + (int)tu_below(&r, 12), cells[144];
        for (int k = 0; k < h * w; k++) cells[k] = tu_below(&r, 3) ? 0 : (int)tu_below(&r, 10);
        for (size_t k = 0; k < NPROG; k++) {
            tdm_arc_val *g[4];
            const tdm_arc_val *out[4];
            int rc[4];
            tdm_arc_rt *rts[4] = {eager, ta_rt, ta_rt, counted}; /* counted: every call made, a grid of bytes too */
            for (int s = 0; s < 4; s++) {
                if (s != 2) tdm_arc_rt_reset(rts[s]);
                assert_int_equal(tdm_arc_grid_new(rts[s], h, w, cells, &g[s]), TDM_OK);
                rc[s] = arc_program_run(rts[s], p, k, g[s], &out[s], s == 2);
                assert_int_equal(rc[s], rc[0]);
            }
            if (rc[0]) continue;
            ran[k]++;
            assert_false(arc_grid_is_lazy(out[1])); /* forced for the API's callers */
            assert_true(arc_eq((tdm_arc_val *)out[1], (tdm_arc_val *)out[0]));
            assert_true(arc_eq((tdm_arc_val *)out[3], (tdm_arc_val *)out[0]));
            bytes_seen += arc_grid_is_lazy(out[2]);
            /* read as bytes, as the batch runner reads a result */
            tdm_arc_result res;
            memset(&res, 0, sizeof res);
            assert_int_equal(arc_result_fill(ta_rt, out[2], &res, NULL), 0);
            int want[4096], wh, ww;
            assert_int_equal(tdm_arc_grid_read(out[0], &wh, &ww, want, 4096), TDM_OK);
            assert_int_equal(res.h, wh);
            assert_int_equal(res.w, ww);
            assert_memory_equal(res.cells, want, (size_t)(wh * ww) * sizeof *want);
            tdm_free(res.cells);
            assert_int_equal(arc_grid_force(ta_rt, (tdm_arc_val *)out[2]), 0);
            assert_true(arc_eq((tdm_arc_val *)out[2], (tdm_arc_val *)out[0]));
        }
    }
    /* b fails only on grids without objects (first of an empty set); a, c, e and g (when their results are
       at most 30 wide) return grids of bytes, d when it wrote no 10, f never */
    for (int k = 0; k < NPROG; k++) assert_true(k == 1 ? ran[k] > 280 : ran[k] == 300);
    assert_true(bytes_seen > 700);
    tdm_arc_rt_free(eager);
    tdm_arc_rt_free(counted);
    tdm_arc_programs_free(p);
}

int main(void) {
    tu_init_seed("test_arc_program");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_run), cmocka_unit_test(test_dead_lines_run), cmocka_unit_test(test_kept_frame),
        cmocka_unit_test(test_parse_errors), cmocka_unit_test(test_runtime_errors),
        cmocka_unit_test(test_lazy_lines), cmocka_unit_test(test_colour_lines), cmocka_unit_test(test_grid_lines),
    };
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
