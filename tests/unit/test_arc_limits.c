/* test_arc_limits.c: the port's size limits (docs/arc.md, deliberate differences). A call that would build a
 * gigantic value (Python would build it too, given the memory) fails with an error naming the primitive and
 * the size, and the runtime serves the next call; calls inside the limits give Python's value, also where a
 * huge factor or bound meets an empty input. The first case is the fuzz program that had tandem killed by the
 * kernel (test_arc_fuzz.py --seed 12 --programs 400: upscale(I, colorcount(I, THREE)) on a 19x29 grid of
 * 3s, then asindices of the 10469x15979 result). Expected values: CPython 3.11 on the spec's definitions. */
#include "arc_test_util.h"

/* Literal arguments, or values built here (large ones: the literal reader takes up to 1024 items). */
typedef struct {
    const char *lit;
    const tdm_arc_val *val;
} arg;

/* then(name(args...)) as a repr (then NULL: name(args...) itself), or "ERROR" (error text in rt). */
static char *call(const char *then, const char *name, const arg *args, int n) {
    int id, tid;
    const tdm_arc_val *a[4], *out;
    assert_int_equal(tdm_arc_prim_lookup(name, &id), 0);
    for (int k = 0; k < n; k++) a[k] = args[k].val ? args[k].val : ta_parse(args[k].lit);
    if (tdm_arc_call(ta_rt, tdm_arc_prim_value(id), n, a, &out)) return strdup("ERROR");
    if (then) {
        assert_int_equal(tdm_arc_prim_lookup(then, &tid), 0);
        if (tdm_arc_call(ta_rt, tdm_arc_prim_value(tid), 1, &out, &out)) return strdup("ERROR");
    }
    return ta_repr(out);
}

/* name(args...) must fail with an error that names the primitive and holds want. */
static void fails_with(int line, const char *want, const char *name, const arg *args, int n) {
    char *got = call(NULL, name, args, n);
    const char *err = tdm_arc_rt_error(ta_rt);
    if (strcmp(got, "ERROR") || strncmp(err, name, strlen(name)) || !strstr(err, want)) {
        print_error("line %d: %s(...) = %.200s (error '%s'), want an error '%s: ...%s...'\n", line, name, got, err,
                    name, want);
        free(got);
        fail();
    }
    free(got);
}

/* then(name(args...)) must give want. */
static void gives(int line, const char *want, const char *then, const char *name, const arg *args, int n) {
    char *got = call(then, name, args, n);
    if (strcmp(got, want)) {
        print_error("line %d: %s(%s(...)) = %.200s, want %s (%s)\n", line, then ? then : "", name, got, want,
                    tdm_arc_rt_error(ta_rt));
        free(got);
        fail();
    }
    free(got);
}

#define NARGS(...) ((int)(sizeof((arg[]){__VA_ARGS__}) / sizeof(arg)))
#define FAILS(want, name, ...) fails_with(__LINE__, want, name, (arg[]){__VA_ARGS__}, NARGS(__VA_ARGS__))
#define GIVES(want, then, name, ...) gives(__LINE__, want, then, name, (arg[]){__VA_ARGS__}, NARGS(__VA_ARGS__))
#define L(s) {s, NULL}
#define V(v) {NULL, v}

/* An h x w grid of colour c. */
static tdm_arc_val *grid(int h, int w, int c) {
    int *cells = malloc((size_t)h * (size_t)w * sizeof *cells);
    assert_non_null(cells);
    for (int k = 0; k < h * w; k++) cells[k] = c;
    tdm_arc_val *g;
    assert_int_equal(tdm_arc_grid_new(ta_rt, h, w, cells, &g), TDM_OK);
    free(cells);
    return g;
}

/* The tuple (0, 1, ..., n - 1). */
static tdm_arc_val *range_tuple(uint32_t n) {
    tdm_arc_val *t = arc_tuple(ta_rt, n);
    assert_non_null(t);
    for (uint32_t k = 0; k < n; k++) t->u.items[k] = arc_int(ta_rt, k);
    return t;
}

static void test_fuzz_seed_12(void **state) {
    (void)state;
    tdm_arc_val *g = grid(19, 29, 3);
    FAILS("a 10469x15979 grid (167284151 cells) is more than the port allows", "upscale", V(g), L("551"));
    /* the whole program: the call fails and says where; nothing gigantic is built */
    int st;
    char *out = ta_prog_val(g, "x1 = colorcount(I, THREE)\nx2 = upscale(I, x1)\nx3 = asindices(x2)\nO = size(x3)", &st);
    assert_int_equal(st, TDM_E_ARC_RAISE);
    assert_non_null(strstr(tdm_last_error(), "line 3: x2 = upscale(I, x1): upscale: a 10469x15979 grid"));
    free(out);
    out = ta_prog_val(g, "x1 = upscale(I, THREE)\nx2 = asindices(x1)\nO = size(x2)", &st);
    assert_int_equal(st, TDM_OK);
    assert_string_equal(out, "4959");
    free(out);
}

static void test_grid_limits(void **state) {
    (void)state;
    FAILS("a 1x5000000 grid (5000000 cells)", "hupscale", L("((1,),)"), L("5000000"));
    FAILS("a 5000000x1 grid (5000000 cells)", "vupscale", L("((1,),)"), L("5000000"));
    FAILS("a 2000000000000000000x0 grid (2000000000000000000 cells)", "upscale", L("((), ())"), L("1000000000000000000"));
    FAILS("a 9223372036854775807x9223372036854775807 grid", "upscale", L("((1, 2),)"), L("9223372036854775807"));
    FAILS("a 2001x2001 grid (4004001 cells)", "canvas", L("0"), L("(2001, 2001)"));
    FAILS("a 1000000000x1000000000 grid (1000000000000000000 cells)", "canvas", L("0"), L("(1000000000, 1000000000)"));
    FAILS("a 3001x3002 box (9009002 cells)", "backdrop", L("{(0, 0), (3000, 3001)}"));
    FAILS("connect: a line over 100000 cells", "connect", L("(0, 0)"), L("(200000, 0)"));
    FAILS("connect: a line over 100000 cells", "connect", L("(0, 0)"), L("(-200000, 200000)"));
    /* two points on no line: frozenset() however far apart, as in Python */
    GIVES("frozenset()", NULL, "connect", L("(0, 0)"), L("(200000, 5)"));
    GIVES("frozenset()", NULL, "connect", L("(True, 0)"), L("(-7, 3)"));
    /* empty inputs stay empty whatever the factor or width, as in Python */
    GIVES("((), ())", NULL, "hupscale", L("((), ())"), L("1000000000000000000"));
    GIVES("()", NULL, "vupscale", L("()"), L("1000000000000000000"));
    GIVES("()", NULL, "upscale", L("()"), L("1000000000000000000"));
    GIVES("()", NULL, "canvas", L("0"), L("(0, 1000000000000000000)"));
    /* inside the limits, past the old per-factor caps (1000 for grids, 100 for objects) */
    GIVES("(1, 2002)", "shape", "hupscale", L("((1, 2),)"), L("1001"));
    GIVES("(2000, 2000)", "shape", "upscale", L("((5,),)"), L("2000"));
    GIVES("(1999, 2001)", "shape", "canvas", L("7"), L("(1999, 2001)"));
    GIVES("90000", "size", "upscale", L("{(1, (0, 0))}"), L("300"));
}

static void test_container_limits(void **state) {
    (void)state;
    FAILS("4004001 elements is more than the port allows", "upscale", L("{(1, (0, 0))}"), L("2001"));
    FAILS("1000000000000000000 elements", "interval", L("0"), L("1000000000000000000"), L("1"));
    FAILS("18446744073709551614 elements", "interval", L("-9223372036854775807"), L("9223372036854775807"), L("1"));
    FAILS("10000000 elements", "repeat", L("1"), L("10000000"));
    tdm_arc_val *t = range_tuple(3000);
    FAILS("9000000 elements", "product", V(t), V(t));
    /* inside the limits, and bounds at the 64-bit edge: Python's len(range(...)) and values */
    GIVES("4000000", "size", "repeat", L("1"), L("4000000"));
    GIVES("0", "size", "upscale", L("{(1, (0, 0))}"), L("-9223372036854775807"));
    GIVES("(-9223372036854775807, -4611686018427387903, 1, 4611686018427387905)", NULL, "interval",
          L("-9223372036854775807"), L("9223372036854775807"), L("4611686018427387904"));
    GIVES("(9223372036854775807, 0)", NULL, "interval", L("9223372036854775807"), L("-9223372036854775807"),
          L("-9223372036854775807"));
}

/* A run whose values pass the runtime's byte limit (tdm_arc_rt.max_bytes, ARC_RT_MAX_BYTES unless a test
 * sets less) fails at the call that passed it with TDM_E_NOMEM, whatever the primitive (here doubling
 * hconcats, which no per-primitive limit bounds); the runtime serves the next run. */
static void test_run_memory_cap(void **state) {
    (void)state;
    tdm_arc_rt_free(ta_rt); /* a fresh runtime: the limit counts the chunks one keeps */
    assert_int_equal(tdm_arc_rt_new(&ta_rt), TDM_OK);
    ta_rt->max_bytes = (size_t)16 << 20;
    int st;
    char *out = ta_prog_val(grid(100, 100, 4), "x1 = hconcat(I, I)\nx2 = hconcat(x1, x1)\nx3 = hconcat(x2, x2)\n"
                            "x4 = hconcat(x3, x3)\nx5 = hconcat(x4, x4)\nx6 = hconcat(x5, x5)\nx7 = hconcat(x6, x6)\n"
                            "O = shape(x7)", &st);
    assert_int_equal(st, TDM_E_NOMEM);
    assert_non_null(strstr(tdm_last_error(), "= hconcat("));
    assert_non_null(strstr(tdm_last_error(), "limit of 16 MiB for one run's values"));
    free(out);
    tdm_arc_rt_reset(ta_rt);
    out = ta_prog_val(grid(100, 100, 4), "x1 = hconcat(I, I)\nx2 = hconcat(x1, x1)\nO = shape(x2)", &st);
    assert_int_equal(st, TDM_OK);
    assert_string_equal(out, "(100, 400)");
    free(out);
    ta_rt->max_bytes = ARC_RT_MAX_BYTES;
}

int main(void) {
    tu_init_seed("test_arc_limits");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fuzz_seed_12),
        cmocka_unit_test(test_grid_limits),
        cmocka_unit_test(test_container_limits),
        cmocka_unit_test(test_run_memory_cap),
    };
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
