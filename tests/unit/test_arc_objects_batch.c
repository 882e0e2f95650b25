/* test_arc_objects_batch.c: batched objects() labels (tdm_arc_objects_labels). The CPU labels are checked
 * against the interpreter's own objects() on seeded random grids in every flag combination (so the batch
 * path means what objects() means, mostcolor ties included), then the GPU's labels against the CPU's, bit
 * for bit, on many more grids; bad grids are named on both paths. The GPU half skips without a GPU and
 * fails under TANDEM_TEST_REQUIRE_GPU=1. */
#include "unit_common.h"

#include "tandem/arc.h"
#include "tandem/backend.h"

#include <stdlib.h>
#include <string.h>

#define SLOT TDM_ARC_SLOT
#define CELLS (SLOT * SLOT)

/* A random grid into a slot: shapes 1..30, palettes of 1..10 colours drawn to hit mostcolor's tie rule
 * (8 and 9 with 0 and 1, few colours) and blob-like runs so that objects span many cells. */
static void random_grid(tu_rng *r, uint8_t *cells, uint8_t *hw) {
    int h = 1 + (int)tu_below(r, 30), w = 1 + (int)tu_below(r, 30);
    if (tu_below(r, 4) == 0) h = 1 + (int)tu_below(r, 4), w = 1 + (int)tu_below(r, 4);
    int k = 1 + (int)tu_below(r, tu_below(r, 3) ? 4 : 10), pal[10];
    static const int tricky[] = {8, 0, 9, 1, 2, 3};
    for (int c = 0; c < k; c++) pal[c] = tu_below(r, 2) && c < 6 ? tricky[c] : (int)tu_below(r, 10);
    int runs = (int)tu_below(r, 3); /* 0: noise, 1-2: keep the left or upper colour often */
    memset(cells, 0, CELLS);
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) {
            int v = pal[tu_below(r, (uint64_t)k)];
            if (runs && j && tu_below(r, 3)) v = cells[i * SLOT + j - 1];
            if (runs == 2 && i && tu_below(r, 2)) v = cells[(i - 1) * SLOT + j];
            cells[i * SLOT + j] = (uint8_t)v;
        }
    /* slot cells outside the shape must be ignored: fill them with garbage colours */
    for (int s = 0; s < CELLS; s++)
        if (s / SLOT >= h || s % SLOT >= w) cells[s] = (uint8_t)tu_below(r, 256);
    hw[0] = (uint8_t)h, hw[1] = (uint8_t)w;
}

/* Labels from the interpreter: objects(grid, u, d, wbg), each object's smallest row-major index. */
static void interpreter_labels(tdm_arc_rt *rt, const uint8_t *cells, const uint8_t *hw, int flags, int16_t *out) {
    int h = hw[0], w = hw[1], g[CELLS];
    for (int i = 0; i < h; i++)
        for (int j = 0; j < w; j++) g[i * w + j] = cells[i * SLOT + j];
    tdm_arc_val *grid;
    assert_int_equal(tdm_arc_grid_new(rt, h, w, g, &grid), TDM_OK);
    const tdm_arc_val *t, *f, *fn, *res;
    assert_int_equal(tdm_arc_name_value(rt, "T", &t), TDM_OK);
    assert_int_equal(tdm_arc_name_value(rt, "F", &f), TDM_OK);
    assert_int_equal(tdm_arc_name_value(rt, "objects", &fn), TDM_OK);
    const tdm_arc_val *args[4] = {grid, flags & 1 ? t : f, flags & 2 ? t : f, flags & 4 ? t : f};
    assert_int_equal(tdm_arc_call(rt, fn, 4, args, &res), TDM_OK);
    for (int s = 0; s < CELLS; s++) out[s] = -1;
    size_t nobj = tdm_arc_val_len(res);
    const tdm_arc_val **objs = malloc((nobj + 1) * sizeof *objs), *cellv[CELLS], *pair[2], *pos[2];
    tdm_arc_val_items(res, objs, nobj);
    for (size_t o = 0; o < nobj; o++) {
        size_t nc = tdm_arc_val_items(objs[o], cellv, CELLS);
        assert_true(nc <= CELLS);
        int lo = CELLS;
        for (int pass = 0; pass < 2; pass++)
            for (size_t c = 0; c < nc; c++) {
                assert_int_equal(tdm_arc_val_items(cellv[c], pair, 2), 2);
                assert_int_equal(tdm_arc_val_items(pair[1], pos, 2), 2);
                int i = (int)tdm_arc_val_int(pos[0]), j = (int)tdm_arc_val_int(pos[1]);
                if (pass == 0 && i * w + j < lo) lo = i * w + j;
                if (pass == 1) out[i * SLOT + j] = (int16_t)lo;
            }
    }
    free(objs);
    tdm_arc_rt_reset(rt);
}

static tdm_ctx *make_ctx(tdm_device_pref device) {
    tdm_config cfg;
    tdm_config_init(&cfg);
    cfg.device = device;
    cfg.strict = 0;
    tdm_ctx *ctx;
    assert_int_equal(tdm_init(&ctx, &cfg), TDM_OK);
    return ctx;
}

static void test_cpu_matches_interpreter(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(51);
    tdm_ctx *ctx = make_ctx(TDM_DEVICE_CPU);
    tdm_arc_rt *rt;
    assert_int_equal(tdm_arc_rt_new(&rt), TDM_OK);
    enum { N = 96 };
    uint8_t *cells = malloc(N * CELLS), hw[2 * N];
    int16_t *got = malloc(N * CELLS * sizeof *got), want[CELLS];
    for (int flags = 0; flags < 8; flags++) {
        for (int g = 0; g < N; g++) random_grid(&r, cells + g * CELLS, hw + 2 * g);
        tdm_arc_objects_stats st;
        assert_int_equal(tdm_arc_objects_labels(ctx, cells, hw, N, flags & 1, flags & 2, flags & 4, TDM_DEVICE_CPU, 0,
                                                got, &st),
                         TDM_OK);
        assert_string_equal(st.backend, "cpu");
        for (int g = 0; g < N; g++) {
            interpreter_labels(rt, cells + g * CELLS, hw + 2 * g, flags, want);
            for (int s = 0; s < CELLS; s++)
                tu_check(got[g * CELLS + s] == want[s], "flags %d grid %d (%dx%d) slot %d: label %d, objects() gives %d",
                         flags, g, hw[2 * g], hw[2 * g + 1], s, got[g * CELLS + s], want[s]);
        }
    }
    free(cells), free(got);
    tdm_arc_rt_free(rt);
    tdm_destroy(ctx);
}

static void test_bad_grids(void **state) {
    (void)state;
    tdm_ctx *ctx = make_ctx(TDM_DEVICE_CPU);
    uint8_t cells[4 * CELLS] = {0}, hw[8] = {3, 3, 3, 3, 3, 3, 3, 3};
    int16_t labels[4 * CELLS];
    hw[4] = 31;
    assert_int_equal(tdm_arc_objects_labels(ctx, cells, hw, 4, 1, 0, 1, TDM_DEVICE_CPU, 0, labels, NULL), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "grid 2: shape 31x3"));
    hw[4] = 3;
    cells[1 * CELLS + 2 * SLOT + 1] = 10;
    assert_int_equal(tdm_arc_objects_labels(ctx, cells, hw, 4, 1, 0, 1, TDM_DEVICE_CPU, 0, labels, NULL), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "grid 1: colour 10 at row 2, column 1"));
    cells[1 * CELLS + 2 * SLOT + 1] = 0;
    cells[1 * CELLS + 5 * SLOT + 5] = 200; /* outside the 3x3 shape: ignored */
    hw[6] = 0;
    assert_int_equal(tdm_arc_objects_labels(ctx, cells, hw, 4, 1, 0, 1, TDM_DEVICE_CPU, 0, labels, NULL), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "grid 3: shape 0x3"));
    assert_int_equal(tdm_arc_objects_labels(ctx, NULL, hw, 4, 1, 0, 1, TDM_DEVICE_CPU, 0, labels, NULL), TDM_E_INVAL);
    assert_int_equal(tdm_arc_objects_labels(ctx, NULL, NULL, 0, 1, 0, 1, TDM_DEVICE_CPU, 0, NULL, NULL), TDM_OK);
    tdm_destroy(ctx);
}

static const tdm_backend *gpu_or_skip(tdm_ctx *ctx) {
    const tdm_backend *b = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
    if (!b || !b->arc) {
        const char *req = getenv("TANDEM_TEST_REQUIRE_GPU");
        if (req && !strcmp(req, "1")) fail_msg("TANDEM_TEST_REQUIRE_GPU=1 but the GPU half cannot run");
        printf("GPU half: not run (no CUDA backend with ARC kernels on this machine)\n");
        return NULL;
    }
    return b;
}

static void test_gpu_matches_cpu(void **state) {
    (void)state;
    tdm_ctx *ctx = make_ctx(TDM_DEVICE_AUTO);
    const tdm_backend *b = gpu_or_skip(ctx);
    if (!b) {
        tdm_destroy(ctx);
        skip();
    }
    tu_rng r = tu_rng_for(52);
    /* TANDEM_TEST_CASES: grids per flag combination (5,000 by default; more on the GPU machine) */
    size_t n = getenv("TANDEM_TEST_CASES") ? (size_t)atoi(getenv("TANDEM_TEST_CASES")) : 5000;
    if (n < 1) n = 1;
    uint8_t *cells = malloc(n * CELLS), *hw = malloc(2 * n);
    int16_t *cpu = malloc(n * CELLS * sizeof *cpu), *gpu = malloc(n * CELLS * sizeof *gpu);
    for (int flags = 0; flags < 8; flags++) {
        for (size_t g = 0; g < n; g++) random_grid(&r, cells + g * CELLS, hw + 2 * g);
        tdm_arc_objects_stats sc, sg;
        assert_int_equal(tdm_arc_objects_labels(ctx, cells, hw, n, flags & 1, flags & 2, flags & 4, TDM_DEVICE_CPU, 0, cpu, &sc), TDM_OK);
        assert_int_equal(tdm_arc_objects_labels(ctx, cells, hw, n, flags & 1, flags & 2, flags & 4, TDM_DEVICE_CUDA, 0, gpu, &sg), TDM_OK);
        assert_string_equal(sg.backend, b->name);
        for (size_t x = 0; x < n * CELLS; x++)
            tu_check(cpu[x] == gpu[x], "flags %d grid %zu slot %zu: cpu %d gpu %d", flags, x / CELLS, x % CELLS, cpu[x], gpu[x]);
    }
    /* Auto: a small batch stays on the CPU, a large one goes to the GPU. */
    tdm_arc_objects_stats st;
    assert_int_equal(tdm_arc_objects_labels(ctx, cells, hw, 10, 1, 0, 1, TDM_DEVICE_AUTO, 0, gpu, &st), TDM_OK);
    assert_string_equal(st.backend, "cpu");
    assert_int_equal(st.route_reason, TDM_ROUTE_SMALL_INPUT);
    if (n >= 4096) {
        assert_int_equal(tdm_arc_objects_labels(ctx, cells, hw, n, 1, 0, 1, TDM_DEVICE_AUTO, 0, gpu, &st), TDM_OK);
        assert_string_equal(st.backend, b->name);
    }
    /* A bad grid deep in the batch is named by the device path as by the CPU's. */
    size_t at = n / 2 + 1;
    memset(cells + at * CELLS, 0, CELLS); /* a valid 30x30 grid but for one cell */
    cells[at * CELLS + 3] = 11;
    hw[2 * at] = hw[2 * at + 1] = 30;
    assert_int_equal(tdm_arc_objects_labels(ctx, cells, hw, n, 1, 1, 0, TDM_DEVICE_CUDA, 0, gpu, NULL), TDM_E_INVAL);
    char want[64];
    snprintf(want, sizeof want, "grid %zu: colour 11 at row 0, column 3", at);
    tu_check(strstr(tdm_last_error(), want) != NULL, "message '%s' lacks '%s'", tdm_last_error(), want);
    free(cells), free(hw), free(cpu), free(gpu);
    tdm_destroy(ctx);
}

int main(void) {
    tu_init_seed("test_arc_objects_batch");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_matches_interpreter),
        cmocka_unit_test(test_bad_grids),
        cmocka_unit_test(test_gpu_matches_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
