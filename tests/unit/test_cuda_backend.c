/* test_cuda_backend.c: the CUDA backend as registered by tdm_init. On a machine with a GPU it checks
 * device memory (pool allocation, copies both ways, memory info) and placement; on a machine without one
 * it reports the GPU half as skipped, with the reason the library logged, rather than passing silently. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "tandem/backend.h"

static char why[512];

static void capture(tdm_log_level level, const char *msg, void *user) {
    (void)user;
    if (level <= TDM_LOG_INFO && strstr(msg, "CUDA")) snprintf(why, sizeof why, "%s", msg);
}

static const tdm_backend *cuda_or_skip(tdm_ctx **ctx) {
    tdm_log_set_callback(capture, NULL);
    tdm_config cfg;
    tdm_config_init(&cfg);
    cfg.log_level = TDM_LOG_INFO;
    assert_int_equal(tdm_init(ctx, &cfg), TDM_OK);
    tdm_log_set_callback(NULL, NULL);
    const tdm_backend *b = tdm_backend_find(*ctx, TDM_BACKEND_CUDA);
    if (!b) {
        printf("GPU half not run: %s\n", why[0] ? why : "no CUDA backend registered");
        tdm_destroy(*ctx);
        *ctx = NULL;
    }
    return b;
}

static void test_memory_round_trip(void **state) {
    tdm_ctx *ctx;
    const tdm_backend *b = cuda_or_skip(&ctx);
    if (!b) skip();
    size_t fr = 0, tot = 0;
    assert_int_equal(b->mem_info(b, &fr, &tot), TDM_OK);
    assert_true(tot > 0 && fr <= tot);
    enum { N = 1 << 20 };
    static uint32_t host[N], back[N];
    uint64_t x = 12345;
    for (size_t i = 0; i < N; i++) host[i] = (uint32_t)((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 33);
    memset(back, 0xA5, sizeof back);
    void *d1 = NULL, *d2 = NULL;
    assert_int_equal(b->alloc(b, sizeof host, &d1), TDM_OK);
    assert_int_equal(b->alloc(b, sizeof host, &d2), TDM_OK);
    assert_int_equal(b->copy(b, d1, host, sizeof host, TDM_COPY_H2D), TDM_OK);
    assert_int_equal(b->copy(b, d2, d1, sizeof host, TDM_COPY_D2D), TDM_OK);
    assert_int_equal(b->copy(b, back, d2, sizeof host, TDM_COPY_D2H), TDM_OK);
    assert_memory_equal(host, back, sizeof host);
    assert_int_equal(b->release(b, d1), TDM_OK);
    assert_int_equal(b->release(b, d2), TDM_OK);
    assert_int_equal(b->release(b, NULL), TDM_OK);
    assert_int_equal(b->sync(b), TDM_OK);
    tdm_destroy(ctx);
}

static void test_huge_allocation_is_a_status(void **state) {
    tdm_ctx *ctx;
    const tdm_backend *b = cuda_or_skip(&ctx);
    if (!b) skip();
    void *p = NULL;
    int rc = b->alloc(b, (size_t)1 << 50, &p); /* a petabyte: must fail cleanly */
    assert_int_equal(rc, TDM_E_DEVICE_OOM);
    assert_non_null(strstr(tdm_last_error(), "cuda"));
    tdm_destroy(ctx);
}

static void test_placement(void **state) {
    tdm_ctx *ctx;
    const tdm_backend *b = cuda_or_skip(&ctx);
    if (!b) skip();
    /* lcs and difflib have exact device kernels: forcing CUDA or auto picks the GPU. char has none: forcing
     * CUDA falls back to the CPU and says why. */
    const tdm_backend *chosen;
    tdm_route_reason reason;
    assert_non_null(b->seq);
    assert_int_equal(tdm_backend_select(ctx, TDM_OP_SEQ_LCS, TDM_DEVICE_CUDA, &chosen, &reason), TDM_OK);
    assert_ptr_equal(chosen, b);
    assert_int_equal(reason, TDM_ROUTE_FORCED_GPU);
    assert_int_equal(tdm_backend_select(ctx, TDM_OP_SEQ_DIFFLIB, TDM_DEVICE_AUTO, &chosen, &reason), TDM_OK);
    assert_ptr_equal(chosen, b);
    assert_int_equal(reason, TDM_ROUTE_PREFER_GPU);
    assert_int_equal(tdm_backend_select(ctx, TDM_OP_SEQ_CHAR, TDM_DEVICE_CUDA, &chosen, &reason), TDM_OK);
    assert_int_equal(chosen->kind, TDM_BACKEND_CPU);
    assert_int_equal(reason, TDM_ROUTE_FORCED_GPU_UNAVAILABLE);
    assert_int_equal(tdm_backend_select(ctx, TDM_OP_SEQ_CHAR, TDM_DEVICE_AUTO, &chosen, &reason), TDM_OK);
    assert_int_equal(reason, TDM_ROUTE_NO_GPU_IMPL);
    tdm_destroy(ctx);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_round_trip),
        cmocka_unit_test(test_huge_allocation_is_a_status),
        cmocka_unit_test(test_placement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
