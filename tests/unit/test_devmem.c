/* test_devmem.c: the device memory monitor against a fake memory source (no GPU): pressure levels and
 * their hysteresis, utilisation that counts pool-cached bytes as available, callbacks in priority order
 * with the bytes they are asked for, TANDEM_MEM_LIMIT with relief and one retry, callbacks that allocate
 * during eviction (no deadlock, no recursion) also from several threads, and the sequence engine's CPU
 * fallback when its device runs out of memory: same results as the CPU, reason OOM_FALLBACK, counted. */
#define _POSIX_C_SOURCE 200809L
#include "engine_fake.h"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

/* ---- a fake memory source: a device of `total` bytes whose free memory the test sets ----------------- */
typedef struct {
    uint64_t total, free, reserved, used;
    int trims;
} fake_mem;

static int fake_sample(void *user, tdm_mem_sample *out) {
    fake_mem *f = user;
    *out = (tdm_mem_sample){f->total, f->free, f->reserved, f->used};
    return TDM_OK;
}

static int fake_trim(void *user) {
    fake_mem *f = user;
    f->trims++;
    f->free += f->reserved - f->used; /* the pool's cached blocks go back to the driver */
    f->reserved = f->used;
    return TDM_OK;
}

static tdm_mem_monitor *monitor_on(fake_mem *f, uint64_t limit) {
    tdm_mem_source src = {fake_sample, fake_trim, f};
    tdm_mem_monitor *m;
    assert_int_equal(tdm_mem_monitor_new(&src, NULL, limit, &m), TDM_OK);
    return m;
}

static void test_pressure_hysteresis(void **state) {
    const double t[3] = {0.60, 0.80, 0.90};
    static const struct {
        tdm_pressure from;
        double u;
        tdm_pressure to;
    } cases[] = {
        {TDM_PRESSURE_LOW, 0.59, TDM_PRESSURE_LOW},           {TDM_PRESSURE_LOW, 0.60, TDM_PRESSURE_MODERATE},
        {TDM_PRESSURE_LOW, 0.85, TDM_PRESSURE_HIGH},          {TDM_PRESSURE_LOW, 0.95, TDM_PRESSURE_CRITICAL},
        {TDM_PRESSURE_MODERATE, 0.56, TDM_PRESSURE_MODERATE}, /* within 0.05 below 0.60: stays */
        {TDM_PRESSURE_MODERATE, 0.549, TDM_PRESSURE_LOW},     {TDM_PRESSURE_HIGH, 0.76, TDM_PRESSURE_HIGH},
        {TDM_PRESSURE_HIGH, 0.74, TDM_PRESSURE_MODERATE},     {TDM_PRESSURE_CRITICAL, 0.86, TDM_PRESSURE_CRITICAL},
        {TDM_PRESSURE_CRITICAL, 0.84, TDM_PRESSURE_HIGH},     {TDM_PRESSURE_CRITICAL, 0.50, TDM_PRESSURE_LOW},
        {TDM_PRESSURE_HIGH, 0.91, TDM_PRESSURE_CRITICAL},     {TDM_PRESSURE_MODERATE, 0.0, TDM_PRESSURE_LOW},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tdm_pressure got = tdm_pressure_step(cases[i].from, cases[i].u, t);
        tu_check(got == cases[i].to, "%s at u=%g -> %s, expected %s", tdm_pressure_name(cases[i].from), cases[i].u,
                 tdm_pressure_name(got), tdm_pressure_name(cases[i].to));
    }
    assert_string_equal(tdm_pressure_name(TDM_PRESSURE_CRITICAL), "CRITICAL");
    /* Thresholds must increase strictly inside (0,1). */
    fake_mem f = {1000, 1000, 0, 0, 0};
    tdm_mem_source src = {fake_sample, NULL, &f};
    tdm_mem_monitor *m;
    const double bad[3] = {0.9, 0.8, 0.95};
    assert_int_equal(tdm_mem_monitor_new(&src, bad, 0, &m), TDM_E_INVAL);
}

/* Callbacks that record their calls and "free" device memory in the fake. */
typedef struct {
    fake_mem *mem;
    int order[16], n;
    int id;
    size_t gives; /* bytes freed per call */
    tdm_pressure last_level;
    size_t last_wanted;
} cb_log;
static cb_log *shared_log;

static size_t evict(void *user, tdm_pressure lvl, size_t wanted) {
    cb_log *me = user;
    shared_log->order[shared_log->n++] = me->id;
    me->last_level = lvl, me->last_wanted = wanted;
    if (!wanted) return 0;
    size_t g = me->gives < wanted ? me->gives : wanted;
    me->mem->free += g;
    return g;
}

static void test_levels_and_callbacks(void **state) {
    fake_mem f = {1000, 1000, 0, 0, 0};
    tdm_mem_monitor *m = monitor_on(&f, 0);
    cb_log log = {0}, a = {&f, {0}, 0, 1, 30, 0, 0}, b = {&f, {0}, 0, 2, 1000, 0, 0}, c = {&f, {0}, 0, 3, 1000, 0, 0};
    shared_log = &log;
    int ha, hb, hc;
    assert_int_equal(tdm_mem_monitor_register(m, evict, &b, 5, &hb), TDM_OK);
    assert_int_equal(tdm_mem_monitor_register(m, evict, &a, 1, &ha), TDM_OK); /* lower priority value first */
    assert_int_equal(tdm_mem_monitor_register(m, evict, &c, 9, &hc), TDM_OK);
    tdm_pressure lvl;
    assert_int_equal(tdm_mem_monitor_sample(m, &lvl), TDM_OK);
    assert_int_equal(lvl, TDM_PRESSURE_LOW);
    assert_int_equal(log.n, 0);
    /* Pool-cached bytes are available: 900 taken, of which 400 sit unused in the pool -> u = 0.5. */
    f.free = 100, f.reserved = 500, f.used = 100;
    assert_int_equal(tdm_mem_monitor_sample(m, &lvl), TDM_OK);
    assert_int_equal(lvl, TDM_PRESSURE_LOW);
    /* MODERATE: everyone is told (wanted 0), nothing is asked for. */
    f.free = 350, f.reserved = f.used = 0;
    assert_int_equal(tdm_mem_monitor_sample(m, &lvl), TDM_OK);
    assert_int_equal(lvl, TDM_PRESSURE_MODERATE);
    assert_int_equal(log.n, 3);
    assert_int_equal(log.order[0], 1), assert_int_equal(log.order[1], 2), assert_int_equal(log.order[2], 3);
    assert_int_equal(a.last_level, TDM_PRESSURE_MODERATE);
    assert_int_equal(a.last_wanted, 0);
    /* HIGH: u = (1000 - 150 - 50) / 1000 = 0.80. The trim returns the 50 cached bytes (u stays 0.80),
     * then eviction works towards u < 0.75: 51 bytes wanted, a gives 30, b is asked for the other 21
     * and gives them, so c is not called. */
    log.n = 0;
    f.free = 150, f.reserved = 60, f.used = 10;
    assert_int_equal(tdm_mem_monitor_sample(m, &lvl), TDM_OK);
    assert_int_equal(lvl, TDM_PRESSURE_HIGH);
    assert_int_equal(f.trims, 1);
    assert_int_equal(log.n, 2);
    assert_int_equal(a.last_level, TDM_PRESSURE_HIGH);
    assert_int_equal(a.last_wanted, 51);
    assert_int_equal(b.last_wanted, 21);
    tdm_mem_stats st;
    tdm_mem_monitor_stats(m, &st);
    assert_int_equal(st.evicted_bytes, 51);
    assert_int_equal(st.trims, 1);
    /* Unregistered callbacks are not called. */
    tdm_mem_monitor_unregister(m, ha);
    tdm_mem_monitor_unregister(m, hb);
    tdm_mem_monitor_unregister(m, hc);
    log.n = 0;
    assert_int_equal(tdm_mem_monitor_relieve(m, 500), 0);
    assert_int_equal(log.n, 0);
    tdm_mem_monitor_free(m);
    tdm_mem_monitor_free(NULL);
}

/* A cache that frees its own accounted bytes when asked, as an engine's eviction would. */
typedef struct {
    tdm_mem_monitor *m;
    size_t held;
    int calls;
} cache;

static size_t cache_evict(void *user, tdm_pressure lvl, size_t wanted) {
    cache *c = user;
    c->calls++;
    size_t g = c->held;
    tdm_mem_monitor_unreserve(c->m, g);
    c->held = 0;
    return g;
}

static void test_limit_relief_and_retry(void **state) {
    fake_mem f = {1 << 30, 1 << 30, 0, 0, 0};
    tdm_mem_monitor *m = monitor_on(&f, 1000);
    cache c = {m, 0, 0};
    assert_int_equal(tdm_mem_monitor_reserve(m, 600), TDM_OK);
    c.held = 600;
    /* Without a callback the second 600 do not fit: DEVICE_OOM, counted. */
    assert_int_equal(tdm_mem_monitor_reserve(m, 600), TDM_E_DEVICE_OOM);
    assert_non_null(strstr(tdm_last_error(), "TANDEM_MEM_LIMIT"));
    tdm_mem_stats st;
    tdm_mem_monitor_stats(m, &st);
    assert_int_equal(st.failures, 1);
    assert_int_equal(st.live_bytes, 600);
    /* With the cache registered, the relief evicts it and the one retry succeeds. */
    int h;
    assert_int_equal(tdm_mem_monitor_register(m, cache_evict, &c, 0, &h), TDM_OK);
    assert_int_equal(tdm_mem_monitor_reserve(m, 600), TDM_OK);
    tdm_mem_monitor_stats(m, &st);
    assert_int_equal(c.calls, 1);
    assert_int_equal(st.retries_ok, 1);
    assert_int_equal(st.live_bytes, 600);
    assert_int_equal(st.peak_bytes, 600);
    tdm_mem_monitor_unreserve(m, 600);
    tdm_mem_monitor_stats(m, &st);
    assert_int_equal(st.live_bytes, 0);
    assert_int_equal(st.allocations, 2);
    assert_int_equal(st.frees, 2);
    tdm_mem_monitor_free(m);
}

/* An eviction callback that allocates (and queries the monitor) while it runs: its allocation goes over
 * the limit, which asks for relief again while this very callback is running. That must neither deadlock
 * nor recurse into the callback. */
typedef struct {
    tdm_mem_monitor *m;
    atomic_int depth, max_depth, calls, inner_rc_oom;
} greedy;

static size_t greedy_evict(void *user, tdm_pressure lvl, size_t wanted) {
    greedy *g = user;
    int d = atomic_fetch_add(&g->depth, 1) + 1;
    if (d > atomic_load(&g->max_depth)) atomic_store(&g->max_depth, d);
    atomic_fetch_add(&g->calls, 1);
    tdm_mem_stats st;
    tdm_mem_monitor_stats(g->m, &st);
    (void)tdm_mem_monitor_level(g->m);
    tdm_mem_monitor_sample(g->m, NULL);
    int rc = tdm_mem_monitor_reserve(g->m, 10000); /* far over the limit: relief from inside relief */
    if (rc == TDM_E_DEVICE_OOM) atomic_fetch_add(&g->inner_rc_oom, 1);
    else tdm_mem_monitor_unreserve(g->m, 10000);
    atomic_fetch_sub(&g->depth, 1);
    return 0;
}

static void *hammer(void *arg) {
    greedy *g = arg;
    for (int i = 0; i < 200; i++)
        if (tdm_mem_monitor_reserve(g->m, 5000) == TDM_OK) tdm_mem_monitor_unreserve(g->m, 5000);
    return NULL;
}

static void test_callback_allocating_during_eviction(void **state) {
    alarm(60); /* a deadlock kills the test instead of hanging CTest */
    fake_mem f = {1 << 20, 1 << 20, 0, 0, 0};
    tdm_mem_monitor *m = monitor_on(&f, 1000);
    greedy g = {.m = m};
    int h;
    assert_int_equal(tdm_mem_monitor_register(m, greedy_evict, &g, 0, &h), TDM_OK);
    assert_int_equal(tdm_mem_monitor_reserve(m, 5000), TDM_E_DEVICE_OOM);
    assert_true(atomic_load(&g.calls) >= 1);
    assert_int_equal(atomic_load(&g.max_depth), 1); /* never re-entered */
    assert_true(atomic_load(&g.inner_rc_oom) >= 1);
    /* The same from four threads at once. */
    pthread_t t[4];
    for (int i = 0; i < 4; i++) assert_int_equal(pthread_create(&t[i], NULL, hammer, &g), 0);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    assert_int_equal(atomic_load(&g.max_depth), 1);
    tdm_mem_stats st;
    tdm_mem_monitor_stats(m, &st);
    assert_int_equal(st.live_bytes, 0);
    tdm_mem_monitor_free(m);
    alarm(0);
}

/* TANDEM_MEM_LIMIT=64M with a device query that needs more: the engine answers on the CPU with the same
 * hits, reason OOM_FALLBACK, the fallback counted; the device tier stays on for the next query. */
static void test_engine_oom_fallback(void **state) {
    tdm_ctx *ctx = make_ctx(TDM_DEVICE_AUTO, 0, 1);
    tdm_backend *fake_b = ctx->backends[ctx->nbackends - 1];
    fake_mem f = {8ull << 30, 8ull << 30, 0, 0, 0};
    tdm_mem_monitor *mon = monitor_on(&f, 64ull << 20);
    fake_b->mem = mon;
    tdm_seq_store *s = make_store(ctx, 0x5eed, 500, 3000);
    tdm_seq_engine *e = make_engine(s, 0, 0.0, 0);
    tdm_seq_stm stms[4];
    tu_rng r = tu_rng_for(0x57);
    size_t n = make_stms(e, &r, 500, stms, 4);
    atomic_store(&fake.query_bytes, (size_t)100 << 20); /* 100 MiB of scratch: over the limit */
    check_engine(e, stms, n, (expect){"cpu", TDM_ROUTE_OOM_FALLBACK}, "over TANDEM_MEM_LIMIT");
    tdm_mem_stats st;
    tdm_mem_monitor_stats(mon, &st);
    assert_true(st.fallbacks >= n);
    assert_true(st.failures >= n);
    tdm_seq_engine_stats es;
    tdm_seq_engine_stats_get(e, &es);
    assert_int_equal(es.device_failed, 0);
    atomic_store(&fake.query_bytes, (size_t)1 << 20); /* fits now: back on the device */
    check_engine(e, stms, n, (expect){"fake:0", TDM_ROUTE_RESIDENCY_ONLY}, "under the limit");
    for (size_t i = 0; i < n; i++) tdm_seq_stm_clear(&stms[i]);
    tdm_seq_engine_free(e);
    fake_b->mem = NULL;
    tdm_mem_monitor_free(mon);
    tdm_destroy(ctx);
}

/* Memory pressure drops the engine's device tier (its eviction callback): answers stay equal to the CPU's,
 * the statistics say so, and a sync puts the tier back. */
static void test_engine_eviction(void **state) {
    tdm_ctx *ctx = make_ctx(TDM_DEVICE_AUTO, 0, 1);
    tdm_backend *fake_b = ctx->backends[ctx->nbackends - 1];
    fake_mem f = {1000000, 1000000, 0, 0, 0};
    tdm_mem_monitor *mon = monitor_on(&f, 0);
    fake_b->mem = mon; /* before the engine, which registers its callback at creation */
    tdm_seq_store *s = make_store(ctx, 0xe71c, 400, 2000);
    tdm_seq_engine *e = make_engine(s, 0, 0.0, 0);
    tdm_seq_stm stms[6];
    tu_rng r = tu_rng_for(0xe71c);
    size_t n = make_stms(e, &r, 400, stms, 6);
    tdm_seq_engine_stats es;
    tdm_seq_engine_stats_get(e, &es);
    assert_int_equal(es.device_patterns, 2000);
    check_engine(e, stms, n, (expect){"fake:0", TDM_ROUTE_RESIDENCY_ONLY}, "before pressure");
    f.free = 50000; /* u = 0.95: CRITICAL */
    tdm_pressure lvl;
    assert_int_equal(tdm_mem_monitor_sample(mon, &lvl), TDM_OK);
    assert_int_equal(lvl, TDM_PRESSURE_CRITICAL);
    tdm_seq_engine_stats_get(e, &es);
    assert_int_equal(es.evictions, 1);
    assert_int_equal(es.device_patterns, 0);
    assert_int_equal(es.device_failed, 0);
    tdm_mem_stats st;
    tdm_mem_monitor_stats(mon, &st);
    assert_true(st.evicted_bytes > 0);
    check_engine(e, stms, n, (expect){"fake:0", TDM_ROUTE_RESIDENCY_ONLY}, "tier dropped");
    f.free = 1000000;
    assert_int_equal(tdm_mem_monitor_sample(mon, &lvl), TDM_OK);
    assert_int_equal(lvl, TDM_PRESSURE_LOW);
    assert_int_equal(tdm_seq_engine_sync(e), TDM_OK);
    tdm_seq_engine_stats_get(e, &es);
    assert_int_equal(es.device_patterns, 2000);
    check_engine(e, stms, n, (expect){"fake:0", TDM_ROUTE_RESIDENCY_ONLY}, "after the sync");
    for (size_t i = 0; i < n; i++) tdm_seq_stm_clear(&stms[i]);
    tdm_seq_engine_free(e); /* unregisters its callback */
    f.free = 10000;
    assert_int_equal(tdm_mem_monitor_sample(mon, &lvl), TDM_OK); /* no callback left to call */
    fake_b->mem = NULL;
    tdm_mem_monitor_free(mon);
    tdm_destroy(ctx);
}

/* Queries racing with evictions and syncs from another thread: never a wrong answer, never a device
 * error (a query whose tier was dropped under it falls back to the CPU). */
typedef struct {
    tdm_seq_engine *e;
    tdm_mem_monitor *mon;
    fake_mem *f;
    atomic_int stop, evictions;
} racer;

static void *pressure_loop(void *arg) {
    racer *x = arg;
    for (int i = 0; !atomic_load(&x->stop); i++) {
        x->f->free = i % 2 ? 40000 : 1000000; /* only this thread samples, so a plain store will do */
        tdm_mem_monitor_sample(x->mon, NULL);
        if (i % 2 == 0) tdm_seq_engine_sync(x->e);
        tdm_seq_engine_stats es;
        tdm_seq_engine_stats_get(x->e, &es);
        atomic_store(&x->evictions, (int)es.evictions);
    }
    return NULL;
}

static void test_engine_eviction_races(void **state) {
    alarm(120);
    tdm_ctx *ctx = make_ctx(TDM_DEVICE_AUTO, 0, 1);
    tdm_backend *fake_b = ctx->backends[ctx->nbackends - 1];
    fake_mem f = {1000000, 1000000, 0, 0, 0};
    tdm_mem_monitor *mon = monitor_on(&f, 0);
    fake_b->mem = mon;
    tdm_seq_store *s = make_store(ctx, 0x7ace, 300, 1500);
    tdm_seq_engine *e = make_engine(s, 0, 0.0, 0);
    tdm_seq_stm stms[4];
    tu_rng r = tu_rng_for(0x7ace);
    size_t n = make_stms(e, &r, 300, stms, 4);
    tdm_seq_query_opts o;
    tdm_seq_query_opts_init(&o);
    o.threshold = 0.2;
    tdm_seq_result want[4];
    for (size_t i = 0; i < n; i++) assert_int_equal(tdm_seq_query(tdm_seq_engine_store(e), &stms[i], &o, &want[i]), TDM_OK);
    racer x = {.e = e, .mon = mon, .f = &f};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, pressure_loop, &x), 0);
    /* At least 200 queries, and on until a few evictions happened (they need a moment when no query holds
     * the engine's locks, hence the yield between queries). */
    for (int it = 0; it < 200 || (it < 20000 && atomic_load(&x.evictions) < 3); it++) {
        sched_yield();
        size_t i = (size_t)it % n;
        tdm_seq_result got;
        assert_int_equal(tdm_seq_engine_query(e, &stms[i], &o, &got), TDM_OK);
        tu_check(got.n == want[i].n, "iteration %d: %zu hits, expected %zu", it, got.n, want[i].n);
        for (size_t k = 0; k < got.n; k++) tu_check(got.hits[k].id == want[i].hits[k].id, "iteration %d hit %zu", it, k);
        tdm_seq_result_clear(&got);
    }
    atomic_store(&x.stop, 1);
    pthread_join(t, NULL);
    tdm_seq_engine_stats es;
    tdm_seq_engine_stats_get(e, &es);
    assert_int_equal(es.device_failed, 0);
    assert_true(es.evictions > 0);
    assert_int_equal(atomic_load(&fake.overlaps), 0); /* no two calls on the device store at once */
    for (size_t i = 0; i < n; i++) tdm_seq_stm_clear(&stms[i]), tdm_seq_result_clear(&want[i]);
    tdm_seq_engine_free(e);
    fake_b->mem = NULL;
    tdm_mem_monitor_free(mon);
    tdm_destroy(ctx);
    alarm(0);
}

int main(void) {
    tu_init_seed("test_devmem");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pressure_hysteresis),        cmocka_unit_test(test_levels_and_callbacks),
        cmocka_unit_test(test_limit_relief_and_retry),     cmocka_unit_test(test_callback_allocating_during_eviction),
        cmocka_unit_test(test_engine_oom_fallback),        cmocka_unit_test(test_engine_eviction),
        cmocka_unit_test(test_engine_eviction_races),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
