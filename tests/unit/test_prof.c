/* test_prof.c: unit tests of the profiler (prof.h): session life (options checked, one session at a time),
 * nothing recorded while off, scopes nesting with parent ids and children inside their parents, summaries
 * computed exactly from known durations (calls, total, min, max, mean, nearest-rank p50/p95, bytes), ring
 * overflow keeping the newest records and counting exactly what it dropped, recording from many threads
 * at once (every record kept, ids unique, parents on the recording thread), routing decisions tagging the
 * op they placed with a measured time, TANDEM_PROFILE* configuration read back, and sequence-engine results
 * unchanged by profiling. The JSON and HTML files themselves are checked by tests/prof (Python). */
#define _GNU_SOURCE
#include "unit_common.h"

#include <pthread.h>

#include "runtime/prof_internal.h"
#include "tandem/seq.h"

static void start_cap(uint32_t cap) {
    tdm_prof_opts o;
    tdm_prof_opts_init(&o);
    o.capacity = cap;
    assert_int_equal(tdm_prof_start(&o), TDM_OK);
}

static void test_session(void **state) {
    tdm_prof_reset();
    tdm_prof_opts o;
    tdm_prof_opts_init(&o);
    assert_int_equal(o.capacity, 262144);
    o.capacity = 1023;
    assert_int_equal(tdm_prof_start(&o), TDM_E_INVAL);
    o.capacity = (1u << 26) + 1;
    assert_int_equal(tdm_prof_start(&o), TDM_E_INVAL);
    assert_false(tdm_prof_running());
    start_cap(1024);
    assert_true(tdm_prof_running());
    assert_int_equal(tdm_prof_start(NULL), TDM_E_BUSY);
    tdm_prof_stop();
    assert_false(tdm_prof_running());
    tdm_prof_reset();
}

static void test_off_records_nothing(void **state) {
    tdm_prof_reset();
    tdm_prof_scope s = tdm_prof_begin(tdm_prof_intern("x"), TDM_PROF_CAT_USER);
    assert_true(s.id == 0);
    tdm_prof_end(s, 0);
    TANDEM_PROF_BEGIN(u, "user");
    assert_true(u.id == 0);
    TANDEM_PROF_END(u);
    assert_int_equal(tdm_prof_route("op", "cpu", "NO_GPU", 0, 0), -1);
    start_cap(1024);
    tdm_prof_stats st;
    tdm_prof_stats_get(&st);
    assert_true(st.recorded == 0);
    tdm_prof_reset();
}

static void test_intern(void **state) {
    uint32_t a = tdm_prof_intern("same.name"), b = tdm_prof_intern("same.name");
    assert_true(a && a == b);
    /* Control characters and bytes that are not UTF-8 become U+FFFD, and the dirty spelling interns once. */
    uint32_t c = tdm_prof_intern("bad\x01\xff"), d = tdm_prof_intern("bad\x01\xff"), e = tdm_prof_intern("bad\xef\xbf\xbd\xef\xbf\xbd");
    assert_true(c && c == d && c == e && c != a);
}

static void spin_ns(uint64_t ns) {
    uint64_t t = tdm_prof_now();
    while (tdm_prof_now() - t < ns) {
    }
}

static const prof_rec *find_by_name(const prof_snap *s, const char *name) {
    for (size_t i = 0; i < s->n; i++)
        if (s->r[i].kind == PREC_SPAN && !strcmp(prof_snap_name(s, s->r[i].name), name)) return &s->r[i];
    return NULL;
}

static void test_nesting(void **state) {
    tdm_prof_reset();
    start_cap(1024);
    TANDEM_PROF_BEGIN(outer, "outer");
    spin_ns(20000);
    TANDEM_PROF_BEGIN(inner, "inner");
    assert_true(tdm_prof_current() == inner.id);
    tdm_prof_annotate("cpu", 7, 100, 20);
    spin_ns(20000);
    TANDEM_PROF_END(inner);
    /* A scope left open inside another ends with it, so spans still nest. */
    TANDEM_PROF_BEGIN(leak, "left_open");
    (void)leak;
    spin_ns(1000);
    TANDEM_PROF_END(outer);
    TANDEM_PROF_END(outer); /* ending twice does nothing */
    assert_true(tdm_prof_current() == 0);
    prof_snap s;
    assert_int_equal(prof_snapshot(&s), TDM_OK);
    assert_int_equal((int)s.n, 3);
    const prof_rec *o = find_by_name(&s, "outer"), *i = find_by_name(&s, "inner"), *l = find_by_name(&s, "left_open");
    assert_non_null(o);
    assert_non_null(i);
    assert_non_null(l);
    assert_true(o->parent == 0 && i->parent == o->id && l->parent == o->id);
    assert_true(o->id != i->id && i->id != l->id);
    assert_true(i->ts >= o->ts && i->ts + i->dur <= o->ts + o->dur);
    assert_true(l->ts >= o->ts && l->ts + l->dur <= o->ts + o->dur);
    assert_true(o->dur >= 40000 && i->dur >= 20000);
    assert_true(i->work == 7 && i->h2d == 100 && i->d2h == 20);
    assert_string_equal(prof_snap_name(&s, i->backend), "cpu");
    assert_int_equal(o->cat, TDM_PROF_CAT_USER);
    prof_snap_free(&s);
    tdm_prof_reset();
}

static void test_summary_exact(void **state) {
    tdm_prof_reset();
    start_cap(1024);
    /* Durations 1..100 ns in a scrambled order, and 3 spans of another op on another backend. */
    uint32_t x = tdm_prof_intern("x"), y = tdm_prof_intern("y");
    for (int k = 0; k < 100; k++) {
        uint64_t d = (uint64_t)((k * 37) % 100) + 1;
        tdm_prof_span sp = {.name = x, .cat = TDM_PROF_CAT_OP, .stream = -1, .ts = 1000 + (uint64_t)k * 200, .dur = d,
                            .backend = "cpu", .h2d_bytes = 2, .d2h_bytes = 1, .route = -1};
        tdm_prof_record(&sp);
    }
    for (int k = 0; k < 3; k++) {
        tdm_prof_span sp = {.name = y, .cat = TDM_PROF_CAT_GPU, .stream = 3, .ts = 500, .dur = 10000, .backend = "cuda:0", .route = -1};
        tdm_prof_record(&sp);
    }
    tdm_prof_summary *rows;
    size_t n;
    assert_int_equal(tdm_prof_summarize(&rows, &n), TDM_OK);
    assert_int_equal((int)n, 2);
    assert_string_equal(rows[0].name, "y"); /* 30000 ns total sorts first */
    assert_string_equal(rows[0].backend, "cuda:0");
    assert_int_equal(rows[0].cat, TDM_PROF_CAT_GPU);
    assert_true(rows[0].calls == 3 && rows[0].total == 30000);
    const tdm_prof_summary *r = &rows[1];
    assert_string_equal(r->name, "x");
    assert_true(r->calls == 100 && r->total == 5050 && r->min == 1 && r->max == 100);
    assert_true(r->p50 == 50 && r->p95 == 95);
    assert_true(r->mean == 50.5);
    assert_true(r->bytes == 300);
    /* share: against top-level host spans only (the device spans have stream >= 0). */
    assert_true(r->share == 1.0);
    tdm_free(rows);
    tdm_prof_reset();
}

/* A device span with pool figures also leaves a "device memory" sample at the span's end. */
static void test_device_span_memory(void **state) {
    tdm_prof_reset();
    start_cap(1024);
    tdm_prof_span sp = {.name = tdm_prof_intern("k"), .cat = TDM_PROF_CAT_GPU, .stream = 2, .ts = 5000, .dur = 700,
                        .backend = "cuda:0", .mem_used = 1 << 20, .mem_reserved = 4 << 20, .route = -1};
    tdm_prof_record(&sp);
    prof_snap s;
    assert_int_equal(prof_snapshot(&s), TDM_OK);
    assert_int_equal((int)s.n, 2);
    const prof_rec *m = s.r[0].kind == PREC_MEM ? &s.r[0] : &s.r[1], *x = s.r[0].kind == PREC_MEM ? &s.r[1] : &s.r[0];
    assert_int_equal(m->kind, PREC_MEM);
    assert_true(m->ts == 5700 && m->work == 1 << 20 && m->h2d == 4 << 20 && m->status == -1);
    assert_true(x->kind == PREC_SPAN && x->stream == 2 && x->mem_used == 1 << 20 && x->mem_reserved == 4 << 20);
    prof_snap_free(&s);
    tdm_prof_reset();
}

static void test_overflow_drops_oldest(void **state) {
    tdm_prof_reset();
    start_cap(1024);
    uint32_t name = tdm_prof_intern("tick");
    const int total = 5000;
    for (int k = 0; k < total; k++) {
        tdm_prof_span sp = {.name = name, .cat = TDM_PROF_CAT_OP, .stream = -1, .ts = (uint64_t)k, .dur = 1,
                            .work = (uint64_t)k, .route = -1};
        tdm_prof_record(&sp);
    }
    tdm_prof_stats st;
    tdm_prof_stats_get(&st);
    assert_true(st.recorded == (uint64_t)total);
    assert_true(st.kept <= 1024 && st.kept > 1024 - 64);
    assert_true(st.dropped == st.recorded - st.kept);
    prof_snap s;
    assert_int_equal(prof_snapshot(&s), TDM_OK);
    assert_true(s.n == st.kept && s.dropped == st.dropped);
    /* What is kept is exactly the newest records, in order. */
    for (size_t i = 0; i < s.n; i++) tu_check(s.r[i].work == (uint64_t)total - s.n + i, "record %zu holds %llu", i, (unsigned long long)s.r[i].work);
    prof_snap_free(&s);
    tdm_prof_reset();
}

#define THREADS 4
#define PER_THREAD 3000

static void *worker(void *arg) {
    (void)arg;
    for (int k = 0; k < PER_THREAD / 2; k++) {
        TANDEM_PROF_BEGIN(a, "mt.outer");
        TANDEM_PROF_BEGIN(b, "mt.inner");
        TANDEM_PROF_END(b);
        TANDEM_PROF_END(a);
    }
    return NULL;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_threads(void **state) {
    tdm_prof_reset();
    start_cap(THREADS * PER_THREAD + 4096);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, worker, NULL), 0);
    /* Snapshots while the threads record: each sees whole records only, never more than were made. */
    for (int k = 0; k < 20; k++) {
        prof_snap mid;
        assert_int_equal(prof_snapshot(&mid), TDM_OK);
        assert_true(mid.n <= mid.recorded && mid.dropped == 0);
        for (size_t i = 0; i < mid.n; i++) tu_check(mid.r[i].id && mid.r[i].kind == PREC_SPAN, "torn record %zu", i);
        prof_snap_free(&mid);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    tdm_prof_stats st;
    tdm_prof_stats_get(&st);
    assert_true(st.recorded == THREADS * PER_THREAD && st.dropped == 0 && st.threads == THREADS);
    prof_snap s;
    assert_int_equal(prof_snapshot(&s), TDM_OK);
    assert_true(s.n == THREADS * PER_THREAD);
    uint64_t *ids = malloc(s.n * sizeof *ids);
    for (size_t i = 0; i < s.n; i++) ids[i] = s.r[i].id;
    qsort(ids, s.n, sizeof *ids, cmp_u64);
    for (size_t i = 1; i < s.n; i++) tu_check(ids[i] != ids[i - 1] && ids[i], "duplicate id %llu", (unsigned long long)ids[i]);
    /* Every inner span's parent is an outer span of the same thread that contains it. */
    for (size_t i = 0; i < s.n; i++) {
        const prof_rec *c = &s.r[i];
        if (strcmp(prof_snap_name(&s, c->name), "mt.inner")) continue;
        const prof_rec *p = NULL;
        for (size_t j = i; j-- > 0 && !p;) /* sorted by start: the parent starts no later */
            if (s.r[j].id == c->parent) p = &s.r[j];
        tu_check(p && p->tid == c->tid && p->ts <= c->ts && c->ts + c->dur <= p->ts + p->dur, "inner span %zu", i);
    }
    free(ids);
    prof_snap_free(&s);
    tdm_prof_reset();
}

static void test_route_tags_op(void **state) {
    tdm_prof_reset();
    start_cap(1024);
    TANDEM_PROF_BEGIN(op, "routed.op");
    int64_t id = tdm_prof_route("routed.op", "cpu", "MODEL_CPU", 1500, 9000);
    assert_true(id >= 0);
    spin_ns(5000);
    TANDEM_PROF_END(op);
    tdm_prof_fallback("routed.op", "cuda:0", "cpu", "OOM_FALLBACK");
    prof_snap s;
    assert_int_equal(prof_snapshot(&s), TDM_OK);
    const prof_rec *sp = find_by_name(&s, "routed.op"), *m = NULL, *rt = NULL, *fb = NULL;
    for (size_t i = 0; i < s.n; i++) {
        if (s.r[i].kind == PREC_MEASURED) m = &s.r[i];
        if (s.r[i].kind == PREC_ROUTE) rt = &s.r[i];
        if (s.r[i].kind == PREC_FALLBACK) fb = &s.r[i];
    }
    assert_non_null(sp);
    assert_non_null(m);
    assert_non_null(rt);
    assert_non_null(fb);
    assert_true(sp->route == id && m->route == id && m->work == sp->dur && rt->parent == sp->id);
    assert_true(rt->work == 1500 && rt->h2d == 9000);
    assert_string_equal(prof_snap_name(&s, (uint32_t)rt->status), "MODEL_CPU");
    assert_string_equal(prof_snap_name(&s, (uint32_t)fb->status), "OOM_FALLBACK");
    prof_snap_free(&s);
    tdm_prof_reset();
}

static void test_config(void **state) {
    tdm_prof_reset();
    setenv("TANDEM_PROFILE", "on", 1);
    setenv("TANDEM_PROFILE_CAPACITY", "4096", 1);
    setenv("TANDEM_PROFILE_OUT", "", 1);
    setenv("TANDEM_NVTX", "0", 1);
    tdm_ctx *ctx;
    assert_int_equal(tdm_init(&ctx, NULL), TDM_OK);
    const tdm_config *c = tdm_ctx_config(ctx);
    assert_true(c->profile == 1 && c->profile_capacity == 4096 && c->nvtx == 0);
    assert_true(tdm_prof_running());
    tdm_prof_stats st;
    tdm_prof_stats_get(&st);
    assert_int_equal((int)st.capacity, 4096);
    tdm_destroy(ctx); /* the owner stops the session */
    assert_false(tdm_prof_running());
    setenv("TANDEM_PROFILE_CAPACITY", "100", 1);
    assert_int_equal(tdm_init(&ctx, NULL), TDM_E_CONFIG);
    assert_non_null(strstr(tdm_last_error(), "TANDEM_PROFILE_CAPACITY"));
    unsetenv("TANDEM_PROFILE");
    unsetenv("TANDEM_PROFILE_CAPACITY");
    unsetenv("TANDEM_PROFILE_OUT");
    unsetenv("TANDEM_NVTX");
    tdm_prof_reset();
}

/* Engine queries and learns give the same results with the profiler on, and leave their spans. */
static void test_engine_unchanged(void **state) {
    tdm_prof_reset();
    tdm_ctx *ctx;
    tdm_config cfg;
    tdm_config_init(&cfg);
    cfg.seq_backend = TDM_DEVICE_CPU;
    assert_int_equal(tdm_init(&ctx, &cfg), TDM_OK);
    tdm_seq_result res[2];
    for (int run = 0; run < 2; run++) {
        if (run) start_cap(65536);
        tdm_seq_store *store;
        assert_int_equal(tdm_seq_store_new(ctx, &store), TDM_OK);
        tdm_seq_engine *e;
        assert_int_equal(tdm_seq_engine_new(store, NULL, &e), TDM_OK);
        static const char *const sym[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"};
        const char *buf[40];
        size_t lens[40];
        tu_rng r = tu_rng_for(77);
        for (int k = 0; k < 300; k++) {
            size_t n = 1 + tu_below(&r, 30);
            for (size_t j = 0; j < n; j++) buf[j] = sym[tu_below(&r, 12)], lens[j] = 1;
            assert_int_equal(tdm_seq_engine_learn_strings(e, buf, lens, n, NULL), TDM_OK);
        }
        const char *q[6] = {"a", "b", "c", "d", "e", "f"};
        size_t ql[6] = {1, 1, 1, 1, 1, 1};
        tdm_seq_stm stm;
        assert_int_equal(tdm_seq_engine_encode(e, q, ql, 6, &stm), TDM_OK);
        tdm_seq_query_opts o;
        tdm_seq_query_opts_init(&o);
        o.threshold = 0.2;
        assert_int_equal(tdm_seq_engine_query(e, &stm, &o, &res[run]), TDM_OK);
        tdm_seq_stm_clear(&stm);
        tdm_seq_engine_free(e);
    }
    assert_true(res[0].n == res[1].n && res[0].n > 0);
    for (size_t i = 0; i < res[0].n; i++)
        tu_check(res[0].hits[i].id == res[1].hits[i].id && tu_bits(res[0].hits[i].similarity) == tu_bits(res[1].hits[i].similarity),
                 "hit %zu differs", i);
    tdm_prof_summary *rows;
    size_t n;
    assert_int_equal(tdm_prof_summarize(&rows, &n), TDM_OK);
    int learn = 0, query = 0, scan = 0;
    for (size_t i = 0; i < n; i++) {
        if (!strcmp(rows[i].name, "seq.learn")) learn = (int)rows[i].calls;
        if (!strcmp(rows[i].name, "seq.query")) query = (int)rows[i].calls;
        if (!strcmp(rows[i].name, "seq.scan")) scan = (int)rows[i].calls;
    }
    assert_int_equal(learn, 300);
    assert_int_equal(query, 1);
    assert_int_equal(scan, 1);
    tdm_free(rows);
    tdm_seq_result_clear(&res[0]);
    tdm_seq_result_clear(&res[1]);
    tdm_destroy(ctx);
    tdm_prof_reset();
}

int main(void) {
    tu_init_seed("test_prof");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session),       cmocka_unit_test(test_off_records_nothing),
        cmocka_unit_test(test_intern),
        cmocka_unit_test(test_nesting),       cmocka_unit_test(test_summary_exact),
        cmocka_unit_test(test_overflow_drops_oldest), cmocka_unit_test(test_threads),
        cmocka_unit_test(test_device_span_memory),
        cmocka_unit_test(test_route_tags_op), cmocka_unit_test(test_config),
        cmocka_unit_test(test_engine_unchanged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
