/* test_lattice_build.c: unit tests of lattice construction (spec section 1) and of the lattice engine's
 * configuration variables. The CSR is checked against the closed forms (V = L^d, E = d L^(d-1) (L-1), the
 * degree histogram C(d,j) (L-2)^j 2^(d-j), bytes 8(V+1)+8E) on the spec's shapes and on seeded random
 * (d, L), and every row against neighbours enumerated here from coordinates by division, independently of
 * the library's odometer. Bad input must name the dimension or value at fault. */
#define _GNU_SOURCE
#include "unit_common.h"

#include "tandem/lattice.h"

static tdm_ctx *new_ctx(void) {
    tdm_ctx *ctx;
    assert_int_equal(tdm_init(&ctx, NULL), TDM_OK);
    return ctx;
}

static int64_t ipow(int64_t b, int e) {
    int64_t r = 1;
    while (e--) r *= b;
    return r;
}

static int64_t binom(int n, int k) {
    int64_t r = 1;
    for (int i = 1; i <= k; i++) r = r * (n - k + i) / i;
    return r;
}

/* Neighbours of v from its coordinates (division), sorted ascending: the reference for each CSR row. */
static size_t ref_neighbours(int d, int64_t L, int64_t v, int64_t *out) {
    int64_t c[32], s[32];
    s[d - 1] = 1;
    for (int i = d - 2; i >= 0; i--) s[i] = s[i + 1] * L;
    for (int i = 0; i < d; i++) c[i] = (v / s[i]) % L;
    size_t n = 0;
    for (int i = 0; i < d; i++) {
        if (c[i] > 0) out[n++] = v - s[i];
        if (c[i] < L - 1) out[n++] = v + s[i];
    }
    for (size_t i = 1; i < n; i++) /* insertion sort: at most 64 entries */
        for (size_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
            int64_t t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

/* Checks one built lattice against every closed form; all rows when V is small, else a random sample. */
static void check_lattice(tdm_ctx *ctx, int d, int64_t L, tu_rng *r) {
    tdm_lattice *lat;
    int rc = tdm_lattice_new(ctx, d, L, 0, &lat);
    tu_check(rc == TDM_OK, "%dD/%lld: rc %d (%s)", d, (long long)L, rc, tdm_last_error());
    const int64_t V = ipow(L, d), E = (int64_t)d * ipow(L, d - 1) * (L - 1);
    tu_check(tdm_lattice_vertices(lat) == V, "%dD/%lld: V", d, (long long)L);
    tu_check(tdm_lattice_edges(lat) == E, "%dD/%lld: E", d, (long long)L);
    tu_check(tdm_lattice_bytes(lat) == (uint64_t)(8 * (V + 1) + 8 * E), "%dD/%lld: bytes", d, (long long)L);
    assert_int_equal(tdm_lattice_dims(lat), d);
    assert_int_equal(tdm_lattice_side(lat), L);
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    assert_int_equal(g.nvertices, V);
    assert_true(g.id != 0);
    assert_int_equal(g.row_ptr[0], 0);
    tu_check(g.row_ptr[V] == 2 * E, "%dD/%lld: arcs %lld", d, (long long)L, (long long)g.row_ptr[V]);
    /* Degree histogram against C(d,j) (L-2)^j 2^(d-j) (for L = 2 every vertex has degree d). */
    int64_t hist[65] = {0};
    for (int64_t v = 0; v < V; v++) hist[g.row_ptr[v + 1] - g.row_ptr[v]]++;
    for (int j = 0; j <= d; j++) {
        int64_t want = L == 2 ? (j == 0 ? V : 0) : binom(d, j) * ipow(L - 2, j) * ipow(2, d - j);
        tu_check(hist[d + j] == want, "%dD/%lld: %lld vertices of degree %d, want %lld", d, (long long)L,
                 (long long)hist[d + j], d + j, (long long)want);
    }
    int64_t nb[64];
    const int all = V <= 20000;
    for (int64_t k = 0; k < (all ? V : 3000); k++) {
        int64_t v = all ? k : (int64_t)tu_below(r, (uint64_t)V);
        size_t n = ref_neighbours(d, L, v, nb);
        int64_t lo = g.row_ptr[v], hi = g.row_ptr[v + 1];
        tu_check(hi - lo == (int64_t)n, "%dD/%lld: degree of %lld", d, (long long)L, (long long)v);
        for (size_t i = 0; i < n; i++)
            tu_check(g.col[lo + (int64_t)i] == nb[i], "%dD/%lld: row %lld entry %zu", d, (long long)L, (long long)v, i);
    }
    if (V <= 20000) tu_check(tdm_lattice_csr_validate(&g) == TDM_OK, "%dD/%lld: validate: %s", d, (long long)L, tdm_last_error());
    tdm_lattice_free(lat);
}

static void test_spec_shapes(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx();
    tu_rng r = tu_rng_for(101);
    static const int shapes[][2] = {{2, 3}, {4, 10}, {3, 10}, {5, 10}, {4, 32}, {5, 16}, {1, 2}, {1, 1000}, {6, 2}, {2, 100}};
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) check_lattice(ctx, shapes[i][0], shapes[i][1], &r);
    /* The spec's table values, typed in, as a check on the formulas above. */
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(ctx, 4, 10, 0, &lat), TDM_OK);
    assert_int_equal(tdm_lattice_vertices(lat), 10000);
    assert_int_equal(tdm_lattice_edges(lat), 36000);
    assert_int_equal(tdm_lattice_bytes(lat), 368008);
    tdm_lattice_free(lat);
    int64_t V, E;
    uint64_t bytes;
    assert_int_equal(tdm_lattice_sizes(5, 16, &V, &E, &bytes), TDM_OK);
    assert_int_equal(V, 1048576);
    assert_int_equal(E, 4915200);
    assert_int_equal(bytes, 47710216);
    tdm_destroy(ctx);
}

static void test_random_shapes(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx();
    tu_rng r = tu_rng_for(102);
    for (int round = 0; round < 60; round++) {
        int d = (int)tu_range(&r, 1, 8);
        /* Largest L with L^d <= 200000 so the test stays fast. */
        int64_t Lmax = 2;
        while (ipow(Lmax + 1, d) <= 200000 && Lmax < 200000) Lmax++;
        int64_t L = tu_range(&r, 2, Lmax);
        check_lattice(ctx, d, L, &r);
    }
    tdm_destroy(ctx);
}

static void test_index_coords(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx();
    tu_rng r = tu_rng_for(103);
    for (int round = 0; round < 40; round++) {
        int d = (int)tu_range(&r, 1, 6);
        int64_t L = tu_range(&r, 2, 9);
        tdm_lattice *lat;
        assert_int_equal(tdm_lattice_new(ctx, d, L, 0, &lat), TDM_OK);
        int64_t V = tdm_lattice_vertices(lat), c[32], back;
        for (int k = 0; k < 200; k++) {
            int64_t v = (int64_t)tu_below(&r, (uint64_t)V);
            assert_int_equal(tdm_lattice_coords(lat, v, c), TDM_OK);
            int64_t horner = 0;
            for (int i = 0; i < d; i++) {
                tu_check(c[i] >= 0 && c[i] < L, "coordinate %d of %lld", i, (long long)v);
                horner = horner * L + c[i];
            }
            assert_int_equal(horner, v);
            assert_int_equal(tdm_lattice_index(lat, c, &back), TDM_OK);
            assert_int_equal(back, v);
        }
        /* A coordinate out of range names its axis and value. */
        for (int i = 0; i < d; i++) c[i] = 0;
        int axis = (int)tu_below(&r, (uint64_t)d);
        c[axis] = tu_below(&r, 2) ? L : -1;
        assert_int_equal(tdm_lattice_index(lat, c, &back), TDM_E_RANGE);
        char want[64];
        snprintf(want, sizeof want, "coordinate %d = %lld", axis, (long long)c[axis]);
        tu_check(strstr(tdm_last_error(), want) != NULL, "message \"%s\" lacks \"%s\"", tdm_last_error(), want);
        assert_int_equal(tdm_lattice_coords(lat, V, c), TDM_E_RANGE);
        assert_int_equal(tdm_lattice_coords(lat, -1, c), TDM_E_RANGE);
        tdm_lattice_free(lat);
    }
    tdm_destroy(ctx);
}

static void expect_error(tdm_ctx *ctx, int d, int64_t L, unsigned flags, int want, const char *text) {
    tdm_lattice *lat = (tdm_lattice *)0x1;
    int rc = tdm_lattice_new(ctx, d, L, flags, &lat);
    tu_check(rc == want, "%dD/%lld flags %u: rc %d, want %d (%s)", d, (long long)L, flags, rc, want, tdm_last_error());
    tu_check(lat == (tdm_lattice *)0x1, "output written on error");
    tu_check(strstr(tdm_last_error(), text) != NULL, "%dD/%lld: message \"%s\" lacks \"%s\"", d, (long long)L,
             tdm_last_error(), text);
}

static void test_bad_input(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx();
    expect_error(ctx, 0, 10, 0, TDM_E_INVAL, "d=0");
    expect_error(ctx, 33, 2, 0, TDM_E_INVAL, "d=33");
    expect_error(ctx, -1, 2, 0, TDM_E_INVAL, "d=-1");
    expect_error(ctx, 2, 1, 0, TDM_E_INVAL, "L=1");
    expect_error(ctx, 2, 0, 0, TDM_E_INVAL, "L=0");
    expect_error(ctx, 1, INT64_C(2147483648), 0, TDM_E_INVAL, "L=2147483648");
    expect_error(ctx, 2, 65536, 0, TDM_E_OVERFLOW, "dimension 2 of 2");
    expect_error(ctx, 31, 2, 0, TDM_E_OVERFLOW, "dimension 31 of 31");
    expect_error(ctx, 32, 2, 0, TDM_E_OVERFLOW, "2^31-1");
    expect_error(ctx, 3, 1291, 0, TDM_E_OVERFLOW, "1291^3"); /* 1291^3 = 2,151,685,171 */
    expect_error(ctx, 2, 10, TDM_LATTICE_PERIODIC, TDM_E_INVAL, "periodic");
    expect_error(ctx, 2, 10, 0x80, TDM_E_INVAL, "flags");
    /* 30D/2 fits 2^31-1 vertices but its CSR (about 69 GB) does not fit the default 4G cap. */
    uint64_t bytes;
    assert_int_equal(tdm_lattice_sizes(30, 2, NULL, NULL, &bytes), TDM_OK);
    char want[64];
    snprintf(want, sizeof want, "needs %llu bytes", (unsigned long long)bytes);
    expect_error(ctx, 30, 2, 0, TDM_E_NOMEM, want);
    /* 1290^3 is the largest cube that fits. */
    int64_t V;
    assert_int_equal(tdm_lattice_sizes(3, 1290, &V, NULL, NULL), TDM_OK);
    assert_int_equal(V, INT64_C(2146689000));
    assert_int_equal(tdm_lattice_sizes(1, INT64_C(2147483647), &V, NULL, NULL), TDM_OK);
    assert_int_equal(tdm_lattice_new(NULL, 2, 2, 0, NULL), TDM_E_INVAL);
    tdm_destroy(ctx);
}

/* The CSR cap comes from TANDEM_LATTICE_MAX_BYTES; a lattice exactly at the cap is allowed. */
static void test_byte_cap(void **state) {
    (void)state;
    tdm_config cfg;
    tdm_config_init(&cfg);
    cfg.lattice_max_bytes = 29608; /* 3D/10 exactly */
    tdm_ctx *ctx;
    assert_int_equal(tdm_init(&ctx, &cfg), TDM_OK);
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(ctx, 3, 10, 0, &lat), TDM_OK);
    tdm_lattice_free(lat);
    assert_int_equal(tdm_lattice_new(ctx, 3, 11, 0, &lat), TDM_E_NOMEM);
    assert_non_null(strstr(tdm_last_error(), "TANDEM_LATTICE_MAX_BYTES=29608"));
    tdm_destroy(ctx);
}

/* Each lattice variable set in the environment is read back; invalid values are named. */
static void test_config_vars(void **state) {
    (void)state;
    static const struct {
        const char *name, *text;
        uint64_t want;
    } ok[] = {
        {"TANDEM_LATTICE_MAX_BYTES", "123", 123}, {"TANDEM_LATTICE_MAX_BYTES", "4G", UINT64_C(4) << 30},
        {"TANDEM_LATTICE_MAX_BYTES", "4GB", UINT64_C(4) << 30},
        {"TANDEM_LATTICE_MAX_BYTES", "2k", 2048}, {"TANDEM_LATTICE_MAX_BYTES", "max", UINT64_MAX},
        {"TANDEM_LATTICE_MAX_BYTES", "1T", INT64_C(1) << 40}, {"TANDEM_AUX_BYTES", "64M", INT64_C(64) << 20},
        {"TANDEM_AUX_BYTES", "0", 0}, {"TANDEM_ANALYZE_MAX_BFS", "1", 1}, {"TANDEM_ANALYZE_MAX_BFS", "1048576", 1 << 20},
        {"TANDEM_TEST_FAIL_AT_STEP", "7", 7}, {"TANDEM_SP_CACHE", "0", 0}, {"TANDEM_SP_CACHE", "1048576", 1 << 20},
    };
    static const struct {
        const char *name, *text;
    } bad[] = {
        {"TANDEM_LATTICE_MAX_BYTES", "-1"}, {"TANDEM_LATTICE_MAX_BYTES", "4X"}, {"TANDEM_LATTICE_MAX_BYTES", "4GBB"},
        {"TANDEM_LATTICE_MAX_BYTES", ""}, {"TANDEM_LATTICE_MAX_BYTES", "99999999999T"}, {"TANDEM_AUX_BYTES", "lots"},
        {"TANDEM_ANALYZE_MAX_BFS", "0"}, {"TANDEM_ANALYZE_MAX_BFS", "1048577"}, {"TANDEM_TEST_FAIL_AT_STEP", "-2"},
        {"TANDEM_SP_CACHE", "-1"}, {"TANDEM_SP_CACHE", "1048577"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        setenv(ok[i].name, ok[i].text, 1);
        tdm_config c;
        tdm_config_init(&c);
        int rc = tdm_config_resolve(&c);
        tu_check(rc == TDM_OK, "%s=%s: %s", ok[i].name, ok[i].text, tdm_last_error());
        uint64_t got = !strcmp(ok[i].name, "TANDEM_LATTICE_MAX_BYTES") ? c.lattice_max_bytes
                      : !strcmp(ok[i].name, "TANDEM_AUX_BYTES")       ? c.aux_bytes
                      : !strcmp(ok[i].name, "TANDEM_ANALYZE_MAX_BFS") ? (uint64_t)c.analyze_max_bfs
                      : !strcmp(ok[i].name, "TANDEM_SP_CACHE")        ? (uint64_t)c.sp_cache
                                                                      : (uint64_t)c.test_fail_at_step;
        tu_check(got == ok[i].want, "%s=%s read back as %llu", ok[i].name, ok[i].text, (unsigned long long)got);
        unsetenv(ok[i].name);
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv(bad[i].name, bad[i].text, 1);
        tdm_config c;
        tdm_config_init(&c);
        tu_check(tdm_config_resolve(&c) == TDM_E_CONFIG, "%s=%s accepted", bad[i].name, bad[i].text);
        tu_check(strstr(tdm_last_error(), bad[i].name) != NULL, "message lacks the name: %s", tdm_last_error());
        unsetenv(bad[i].name);
    }
    tdm_config c;
    tdm_config_init(&c);
    assert_int_equal(tdm_config_resolve(&c), TDM_OK);
    assert_int_equal(c.lattice_max_bytes, UINT64_C(4) << 30);
    assert_int_equal(c.aux_bytes, UINT64_C(64) << 20);
    assert_int_equal(c.analyze_max_bfs, 256);
    assert_int_equal(c.test_fail_at_step, 0);
    assert_int_equal(c.sp_cache, 1024);
}

/* Malformed CSR graphs are refused with the fault named. */
static void test_validate(void **state) {
    (void)state;
    /* A path 0-1-2 and the ways to break it. */
    int64_t row[4] = {0, 1, 3, 4};
    int32_t col[4] = {1, 0, 2, 1};
    tdm_lattice_csr g = {3, row, col, 0};
    assert_int_equal(tdm_lattice_csr_validate(&g), TDM_OK);
    col[3] = 0; /* 2 -> 0 without 0 -> 2 */
    assert_int_equal(tdm_lattice_csr_validate(&g), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "reverse"));
    col[3] = 2; /* self loop */
    assert_int_equal(tdm_lattice_csr_validate(&g), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "self loop"));
    col[3] = 7;
    assert_int_equal(tdm_lattice_csr_validate(&g), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "outside"));
    col[3] = 1, col[1] = 2, col[2] = 0; /* row 1 descending */
    assert_int_equal(tdm_lattice_csr_validate(&g), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "ascending"));
    col[1] = 0, col[2] = 2, row[2] = 0;
    assert_int_equal(tdm_lattice_csr_validate(&g), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "decreases"));
    assert_int_equal(tdm_lattice_csr_validate(NULL), TDM_E_INVAL);
}

int main(void) {
    tu_init_seed("test_lattice_build");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_shapes),  cmocka_unit_test(test_random_shapes), cmocka_unit_test(test_index_coords),
        cmocka_unit_test(test_bad_input),    cmocka_unit_test(test_byte_cap),      cmocka_unit_test(test_config_vars),
        cmocka_unit_test(test_validate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
