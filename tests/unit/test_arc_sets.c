/* test_arc_sets.c: the objects-based batched primitives' CPU forms (src/arc/exec_sets.c: objects in all 8
 * flag combinations, partition, fgpartition, the filters and picks that follow them, merge, recolor, the
 * grid writers, palette and the colour-set readers) against the interpreter's own primitives, on seeded
 * random grids of every hard kind (blobs, noise, checkerboards, one colour, stripes, 0/8 and 1/9 palettes).
 * Each form runs on lanes the forms themselves made, and wherever it gives status 1 the lane it wrote is
 * decoded (exec_lane.c) and compared with the primitive's result on the decoded arguments: the same kinds,
 * the same values and, for every frozenset at every depth, the same CPython table (size, fill, slot by
 * slot). A form must never give status 1 where the interpreter raises. Each form must accept some lanes
 * (the makers and palette every lane), so the test cannot pass by refusing. TANDEM_TEST_CASES: grids
 * (200 by default). */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "arc_sets_gen.h"
#include "arc_test_util.h" /* ta_repr */

#include "arc/arc_internal.h"

#include <stdlib.h>

static tdm_arc_rt *rt;
static uint64_t accepted[ARC_NBOP], refused[ARC_NBOP];

/* a and b are the same value with the same layouts, all the way down. */
static int same(tdm_arc_val *a, tdm_arc_val *b) {
    if (a == b) return 1;
    if (a->kind != b->kind || a->n != b->n) return 0;
    switch (a->kind) {
    case TDM_ARC_INT: case TDM_ARC_BOOL: return a->u.i == b->u.i;
    case TDM_ARC_TUPLE:
        for (uint32_t k = 0; k < a->n; k++)
            if (!same(a->u.items[k], b->u.items[k])) return 0;
        return 1;
    case TDM_ARC_FSET: {
        arc_slot *x = arc_set_slots(a), *y = arc_set_slots(b);
        if (a->u.set.mask != b->u.set.mask || a->u.set.fill != b->u.set.fill) return 0;
        for (uint32_t s = 0; s <= a->u.set.mask; s++) {
            tdm_arc_val *p = x[s].key, *q = y[s].key;
            if (!p || !q || p == ARC_DUMMY || q == ARC_DUMMY) {
                if (p != q) return 0;
                continue;
            }
            if (x[s].hash != y[s].hash || !same(p, q)) return 0;
        }
        return 1;
    }
    default: return 0;
    }
}

static arc_col new_col(void) {
    arc_col c;
    assert_int_equal(arc_cpu_col_alloc(1, &c), TDM_OK);
    memset(c.cells, 0, 900), memset(c.hw, 0, 2), memset(c.iv, 0, 16);
    return c;
}

/* Form op on args (one-lane columns; NULL for SIZEFN), checked against the interpreter; the result lane in
 * out, its status returned. */
static int check(int op, const arc_col *a0, const arc_col *a1, const arc_col *a2, const arc_col *a3, const arc_col *out) {
    const arc_bop_info *info = &arc_bop_table[op];
    const arc_col *a[4] = {a0, a1, a2, a3};
    tdm_arc_val *args[4];
    memset(out->cells, 0xAB, 900); /* whatever a form leaves unwritten shows */
    int st = sg_run(op, a0, a1, a2, a3, out);
    tdm_arc_rt_reset(rt); /* lanes live in columns: the runtime only holds this check's values */
    rt->failed = 0, rt->status = 0, rt->err[0] = '\0', rt->depth = 0;
    for (int k = 0; k < info->nargs; k++) {
        args[k] = info->arg[k] == ARC_VK_SIZEFN ? arc_prim_val(ARC_P_size)
                                               : arc_lane_decode(rt, info->arg[k], a[k]->cells, a[k]->hw, a[k]->iv);
        assert_non_null(args[k]);
    }
    tdm_arc_val *want = arc_call(rt, arc_prim_val(info->prim), info->nargs, args);
    const char *name = tdm_arc_prim_name(info->prim);
    if (!st) {
        refused[op]++;
        rt->failed = 0, rt->status = 0, rt->err[0] = '\0';
        return 0;
    }
    accepted[op]++;
    tu_check(want != NULL, "%s (form %d): status 1 where the interpreter raises (%s)", name, op, rt->err);
    tdm_arc_val *got = arc_lane_decode(rt, info->out, out->cells, out->hw, out->iv);
    assert_non_null(got);
    if (!same(got, want)) {
        char *g = ta_repr(got), *w = ta_repr(want), *x0 = ta_repr(args[0]);
        print_error("%s (form %d) of %.300s\n  gives %.500s\n  the interpreter %.500s\n", name, op, x0, g, w);
        free(g), free(w), free(x0);
        fail();
    }
    if (info->out == ARC_VK_GRID || info->out == ARC_VK_OBJS)
        for (int s = 0; s < 900; s++)
            tu_check(s / 30 < out->hw[0] && s % 30 < out->hw[1] ? 1 : out->cells[s] == 0, "%s: cell %d outside the grid not 0", name, s);
    return 1;
}

static void set_int(const arc_col *c, int64_t v) { c->iv[0] = v, c->iv[1] = 0; }

static const arc_col *truth(const arc_col *c, int v) {
    set_int(c, v);
    return c;
}

/* Every reader of a colour set, on S; then S without a random colour, read again (two levels). */
static void colour_set_readers(tu_rng *r, const arc_col *S, const arc_col *k, const arc_col *o, const arc_col *R, int depth) {
    check(ARC_BOP_size_cs, S, NULL, NULL, NULL, o);
    check(ARC_BOP_first_cs, S, NULL, NULL, NULL, o);
    check(ARC_BOP_last_cs, S, NULL, NULL, NULL, o);
    for (int q = 0; q < 3; q++) {
        int64_t v = q == 2 ? tu_range(r, -2, 12) : (int64_t)tu_below(r, 10);
        set_int(k, v);
        check(ARC_BOP_other_cs, S, k, NULL, NULL, o);
        if (check(ARC_BOP_remove_cs, k, S, NULL, NULL, R) && depth < 2) {
            arc_col R2 = new_col();
            colour_set_readers(r, R, k, o, &R2, depth + 1);
            arc_cpu_col_free(&R2);
        }
    }
}

/* The readers of an object-like lane X (ONE, MSET, MSUB or recoloured; other forms must refuse them). */
static void object_readers(tu_rng *r, const arc_col *X, const arc_col *G, const arc_col *G2, const arc_col *k, const arc_col *o,
                           const arc_col *S) {
    check(ARC_BOP_size_os, X, NULL, NULL, NULL, o);
    check(ARC_BOP_color_os, X, NULL, NULL, NULL, o);
    if (check(ARC_BOP_palette_os, X, NULL, NULL, NULL, S)) {
        arc_col R = new_col();
        colour_set_readers(r, S, k, o, &R, 1);
        arc_cpu_col_free(&R);
    }
    const arc_col *grids[2] = {G, G2};
    for (int q = 0; q < 2; q++) {
        set_int(k, tu_below(r, 8) ? (int64_t)tu_below(r, 10) : tu_range(r, -1, 11));
        check(ARC_BOP_fill_os, grids[q], k, X, NULL, o);
        check(ARC_BOP_underfill_os, grids[q], k, X, NULL, o);
        check(ARC_BOP_cover_os, grids[q], X, NULL, NULL, o);
        check(ARC_BOP_paint_os, grids[q], X, NULL, NULL, o);
        check(ARC_BOP_underpaint_os, grids[q], X, NULL, NULL, o);
        check(ARC_BOP_subgrid_os, X, grids[q], NULL, NULL, o);
    }
}

static void test_forms_match_interpreter(void **state) {
    (void)state;
    assert_int_equal(tdm_arc_rt_new(&rt), TDM_OK);
    size_t n = getenv("TANDEM_TEST_CASES") ? (size_t)atoi(getenv("TANDEM_TEST_CASES")) : 200;
    arc_col G = new_col(), G2 = new_col(), k = new_col(), f[3] = {new_col(), new_col(), new_col()};
    arc_col SET = new_col(), SUB = new_col(), ONE = new_col(), M = new_col(), REC = new_col(), o = new_col(), CS = new_col(),
            R = new_col();
    tu_rng r = tu_rng_for(5151);
    for (size_t g = 0; g < n; g++) {
        sg_grid(&r, &G, 0);
        sg_grid(&r, &G2, 0);
        if (tu_below(&r, 2)) memcpy(G2.hw, G.hw, 2); /* the same shape: every mark lands */
        tu_check(check(ARC_BOP_palette, &G, NULL, NULL, NULL, &CS), "palette refused a grid");
        colour_set_readers(&r, &CS, &k, &o, &R, 1);
        for (int maker = 0; maker < 10; maker++) {
            int made = maker < 8 ? check(ARC_BOP_objects, &G, truth(&f[0], maker & 1), truth(&f[1], maker >> 1 & 1),
                                         truth(&f[2], maker >> 2 & 1), &SET)
                                 : check(maker == 8 ? ARC_BOP_partition : ARC_BOP_fgpartition, &G, NULL, NULL, NULL, &SET);
            tu_check(made, "maker %d refused a grid", maker);
            check(ARC_BOP_size_os, &SET, NULL, NULL, NULL, &o);
            object_readers(&r, &SET, &G, &G2, &k, &o, &CS); /* all refused: a set of objects is no patch */
            for (int m = 0; m < 2; m++) {
                const arc_col *X = m ? &SUB : &SET;
                if (m) {
                    /* a SUB: by size (a size some object has, half of the time) or by colour */
                    int by_size = tu_below(&r, 2);
                    set_int(&k, by_size ? (tu_below(&r, 4) ? 1 + (int64_t)tu_below(&r, 4) : tu_range(&r, -1, 40))
                                        : (int64_t)(tu_below(&r, 6) ? G.cells[tu_below(&r, G.hw[1])] : tu_range(&r, -1, 11)));
                    if (!check(by_size ? ARC_BOP_sizefilter_os : ARC_BOP_colorfilter_os, &SET, &k, NULL, NULL, &SUB)) continue;
                    check(ARC_BOP_size_os, &SUB, NULL, NULL, NULL, &o);
                    check(ARC_BOP_sizefilter_os, &SUB, &k, NULL, NULL, &o); /* a filter of a filter: refused */
                }
                if (check(ARC_BOP_merge_os, X, NULL, NULL, NULL, &M)) {
                    object_readers(&r, &M, &G, &G2, &k, &o, &CS);
                    check(ARC_BOP_merge_os, &M, NULL, NULL, NULL, &o);
                    set_int(&k, tu_below(&r, 6) ? (int64_t)tu_below(&r, 10) : tu_range(&r, -3, 14));
                    if (check(ARC_BOP_recolor_os, &k, &M, NULL, NULL, &REC)) object_readers(&r, &REC, &G, &G2, &k, &o, &CS);
                }
                for (int mx = 0; mx < 2; mx++)
                    if (check(mx ? ARC_BOP_argmax_os : ARC_BOP_argmin_os, X, NULL, NULL, NULL, &ONE)) {
                        object_readers(&r, &ONE, &G, &G2, &k, &o, &CS);
                        set_int(&k, (int64_t)tu_below(&r, 10));
                        if (check(ARC_BOP_recolor_os, &k, &ONE, NULL, NULL, &REC)) {
                            object_readers(&r, &REC, &G, &G2, &k, &o, &CS);
                            check(ARC_BOP_recolor_os, &k, &REC, NULL, NULL, &o); /* twice: refused */
                        }
                    }
            }
        }
    }
    uint64_t total = 0;
    for (int op = 0; op < ARC_NBOP; op++) {
        if (!accepted[op] && !refused[op]) continue;
        total += accepted[op];
        printf("%-14s form %2d: %7llu lanes accepted, %7llu refused\n", tdm_arc_prim_name(arc_bop_table[op].prim), op,
               (unsigned long long)accepted[op], (unsigned long long)refused[op]);
        tu_check(accepted[op] > 0, "form %d (%s) accepted no lane", op, tdm_arc_prim_name(arc_bop_table[op].prim));
    }
    static const int always[] = {ARC_BOP_objects, ARC_BOP_partition, ARC_BOP_fgpartition, ARC_BOP_palette, ARC_BOP_size_cs,
                                 ARC_BOP_remove_cs};
    for (size_t q = 0; q < sizeof always / sizeof *always; q++)
        tu_check(!refused[always[q]], "form %d refused %llu lanes", always[q], (unsigned long long)refused[always[q]]);
    printf("%llu lanes identical to the interpreter\n", (unsigned long long)total);
    arc_col all[] = {G, G2, k, f[0], f[1], f[2], SET, SUB, ONE, M, REC, o, CS, R};
    for (size_t q = 0; q < sizeof all / sizeof *all; q++) arc_cpu_col_free(&all[q]);
    tdm_arc_rt_free(rt);
}

int main(void) {
    tu_init_seed("test_arc_sets");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms_match_interpreter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
