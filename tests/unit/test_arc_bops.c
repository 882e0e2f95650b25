/* test_arc_bops.c: every batched primitive's GPU kernel (src/cuda/arc_bops.cu) against its CPU form
 * (src/arc/exec_cpu.c: the interpreter's own primitive on each lane), lane by lane, on seeded random
 * lanes: grids of 1..30 x 1..30 in all colours, ints around and outside 0..9 (and far outside), pairs with
 * negative and overflowing parts, position sets, objects, and lanes of objects and colour sets made by the
 * CPU forms from random grids (arc_sets_gen.h). Status and output must agree bit for bit.
 * The CPU half checks that the CPU forms compute (and refuse) what the interpreter does on a few known
 * lanes; the GPU half skips without a GPU (fails under TANDEM_TEST_REQUIRE_GPU=1).
 * TANDEM_TEST_CASES: lanes per primitive (3,000 by default). */
#include "arc_sets_gen.h"
#include "tandem/backend.h"

#include <stdlib.h>
#include <string.h>

#define CELLS 900

static int64_t random_int(tu_rng *r) {
    switch (tu_below(r, 8)) {
    case 0: return tu_range(r, -3, 0);
    case 1: return tu_range(r, 10, 40);
    case 2: return tu_below(r, 2) ? INT64_MAX - (int64_t)tu_below(r, 3) : INT64_MIN + (int64_t)tu_below(r, 3);
    default: return (int64_t)tu_below(r, 10);
    }
}

static arc_col scratch[4]; /* one-lane columns for arc_sets_gen.h */

static void random_lane(tu_rng *r, int kind, const arc_col *c, size_t l) {
    uint8_t *cells = c->cells + l * CELLS, *hw = c->hw + 2 * l;
    int64_t *iv = c->iv + 2 * l;
    memset(cells, 0, CELLS);
    switch (kind) {
    case ARC_VK_GRID: {
        int h = 1 + (int)tu_below(r, 30), w = 1 + (int)tu_below(r, 30);
        if (tu_below(r, 2)) h = 1 + (int)tu_below(r, 5), w = 1 + (int)tu_below(r, 5);
        int k = 1 + (int)tu_below(r, 10);
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++) cells[i * 30 + j] = (uint8_t)tu_below(r, (uint64_t)k);
        hw[0] = (uint8_t)h, hw[1] = (uint8_t)w;
        break;
    }
    case ARC_VK_INT: iv[0] = random_int(r); break;
    case ARC_VK_PAIR:
        for (int q = 0; q < 2; q++) iv[q] = tu_below(r, 6) ? tu_range(r, -4, 33) : random_int(r);
        break;
    case ARC_VK_POS:
        for (int s = 0; s < CELLS; s++) cells[s] = tu_below(r, 4) == 0;
        break;
    case ARC_VK_OBJ:
        for (int s = 0; s < CELLS; s++) cells[s] = tu_below(r, 3) ? ARC_OBJ_ABSENT : (uint8_t)tu_below(r, 10);
        break;
    case ARC_VK_OBJS: sg_objs(r, c, l, scratch); break;
    case ARC_VK_COLSET: sg_colset(r, c, l, scratch); break;
    case ARC_VK_TRUTH: iv[0] = tu_below(r, 2); break;
    }
}

/* The CPU form on a few lanes whose answers are known. */
static void test_cpu_forms(void **state) {
    (void)state;
    arc_col g, k, out;
    assert_int_equal(arc_cpu_col_alloc(2, &g), TDM_OK);
    assert_int_equal(arc_cpu_col_alloc(2, &k), TDM_OK);
    assert_int_equal(arc_cpu_col_alloc(2, &out), TDM_OK);
    memset(g.cells, 0, 2 * CELLS);
    g.cells[0] = 1, g.cells[1] = 2, g.cells[30] = 3, g.cells[31] = 4; /* ((1, 2), (3, 4)) */
    g.hw[0] = g.hw[1] = 2, g.hw[2] = 1, g.hw[3] = 1;                    /* and ((0,)) */
    uint8_t active[2] = {1, 1}, status[2] = {9, 9};
    arc_bop_call c = {.op = ARC_BOP_rot90, .n = 2, .arg = {g}, .out = out};
    assert_int_equal(arc_cpu_bop_run(&c, active, status, 1), TDM_OK);
    assert_true(status[0] == 1 && status[1] == 1);
    assert_int_equal(out.cells[0], 3), assert_int_equal(out.cells[1], 1), assert_int_equal(out.cells[30], 4);
    c.op = ARC_BOP_tophalf; /* ((1, 2),) and (): the second is not a lane */
    assert_int_equal(arc_cpu_bop_run(&c, active, status, 1), TDM_OK);
    assert_true(status[0] == 1 && status[1] == 0 && out.hw[0] == 1 && out.hw[1] == 2);
    c.op = ARC_BOP_replace, c.k[1][0] = 4, c.k[2][0] = 12; /* 12 is not a colour: lane 0 refused */
    assert_int_equal(arc_cpu_bop_run(&c, active, status, 1), TDM_OK);
    assert_true(status[0] == 0 && status[1] == 1);
    c.op = ARC_BOP_mostcolor;
    assert_int_equal(arc_cpu_bop_run(&c, active, status, 1), TDM_OK);
    assert_true(status[0] == 1 && out.iv[0] == 1); /* a four-way tie: the set's first colour */
    arc_cpu_col_free(&g), arc_cpu_col_free(&k), arc_cpu_col_free(&out);
}

static void test_gpu_matches_cpu(void **state) {
    (void)state;
    tdm_config cfg;
    tdm_config_init(&cfg);
    tdm_ctx *ctx;
    assert_int_equal(tdm_init(&ctx, &cfg), TDM_OK);
    const tdm_backend *b = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
    if (!b || !b->arc || !b->arc->bop_run) {
        const char *req = getenv("TANDEM_TEST_REQUIRE_GPU");
        if (req && !strcmp(req, "1")) fail_msg("TANDEM_TEST_REQUIRE_GPU=1 but the GPU half cannot run");
        printf("GPU half: not run (no CUDA backend with ARC kernels on this machine)\n");
        tdm_destroy(ctx);
        return;
    }
    const tdm_arc_dev_ops *d = b->arc;
    for (int q = 0; q < 4; q++) assert_int_equal(arc_cpu_col_alloc(1, &scratch[q]), TDM_OK);
    size_t n = getenv("TANDEM_TEST_CASES") ? (size_t)atoi(getenv("TANDEM_TEST_CASES")) : 3000;
    uint32_t *lanes = malloc(n * sizeof *lanes);
    uint8_t *active = malloc(n), *st_cpu = malloc(n), *st_gpu = malloc(n);
    for (size_t l = 0; l < n; l++) lanes[l] = (uint32_t)l;
    arc_col h_arg[4], d_arg[4], h_out, d_out, back;
    for (int a = 0; a < 4; a++) assert_int_equal(arc_cpu_col_alloc(n, &h_arg[a]), TDM_OK);
    assert_int_equal(arc_cpu_col_alloc(n, &h_out), TDM_OK);
    assert_int_equal(arc_cpu_col_alloc(n, &back), TDM_OK);
    size_t refused = 0, total = 0;
    for (int op = 0; op < ARC_NBOP; op++) {
        const arc_bop_info *info = &arc_bop_table[op];
        tu_rng r = tu_rng_for(900 + (uint64_t)op);
        size_t accepted_op = 0;
        /* A constant argument drawn once can make every lane invalid (an upscale factor past 30 cells, a
         * downscale by 0): then the form is drawn again, per-lane arguments on the last try. */
        for (int attempt = 0; attempt < 3 && !accepted_op; attempt++) {
            int konst = attempt < 2 && tu_below(&r, 2); /* INT and PAIR arguments as constants half of the time */
            arc_bop_call hc = {.op = op, .n = n}, dc = hc;
            for (int a = 0; a < info->nargs; a++) {
                int k = info->arg[a];
                if (k == ARC_VK_SIZEFN) continue; /* nothing is passed */
                if (konst && a > 0 && (k == ARC_VK_INT || k == ARC_VK_PAIR || k == ARC_VK_TRUTH)) {
                    arc_col tmp = {h_arg[a].cells, h_arg[a].hw, hc.k[a]};
                    random_lane(&r, k, &tmp, 0);
                    dc.k[a][0] = hc.k[a][0], dc.k[a][1] = hc.k[a][1];
                    continue;
                }
                for (size_t l = 0; l < n; l++) random_lane(&r, k, &h_arg[a], l);
                assert_int_equal(d->col_alloc(b, n, &d_arg[a]), TDM_OK);
                assert_int_equal(d->col_put(b, &d_arg[a], lanes, n, &h_arg[a]), TDM_OK);
                hc.arg[a] = h_arg[a], dc.arg[a] = d_arg[a];
            }
            for (size_t l = 0; l < n; l++) active[l] = tu_below(&r, 16) != 0;
            memset(st_cpu, 0, n), memset(st_gpu, 0, n);
            memset(h_out.cells, 0, n * CELLS), memset(h_out.hw, 0, 2 * n), memset(h_out.iv, 0, 16 * n);
            hc.out = h_out;
            assert_int_equal(d->col_alloc(b, n, &d_out), TDM_OK);
            dc.out = d_out;
            assert_int_equal(d->col_put(b, &d_out, lanes, n, &h_out), TDM_OK); /* zeros, as on the host */
            assert_int_equal(arc_cpu_bop_run(&hc, active, st_cpu, 0), TDM_OK);
            assert_int_equal(d->bop_run(b, &dc, active, st_gpu), TDM_OK);
            assert_int_equal(d->col_get(b, &d_out, lanes, n, &back), TDM_OK);
            for (size_t l = 0; l < n; l++) {
                tu_check(st_cpu[l] == st_gpu[l], "%s lane %zu: status %d on the GPU, %d on the CPU", tdm_arc_prim_name(info->prim),
                         l, st_gpu[l], st_cpu[l]);
                if (!st_cpu[l] || !st_gpu[l]) {
                    refused += active[l];
                    continue;
                }
                total++, accepted_op++;
                int same = 1;
                if (info->out == ARC_VK_GRID || info->out == ARC_VK_OBJS)
                    same = !memcmp(back.hw + 2 * l, h_out.hw + 2 * l, 2) && !memcmp(back.cells + l * CELLS, h_out.cells + l * CELLS, CELLS) &&
                           (info->out == ARC_VK_GRID || !memcmp(back.iv + 2 * l, h_out.iv + 2 * l, 16));
                else if (info->out == ARC_VK_COLSET) same = !memcmp(back.iv + 2 * l, h_out.iv + 2 * l, 16);
                else if (info->out == ARC_VK_POS) same = !memcmp(back.cells + l * CELLS, h_out.cells + l * CELLS, CELLS);
                else same = back.iv[2 * l] == h_out.iv[2 * l] && (info->out != ARC_VK_PAIR || back.iv[2 * l + 1] == h_out.iv[2 * l + 1]);
                tu_check(same, "%s lane %zu: the GPU's result differs from the CPU's", tdm_arc_prim_name(info->prim), l);
            }
            for (int a = 0; a < info->nargs; a++)
                if (dc.arg[a].iv) d->col_free(b, &d_arg[a]);
            d->col_free(b, &d_out);
        }
        tu_check(accepted_op > 0, "%s (form %d): no lane accepted on both in 3 draws", tdm_arc_prim_name(info->prim), op);
    }
    printf("%d batched primitives x %zu lanes: %zu results identical, %zu lanes refused on both\n", ARC_NBOP, n, total, refused);
    for (int a = 0; a < 4; a++) arc_cpu_col_free(&h_arg[a]);
    for (int q = 0; q < 4; q++) arc_cpu_col_free(&scratch[q]);
    arc_cpu_col_free(&h_out), arc_cpu_col_free(&back);
    free(lanes), free(active), free(st_cpu), free(st_gpu);
    tdm_destroy(ctx);
}

int main(void) {
    tu_init_seed("test_arc_bops");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_forms),
        cmocka_unit_test(test_gpu_matches_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
