/* test_lattice_xor_batch.c: tdm_lattice_xor_batch against one tdm_lattice_xor call per item, byte for
 * byte and status for status: on the CPU; through a fake device's batched entry point (forced, and with a
 * TANDEM_MEM_LIMIT-style cap that shrinks the groups); and with a device that runs out of memory, where
 * the CPU reruns the groups with the same results. The fake computes with a CPU context, so what is tested
 * is the batching and dispatch, not a kernel (tests/cross checks kernels on a GPU). */
#include "unit_common.h"

#include "core/internal.h"
#include "fake_backend.h"
#include "lattice/lattice_device.h"
#include "tandem/lattice.h"

static tdm_ctx *ref;
static int fail_rc, calls;

/* Reserves the group's bytes from the monitor like the CUDA module, computes with ref, writes on success. */
static int fake_xor_key_batch(const tdm_backend *b, const tdm_lattice_xor_job *jobs, size_t count) {
    calls++;
    if (fail_rc) return tdm_error(fail_rc, "fake: device failure");
    size_t bytes = 0;
    for (size_t j = 0; j < count; j++) bytes += 2 * jobs[j].n + jobs[j].len;
    int rc = tdm_mem_monitor_reserve(b->mem, bytes);
    if (rc) return rc;
    for (size_t j = 0; j < count && !rc; j++) {
        tdm_lattice_key k = {jobs[j].key, jobs[j].len, jobs[j].offset};
        rc = tdm_lattice_xor(ref, jobs[j].in, jobs[j].out, jobs[j].n, &k, 0);
    }
    tdm_mem_monitor_unreserve(b->mem, bytes);
    return rc;
}
static tdm_lattice_dev_ops fake_ops;

static int fake_supports(const tdm_backend *b, tdm_op op) { return op == TDM_OP_LATTICE_XOR; }
static int fake_sample(void *user, tdm_mem_sample *out) {
    *out = (tdm_mem_sample){.total = 1u << 30, .free = 1u << 30};
    return TDM_OK;
}

static tdm_ctx *make_ctx(int with_device, uint64_t limit) {
    tdm_config c;
    tu_fake_config(&c);
    tdm_ctx *ctx = tu_fake_ctx(&c);
    if (with_device) {
        fake_ops.xor_key_batch = fake_xor_key_batch;
        tdm_backend *b = tu_fake_gpu(ctx, "fake:0", fake_supports);
        b->lattice = &fake_ops;
        tdm_mem_source src = {fake_sample, NULL, NULL};
        assert_int_equal(tdm_mem_monitor_new(&src, NULL, limit, &b->mem), TDM_OK);
    }
    return ctx;
}

enum { N = 600 };
static uint8_t in[N][300], out[N][300], want[N][300], keys[8][64];
static tdm_lattice_xor_item items[N];
static int want_status[N];

/* Random items: sizes 0..299, one of eight keys with random lengths and offsets, every fifth in place,
 * every 50th invalid (NULL key, key length 0, unknown flag, NO_CYCLE past the key); then the reference
 * answers one call at a time into want. */
static void make_items(uint64_t salt) {
    tu_rng r = tu_rng_for(salt);
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < 64; i++) keys[k][i] = (uint8_t)tu_next(&r);
    for (size_t i = 0; i < N; i++) {
        for (int j = 0; j < 300; j++) in[i][j] = (uint8_t)tu_next(&r);
        size_t n = tu_next(&r) % 300;
        tdm_lattice_key key = {keys[tu_next(&r) % 8], 1 + tu_next(&r) % 64, tu_next(&r) % 1000};
        int inplace = i % 5 == 0;
        items[i] = (tdm_lattice_xor_item){in[i], inplace ? (void *)in[i] : out[i], n, key, 0};
        switch (i % 50 == 7 ? (int)(i / 50) % 4 : -1) {
        case 0: items[i].key.bytes = NULL; break;
        case 1: items[i].key.len = 0; break;
        case 2: items[i].flags = 0x80; break;
        case 3: items[i].flags = TDM_LATTICE_XOR_NO_CYCLE, items[i].key.offset = 0, items[i].n = 100; break;
        }
    }
    memset(out, 0xA5, sizeof out);
    for (size_t i = 0; i < N; i++) {
        /* In place: the reference XORs a copy of in; otherwise into a copy of the untouched out. */
        const int inplace = i % 5 == 0;
        memcpy(want[i], inplace ? in[i] : out[i], 300);
        want_status[i] = tdm_lattice_xor(ref, inplace ? want[i] : in[i], want[i], items[i].n, &items[i].key, items[i].flags);
    }
}

static void check_against_reference(const int *status) {
    for (size_t i = 0; i < N; i++) {
        assert_int_equal(status[i], want_status[i]);
        assert_memory_equal(i % 5 ? out[i] : in[i], want[i], 300);
    }
}

static void test_cpu_equals_one_by_one(void **state) {
    (void)state;
    tdm_ctx *ctx = make_ctx(0, 0);
    make_items(1);
    int status[N];
    tdm_batch_stats st;
    assert_int_equal(tdm_lattice_xor_batch(ctx, items, N, TDM_DEVICE_AUTO, status, &st), TDM_OK);
    check_against_reference(status);
    assert_true(st.groups >= 2 && st.device_groups == 0 && st.items < N); /* invalid and empty items not submitted */
    tdm_destroy(ctx);
}

static void test_device_equals_one_by_one(void **state) {
    (void)state;
    tdm_ctx *ctx = make_ctx(1, 0);
    int status[N];
    tdm_batch_stats st;
    make_items(2);
    fail_rc = 0, calls = 0;
    assert_int_equal(tdm_lattice_xor_batch(ctx, items, N, TDM_DEVICE_CUDA, status, &st), TDM_OK);
    check_against_reference(status);
    assert_true(calls >= 1 && st.device_groups == (size_t)calls && st.cpu_groups == 0);
    /* Auto with no model: the inputs live on the host, so the CPU runs it (RESIDENCY_ONLY). */
    make_items(3);
    calls = 0;
    assert_int_equal(tdm_lattice_xor_batch(ctx, items, N, TDM_DEVICE_AUTO, status, &st), TDM_OK);
    check_against_reference(status);
    assert_int_equal(calls, 0);
    /* Out of device memory every time: retried once, then the CPU gives the same bytes. */
    make_items(4);
    fail_rc = TDM_E_DEVICE_OOM, calls = 0;
    assert_int_equal(tdm_lattice_xor_batch(ctx, items, N, TDM_DEVICE_CUDA, status, &st), TDM_OK);
    check_against_reference(status);
    assert_int_equal(calls, 2);
    assert_true(st.fallbacks >= 1 && st.retries == 1 && st.device_groups == 0);
    fail_rc = 0;
    tdm_destroy(ctx);
    /* A 4 KiB device limit: groups shrink to fit it and all run on the device. */
    ctx = make_ctx(1, 4096);
    make_items(5);
    calls = 0;
    assert_int_equal(tdm_lattice_xor_batch(ctx, items, N, TDM_DEVICE_CUDA, status, &st), TDM_OK);
    check_against_reference(status);
    assert_true(st.mem_budget == 2048 && st.device_groups > 50 && st.fallbacks == 0 && calls == (int)st.device_groups);
    tdm_destroy(ctx);
}

static void test_bad_arguments(void **state) {
    (void)state;
    tdm_ctx *ctx = make_ctx(0, 0);
    int status[1];
    make_items(6);
    assert_int_equal(tdm_lattice_xor_batch(ctx, NULL, 0, TDM_DEVICE_AUTO, NULL, NULL), TDM_OK);
    assert_int_equal(tdm_lattice_xor_batch(NULL, items, 1, TDM_DEVICE_AUTO, status, NULL), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_xor_batch(ctx, NULL, 1, TDM_DEVICE_AUTO, status, NULL), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_xor_batch(ctx, items, 1, TDM_DEVICE_AUTO, NULL, NULL), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_xor_batch(ctx, items, 1, 9, status, NULL), TDM_E_INVAL);
    tdm_destroy(ctx);
}

static int setup(void **state) {
    (void)state;
    tdm_config c;
    tdm_config_init(&c);
    c.device = TDM_DEVICE_CPU;
    c.log_level = TDM_LOG_ERROR;
    return tdm_init(&ref, &c);
}
static int teardown(void **state) {
    (void)state;
    tdm_destroy(ref);
    return 0;
}

int main(void) {
    tu_init_seed("test_lattice_xor_batch");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_equals_one_by_one),
        cmocka_unit_test(test_device_equals_one_by_one),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
