/* test_cuda_memory.c: device memory on a real GPU (spec section 6.3): the backend's monitor sees the
 * library's allocations (live bytes, pool statistics), TANDEM_MEM_LIMIT refuses what would pass it with
 * TDM_E_DEVICE_OOM after relief, trimming returns pool memory, and the sequence engine forced onto the
 * device under small limits answers exactly as the CPU does (patterns that do not fit stay in the host
 * tier; a query that cannot get device memory falls back with OOM_FALLBACK). Skips without a GPU and
 * fails then under TANDEM_TEST_REQUIRE_GPU=1. */
#define _POSIX_C_SOURCE 200809L
#include "engine_fake.h"

static const tdm_backend *gpu_ctx(tdm_ctx **ctx, uint64_t limit, int seq_cuda) {
    tdm_config c;
    tdm_config_init(&c);
    c.calibrate = TDM_CALIBRATE_OFF;
    c.costmodel_path = "";
    c.mem_limit = limit;
    if (seq_cuda) c.seq_backend = TDM_DEVICE_CUDA;
    assert_int_equal(tdm_init(ctx, &c), TDM_OK);
    const tdm_backend *b = tdm_backend_find(*ctx, TDM_BACKEND_CUDA);
    if (!b) {
        tdm_destroy(*ctx);
        *ctx = NULL;
        const char *req = getenv("TANDEM_TEST_REQUIRE_GPU");
        if (req && !strcmp(req, "1")) fail_msg("TANDEM_TEST_REQUIRE_GPU=1 but no CUDA backend is registered");
        printf("GPU half not run: no CUDA backend (TANDEM_LOG_LEVEL=info says why)\n");
    }
    return b;
}

static void test_monitor_sees_allocations(void **state) {
    tdm_ctx *ctx;
    const tdm_backend *b = gpu_ctx(&ctx, 64ull << 20, 0);
    if (!b) skip();
    tdm_mem_monitor *m = tdm_backend_monitor(b);
    assert_non_null(m);
    assert_non_null(b->pool_stats);
    tdm_pressure lvl;
    assert_int_equal(tdm_mem_monitor_sample(m, &lvl), TDM_OK);
    tdm_mem_stats st;
    tdm_mem_monitor_stats(m, &st);
    assert_true(st.last.total > 0 && st.last.free <= st.last.total);
    assert_true(st.limit == 64ull << 20);
    void *p = NULL, *q = NULL;
    assert_int_equal(b->alloc(b, 32u << 20, &p), TDM_OK);
    tdm_mem_monitor_stats(m, &st);
    assert_true(st.live_bytes == 32u << 20);
    uint64_t reserved = 0, used = 0;
    assert_int_equal(b->pool_stats(b, &reserved, &used), TDM_OK);
    assert_true(used >= 32u << 20 && reserved >= used);
    /* 48 MiB more would pass the 64 MiB limit. */
    assert_int_equal(b->alloc(b, 48u << 20, &q), TDM_E_DEVICE_OOM);
    tdm_mem_monitor_stats(m, &st);
    assert_true(st.failures >= 1);
    assert_int_equal(b->release(b, p), TDM_OK);
    tdm_mem_monitor_stats(m, &st);
    assert_int_equal(st.live_bytes, 0);
    /* Now it fits; trimming after the frees gives the pool's memory back. */
    assert_int_equal(b->alloc(b, 48u << 20, &q), TDM_OK);
    assert_int_equal(b->release(b, q), TDM_OK);
    assert_int_equal(b->trim(b), TDM_OK);
    assert_int_equal(b->pool_stats(b, &reserved, &used), TDM_OK);
    assert_int_equal(used, 0);
    assert_true(reserved < 48u << 20);
    assert_true(b->identity[0] != '\0');
    tdm_destroy(ctx);
}

/* The engine forced onto the device under limits from "nothing fits" to "everything fits": every answer
 * equals tdm_seq_query's. */
static void test_engine_under_limits(void **state) {
    static const uint64_t limits[] = {2ull << 20, 8ull << 20, 64ull << 20, 0};
    for (size_t li = 0; li < sizeof limits / sizeof *limits; li++) {
        tdm_ctx *ctx;
        const tdm_backend *b = gpu_ctx(&ctx, limits[li], 1);
        if (!b) skip();
        tdm_seq_store *s = make_store(ctx, 0xbeef + li, 3000, 60000);
        tdm_seq_engine_opts eo = {.sync_threshold = 0, .sync_interval_s = 0, .gpu_min_patterns = 0};
        tdm_seq_engine *e;
        assert_int_equal(tdm_seq_engine_new(s, &eo, &e), TDM_OK);
        tdm_seq_stm stms[6];
        tu_rng r = tu_rng_for(0x3e3 + li);
        size_t n = make_stms(e, &r, 3000, stms, 6);
        for (int metric = 0; metric < 2; metric++)
            for (size_t i = 0; i < n; i++) {
                tdm_seq_query_opts o;
                tdm_seq_query_opts_init(&o);
                o.metric = (tdm_seq_metric)metric;
                o.threshold = i % 2 ? 0.0 : 0.3; /* 0.0: every pattern is a row (large results) */
                tdm_seq_result got, want;
                assert_int_equal(tdm_seq_engine_query(e, &stms[i], &o, &got), TDM_OK);
                assert_int_equal(tdm_seq_query(tdm_seq_engine_store(e), &stms[i], &o, &want), TDM_OK);
                tu_check(got.n == want.n, "limit %llu metric %d stm %zu: %zu vs %zu hits",
                         (unsigned long long)limits[li], metric, i, got.n, want.n);
                for (size_t k = 0; k < got.n; k++) {
                    tu_check(got.hits[k].id == want.hits[k].id, "limit %llu: hit %zu", (unsigned long long)limits[li], k);
                    tu_assert_same_double(got.hits[k].similarity, want.hits[k].similarity, "hit %zu", k);
                }
                int why = got.stats.route_reason;
                tu_check(why == TDM_ROUTE_FORCED_GPU || why == TDM_ROUTE_OOM_FALLBACK, "limit %llu: reason %s",
                         (unsigned long long)limits[li], tdm_route_reason_name((tdm_route_reason)why));
                tdm_seq_result_clear(&got);
                tdm_seq_result_clear(&want);
            }
        tdm_seq_engine_stats es;
        tdm_seq_engine_stats_get(e, &es);
        assert_int_equal(es.device_failed, 0);
        tdm_mem_stats st;
        tdm_mem_monitor_stats(tdm_backend_monitor(b), &st);
        printf("limit %llu: %llu of %llu patterns on the device, %llu refusals, %llu fallbacks, peak %llu bytes\n",
               (unsigned long long)limits[li], (unsigned long long)es.device_patterns, (unsigned long long)es.patterns,
               (unsigned long long)st.failures, (unsigned long long)st.fallbacks, (unsigned long long)st.peak_bytes);
        if (limits[li] == 2ull << 20) assert_true(st.failures >= 1 && es.device_patterns < es.patterns);
        for (size_t i = 0; i < n; i++) tdm_seq_stm_clear(&stms[i]);
        tdm_seq_engine_free(e);
        tdm_mem_monitor_stats(tdm_backend_monitor(b), &st);
        assert_int_equal(st.live_bytes, 0); /* everything the engine took was given back */
        tdm_destroy(ctx);
    }
}

int main(void) {
    tu_init_seed("test_cuda_memory");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_monitor_sees_allocations),
        cmocka_unit_test(test_engine_under_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
