/* test_arc_column.c: closures called by column (prim_func.c, arc_call_column: a node's calls over all of a
 * container's members before its parent's) against the eager runtime, which calls them member by member
 * in CPython's order. Seeded random closure trees (compose, chain, fork, matcher, rbind, lbind over
 * primitives of patches, ints, bools and position pairs; some shared by a fork's two branches, some making a
 * closure per call, some ill-typed so that calls raise) are passed to sfilter, mfilter, apply, mapply,
 * argmax, argmin and extract over the objects of random grids, those objects as a tuple, their product
 * (pairs read by first and last), and the grid's positions each in a set of its own: the same value or the same error, and as many closures made. Then
 * results that hold closures (their hashes follow the serial numbers), and calls near the recursion limit. */
#include "arc_test_util.h"

enum { TP, TI, TB, TT, TX, NTYPES }; /* patch, int, bool, (int, int), pair of patches */

static const struct {
    int id, in, out;
} unary[] = {
    {ARC_P_size, TP, TI},      {ARC_P_height, TP, TI},     {ARC_P_width, TP, TI},     {ARC_P_uppermost, TP, TI},
    {ARC_P_leftmost, TP, TI},  {ARC_P_numcolors, TP, TI},  {ARC_P_color, TP, TI},     {ARC_P_normalize, TP, TP},
    {ARC_P_toindices, TP, TP}, {ARC_P_backdrop, TP, TP},   {ARC_P_box, TP, TP},       {ARC_P_hmirror, TP, TP},
    {ARC_P_vmirror, TP, TP},   {ARC_P_delta, TP, TP},      {ARC_P_ulcorner, TP, TT},  {ARC_P_shape, TP, TT},
    {ARC_P_center, TP, TT},    {ARC_P_increment, TI, TI},  {ARC_P_double, TI, TI},    {ARC_P_invert, TI, TI},
    {ARC_P_halve, TI, TI},     {ARC_P_flip, TB, TB},       {ARC_P_invert, TT, TT},    {ARC_P_first, TX, TP},
    {ARC_P_last, TX, TP},      {ARC_P_even, TI, TB},       {ARC_P_positive, TI, TB},
};
static const struct {
    int id, a, b, out;
} binary[] = {
    {ARC_P_manhattan, TP, TP, TI}, {ARC_P_adjacent, TP, TP, TB},   {ARC_P_hmatching, TP, TP, TB},
    {ARC_P_vmatching, TP, TP, TB}, {ARC_P_combine, TP, TP, TP},    {ARC_P_intersection, TP, TP, TP},
    {ARC_P_add, TI, TI, TI},       {ARC_P_subtract, TI, TI, TI},   {ARC_P_greater, TI, TI, TB},
    {ARC_P_equality, TI, TI, TB},  {ARC_P_both, TB, TB, TB},       {ARC_P_either, TB, TB, TB},
    {ARC_P_shift, TP, TT, TP},     {ARC_P_add, TT, TT, TT},        {ARC_P_equality, TP, TP, TB},
};
#define NU (int)(sizeof unary / sizeof *unary)
#define NB (int)(sizeof binary / sizeof *binary)

static tu_rng rng;
static tdm_arc_val *shared[NTYPES][NTYPES]; /* a tree made this round, per (in, out): reused now and then */
static tdm_arc_val *patch_const;
static int closure_nodes; /* nodes of the tree being made that make a closure per call */

static tdm_arc_val *constant(tdm_arc_rt *rt, int type) {
    switch (type) {
    case TP: return patch_const;
    case TI: return arc_int(rt, (int64_t)tu_below(&rng, 5) - 1);
    case TB: return arc_bool((int)tu_below(&rng, 2));
    default: return arc_ipair(rt, (int64_t)tu_below(&rng, 3) - 1, (int64_t)tu_below(&rng, 3) - 1);
    }
}

/* A random one-argument function value from type in to type out (now and then of another type: its calls
 * raise, or give values the next node raises on). */
static tdm_arc_val *tree(tdm_arc_rt *rt, int in, int out, int depth) {
    if (tu_below(&rng, 60) == 0) out = (int)tu_below(&rng, NTYPES - 1); /* ill-typed on purpose */
    if (shared[in][out] && tu_below(&rng, 4) == 0) return shared[in][out];
    tdm_arc_val *a[3], *f = NULL;
    int kind = depth >= 4 ? 0 : (int)tu_below(&rng, 8);
    if (in == TX && kind == 0) kind = 1; /* a pair's patches through first or last */
    switch (kind) {
    case 0: /* a primitive of that type, or one reached by compose */
    case 1: {
        int mid = in == TX ? TP : in;
        for (int tries = 0; tries < 60 && !f; tries++) {
            int u = (int)tu_below(&rng, NU);
            if (unary[u].in == mid && unary[u].out == out) f = arc_prim_val(unary[u].id);
        }
        if (!f && mid == out) f = arc_prim_val(ARC_P_identity);
        if (!f) { /* no primitive from mid to out: a binary one of that result, bound to a constant */
            int b = (int)tu_below(&rng, NB);
            for (int tries = 0; tries < 60 && (binary[b].out != out || binary[b].a != mid); tries++) b = (int)tu_below(&rng, NB);
            a[0] = arc_prim_val(binary[b].id), a[1] = constant(rt, binary[b].b), f = arc_p_rbind(rt, a);
        }
        if (in == TX) a[0] = f, a[1] = arc_prim_val(tu_below(&rng, 2) ? ARC_P_first : ARC_P_last), f = arc_p_compose(rt, a);
        break;
    }
    case 2: {
        int mid = in == TX ? TP : in;
        a[0] = tree(rt, mid, out, depth + 1), a[1] = tree(rt, in, mid, depth + 1), f = arc_p_compose(rt, a);
        break;
    }
    case 3: {
        int mid = in == TX ? TP : in;
        a[0] = tree(rt, mid, out, depth + 1), a[1] = tree(rt, mid, mid, depth + 1), a[2] = tree(rt, in, mid, depth + 1);
        f = arc_p_chain(rt, a);
        break;
    }
    case 4: { /* fork of a binary primitive of that result */
        int b = (int)tu_below(&rng, NB);
        for (int tries = 0; tries < 30 && binary[b].out != out; tries++) b = (int)tu_below(&rng, NB);
        a[0] = arc_prim_val(binary[b].id), a[1] = tree(rt, in, binary[b].a, depth + 1), a[2] = tree(rt, in, binary[b].b, depth + 1);
        /* one closure on both sides: marked (kept()). Under intersection, a kept set given twice as one
           object would take CPython's copy shortcut (a & a), where the reference meets two equal sets */
        if (tu_below(&rng, 3) == 0) a[2] = a[1];
        f = arc_p_fork(rt, a);
        break;
    }
    case 5: /* matcher, for a bool */
        if (out != TB) return tree(rt, in, out, depth + 1);
        a[0] = tree(rt, in, TI, depth + 1), a[1] = constant(rt, TI), f = arc_p_matcher(rt, a);
        break;
    case 6: { /* rbind or lbind of a binary primitive of that result with a constant */
        int b = (int)tu_below(&rng, NB);
        for (int tries = 0; tries < 60 && binary[b].out != out; tries++) b = (int)tu_below(&rng, NB);
        a[0] = arc_prim_val(binary[b].id);
        int r = (int)tu_below(&rng, 2), free = r ? binary[b].a : binary[b].b;
        a[1] = constant(rt, r ? binary[b].b : binary[b].a), f = r ? arc_p_rbind(rt, a) : arc_p_lbind(rt, a);
        if (free != in) a[0] = f, a[1] = tree(rt, in, free, depth + 1), f = arc_p_compose(rt, a); /* its argument made */
        break;
    }
    default: { /* a closure made per call: mapply(lbind(shift, g(x)), toindices(h(x))), a patch (one a tree:
                  nested, the patches grow past the arena) */
        if (closure_nodes++) return tree(rt, in, out, 4);
        a[0] = arc_prim_val(ARC_P_lbind), a[1] = arc_prim_val(ARC_P_shift);
        tdm_arc_val *ls = arc_p_lbind(rt, a);
        a[0] = ls, a[1] = tree(rt, in, TP, depth + 1);
        tdm_arc_val *g = arc_p_compose(rt, a);
        a[0] = arc_prim_val(ARC_P_toindices), a[1] = tree(rt, in, TP, depth + 1);
        tdm_arc_val *h = arc_p_compose(rt, a);
        a[0] = arc_prim_val(ARC_P_mapply), a[1] = g, a[2] = h, f = arc_p_fork(rt, a);
        if (out != TP) a[0] = tree(rt, TP, out, depth + 1), a[1] = f, f = arc_p_compose(rt, a);
        break;
    }
    }
    if (!shared[in][out] || tu_below(&rng, 3) == 0) shared[in][out] = f;
    return f;
}

static tdm_arc_rt *rts[2];
static int outcomes[2];

static void same(tdm_arc_val *res[2]) {
    assert_true((res[0] == NULL) == (res[1] == NULL));
    if (res[0]) {
        assert_true(arc_eq(res[0], res[1]));
        if (arc_is_set(res[0])) assert_true(arc_hash(res[0]) == arc_hash(res[1]));
    } else {
        assert_string_equal(rts[0]->err, rts[1]->err);
    }
    assert_int_equal(rts[0]->serial, rts[1]->serial); /* as many closures made */
    assert_int_equal(rts[0]->depth, 0);
    assert_null(rts[0]->lazy_args); /* offered to one lazy call only, never left for a later one */
    outcomes[res[0] != NULL]++;
}

static void round_of(void) {
    int h = 1 + (int)tu_below(&rng, 12), w = 1 + (int)tu_below(&rng, 12), cells[144], ncol = 1 + (int)tu_below(&rng, 4);
    for (int k = 0; k < h * w; k++) cells[k] = tu_below(&rng, 3) ? 0 : 1 + (int)tu_below(&rng, (uint64_t)ncol);
    int flags = (int)tu_below(&rng, 8), which = (int)tu_below(&rng, 7), over = (int)tu_below(&rng, 4);
    uint64_t seed = tu_below(&rng, UINT64_MAX);
    tdm_arc_val *res[2];
    for (int s = 0; s < 2; s++) {
        tdm_arc_rt *rt = rts[s];
        tdm_arc_rt_reset(rt);
        rng = tu_rng_for(seed); /* the same trees and constants on both runtimes */
        memset(shared, 0, sizeof shared);
        tdm_arc_val *g, *a[4];
        assert_int_equal(tdm_arc_grid_new(rt, h, w, cells, &g), TDM_OK);
        a[0] = g, a[1] = arc_bool(flags & 1), a[2] = arc_bool(flags & 2), a[3] = arc_bool(flags & 4);
        tdm_arc_val *objs = arc_p_objects(rt, a), *c = objs;
        assert_non_null(objs);
        patch_const = objs->n ? arc_first(objs) : g;
        int in = TP;
        if (over == 1) c = arc_p_totuple(rt, &objs); /* apply's and mapply's ordered paths */
        if (over == 2 && objs->n <= 12) /* pairs, read through first and last */
            a[0] = a[1] = objs, c = arc_p_product(rt, a), in = TX;
        if (over == 3) /* one-position sets (apply(initset, asindices(g))): manhattan reads them in place */
            a[0] = arc_prim_val(ARC_P_initset), a[1] = arc_p_asindices(rt, &g), c = arc_p_apply(rt, a);
        assert_non_null(c);
        int out = which <= 1 || which == 6 ? TB : which <= 3 ? TP : TI;
        closure_nodes = 0;
        tdm_arc_val *f = tree(rt, in, out, 0);
        switch (which) {
        case 0: a[0] = c, a[1] = f, res[s] = arc_p_sfilter(rt, a); break;
        case 1: a[0] = c, a[1] = f, res[s] = arc_p_mfilter(rt, a); break;
        case 2: a[0] = f, a[1] = c, res[s] = arc_p_apply(rt, a); break;
        case 3: a[0] = f, a[1] = c, res[s] = arc_p_mapply(rt, a); break;
        case 4: a[0] = c, a[1] = f, res[s] = arc_p_argmax(rt, a); break;
        case 5: a[0] = c, a[1] = f, res[s] = arc_p_argmin(rt, a); break;
        default: a[0] = c, a[1] = f, res[s] = arc_p_extract(rt, a); break;
        }
    }
    same(res);
    if (res[0] && arc_is_set(res[0])) ta_same_table(res[0], res[1], KEYS_EQ); /* laid out: CPython's table */
}

static void test_random_trees(void **state) {
    (void)state;
    assert_int_equal(tdm_arc_rt_new(&rts[0]), TDM_OK);
    assert_int_equal(tdm_arc_rt_new(&rts[1]), TDM_OK);
    rts[1]->eager = 1;
    tu_rng master = tu_rng_for(0xc01c);
    outcomes[0] = outcomes[1] = 0;
    for (int round = 0; round < 4000; round++) {
        rng = tu_rng_for(tu_below(&master, UINT64_MAX));
        round_of();
    }
    print_message("%u closures called by column; %d calls gave values, %d raised (the same on both runtimes)\n",
                  rts[0]->columns, outcomes[1], outcomes[0]);
    assert_int_equal(rts[1]->columns, 0); /* the eager runtime calls member by member */
    assert_true(rts[0]->columns > 2000 && outcomes[0] > 200 && outcomes[1] > 2000);
    tdm_arc_rt_free(rts[0]);
    tdm_arc_rt_free(rts[1]);
}

/* A walk calls a box primitive on one column twice (fork(intersection, outbox, outbox), the composes of
 * 0962bcdd): the second time it gives the first call's sets again, each as a twin (CPython's second call
 * makes a second set, and `a & a` of one set copies its table, which can be larger than the one the walk
 * over the elements makes). apply over the objects as a set and as a tuple: every result's table is the
 * eager runtime's. */
static void test_same_column(void **state) {
    (void)state;
    static const int box_prims[] = {ARC_P_outbox, ARC_P_inbox, ARC_P_box, ARC_P_backdrop, ARC_P_delta, ARC_P_corners,
                                    ARC_P_toindices, ARC_P_normalize};
    static const int joins[] = {ARC_P_intersection, ARC_P_combine, ARC_P_difference};
    assert_int_equal(tdm_arc_rt_new(&rts[0]), TDM_OK);
    assert_int_equal(tdm_arc_rt_new(&rts[1]), TDM_OK);
    rts[1]->eager = 1;
    tu_rng r = tu_rng_for(0x5a3e);
    unsigned before = rts[0]->columns;
    for (int round = 0; round < 600; round++) {
        int h = 2 + (int)tu_below(&r, 12), w = 2 + (int)tu_below(&r, 12), cells[196];
        for (int k = 0; k < h * w; k++) cells[k] = tu_below(&r, 3) ? 0 : (int)tu_below(&r, 10);
        int p = box_prims[tu_below(&r, 8)], q = tu_below(&r, 2) ? p : box_prims[tu_below(&r, 8)], j = joins[tu_below(&r, 3)];
        int tuple = (int)tu_below(&r, 2);
        tdm_arc_val *res[2];
        for (int s = 0; s < 2; s++) {
            tdm_arc_rt *rt = rts[s];
            tdm_arc_rt_reset(rt);
            tdm_arc_val *g, *a[4];
            assert_int_equal(tdm_arc_grid_new(rt, h, w, cells, &g), TDM_OK);
            a[0] = g, a[1] = arc_bool(1), a[2] = arc_bool(0), a[3] = arc_bool(1);
            tdm_arc_val *objs = arc_p_objects(rt, a);
            if (tuple) objs = arc_p_totuple(rt, &objs);
            /* fork(j, p, q), or fork(j, compose(p, identity), q): p's column and q's are the walk's input, or
               p's is identity's column of the same values */
            a[0] = arc_prim_val(p), a[1] = arc_prim_val(ARC_P_identity);
            tdm_arc_val *cp = round % 4 == 3 ? arc_p_compose(rt, a) : arc_prim_val(p);
            a[0] = arc_prim_val(j), a[1] = cp, a[2] = arc_prim_val(q);
            a[0] = arc_p_fork(rt, a), a[1] = objs;
            res[s] = arc_p_apply(rt, a);
        }
        same(res);
        if (!res[0]) continue;
        if (!tuple) ta_same_table(res[0], res[1], KEYS_EQ);
        for (uint32_t k = 0; tuple && k < res[0]->n; k++) ta_same_table(res[0]->u.items[k], res[1]->u.items[k], KEYS_EQ);
    }
    assert_true(rts[0]->columns - before > 300);
    tdm_arc_rt_free(rts[0]);
    tdm_arc_rt_free(rts[1]);
}

/* apply of a closure that returns a closure made per member (lbind(shift, normalize(x))): the results hold
 * functions, so the column's are dropped and the members are called one by one, in CPython's order for a
 * tuple; the serial numbers, which are the closures' hashes, are the eager runtime's. */
static void test_closures_made(void **state) {
    (void)state;
    assert_int_equal(tdm_arc_rt_new(&rts[0]), TDM_OK);
    assert_int_equal(tdm_arc_rt_new(&rts[1]), TDM_OK);
    rts[1]->eager = 1;
    int cells[] = {1, 0, 2, 0, 0, 0, 3, 0, 4};
    for (int tuple = 0; tuple < 2; tuple++) {
        tdm_arc_val *res[2];
        for (int s = 0; s < 2; s++) {
            tdm_arc_rt *rt = rts[s];
            tdm_arc_rt_reset(rt);
            tdm_arc_val *g, *a[4];
            assert_int_equal(tdm_arc_grid_new(rt, 3, 3, cells, &g), TDM_OK);
            a[0] = g, a[1] = arc_bool(1), a[2] = arc_bool(0), a[3] = arc_bool(1);
            tdm_arc_val *objs = arc_p_objects(rt, a);
            if (tuple) objs = arc_p_totuple(rt, &objs);
            a[0] = arc_prim_val(ARC_P_lbind), a[1] = arc_prim_val(ARC_P_shift), a[0] = arc_p_lbind(rt, a);
            a[1] = arc_prim_val(ARC_P_normalize);
            a[0] = arc_p_compose(rt, a), a[1] = objs;
            res[s] = arc_p_apply(rt, a);
            assert_non_null(res[s]);
        }
        assert_int_equal(rts[0]->serial, rts[1]->serial);
        assert_int_equal(res[0]->n, 4);
        assert_true(arc_hash(res[0]) == arc_hash(res[1]));
        for (uint32_t k = 0; tuple && k < 4; k++) /* the k-th closure has the k-th serial number */
            assert_true(arc_hash(res[0]->u.items[k]) == arc_hash(res[1]->u.items[k]));
    }
    tdm_arc_rt_free(rts[0]);
    tdm_arc_rt_free(rts[1]);
}

/* Near the recursion limit: apply of a tree (a fork, a closure both its sides reach, a bind of shift or of
 * apply, which calls size itself) under k composes of identity (the column walks k nodes deep), the same
 * apply itself called k composes deep, and mapply of the tree as the last call k composes deep (mapply's
 * column makes its last calls lazily); the outcome (value, or the error and its message) is the eager
 * runtime's for every k, and the limit falls inside the range. */
static void test_depths(void **state) {
    (void)state;
    assert_int_equal(tdm_arc_rt_new(&rts[0]), TDM_OK);
    assert_int_equal(tdm_arc_rt_new(&rts[1]), TDM_OK);
    rts[1]->eager = 1;
    int cells[] = {1, 0, 2, 2, 0, 0, 3, 0, 4}, fork_kind;
    for (int deep_apply = 0; deep_apply < 3; deep_apply++) /* 2: mapply */
        for (fork_kind = 0; fork_kind < 4; fork_kind++) {
            outcomes[0] = outcomes[1] = 0;
            for (int k = 978; k <= 994; k++) {
                tdm_arc_val *res[2];
                for (int s = 0; s < 2; s++) {
                    tdm_arc_rt *rt = rts[s];
                    tdm_arc_rt_reset(rt);
                    tdm_arc_val *g, *a[4], *X;
                    assert_int_equal(tdm_arc_grid_new(rt, 3, 3, cells, &g), TDM_OK);
                    a[0] = g, a[1] = arc_bool(1), a[2] = arc_bool(0), a[3] = arc_bool(1);
                    tdm_arc_val *objs = arc_p_objects(rt, a);
                    if (fork_kind == 0) { /* fork(astuple, size, compose(width, normalize)) */
                        a[0] = arc_prim_val(ARC_P_width), a[1] = arc_prim_val(ARC_P_normalize), a[2] = arc_p_compose(rt, a);
                        a[0] = arc_prim_val(ARC_P_astuple), a[1] = arc_prim_val(ARC_P_size), X = arc_p_fork(rt, a);
                    } else if (fork_kind == 1) { /* a closure both sides of a fork reach (marked), on one side deeper */
                        a[0] = arc_prim_val(ARC_P_size), a[1] = arc_prim_val(ARC_P_normalize), X = arc_p_compose(rt, a);
                        a[0] = arc_prim_val(ARC_P_astuple), a[1] = X, a[2] = X;
                        for (int d = 0; d < 3; d++) {
                            tdm_arc_val *b[2] = {arc_prim_val(ARC_P_identity), a[2]};
                            a[2] = arc_p_compose(rt, b);
                        }
                        X = arc_p_fork(rt, a);
                    } else if (fork_kind == 2) { /* rbind(shift, (1, 1)) */
                        a[0] = arc_prim_val(ARC_P_shift), a[1] = arc_ipair(rt, 1, 1), X = arc_p_rbind(rt, a);
                    } else { /* lbind(apply, size): a primitive that calls a function, bound */
                        a[0] = arc_prim_val(ARC_P_apply), a[1] = arc_prim_val(ARC_P_size), X = arc_p_lbind(rt, a);
                    }
                    if (deep_apply == 2) { /* compose(compose(...(X, identity)...), identity): X the last call, k deep */
                        tdm_arc_val *b[2] = {X, arc_prim_val(ARC_P_identity)};
                        for (int d = 0; d < k; d++) b[0] = arc_p_compose(rt, b);
                        a[0] = b[0], a[1] = objs;
                        res[s] = arc_p_mapply(rt, a);
                    } else if (deep_apply) {
                        a[0] = arc_prim_val(ARC_P_apply), a[1] = X;
                        res[s] = arc_call1(rt, ta_under_composes(rt, arc_p_lbind(rt, a), k), objs);
                    } else {
                        a[0] = ta_under_composes(rt, X, k), a[1] = objs;
                        res[s] = arc_p_apply(rt, a);
                    }
                }
                same(res);
            }
            assert_true(outcomes[0] > 0 && outcomes[1] > 0);
        }
    assert_true(rts[0]->columns > 10);
    tdm_arc_rt_free(rts[0]);
    tdm_arc_rt_free(rts[1]);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_trees),
        cmocka_unit_test(test_same_column), cmocka_unit_test(test_closures_made),
        cmocka_unit_test(test_depths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
