/* test_lattice_catalytic.c: unit tests of catalytic auxiliary memory (spec section 4). GF(2^64) products
 * against the spec's vectors and an independent shift-and-reduce reference; catalytic distances against
 * BFS (the L1 distance on lattices, bfs_multi on random graphs) on seeded random pairs, with aux restored
 * bit for bit (compared with a copy the test keeps, and hashed) for random, all-zero, all-0xFF and
 * structured contents at a misaligned address; one run of the program really changes aux; injected faults
 * at every step still restore it; a borrowed aux is refused; the catalytic path equals the BFS path. */
#include "unit_common.h"

#include "lattice/lattice_internal.h"
#include "tandem/lattice.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

static tdm_ctx *new_ctx(int fail_at) {
    tdm_config cfg;
    tdm_config_init(&cfg);
    if (fail_at) cfg.test_fail_at_step = fail_at;
    tdm_ctx *ctx;
    assert_int_equal(tdm_init(&ctx, &cfg), TDM_OK);
    return ctx;
}

/* Reference GF(2^64) product: a times x per bit of b, reducing x^64 to x^4 + x^3 + x + 1 as it overflows. */
static uint64_t ref_mul(uint64_t a, uint64_t b) {
    uint64_t r = 0;
    while (b) {
        if (b & 1) r ^= a;
        a = (a << 1) ^ ((a >> 63) ? 0x1b : 0);
        b >>= 1;
    }
    return r;
}

static void test_gf64(void **state) {
    (void)state;
    assert_int_equal(tdm_lattice_gf64_mul(2, UINT64_C(1) << 63), 0x1b);
    assert_int_equal(tdm_lattice_gf64_mul(3, 3), 5);
    assert_int_equal(tdm_lattice_gf64_mul(UINT64_C(0x0123456789abcdef), UINT64_C(0xfedcba9876543210)),
                     UINT64_C(0x48827ab55d976fa0));
    tu_rng r = tu_rng_for(501);
    for (int i = 0; i < 20000; i++) {
        uint64_t a = tu_next(&r), b = tu_next(&r), c = tu_next(&r);
        if (i % 4 == 0) a >>= tu_below(&r, 64);
        uint64_t ab = tdm_lattice_gf64_mul(a, b);
        tu_check(ab == ref_mul(a, b), "%016llx * %016llx", (unsigned long long)a, (unsigned long long)b);
        tu_check(tdm_lat_gf64_mul_portable(a, b) == ab, "portable %016llx * %016llx", (unsigned long long)a, (unsigned long long)b);
        tu_check(ab == tdm_lattice_gf64_mul(b, a), "commutative");
        tu_check(tdm_lattice_gf64_mul(a, b ^ c) == (ab ^ tdm_lattice_gf64_mul(a, c)), "distributive");
        tu_check(tdm_lattice_gf64_mul(a, 1) == a && tdm_lattice_gf64_mul(a, 0) == 0, "identity");
    }
}

typedef enum { FILL_RANDOM, FILL_ZERO, FILL_ONES, FILL_CSR, FILL_KINDS } fill_kind;

static void fill_aux(uint8_t *p, size_t n, fill_kind kind, tu_rng *r, const tdm_lattice_csr *g) {
    switch (kind) {
    case FILL_RANDOM: for (size_t i = 0; i < n; i++) p[i] = (uint8_t)tu_next(r); break;
    case FILL_ZERO: memset(p, 0, n); break;
    case FILL_ONES: memset(p, 0xff, n); break;
    default: { /* structured: the CSR's own bytes, repeated */
        const uint8_t *src = (const uint8_t *)g->col;
        size_t m = (size_t)g->row_ptr[g->nvertices] * sizeof *g->col;
        for (size_t i = 0; i < n; i++) p[i] = src[i % m];
    }
    }
}

/* >= 100 random pairs of 4D/8 against the L1 distance, aux restored every time, for every kind of
 * contents, at an address misaligned by 3. */
static void test_distance_lattice(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx(0);
    tu_rng r = tu_rng_for(502);
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(ctx, 4, 8, 0, &lat), TDM_OK);
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    const int64_t V = g.nvertices, K = 28;
    const size_t bytes = (size_t)(K + 1) * 8 * (size_t)V;
    uint8_t *mem = malloc(bytes + 3), *copy = malloc(bytes);
    tdm_lattice_aux *aux;
    assert_int_equal(tdm_lattice_aux_wrap(ctx, mem + 3, bytes, &aux), TDM_OK);
    assert_int_equal(tdm_lattice_aux_bytes(aux), bytes);
    int queries = 0;
    for (int kind = 0; kind < FILL_KINDS; kind++) {
        fill_aux(mem + 3, bytes, (fill_kind)kind, &r, &g);
        memcpy(copy, mem + 3, bytes);
        const uint64_t h0 = XXH3_64bits(mem + 3, bytes);
        for (int q = 0; q < 30; q++, queries++) {
            int64_t s = (int64_t)tu_below(&r, (uint64_t)V), t = (int64_t)tu_below(&r, (uint64_t)V), cs[4], ct[4], l1 = 0, d;
            if (q == 0) s = 0, t = V - 1;
            tdm_lattice_coords(lat, s, cs);
            tdm_lattice_coords(lat, t, ct);
            for (int i = 0; i < 4; i++) l1 += cs[i] > ct[i] ? cs[i] - ct[i] : ct[i] - cs[i];
            uint64_t seed = tu_next(&r);
            int rc = tdm_lattice_catalytic_distance(ctx, &g, aux, s, t, K, &seed, 0, &d);
            tu_check(rc == TDM_OK && d == l1, "kind %d: %lld->%lld: rc %d dist %lld, want %lld (%s)", kind, (long long)s,
                     (long long)t, rc, (long long)d, (long long)l1, tdm_last_error());
            tu_check(XXH3_64bits(mem + 3, bytes) == h0, "kind %d query %d: aux hash changed", kind, q);
            tu_check(!memcmp(mem + 3, copy, bytes), "kind %d query %d: aux not restored bit for bit", kind, q);
        }
    }
    assert_true(queries >= 100);
    assert_int_equal(tdm_lattice_aux_dirty(aux), 0);
    tdm_lattice_aux_free(aux);
    free(mem), free(copy);
    tdm_lattice_free(lat);
    tdm_destroy(ctx);
}

/* One run of P changes aux (it is really used); a second restores it. */
static void test_program_uses_aux(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx(0);
    tu_rng r = tu_rng_for(503);
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(ctx, 3, 6, 0, &lat), TDM_OK);
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    const int64_t K = 15;
    const size_t bytes = (size_t)(K + 1) * 8 * (size_t)g.nvertices;
    uint8_t *mem = malloc(bytes), *copy = malloc(bytes);
    for (int kind = 0; kind < FILL_KINDS; kind++) {
        fill_aux(mem, bytes, (fill_kind)kind, &r, &g);
        memcpy(copy, mem, bytes);
        uint64_t seed = tu_next(&r);
        int64_t s = (int64_t)tu_below(&r, (uint64_t)g.nvertices);
        tdm_lat_catalytic_program(&g, mem, K, s, seed, 2);
        tu_check(memcmp(mem, copy, bytes) != 0, "kind %d: one run of P left aux unchanged", kind);
        /* Every register r_j with j <= K reached something (B^j e_s is nonzero on the lattice). */
        for (int64_t j = 0; j <= K; j++)
            tu_check(memcmp(mem + (size_t)j * 8 * (size_t)g.nvertices, copy + (size_t)j * 8 * (size_t)g.nvertices,
                            8 * (size_t)g.nvertices) != 0, "kind %d: register %lld untouched", kind, (long long)j);
        tdm_lat_catalytic_program(&g, mem, K, s, seed, 1);
        tu_check(!memcmp(mem, copy, bytes), "kind %d: second run did not restore aux", kind);
    }
    free(mem), free(copy);
    tdm_lattice_free(lat);
    tdm_destroy(ctx);
}

/* A fault injected after any number of steps returns TDM_E_IO with aux exactly as before. */
static void test_fault_injection(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(504);
    tdm_ctx *plain = new_ctx(0);
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(plain, 3, 4, 0, &lat), TDM_OK);
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    const int64_t K = 9, total = 2 * (2 * K + 1);
    const size_t bytes = (size_t)(K + 1) * 8 * (size_t)g.nvertices;
    uint8_t *mem = malloc(bytes), *copy = malloc(bytes);
    fill_aux(mem, bytes, FILL_RANDOM, &r, &g);
    memcpy(copy, mem, bytes);
    for (int64_t f = 1; f <= total + 1; f++) {
        tdm_ctx *ctx = new_ctx((int)f);
        tdm_lattice_aux *aux;
        assert_int_equal(tdm_lattice_aux_wrap(ctx, mem, bytes, &aux), TDM_OK);
        uint64_t seed = tu_next(&r);
        int64_t d = 99;
        int rc = tdm_lattice_catalytic_distance(ctx, &g, aux, 0, g.nvertices - 1, K, &seed, 0, &d);
        if (f < total) tu_check(rc == TDM_E_IO, "fail at %lld: rc %d", (long long)f, rc);
        else tu_check(rc == TDM_OK && d == 9, "fail at %lld (after the last step): rc %d dist %lld", (long long)f, rc, (long long)d);
        if (rc) assert_non_null(strstr(tdm_last_error(), "aux restored"));
        tu_check(!memcmp(mem, copy, bytes), "fail at %lld: aux not restored", (long long)f);
        tu_check(tdm_lattice_aux_acquire(aux) == TDM_OK, "fail at %lld: aux left borrowed", (long long)f);
        tdm_lattice_aux_release(aux);
        tdm_lattice_aux_free(aux);
        tdm_destroy(ctx);
    }
    free(mem), free(copy);
    tdm_lattice_free(lat);
    tdm_destroy(plain);
}

static void test_errors(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx(0);
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(ctx, 2, 5, 0, &lat), TDM_OK);
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    tdm_lattice_aux *aux;
    assert_int_equal(tdm_lattice_aux_new(ctx, 4 * 8 * 25, &aux), TDM_OK); /* K = 3 fits exactly */
    uint8_t *copy = malloc(4 * 8 * 25);
    memcpy(copy, tdm_lattice_aux_data(aux), 4 * 8 * 25);
    uint64_t seed = 7;
    int64_t d = 5;
    /* Budget too small: no path within K, aux still restored. */
    assert_int_equal(tdm_lattice_catalytic_distance(ctx, &g, aux, 0, 24, 3, &seed, 0, &d), TDM_E_NOPATH);
    assert_int_equal(d, -1);
    assert_memory_equal(tdm_lattice_aux_data(aux), copy, 4 * 8 * 25);
    assert_int_equal(tdm_lattice_catalytic_distance(ctx, &g, aux, 0, 3, 3, &seed, 0, &d), TDM_OK);
    assert_int_equal(d, 3);
    assert_int_equal(tdm_lattice_catalytic_distance(ctx, &g, aux, 12, 12, 3, &seed, 0, &d), TDM_OK);
    assert_int_equal(d, 0);
    /* Aux too small for K = 4: both sizes named. */
    assert_int_equal(tdm_lattice_catalytic_distance(ctx, &g, aux, 0, 3, 4, &seed, 0, &d), TDM_E_NOMEM);
    assert_non_null(strstr(tdm_last_error(), "800 bytes"));
    assert_non_null(strstr(tdm_last_error(), "1000 bytes"));
    assert_int_equal(tdm_lattice_catalytic_distance(ctx, &g, aux, 0, 25, 3, &seed, 0, &d), TDM_E_RANGE);
    assert_int_equal(tdm_lattice_catalytic_distance(ctx, &g, aux, -1, 2, 3, &seed, 0, &d), TDM_E_RANGE);
    assert_int_equal(tdm_lattice_catalytic_distance(ctx, &g, aux, 0, 2, 0, &seed, 0, &d), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_catalytic_distance(ctx, &g, aux, 0, 2, 3, NULL, 0, &d), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_catalytic_distance(ctx, &g, aux, 0, 2, 3, &seed, 0x8, &d), TDM_E_INVAL);
    /* Borrowed: a second borrower is refused. */
    assert_int_equal(tdm_lattice_aux_acquire(aux), TDM_OK);
    assert_int_equal(tdm_lattice_catalytic_distance(ctx, &g, aux, 0, 2, 3, &seed, 0, &d), TDM_E_BUSY);
    assert_int_equal(tdm_lattice_aux_acquire(aux), TDM_E_BUSY);
    tdm_lattice_aux_release(aux);
    assert_int_equal(tdm_lattice_catalytic_distance(ctx, &g, aux, 0, 2, 3, &seed, 0, &d), TDM_OK);
    /* A random seed is drawn and written back. */
    seed = 0;
    uint64_t before = seed;
    assert_int_equal(tdm_lattice_catalytic_distance(ctx, &g, aux, 0, 6, 3, &seed, TDM_LATTICE_SEED_RANDOM, &d), TDM_OK);
    assert_int_equal(d, 2);
    assert_true(seed != before);
    assert_memory_equal(tdm_lattice_aux_data(aux), copy, 4 * 8 * 25);
    free(copy);
    tdm_lattice_aux_free(aux);
    /* The library-allocated default size comes from TANDEM_AUX_BYTES. */
    tdm_config cfg;
    tdm_config_init(&cfg);
    cfg.aux_bytes = 4096;
    tdm_ctx *c2;
    assert_int_equal(tdm_init(&c2, &cfg), TDM_OK);
    assert_int_equal(tdm_lattice_aux_new(c2, 0, &aux), TDM_OK);
    assert_int_equal(tdm_lattice_aux_bytes(aux), 4096);
    tdm_lattice_aux_free(aux);
    tdm_destroy(c2);
    tdm_lattice_free(lat);
    tdm_destroy(ctx);
}

/* Random general graphs: distances equal BFS (unreachable -> NOPATH); paths equal the BFS tie-rule path. */
static void test_random_graphs_and_paths(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx(0);
    tu_rng r = tu_rng_for(505);
    enum { N = 30 };
    int64_t row[N + 1];
    int32_t col[N * N];
    uint8_t *mem = malloc((size_t)(N + 1) * 8 * N), *copy = malloc((size_t)(N + 1) * 8 * N);
    for (int round = 0; round < 40; round++) {
        int n = (int)tu_range(&r, 2, N);
        unsigned char adj[N][N] = {{0}};
        double p = tu_unit(&r) * 0.3;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++)
                if (tu_unit(&r) < p) adj[i][j] = adj[j][i] = 1;
        int64_t k = 0;
        for (int i = 0; i < n; i++) {
            row[i] = k;
            for (int j = 0; j < n; j++)
                if (adj[i][j]) col[k++] = j;
        }
        row[n] = k;
        tdm_lattice_csr g = {n, row, col, 0};
        const int64_t K = n;
        const size_t bytes = (size_t)(K + 1) * 8 * (size_t)n;
        fill_aux(mem, bytes, FILL_RANDOM, &r, &g);
        memcpy(copy, mem, bytes);
        tdm_lattice_aux *aux;
        assert_int_equal(tdm_lattice_aux_wrap(ctx, mem, bytes, &aux), TDM_OK);
        int64_t s = (int64_t)tu_below(&r, (uint64_t)n);
        int32_t dist[N];
        assert_int_equal(tdm_lattice_bfs_multi(ctx, &g, &s, 1, dist, NULL), TDM_OK);
        for (int64_t t = 0; t < n; t++) {
            uint64_t seed = tu_next(&r);
            int64_t d;
            int rc = tdm_lattice_catalytic_distance(ctx, &g, aux, s, t, K, &seed, 0, &d);
            if (dist[t] < 0) tu_check(rc == TDM_E_NOPATH && d == -1, "round %d: %lld->%lld unreachable: rc %d", round, (long long)s, (long long)t, rc);
            else tu_check(rc == TDM_OK && d == dist[t], "round %d: %lld->%lld: %lld vs BFS %d", round, (long long)s, (long long)t, (long long)d, dist[t]);
        }
        int64_t t = (int64_t)tu_below(&r, (uint64_t)n);
        tdm_lattice_path cp, bp;
        uint64_t seed = tu_next(&r);
        int rc1 = tdm_lattice_catalytic_path(ctx, &g, aux, s, t, K, &seed, 0, &cp);
        int rc2 = tdm_lattice_sp(ctx, &g, s, t, TDM_DEVICE_AUTO, &bp);
        tu_check(rc1 == rc2, "round %d: catalytic path rc %d, BFS rc %d", round, rc1, rc2);
        tu_check(cp.hops == bp.hops, "round %d: hops %lld vs %lld", round, (long long)cp.hops, (long long)bp.hops);
        if (cp.hops >= 0) assert_memory_equal(cp.vertex, bp.vertex, (size_t)(cp.hops + 1) * sizeof *cp.vertex);
        tdm_lattice_path_release(&cp);
        tdm_lattice_path_release(&bp);
        tu_check(!memcmp(mem, copy, bytes), "round %d: aux not restored", round);
        tdm_lattice_aux_free(aux);
    }
    /* And on a lattice, against the closed-form path BFS gives. */
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(ctx, 3, 4, 0, &lat), TDM_OK);
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    tdm_lattice_aux *aux;
    assert_int_equal(tdm_lattice_aux_new(ctx, (size_t)10 * 8 * 64, &aux), TDM_OK);
    for (int q = 0; q < 10; q++) {
        int64_t s = (int64_t)tu_below(&r, 64), t = (int64_t)tu_below(&r, 64);
        uint64_t seed = tu_next(&r);
        tdm_lattice_path cp, bp;
        assert_int_equal(tdm_lattice_catalytic_path(ctx, &g, aux, s, t, 9, &seed, 0, &cp), TDM_OK);
        assert_int_equal(tdm_lattice_sp(ctx, &g, s, t, TDM_DEVICE_AUTO, &bp), TDM_OK);
        assert_int_equal(cp.hops, bp.hops);
        assert_memory_equal(cp.vertex, bp.vertex, (size_t)(cp.hops + 1) * sizeof *cp.vertex);
        tdm_lattice_path_release(&cp);
        tdm_lattice_path_release(&bp);
    }
    tdm_lattice_aux_free(aux);
    tdm_lattice_free(lat);
    free(mem), free(copy);
    tdm_destroy(ctx);
}

int main(void) {
    tu_init_seed("test_lattice_catalytic");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gf64),           cmocka_unit_test(test_distance_lattice),
        cmocka_unit_test(test_program_uses_aux), cmocka_unit_test(test_fault_injection),
        cmocka_unit_test(test_errors),         cmocka_unit_test(test_random_graphs_and_paths),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
