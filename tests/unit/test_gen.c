/* test_gen.c: unit tests of the seeded data generator (tdm_seq_gen_*) that tests, the `tandem seq gen`
 * command and the benchmarks share. Its promise is reproducibility and the distributions it names: the
 * same seed gives the same data (its stream is the standard splitmix64, checked here against an
 * independent implementation so it cannot drift per platform), lengths stay in [min_len, max_len] with
 * the requested mean (over 100k patterns, including means near the ends of the range), symbol ranks stay
 * below the vocabulary with Zipf frequencies (rank 0 the most frequent), and invalid options are refused. */
#include "unit_common.h"

#include <math.h>

#include "tandem/seq.h"

static tdm_seq_gen *make(uint64_t seed, uint32_t vocab, double s, uint32_t lo, uint32_t hi, double mean) {
    tdm_seq_gen_opts o;
    tdm_seq_gen_opts_init(&o);
    o.seed = seed, o.vocab = vocab, o.zipf_s = s, o.min_len = lo, o.max_len = hi, o.mean_len = mean;
    tdm_seq_gen *g = NULL;
    int rc = tdm_seq_gen_new(&o, &g);
    tu_check(rc == TDM_OK, "gen_new(vocab %u, s %g, [%u, %u], mean %g): %d %s", vocab, s, lo, hi, mean, rc, tdm_last_error());
    return g;
}

static void test_gen_defaults(void **state) {
    (void)state;
    tdm_seq_gen_opts o;
    memset(&o, 0xAB, sizeof o);
    tdm_seq_gen_opts_init(&o);
    assert_int_equal(o.seed, 1);
    assert_int_equal(o.vocab, 50000);
    tu_assert_same_double(o.zipf_s, 1.0, "zipf_s");
    assert_int_equal(o.min_len, 2);
    assert_int_equal(o.max_len, 60);
    tu_assert_same_double(o.mean_len, 20.0, "mean_len");
    char buf[16];
    assert_int_equal(tdm_seq_gen_symbol_name(0, buf), 2);
    assert_string_equal(buf, "s0");
    assert_int_equal(tdm_seq_gen_symbol_name(42, buf), 3);
    assert_string_equal(buf, "s42");
    assert_int_equal(tdm_seq_gen_symbol_name(UINT32_MAX, buf), 11);
    assert_string_equal(buf, "s4294967295");
}

static void test_gen_deterministic(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(1);
    uint64_t seed = tu_next(&r);
    tdm_seq_gen *a = make(seed, 1000, 1.1, 0, 40, 9.0), *b = make(seed, 1000, 1.1, 0, 40, 9.0);
    tdm_seq_gen *c = make(seed + 1, 1000, 1.1, 0, 40, 9.0);
    uint32_t pa[40], pb[40], pc[40];
    size_t na, nb, nc;
    int differs = 0;
    for (int i = 0; i < 5000; i++) {
        switch (i % 3) { /* interleave all three draws */
        case 0:
            tdm_seq_gen_next(a, pa, &na);
            tdm_seq_gen_next(b, pb, &nb);
            tdm_seq_gen_next(c, pc, &nc);
            assert_int_equal(na, nb);
            if (na) assert_memory_equal(pa, pb, na * sizeof *pa);
            differs += na != nc || (na && memcmp(pa, pc, na * sizeof *pa));
            break;
        case 1:
            assert_int_equal(tdm_seq_gen_symbol(a), tdm_seq_gen_symbol(b));
            tdm_seq_gen_symbol(c);
            break;
        case 2: {
            uint64_t bound = 1 + tu_below(&r, 1000000);
            assert_int_equal(tdm_seq_gen_uniform(a, bound), tdm_seq_gen_uniform(b, bound));
            tdm_seq_gen_uniform(c, bound);
            break;
        }
        }
    }
    assert_true(differs > 1000); /* another seed gives other data */
    tdm_seq_gen_free(a), tdm_seq_gen_free(b), tdm_seq_gen_free(c);
    tdm_seq_gen_free(NULL);
}

/* The stream is splitmix64 seeded with the seed: with bound 2^64-1 the rejection step never fires (but for
 * the one value 2^64-1) and the raw outputs come through; with a power of two it keeps the low bits. */
static void test_gen_stream_is_splitmix64(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(2);
    for (int k = 0; k < 5; k++) {
        uint64_t seed = k == 0 ? 1 : k == 1 ? 0 : tu_next(&r);
        tdm_seq_gen *g = make(seed, 10, 1.0, 1, 5, 2.0);
        uint64_t st = seed;
        for (int i = 0; i < 1000; i++) {
            uint64_t z = (st += 0x9E3779B97F4A7C15ull);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            z ^= z >> 31;
            if (z == UINT64_MAX) break;
            uint64_t got = i % 2 ? tdm_seq_gen_uniform(g, 1ull << 20) : tdm_seq_gen_uniform(g, UINT64_MAX);
            uint64_t want = i % 2 ? z & ((1ull << 20) - 1) : z;
            tu_check(got == want, "seed %" PRIu64 " draw %d: %" PRIu64 ", want %" PRIu64, seed, i, got, want);
        }
        tdm_seq_gen_free(g);
    }
    /* Seed 1's first raw output, pinned: the generator's data must not change under anyone's feet. */
    tdm_seq_gen *g = make(1, 10, 1.0, 1, 5, 2.0);
    assert_int_equal(tdm_seq_gen_uniform(g, UINT64_MAX), 0x910A2DEC89025CC1ull);
    for (int i = 0; i < 1000; i++) assert_int_equal(tdm_seq_gen_uniform(g, 1), 0);
    for (int i = 0; i < 1000; i++) assert_true(tdm_seq_gen_uniform(g, 3) < 3);
    tdm_seq_gen_free(g);
}

static void check_lengths(uint32_t lo, uint32_t hi, double mean, int n) {
    tdm_seq_gen *g = make(tu_next(&(tu_rng){lo * 31 + hi + tu_seed_value}), 7, 1.0, lo, hi, mean);
    uint32_t *buf = malloc(((size_t)hi + 1) * sizeof *buf);
    uint32_t *hist = calloc((size_t)hi + 1, sizeof *hist);
    double sum = 0.0, sum2 = 0.0;
    for (int i = 0; i < n; i++) {
        size_t len = 0;
        tdm_seq_gen_next(g, buf, &len);
        tu_check(len >= lo && len <= hi, "[%u, %u]: length %zu", lo, hi, len);
        for (size_t k = 0; k < len; k++) tu_check(buf[k] < 7, "rank %u out of the vocabulary", buf[k]);
        hist[len]++;
        sum += (double)len, sum2 += (double)len * (double)len;
    }
    double m = sum / n, var = sum2 / n - m * m, se = sqrt(var / n);
    /* Six standard errors, plus a hair for the exact-mean cases where the variance is ~0. */
    tu_check(fabs(m - mean) <= 6 * se + 1e-3 * (1.0 + mean), "[%u, %u] mean %g: got %.4f (standard error %.4f)", lo, hi,
             mean, m, se);
    if (mean < hi - 1 && mean > lo + 1 && hi - lo <= 12) /* short ranges: every length occurs */
        for (uint32_t k = lo; k <= hi; k++) tu_check(hist[k] > 0, "[%u, %u] mean %g: length %u never drawn", lo, hi, mean, k);
    free(buf), free(hist);
    tdm_seq_gen_free(g);
}

static void test_gen_lengths(void **state) {
    (void)state;
    check_lengths(2, 60, 20.0, 100000);   /* the defaults */
    check_lengths(0, 10, 5.0, 100000);    /* empty patterns allowed */
    check_lengths(0, 10, 1.5, 100000);
    check_lengths(5, 5, 5.0, 20000);      /* one length only */
    check_lengths(1, 1000, 3.0, 100000);  /* long tail cut far away */
    check_lengths(1, 1000, 700.0, 10000); /* mean above the middle: increasing weights */
    check_lengths(10, 20, 15.0, 100000);
    check_lengths(10, 20, 19.5, 100000);  /* near the top of the range */
    check_lengths(10, 20, 10.2, 100000);  /* near the bottom */
    check_lengths(0, 3, 3.0, 20000);      /* exactly the top: all patterns of length 3 */
    check_lengths(0, 3, 0.0, 20000);      /* exactly the bottom */
    check_lengths(1, 5000, 4995.0, 2000); /* long range, mean at the top: no overflow */
}

static void test_gen_symbols(void **state) {
    (void)state;
    enum { DRAWS = 400000 };
    static const struct {
        uint32_t vocab;
        double s;
    } cases[] = {{1000, 1.0}, {50, 2.0}, {10, 0.0}, {1, 1.0}, {50000, 1.0}, {300, 0.5}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        uint32_t v = cases[c].vocab;
        double s = cases[c].s;
        tdm_seq_gen *g = make(tu_seed_value + c, v, s, 1, 4, 2.0);
        uint32_t *hist = calloc(v, sizeof *hist);
        for (int i = 0; i < DRAWS; i++) {
            uint32_t x = tdm_seq_gen_symbol(g);
            tu_check(x < v, "vocab %u: rank %u", v, x);
            hist[x]++;
        }
        /* Expected counts of the Zipf law p(r) ~ (r+1)^-s; ranks with many expected draws must be within
         * 6 standard deviations (binomial) of them, and rank 0 is the most frequent when s > 0. */
        double total = 0.0;
        for (uint32_t k = 0; k < v; k++) total += pow(k + 1.0, -s);
        for (uint32_t k = 0; k < v && k < 200; k++) {
            double p = pow(k + 1.0, -s) / total, want = p * DRAWS, sd = sqrt(DRAWS * p * (1 - p));
            if (want < 100) continue;
            tu_check(fabs(hist[k] - want) <= 6 * sd + 1e-9, "vocab %u s %g: rank %u drawn %u times, expected %.0f", v, s, k,
                     hist[k], want);
        }
        if (s > 0)
            for (uint32_t k = 1; k < v; k++) tu_check(hist[0] > hist[k], "vocab %u s %g: rank %u drawn more than rank 0", v, s, k);
        if (v == 1000 && s == 1.0) {
            double ratio = (double)hist[0] / hist[1];
            tu_check(ratio > 1.9 && ratio < 2.1, "rank 0 / rank 1 = %g, expected 2", ratio);
        }
        free(hist);
        tdm_seq_gen_free(g);
    }
}

static void test_gen_invalid(void **state) {
    (void)state;
    tdm_seq_gen *const sentinel = (tdm_seq_gen *)(uintptr_t)0x77;
    tdm_seq_gen_opts o;
    struct {
        const char *what;
        uint32_t vocab, lo, hi;
        double mean, s;
    } bad[] = {
        {"vocab 0", 0, 2, 60, 20.0, 1.0},
        {"min > max", 10, 5, 4, 4.5, 1.0},
        {"mean below min", 10, 5, 10, 4.9, 1.0},
        {"mean above max", 10, 5, 10, 10.1, 1.0},
        {"mean NaN", 10, 5, 10, NAN, 1.0},
        {"mean infinite", 10, 5, 10, INFINITY, 1.0},
        {"zipf negative", 10, 5, 10, 6.0, -0.5},
        {"zipf too large", 10, 5, 10, 6.0, 10.5},
        {"zipf NaN", 10, 5, 10, 6.0, NAN},
        {"max_len 2^32-1", 10, 0, UINT32_MAX, 3.0, 1.0},
        {"max_len 2^32-1, min 1", 10, 1, UINT32_MAX, 3.0, 1.0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tdm_seq_gen_opts_init(&o);
        o.vocab = bad[i].vocab, o.min_len = bad[i].lo, o.max_len = bad[i].hi, o.mean_len = bad[i].mean, o.zipf_s = bad[i].s;
        tdm_seq_gen *g = sentinel;
        tu_check(tdm_seq_gen_new(&o, &g) == TDM_E_INVAL, "%s accepted", bad[i].what);
        assert_ptr_equal(g, sentinel);
        assert_true(strlen(tdm_last_error()) > 0);
    }
    tdm_seq_gen_opts_init(&o);
    tdm_seq_gen *g = sentinel;
    assert_int_equal(tdm_seq_gen_new(NULL, &g), TDM_E_INVAL);
    assert_int_equal(tdm_seq_gen_new(&o, NULL), TDM_E_INVAL);
    assert_ptr_equal(g, sentinel);
    /* The edges of the valid range are accepted. */
    o.zipf_s = 0.0;
    assert_int_equal(tdm_seq_gen_new(&o, &g), TDM_OK);
    tdm_seq_gen_free(g);
    o.zipf_s = 10.0, o.mean_len = 60.0, o.vocab = 1;
    assert_int_equal(tdm_seq_gen_new(&o, &g), TDM_OK);
    tdm_seq_gen_free(g);
}

int main(void) {
    tu_init_seed("test_gen");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gen_defaults),
        cmocka_unit_test(test_gen_deterministic),
        cmocka_unit_test(test_gen_stream_is_splitmix64),
        cmocka_unit_test(test_gen_lengths),
        cmocka_unit_test(test_gen_symbols),
        cmocka_unit_test(test_gen_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
