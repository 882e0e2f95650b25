/* test_batch.c: the batch executor (src/runtime/batch.c) without a GPU. A fake device backend with a fake
 * memory source (free/total set by each test) and a cost model fitted from synthetic measurements give
 * known numbers, so the tests can check: groups cover every item once, one family each, in submission
 * order; the device group size is the throughput figure ceil(9 t0 / t1), shrunk by free memory and by
 * TANDEM_MEM_LIMIT, refused at CRITICAL pressure; CPU groups share the work among threads; a device out
 * of memory is retried after relief, then the group and the family's rest run on the CPU with the same
 * results (counted, nothing lost), and TANDEM_STRICT returns the error instead; results land by
 * submission index; an empty batch and bad arguments answer as documented. */
#include "unit_common.h"

#include <math.h>

#include "fake_backend.h"

/* ---- the fake device and its memory ------------------------------------------------------------------ */
static tdm_mem_sample mem_now;
static int mem_sample(void *user, tdm_mem_sample *out) {
    (void)user;
    *out = mem_now;
    return TDM_OK;
}
static int fake_supports(const tdm_backend *b, tdm_op op) { return op == TDM_OP_LATTICE_XOR || op == TDM_OP_LATTICE_EWISE; }

/* CPU-only context (no real CUDA backend), calibration off, 2 threads; with_gpu adds the fake device with a
 * monitor limited to `limit` bytes (0 = none). */
static tdm_ctx *make_ctx(int with_gpu, int strict, uint64_t limit) {
    tdm_config c;
    tu_fake_config(&c); /* fallback warnings are expected: not logged */
    c.strict = strict;
    c.threads = 2;
    tdm_ctx *ctx = tu_fake_ctx(&c);
    if (with_gpu) {
        tdm_backend *b = tu_fake_gpu(ctx, "fakegpu:0", fake_supports);
        tdm_mem_source src = {mem_sample, NULL, NULL};
        assert_int_equal(tdm_mem_monitor_new(&src, NULL, limit, &b->mem), TDM_OK);
    }
    mem_now = (tdm_mem_sample){.total = 1000000, .free = 1000000};
    return ctx;
}

/* A model in which the device wins for groups of many items: CPU 1 + 0.1 W us, device 95 + 0.01 W us. With
 * items of W = 1000, t0 = 95 and t1 = 10 give B_thr = ceil(85.5) = 86. */
static void set_model(tdm_ctx *ctx) {
    tdm_costmodel m;
    memset(&m, 0, sizeof m);
    tu_model_line(&m, TDM_OP_LATTICE_XOR, 0, 1.0, 0.1, 0);
    tu_model_line(&m, TDM_OP_LATTICE_XOR, 1, 95.0, 0.01, 0);
    assert_int_equal(tdm_costmodel_set(ctx, &m), TDM_OK);
}

/* ---- a recording family: out[i] = 3 i + 1 + tag ------------------------------------------------------- */
typedef struct {
    long *out;
    int tag;
    int fail_device;  /* device calls that fail before one succeeds (-1: every one) */
    int fail_rc;
    int bad_every;    /* items with index % bad_every == 0 get TDM_E_RANGE (0: none) */
    int device_calls, cpu_calls;
    size_t max_count;
    int mixed;        /* a call saw items out of order */
} rec_family;

static int rec_run(void *user, const tdm_backend *b, const size_t *items, size_t count, int *status) {
    rec_family *f = user;
    int dev = b->kind != TDM_BACKEND_CPU;
#pragma omp critical(rec_run)
    {
        if (dev) f->device_calls++;
        else f->cpu_calls++;
        if (count > f->max_count) f->max_count = count;
        for (size_t i = 1; i < count; i++)
            if (items[i] <= items[i - 1]) f->mixed = 1;
    }
    if (dev && f->fail_device) {
        if (f->fail_device > 0) f->fail_device--;
        return tdm_error(f->fail_rc, "fake device failure");
    }
    for (size_t i = 0; i < count; i++) {
        size_t k = items[i];
        if (f->bad_every && k % (size_t)f->bad_every == 0) {
            status[k] = TDM_E_RANGE;
            continue;
        }
        f->out[k] = 3 * (long)k + 1 + f->tag;
        status[k] = TDM_OK;
    }
    return TDM_OK;
}

/* Submits n items of family fid with work w and `bytes` device bytes each. */
static void add_items(tdm_batch *b, int fid, size_t n, double w, uint64_t bytes) {
    for (size_t i = 0; i < n; i++) {
        tdm_batch_cost c = {.work = w, .in_bytes = bytes / 2, .out_bytes = bytes - bytes / 2};
        assert_int_equal(tdm_batch_add(b, fid, &c, NULL), TDM_OK);
    }
}

/* Every item in exactly one group; every group within cap. */
static void check_cover(tdm_batch *b, size_t n, size_t cap) {
    size_t ng, total = 0;
    const tdm_batch_group *g = tdm_batch_groups(b, &ng);
    for (size_t i = 0; i < ng; i++) {
        assert_true(g[i].count >= 1 && g[i].count <= cap);
        total += g[i].count;
    }
    assert_int_equal(total, n);
}

static void test_empty_and_bad_arguments(void **state) {
    (void)state;
    tdm_ctx *ctx = make_ctx(0, 0, 0);
    tdm_batch *b = NULL;
    assert_int_equal(tdm_batch_new(NULL, NULL, &b), TDM_E_INVAL);
    assert_int_equal(tdm_batch_new(ctx, NULL, NULL), TDM_E_INVAL);
    tdm_batch_opts o;
    tdm_batch_opts_init(&o);
    o.hint = (tdm_device_pref)7;
    assert_int_equal(tdm_batch_new(ctx, &o, &b), TDM_E_INVAL);
    assert_int_equal(tdm_batch_new(ctx, NULL, &b), TDM_OK);
    /* Empty: nothing to run, status may be NULL. */
    assert_int_equal(tdm_batch_run(b, NULL), TDM_OK);
    size_t ng = 99;
    tdm_batch_groups(b, &ng);
    assert_int_equal(ng, 0);
    tdm_batch_stats st;
    tdm_batch_stats_get(b, &st);
    assert_int_equal(st.items, 0);
    /* Families: a run function and an op from the list. */
    tdm_batch_family f = {.op = TDM_OP_LATTICE_XOR, .run = NULL};
    assert_int_equal(tdm_batch_add_family(b, &f, NULL), TDM_E_INVAL);
    assert_int_equal(tdm_batch_add_family(b, NULL, NULL), TDM_E_INVAL);
    f.run = rec_run;
    f.op = TDM_OP_COUNT;
    assert_int_equal(tdm_batch_add_family(b, &f, NULL), TDM_E_INVAL);
    f.op = TDM_OP_LATTICE_XOR;
    int id = -1;
    assert_int_equal(tdm_batch_add_family(b, &f, &id), TDM_OK);
    assert_int_equal(id, 0);
    /* Items: a known family, a finite work >= 0. */
    tdm_batch_cost c = {.work = 1.0};
    assert_int_equal(tdm_batch_add(b, 1, &c, NULL), TDM_E_INVAL);
    assert_int_equal(tdm_batch_add(b, -1, &c, NULL), TDM_E_INVAL);
    assert_int_equal(tdm_batch_add(b, 0, NULL, NULL), TDM_E_INVAL);
    c.work = NAN;
    assert_int_equal(tdm_batch_add(b, 0, &c, NULL), TDM_E_INVAL);
    c.work = -1.0;
    assert_int_equal(tdm_batch_add(b, 0, &c, NULL), TDM_E_INVAL);
    c.work = INFINITY;
    assert_int_equal(tdm_batch_add(b, 0, &c, NULL), TDM_E_INVAL);
    assert_int_equal(tdm_batch_count(b), 0);
    c.work = 2.0;
    size_t idx = 99;
    assert_int_equal(tdm_batch_add(b, 0, &c, &idx), TDM_OK);
    assert_int_equal(idx, 0);
    assert_int_equal(tdm_batch_run(b, NULL), TDM_E_INVAL); /* items but nowhere to put their status */
    assert_int_equal(tdm_batch_run(NULL, NULL), TDM_E_INVAL);
    /* At most 64 families. */
    for (int i = 1; i < 64; i++) assert_int_equal(tdm_batch_add_family(b, &f, NULL), TDM_OK);
    assert_int_equal(tdm_batch_add_family(b, &f, NULL), TDM_E_NOMEM);
    tdm_batch_free(b);
    tdm_batch_free(NULL);
    tdm_destroy(ctx);
}

/* No device: CPU groups of ceil(n / (threads x 4)), one family each, results by submission index. */
static void test_cpu_groups_and_order(void **state) {
    (void)state;
    tdm_ctx *ctx = make_ctx(0, 0, 0);
    enum { N = 1000 };
    long out[N];
    int status[N];
    memset(out, 0, sizeof out);
    rec_family fa = {.out = out, .tag = 0, .bad_every = 97}, fb = {.out = out, .tag = 1000000};
    tdm_batch *b;
    assert_int_equal(tdm_batch_new(ctx, NULL, &b), TDM_OK);
    int ia, ib;
    tdm_batch_family f = {.op = TDM_OP_LATTICE_XOR, .run = rec_run, .user = &fa, .device_ok = 1};
    assert_int_equal(tdm_batch_add_family(b, &f, &ia), TDM_OK);
    f.user = &fb, f.op = TDM_OP_LATTICE_EWISE;
    assert_int_equal(tdm_batch_add_family(b, &f, &ib), TDM_OK);
    /* Interleaved submissions: item i belongs to family a when i % 3 != 0. */
    for (size_t i = 0; i < N; i++) {
        tdm_batch_cost c = {.work = 10.0};
        size_t idx;
        assert_int_equal(tdm_batch_add(b, i % 3 ? ia : ib, &c, &idx), TDM_OK);
        assert_int_equal(idx, i);
    }
    assert_int_equal(tdm_batch_run(b, status), TDM_OK);
    for (size_t i = 0; i < N; i++) {
        if (i % 3 && i % 97 == 0) {
            assert_int_equal(status[i], TDM_E_RANGE);
            continue;
        }
        assert_int_equal(status[i], TDM_OK);
        assert_int_equal(out[i], 3 * (long)i + 1 + (i % 3 ? 0 : 1000000));
    }
    size_t ng;
    const tdm_batch_group *g = tdm_batch_groups(b, &ng);
    check_cover(b, N, 4096);
    size_t na = 0, nb = 0;
    for (size_t i = 0; i < ng; i++) {
        assert_string_equal(g[i].backend, "cpu");
        assert_int_equal(g[i].reason, TDM_ROUTE_ONLY_CPU);
        assert_false(g[i].fell_back);
        assert_true(g[i].ms >= 0.0);
        assert_int_equal(g[i].op, g[i].family == ia ? TDM_OP_LATTICE_XOR : TDM_OP_LATTICE_EWISE);
        assert_true(fabs(g[i].work - 10.0 * (double)g[i].count) < 1e-9);
        if (g[i].family == ia) na++;
        else nb++;
    }
    /* 667 and 333 items, 2 threads x 4 groups each: groups of 84 and 42 items, 8 per family. */
    assert_int_equal(na, 8);
    assert_int_equal(nb, 8);
    assert_int_equal(g[0].count, 84);
    assert_int_equal(fa.max_count, 84);
    assert_false(fa.mixed || fb.mixed);
    tdm_batch_stats st;
    tdm_batch_stats_get(b, &st);
    assert_int_equal(st.items, N);
    assert_int_equal(st.groups, 16);
    assert_int_equal(st.cpu_groups, 16);
    assert_int_equal(st.device_groups, 0);
    /* TANDEM_BATCH_MAX (here the option) caps every group. */
    tdm_batch_opts o;
    tdm_batch_opts_init(&o);
    o.max_group = 10;
    tdm_batch *b2;
    assert_int_equal(tdm_batch_new(ctx, &o, &b2), TDM_OK);
    f.user = &fa, f.op = TDM_OP_LATTICE_XOR;
    assert_int_equal(tdm_batch_add_family(b2, &f, &ia), TDM_OK);
    add_items(b2, ia, 333, 1.0, 0);
    assert_int_equal(tdm_batch_run(b2, status), TDM_OK);
    check_cover(b2, 333, 10);
    tdm_batch_groups(b2, &ng);
    assert_int_equal(ng, 34);
    /* A second run runs the same items again; clear forgets them. */
    assert_int_equal(tdm_batch_run(b2, status), TDM_OK);
    check_cover(b2, 333, 10);
    tdm_batch_clear(b2);
    assert_int_equal(tdm_batch_count(b2), 0);
    assert_int_equal(tdm_batch_run(b2, NULL), TDM_OK);
    tdm_batch_free(b2);
    tdm_batch_free(b);
    tdm_destroy(ctx);
}

/* One family of n items of W = 1000 and `bytes` each on the fake device; returns the batch (run). */
static tdm_batch *run_device(tdm_ctx *ctx, rec_family *rf, size_t n, uint64_t bytes, int *status, int expect_rc) {
    tdm_batch *b;
    assert_int_equal(tdm_batch_new(ctx, NULL, &b), TDM_OK);
    tdm_batch_family f = {.op = TDM_OP_LATTICE_XOR, .run = rec_run, .user = rf, .device_ok = 1};
    int id;
    assert_int_equal(tdm_batch_add_family(b, &f, &id), TDM_OK);
    add_items(b, id, n, 1000.0, bytes);
    assert_int_equal(tdm_batch_run(b, status), expect_rc);
    return b;
}

static void check_results(const long *out, const int *status, size_t n) {
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(status[i], TDM_OK);
        assert_int_equal(out[i], 3 * (long)i + 1);
    }
}

/* Device groups of B_thr = 86 items (last one the rest), routed to the device by the model. */
static void test_device_group_size_from_throughput(void **state) {
    (void)state;
    tdm_ctx *ctx = make_ctx(1, 0, 0);
    set_model(ctx);
    enum { N = 1000 };
    long out[N];
    int status[N];
    rec_family rf = {.out = out};
    tdm_batch *b = run_device(ctx, &rf, N, 100, status, TDM_OK);
    check_results(out, status, N);
    size_t ng;
    const tdm_batch_group *g = tdm_batch_groups(b, &ng);
    assert_int_equal(ng, 12); /* 11 x 86 + 54 */
    for (size_t i = 0; i < ng; i++) {
        assert_string_equal(g[i].backend, "fakegpu:0");
        assert_int_equal(g[i].reason, TDM_ROUTE_MODEL_GPU);
        assert_int_equal(g[i].count, i + 1 < ng ? 86 : 54);
        assert_int_equal(g[i].first, i * 86);
        assert_int_equal(g[i].device_bytes, g[i].count * 100);
        assert_true(g[i].predicted_us > 0.0);
    }
    assert_int_equal(rf.device_calls, 12);
    assert_int_equal(rf.cpu_calls, 0);
    tdm_batch_stats st;
    tdm_batch_stats_get(b, &st);
    assert_int_equal(st.device_groups, 12);
    assert_int_equal(st.device_group_items, 86);
    assert_int_equal(st.mem_budget, 400000); /* (1e6 free x 0.8) / 2 */
    /* The decisions are in the router's log with the groups' work. */
    tdm_route_record rec[16];
    size_t nr;
    tdm_route_log_read(ctx, rec, 16, &nr);
    assert_int_equal(nr, 12);
    assert_true(fabs(rec[0].work - 86000.0) < 1e-9 && rec[0].chosen_gpu);
    assert_true(rec[0].measured_us >= 0.0);
    tdm_batch_free(b);
    /* A few items: one group, which the model leaves on the CPU (1 + 0.1 W beats 95 + 0.01 W below ~1040). */
    rec_family small = {.out = out};
    b = run_device(ctx, &small, 1, 100, status, TDM_OK);
    g = tdm_batch_groups(b, &ng);
    assert_int_equal(ng, 1);
    assert_string_equal(g[0].backend, "cpu");
    assert_int_equal(g[0].reason, TDM_ROUTE_MODEL_CPU);
    tdm_batch_free(b);
    tdm_destroy(ctx);
}

/* Free memory, then TANDEM_MEM_LIMIT, shrink device groups; CRITICAL pressure keeps them off the device. */
static void test_memory_shrinks_groups(void **state) {
    (void)state;
    enum { N = 500 };
    long out[N];
    int status[N];
    tdm_ctx *ctx = make_ctx(1, 0, 0);
    set_model(ctx);
    /* 10,000 bytes per item: 400,000 / 10,000 = 40 items per group (B_thr = 86 would allow more). */
    rec_family rf = {.out = out};
    tdm_batch *b = run_device(ctx, &rf, N, 10000, status, TDM_OK);
    check_results(out, status, N);
    check_cover(b, N, 40);
    assert_int_equal(rf.max_count, 40);
    tdm_batch_free(b);
    /* Less free memory (u = 0.7, MODERATE): 300,000 x 0.8 / 2 = 120,000: 12 items. Pool-cached bytes count
     * as free: 100,000 of them make it 16. */
    mem_now.free = 300000;
    rf = (rec_family){.out = out};
    b = run_device(ctx, &rf, N, 10000, status, TDM_OK);
    check_results(out, status, N);
    assert_int_equal(rf.max_count, 12);
    assert_int_equal(rf.cpu_calls, 0);
    tdm_batch_free(b);
    mem_now.reserved = 150000, mem_now.used = 50000;
    rf = (rec_family){.out = out};
    b = run_device(ctx, &rf, N, 10000, status, TDM_OK);
    assert_int_equal(rf.max_count, 16);
    tdm_batch_free(b);
    /* CRITICAL (u = 0.95): the router refuses host inputs the device; everything runs on the CPU. */
    mem_now = (tdm_mem_sample){.total = 1000000, .free = 50000};
    rf = (rec_family){.out = out};
    b = run_device(ctx, &rf, N, 10000, status, TDM_OK);
    check_results(out, status, N);
    assert_int_equal(rf.device_calls, 0);
    size_t ng;
    const tdm_batch_group *g = tdm_batch_groups(b, &ng);
    for (size_t i = 0; i < ng; i++) assert_int_equal(g[i].reason, TDM_ROUTE_MEM_PRESSURE);
    tdm_batch_free(b);
    tdm_destroy(ctx);
    /* TANDEM_MEM_LIMIT of 100,000 bytes: 50,000 per group, 5 items. */
    ctx = make_ctx(1, 0, 100000);
    set_model(ctx);
    rf = (rec_family){.out = out};
    b = run_device(ctx, &rf, N, 10000, status, TDM_OK);
    check_results(out, status, N);
    assert_int_equal(rf.max_count, 5);
    tdm_batch_stats st;
    tdm_batch_stats_get(b, &st);
    assert_int_equal(st.mem_budget, 50000);
    tdm_batch_free(b);
    /* An item larger than the device can take alone goes to the CPU (MEM_INSUFFICIENT), the others not. */
    rf = (rec_family){.out = out};
    b = run_device(ctx, &rf, 3, 200000, status, TDM_OK);
    check_results(out, status, 3);
    g = tdm_batch_groups(b, &ng);
    for (size_t i = 0; i < ng; i++) assert_int_equal(g[i].reason, TDM_ROUTE_MEM_INSUFFICIENT);
    tdm_batch_free(b);
    tdm_destroy(ctx);
}

/* Out of device memory: one retry after relief; then the CPU reruns the group and the rest, same results. */
static void test_oom_retry_then_cpu_fallback(void **state) {
    (void)state;
    enum { N = 300 };
    long out[N], want[N];
    int status[N];
    tdm_ctx *ctx = make_ctx(1, 0, 0);
    set_model(ctx);
    /* The reference: the same batch with no failure. */
    rec_family rf = {.out = want};
    tdm_batch *b = run_device(ctx, &rf, N, 100, status, TDM_OK);
    tdm_batch_free(b);
    /* The first device call fails: relieved, retried, the device answers. */
    memset(out, 0, sizeof out);
    rf = (rec_family){.out = out, .fail_device = 1, .fail_rc = TDM_E_DEVICE_OOM};
    b = run_device(ctx, &rf, N, 100, status, TDM_OK);
    check_results(out, status, N);
    size_t ng;
    const tdm_batch_group *g = tdm_batch_groups(b, &ng);
    assert_true(g[0].retried && !g[0].fell_back);
    assert_string_equal(g[0].backend, "fakegpu:0");
    tdm_batch_stats st;
    tdm_batch_stats_get(b, &st);
    assert_int_equal(st.retries, 1);
    assert_int_equal(st.fallbacks, 0);
    tdm_batch_free(b);
    /* Every device call fails: the first group is retried once, then it and every later device group run
     * on the CPU (OOM_FALLBACK), counted in the monitor; nothing is lost. */
    memset(out, 0, sizeof out);
    rf = (rec_family){.out = out, .fail_device = -1, .fail_rc = TDM_E_DEVICE_OOM};
    b = run_device(ctx, &rf, N, 100, status, TDM_OK);
    check_results(out, status, N);
    assert_memory_equal(out, want, sizeof out);
    assert_int_equal(rf.device_calls, 2);
    g = tdm_batch_groups(b, &ng);
    assert_true(ng > 1);
    for (size_t i = 0; i < ng; i++) {
        assert_true(g[i].fell_back);
        assert_string_equal(g[i].backend, "cpu");
        assert_int_equal(g[i].reason, TDM_ROUTE_OOM_FALLBACK);
        assert_int_equal(g[i].status, TDM_OK);
    }
    tdm_batch_stats_get(b, &st);
    assert_int_equal(st.fallbacks, ng);
    assert_int_equal(st.device_groups, 0);
    assert_int_equal(st.cpu_groups, ng);
    tdm_mem_stats ms;
    tdm_mem_monitor_stats(tdm_backend_get(ctx, 1)->mem, &ms);
    assert_int_equal(ms.fallbacks, 1);
    tdm_batch_free(b);
    /* Another device error: no retry, DEVICE_ERROR. */
    memset(out, 0, sizeof out);
    rf = (rec_family){.out = out, .fail_device = -1, .fail_rc = TDM_E_DEVICE};
    b = run_device(ctx, &rf, N, 100, status, TDM_OK);
    check_results(out, status, N);
    assert_int_equal(rf.device_calls, 1);
    g = tdm_batch_groups(b, &ng);
    assert_int_equal(g[0].reason, TDM_ROUTE_DEVICE_ERROR);
    assert_false(g[0].retried);
    tdm_batch_free(b);
    tdm_destroy(ctx);
    /* TANDEM_STRICT: the device's error comes back and its items carry it; other groups still ran. */
    ctx = make_ctx(1, 1, 0);
    set_model(ctx);
    memset(out, 0, sizeof out);
    rf = (rec_family){.out = out, .fail_device = 2, .fail_rc = TDM_E_DEVICE_OOM};
    b = run_device(ctx, &rf, N, 100, status, TDM_E_DEVICE_OOM);
    g = tdm_batch_groups(b, &ng);
    assert_int_equal(g[0].status, TDM_E_DEVICE_OOM);
    for (size_t i = 0; i < N; i++) {
        if (i < g[0].count) assert_int_equal(status[i], TDM_E_DEVICE_OOM);
        else assert_int_equal(out[i], 3 * (long)i + 1);
    }
    tdm_batch_free(b);
    tdm_destroy(ctx);
}

/* The batch's hint: CPU keeps everything off the device; CUDA without a device fails under strict. */
static void test_hints(void **state) {
    (void)state;
    enum { N = 200 };
    long out[N];
    int status[N];
    tdm_ctx *ctx = make_ctx(1, 0, 0);
    set_model(ctx);
    tdm_batch_opts o;
    tdm_batch_opts_init(&o);
    o.hint = TDM_DEVICE_CPU;
    rec_family rf = {.out = out};
    tdm_batch *b;
    assert_int_equal(tdm_batch_new(ctx, &o, &b), TDM_OK);
    tdm_batch_family f = {.op = TDM_OP_LATTICE_XOR, .run = rec_run, .user = &rf, .device_ok = 1};
    int id;
    assert_int_equal(tdm_batch_add_family(b, &f, &id), TDM_OK);
    add_items(b, id, N, 1000.0, 100);
    assert_int_equal(tdm_batch_run(b, status), TDM_OK);
    check_results(out, status, N);
    assert_int_equal(rf.device_calls, 0);
    size_t ng;
    const tdm_batch_group *g = tdm_batch_groups(b, &ng);
    assert_int_equal(g[0].reason, TDM_ROUTE_FORCED_CALL);
    tdm_batch_free(b);
    /* A family without a device path never reaches the device, whatever the model says. */
    rf = (rec_family){.out = out};
    f.device_ok = 0;
    assert_int_equal(tdm_batch_new(ctx, NULL, &b), TDM_OK);
    assert_int_equal(tdm_batch_add_family(b, &f, &id), TDM_OK);
    add_items(b, id, N, 1000.0, 100);
    assert_int_equal(tdm_batch_run(b, status), TDM_OK);
    check_results(out, status, N);
    assert_int_equal(rf.device_calls, 0);
    tdm_batch_free(b);
    tdm_destroy(ctx);
    ctx = make_ctx(0, 1, 0);
    o.hint = TDM_DEVICE_CUDA;
    f.device_ok = 1;
    assert_int_equal(tdm_batch_new(ctx, &o, &b), TDM_OK);
    assert_int_equal(tdm_batch_add_family(b, &f, &id), TDM_OK);
    add_items(b, id, N, 1000.0, 100);
    assert_int_equal(tdm_batch_run(b, status), TDM_E_UNSUPPORTED);
    tdm_batch_free(b);
    tdm_destroy(ctx);
}

int main(void) {
    tu_init_seed("test_batch");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty_and_bad_arguments),
        cmocka_unit_test(test_cpu_groups_and_order),
        cmocka_unit_test(test_device_group_size_from_throughput),
        cmocka_unit_test(test_memory_shrinks_groups),
        cmocka_unit_test(test_oom_retry_then_cpu_fallback),
        cmocka_unit_test(test_hints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
