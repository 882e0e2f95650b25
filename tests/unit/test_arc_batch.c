/* test_arc_batch.c: the batch runner (tdm_arc_batch_run): results equal those of single runs, do not
 * depend on the thread count or on the calls run before them (a closure's serial), carry the message of a
 * raising call and the repr of a result that is not a grid; per-primitive statistics count calls; bad
 * arguments are refused. Prepared inputs (tdm_arc_inputs) give the same results as grids made in each
 * call, and keep the cells as they were; batches run one after another keep their results. Grids are
 * seeded random. */
#include "arc_test_util.h"

static const char *PROGS =
    "def solve_objs(I):\n    x1 = objects(I, T, F, T)\n    x2 = argmax(x1, size)\n    O = paint(I, x2)\n    return O\n"
    "def solve_first(I):\n    x1 = palette(I)\n    x2 = remove(ZERO, x1)\n    O = first(x2)\n    return O\n"
    "def solve_frame(I):\n    x1 = asindices(I)\n    x2 = box(x1)\n    x3 = fill(I, EIGHT, x2)\n    O = rot90(x3)\n    return O\n"
    /* a closure: its repr shows its serial number, which each run counts from 1 */
    "def solve_fn(I):\n    x1 = height(I)\n    x2 = rbind(add, x1)\n    O = compose(x2, size)\n    return O\n"
    /* rows that are slices of the input's (a result read from its bytes), mirrored; then such rows of two
       widths, which are no grid (its repr) */
    "def solve_crop(I):\n    x1 = hmirror(I)\n    O = crop(x1, UNITY, THREE_BY_THREE)\n    return O\n"
    "def solve_ragged(I):\n    x1 = hmirror(I)\n    x2 = crop(x1, UNITY, TWO_BY_TWO)\n    x3 = tophalf(I)\n"
    "    O = vconcat(x3, x2)\n    return O\n"
    /* the input hashed (a set of grids) and compared with a grid made from it, then given back */
    "def solve_same(I):\n    x1 = initset(I)\n    x2 = vmirror(I)\n    x3 = vmirror(x2)\n    x4 = insert(x3, x1)\n"
    "    x5 = size(x4)\n    x6 = equality(x5, ONE)\n    O = branch(x6, I, x2)\n    return O\n";
enum { NP = 7 };

/* A random h x w grid (h, w 1..12, drawn here) of mostly 0, the rest colours below a count drawn from
 * ncol_lo..ncol_hi; malloc'd. */
static int *random_cells(tu_rng *r, int *h, int *w, int ncol_lo, int ncol_hi) {
    *h = (int)tu_range(r, 1, 12), *w = (int)tu_range(r, 1, 12);
    int ncol = (int)tu_range(r, ncol_lo, ncol_hi), *cells = malloc(sizeof(int) * (size_t)(*h * *w));
    for (int k = 0; k < *h * *w; k++) cells[k] = tu_below(r, 3) ? 0 : (int)tu_below(r, (uint64_t)ncol);
    return cells;
}

/* ng random grids (random_cells, their colours from ncol_lo..ncol_hi) into cells[], and every program on
 * each: calls[a * ng + g] runs program a on grid g. */
static void random_calls(tu_rng *r, int ng, int ncol_lo, int ncol_hi, int **cells, tdm_arc_call_ref *calls) {
    for (int g = 0; g < ng; g++) {
        int h, w;
        cells[g] = random_cells(r, &h, &w, ncol_lo, ncol_hi);
        for (int a = 0; a < NP; a++) calls[a * ng + g] = (tdm_arc_call_ref){(size_t)a, {h, w, cells[g]}};
    }
}

static void test_batch_matches_single_runs(void **state) {
    (void)state;
    tdm_arc_programs *p;
    assert_int_equal(tdm_arc_programs_parse(PROGS, strlen(PROGS), "t", &p), TDM_OK);
    tu_rng r = tu_rng_for(71);
    enum { NG = 40 };
    int *cells[NG];
    tdm_arc_call_ref calls[NP * NG];
    random_calls(&r, NG, 1, 4, cells, calls);
    tdm_arc_batch *b1, *b2;
    assert_int_equal(tdm_arc_batch_run(p, calls, NP * NG, 1, 1, &b1), TDM_OK);
    assert_int_equal(tdm_arc_batch_run(p, calls, NP * NG, 2, 0, &b2), TDM_OK);
    int errors = 0, scalars = 0, ragged = 0, crops = 0;
    for (size_t c = 0; c < NP * NG; c++) {
        const tdm_arc_result *x = tdm_arc_batch_result(b1, c), *y = tdm_arc_batch_result(b2, c);
        /* the same call on its own */
        tdm_arc_rt_reset(ta_rt);
        tdm_arc_val *in;
        const tdm_arc_val *out;
        assert_int_equal(tdm_arc_grid_new(ta_rt, calls[c].grid.h, calls[c].grid.w, calls[c].grid.cells, &in), TDM_OK);
        int st = tdm_arc_program_run(ta_rt, p, calls[c].prog, in, &out);
        assert_int_equal(x->status, st);
        assert_int_equal(y->status, st);
        if (st) {
            errors++;
            assert_non_null(x->error);
            assert_string_equal(x->error, y->error);
            assert_string_equal(x->error, tdm_arc_rt_error(ta_rt));
            continue;
        }
        if (x->cells) {
            int h, w;
            assert_int_equal(tdm_arc_grid_read(out, &h, &w, NULL, 0), TDM_OK);
            assert_int_equal(x->h, h);
            assert_int_equal(x->w, w);
            assert_int_equal(y->h, h);
            int *want = malloc(sizeof(int) * (size_t)(h * w > 0 ? h * w : 1));
            tdm_arc_grid_read(out, &h, &w, want, (size_t)(h * w));
            assert_memory_equal(x->cells, want, sizeof(int) * (size_t)(h * w));
            assert_memory_equal(y->cells, want, sizeof(int) * (size_t)(h * w));
            crops += calls[c].prog == 4 && h > 1 && w > 1;
            free(want);
        } else {
            scalars++;
            char *rep = ta_repr(out);
            assert_string_equal(x->repr, rep);
            assert_string_equal(y->repr, rep);
            if (calls[c].prog == 3) assert_string_equal(rep, "<function <lambda> #2>"); /* rbind's, then compose's */
            ragged += calls[c].prog == 5 && rep[0] == '(' && rep[1] == '(';
            free(rep);
        }
    }
    /* the random grids include all-zero ones (first() of an empty set raises) and int results */
    assert_true(errors > 0);
    assert_true(scalars > 0);
    assert_true(ragged > 5 && crops > 5);
    int id;
    tdm_arc_prim_lookup("objects", &id);
    assert_int_equal(tdm_arc_batch_prim_stats(b1, id).calls, NG);
    assert_int_equal(tdm_arc_batch_prim_stats(b2, id).calls, 0); /* statistics off */
    assert_true(tdm_arc_batch_threads(b2) >= 1);
    assert_null(tdm_arc_batch_result(b1, NP * NG));
    tdm_arc_batch_free(b1);
    tdm_arc_batch_free(b2);
    for (int g = 0; g < NG; g++) free(cells[g]);
    tdm_arc_programs_free(p);
}

/* Results a and b of one call are the same, field by field. */
static void same_result(const tdm_arc_result *a, const tdm_arc_result *b) {
    assert_int_equal(a->status, b->status);
    assert_int_equal(a->h, b->h);
    assert_int_equal(a->w, b->w);
    assert_true((a->cells == NULL) == (b->cells == NULL));
    if (a->cells) assert_memory_equal(a->cells, b->cells, sizeof(int) * (size_t)(a->h * a->w));
    assert_true((a->repr == NULL) == (b->repr == NULL));
    if (a->repr) assert_string_equal(a->repr, b->repr);
    assert_true((a->error == NULL) == (b->error == NULL));
    if (a->error) assert_string_equal(a->error, b->error);
}

/* Batches one after another on one thread, as a server answering task after task runs them: each takes the
 * runtime the last one kept (statistics off, then on, off, on) and the result slab a freed batch left; a
 * batch's results stay as they were while later batches run, and equal those of a batch on two threads. */
static void test_batches_in_turn(void **state) {
    (void)state;
    tdm_arc_programs *p;
    assert_int_equal(tdm_arc_programs_parse(PROGS, strlen(PROGS), "t", &p), TDM_OK);
    tu_rng r = tu_rng_for(73);
    enum { NG = 6 };
    int *cells[NG];
    tdm_arc_call_ref calls[NP * NG];
    random_calls(&r, NG, 2, 6, cells, calls);
    int id;
    tdm_arc_prim_lookup("objects", &id);
    tdm_arc_batch *ref, *b[4];
    assert_int_equal(tdm_arc_batch_run(p, calls, NP * NG, 2, 0, &ref), TDM_OK);
    for (int k = 0; k < 4; k++) {
        tdm_arc_call_ref turn[NP * NG]; /* the calls in another order each time: other cells at each place */
        for (size_t c = 0; c < NP * NG; c++) turn[c] = calls[(c + 5 * (size_t)k) % (NP * NG)];
        if (k >= 2) tdm_arc_batch_free(b[k - 2]); /* its slab goes to this batch */
        assert_int_equal(tdm_arc_batch_run(p, turn, NP * NG, 1, k & 1, &b[k]), TDM_OK);
        assert_int_equal(tdm_arc_batch_prim_stats(b[k], id).calls, k & 1 ? NG : 0);
        for (int m = k < 1 ? 0 : k - 1; m <= k; m++) /* this batch and the one before */
            for (size_t c = 0; c < NP * NG; c++)
                same_result(tdm_arc_batch_result(b[m], c), tdm_arc_batch_result(ref, (c + 5 * (size_t)m) % (NP * NG)));
    }
    tdm_arc_batch_free(b[2]);
    tdm_arc_batch_free(b[3]);
    tdm_arc_batch_free(ref);
    for (int g = 0; g < NG; g++) free(cells[g]);
    tdm_arc_programs_free(p);
}

static void test_prepared_inputs(void **state) {
    (void)state;
    tdm_arc_programs *p;
    assert_int_equal(tdm_arc_programs_parse(PROGS, strlen(PROGS), "t", &p), TDM_OK);
    tu_rng r = tu_rng_for(72);
    enum { NG = 36 };
    int *cells[NG];
    tdm_arc_grid_ref refs[NG + 3];
    for (int g = 0; g < NG; g++) {
        int h, w;
        cells[g] = random_cells(&r, &h, &w, 2, 10);
        if (g % 6 == 5) cells[g][h * w - 1] = g % 12 == 5 ? 10 : g % 18 == 11 ? -1 : 5000; /* no colour: no bytes */
        refs[g] = (tdm_arc_grid_ref){h, w, cells[g]};
    }
    /* a repeat, the same cells as another shape, an empty grid: kept once, apart, not at all */
    refs[NG] = refs[0], refs[NG + 1] = (tdm_arc_grid_ref){refs[1].w, refs[1].h, cells[1]}, refs[NG + 2] = (tdm_arc_grid_ref){0, 3, NULL};
    int same_shape = refs[1].h == refs[1].w;
    tdm_arc_inputs *in;
    assert_int_equal(tdm_arc_inputs_new(refs, NG + 3, &in), TDM_OK);
    assert_int_equal(tdm_arc_inputs_count(in), NG + !same_shape);
    enum { NC = NP * (NG + 3) };
    tdm_arc_call_ref calls[NC];
    for (int a = 0; a < NP; a++)
        for (int g = 0; g < NG + 3; g++) calls[a * (NG + 3) + g] = (tdm_arc_call_ref){(size_t)a, refs[g]};
    tdm_arc_batch *fresh, *on1, *on2;
    assert_int_equal(tdm_arc_batch_run(p, calls, NC, 1, 0, &fresh), TDM_OK);
    assert_int_equal(tdm_arc_batch_run_on(p, in, calls, NC, 1, 0, &on1), TDM_OK);
    assert_int_equal(tdm_arc_batch_run_on(p, in, calls, NC, 2, 0, &on2), TDM_OK);
    for (size_t c = 0; c < NC; c++) {
        same_result(tdm_arc_batch_result(fresh, c), tdm_arc_batch_result(on1, c));
        same_result(tdm_arc_batch_result(fresh, c), tdm_arc_batch_result(on2, c));
    }
    /* the cells changed after the set was made: a prepared call still sees them as they were, a fresh
       call sees them now */
    for (int g = 0; g < NG; g++)
        for (int k = 0; k < refs[g].h * refs[g].w; k++) cells[g][k] = (cells[g][k] + 1) % 10;
    tdm_arc_batch *later, *now;
    assert_int_equal(tdm_arc_batch_run_on(p, in, calls, NC, 2, 0, &later), TDM_OK);
    assert_int_equal(tdm_arc_batch_run(p, calls, NC, 1, 0, &now), TDM_OK);
    int changed = 0;
    for (size_t c = 0; c < NC; c++) {
        const tdm_arc_result *x = tdm_arc_batch_result(later, c), *y = tdm_arc_batch_result(now, c);
        same_result(tdm_arc_batch_result(fresh, c), x);
        changed += x->status != y->status || (x->cells && y->cells && memcmp(x->cells, y->cells, sizeof(int) * (size_t)(x->h * x->w)));
    }
    assert_true(changed > NC / 4);
    /* refused: a negative size, cells missing, NULL */
    tdm_arc_inputs *bad = NULL;
    refs[2].h = -1;
    assert_int_equal(tdm_arc_inputs_new(refs, NG, &bad), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "grid 2"));
    refs[2].h = 2, refs[2].cells = NULL;
    assert_int_equal(tdm_arc_inputs_new(refs, NG, &bad), TDM_E_INVAL);
    assert_int_equal(tdm_arc_inputs_new(NULL, 1, &bad), TDM_E_INVAL);
    assert_null(bad);
    assert_int_equal(tdm_arc_inputs_new(NULL, 0, &bad), TDM_OK); /* an empty set */
    assert_int_equal(tdm_arc_inputs_count(bad), 0);
    tdm_arc_inputs_free(bad);
    tdm_arc_inputs_free(NULL);
    tdm_arc_batch_free(fresh);
    tdm_arc_batch_free(on1);
    tdm_arc_batch_free(on2);
    tdm_arc_batch_free(later);
    tdm_arc_batch_free(now);
    tdm_arc_inputs_free(in);
    for (int g = 0; g < NG; g++) free(cells[g]);
    tdm_arc_programs_free(p);
}

static void test_batch_arguments(void **state) {
    (void)state;
    tdm_arc_programs *p;
    assert_int_equal(tdm_arc_programs_parse(PROGS, strlen(PROGS), "t", &p), TDM_OK);
    int cell = 1;
    tdm_arc_call_ref c = {NP, {1, 1, &cell}}; /* no such program */
    tdm_arc_batch *b = NULL;
    assert_int_equal(tdm_arc_batch_run(p, &c, 1, 1, 0, &b), TDM_E_INVAL);
    c.prog = 0, c.grid.h = -1;
    assert_int_equal(tdm_arc_batch_run(p, &c, 1, 1, 0, &b), TDM_E_INVAL);
    assert_int_equal(tdm_arc_batch_run(NULL, &c, 1, 1, 0, &b), TDM_E_INVAL);
    assert_null(b);
    assert_int_equal(tdm_arc_batch_run(p, NULL, 0, 0, 0, &b), TDM_OK); /* an empty batch */
    assert_null(tdm_arc_batch_result(b, 0));
    tdm_arc_batch_free(b);
    tdm_arc_batch_free(NULL);
    tdm_arc_programs_free(p);
}

int main(void) {
    tu_init_seed("test_arc_batch");
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_batch_matches_single_runs), cmocka_unit_test(test_prepared_inputs),
                                       cmocka_unit_test(test_batches_in_turn),
                                       cmocka_unit_test(test_batch_arguments)};
    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);
}
