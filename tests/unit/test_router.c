/* test_router.c: the cost model and the router without a GPU. The fit recovers known parameters; the
 * router, given a model fitted from synthetic "measurements" and a fake GPU backend, picks the backend
 * whose measured time is lower (outside the margin band), honours the overrides in their order, reports
 * a forced GPU without one (an error under TANDEM_STRICT), keeps decision records; the model file
 * round-trips bit for bit, and a file made under another machine key is refused and recalibrated.
 * Decision cost is a benchmark (bench/bench_router.c), not a test. */
#define _GNU_SOURCE /* mkdtemp, setenv */
#include "unit_common.h"

#include <math.h>
#include <unistd.h>

#include "fake_backend.h"
#include "runtime/router_internal.h"

static int fake_supports(const tdm_backend *b, tdm_op op) { return op == TDM_OP_SEQ_LCS || op == TDM_OP_SEQ_DIFFLIB; }

/* A context on the CPU only (no real CUDA backend even on a GPU machine), no model file, calibration off;
 * with_gpu adds a fake GPU backend that supports the seq query ops. */
static tdm_ctx *ctx_with(int with_gpu, int strict, int route, signed char route_lcs, int route_log) {
    tdm_config c;
    tdm_config_init(&c);
    c.device = TDM_DEVICE_CPU;
    c.calibrate = TDM_CALIBRATE_OFF;
    c.costmodel_path = "";
    c.strict = strict;
    c.route = route;
    c.route_op[TDM_OP_SEQ_LCS] = route_lcs;
    if (route_log >= 0) c.route_log = route_log;
    tdm_ctx *ctx;
    assert_int_equal(tdm_init(&ctx, &c), TDM_OK);
    if (with_gpu) tu_fake_gpu(ctx, "fakegpu:0", fake_supports);
    return ctx;
}

/* Ground truth of the synthetic machine: the CPU is cheap to start and slow per unit, the GPU the
 * opposite (the shape measured for the sequence queries on the H100 host, bench/RESULTS.md). */
static const double truth_t0[2] = {2.0, 400.0}, truth_slope[2] = {0.02, 0.0005};
static double truth(int gpu, double w) { return truth_t0[gpu] + w * truth_slope[gpu]; }

/* A model fitted from ladder "measurements" of truth, as calibration would make it. */
static void synthetic_model(tdm_costmodel *m, int link) {
    memset(m, 0, sizeof *m);
    for (int g = 0; g < 2; g++) tu_model_line(m, TDM_OP_SEQ_LCS, g, truth_t0[g], truth_slope[g], 0.0);
    m->link_trusted = link;
    m->h2d = (tdm_cost_link){10.0, 1.0 / 20000.0}; /* 20 GB/s */
    m->d2h = (tdm_cost_link){10.0, 1.0 / 20000.0};
}

static void test_fit_recovers_parameters(void **state) {
    double w[8], l[8], t[8];
    for (int i = 0; i < 8; i++) w[i] = 1024.0 * pow(4, i), l[i] = 0, t[i] = 5.0 + 0.01 * w[i];
    tdm_cost_class c;
    assert_int_equal(tdm_costmodel_fit(&c, w, l, t, 8, 80), TDM_OK);
    assert_true(fabs(c.t0_us - 5.0) < 1e-6 && fabs(c.us_per_work - 0.01) < 1e-12);
    assert_true(c.trusted && c.residual < 1e-9 && c.nbuckets == 8 && c.samples == 80);
    /* With levels: T = t0 + W a + levels lambda (a level-synchronous op). */
    for (int i = 0; i < 8; i++) l[i] = (double)(3 + 7 * (i % 3)), t[i] = 3.0 + 0.002 * w[i] + 20.0 * l[i];
    assert_int_equal(tdm_costmodel_fit(&c, w, l, t, 8, 80), TDM_OK);
    assert_true(fabs(c.t0_us - 3.0) < 1e-6 && fabs(c.us_per_work - 0.002) < 1e-12 && fabs(c.lambda_us - 20.0) < 1e-6);
    /* A negative intercept is not a cost: it is dropped and the slope refitted. */
    for (int i = 0; i < 8; i++) l[i] = 0, t[i] = 0.5 * w[i] - (i == 0 ? 100.0 : 0.0);
    assert_int_equal(tdm_costmodel_fit(&c, w, l, t, 8, 80), TDM_OK);
    assert_true(c.t0_us >= 0.0 && c.us_per_work > 0.4 && c.us_per_work < 0.6);
    /* Trust rule: fewer than 10 runs, or a poor fit, is not trusted. */
    for (int i = 0; i < 8; i++) t[i] = 5.0 + 0.01 * w[i];
    assert_int_equal(tdm_costmodel_fit(&c, w, l, t, 8, 9), TDM_OK);
    assert_false(c.trusted);
    for (int i = 0; i < 8; i++) t[i] = i % 2 ? 1000.0 : 1.0; /* no line fits this, nor do neighbours predict it */
    assert_int_equal(tdm_costmodel_fit(&c, w, l, t, 8, 80), TDM_OK);
    assert_false(c.trusted);
    assert_true(c.interp_residual > 0.25);
    /* A curve no line fits whose buckets predict each other (a power law, straight in log-log): trusted by
     * its interpolation; with only 3 buckets that is too little evidence. */
    for (int i = 0; i < 8; i++) t[i] = 40.0 * pow(w[i], 0.35);
    assert_int_equal(tdm_costmodel_fit(&c, w, l, t, 8, 80), TDM_OK);
    assert_true(c.residual > 0.25 && c.interp_residual < 1e-9 && c.trusted);
    assert_int_equal(tdm_costmodel_fit(&c, w, l, t, 3, 80), TDM_OK);
    assert_true(c.nbuckets == 3 && c.interp_residual < 1e-9 && c.trusted == (c.residual <= 0.25));
    t[3] = -1.0;
    assert_int_equal(tdm_costmodel_fit(&c, w, l, t, 8, 80), TDM_E_INVAL);
    assert_int_equal(tdm_costmodel_fit(&c, w, l, t, 0, 80), TDM_E_INVAL);
}

static void test_predict_interpolates(void **state) {
    tdm_costmodel m;
    memset(&m, 0, sizeof m);
    double w[5], l[5] = {0}, t[5];
    for (int i = 0; i < 5; i++) w[i] = 1024.0 * pow(4, i), t[i] = sqrt(w[i]); /* a power law: straight in log-log */
    tdm_cost_class *c = &m.cls[TDM_OP_SEQ_DIFFLIB][0];
    assert_int_equal(tdm_costmodel_fit(c, w, l, t, 5, 50), TDM_OK);
    c->trusted = 1; /* sqrt is not linear, so force trust to check the interpolation alone */
    assert_true(fabs(tdm_costmodel_predict(&m, TDM_OP_SEQ_DIFFLIB, 0, 2048.0, 0) - sqrt(2048.0)) < 1e-9);
    assert_true(fabs(tdm_costmodel_predict(&m, TDM_OP_SEQ_DIFFLIB, 0, 100000.0, 0) - sqrt(100000.0)) < 1e-9);
    /* Outside the measured range: the fit. */
    double out = tdm_costmodel_predict(&m, TDM_OP_SEQ_DIFFLIB, 0, 1e7, 0);
    assert_true(fabs(out - (c->t0_us + c->us_per_work * 1e7)) < 1e-9);
    assert_true(tdm_costmodel_predict(&m, TDM_OP_SEQ_DIFFLIB, 1, 2048.0, 0) < 0.0); /* GPU class untrusted */
    assert_true(tdm_costmodel_predict(&m, TDM_OP_COUNT, 0, 2048.0, 0) < 0.0);
}

static void test_router_picks_measured_faster(void **state) {
    tdm_ctx *ctx = ctx_with(1, 0, TDM_DEVICE_AUTO, TDM_CONFIG_UNSET_OP, -1);
    tdm_costmodel m;
    synthetic_model(&m, 0);
    assert_int_equal(tdm_costmodel_set(ctx, &m), TDM_OK);
    double margin = tdm_ctx_config(ctx)->route_margin;
    int checked = 0, gpu_picks = 0;
    for (double w = 100; w < 1e9; w *= 1.7) {
        tdm_route_req q = {.op = TDM_OP_SEQ_LCS, .work = w, .resident = 1};
        tdm_route_decision d;
        assert_int_equal(tdm_route(ctx, &q, &d), TDM_OK);
        double tc = truth(0, w), tg = truth(1, w);
        int gpu = d.backend->kind == TDM_BACKEND_CUDA;
        tu_check(d.reason == (gpu ? TDM_ROUTE_MODEL_GPU : TDM_ROUTE_MODEL_CPU), "W=%g reason %s", w,
                 tdm_route_reason_name(d.reason));
        tu_check(d.t_cpu_us > 0 && d.t_gpu_us > 0, "W=%g predictions %g %g", w, d.t_cpu_us, d.t_gpu_us);
        /* Outside the margin band the measured-faster backend must win; inside it the CPU keeps the op. */
        if (tg <= (1.0 - margin) * tc * 0.98) tu_check(gpu, "W=%g: GPU %g us vs CPU %g us, CPU chosen", w, tg, tc);
        if (tg >= (1.0 - margin) * tc * 1.02) tu_check(!gpu, "W=%g: GPU %g us vs CPU %g us, GPU chosen", w, tg, tc);
        gpu_picks += gpu;
        checked++;
    }
    assert_true(gpu_picks > 0 && gpu_picks < checked); /* the sweep crosses over */
    /* Transfers: host-resident inputs pay the link, which moves the crossover. */
    synthetic_model(&m, 1);
    assert_int_equal(tdm_costmodel_set(ctx, &m), TDM_OK);
    tdm_route_req q = {.op = TDM_OP_SEQ_LCS, .work = 1e6, .resident = 1};
    tdm_route_decision d;
    assert_int_equal(tdm_route(ctx, &q, &d), TDM_OK);
    assert_int_equal(d.reason, TDM_ROUTE_MODEL_GPU);
    q.resident = 0, q.h2d_bytes = 1ull << 30; /* 1 GiB to move: ~54 ms at 20 GB/s */
    assert_int_equal(tdm_route(ctx, &q, &d), TDM_OK);
    assert_int_equal(d.reason, TDM_ROUTE_MODEL_CPU);
    assert_true(d.t_gpu_us > truth(1, 1e6) + 50000.0);
    /* An op the GPU cannot compute exactly stays on the CPU whatever the model says. */
    q = (tdm_route_req){.op = TDM_OP_SEQ_CHAR, .work = 1e9, .resident = 1};
    assert_int_equal(tdm_route(ctx, &q, &d), TDM_OK);
    assert_int_equal(d.reason, TDM_ROUTE_NO_GPU_IMPL);
    assert_string_equal(d.backend->name, "cpu");
    tdm_destroy(ctx);
}

static void expect(tdm_ctx *ctx, tdm_device_pref hint, double w, const char *backend, tdm_route_reason why) {
    tdm_route_req q = {.op = TDM_OP_SEQ_LCS, .work = w, .resident = 1, .hint = hint};
    tdm_route_decision d;
    assert_int_equal(tdm_route(ctx, &q, &d), TDM_OK);
    tu_check(!strcmp(d.backend->name, backend) && d.reason == why, "W=%g hint %d: %s (%s), expected %s (%s)", w,
             (int)hint, d.backend->name, tdm_route_reason_name(d.reason), backend, tdm_route_reason_name(why));
}

static void test_overrides(void **state) {
    tdm_costmodel m;
    synthetic_model(&m, 0);
    /* Model alone: small -> CPU, large -> GPU. The call's hint beats everything. */
    tdm_ctx *ctx = ctx_with(1, 0, TDM_DEVICE_AUTO, TDM_CONFIG_UNSET_OP, -1);
    assert_int_equal(tdm_costmodel_set(ctx, &m), TDM_OK);
    expect(ctx, TDM_DEVICE_AUTO, 1e3, "cpu", TDM_ROUTE_MODEL_CPU);
    expect(ctx, TDM_DEVICE_AUTO, 1e8, "fakegpu:0", TDM_ROUTE_MODEL_GPU);
    expect(ctx, TDM_DEVICE_CUDA, 1e3, "fakegpu:0", TDM_ROUTE_FORCED_CALL);
    expect(ctx, TDM_DEVICE_CPU, 1e8, "cpu", TDM_ROUTE_FORCED_CALL);
    tdm_destroy(ctx);
    /* TANDEM_ROUTE=gpu forces every op; the hint still wins. */
    ctx = ctx_with(1, 0, TDM_DEVICE_CUDA, TDM_CONFIG_UNSET_OP, -1);
    assert_int_equal(tdm_costmodel_set(ctx, &m), TDM_OK);
    expect(ctx, TDM_DEVICE_AUTO, 1e3, "fakegpu:0", TDM_ROUTE_FORCED_ENV);
    expect(ctx, TDM_DEVICE_CPU, 1e3, "cpu", TDM_ROUTE_FORCED_CALL);
    tdm_destroy(ctx);
    /* TANDEM_ROUTE_LCS beats TANDEM_ROUTE, and =auto hands the op back to the model. */
    ctx = ctx_with(1, 0, TDM_DEVICE_CUDA, TDM_DEVICE_CPU, -1);
    assert_int_equal(tdm_costmodel_set(ctx, &m), TDM_OK);
    expect(ctx, TDM_DEVICE_AUTO, 1e8, "cpu", TDM_ROUTE_FORCED_ENV);
    tdm_destroy(ctx);
    ctx = ctx_with(1, 0, TDM_DEVICE_CUDA, TDM_DEVICE_AUTO, -1);
    assert_int_equal(tdm_costmodel_set(ctx, &m), TDM_OK);
    expect(ctx, TDM_DEVICE_AUTO, 1e3, "cpu", TDM_ROUTE_MODEL_CPU);
    tdm_destroy(ctx);
    /* No trusted model (calibration off): where the inputs live. */
    ctx = ctx_with(1, 0, TDM_DEVICE_AUTO, TDM_CONFIG_UNSET_OP, -1);
    expect(ctx, TDM_DEVICE_AUTO, 1e3, "fakegpu:0", TDM_ROUTE_RESIDENCY_ONLY);
    tdm_route_req q = {.op = TDM_OP_SEQ_LCS, .work = 1e3, .resident = 0};
    tdm_route_decision d;
    assert_int_equal(tdm_route(ctx, &q, &d), TDM_OK);
    assert_string_equal(d.backend->name, "cpu");
    assert_int_equal(d.reason, TDM_ROUTE_RESIDENCY_ONLY);
    assert_int_equal(tdm_route(NULL, &q, &d), TDM_E_INVAL);
    q.op = TDM_OP_COUNT;
    assert_int_equal(tdm_route(ctx, &q, &d), TDM_E_INVAL);
    q.op = TDM_OP_SEQ_LCS, q.work = NAN;
    assert_int_equal(tdm_route(ctx, &q, &d), TDM_E_INVAL);
    tdm_destroy(ctx);
}

static void test_forced_gpu_without_gpu(void **state) {
    tdm_ctx *ctx = ctx_with(0, 0, TDM_DEVICE_CUDA, TDM_CONFIG_UNSET_OP, -1);
    expect(ctx, TDM_DEVICE_AUTO, 1e8, "cpu", TDM_ROUTE_FORCED_GPU_UNAVAILABLE);
    expect(ctx, TDM_DEVICE_CUDA, 1e8, "cpu", TDM_ROUTE_FORCED_GPU_UNAVAILABLE);
    tdm_destroy(ctx);
    ctx = ctx_with(0, 0, TDM_DEVICE_AUTO, TDM_CONFIG_UNSET_OP, -1);
    expect(ctx, TDM_DEVICE_AUTO, 1e8, "cpu", TDM_ROUTE_ONLY_CPU);
    tdm_destroy(ctx);
    ctx = ctx_with(0, 1, TDM_DEVICE_CUDA, TDM_CONFIG_UNSET_OP, -1);
    tdm_route_req q = {.op = TDM_OP_SEQ_LCS, .work = 1e8};
    tdm_route_decision d;
    assert_int_equal(tdm_route(ctx, &q, &d), TDM_E_UNSUPPORTED);
    assert_non_null(strstr(tdm_last_error(), "STRICT"));
    q.hint = TDM_DEVICE_CPU; /* the call's hint wins over the failing env */
    assert_int_equal(tdm_route(ctx, &q, &d), TDM_OK);
    assert_int_equal(d.reason, TDM_ROUTE_FORCED_CALL);
    tdm_destroy(ctx);
}

static void test_decision_records(void **state) {
    tdm_ctx *ctx = ctx_with(1, 0, TDM_DEVICE_AUTO, TDM_CONFIG_UNSET_OP, 8);
    tdm_costmodel m;
    synthetic_model(&m, 0);
    assert_int_equal(tdm_costmodel_set(ctx, &m), TDM_OK);
    uint64_t last = 0;
    for (int i = 0; i < 20; i++) {
        tdm_route_req q = {.op = TDM_OP_SEQ_LCS, .work = 1000.0 * (i + 1), .resident = 1};
        tdm_route_decision d;
        assert_int_equal(tdm_route(ctx, &q, &d), TDM_OK);
        assert_int_equal(d.record, last + 1);
        last = d.record;
        tdm_route_measured(ctx, d.record, 7.0 + i);
    }
    tdm_route_record r[32];
    size_t n;
    tdm_route_log_read(ctx, r, 32, &n);
    assert_int_equal(n, 8); /* the ring keeps the newest 8 */
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(r[i].seq, 13 + i);
        assert_true(r[i].work == 1000.0 * (double)(13 + i));
        assert_true(r[i].measured_us == 7.0 + (double)(12 + i));
        assert_true(r[i].t_cpu_us > 0 && r[i].op == TDM_OP_SEQ_LCS && r[i].reason == TDM_ROUTE_MODEL_CPU);
    }
    tdm_route_log_read(ctx, r, 3, &n);
    assert_int_equal(n, 3);
    assert_int_equal(r[2].seq, 20);
    tdm_destroy(ctx);
    ctx = ctx_with(1, 0, TDM_DEVICE_AUTO, TDM_CONFIG_UNSET_OP, 0); /* TANDEM_ROUTE_LOG=0: off */
    tdm_route_req q = {.op = TDM_OP_SEQ_LCS, .work = 1};
    tdm_route_decision d;
    assert_int_equal(tdm_route(ctx, &q, &d), TDM_OK);
    assert_int_equal(d.record, 0);
    tdm_route_log_read(ctx, r, 32, &n);
    assert_int_equal(n, 0);
    tdm_destroy(ctx);
}

static char logged[4096];
static void capture(tdm_log_level level, const char *msg, void *user) {
    if (strstr(msg, "router:")) snprintf(logged, sizeof logged, "%s", msg);
}

static void test_debug_router_prints(void **state) {
    tdm_ctx *ctx = ctx_with(1, 0, TDM_DEVICE_AUTO, TDM_CONFIG_UNSET_OP, -1);
    tdm_costmodel m;
    synthetic_model(&m, 0);
    assert_int_equal(tdm_costmodel_set(ctx, &m), TDM_OK);
    ctx->cfg.debug_router = 1;
    tdm_log_set_callback(capture, NULL);
    logged[0] = '\0';
    expect(ctx, TDM_DEVICE_AUTO, 1e8, "fakegpu:0", TDM_ROUTE_MODEL_GPU);
    tdm_log_set_callback(NULL, NULL);
    assert_non_null(strstr(logged, "MODEL_GPU"));
    assert_non_null(strstr(logged, "T_cpu"));
    assert_non_null(strstr(logged, "T_gpu"));
    tdm_destroy(ctx);
}

static void same_class(const tdm_cost_class *a, const tdm_cost_class *b) {
    assert_int_equal(a->trusted, b->trusted);
    assert_int_equal(a->samples, b->samples);
    assert_int_equal(a->nbuckets, b->nbuckets);
    tu_assert_same_double(a->t0_us, b->t0_us, "t0");
    tu_assert_same_double(a->us_per_work, b->us_per_work, "slope");
    tu_assert_same_double(a->lambda_us, b->lambda_us, "lambda");
    tu_assert_same_double(a->residual, b->residual, "residual");
    for (uint32_t i = 0; i < a->nbuckets; i++) {
        tu_assert_same_double(a->bucket_work[i], b->bucket_work[i], "bucket %u", i);
        tu_assert_same_double(a->bucket_us[i], b->bucket_us[i], "bucket %u", i);
    }
}

static void test_model_file_round_trip(void **state) {
    char dir[] = "/tmp/tandem-router-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/costmodel.json", dir);
    tdm_costmodel m, back;
    synthetic_model(&m, 1);
    snprintf(m.key, sizeof m.key, "machine A \"quoted\"");
    tdm_costmodel_stamp(&m);
    assert_int_equal(tdm_costmodel_load(path, m.key, &back), TDM_E_NOTFOUND);
    assert_int_equal(tdm_costmodel_save(&m, path), TDM_OK);
    memset(&back, 0, sizeof back);
    assert_int_equal(tdm_costmodel_load(path, m.key, &back), TDM_OK);
    assert_string_equal(back.key, m.key);
    assert_string_equal(back.date, m.date);
    assert_int_equal(back.link_trusted, 1);
    tu_assert_same_double(back.h2d.us_per_byte, m.h2d.us_per_byte, "h2d");
    for (int op = 0; op < TDM_OP_COUNT; op++)
        for (int g = 0; g < 2; g++) same_class(&m.cls[op][g], &back.cls[op][g]);
    /* Another machine's model is refused, never used. */
    assert_int_equal(tdm_costmodel_load(path, "machine B", &back), TDM_E_STALE);
    /* A broken file is an error, not a model. */
    FILE *f = fopen(path, "w");
    fputs("{\"format\": \"tandem-costmodel\", \"version\": 1", f);
    fclose(f);
    assert_int_equal(tdm_costmodel_load(path, m.key, &back), TDM_E_PARSE);
    unlink(path);
    char lock[300];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(lock);
    rmdir(dir);
}

/* A model file made under another key: tdm_init ignores it, and with TANDEM_CALIBRATE=auto the first
 * decision that needs the model measures this machine and rewrites the file under its key. */
static void test_key_mismatch_recalibrates(void **state) {
    char dir[] = "/tmp/tandem-router-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/costmodel.json", dir);
    tdm_costmodel other;
    synthetic_model(&other, 0);
    snprintf(other.key, sizeof other.key, "some other machine");
    assert_int_equal(tdm_costmodel_save(&other, path), TDM_OK);

    tdm_config c;
    tdm_config_init(&c);
    c.device = TDM_DEVICE_CPU;
    c.costmodel_path = path;
    c.calibrate = TDM_CALIBRATE_AUTO;
    c.calibration_budget_ms = 100;
    c.threads = 1;
    tdm_ctx *ctx;
    assert_int_equal(tdm_init(&ctx, &c), TDM_OK);
    char key[768]; /* the key is taken at tdm_init, from the backends registered then */
    tdm_costmodel_machine_key(ctx, key, sizeof key);
    tdm_costmodel now;
    tdm_costmodel_get(ctx, &now);
    assert_false(now.cls[TDM_OP_SEQ_LCS][0].trusted); /* the other machine's numbers were not taken */
    assert_int_equal(now.cls[TDM_OP_SEQ_LCS][0].samples, 0);
    /* A GPU stand-in that keeps sequence stores, so that there is something to route between. */
    tu_fake_gpu(ctx, "fakegpu:0", fake_supports);
    tdm_route_req q = {.op = TDM_OP_SEQ_LCS, .work = 5000, .resident = 1};
    tdm_route_decision d;
    assert_int_equal(tdm_route(ctx, &q, &d), TDM_OK);
    tdm_costmodel_get(ctx, &now);
    assert_true(now.cls[TDM_OP_SEQ_LCS][0].samples >= 10); /* the CPU was measured */
    assert_true(now.date[0] != '\0');
    tdm_costmodel back;
    assert_int_equal(tdm_costmodel_load(path, key, &back), TDM_OK); /* rewritten under this machine's key */
    assert_int_equal(back.cls[TDM_OP_SEQ_LCS][0].samples, now.cls[TDM_OP_SEQ_LCS][0].samples);
    tdm_destroy(ctx);
    unlink(path);
    char lock[300];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(lock);
    rmdir(dir);
}

static void test_config_variables(void **state) {
    static const char *const names[] = {"TANDEM_ROUTE", "TANDEM_ROUTE_MARGIN", "TANDEM_ROUTE_LOG", "TANDEM_CALIBRATE",
                                        "TANDEM_CALIBRATION_BUDGET_MS", "TANDEM_COSTMODEL_PATH", "TANDEM_MEM_PRESSURE",
                                        "TANDEM_MEM_LIMIT", "TANDEM_MEM_RELEASE_THRESHOLD", "TANDEM_ROUTE_LCS",
                                        "TANDEM_ROUTE_DIFFLIB", "TANDEM_STRICT"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unsetenv(names[i]);
    tdm_config c;
    tdm_config_init(&c);
    assert_int_equal(tdm_config_resolve(&c), TDM_OK);
    assert_int_equal(c.route, TDM_DEVICE_AUTO);
    assert_true(c.route_margin == 0.10);
    assert_int_equal(c.route_log, 4096);
    assert_int_equal(c.calibrate, TDM_CALIBRATE_AUTO);
    assert_int_equal(c.calibration_budget_ms, 2000);
    assert_null(c.costmodel_path);
    assert_true(c.mem_pressure[0] == 0.60 && c.mem_pressure[1] == 0.80 && c.mem_pressure[2] == 0.90);
    assert_int_equal(c.mem_limit, 0);
    assert_true(c.mem_release_threshold == UINT64_MAX);
    assert_int_equal(c.route_op[TDM_OP_SEQ_LCS], TDM_CONFIG_UNSET_OP);

    setenv("TANDEM_ROUTE", "gpu", 1);
    setenv("TANDEM_ROUTE_MARGIN", "0.25", 1);
    setenv("TANDEM_ROUTE_LOG", "16", 1);
    setenv("TANDEM_CALIBRATE", "OFF", 1);
    setenv("TANDEM_CALIBRATION_BUDGET_MS", "500", 1);
    setenv("TANDEM_COSTMODEL_PATH", "", 1);
    setenv("TANDEM_MEM_PRESSURE", "0.5,0.7,0.95", 1);
    setenv("TANDEM_MEM_LIMIT", "64M", 1);
    setenv("TANDEM_MEM_RELEASE_THRESHOLD", "2G", 1);
    setenv("TANDEM_ROUTE_LCS", "cpu", 1);
    tdm_config_init(&c);
    assert_int_equal(tdm_config_resolve(&c), TDM_OK);
    assert_int_equal(c.route, TDM_DEVICE_CUDA);
    assert_true(c.route_margin == 0.25);
    assert_int_equal(c.route_log, 16);
    assert_int_equal(c.calibrate, TDM_CALIBRATE_OFF);
    assert_int_equal(c.calibration_budget_ms, 500);
    assert_string_equal(c.costmodel_path, "");
    assert_true(c.mem_pressure[0] == 0.5 && c.mem_pressure[1] == 0.7 && c.mem_pressure[2] == 0.95);
    assert_true(c.mem_limit == 64ull << 20);
    assert_true(c.mem_release_threshold == 2ull << 30);
    assert_int_equal(c.route_op[TDM_OP_SEQ_LCS], TDM_DEVICE_CPU);
    assert_int_equal(c.route_op[TDM_OP_SEQ_DIFFLIB], TDM_CONFIG_UNSET_OP);
    FILE *f = tmpfile();
    tdm_config_dump(&c, f);
    rewind(f);
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    assert_non_null(strstr(buf, "TANDEM_MEM_PRESSURE=0.5,0.7,0.95 (env)"));
    assert_non_null(strstr(buf, "TANDEM_ROUTE=gpu (env)"));
    assert_non_null(strstr(buf, "TANDEM_MEM_LIMIT=67108864 (env)"));
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unsetenv(names[i]);

    /* Bad values name the variable. */
    static const char *const bad[][2] = {{"TANDEM_ROUTE", "fast"},          {"TANDEM_ROUTE_MARGIN", "0.95"},
                                         {"TANDEM_ROUTE_MARGIN", "x"},      {"TANDEM_ROUTE_LOG", "-1"},
                                         {"TANDEM_CALIBRATE", "sometimes"}, {"TANDEM_CALIBRATION_BUDGET_MS", "5"},
                                         {"TANDEM_MEM_PRESSURE", "0.9,0.8,0.95"}, {"TANDEM_MEM_PRESSURE", "0.5,0.7"},
                                         {"TANDEM_MEM_LIMIT", "64Q"},       {"TANDEM_MEM_LIMIT", "-3"},
                                         {"TANDEM_ROUTE_LCS", "maybe"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv(bad[i][0], bad[i][1], 1);
        tdm_config_init(&c);
        tu_check(tdm_config_resolve(&c) == TDM_E_CONFIG, "%s=%s accepted", bad[i][0], bad[i][1]);
        tu_check(strstr(tdm_last_error(), bad[i][0]) != NULL, "message %s", tdm_last_error());
        unsetenv(bad[i][0]);
    }
    /* An override for an op that does not exist is an unknown variable (an error when strict). */
    setenv("TANDEM_ROUTE_NOSUCHOP", "gpu", 1);
    setenv("TANDEM_STRICT", "1", 1);
    tdm_config_init(&c);
    assert_int_equal(tdm_config_resolve(&c), TDM_E_CONFIG);
    unsetenv("TANDEM_ROUTE_NOSUCHOP");
    setenv("TANDEM_ROUTE_DIFFLIB", "gpu", 1);
    tdm_config_init(&c);
    assert_int_equal(tdm_config_resolve(&c), TDM_OK);
    assert_int_equal(c.route_op[TDM_OP_SEQ_DIFFLIB], TDM_DEVICE_CUDA);
    unsetenv("TANDEM_ROUTE_DIFFLIB");
    unsetenv("TANDEM_STRICT");
}

int main(void) {
    tu_init_seed("test_router");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fit_recovers_parameters), cmocka_unit_test(test_predict_interpolates),
        cmocka_unit_test(test_router_picks_measured_faster), cmocka_unit_test(test_overrides),
        cmocka_unit_test(test_forced_gpu_without_gpu), cmocka_unit_test(test_decision_records),
        cmocka_unit_test(test_debug_router_prints), cmocka_unit_test(test_model_file_round_trip),
        cmocka_unit_test(test_key_mismatch_recalibrates), cmocka_unit_test(test_config_variables),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
