/* test_engine.c: unit tests of the dual-tier sequence engine (src/seq/engine.c): it must answer every
 * query exactly as tdm_seq_query does over the same store, wherever its patterns live: all on the device,
 * split between the device and the host-side recent tier, stuck in the recent tier because the device is
 * full, or all on the CPU after a device error (logged, counted, route DEVICE_ERROR; an error under
 * TANDEM_SEQ_BACKEND=cuda with TANDEM_STRICT). Placement follows TANDEM_SEQ_BACKEND and the size rule
 * (TANDEM_SEQ_GPU_MIN); the engine's configuration variables and argument errors are checked too. The
 * device is the fake of engine_fake.h; triggers, training and concurrency are in test_engine_sync.c. */
#define _POSIX_C_SOURCE 200809L
#include "engine_fake.h"

/* The last log line (the device errors the engine must report). */
static struct {
    int n;
    tdm_log_level level;
    char msg[512];
} logs;

static void capture(tdm_log_level level, const char *msg, void *user) {
    logs.n++;
    logs.level = level;
    snprintf(logs.msg, sizeof logs.msg, "%s", msg);
}

/* ---- the tiers -------------------------------------------------------------------------------------- */

/* Everything on the device, then device + recent tier, then a device error. */
static void test_engine_tiers(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(11);
    tdm_ctx *ctx = make_ctx(TDM_DEVICE_AUTO, 0, 1);
    tdm_seq_engine *e = make_engine(make_store(ctx, tu_next(&r), 8, 500), 0, 0.0, 0);
    tdm_seq_engine_stats st = stats_of(e);
    assert_int_equal(st.device_patterns, 500);
    assert_int_equal(st.recent_patterns, 0);
    assert_int_equal(st.synced_patterns, 500); /* the initial load */
    for (int t = 0; t < TDM_SEQ_SYNC_TRIGGERS; t++) assert_int_equal(st.syncs[t], 0);
    assert_string_equal(st.device, "fake:0");
    assert_true(st.device_bytes > 0 && st.device_reserved_bytes >= st.device_bytes);
    assert_false(st.device_full || st.device_failed || st.training);
    tdm_seq_stm stms[10];
    size_t n = make_stms(e, &r, 8, stms, 8);
    check_engine(e, stms, n, (expect){"fake:0", TDM_ROUTE_RESIDENCY_ONLY}, "all on device");
    st = stats_of(e);
    assert_true(st.queries_device > 0 && st.queries_cpu > 0); /* char ran on the CPU */
    assert_int_equal(st.fallbacks, 0);

    /* Learned patterns stay in the recent tier (threshold 0: no count trigger) and every query sees them. */
    learn_some(e, &r, 8, 130, 1);
    st = stats_of(e);
    assert_int_equal(st.patterns, 630);
    assert_int_equal(st.device_patterns, 500);
    assert_int_equal(st.recent_patterns, 130);
    clear_stms(stms, n);
    n = make_stms(e, &r, 8, stms, 10);
    check_engine(e, stms, n, (expect){"fake:0", TDM_ROUTE_RESIDENCY_ONLY}, "device + recent");

    /* A pattern learned now is the next query's best hit. */
    const char *fresh[] = {"brand", "new", "pattern"};
    const size_t fl[] = {5, 3, 7};
    uint32_t id;
    assert_int_equal(tdm_seq_engine_learn_strings(e, fresh, fl, 3, &id), TDM_OK);
    assert_int_equal(id, 630);
    tdm_seq_stm q;
    assert_int_equal(tdm_seq_engine_encode(e, fresh, fl, 3, &q), TDM_OK);
    tdm_seq_query_opts o = opts_for(configs[0], 1.0, 0);
    tdm_seq_result res;
    assert_int_equal(tdm_seq_engine_query(e, &q, &o, &res), TDM_OK);
    assert_int_equal(res.n, 1);
    assert_int_equal(res.hits[0].id, 630);
    assert_string_equal(res.stats.backend, "fake:0");
    tdm_seq_result_clear(&res);

    /* A device error: logged at warn with the device's message, the tier turned off, and the CPU answers
     * the same over both tiers, from this very query on. */
    atomic_store(&fake.fail_query, 1);
    unsigned long long before = atomic_load(&fake.queries);
    tdm_seq_query_opts all = opts_for(configs[2], 0.5, 631 + 3);
    tdm_seq_result want;
    logs.n = 0;
    tdm_log_set_callback(capture, NULL);
    assert_int_equal(tdm_seq_engine_query(e, &stms[2], &all, &res), TDM_OK);
    tdm_log_set_callback(NULL, NULL);
    assert_int_equal(logs.n, 1);
    assert_int_equal(logs.level, TDM_LOG_WARN);
    tu_check(strstr(logs.msg, "fake: query fails") != NULL, "log: %s", logs.msg);
    assert_int_equal(tdm_seq_query(tdm_seq_engine_store(e), &stms[2], &all, &want), TDM_OK);
    assert_int_equal(want.n, 631);
    same_hits(&res, &want, "first fallback", configs[2].name, 2, 0.5, all.top_k);
    assert_string_equal(res.stats.backend, "cpu");
    assert_int_equal(res.stats.route_reason, TDM_ROUTE_DEVICE_ERROR);
    assert_int_equal(res.stats.patterns, 631);
    assert_int_equal(res.stats.device_patterns, 0);
    assert_int_equal(res.stats.recent_patterns, 631);
    tdm_seq_result_clear(&res);
    tdm_seq_result_clear(&want);
    assert_int_equal(tdm_seq_engine_query(e, &q, &o, &res), TDM_OK);
    assert_int_equal(res.n, 1);
    assert_int_equal(res.hits[0].id, 630);
    assert_int_equal(res.stats.route_reason, TDM_ROUTE_DEVICE_ERROR);
    tdm_seq_result_clear(&res);
    st = stats_of(e);
    assert_true(st.device_failed);
    assert_int_equal(st.fallbacks, 2);
    atomic_store(&fake.fail_query, 0); /* the tier stays off */
    check_engine(e, stms, n, (expect){"cpu", TDM_ROUTE_DEVICE_ERROR}, "after a device error");
    assert_int_equal(atomic_load(&fake.queries), before + 1);
    assert_int_equal(tdm_seq_engine_sync(e), TDM_OK); /* nothing moves any more */
    assert_int_equal(stats_of(e).device_patterns, 500);
    assert_true(stats_of(e).fallbacks > 1);
    tdm_seq_stm_clear(&q);
    clear_stms(stms, n);
    tdm_seq_engine_free(e);
    tdm_destroy(ctx);
}

/* A device that fills up: what fits goes in (batches are halved), the rest stays in the recent tier,
 * nothing is lost, and a later sync moves it once there is room. */
static void test_engine_device_full(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(12);
    tdm_ctx *ctx = make_ctx(TDM_DEVICE_AUTO, 0, 1);
    atomic_store(&fake.capacity, 401);
    tdm_seq_engine *e = make_engine(make_store(ctx, tu_next(&r), 8, 600), 3, 0.0, 0);
    tdm_seq_engine_stats st = stats_of(e);
    assert_int_equal(st.device_patterns, 401);
    assert_int_equal(st.recent_patterns, 199);
    assert_int_equal(st.synced_patterns, 401);
    assert_true(st.device_full);
    assert_false(st.device_failed);
    tdm_seq_stm stms[10];
    size_t n = make_stms(e, &r, 8, stms, 8);
    check_engine(e, stms, n, (expect){"fake:0", TDM_ROUTE_RESIDENCY_ONLY}, "device full");
    /* Learning past the threshold on a full device does not retry at every learn... */
    unsigned long long appends = atomic_load(&fake.appends);
    learn_some(e, &r, 8, 10, 2);
    assert_int_equal(atomic_load(&fake.appends), appends);
    /* ... a manual sync tries, still full. */
    assert_int_equal(tdm_seq_engine_sync(e), TDM_OK);
    st = stats_of(e);
    assert_int_equal(st.syncs[TDM_SEQ_SYNC_MANUAL], 1);
    assert_int_equal(st.device_patterns, 401);
    assert_int_equal(st.recent_patterns, 209);
    assert_true(st.device_full);
    /* Room again: everything moves. */
    atomic_store(&fake.capacity, UINT32_MAX);
    assert_int_equal(tdm_seq_engine_sync(e), TDM_OK);
    st = stats_of(e);
    assert_int_equal(st.syncs[TDM_SEQ_SYNC_MANUAL], 2);
    assert_int_equal(st.device_patterns, 610);
    assert_int_equal(st.recent_patterns, 0);
    assert_int_equal(st.synced_patterns, 610);
    assert_false(st.device_full);
    check_engine(e, stms, n, (expect){"fake:0", TDM_ROUTE_RESIDENCY_ONLY}, "after room");
    clear_stms(stms, n);
    tdm_seq_engine_free(e);

    /* A device with no room at all: everything in the recent tier, still exact. */
    atomic_store(&fake.capacity, 0);
    e = make_engine(make_store(ctx, tu_next(&r), 8, 200), 0, 0.0, 0);
    st = stats_of(e);
    assert_int_equal(st.device_patterns, 0);
    assert_int_equal(st.recent_patterns, 200);
    assert_true(st.device_full);
    n = make_stms(e, &r, 8, stms, 6);
    check_engine(e, stms, n, (expect){"fake:0", TDM_ROUTE_RESIDENCY_ONLY}, "no room");
    clear_stms(stms, n);
    tdm_seq_engine_free(e);
    tdm_destroy(ctx);
}

/* A failing append (not a full device) turns the tier off; the CPU answers with DEVICE_ERROR. A device
 * that cannot even make a store leaves the engine on the CPU. */
static void test_engine_device_failures(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(13);
    tdm_ctx *ctx = make_ctx(TDM_DEVICE_AUTO, 0, 1);
    tdm_seq_engine *e = make_engine(make_store(ctx, tu_next(&r), 8, 300), 0, 0.0, 0);
    learn_some(e, &r, 8, 20, 3);
    atomic_store(&fake.fail_append, 1);
    assert_int_equal(tdm_seq_engine_sync(e), TDM_OK);
    tdm_seq_engine_stats st = stats_of(e);
    assert_true(st.device_failed);
    assert_int_equal(st.device_patterns, 300);
    assert_int_equal(st.recent_patterns, 20);
    tdm_seq_stm stms[8];
    size_t n = make_stms(e, &r, 8, stms, 6);
    check_engine(e, stms, n, (expect){"cpu", TDM_ROUTE_DEVICE_ERROR}, "append failed");
    assert_true(stats_of(e).fallbacks > 0);
    clear_stms(stms, n);
    tdm_seq_engine_free(e);

    atomic_store(&fake.fail_append, 0);
    atomic_store(&fake.fail_new, 1);
    e = make_engine(make_store(ctx, tu_next(&r), 8, 100), 0, 0.0, 0);
    st = stats_of(e);
    assert_true(st.device_failed);
    assert_int_equal(st.device_patterns, 0);
    assert_string_equal(st.device, "fake:0");
    n = make_stms(e, &r, 8, stms, 4);
    check_engine(e, stms, n, (expect){"cpu", TDM_ROUTE_DEVICE_ERROR}, "no device store");
    clear_stms(stms, n);
    tdm_seq_engine_free(e);
    tdm_destroy(ctx);

    /* Forced and strict: a device error is the caller's error, not a silent fallback. */
    ctx = make_ctx(TDM_DEVICE_CUDA, 1, 1);
    atomic_store(&fake.fail_new, 1);
    tdm_seq_engine_opts o;
    tdm_seq_engine_opts_init(ctx, &o);
    assert_int_equal(tdm_seq_engine_new(make_store(ctx, 1, 8, 50), &o, &e), TDM_E_DEVICE);
    atomic_store(&fake.fail_new, 0);
    e = make_engine(make_store(ctx, tu_next(&r), 8, 100), 0, 0.0, 0);
    n = make_stms(e, &r, 8, stms, 2);
    tdm_seq_query_opts qo = opts_for(configs[2], 0.5, 0);
    tdm_seq_result res;
    atomic_store(&fake.fail_query, 1);
    assert_int_equal(tdm_seq_engine_query(e, &stms[1], &qo, &res), TDM_E_DEVICE);
    assert_non_null(strstr(tdm_last_error(), "fake"));
    atomic_store(&fake.fail_query, 0);
    assert_int_equal(tdm_seq_engine_query(e, &stms[1], &qo, &res), TDM_E_DEVICE); /* the tier stays off */
    assert_true(stats_of(e).device_failed);
    clear_stms(stms, n);
    tdm_seq_engine_free(e);
    tdm_destroy(ctx);
}

/* A device answer out of order or outside its tier is a device error: the CPU answers instead. Rows
 * past 65,536 take the threaded check, so both its paths run; each case runs as rows by rank (a threshold
 * answering every pattern) and as hits (the same rows as a top-k answer). */
static void test_engine_device_bad_rows(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(17);
    tdm_ctx *ctx = make_ctx(TDM_DEVICE_AUTO, 0, 1);
    const uint32_t sizes[] = {300, 70000};
    for (int bad = 1; bad <= 4; bad++)
        for (size_t z = 0; z < 2; z++) {
            tdm_seq_engine *e = make_engine(make_store(ctx, tu_next(&r), 8, sizes[z]), 0, 0.0, 0);
            tdm_seq_stm stm[1];
            make_stms(e, &r, 8, stm, 1);
            tdm_seq_query_opts qo = opts_for(configs[0], 0.0, bad > 2 ? sizes[z] : 0); /* every pattern is a row */
            tdm_seq_result want, got;
            assert_int_equal(tdm_seq_query(tdm_seq_engine_store(e), &stm[0], &qo, &want), TDM_OK);
            assert_int_equal(want.n, sizes[z]);
            atomic_store(&fake.corrupt, (bad - 1) % 2 + 1);
            assert_int_equal(tdm_seq_engine_query(e, &stm[0], &qo, &got), TDM_OK);
            atomic_store(&fake.corrupt, 0);
            assert_string_equal(got.stats.backend, "cpu");
            assert_int_equal(got.stats.route_reason, TDM_ROUTE_DEVICE_ERROR);
            assert_true(stats_of(e).device_failed);
            same_hits(&got, &want, "bad rows", "lcs", 0, 0.0, 0);
            tdm_seq_result_clear(&want);
            tdm_seq_result_clear(&got);
            clear_stms(stm, 1);
            tdm_seq_engine_free(e);
        }
    tdm_destroy(ctx);
}

/* ---- placement -------------------------------------------------------------------------------------- */

static tdm_seq_result query1(tdm_seq_engine *e, tdm_seq_metric m) {
    const char *syms[] = {"s0", "s1"};
    const size_t lens[] = {2, 2};
    tdm_seq_stm q;
    assert_int_equal(tdm_seq_engine_encode(e, syms, lens, 2, &q), TDM_OK);
    tdm_seq_query_opts o;
    tdm_seq_query_opts_init(&o);
    o.metric = m;
    tdm_seq_result res;
    int rc = tdm_seq_engine_query(e, &q, &o, &res);
    tu_check(rc == TDM_OK, "rc %d (%s)", rc, tdm_last_error());
    tdm_seq_result want;
    assert_int_equal(tdm_seq_query(tdm_seq_engine_store(e), &q, &o, &want), TDM_OK);
    same_hits(&res, &want, "placement", tdm_seq_metric_name(m), 0, o.threshold, 0);
    tdm_seq_result_clear(&want);
    tdm_seq_stm_clear(&q);
    return res;
}

static void expect_route(tdm_seq_engine *e, tdm_seq_metric m, const char *backend, tdm_route_reason why) {
    tdm_seq_result res = query1(e, m);
    tu_check(!strcmp(res.stats.backend, backend), "%s ran on %s, want %s", tdm_seq_metric_name(m), res.stats.backend, backend);
    tu_check(res.stats.route_reason == (int)why, "%s: route %s, want %s", tdm_seq_metric_name(m),
             tdm_route_reason_name((tdm_route_reason)res.stats.route_reason), tdm_route_reason_name(why));
    tdm_seq_result_clear(&res);
}

static void test_engine_placement(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(41);
    /* TANDEM_SEQ_BACKEND=cpu: the device is never touched. */
    tdm_ctx *ctx = make_ctx(TDM_DEVICE_CPU, 0, 1);
    tdm_seq_engine *e = make_engine(make_store(ctx, tu_next(&r), 6, 200), 5, 0.0, 0);
    expect_route(e, TDM_SEQ_LCS, "cpu", TDM_ROUTE_FORCED_CPU);
    expect_route(e, TDM_SEQ_DIFFLIB, "cpu", TDM_ROUTE_FORCED_CPU);
    expect_route(e, TDM_SEQ_CHAR, "cpu", TDM_ROUTE_FORCED_CPU);
    learn_some(e, &r, 6, 10, 1);
    assert_int_equal(tdm_seq_engine_sync(e), TDM_OK);
    tdm_seq_engine_stats st = stats_of(e);
    assert_null(st.device);
    assert_int_equal(st.device_patterns, 0);
    assert_int_equal(st.recent_patterns, 210);
    assert_int_equal(st.syncs[TDM_SEQ_SYNC_MANUAL] + st.syncs[TDM_SEQ_SYNC_COUNT], 0);
    assert_int_equal(st.queries_cpu, 3);
    assert_int_equal(st.queries_device, 0);
    assert_int_equal(atomic_load(&fake.stores), 0);
    tdm_seq_engine_free(e);
    tdm_destroy(ctx);

    /* auto: below TANDEM_SEQ_GPU_MIN device-tier patterns the CPU answers (SMALL_INPUT); from it on, the
     * device. The rule counts the device tier, not the recent one. Char never goes to the device. */
    ctx = make_ctx(TDM_DEVICE_AUTO, 0, 1);
    e = make_engine(make_store(ctx, tu_next(&r), 6, 200), 0, 0.0, 250);
    expect_route(e, TDM_SEQ_LCS, "cpu", TDM_ROUTE_SMALL_INPUT);
    learn_some(e, &r, 6, 60, 2);
    expect_route(e, TDM_SEQ_DIFFLIB, "cpu", TDM_ROUTE_SMALL_INPUT);
    assert_int_equal(tdm_seq_engine_sync(e), TDM_OK);
    expect_route(e, TDM_SEQ_LCS, "fake:0", TDM_ROUTE_RESIDENCY_ONLY);
    expect_route(e, TDM_SEQ_DIFFLIB, "fake:0", TDM_ROUTE_RESIDENCY_ONLY);
    expect_route(e, TDM_SEQ_CHAR, "cpu", TDM_ROUTE_NO_GPU_IMPL);
    st = stats_of(e);
    assert_int_equal(st.queries_device, 2);
    assert_int_equal(st.queries_cpu, 3);
    tdm_seq_engine_free(e);
    /* The defaults come from the configuration (TANDEM_SEQ_GPU_MIN = 100000 here). */
    assert_int_equal(tdm_seq_engine_new(make_store(ctx, tu_next(&r), 6, 100), NULL, &e), TDM_OK);
    expect_route(e, TDM_SEQ_LCS, "cpu", TDM_ROUTE_SMALL_INPUT);
    tdm_seq_engine_free(e);
    tdm_destroy(ctx);

    /* cuda: the device whatever the size; char falls back (or fails under strict). */
    for (int strict = 0; strict <= 1; strict++) {
        ctx = make_ctx(TDM_DEVICE_CUDA, strict, 1);
        e = make_engine(make_store(ctx, tu_next(&r), 6, 30), 0, 0.0, 1000000);
        expect_route(e, TDM_SEQ_LCS, "fake:0", TDM_ROUTE_FORCED_GPU);
        expect_route(e, TDM_SEQ_DIFFLIB, "fake:0", TDM_ROUTE_FORCED_GPU);
        if (!strict) {
            expect_route(e, TDM_SEQ_CHAR, "cpu", TDM_ROUTE_FORCED_GPU_UNAVAILABLE);
        } else {
            tdm_seq_stm q;
            assert_int_equal(tdm_seq_engine_encode(e, NULL, NULL, 0, &q), TDM_OK);
            tdm_seq_query_opts o;
            tdm_seq_query_opts_init(&o);
            o.metric = TDM_SEQ_CHAR;
            tdm_seq_result res;
            assert_int_equal(tdm_seq_engine_query(e, &q, &o, &res), TDM_E_UNSUPPORTED);
            assert_non_null(strstr(tdm_last_error(), "seq.char"));
            tdm_seq_stm_clear(&q);
        }
        tdm_seq_engine_free(e);
        tdm_destroy(ctx);
    }

    /* Real backends only (TANDEM_DEVICE=cpu: no CUDA backend, GPU machine or not). */
    ctx = make_ctx(TDM_DEVICE_AUTO, 0, 0);
    e = make_engine(make_store(ctx, tu_next(&r), 6, 50), 5, 0.0, 0);
    expect_route(e, TDM_SEQ_LCS, "cpu", TDM_ROUTE_ONLY_CPU);
    assert_null(stats_of(e).device);
    tdm_seq_engine_free(e);
    tdm_destroy(ctx);
    for (int strict = 0; strict <= 1; strict++) {
        ctx = make_ctx(TDM_DEVICE_CUDA, strict, 0);
        tdm_alloc_stats a0, a1;
        tdm_alloc_get_stats(&a0);
        tdm_seq_store *s;
        assert_int_equal(tdm_seq_store_new(ctx, &s), TDM_OK);
        uint32_t ids[3] = {intern(s, "x"), intern(s, "y"), intern(s, "z")};
        assert_int_equal(tdm_seq_store_add(s, ids, 3, NULL), TDM_OK);
        int rc = tdm_seq_engine_new(s, NULL, &e);
        if (strict) { /* refused, and the store it took over is freed */
            assert_int_equal(rc, TDM_E_UNSUPPORTED);
            assert_non_null(strstr(tdm_last_error(), "seq.lcs"));
            tdm_alloc_get_stats(&a1);
            assert_int_equal(a1.live, a0.live);
        } else {
            assert_int_equal(rc, TDM_OK);
            const char *syms[] = {"x", "y", "z"};
            const size_t lens[] = {1, 1, 1};
            tdm_seq_stm q;
            assert_int_equal(tdm_seq_engine_encode(e, syms, lens, 3, &q), TDM_OK);
            tdm_seq_query_opts o;
            tdm_seq_query_opts_init(&o);
            tdm_seq_result res;
            assert_int_equal(tdm_seq_engine_query(e, &q, &o, &res), TDM_OK);
            assert_string_equal(res.stats.backend, "cpu");
            assert_int_equal(res.stats.route_reason, TDM_ROUTE_FORCED_GPU_UNAVAILABLE);
            assert_int_equal(res.n, 1);
            tdm_seq_result_clear(&res);
            tdm_seq_stm_clear(&q);
            tdm_seq_engine_free(e);
        }
        tdm_destroy(ctx);
    }
}

/* ---- configuration, arguments, errors --------------------------------------------------------------- */

static void test_engine_config(void **state) {
    (void)state;
    tdm_seq_engine_opts o;
    tdm_seq_engine_opts_init(NULL, &o);
    assert_int_equal(o.sync_threshold, 1000);
    assert_true(o.sync_interval_s == 300.0);
    assert_int_equal(o.gpu_min_patterns, 100000);
    const char *names[] = {"TANDEM_SEQ_SYNC_THRESHOLD", "TANDEM_SEQ_SYNC_INTERVAL", "TANDEM_SEQ_GPU_MIN"};
    for (int i = 0; i < 3; i++) unsetenv(names[i]);
    tdm_ctx *ctx = make_ctx(TDM_DEVICE_AUTO, 0, 0);
    tdm_seq_engine_opts_init(ctx, &o);
    assert_int_equal(o.sync_threshold, 1000);
    assert_true(o.sync_interval_s == 300.0);
    assert_int_equal(o.gpu_min_patterns, 100000);
    FILE *f = tmpfile();
    tdm_config_dump(tdm_ctx_config(ctx), f);
    rewind(f);
    char buf[4096];
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    buf[got] = '\0';
    fclose(f);
    assert_non_null(strstr(buf, "TANDEM_SEQ_SYNC_THRESHOLD=1000 (default)"));
    assert_non_null(strstr(buf, "TANDEM_SEQ_SYNC_INTERVAL=300 (default)"));
    assert_non_null(strstr(buf, "TANDEM_SEQ_GPU_MIN=100000 (default)"));
    tdm_destroy(ctx);

    setenv(names[0], "0", 1), setenv(names[1], "86400", 1), setenv(names[2], "2147483647", 1);
    ctx = make_ctx(TDM_DEVICE_AUTO, 0, 0);
    tdm_seq_engine_opts_init(ctx, &o);
    assert_int_equal(o.sync_threshold, 0);
    assert_true(o.sync_interval_s == 86400.0);
    assert_int_equal(o.gpu_min_patterns, 2147483647u);
    tdm_destroy(ctx);
    const char *bad[][2] = {{"TANDEM_SEQ_SYNC_THRESHOLD", "-1"}, {"TANDEM_SEQ_SYNC_THRESHOLD", "2147483648"},
                            {"TANDEM_SEQ_SYNC_INTERVAL", "86401"}, {"TANDEM_SEQ_SYNC_INTERVAL", "1.5"},
                            {"TANDEM_SEQ_GPU_MIN", "lots"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        for (int k = 0; k < 3; k++) unsetenv(names[k]);
        setenv(bad[i][0], bad[i][1], 1);
        tdm_ctx *c = NULL;
        assert_int_equal(tdm_init(&c, NULL), TDM_E_CONFIG);
        char want[96];
        snprintf(want, sizeof want, "%s=\"%s\"", bad[i][0], bad[i][1]);
        tu_check(strstr(tdm_last_error(), want) != NULL, "message \"%s\" lacks %s", tdm_last_error(), want);
    }
    for (int i = 0; i < 3; i++) unsetenv(names[i]);
}

static void test_engine_arguments(void **state) {
    (void)state;
    tdm_ctx *ctx = make_ctx(TDM_DEVICE_AUTO, 0, 1);
    tdm_seq_engine *e = (tdm_seq_engine *)&ctx;
    assert_int_equal(tdm_seq_engine_new(NULL, NULL, &e), TDM_E_INVAL);
    assert_ptr_equal(e, (tdm_seq_engine *)&ctx);
    /* The engine takes the store over even when it fails: nothing leaks. */
    const double bad_interval[] = {-1.0, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        tdm_alloc_stats a0, a1;
        tdm_alloc_get_stats(&a0);
        tdm_seq_store *s = make_store(ctx, 5, 6, 20);
        tdm_seq_engine_opts o = {.sync_threshold = 1, .sync_interval_s = i < 3 ? bad_interval[i] : 1.0};
        assert_int_equal(tdm_seq_engine_new(s, &o, i < 3 ? &e : NULL), TDM_E_INVAL);
        tdm_alloc_get_stats(&a1);
        assert_int_equal(a1.live, a0.live);
        assert_int_equal(a1.current_bytes, a0.current_bytes);
    }
    tdm_alloc_stats a0, a1;
    tdm_alloc_get_stats(&a0);
    e = make_engine(make_store(ctx, 6, 6, 40), 3, 0.2, 0);
    /* Bad learns add nothing and do not disturb the tiers. */
    uint32_t nv = tdm_seq_vocab_size(tdm_seq_store_vocab_const(tdm_seq_engine_store(e)));
    uint32_t bad_ids[2] = {0, nv + 1}, id = 77;
    assert_int_equal(tdm_seq_engine_learn(e, bad_ids, 2, &id), TDM_E_RANGE);
    assert_int_equal(id, 77);
    const char *ill[] = {"ok", "b\xC0\x80"};
    const size_t ill_len[] = {2, 3};
    assert_int_equal(tdm_seq_engine_learn_strings(e, ill, ill_len, 2, &id), TDM_E_UTF8);
    tdm_seq_stm q;
    assert_int_equal(tdm_seq_engine_encode(e, ill, ill_len, 2, &q), TDM_E_UTF8);
    assert_int_equal(stats_of(e).patterns, 40);
    assert_int_equal(tdm_seq_engine_learn(NULL, bad_ids, 1, NULL), TDM_E_INVAL);
    assert_int_equal(tdm_seq_engine_learn_strings(NULL, ill, ill_len, 1, NULL), TDM_E_INVAL);
    assert_int_equal(tdm_seq_engine_learn(e, bad_ids, 1, NULL), TDM_OK); /* id may be NULL */
    /* Query errors as tdm_seq_query's. */
    assert_int_equal(tdm_seq_engine_encode(e, NULL, NULL, 0, &q), TDM_OK);
    tdm_seq_query_opts o;
    tdm_seq_query_opts_init(&o);
    tdm_seq_result res;
    o.threshold = 1.5;
    assert_int_equal(tdm_seq_engine_query(e, &q, &o, &res), TDM_E_INVAL);
    o.threshold = 0.5;
    o.metric = (tdm_seq_metric)9;
    assert_int_equal(tdm_seq_engine_query(e, &q, &o, &res), TDM_E_INVAL);
    o.metric = TDM_SEQ_LCS;
    assert_int_equal(tdm_seq_engine_query(NULL, &q, &o, &res), TDM_E_INVAL);
    assert_int_equal(tdm_seq_engine_query(e, NULL, &o, &res), TDM_E_INVAL);
    assert_int_equal(tdm_seq_engine_query(e, &q, NULL, &res), TDM_E_INVAL);
    assert_int_equal(tdm_seq_engine_query(e, &q, &o, NULL), TDM_E_INVAL);
    uint32_t out_of_vocab[2] = {0, nv + 5};
    tdm_seq_stm raw = {out_of_vocab, 2, NULL, 0};
    assert_int_equal(tdm_seq_engine_query(e, &raw, &o, &res), TDM_E_RANGE);
    /* A batch with one bad STM fails whole, every result cleared, on both placements. */
    tdm_seq_stm batch_in[3] = {q, raw, q};
    for (int m = 0; m < 2; m++) {
        tdm_seq_result out[3];
        o.metric = m ? TDM_SEQ_CHAR : TDM_SEQ_LCS; /* device placement, CPU placement */
        assert_int_equal(tdm_seq_engine_query_batch(e, batch_in, 3, &o, out), TDM_E_RANGE);
        for (int i = 0; i < 3; i++) assert_null(out[i].hits), assert_int_equal(out[i].n, 0);
    }
    assert_int_equal(tdm_seq_engine_query_batch(e, batch_in, 0, &o, &res), TDM_OK);
    assert_int_equal(tdm_seq_engine_query_batch(NULL, batch_in, 1, &o, &res), TDM_E_INVAL);
    assert_int_equal(tdm_seq_engine_sync(NULL), TDM_E_INVAL);
    assert_int_equal(tdm_seq_engine_training(NULL, 1, 0), TDM_E_INVAL);
    assert_null(tdm_seq_engine_store(NULL));
    tdm_seq_engine_stats st;
    tdm_seq_engine_stats_get(NULL, &st);
    assert_int_equal(st.patterns, 0);
    tdm_seq_stm_clear(&q);
    tdm_seq_engine_free(e);
    tdm_seq_engine_free(NULL);
    tdm_alloc_get_stats(&a1);
    assert_int_equal(a1.live, a0.live); /* the engine, its store, device results and staging all freed */
    tdm_destroy(ctx);
}

int main(void) {
    tu_init_seed("test_engine");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_engine_config),
        cmocka_unit_test(test_engine_arguments),
        cmocka_unit_test(test_engine_placement),
        cmocka_unit_test(test_engine_tiers),
        cmocka_unit_test(test_engine_device_full),
        cmocka_unit_test(test_engine_device_failures),
        cmocka_unit_test(test_engine_device_bad_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
