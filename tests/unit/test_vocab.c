/* test_vocab.c: unit tests of strict UTF-8 validation/decoding and of the vocabulary (symbol strings to
 * dense ids). Symbols arrive from users and files, so the validator must refuse every ill-formed form
 * (overlongs, surrogates, values above U+10FFFF, truncations, stray continuation bytes) and say where;
 * the vocabulary must give dense, stable, first-seen ids for any valid string (empty and NUL-containing
 * ones included), never grow on lookups, and keep code points that match an independent decoder. Random
 * inputs are checked against a reference validator written here in the classic "decode, then check
 * ranges" form, which is independent of the library's table-driven one. */
#include "unit_common.h"

#include "tandem/seq.h"

/* ---- reference UTF-8 --------------------------------------------------------------------------------- */

/* Offset of the first ill-formed sequence (len if none); the code points of the valid prefix go to cps. */
static size_t ref_utf8(const char *str, size_t len, uint32_t *cps, size_t *ncp) {
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, k = 0;
    while (i < len) {
        unsigned c = s[i];
        size_t n;
        uint32_t cp, min;
        if (c < 0x80) n = 1, cp = c, min = 0;
        else if ((c & 0xE0) == 0xC0) n = 2, cp = c & 0x1F, min = 0x80;
        else if ((c & 0xF0) == 0xE0) n = 3, cp = c & 0x0F, min = 0x800;
        else if ((c & 0xF8) == 0xF0) n = 4, cp = c & 0x07, min = 0x10000;
        else break;
        if (len - i < n) break;
        size_t t = 1;
        for (; t < n && (s[i + t] & 0xC0) == 0x80; t++) cp = (cp << 6) | (s[i + t] & 0x3F);
        if (t < n || cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) break;
        if (cps) cps[k] = cp;
        k++;
        i += n;
    }
    if (ncp) *ncp = k;
    return i;
}

/* A random valid code point, favouring the boundaries of each encoding length. */
static uint32_t random_cp(tu_rng *r) {
    static const uint32_t edges[] = {0x0, 0x7F, 0x80, 0x7FF, 0x800, 0xFFF, 0x1000, 0xD7FF, 0xE000, 0xFFFD,
                                     0xFFFF, 0x10000, 0x3FFFF, 0x40000, 0xFFFFF, 0x100000, 0x10FFFF, ' '};
    switch (tu_below(r, 6)) {
    case 0: return edges[tu_below(r, sizeof edges / sizeof *edges)];
    case 1: return (uint32_t)tu_range(r, 0x80, 0x7FF);
    case 2: {
        uint32_t c = (uint32_t)tu_range(r, 0x800, 0xFFFF);
        return c >= 0xD800 && c <= 0xDFFF ? c + 0x800 : c;
    }
    case 3: return (uint32_t)tu_range(r, 0x10000, 0x10FFFF);
    default: return (uint32_t)tu_below(r, 0x80);
    }
}

/* ---- validation -------------------------------------------------------------------------------------- */

typedef struct {
    const char *bytes;
    size_t len;
} bytes_case;
#define B(s) {s, sizeof(s) - 1}

static void test_utf8_valid(void **state) {
    (void)state;
    static const bytes_case ok[] = {
        B(""), B("abc"), B("a\0b"), B("\xC3\xA9"), B("\xE2\x82\xAC"), B("\xF0\x9D\x84\x9E"), B("\x7F"),
        B("\xC2\x80"), B("\xDF\xBF"), B("\xE0\xA0\x80"), B("\xED\x9F\xBF"), B("\xEE\x80\x80"), B("\xEF\xBF\xBF"),
        B("\xF0\x90\x80\x80"), B("\xF4\x8F\xBF\xBF"), B("h\xC3\xA9llo w\xC3\xB6rld \xE6\x97\xA5\xE6\x9C\xAC"),
    };
    static const uint32_t first_cp[] = {0, 'a', 'a', 0xE9, 0x20AC, 0x1D11E, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF,
                                        0xE000, 0xFFFF, 0x10000, 0x10FFFF, 'h'};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        tdm_clear_error();
        tu_check(tdm_seq_utf8_check(ok[i].bytes, ok[i].len) == TDM_OK, "case %zu refused: %s", i, tdm_last_error());
        uint32_t cps[64], want[64];
        size_t n = tdm_seq_utf8_decode(ok[i].bytes, ok[i].len, cps), wn;
        assert_int_equal(ref_utf8(ok[i].bytes, ok[i].len, want, &wn), ok[i].len);
        assert_int_equal(n, wn);
        if (n) {
            assert_memory_equal(cps, want, n * sizeof *cps);
            assert_int_equal(cps[0], first_cp[i]);
        }
    }
    assert_int_equal(tdm_seq_utf8_check(NULL, 0), TDM_OK);
}

static void test_utf8_invalid(void **state) {
    (void)state;
    static const bytes_case bad[] = {
        B("\xC0\x80"),         B("\xC1\xBF"),         B("\xE0\x80\x80"),     B("\xE0\x9F\xBF"),
        B("\xF0\x80\x80\x80"), B("\xF0\x8F\xBF\xBF"), B("\xED\xA0\x80"),     B("\xED\xBF\xBF"),
        B("\xF4\x90\x80\x80"), B("\xF5\x80\x80\x80"), B("\xF7\xBF\xBF\xBF"), B("\xF8\x88\x80\x80\x80"),
        B("\xFF"),             B("\xFE"),             B("\x80"),             B("\xBF"),
        B("\xC3"),             B("\xE2\x82"),         B("\xF0\x9D\x84"),     B("\xC3\x41"),
        B("\xE2\x41\xAC"),     B("\xE2\x82\x41"),     B("\xF0\x9D\x84\x41"), B("\xF0\x9D\x41\x9E"),
        B("\xC3\xC3\xA9"),     B("\xE2\x82\xAC\xAC"),
    };
    /* Where the library must report (offset inside the case). */
    static const size_t at[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                0, 0, 0, 0, 0, 0, 0, 0, 0, 3};
    _Static_assert(sizeof at / sizeof *at == sizeof bad / sizeof *bad, "one offset per case");
    tu_rng r = tu_rng_for(1);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        for (int rep = 0; rep < 8; rep++) {
            /* A random valid prefix moves the offset; a valid suffix must not hide the error. */
            char buf[128];
            size_t pre = 0;
            int npre = rep == 0 ? 0 : (int)tu_below(&r, 6);
            for (int k = 0; k < npre; k++) pre += tu_utf8_encode(random_cp(&r), buf + pre);
            memcpy(buf + pre, bad[i].bytes, bad[i].len);
            size_t len = pre + bad[i].len;
            if (rep & 1) len += tu_utf8_encode(random_cp(&r), buf + len);
            size_t want = pre + at[i];
            assert_int_equal(ref_utf8(buf, len, NULL, NULL), want); /* the reference agrees on the case */
            tdm_clear_error();
            int rc = tdm_seq_utf8_check(buf, len);
            tu_check(rc == TDM_E_UTF8, "case %zu rep %d accepted", i, rep);
            char needle[32];
            snprintf(needle, sizeof needle, "byte %zu ", want);
            tu_check(strstr(tdm_last_error(), needle) != NULL, "case %zu: message \"%s\" lacks \"%s\"", i,
                     tdm_last_error(), needle);
        }
    }
}

static void test_utf8_random_against_reference(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(2);
    static const char *const nasty[] = {"\xC0\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE0\x80\x80", "\xF0\x80\x80\x80", "\xC3", "\xE2\x82", "\x80"};
    int invalid_seen = 0;
    for (int iter = 0; iter < 30000; iter++) {
        char buf[256];
        size_t len = 0;
        int pieces = (int)tu_below(&r, 24);
        for (int p = 0; p < pieces; p++) {
            uint64_t kind = tu_below(&r, 40);
            if (kind == 0) buf[len++] = (char)tu_below(&r, 256);
            else if (kind == 1) {
                const char *s = nasty[tu_below(&r, sizeof nasty / sizeof *nasty)];
                memcpy(buf + len, s, strlen(s));
                len += strlen(s);
            } else if (kind == 2 && len) buf[tu_below(&r, len)] ^= (char)(1u << tu_below(&r, 8));
            else len += tu_utf8_encode(random_cp(&r), buf + len);
        }
        uint32_t want[256], got[256];
        size_t wn;
        size_t bad = ref_utf8(buf, len, want, &wn);
        tdm_clear_error();
        int rc = tdm_seq_utf8_check(buf, len);
        if (bad == len) {
            tu_check(rc == TDM_OK, "iter %d: valid text refused: %s", iter, tdm_last_error());
            size_t n = tdm_seq_utf8_decode(buf, len, got);
            tu_check(n == wn, "iter %d: %zu code points, want %zu", iter, n, wn);
            if (n) assert_memory_equal(got, want, n * sizeof *got);
        } else {
            invalid_seen++;
            tu_check(rc == TDM_E_UTF8, "iter %d: ill-formed text accepted (bad at %zu)", iter, bad);
            char needle[32];
            snprintf(needle, sizeof needle, "byte %zu ", bad);
            tu_check(strstr(tdm_last_error(), needle) != NULL, "iter %d: \"%s\" lacks \"%s\"", iter, tdm_last_error(), needle);
        }
    }
    assert_true(invalid_seen > 1000 && invalid_seen < 29000); /* both sides were exercised */
}

/* ---- vocabulary -------------------------------------------------------------------------------------- */

static void check_symbol(const tdm_seq_vocab *v, uint32_t id, const char *s, size_t len) {
    const char *got;
    size_t n;
    assert_int_equal(tdm_seq_vocab_get(v, id, &got, &n), TDM_OK);
    tu_check(n == len && (len == 0 || memcmp(got, s, len) == 0), "symbol %u bytes differ", id);
    const uint32_t *cps;
    size_t ncp, wn;
    uint32_t want[512];
    assert_true(len < 512);
    assert_int_equal(ref_utf8(s, len, want, &wn), len);
    assert_int_equal(tdm_seq_vocab_codepoints(v, id, &cps, &ncp), TDM_OK);
    tu_check(ncp == wn && (wn == 0 || memcmp(cps, want, wn * sizeof *cps) == 0), "symbol %u code points differ", id);
    uint32_t fid = UINT32_MAX;
    assert_int_equal(tdm_seq_vocab_find(v, s, len, &fid), TDM_OK);
    assert_int_equal(fid, id);
}

static void test_vocab_basics(void **state) {
    (void)state;
    tdm_alloc_stats s0, s1;
    tdm_alloc_get_stats(&s0);
    tdm_seq_vocab *v = NULL;
    assert_int_equal(tdm_seq_vocab_new(&v), TDM_OK);
    assert_int_equal(tdm_seq_vocab_size(v), 0);
    uint32_t id = 77;
    assert_int_equal(tdm_seq_vocab_find(v, "a", 1, &id), TDM_E_NOTFOUND);
    assert_int_equal(id, 77);
    static const bytes_case syms[] = {B("a"), B("b"), B(""), B("a\0b"), B("a\0c"), B("\0"), B("\xC3\xA9"), B("ab"), B("\xF0\x9D\x84\x9E x")};
    const size_t n = sizeof syms / sizeof *syms;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(tdm_seq_vocab_intern(v, syms[i].bytes, syms[i].len, &id), TDM_OK);
        assert_int_equal(id, i);
        assert_int_equal(tdm_seq_vocab_size(v), i + 1);
    }
    for (size_t i = 0; i < n; i++) { /* again: same ids, no growth */
        assert_int_equal(tdm_seq_vocab_intern(v, syms[i].bytes, syms[i].len, &id), TDM_OK);
        assert_int_equal(id, i);
        check_symbol(v, (uint32_t)i, syms[i].bytes, syms[i].len);
    }
    assert_int_equal(tdm_seq_vocab_size(v), n);
    const uint32_t *cps;
    size_t ncp;
    assert_int_equal(tdm_seq_vocab_codepoints(v, 3, &cps, &ncp), TDM_OK);
    assert_int_equal(ncp, 3);
    assert_int_equal(cps[0], 'a');
    assert_int_equal(cps[1], 0);
    assert_int_equal(cps[2], 'b');
    assert_int_equal(tdm_seq_vocab_codepoints(v, 2, &cps, &ncp), TDM_OK);
    assert_int_equal(ncp, 0);
    /* Lookups never grow it. */
    assert_int_equal(tdm_seq_vocab_find(v, "zz", 2, &id), TDM_E_NOTFOUND);
    assert_int_equal(tdm_seq_vocab_find(v, "a\0", 2, &id), TDM_E_NOTFOUND);
    assert_int_equal(tdm_seq_vocab_find(v, "\xC0\x80", 2, &id), TDM_E_NOTFOUND);
    assert_int_equal(tdm_seq_vocab_size(v), n);
    /* Invalid UTF-8 is refused with its offset, and nothing is added. */
    assert_int_equal(tdm_seq_vocab_intern(v, "ab\xC0\x80", 4, &id), TDM_E_UTF8);
    assert_non_null(strstr(tdm_last_error(), "byte 2"));
    assert_int_equal(tdm_seq_vocab_intern(v, "\xED\xA0\x80", 3, &id), TDM_E_UTF8);
    assert_int_equal(tdm_seq_vocab_size(v), n);
    assert_int_equal(tdm_seq_vocab_find(v, "ab\xC0\x80", 4, &id), TDM_E_NOTFOUND);
    /* Ids out of range. */
    const char *s;
    size_t len;
    assert_int_equal(tdm_seq_vocab_get(v, (uint32_t)n, &s, &len), TDM_E_RANGE);
    assert_int_equal(tdm_seq_vocab_get(v, UINT32_MAX, &s, &len), TDM_E_RANGE);
    assert_int_equal(tdm_seq_vocab_codepoints(v, (uint32_t)n, &cps, &ncp), TDM_E_RANGE);
    assert_int_equal(tdm_seq_vocab_codepoints(v, TDM_SEQ_UNKNOWN, &cps, &ncp), TDM_E_RANGE);
    tdm_seq_vocab_free(v);
    tdm_seq_vocab_free(NULL);
    tdm_alloc_get_stats(&s1);
    assert_int_equal(s1.live, s0.live);
    assert_int_equal(s1.current_bytes, s0.current_bytes);
}

typedef struct {
    char *s;
    size_t len;
} str;

static int cmp_str(const void *x, const void *y) {
    const str *a = x, *b = y;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    return a->len ? memcmp(a->s, b->s, a->len) : 0;
}

/* Short strings over a tiny alphabet (NUL, multi-byte and 4-byte characters included), so that random
 * draws collide often: the model must tell re-interns from first sightings. */
static void test_vocab_random_model(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(3);
    static const uint32_t alphabet[] = {'a', 'b', 0, 0xE9, 0x20AC, 0x1D11E, ' ', 0x7FF, 0x10FFFF};
    enum { POOL = 4000 };
    str *pool = calloc(POOL, sizeof *pool);
    size_t npool = 0;
    for (int i = 0; i < POOL; i++) {
        char buf[64];
        size_t len = 0;
        int ncp = (int)tu_below(&r, 6);
        for (int k = 0; k < ncp; k++) len += tu_utf8_encode(alphabet[tu_below(&r, sizeof alphabet / sizeof *alphabet)], buf + len);
        pool[npool].s = malloc(len + 1);
        memcpy(pool[npool].s, buf, len);
        pool[npool++].len = len;
    }
    qsort(pool, npool, sizeof *pool, cmp_str);
    size_t w = 0; /* distinct strings only */
    for (size_t i = 0; i < npool; i++) {
        if (w && !cmp_str(&pool[w - 1], &pool[i])) {
            free(pool[i].s);
            continue;
        }
        pool[w++] = pool[i];
    }
    npool = w;
    for (size_t i = npool - 1; i > 0; i--) { /* shuffle so first-seen order is random */
        size_t j = (size_t)tu_below(&r, i + 1);
        str t = pool[i];
        pool[i] = pool[j], pool[j] = t;
    }
    int64_t *id_of = malloc(npool * sizeof *id_of);
    for (size_t i = 0; i < npool; i++) id_of[i] = -1;
    tdm_seq_vocab *v;
    assert_int_equal(tdm_seq_vocab_new(&v), TDM_OK);
    uint32_t next = 0;
    for (int step = 0; step < 20000; step++) {
        size_t k = (size_t)tu_below(&r, npool);
        uint32_t id;
        if (tu_below(&r, 4) == 0) { /* find: never grows, agrees with the model */
            int rc = tdm_seq_vocab_find(v, pool[k].s, pool[k].len, &id);
            if (id_of[k] < 0) assert_int_equal(rc, TDM_E_NOTFOUND);
            else {
                assert_int_equal(rc, TDM_OK);
                assert_int_equal(id, id_of[k]);
            }
            assert_int_equal(tdm_seq_vocab_size(v), next);
            continue;
        }
        assert_int_equal(tdm_seq_vocab_intern(v, pool[k].s, pool[k].len, &id), TDM_OK);
        if (id_of[k] < 0) {
            tu_check(id == next, "step %d: new symbol got id %u, want %u", step, id, next);
            id_of[k] = next++;
        } else {
            tu_check(id == id_of[k], "step %d: symbol changed id", step);
        }
        assert_int_equal(tdm_seq_vocab_size(v), next);
    }
    for (size_t k = 0; k < npool; k++)
        if (id_of[k] >= 0) check_symbol(v, (uint32_t)id_of[k], pool[k].s, pool[k].len);
    tdm_seq_vocab_free(v);
    for (size_t i = 0; i < npool; i++) free(pool[i].s);
    free(pool);
    free(id_of);
}

/* 100k distinct symbols (a unique multi-byte "number", a separator and a random tail) interned in random
 * order with repeats: the table grows many times and every id must survive each growth. */
static void test_vocab_many_symbols(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(4);
    enum { N = 100000 };
    static const uint32_t digits[16] = {'0', '1', '2', '3', 'x', 'y', 0, 0xE9, 0x3B1, 0x20AC, 0x65E5, 0xFFFD, 0x1D11E, 0x1F600, 0x10FFFF, 0x7F};
    char **sym = malloc(N * sizeof *sym);
    size_t *len = malloc(N * sizeof *len);
    for (uint32_t i = 0; i < N; i++) {
        char buf[96];
        size_t n = 0;
        uint32_t x = i;
        do n += tu_utf8_encode(digits[x & 15], buf + n), x >>= 4;
        while (x);
        buf[n++] = '|';
        int tail = (int)tu_below(&r, 4);
        for (int k = 0; k < tail; k++) {
            uint32_t c = random_cp(&r);
            n += tu_utf8_encode(c == '|' ? 'q' : c, buf + n);
        }
        sym[i] = malloc(n);
        memcpy(sym[i], buf, n);
        len[i] = n;
    }
    int64_t *id_of = malloc(N * sizeof *id_of);
    for (uint32_t i = 0; i < N; i++) id_of[i] = -1;
    tdm_seq_vocab *v;
    assert_int_equal(tdm_seq_vocab_new(&v), TDM_OK);
    uint32_t next = 0;
    /* A random permutation first (every symbol seen), then random repeats. */
    uint32_t *order = malloc(N * sizeof *order);
    for (uint32_t i = 0; i < N; i++) order[i] = i;
    for (uint32_t i = N - 1; i > 0; i--) {
        uint32_t j = (uint32_t)tu_below(&r, i + 1), t = order[i];
        order[i] = order[j], order[j] = t;
    }
    for (uint32_t step = 0; step < N + N / 2; step++) {
        uint32_t k = step < N ? order[step] : (uint32_t)tu_below(&r, N);
        if (step < N && tu_below(&r, 8) == 0 && next) { /* interleave repeats of earlier symbols */
            uint32_t old = order[tu_below(&r, step)], id;
            assert_int_equal(tdm_seq_vocab_intern(v, sym[old], len[old], &id), TDM_OK);
            tu_check(id == id_of[old], "step %u: repeat got %u, want %" PRId64, step, id, id_of[old]);
        }
        uint32_t id;
        assert_int_equal(tdm_seq_vocab_intern(v, sym[k], len[k], &id), TDM_OK);
        if (id_of[k] < 0) {
            tu_check(id == next, "step %u: new id %u, want %u", step, id, next);
            id_of[k] = next++;
        } else
            tu_check(id == id_of[k], "step %u: id changed", step);
    }
    assert_int_equal(tdm_seq_vocab_size(v), N);
    for (uint32_t i = 0; i < N; i++) check_symbol(v, (uint32_t)id_of[i], sym[i], len[i]);
    /* Strings close to stored ones are not found. */
    for (int t = 0; t < 2000; t++) {
        uint32_t i = (uint32_t)tu_below(&r, N), id;
        char buf[128];
        memcpy(buf, sym[i], len[i]);
        buf[len[i]] = '~';
        assert_int_equal(tdm_seq_vocab_find(v, buf, len[i] + 1, &id), TDM_E_NOTFOUND);
        assert_int_equal(tdm_seq_vocab_find(v, buf, len[i] - 1, &id), TDM_E_NOTFOUND); /* drops the separator or a tail byte */
    }
    assert_int_equal(tdm_seq_vocab_size(v), N);
    tdm_seq_vocab_free(v);
    for (uint32_t i = 0; i < N; i++) free(sym[i]);
    free(sym);
    free(len);
    free(id_of);
    free(order);
}

int main(void) {
    tu_init_seed("test_vocab");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_utf8_valid),
        cmocka_unit_test(test_utf8_invalid),
        cmocka_unit_test(test_utf8_random_against_reference),
        cmocka_unit_test(test_vocab_basics),
        cmocka_unit_test(test_vocab_random_model),
        cmocka_unit_test(test_vocab_many_symbols),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
