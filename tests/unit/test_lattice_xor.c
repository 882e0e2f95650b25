/* test_lattice_xor.c: unit tests of the XOR transform (spec section 4): the spec's test vectors, results
 * against a byte-at-a-time reference written here over the spec's grid of lengths, key lengths, offsets
 * and pointer misalignments, involution, chunked = one shot, in-place use, refusal of partial overlap and
 * empty keys, and the seeded SplitMix64 stream (vectors, random seeds written back, equal to an explicit
 * key made from the same stream). */
#include "unit_common.h"

#include "tandem/lattice.h"

/* The CPU reference: device results are compared with it by tests/cross/test_lattice_cross.c. */
static int cpu_ctx(tdm_ctx **out) {
    tdm_config cfg;
    tdm_config_init(&cfg);
    cfg.device = TDM_DEVICE_CPU;
    return tdm_init(out, &cfg);
}

static tdm_ctx *ctx;

static int setup(void **state) {
    (void)state;
    return cpu_ctx(&ctx);
}
static int teardown(void **state) {
    (void)state;
    tdm_destroy(ctx);
    return 0;
}

static void ref_xor(const uint8_t *in, uint8_t *out, size_t n, const uint8_t *key, size_t len, uint64_t off) {
    for (size_t i = 0; i < n; i++) out[i] = in[i] ^ key[(off + i) % len];
}

static void fill(tu_rng *r, uint8_t *p, size_t n) {
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)tu_next(r);
}

static void test_vectors(void **state) {
    (void)state;
    const uint8_t in[5] = {0x05, 0x0a, 0x0f, 0x14, 0x19}, key[2] = {0xff, 0x00};
    const uint8_t want0[5] = {0xfa, 0x0a, 0xf0, 0x14, 0xe6}, want1[5] = {0x05, 0xf5, 0x0f, 0xeb, 0x19};
    uint8_t out[5];
    tdm_lattice_key k = {key, 2, 0};
    assert_int_equal(tdm_lattice_xor(ctx, in, out, 5, &k, 0), TDM_OK);
    assert_memory_equal(out, want0, 5);
    k.offset = 1;
    assert_int_equal(tdm_lattice_xor(ctx, in, out, 5, &k, 0), TDM_OK);
    assert_memory_equal(out, want1, 5);
    /* Seeded stream vectors. */
    const uint8_t s0[16] = {0xaf, 0xcd, 0x1d, 0x7b, 0x39, 0xa8, 0x20, 0xe2, 0xf4, 0x65, 0xb9, 0xa1, 0x6a, 0x9e, 0x78, 0x6e};
    const uint8_t s42[8] = {0x95, 0x6e, 0xeb, 0x2f, 0x26, 0x32, 0xd7, 0xbd};
    uint8_t buf[16];
    tdm_lattice_key_from_seed(0, 0, 16, buf);
    assert_memory_equal(buf, s0, 16);
    tdm_lattice_key_from_seed(42, 0, 8, buf);
    assert_memory_equal(buf, s42, 8);
    tdm_lattice_key_from_seed(0, 5, 9, buf); /* a window of the stream */
    assert_memory_equal(buf, s0 + 5, 9);
    uint8_t zeros[16] = {0};
    uint64_t seed = 0;
    assert_int_equal(tdm_lattice_xor_seeded(ctx, zeros, buf, 16, &seed, 0, 0), TDM_OK);
    assert_memory_equal(buf, s0, 16);
    assert_int_equal(tdm_lattice_xor_seeded(ctx, zeros, buf, 3, &seed, 13, 0), TDM_OK);
    assert_memory_equal(buf, s0 + 13, 3);
}

/* The spec's grid: n x key length x offset, with misaligned pointers, against the reference; then the
 * involution. */
static void test_grid(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(401);
    static const size_t ns[] = {0, 1, 7, 8, 9, 4095, 4096, 1000003};
    static const uint64_t offs[] = {0, 1, 13};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++) {
        const size_t n = ns[a];
        const size_t lens[] = {1, 3, 8, n ? n : 1, n + 5};
        uint8_t *inb = malloc(n + 32), *outb = malloc(n + 32), *want = malloc(n + 1), *back = malloc(n + 32),
                *keyb = malloc(n + 32);
        for (size_t b = 0; b < 5; b++) {
            for (size_t c = 0; c < 3; c++) {
                /* The million-byte case runs on a sample of the grid to keep the test fast. */
                if (n > 100000 && (b + c) % 2) continue;
                size_t mi = (size_t)tu_range(&r, 0, 15), mo = (size_t)tu_range(&r, 0, 15), mk = (size_t)tu_range(&r, 0, 15);
                uint8_t *in = inb + mi, *out = outb + mo, *key = keyb + mk;
                fill(&r, in, n);
                fill(&r, key, lens[b]);
                tdm_lattice_key k = {key, lens[b], offs[c]};
                ref_xor(in, want, n, key, lens[b], offs[c]);
                int rc = tdm_lattice_xor(ctx, in, out, n, &k, 0);
                tu_check(rc == TDM_OK, "n %zu len %zu off %llu: %s", n, lens[b], (unsigned long long)offs[c], tdm_last_error());
                tu_check(!n || !memcmp(out, want, n), "n %zu len %zu off %llu misaligned %zu/%zu/%zu", n, lens[b],
                         (unsigned long long)offs[c], mi, mo, mk);
                assert_int_equal(tdm_lattice_xor(ctx, out, back + mo, n, &k, 0), TDM_OK);
                tu_check(!n || !memcmp(back + mo, in, n), "involution n %zu len %zu off %llu", n, lens[b], (unsigned long long)offs[c]);
                /* Seeded: involution and equality with an explicit no-cycle key from the same stream. */
                uint64_t seed = tu_next(&r);
                assert_int_equal(tdm_lattice_xor_seeded(ctx, in, out, n, &seed, offs[c], 0), TDM_OK);
                tdm_lattice_key_from_seed(seed, offs[c], n, keyb);
                tdm_lattice_key ks = {keyb, n ? n : 1, 0};
                assert_int_equal(tdm_lattice_xor(ctx, in, back, n, &ks, TDM_LATTICE_XOR_NO_CYCLE), TDM_OK);
                tu_check(!n || !memcmp(back, out, n), "seeded n %zu off %llu vs explicit stream key", n, (unsigned long long)offs[c]);
                assert_int_equal(tdm_lattice_xor_seeded(ctx, out, back, n, &seed, offs[c], 0), TDM_OK);
                tu_check(!n || !memcmp(back, in, n), "seeded involution n %zu", n);
            }
        }
        free(inb), free(outb), free(want), free(back), free(keyb);
    }
}

/* Processing [p, p+m) with offset + p equals the one-shot result, for cyclic and seeded keys. */
static void test_chunked(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(402);
    for (int round = 0; round < 200; round++) {
        size_t n = (size_t)tu_range(&r, 0, 5000), len = (size_t)tu_range(&r, 1, 600);
        uint64_t off = tu_below(&r, 1000), seed = tu_next(&r);
        uint8_t *in = malloc(n + 1), *one = malloc(n + 1), *chunk = malloc(n + 1), *key = malloc(len), *sone = malloc(n + 1);
        fill(&r, in, n);
        fill(&r, key, len);
        tdm_lattice_key k = {key, len, off};
        assert_int_equal(tdm_lattice_xor(ctx, in, one, n, &k, 0), TDM_OK);
        assert_int_equal(tdm_lattice_xor_seeded(ctx, in, sone, n, &seed, off, 0), TDM_OK);
        for (size_t p = 0; p < n;) {
            size_t m = (size_t)tu_range(&r, 1, 700);
            if (m > n - p) m = n - p;
            tdm_lattice_key kc = {key, len, off + p};
            assert_int_equal(tdm_lattice_xor(ctx, in + p, chunk + p, m, &kc, 0), TDM_OK);
            p += m;
        }
        tu_check(!n || !memcmp(one, chunk, n), "round %d: chunked != one shot (n %zu len %zu)", round, n, len);
        for (size_t p = 0; p < n;) {
            size_t m = (size_t)tu_range(&r, 1, 50);
            if (m > n - p) m = n - p;
            assert_int_equal(tdm_lattice_xor_seeded(ctx, in + p, chunk + p, m, &seed, off + p, 0), TDM_OK);
            p += m;
        }
        tu_check(!n || !memcmp(sone, chunk, n), "round %d: seeded chunked != one shot", round);
        /* In place equals out of place. */
        memcpy(chunk, in, n);
        assert_int_equal(tdm_lattice_xor(ctx, chunk, chunk, n, &k, 0), TDM_OK);
        tu_check(!n || !memcmp(one, chunk, n), "round %d: in place", round);
        free(in), free(one), free(chunk), free(key), free(sone);
    }
}

/* Typed arrays are XORed as their bytes: an int32 300 is never truncated to a byte. */
static void test_typed(void **state) {
    (void)state;
    int32_t v[4] = {300, -1, 65536, 7}, out[4], back[4];
    const uint8_t key[3] = {0x11, 0x22, 0x33};
    tdm_lattice_key k = {key, 3, 0};
    assert_int_equal(tdm_lattice_xor(ctx, v, out, sizeof v, &k, 0), TDM_OK);
    uint8_t want[16];
    ref_xor((const uint8_t *)v, want, 16, key, 3, 0);
    assert_memory_equal(out, want, 16);
    assert_int_equal(tdm_lattice_xor(ctx, out, back, sizeof v, &k, 0), TDM_OK);
    assert_memory_equal(back, v, sizeof v);
    assert_int_equal(back[0], 300);
}

static void test_errors(void **state) {
    (void)state;
    uint8_t buf[64] = {0}, key[4] = {1, 2, 3, 4};
    tdm_lattice_key k = {key, 0, 0};
    assert_int_equal(tdm_lattice_xor(ctx, buf, buf, 8, &k, 0), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "key length 0"));
    assert_int_equal(tdm_lattice_xor(ctx, buf, buf, 0, &k, 0), TDM_E_INVAL); /* len 0 even for n = 0 */
    k.len = 4;
    assert_int_equal(tdm_lattice_xor(ctx, NULL, NULL, 0, &k, 0), TDM_OK); /* n = 0 is a no-op */
    assert_int_equal(tdm_lattice_xor(ctx, buf, buf + 3, 8, &k, 0), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "overlap"));
    assert_int_equal(tdm_lattice_xor(ctx, buf + 3, buf, 8, &k, 0), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_xor(ctx, buf, buf + 8, 8, &k, 0), TDM_OK); /* adjacent is fine */
    assert_int_equal(tdm_lattice_xor(ctx, NULL, buf, 8, &k, 0), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_xor(ctx, buf, buf, 8, NULL, 0), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_xor(ctx, buf, buf, 8, &k, 0x40), TDM_E_INVAL);
    /* NO_CYCLE: offset + n must fit the key. */
    assert_int_equal(tdm_lattice_xor(ctx, buf, buf, 4, &k, TDM_LATTICE_XOR_NO_CYCLE), TDM_OK);
    assert_int_equal(tdm_lattice_xor(ctx, buf, buf, 5, &k, TDM_LATTICE_XOR_NO_CYCLE), TDM_E_INVAL);
    k.offset = 1;
    assert_int_equal(tdm_lattice_xor(ctx, buf, buf, 4, &k, TDM_LATTICE_XOR_NO_CYCLE), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_xor(ctx, buf, buf, 3, &k, TDM_LATTICE_XOR_NO_CYCLE), TDM_OK);
    uint64_t seed = 1;
    assert_int_equal(tdm_lattice_xor_seeded(ctx, buf, buf + 1, 8, &seed, 0, 0), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_xor_seeded(ctx, buf, buf, 8, NULL, 0, 0), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_xor_seeded(ctx, buf, buf, 8, &seed, 0, 0x1), TDM_E_INVAL);
}

/* A random seed is written back so the mask can always be undone. */
static void test_random_seed(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(403);
    uint8_t in[100], out[100], back[100];
    fill(&r, in, sizeof in);
    uint64_t s1 = 12345, s2 = 12345;
    assert_int_equal(tdm_lattice_xor_seeded(ctx, in, out, sizeof in, &s1, 0, TDM_LATTICE_SEED_RANDOM), TDM_OK);
    assert_int_equal(tdm_lattice_xor_seeded(ctx, out, back, sizeof in, &s1, 0, 0), TDM_OK);
    assert_memory_equal(back, in, sizeof in);
    assert_int_equal(tdm_lattice_xor_seeded(ctx, in, out, sizeof in, &s2, 0, TDM_LATTICE_SEED_RANDOM), TDM_OK);
    assert_true(s1 != s2); /* 2^-64 chance of a false failure */
}

/* Inputs of several megabytes run in parallel chunks; every chunk must start at its own key position. */
static void test_large(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(404);
    const size_t n = ((size_t)3 << 20) + 17;
    uint8_t *in = malloc(n), *out = malloc(n), *want = malloc(n), *key = malloc(1000);
    fill(&r, in, n);
    for (int round = 0; round < 4; round++) {
        size_t len = round == 0 ? 1 : round == 1 ? 7 : round == 2 ? 256 : 999;
        uint64_t off = tu_next(&r) >> (round * 8);
        fill(&r, key, len);
        tdm_lattice_key k = {key, len, off};
        ref_xor(in, want, n, key, len, off);
        assert_int_equal(tdm_lattice_xor(ctx, in, out, n, &k, 0), TDM_OK);
        tu_check(!memcmp(out, want, n), "large cyclic xor, len %zu offset %llu", len, (unsigned long long)off);
        uint64_t seed = tu_next(&r);
        assert_int_equal(tdm_lattice_xor_seeded(ctx, in, out, n, &seed, off, 0), TDM_OK);
        tdm_lattice_key_from_seed(seed, off, n, want);
        for (size_t i = 0; i < n; i++) want[i] ^= in[i];
        tu_check(!memcmp(out, want, n), "large seeded xor, offset %llu", (unsigned long long)off);
    }
    free(in), free(out), free(want), free(key);
}

int main(void) {
    tu_init_seed("test_lattice_xor");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors), cmocka_unit_test(test_grid),   cmocka_unit_test(test_chunked),
        cmocka_unit_test(test_typed),   cmocka_unit_test(test_errors), cmocka_unit_test(test_random_seed), cmocka_unit_test(test_large),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
