/* test_lcs.c: unit tests of the bit-parallel LCS and KATO's ratio formulas. The bit-parallel algorithm
 * packs 64 symbols per word and carries additions across words, so its errors hide at word boundaries
 * and in heavy repetition: thousands of random pairs (lengths 0..300 with 63/64/65/127/128/129 forced,
 * alphabets from 1 symbol to arbitrary 32-bit values) are compared with a plain O(n*m) dynamic program.
 * The ratios must be the exact IEEE doubles KATO produces, including the *100/100 round trip that moves
 * some fractions by one ulp (spec/kato.md section 2.3), and the character metric must match the spec's
 * worked examples E4, E4b and E4c and a code-point reference on multi-byte symbols. */
#include "unit_common.h"

#include "tandem/seq.h"
#include "seq/seq_internal.h"

/* The textbook dynamic program, two rows. */
static size_t ref_lcs(const uint32_t *a, size_t na, const uint32_t *b, size_t nb) {
    size_t *prev = calloc(nb + 1, sizeof *prev), *cur = calloc(nb + 1, sizeof *cur);
    for (size_t i = 1; i <= na; i++) {
        cur[0] = 0;
        for (size_t j = 1; j <= nb; j++) {
            if (a[i - 1] == b[j - 1]) cur[j] = prev[j - 1] + 1;
            else cur[j] = prev[j] > cur[j - 1] ? prev[j] : cur[j - 1];
        }
        size_t *t = prev;
        prev = cur, cur = t;
    }
    size_t r = prev[nb];
    free(prev), free(cur);
    return r;
}

static size_t lcs(const uint32_t *a, size_t na, const uint32_t *b, size_t nb) {
    size_t len = SIZE_MAX;
    int rc = tdm_seq_lcs_length(a, na, b, nb, &len);
    tu_check(rc == TDM_OK, "tdm_seq_lcs_length: %d", rc);
    return len;
}

static const size_t special_lengths[] = {0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129,
                                         191, 192, 193, 255, 256, 257, 299, 300};
#define NSPECIAL (sizeof special_lengths / sizeof *special_lengths)

static size_t pick_length(tu_rng *r) {
    return tu_below(r, 2) ? special_lengths[tu_below(r, NSPECIAL)] : (size_t)tu_below(r, 301);
}

/* Symbols: an alphabet of k values spread over the 32-bit range (k = 0 means arbitrary values). */
typedef struct {
    uint32_t k, base, stride;
} alphabet;

static alphabet pick_alphabet(tu_rng *r) {
    static const uint32_t sizes[] = {1, 2, 2, 3, 4, 4, 8, 26, 300, 0};
    alphabet al = {sizes[tu_below(r, sizeof sizes / sizeof *sizes)], (uint32_t)tu_next(r), (uint32_t)tu_next(r) | 1};
    if (tu_below(r, 4) == 0) al.base = UINT32_MAX - 1, al.stride = 1; /* UINT32_MAX is a symbol like any other */
    return al;
}

static uint32_t draw(tu_rng *r, alphabet al) {
    if (!al.k) return (uint32_t)tu_next(r);
    return al.base + (uint32_t)tu_below(r, al.k) * al.stride;
}

static void test_lcs_random_against_dp(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(1);
    uint32_t a[300], b[320];
    unsigned char hit_a[301] = {0}, hit_b[301] = {0};
    for (int iter = 0; iter < 6000; iter++) {
        alphabet al = pick_alphabet(&r);
        size_t na = pick_length(&r), nb = pick_length(&r);
        for (size_t i = 0; i < na; i++) a[i] = draw(&r, al);
        if (na && tu_below(&r, 3) == 0) { /* b as an edited copy of a: long common runs, long carries */
            nb = 0;
            for (size_t i = 0; i < na && nb < 299; i++) {
                uint64_t e = tu_below(&r, 10);
                if (e == 0) continue;                                    /* delete */
                if (e == 1 && nb < 299) b[nb++] = draw(&r, al);           /* insert */
                b[nb++] = e == 2 ? draw(&r, al) : a[i];                   /* substitute or keep */
            }
        } else {
            for (size_t j = 0; j < nb; j++) b[j] = draw(&r, al);
        }
        hit_a[na] = hit_b[nb] = 1;
        size_t want = ref_lcs(a, na, b, nb), got = lcs(a, na, b, nb), rev = lcs(b, nb, a, na);
        tu_check(got == want, "iter %d: |a| %zu |b| %zu alphabet %u: lcs %zu, want %zu", iter, na, nb, al.k, got, want);
        tu_check(rev == want, "iter %d: reversed arguments give %zu, want %zu", iter, rev, want);
    }
    /* The word boundaries were exercised on both sides. */
    static const size_t must[] = {0, 1, 63, 64, 65, 127, 128, 129, 300};
    for (size_t i = 0; i < sizeof must / sizeof *must; i++) {
        tu_check(hit_a[must[i]], "no a of length %zu was tried", must[i]);
        tu_check(hit_b[must[i]], "no b of length %zu was tried", must[i]);
    }
}

static void test_lcs_structured(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(2);
    enum { N = 1000 };
    uint32_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    /* One symbol repeated: every bit carries. */
    for (size_t i = 0; i < N; i++) a[i] = b[i] = 7;
    static const size_t lens[] = {0, 1, 63, 64, 65, 127, 128, 129, 200, 511, 512, 513, 1000};
    for (size_t x = 0; x < sizeof lens / sizeof *lens; x++)
        for (size_t y = 0; y < sizeof lens / sizeof *lens; y++) {
            size_t want = lens[x] < lens[y] ? lens[x] : lens[y];
            tu_check(lcs(a, lens[x], b, lens[y]) == want, "all-equal %zu vs %zu", lens[x], lens[y]);
        }
    /* Identical random sequences, a sequence against its reverse, and disjoint alphabets. */
    for (size_t i = 0; i < N; i++) a[i] = (uint32_t)tu_below(&r, 5);
    for (size_t x = 0; x < sizeof lens / sizeof *lens; x++) {
        size_t n = lens[x];
        assert_int_equal(lcs(a, n, a, n), n);
        for (size_t i = 0; i < n; i++) b[i] = a[n - 1 - i];
        assert_int_equal(lcs(a, n, b, n), ref_lcs(a, n, b, n));
        for (size_t i = 0; i < n; i++) b[i] = a[i] + 5;
        assert_int_equal(lcs(a, n, b, n), 0);
        /* A subsequence of a is its own LCS with a. */
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (tu_below(&r, 3)) b[m++] = a[i];
        assert_int_equal(lcs(a, n, b, m), m);
        assert_int_equal(lcs(b, m, a, n), m);
    }
    /* Longer than the random test, against the dynamic program. */
    for (int k = 0; k < 6; k++) {
        size_t na = 500 + (size_t)tu_below(&r, 501), nb = 1 + (size_t)tu_below(&r, 1000);
        for (size_t i = 0; i < na; i++) a[i] = (uint32_t)tu_below(&r, k + 2);
        for (size_t j = 0; j < nb; j++) b[j] = (uint32_t)tu_below(&r, k + 2);
        assert_int_equal(lcs(a, na, b, nb), ref_lcs(a, na, b, nb));
    }
    size_t len = 99;
    assert_int_equal(tdm_seq_lcs_length(NULL, 0, NULL, 0, &len), TDM_OK);
    assert_int_equal(len, 0);
    assert_int_equal(tdm_seq_lcs_length(NULL, 3, b, 3, &len), TDM_E_INVAL);
    assert_int_equal(tdm_seq_lcs_length(a, 3, b, 3, NULL), TDM_E_INVAL);
    free(a), free(b);
}

/* ---- ratios ---------------------------------------------------------------------------------------- */

static void test_lcs_ratio_bits(void **state) {
    (void)state;
    /* The spec's round-trip values (section 2.3): (2L/T)*100/100 is not always 2L/T. */
    tu_assert_same_double(tdm_seq_lcs_ratio(1, 1, 2), 0.6666666666666665, "2/3");
    tu_assert_same_double(tdm_seq_lcs_ratio(1, 3, 3), 0.33333333333333326, "1/3");
    tu_assert_same_double(tdm_seq_lcs_ratio(1, 6, 6), 0.16666666666666663, "1/6");
    tu_assert_same_double(tdm_seq_lcs_ratio(5, 5, 7), 0.8333333333333335, "5/6");
    tu_assert_same_double(tdm_seq_lcs_ratio(3, 6, 7), 0.4615384615384615, "6/13");
    tu_assert_same_double(tdm_seq_lcs_ratio(2, 2, 2), 1.0, "1");
    tu_assert_same_double(tdm_seq_lcs_ratio(0, 0, 0), 0.0, "T = 0");
    tu_assert_same_double(tdm_seq_lcs_ratio(0, 5, 0), 0.0, "L = 0");
    tu_assert_same_double(tdm_seq_lcs_ratio(3, 7, 3), 0.6, "E4 token");
    tu_assert_same_double(tdm_seq_lcs_ratio(3, 4, 3), 0.8571428571428571, "E4c token");
    tu_assert_same_double(tdm_seq_lcs_ratio(2, 3, 4), 0.5714285714285714, "E1 token");
    assert_true(tdm_seq_lcs_ratio(1, 1, 2) != 2.0 / 3.0); /* the artifact is real: KATO rejects 2/3 at thr 2/3 */
    /* Exactly 71 pairs (L, T), T <= 40, move by the round trip (spec section 2.3). */
    int moved = 0;
    for (size_t t = 1; t <= 40; t++)
        for (size_t l = 0; 2 * l <= t; l++) moved += tdm_seq_lcs_ratio(l, t - t / 2, t / 2) != 2.0 * (double)l / (double)t;
    assert_int_equal(moved, 71);
    /* Everywhere: the formula computed here, bit for bit, whatever the split of T between a and b. */
    for (size_t t = 0; t <= 600; t++)
        for (size_t l = 0; 2 * l <= t; l++) {
            double want = t ? ((2.0 * (double)l / (double)t) * 100.0) / 100.0 : 0.0;
            size_t na = l + (t - 2 * l) / 3, nb = t - na;
            tu_assert_same_double(tdm_seq_lcs_ratio(l, na, nb), want, "L %zu T %zu", l, t);
            tu_assert_same_double(tdm_seq_lcs_ratio(l, nb, na), want, "L %zu T %zu swapped", l, t);
        }
}

static void test_char_and_difflib_ratio_bits(void **state) {
    (void)state;
    tu_assert_same_double(tdm_seq_char_ratio(0, 0, 0), 1.0, "both empty");
    tu_assert_same_double(tdm_seq_char_ratio(0, 3, 0), 0.0, "one empty");
    tu_assert_same_double(tdm_seq_char_ratio(8, 20, 8), 0.5714285714285714, "E4");
    tu_assert_same_double(tdm_seq_char_ratio(8, 11, 9), 0.8, "E4b");
    tu_assert_same_double(tdm_seq_char_ratio(20, 27, 20), 0.851063829787234, "E4c");
    for (size_t t = 1; t <= 600; t++)
        for (size_t l = 0; 2 * l <= t; l++) {
            double want = ((1.0 - (double)(t - 2 * l) / (double)t) * 100.0) / 100.0;
            tu_assert_same_double(tdm_seq_char_ratio(l, t - t / 3, t / 3), want, "char L %zu T %zu", l, t);
            tu_assert_same_double(tdm_seq_difflib_ratio(l, t / 3, t - t / 3), 2.0 * (double)l / (double)t, "difflib M %zu T %zu", l, t);
        }
    tu_assert_same_double(tdm_seq_difflib_ratio(0, 0, 0), 1.0, "difflib both empty");
    tu_assert_same_double(tdm_seq_difflib_ratio(0, 4, 0), 0.0, "difflib one empty");
    tu_assert_same_double(tdm_seq_difflib_ratio(1, 3, 4), 0.2857142857142857, "E1");
    tu_assert_same_double(tdm_seq_difflib_ratio(1, 3, 3), 0.3333333333333333, "E2");
    tu_assert_same_double(tdm_seq_difflib_ratio(2, 3, 3), 0.6666666666666666, "E2 reversed");
    tu_assert_same_double(tdm_seq_difflib_ratio(2, 3, 200), 0.019704433497536946, "E3");
    tu_assert_same_double(tdm_seq_difflib_ratio(1, 200, 2), 0.009900990099009901, "E5");
}

/* ---- character LCS ------------------------------------------------------------------------------------ */

static uint32_t intern(tdm_seq_vocab *v, const char *s) {
    uint32_t id;
    assert_int_equal(tdm_seq_vocab_intern(v, s, strlen(s), &id), TDM_OK);
    return id;
}

static double char_sim(tdm_seq_vocab *v, const char *const *a, size_t na, const char *const *b, size_t nb) {
    uint32_t ia[16], ib[16];
    for (size_t i = 0; i < na; i++) ia[i] = intern(v, a[i]);
    for (size_t i = 0; i < nb; i++) ib[i] = intern(v, b[i]);
    size_t l, la, lb;
    assert_int_equal(tdm_seq_char_lcs(v, ia, na, ib, nb, &l, &la, &lb), TDM_OK);
    return tdm_seq_char_ratio(l, la, lb);
}

static void test_char_lcs_spec_examples(void **state) {
    (void)state;
    tdm_seq_vocab *v;
    assert_int_equal(tdm_seq_vocab_new(&v), TDM_OK);
    const char *m7[] = {"m1", "m2", "m3", "m4", "m5", "m6", "m7"};
    tu_assert_same_double(char_sim(v, m7, 7, m7, 3), 0.5714285714285714, "E4");
    tu_assert_same_double(char_sim(v, m7, 3, m7, 7), 0.5714285714285714, "E4 reversed");
    const char *hw[] = {"hello", "world"}, *hp[] = {"help", "word"};
    tu_assert_same_double(char_sim(v, hw, 2, hp, 2), 0.8, "E4b");
    const char *tk[] = {"token1", "token2", "token3", "token4"};
    tu_assert_same_double(char_sim(v, tk, 4, tk, 3), 0.851063829787234, "E4c");
    /* The joined lengths include the separating spaces. */
    uint32_t ids[4];
    for (int i = 0; i < 4; i++) ids[i] = intern(v, tk[i]);
    size_t l, la, lb;
    assert_int_equal(tdm_seq_char_lcs(v, ids, 4, ids, 3, &l, &la, &lb), TDM_OK);
    assert_int_equal(l, 20);
    assert_int_equal(la, 27);
    assert_int_equal(lb, 20);
    assert_int_equal(tdm_seq_char_lcs(v, ids, 4, ids, 3, &l, NULL, NULL), TDM_OK); /* lengths optional */
    /* Both empty: 1.0; an empty symbol still counts its separator. */
    assert_int_equal(tdm_seq_char_lcs(v, NULL, 0, NULL, 0, &l, &la, &lb), TDM_OK);
    assert_int_equal(la + lb + l, 0);
    tu_assert_same_double(tdm_seq_char_ratio(l, la, lb), 1.0, "both empty");
    uint32_t e = intern(v, ""), two[2] = {e, e};
    assert_int_equal(tdm_seq_char_lcs(v, two, 2, two, 1, &l, &la, &lb), TDM_OK);
    assert_int_equal(la, 1);
    assert_int_equal(lb, 0);
    assert_int_equal(l, 0);
    /* Multi-byte symbols: code points, not bytes. "日本 語" vs "日本語": LCS 3 of 4 + 3. */
    const char *ja1[] = {"\xE6\x97\xA5\xE6\x9C\xAC", "\xE8\xAA\x9E"}, *ja2[] = {"\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E"};
    uint32_t j1[2] = {intern(v, ja1[0]), intern(v, ja1[1])}, j2 = intern(v, ja2[0]);
    assert_int_equal(tdm_seq_char_lcs(v, j1, 2, &j2, 1, &l, &la, &lb), TDM_OK);
    assert_int_equal(la, 4);
    assert_int_equal(lb, 3);
    assert_int_equal(l, 3);
    tu_assert_same_double(tdm_seq_char_ratio(l, la, lb), ((1.0 - 1.0 / 7.0) * 100.0) / 100.0, "multi-byte");
    /* Ids outside the vocabulary. */
    uint32_t badid = tdm_seq_vocab_size(v);
    assert_int_equal(tdm_seq_char_lcs(v, &badid, 1, ids, 1, &l, &la, &lb), TDM_E_RANGE);
    assert_int_equal(tdm_seq_char_lcs(v, ids, 1, &badid, 1, &l, &la, &lb), TDM_E_RANGE);
    badid = TDM_SEQ_UNKNOWN;
    assert_int_equal(tdm_seq_char_lcs(v, ids, 1, &badid, 1, &l, &la, &lb), TDM_E_RANGE);
    tdm_seq_vocab_free(v);
}

static void test_char_lcs_random(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(3);
    enum { NSYM = 60, MAXCP = 6 };
    static const uint32_t chars[] = {'a', 'b', 'c', ' ', 0xE9, 0x3B1, 0x65E5, 0x672C, 0x1F600, 0x10FFFF, '1'};
    tdm_seq_vocab *v;
    assert_int_equal(tdm_seq_vocab_new(&v), TDM_OK);
    uint32_t cps[NSYM][MAXCP], ncp[NSYM];
    uint32_t nsym = 0;
    while (nsym < NSYM) {
        char buf[64];
        size_t len = 0;
        uint32_t n = (uint32_t)tu_below(&r, MAXCP + 1);
        for (uint32_t k = 0; k < n; k++) len += tu_utf8_encode(cps[nsym][k] = chars[tu_below(&r, sizeof chars / sizeof *chars)], buf + len);
        uint32_t id;
        assert_int_equal(tdm_seq_vocab_intern(v, buf, len, &id), TDM_OK);
        if (id != nsym) continue; /* drew an existing symbol */
        ncp[nsym++] = n;
    }
    for (int iter = 0; iter < 1500; iter++) {
        uint32_t a[40], b[40], ja[40 * (MAXCP + 1)], jb[40 * (MAXCP + 1)];
        size_t na = (size_t)tu_below(&r, 41), nb = (size_t)tu_below(&r, 41), la = 0, lb = 0;
        uint32_t k = 1 + (uint32_t)tu_below(&r, NSYM); /* few symbols: many shared characters */
        for (size_t i = 0; i < na; i++) a[i] = (uint32_t)tu_below(&r, k);
        for (size_t i = 0; i < nb; i++) b[i] = (uint32_t)tu_below(&r, k);
        for (size_t i = 0; i < na; i++) {
            if (i) ja[la++] = ' ';
            for (uint32_t c = 0; c < ncp[a[i]]; c++) ja[la++] = cps[a[i]][c];
        }
        for (size_t i = 0; i < nb; i++) {
            if (i) jb[lb++] = ' ';
            for (uint32_t c = 0; c < ncp[b[i]]; c++) jb[lb++] = cps[b[i]][c];
        }
        size_t l, gla, glb;
        assert_int_equal(tdm_seq_char_lcs(v, a, na, b, nb, &l, &gla, &glb), TDM_OK);
        tu_check(gla == la && glb == lb, "iter %d: joined lengths %zu %zu, want %zu %zu", iter, gla, glb, la, lb);
        size_t want = ref_lcs(ja, la, jb, lb);
        tu_check(l == want, "iter %d: char lcs %zu, want %zu", iter, l, want);
        size_t t = la + lb;
        double ws = t ? ((1.0 - (double)(t - 2 * want) / (double)t) * 100.0) / 100.0 : 1.0;
        tu_assert_same_double(tdm_seq_char_ratio(l, gla, glb), ws, "iter %d", iter);
    }
    tdm_seq_vocab_free(v);
}

/* tdm_seq_lcs_many (the grouped scoring of large lcs threshold queries) against the dynamic program:
 * random stores of patterns 0..100 long (longer than a group, 64, included; in every fourth store only
 * three lengths, so that a length holds many groups of sixteen) over small and large alphabets, queries
 * of 0..64 symbols with some unknown, and id lists that are dense (a whole range, in order or reversed:
 * one loop maps the stretch), sparse (every few ids: rows per pattern), of one length, or single. Each
 * list is scored through the AVX-512 code (where the CPU has it) and the portable code. */
static void test_lcs_many_against_dp(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(7);
    enum { NP = 600, VOCAB = 300 };
    uint64_t *off = malloc((NP + 1) * sizeof *off);
    uint32_t *arena = malloc(NP * 100 * sizeof *arena), *ids = malloc(NP * sizeof *ids), q[64];
    uint8_t *cnt = malloc(NP), *map = malloc(VOCAB + 4);
    int modes[4] = {0};
    for (int iter = 0; iter < 60; iter++) {
        uint32_t k = iter % 3 == 0 ? 3 : iter % 3 == 1 ? 20 : VOCAB; /* alphabet size */
        off[0] = 0;
        for (size_t p = 0; p < NP; p++) {
            size_t len = iter % 4 == 3 ? 5 + 14 * tu_below(&r, 3) /* 5, 19 or 33 */
                         : tu_below(&r, 8) == 0 ? 65 + tu_below(&r, 36) : tu_below(&r, 65);
            for (size_t t = 0; t < len; t++) arena[off[p] + t] = (uint32_t)tu_below(&r, k);
            off[p + 1] = off[p] + len;
        }
        /* stores of three lengths (many groups of sixteen) meet queries of 1-32 symbols and of 33-64 in
           turn: the two sixteen-pattern forms */
        size_t m = iter % 5 == 0 ? 64 : iter % 4 == 3 ? (iter % 8 == 3 ? 1 : 33) + tu_below(&r, 32) : tu_below(&r, 65);
        for (size_t i = 0; i < m; i++) q[i] = tu_below(&r, 10) == 0 ? TDM_SEQ_UNKNOWN : (uint32_t)tu_below(&r, k);
        tdm_seq_lcsq lq;
        assert_int_equal(tdm_seq_lcsq_build(&lq, q, m, 1), TDM_OK);
        uint64_t mask1[256] = {0};
        memset(map, 0, VOCAB + 4);
        for (uint32_t sym = 0; sym < VOCAB; sym++) {
            int64_t sl = tdm_seq_valset_find(&lq.set, sym);
            if (sl >= 0) map[sym] = (uint8_t)(sl + 1), mask1[sl + 1] = lq.masks[sl];
        }
        tdm_seq_lcs_many_in in = {arena, off, map, mask1, m >= 64 ? ~0ull : (1ull << m) - 1};
        tdm_seq_lcs_many_scratch sc = {0};
        for (int mode = 0; mode < 4; mode++) {
            size_t n = 0, lo = tu_below(&r, NP / 2), want_len = tu_below(&r, 30);
            for (size_t p = lo; p < NP; p++) {
                if (mode == 0) ids[n++] = (uint32_t)p;
                else if (mode == 1 && tu_below(&r, 5) == 0) ids[n++] = (uint32_t)p;
                else if (mode == 2 && off[p + 1] - off[p] == want_len) ids[n++] = (uint32_t)p;
                else if (mode == 3 && n == 0) ids[n++] = (uint32_t)p;
            }
            if (mode == 0 && iter % 2) /* any order: reversed */
                for (size_t i = 0; i < n / 2; i++) {
                    uint32_t t = ids[i];
                    ids[i] = ids[n - 1 - i], ids[n - 1 - i] = t;
                }
            modes[mode] += n > 0;
            for (int portable = 0; portable <= 1; portable++) {
                tdm_seq_portable_kernels = portable;
                memset(cnt, 0xAB, NP);
                assert_int_equal(tdm_seq_lcs_many(&in, ids, n, cnt, &sc), 0);
                tdm_seq_portable_kernels = 0;
                for (size_t i = 0; i < n; i++) {
                    size_t len = off[ids[i] + 1] - off[ids[i]], want = ref_lcs(q, m, arena + off[ids[i]], len);
                    tu_check(cnt[i] == want, "iter %d mode %d portable %d: id %u (length %zu), |q| %zu: %u, want %zu", iter,
                             mode, portable, ids[i], len, m, cnt[i], want);
                }
            }
        }
        tdm_seq_lcs_many_free(&sc);
        tdm_seq_lcsq_clear(&lq);
    }
    for (int mode = 0; mode < 4; mode++) tu_check(modes[mode] > 20, "mode %d ran %d times", mode, modes[mode]);
    free(off), free(arena), free(ids), free(cnt), free(map);
}

int main(void) {
    tu_init_seed("test_lcs");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lcs_random_against_dp),
        cmocka_unit_test(test_lcs_structured),
        cmocka_unit_test(test_lcs_many_against_dp),
        cmocka_unit_test(test_lcs_ratio_bits),
        cmocka_unit_test(test_char_and_difflib_ratio_bits),
        cmocka_unit_test(test_char_lcs_spec_examples),
        cmocka_unit_test(test_char_lcs_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
