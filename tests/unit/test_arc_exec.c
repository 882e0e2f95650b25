/* test_arc_exec.c: the batched executor (tdm_arc_batch_exec) against the interpreter run grid by grid
 * (tdm_arc_batch_run): every result identical (status, grid cells, repr, error message) for the solver
 * programs of tests/arc/solvers on random grids (all sizes 1..30, all colours, and grids no lane can hold)
 * and on every grid of their tasks (skipped without the ARC data). The CPU half runs the executor's whole
 * machinery with the CPU forms of the batched primitives; the GPU half runs it on the device and skips
 * without a GPU (fails under TANDEM_TEST_REQUIRE_GPU=1); a fake device made of the CPU forms runs the GPU
 * path's host side (its chunk size, its column moves) everywhere. TANDEM_TEST_CASES: random grids per program. */
#include "unit_common.h"

#include "arc/arc_device.h"
#include "arc/exec_internal.h"
#include "tandem/arc.h"
#include "tandem/backend.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int h, w;
    int *c;
} tgrid;

typedef struct {
    tgrid *g;
    size_t n, cap;
} tgrids;

static void add_grid(tgrids *gs, int h, int w, const int *c) {
    if (gs->n == gs->cap) {
        gs->cap = gs->cap ? 2 * gs->cap : 256;
        gs->g = realloc(gs->g, gs->cap * sizeof *gs->g);
        assert_non_null(gs->g);
    }
    tgrid *g = &gs->g[gs->n++];
    g->h = h, g->w = w, g->c = malloc((size_t)(h * w + 1) * sizeof *g->c);
    if (h > 0 && w > 0) memcpy(g->c, c, (size_t)h * (size_t)w * sizeof *c);
}

static void random_grid(tu_rng *r, tgrids *gs) {
    int h = 1 + (int)tu_below(r, 30), w = 1 + (int)tu_below(r, 30), c[900];
    if (tu_below(r, 3) == 0) h = 1 + (int)tu_below(r, 6), w = 1 + (int)tu_below(r, 6);
    int k = 1 + (int)tu_below(r, tu_below(r, 2) ? 3 : 10), pal[10];
    for (int q = 0; q < k; q++) pal[q] = (int)tu_below(r, 10);
    for (int s = 0; s < h * w; s++) {
        c[s] = pal[tu_below(r, (uint64_t)k)];
        if (s % w && tu_below(r, 2)) c[s] = c[s - 1]; /* runs, so objects span cells */
    }
    if (tu_below(r, 40) == 0) c[tu_below(r, (uint64_t)(h * w))] = tu_below(r, 2) ? 10 + (int)tu_below(r, 5) : -1;
    add_grid(gs, h, w, c);
}

/* Every grid ("[[...], ...]" arrays of arrays of ints) of a task file: inputs and outputs alike. */
static void task_grids(const char *path, tgrids *gs) {
    FILE *f = fopen(path, "r");
    if (!f) return;
    static char buf[1 << 20];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    int c[900];
    for (char *p = buf; (p = strstr(p, "[[")); ) {
        int h = 0, w = -1, n = 0, row = 0, ok = 1;
        p++;
        while (*p == '[' || *p == ',' || *p == ' ' || *p == '\n') {
            if (*p != '[') {
                p++;
                continue;
            }
            p++, row = 0;
            while (*p && *p != ']') {
                char *e;
                long v = strtol(p, &e, 10);
                if (e == p) {
                    p++;
                    continue;
                }
                if (n < 900) c[n++] = (int)v;
                else ok = 0;
                row++, p = e;
            }
            if (*p == ']') p++;
            if (w >= 0 && row != w) ok = 0;
            w = row, h++;
        }
        if (ok && h && w > 0 && h <= 30 && w <= 30) add_grid(gs, h, w, c);
    }
}

static tdm_arc_programs *load(const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/arc/solvers/%s", TANDEM_TEST_SOURCE_DIR, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char src[1 << 20];
    size_t n = fread(src, 1, sizeof src, f);
    fclose(f);
    tdm_arc_programs *p;
    assert_int_equal(tdm_arc_programs_parse(src, n, name, &p), TDM_OK);
    return p;
}

static tdm_ctx *make_ctx(void) {
    tdm_config cfg;
    tdm_config_init(&cfg);
    cfg.strict = 1;
    tdm_ctx *ctx;
    assert_int_equal(tdm_init(&ctx, &cfg), TDM_OK);
    return ctx;
}

/* Runs calls both ways and compares every result. Returns the executor's batch (caller frees). */
static tdm_arc_batch *compare(tdm_ctx *ctx, const tdm_arc_programs *p, const tdm_arc_call_ref *calls, size_t n,
                              tdm_device_pref pref) {
    tdm_arc_batch *want, *got;
    assert_int_equal(tdm_arc_batch_run(p, calls, n, 0, 0, &want), TDM_OK);
    assert_int_equal(tdm_arc_batch_exec(ctx, p, calls, n, pref, 0, &got), TDM_OK);
    for (size_t k = 0; k < n; k++) {
        const tdm_arc_result *a = tdm_arc_batch_result(want, k), *b = tdm_arc_batch_result(got, k);
        const char *task = tdm_arc_programs_task(p, calls[k].prog);
        tu_check(a->status == b->status, "call %zu (solve_%s on %dx%d): status %d, interpreter %d (%s | %s)", k, task,
                 calls[k].grid.h, calls[k].grid.w, b->status, a->status, b->error ? b->error : "-", a->error ? a->error : "-");
        tu_check(a->h == b->h && a->w == b->w, "call %zu (solve_%s): shape %dx%d, interpreter %dx%d", k, task, b->h, b->w, a->h, a->w);
        if (a->cells && b->cells && a->h == b->h && a->w == b->w)
            tu_check(!memcmp(a->cells, b->cells, (size_t)(a->h * a->w) * sizeof *a->cells), "call %zu (solve_%s): cells differ", k, task);
        tu_check(!a->repr == !b->repr && (!a->repr || !strcmp(a->repr, b->repr)), "call %zu (solve_%s): repr %.200s, interpreter %.200s",
                 k, task, b->repr ? b->repr : "-", a->repr ? a->repr : "-");
        tu_check(!a->error == !b->error && (!a->error || !strcmp(a->error, b->error)), "call %zu (solve_%s): error '%s', interpreter '%s'",
                 k, task, b->error ? b->error : "-", a->error ? a->error : "-");
    }
    tdm_arc_batch_free(want);
    return got;
}

/* Every program on every grid of gs (calls[k] = program k / n, grid k % n). */
static tdm_arc_call_ref *all_calls(const tdm_arc_programs *p, const tgrids *gs, size_t *n) {
    size_t np = tdm_arc_programs_count(p);
    *n = np * gs->n;
    tdm_arc_call_ref *calls = malloc((*n + 1) * sizeof *calls);
    for (size_t k = 0; k < *n; k++) {
        const tgrid *g = &gs->g[k % gs->n];
        calls[k].prog = k / gs->n, calls[k].grid.h = g->h, calls[k].grid.w = g->w, calls[k].grid.cells = g->c;
    }
    return calls;
}

static void free_grids(tgrids *gs) {
    for (size_t k = 0; k < gs->n; k++) free(gs->g[k].c);
    free(gs->g);
}

static uint64_t total_batched(const tdm_arc_batch *b) {
    uint64_t t = 0;
    for (int id = 0; id < tdm_arc_prim_count(); id++) t += tdm_arc_batch_exec_stats(b, id).batched;
    return t;
}

static void run_half(tdm_device_pref pref) {
    tdm_ctx *ctx = make_ctx();
    if (pref == TDM_DEVICE_CUDA) {
        const tdm_backend *b = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
        if (!b || !b->arc) {
            const char *req = getenv("TANDEM_TEST_REQUIRE_GPU");
            if (req && !strcmp(req, "1")) fail_msg("TANDEM_TEST_REQUIRE_GPU=1 but the GPU half cannot run");
            printf("GPU half: not run (no CUDA backend with ARC kernels on this machine)\n");
            tdm_destroy(ctx);
            return;
        }
    }
    const char *files[3] = {"training.py", "heavier.py", "spec_examples.py"};
    size_t per = getenv("TANDEM_TEST_CASES") ? (size_t)atoi(getenv("TANDEM_TEST_CASES")) : 40;
    for (int f = 0; f < 3; f++) {
        tdm_arc_programs *p = load(files[f]);
        /* random grids, plus grids no lane can hold */
        tgrids gs = {0};
        tu_rng r = tu_rng_for(700 + (uint64_t)f);
        for (size_t k = 0; k < per; k++) random_grid(&r, &gs);
        int odd[4] = {3, 11, -2, 7};
        add_grid(&gs, 2, 2, odd), add_grid(&gs, 0, 0, odd), add_grid(&gs, 3, 0, odd);
        size_t n;
        tdm_arc_call_ref *calls = all_calls(p, &gs, &n);
        tdm_arc_batch *b = compare(ctx, p, calls, n, pref);
        printf("%s, %zu random grids: %zu calls identical on %s, %llu batched primitive calls\n", files[f], gs.n, n,
               tdm_arc_batch_backend(b), (unsigned long long)total_batched(b));
        assert_true(total_batched(b) > 0);
        tdm_arc_batch_free(b);
        free(calls);
        free_grids(&gs);
        /* the programs' own tasks */
        tgrids tg = {0};
        size_t nprog = tdm_arc_programs_count(p);
        tdm_arc_call_ref *tc = NULL;
        size_t ntc = 0;
        for (size_t k = 0; k < nprog; k++) {
            char path[1024];
            snprintf(path, sizeof path, "%s/training/%s.json", TANDEM_TEST_ARC_DATA, tdm_arc_programs_task(p, k));
            size_t before = tg.n;
            task_grids(path, &tg);
            tc = realloc(tc, (tg.n + 1) * sizeof *tc);
            for (size_t q = before; q < tg.n; q++) tc[ntc++].prog = k;
        }
        for (size_t q = 0; q < ntc; q++) tc[q].grid.h = tg.g[q].h, tc[q].grid.w = tg.g[q].w, tc[q].grid.cells = tg.g[q].c;
        if (!ntc) {
            printf("%s: no ARC task data at %s: the task half is not run\n", files[f], TANDEM_TEST_ARC_DATA);
        } else {
            b = compare(ctx, p, tc, ntc, pref);
            printf("%s, task grids: %zu calls identical, %llu batched primitive calls\n", files[f], ntc,
                   (unsigned long long)total_batched(b));
            tdm_arc_batch_free(b);
        }
        free(tc);
        free_grids(&tg);
        tdm_arc_programs_free(p);
    }
    tdm_destroy(ctx);
}

static void test_cpu_matches_interpreter(void **state) {
    (void)state;
    run_half(TDM_DEVICE_CPU);
}

static void test_gpu_matches_interpreter(void **state) {
    (void)state;
    run_half(TDM_DEVICE_CUDA);
}

static void test_stats_and_errors(void **state) {
    (void)state;
    tdm_ctx *ctx = make_ctx();
    const char *src = "def solve_t(I):\n    x1 = hmirror(I)\n    x2 = objects(x1, T, F, T)\n    x3 = first(x2)\n"
                      "    x4 = fill(x1, FIVE, x3)\n    O = rot90(x4)\n    return O\n";
    tdm_arc_programs *p;
    assert_int_equal(tdm_arc_programs_parse(src, strlen(src), "t.py", &p), TDM_OK);
    int g[6] = {1, 1, 0, 0, 2, 2};
    tdm_arc_call_ref calls[3] = {{0, {2, 3, g}}, {0, {3, 2, g}}, {0, {0, 0, g}}};
    tdm_arc_batch *b = compare(ctx, p, calls, 3, TDM_DEVICE_CPU);
    int id;
    assert_int_equal(tdm_arc_prim_lookup("hmirror", &id), TDM_OK);
    tdm_arc_exec_stats s = tdm_arc_batch_exec_stats(b, id);
    assert_int_equal(s.batched, 2); /* () is not a lane: the interpreter mirrors it */
    assert_int_equal(s.fallback, 1);
    assert_int_equal(s.launches, 1);
    assert_int_equal(tdm_arc_batch_prim_stats(b, id).calls, 3);
    assert_int_equal(tdm_arc_prim_lookup("objects", &id), TDM_OK);
    assert_int_equal(tdm_arc_batch_exec_stats(b, id).batched, 2); /* a lane of objects, made from the grid lane */
    assert_int_equal(tdm_arc_batch_exec_stats(b, id).fallback, 1);
    assert_int_equal(tdm_arc_prim_lookup("first", &id), TDM_OK);
    assert_int_equal(tdm_arc_batch_exec_stats(b, id).fallback, 2); /* an order: decoded, the interpreter picks */
    assert_int_equal(tdm_arc_prim_lookup("fill", &id), TDM_OK);
    assert_int_equal(tdm_arc_batch_exec_stats(b, id).batched, 2); /* the object moved to the lane as cells */
    assert_string_equal(tdm_arc_batch_backend(b), "cpu");
    assert_non_null(tdm_arc_batch_result(b, 2)->error); /* objects(()) raises on the empty grid */
    tdm_arc_batch_free(b);
    assert_int_equal(tdm_arc_batch_exec(ctx, p, calls, 3, TDM_DEVICE_CPU, 0, NULL), TDM_E_INVAL);
    calls[1].prog = 4;
    assert_int_equal(tdm_arc_batch_exec(ctx, p, calls, 3, TDM_DEVICE_CPU, 0, &b), TDM_E_INVAL);
    tdm_arc_programs_free(p);
    tdm_destroy(ctx);
}

/* A fake device: the CPU forms behind the device table, so the GPU path's host side (32,768-lane chunks,
 * every column move and launch through the table) runs here. */
static int fake_alloc(const tdm_backend *b, size_t n, arc_col *c) { return (void)b, arc_cpu_col_alloc(n, c); }
static void fake_free(const tdm_backend *b, arc_col *c) { (void)b, arc_cpu_col_free(c); }
static int fake_put(const tdm_backend *b, const arc_col *dst, const uint32_t *lanes, size_t m, const arc_col *src) {
    (void)b, arc_cpu_col_put(dst, lanes, m, src);
    return TDM_OK;
}
static int fake_get(const tdm_backend *b, const arc_col *src, const uint32_t *lanes, size_t m, const arc_col *dst) {
    (void)b, arc_cpu_col_get(src, lanes, m, dst);
    return TDM_OK;
}
static int fake_run(const tdm_backend *b, const arc_bop_call *c, const uint8_t *active, uint8_t *status) {
    return (void)b, arc_cpu_bop_run(c, active, status, 0);
}

static const tdm_arc_dev_ops fake_ops = {NULL, fake_alloc, fake_free, fake_put, fake_get, fake_run};

/* More grids than one GPU chunk (32,768) through the device path, with many threads: programs whose batched
 * forms refuse part of the lanes (hconcat past width 30), so the interpreter's lines read lanes gathered from
 * a column as a sparse list. bench_arc_batch --grids 100000 crashed on the GPU there: the gathered lanes were
 * decoded by OpenMP's split of the list, not by the thread owning each lane's runtime, so two threads filled
 * one arena at once. */
static void test_device_path_many_grids(void **state) {
    (void)state;
    const char *src = "def solve_a(I):\n    O = hconcat(I, I)\n    return O\n"
                      "def solve_b(I):\n    x1 = hconcat(I, I)\n    x2 = vmirror(x1)\n    x3 = height(x2)\n"
                      "    x4 = astuple(x3, x3)\n    O = crop(x2, ORIGIN, x4)\n    return O\n";
    tdm_arc_programs *p;
    assert_int_equal(tdm_arc_programs_parse(src, strlen(src), "t.py", &p), TDM_OK);
    size_t per = 40000, n = 2 * per;
    tdm_arc_call_ref *calls = malloc(n * sizeof *calls);
    int *cells = malloc(per * 900 * sizeof *cells);
    tu_rng r = tu_rng_for(710);
    for (size_t g = 0; g < per; g++) {
        int h = 1 + (int)tu_below(&r, 30), w = 1 + (int)tu_below(&r, 30), *c = cells + g * 900;
        for (int s = 0; s < h * w; s++) c[s] = (int)tu_below(&r, 10);
        for (int q = 0; q < 2; q++) calls[q * per + g] = (tdm_arc_call_ref){(size_t)q, {h, w, c}};
    }
    tdm_arc_batch *want, *got;
    assert_int_equal(tdm_arc_batch_run(p, calls, n, 0, 0, &want), TDM_OK);
    for (int rep = 0; rep < 3; rep++) {
        assert_int_equal(arc_batch_exec_ops(NULL, &fake_ops, p, calls, n, 16, &got), TDM_OK);
        for (size_t k = 0; k < n; k++) {
            const tdm_arc_result *a = tdm_arc_batch_result(want, k), *b = tdm_arc_batch_result(got, k);
            tu_check(a->status == b->status && a->h == b->h && a->w == b->w, "call %zu: status %d %dx%d, interpreter %d %dx%d",
                     k, b->status, b->h, b->w, a->status, a->h, a->w);
            if (a->cells && b->cells && a->h == b->h && a->w == b->w)
                tu_check(!memcmp(a->cells, b->cells, (size_t)(a->h * a->w) * sizeof *a->cells), "call %zu: cells differ", k);
        }
        int id;
        assert_int_equal(tdm_arc_prim_lookup("hconcat", &id), TDM_OK);
        tdm_arc_exec_stats s = tdm_arc_batch_exec_stats(got, id);
        assert_true(s.batched > 0 && s.fallback > 0);
        assert_int_equal(s.launches, 2 * 2); /* two chunks (32,768 + 7,232) per program */
        tdm_arc_batch_free(got);
    }
    tdm_arc_batch_free(want);
    free(calls), free(cells);
    tdm_arc_programs_free(p);
}

/* Programs whose lines the objects-based forms compute (arc_bops.h: OBJS and COLSET lanes): objects() in
 * all 8 flag combinations, partition, fgpartition, the filters, picks and readers after them, palette and
 * the colour-set readers, and the grid writers that take an object lane. */
static const char *sets_src =
    "def solve_s1(I):\n    x1 = objects(I, T, F, T)\n    x2 = sizefilter(x1, TWO)\n    x3 = merge(x2)\n"
    "    x4 = fill(I, ONE, x3)\n    x5 = colorfilter(x1, THREE)\n    x6 = merge(x5)\n    O = cover(x4, x6)\n    return O\n"
    "def solve_s2(I):\n    x1 = objects(I, F, T, T)\n    x2 = argmax(x1, size)\n    O = subgrid(x2, I)\n    return O\n"
    "def solve_s3(I):\n    x1 = objects(I, T, T, F)\n    x2 = argmin(x1, size)\n    x3 = recolor(FIVE, x2)\n"
    "    x4 = argmax(x1, size)\n    x5 = recolor(TWO, x4)\n    x6 = paint(I, x3)\n    O = paint(x6, x5)\n    return O\n"
    "def solve_s4(I):\n    x1 = partition(I)\n    x2 = argmax(x1, size)\n    x3 = color(x2)\n    x4 = size(x1)\n"
    "    x5 = replace(I, x3, x4)\n    O = cover(x5, x2)\n    return O\n"
    "def solve_s5(I):\n    x1 = fgpartition(I)\n    x2 = argmin(x1, size)\n    x3 = palette(x2)\n    x4 = first(x3)\n"
    "    x5 = underpaint(I, x2)\n    O = replace(x5, x4, ZERO)\n    return O\n"
    "def solve_s6(I):\n    x1 = palette(I)\n    x2 = other(x1, FIVE)\n    x3 = replace(I, x2, ZERO)\n    x4 = remove(ZERO, x1)\n"
    "    x5 = last(x4)\n    x6 = size(x4)\n    O = replace(x3, x5, x6)\n    return O\n"
    "def solve_s7(I):\n    x1 = objects(I, F, F, F)\n    x2 = merge(x1)\n    x3 = size(x2)\n    O = underfill(I, x3, x2)\n    return O\n"
    "def solve_s8(I):\n    x1 = objects(I, F, T, F)\n    x2 = sizefilter(x1, ONE)\n    x3 = merge(x2)\n    x4 = palette(x3)\n"
    "    x5 = size(x4)\n    O = fill(I, x5, x3)\n    return O\n"
    "def solve_s9(I):\n    x1 = objects(I, T, F, F)\n    x2 = colorfilter(x1, ZERO)\n    x3 = size(x2)\n    x4 = merge(x2)\n"
    "    x5 = recolor(x3, x4)\n    O = paint(I, x5)\n    return O\n"
    "def solve_s10(I):\n    x1 = objects(I, F, F, T)\n    x2 = argmax(x1, size)\n    x3 = color(x2)\n    x4 = merge(x1)\n"
    "    O = underfill(I, x3, x4)\n    return O\n"
    "def solve_s11(I):\n    x1 = objects(I, T, T, T)\n    x2 = sizefilter(x1, ONE)\n    x3 = merge(x2)\n    x4 = fill(I, ZERO, x3)\n"
    "    x5 = argmax(x1, size)\n    O = underpaint(x4, x5)\n    return O\n"
    /* results that are lanes of objects or colours: their repr shows every iteration order */
    "def solve_s12(I):\n    x1 = objects(I, T, F, T)\n    O = sizefilter(x1, ONE)\n    return O\n"
    "def solve_s13(I):\n    x1 = palette(I)\n    O = remove(ZERO, x1)\n    return O\n"
    "def solve_s14(I):\n    x1 = fgpartition(I)\n    x2 = argmax(x1, size)\n    O = recolor(ONE, x2)\n    return O\n"
    "def solve_s15(I):\n    x1 = objects(I, F, T, T)\n    x2 = colorfilter(x1, TWO)\n    O = merge(x2)\n    return O\n"
    "def solve_s16(I):\n    O = partition(I)\n    return O\n";

static const tdm_arc_dev_ops fake_ops;

/* The executor on the CPU forms, on the fake device (the GPU path's host side) and on the GPU when there is
 * one, against the interpreter; the CPU and fake runs must have computed every objects-based form
 * somewhere. */
static void test_sets_programs(void **state) {
    (void)state;
    tdm_ctx *ctx = make_ctx();
    tdm_arc_programs *p;
    assert_int_equal(tdm_arc_programs_parse(sets_src, strlen(sets_src), "sets.py", &p), TDM_OK);
    tgrids gs = {0};
    tu_rng r = tu_rng_for(720);
    size_t per = getenv("TANDEM_TEST_CASES") ? (size_t)atoi(getenv("TANDEM_TEST_CASES")) : 60;
    for (size_t k = 0; k < per; k++) random_grid(&r, &gs);
    int odd[4] = {3, 11, -2, 7};
    add_grid(&gs, 2, 2, odd), add_grid(&gs, 0, 0, odd), add_grid(&gs, 3, 0, odd);
    tgrids tg = {0};
    static const char *tasks[] = {"6e82a1ae", "be94b721", "a61f2674", "42a50994", "f76d97a5", "aabf363d", "5117e062", "b230c067"};
    for (size_t t = 0; t < sizeof tasks / sizeof *tasks; t++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/training/%s.json", TANDEM_TEST_ARC_DATA, tasks[t]);
        task_grids(path, &tg);
    }
    for (size_t q = 0; q < tg.n; q++) add_grid(&gs, tg.g[q].h, tg.g[q].w, tg.g[q].c);
    size_t n;
    tdm_arc_call_ref *calls = all_calls(p, &gs, &n);
    static const char *want[] = {"objects", "partition", "fgpartition", "sizefilter", "colorfilter", "argmax", "argmin",
                                 "merge", "size", "color", "recolor", "palette", "first", "last", "other", "remove",
                                 "fill", "underfill", "cover", "paint", "underpaint", "subgrid"};
    tdm_arc_batch *ref;
    assert_int_equal(tdm_arc_batch_run(p, calls, n, 0, 0, &ref), TDM_OK);
    for (int way = 0; way < 3; way++) {
        tdm_arc_batch *b = NULL;
        if (way == 0) {
            b = compare(ctx, p, calls, n, TDM_DEVICE_CPU);
        } else if (way == 1) {
            assert_int_equal(arc_batch_exec_ops(NULL, &fake_ops, p, calls, n, 4, &b), TDM_OK);
        } else {
            const tdm_backend *be = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
            if (!be || !be->arc) {
                const char *req = getenv("TANDEM_TEST_REQUIRE_GPU");
                if (req && !strcmp(req, "1")) fail_msg("TANDEM_TEST_REQUIRE_GPU=1 but the GPU half cannot run");
                printf("sets programs, GPU: not run (no CUDA backend with ARC kernels on this machine)\n");
                continue;
            }
            b = compare(ctx, p, calls, n, TDM_DEVICE_CUDA);
        }
        for (size_t k = 0; k < n; k++) {
            const tdm_arc_result *a = tdm_arc_batch_result(ref, k), *g = tdm_arc_batch_result(b, k);
            tu_check(a->status == g->status && a->h == g->h && a->w == g->w, "way %d call %zu (solve_%s): status %d %dx%d, interpreter %d %dx%d",
                     way, k, tdm_arc_programs_task(p, calls[k].prog), g->status, g->h, g->w, a->status, a->h, a->w);
            if (a->cells && g->cells && a->h == g->h && a->w == g->w)
                tu_check(!memcmp(a->cells, g->cells, (size_t)(a->h * a->w) * sizeof *a->cells), "way %d call %zu: cells differ", way, k);
            tu_check(!a->repr == !g->repr && (!a->repr || !strcmp(a->repr, g->repr)), "way %d call %zu: repr differs", way, k);
            tu_check(!a->error == !g->error && (!a->error || !strcmp(a->error, g->error)), "way %d call %zu: error differs", way, k);
        }
        printf("sets programs on %s: %zu calls identical,", tdm_arc_batch_backend(b), n);
        for (size_t q = 0; q < sizeof want / sizeof *want; q++) {
            int id;
            assert_int_equal(tdm_arc_prim_lookup(want[q], &id), TDM_OK);
            tdm_arc_exec_stats st = tdm_arc_batch_exec_stats(b, id);
            printf(" %s %llu/%llu", want[q], (unsigned long long)st.batched, (unsigned long long)(st.batched + st.fallback));
            tu_check(st.batched > 0, "%s: no call batched on %s", want[q], tdm_arc_batch_backend(b));
        }
        printf("\n");
        tdm_arc_batch_free(b);
    }
    tdm_arc_batch_free(ref);
    free(calls);
    free_grids(&gs), free_grids(&tg);
    tdm_arc_programs_free(p);
    tdm_destroy(ctx);
}

int main(void) {
    tu_init_seed("test_arc_exec");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_and_errors),
        cmocka_unit_test(test_cpu_matches_interpreter),
        cmocka_unit_test(test_gpu_matches_interpreter),
        cmocka_unit_test(test_device_path_many_grids),
        cmocka_unit_test(test_sets_programs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
