/* unit_common.h: what every cmocka unit test shares: the seed (TANDEM_TEST_SEED, printed at start so a
 * failing run can be replayed), a small deterministic random stream (splitmix64) that each test derives
 * from the seed and its own salt so tests do not depend on their order, and helpers to compare doubles bit
 * for bit. Header-only so that each test stays one .c file. */
#ifndef TANDEM_UNIT_COMMON_H
#define TANDEM_UNIT_COMMON_H

#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#define TU_DEFAULT_SEED 20240611ull

static uint64_t tu_seed_value;

/* Reads TANDEM_TEST_SEED (decimal or 0x hex) once and prints the seed in use. */
static inline uint64_t tu_init_seed(const char *test_name) {
    const char *env = getenv("TANDEM_TEST_SEED");
    tu_seed_value = TU_DEFAULT_SEED;
    if (env && *env) {
        char *end;
        unsigned long long v = strtoull(env, &end, 0);
        if (*end != '\0') {
            fprintf(stderr, "%s: TANDEM_TEST_SEED=\"%s\" is not an integer\n", test_name, env);
            exit(2);
        }
        tu_seed_value = v;
    }
    printf("%s: seed %" PRIu64 " (replay with TANDEM_TEST_SEED=%" PRIu64 ")\n", test_name, tu_seed_value,
           tu_seed_value);
    fflush(stdout);
    return tu_seed_value;
}

typedef struct {
    uint64_t s;
} tu_rng;

static inline uint64_t tu_next(tu_rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A stream for one test: the run's seed mixed with a per-test salt. */
static inline tu_rng tu_rng_for(uint64_t salt) {
    tu_rng r = {tu_seed_value ^ (salt * 0xD1B54A32D192ED03ull)};
    tu_next(&r);
    return r;
}

/* Uniform in [0, n) (n > 0); the tiny modulo bias does not matter for tests. */
static inline uint64_t tu_below(tu_rng *r, uint64_t n) { return tu_next(r) % n; }

/* Uniform in [lo, hi]. */
static inline int64_t tu_range(tu_rng *r, int64_t lo, int64_t hi) {
    return lo + (int64_t)tu_below(r, (uint64_t)(hi - lo) + 1);
}

/* UTF-8 bytes of code point cp (a valid scalar value) into out; returns how many (1..4). */
static inline size_t tu_utf8_encode(uint32_t cp, char *out) {
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) return o[0] = (unsigned char)cp, 1;
    if (cp < 0x800) return o[0] = (unsigned char)(0xC0 | cp >> 6), o[1] = (unsigned char)(0x80 | (cp & 0x3F)), 2;
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | cp >> 12), o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | cp >> 18), o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)), o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

static inline double tu_unit(tu_rng *r) { return (double)(tu_next(r) >> 11) * 0x1.0p-53; }

static inline uint64_t tu_bits(double x) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

/* Fails the test, printing the message, when the two doubles are not the same bits. */
#define tu_assert_same_double(x, y, ...)                                                                    \
    do {                                                                                                   \
        double tu_x_ = (x), tu_y_ = (y);                                                                   \
        if (tu_bits(tu_x_) != tu_bits(tu_y_)) {                                                            \
            print_error("doubles differ: %.17g (0x%016" PRIx64 ") vs %.17g (0x%016" PRIx64 "): ", tu_x_,   \
                        tu_bits(tu_x_), tu_y_, tu_bits(tu_y_));                                            \
            print_error(__VA_ARGS__);                                                                      \
            print_error("\n");                                                                             \
            fail();                                                                                        \
        }                                                                                                  \
    } while (0)

/* Fails with a formatted message when cond is false (the random tests say which case broke). */
#define tu_check(cond, ...)                                                                                \
    do {                                                                                                   \
        if (!(cond)) {                                                                                     \
            print_error("check failed: %s: ", #cond);                                                      \
            print_error(__VA_ARGS__);                                                                      \
            print_error("\n");                                                                             \
            fail();                                                                                        \
        }                                                                                                  \
    } while (0)

/* Defines `ctx`, one context of two threads for a cmocka group: made by the group setup `setup`,
 * destroyed by the group teardown `teardown` (the test includes tandem/tandem.h first). */
#define TU_CTX2_GROUP                                                                                      \
    static tdm_ctx *ctx;                                                                                   \
    static int setup(void **state) {                                                                       \
        (void)state;                                                                                       \
        tdm_config c;                                                                                      \
        tdm_config_init(&c);                                                                               \
        c.threads = 2;                                                                                     \
        return tdm_init(&ctx, &c);                                                                         \
    }                                                                                                      \
    static int teardown(void **state) {                                                                    \
        (void)state;                                                                                       \
        tdm_destroy(ctx);                                                                                  \
        return 0;                                                                                          \
    }

#endif
