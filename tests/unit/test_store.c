/* test_store.c: unit tests of the append-only pattern store and its file format. The store is the data
 * every query scans and the file is what survives restarts, so both are checked against a model kept
 * here: add/get/count/total/max length and the length index on random stores (empty and 100k-symbol
 * patterns included), refusals that must leave the store unchanged (ids outside the vocabulary, invalid
 * UTF-8), a save/load round trip, and hostile files: every truncation, every single-byte change, bad
 * magic, a newer version, and files whose checksum is valid but whose content is not (out-of-vocabulary
 * ids, duplicate or ill-formed symbols, lengths that do not add up, huge counts that must not trigger
 * huge allocations). Loading must fail with the right code, never crash, never half-load. */
#define _GNU_SOURCE
#include "unit_common.h"

#include <dirent.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_INLINE_ALL /* the project uses xxHash header-only */
#include <xxhash.h>

#include "tandem/seq.h"

static tdm_ctx *ctx;
static char tmpdir[256];

/* File layout (src/seq/store_io.c, docs/seq.md): 64-byte header, vocab lengths (u32 each), vocab bytes,
 * pattern lengths (u32 each), arena (u32 each), XXH64 (seed 0) of everything before it. */
enum { OFF_VERSION = 8, OFF_ENDIAN = 12, OFF_VCOUNT = 16, OFF_VBYTES = 24, OFF_PCOUNT = 32, OFF_SCOUNT = 40, HEADER = 64 };

static int setup(void **state) {
    (void)state;
    tdm_config c;
    tdm_config_init(&c);
    c.threads = 2;
    if (tdm_init(&ctx, &c)) return -1;
    /* tmpfs when there is one: saving fsyncs, which is slow on some disks and proves nothing here. */
    const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/tandem_test_store.XXXXXX", base);
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    DIR *d = opendir(tmpdir);
    if (d) {
        struct dirent *e;
        char p[512];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
                unlink(p);
            }
        closedir(d);
    }
    rmdir(tmpdir);
    tdm_destroy(ctx);
    return 0;
}

static void path_in_tmp(char *out, size_t cap, const char *name) { snprintf(out, cap, "%s/%s", tmpdir, name); }

static unsigned char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    unsigned char *buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void write_all(const char *path, const void *buf, size_t len) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (len) assert_int_equal(fwrite(buf, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void fix_checksum(unsigned char *buf, size_t len) {
    uint64_t sum = XXH64(buf, len - 8, 0);
    memcpy(buf + len - 8, &sum, 8);
}

static uint64_t get64(const unsigned char *b, size_t off) {
    uint64_t v;
    memcpy(&v, b + off, 8);
    return v;
}
static void put64(unsigned char *b, size_t off, uint64_t v) { memcpy(b + off, &v, 8); }
static void put32(unsigned char *b, size_t off, uint32_t v) { memcpy(b + off, &v, 4); }

/* ---- a model of a store ------------------------------------------------------------------------------- */

typedef struct {
    uint32_t npat;
    uint32_t **pat;
    size_t *len;
    uint32_t nvocab;
    char **sym;
    size_t *symlen;
} model;

static void model_free(model *m) {
    for (uint32_t i = 0; i < m->npat; i++) free(m->pat[i]);
    for (uint32_t i = 0; i < m->nvocab; i++) free(m->sym[i]);
    free(m->pat), free(m->len), free(m->sym), free(m->symlen);
    memset(m, 0, sizeof *m);
}

static void model_add(model *m, const uint32_t *syms, size_t n) {
    m->pat = realloc(m->pat, (m->npat + 1) * sizeof *m->pat);
    m->len = realloc(m->len, (m->npat + 1) * sizeof *m->len);
    m->pat[m->npat] = malloc((n ? n : 1) * sizeof(uint32_t));
    if (n) memcpy(m->pat[m->npat], syms, n * sizeof(uint32_t));
    m->len[m->npat++] = n;
}

static void model_sym(model *m, const char *s, size_t n) {
    m->sym = realloc(m->sym, (m->nvocab + 1) * sizeof *m->sym);
    m->symlen = realloc(m->symlen, (m->nvocab + 1) * sizeof *m->symlen);
    m->sym[m->nvocab] = malloc(n + 1);
    memcpy(m->sym[m->nvocab], s, n);
    m->symlen[m->nvocab++] = n;
}

/* Checks everything observable of s against the model. */
static void check_store(const tdm_seq_store *s, const model *m) {
    assert_int_equal(tdm_seq_store_count(s), m->npat);
    uint64_t total = 0;
    uint32_t maxlen = 0;
    for (uint32_t i = 0; i < m->npat; i++) {
        total += m->len[i];
        if (m->len[i] > maxlen) maxlen = (uint32_t)m->len[i];
        const uint32_t *syms;
        size_t n;
        assert_int_equal(tdm_seq_store_get(s, i, &syms, &n), TDM_OK);
        tu_check(n == m->len[i], "pattern %u: length %zu, want %zu", i, n, m->len[i]);
        if (n) tu_check(memcmp(syms, m->pat[i], n * sizeof *syms) == 0, "pattern %u differs", i);
    }
    assert_int_equal(tdm_seq_store_total_symbols(s), total);
    assert_int_equal(tdm_seq_store_max_length(s), maxlen);
    const uint32_t *syms;
    size_t n;
    assert_int_equal(tdm_seq_store_get(s, m->npat, &syms, &n), TDM_E_RANGE);
    assert_int_equal(tdm_seq_store_get(s, UINT32_MAX, &syms, &n), TDM_E_RANGE);
    /* The length index: for each length, the ids of that length, ascending. */
    uint32_t *want = malloc((m->npat + 1) * sizeof *want);
    size_t seen = 0;
    for (uint32_t len = 0; len <= maxlen + 1; len++) {
        if (len > 2000 && len < maxlen) { /* long stores: only the lengths that occur */
            int any = 0;
            for (uint32_t i = 0; i < m->npat && !any; i++) any = m->len[i] == len;
            if (!any) continue;
        }
        size_t nw = 0;
        for (uint32_t i = 0; i < m->npat; i++)
            if (m->len[i] == len) want[nw++] = i;
        const uint32_t *ids;
        size_t nid;
        tdm_seq_store_by_length(s, len, &ids, &nid);
        tu_check(nid == nw, "length %u: %zu ids, want %zu", len, nid, nw);
        if (nw) tu_check(memcmp(ids, want, nw * sizeof *ids) == 0, "length %u: ids differ", len);
        seen += nw;
    }
    assert_int_equal(seen, m->npat);
    const uint32_t *ids;
    size_t nid;
    tdm_seq_store_by_length(s, UINT32_MAX, &ids, &nid);
    assert_int_equal(nid, 0);
    free(want);
    const tdm_seq_vocab *v = tdm_seq_store_vocab_const(s);
    assert_int_equal(tdm_seq_vocab_size(v), m->nvocab);
    for (uint32_t i = 0; i < m->nvocab; i++) {
        const char *b;
        size_t bl;
        assert_int_equal(tdm_seq_vocab_get(v, i, &b, &bl), TDM_OK);
        tu_check(bl == m->symlen[i] && (!bl || memcmp(b, m->sym[i], bl) == 0), "vocabulary symbol %u differs", i);
    }
}

/* A random vocabulary (empty, NUL-containing and multi-byte symbols) and random patterns over it. */
static tdm_seq_store *random_store(tu_rng *r, model *m, uint32_t nvocab, uint32_t npat, size_t maxlen) {
    tdm_seq_store *s;
    assert_int_equal(tdm_seq_store_new(ctx, &s), TDM_OK);
    tdm_seq_vocab *v = tdm_seq_store_vocab(s);
    static const char *const parts[] = {"a", "b", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9D\x84\x9E", " ", "z"};
    for (uint32_t i = 0; i < nvocab; i++) {
        char buf[64];
        int n = snprintf(buf, sizeof buf, "%u", i);
        if (i == 0) n = 0; /* the empty symbol */
        else if (i == 1) buf[n++] = '\0';
        int extra = i == 0 ? 0 : (int)tu_below(r, 3);
        for (int k = 0; k < extra; k++) {
            const char *p = parts[tu_below(r, sizeof parts / sizeof *parts)];
            memcpy(buf + n, p, strlen(p));
            n += (int)strlen(p);
        }
        uint32_t id;
        assert_int_equal(tdm_seq_vocab_intern(v, buf, (size_t)n, &id), TDM_OK);
        assert_int_equal(id, i);
        model_sym(m, buf, (size_t)n);
    }
    uint32_t *buf = malloc((maxlen + 1) * sizeof *buf);
    for (uint32_t i = 0; i < npat; i++) {
        size_t n = tu_below(r, 5) == 0 ? 0 : (size_t)tu_below(r, maxlen + 1);
        for (size_t k = 0; k < n; k++) buf[k] = (uint32_t)tu_below(r, nvocab);
        uint32_t id = UINT32_MAX;
        assert_int_equal(tdm_seq_store_add(s, buf, n, &id), TDM_OK);
        assert_int_equal(id, i);
        model_add(m, buf, n);
    }
    free(buf);
    return s;
}

/* ---- the store in memory --------------------------------------------------------------------------- */

static void test_store_add_get(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(1);
    tdm_seq_store *s = NULL;
    assert_int_equal(tdm_seq_store_new(NULL, &s), TDM_E_INVAL);
    assert_int_equal(tdm_seq_store_new(ctx, NULL), TDM_E_INVAL);
    assert_int_equal(tdm_seq_store_new(ctx, &s), TDM_OK);
    model m = {0};
    check_store(s, &m); /* empty */
    const uint32_t *ids;
    size_t nid;
    tdm_seq_store_by_length(s, 0, &ids, &nid);
    assert_int_equal(nid, 0);
    tdm_seq_store_free(s);
    tdm_seq_store_free(NULL);

    for (int round = 0; round < 6; round++) {
        model mm = {0};
        uint32_t nv = 1 + (uint32_t)tu_below(&r, 300);
        s = random_store(&r, &mm, nv, 200 + (uint32_t)tu_below(&r, 3000), round < 3 ? 12 : 300);
        check_store(s, &mm);
        /* Interleave more adds with checks: pointers are refreshed after every add. */
        for (int k = 0; k < 50; k++) {
            uint32_t buf[40], id;
            size_t n = (size_t)tu_below(&r, 40);
            for (size_t t = 0; t < n; t++) buf[t] = (uint32_t)tu_below(&r, nv);
            assert_int_equal(tdm_seq_store_add(s, n ? buf : NULL, n, &id), TDM_OK);
            assert_int_equal(id, mm.npat);
            model_add(&mm, buf, n);
        }
        check_store(s, &mm);
        assert_true(tdm_seq_store_bytes(s) >= tdm_seq_store_total_symbols(s) * 4);
        tdm_seq_store_free(s);
        model_free(&mm);
    }
}

static void test_store_long_patterns(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(2);
    model m = {0};
    tdm_seq_store *s = random_store(&r, &m, 50, 20, 10);
    enum { LONG = 100000 };
    uint32_t *buf = malloc(LONG * 2 * sizeof *buf);
    for (int k = 0; k < 3; k++) {
        size_t n = LONG + (size_t)tu_below(&r, LONG);
        for (size_t t = 0; t < n; t++) buf[t] = (uint32_t)tu_below(&r, 50);
        uint32_t id;
        assert_int_equal(tdm_seq_store_add(s, buf, n, &id), TDM_OK);
        model_add(&m, buf, n);
        assert_int_equal(id, m.npat - 1);
        assert_int_equal(tdm_seq_store_add(s, NULL, 0, NULL), TDM_OK); /* id out-parameter optional */
        model_add(&m, buf, 0);
    }
    check_store(s, &m);
    assert_true(tdm_seq_store_max_length(s) >= LONG);
    assert_true(tdm_seq_store_bytes(s) >= 3ull * LONG * 4);
    free(buf);
    tdm_seq_store_free(s);
    model_free(&m);
}

/* A pattern handed back by tdm_seq_store_get is valid when passed to tdm_seq_store_add: the add must
 * copy it even though growing the arena moves the memory it points into. Released memory usually keeps
 * its bytes, so the test asks glibc to overwrite what is freed (M_PERTURB): a copy read from the old
 * arena then shows up as wrong symbols instead of passing by luck (a sanitizer build reports it
 * directly). */
static int perturb_on(void **state) {
    (void)state;
#ifdef __GLIBC__
    mallopt(M_PERTURB, 0xA5);
#endif
    return 0;
}

static int perturb_off(void **state) {
    (void)state;
#ifdef __GLIBC__
    mallopt(M_PERTURB, 0);
#endif
    return 0;
}

static void test_store_add_from_itself(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(3);
    model m = {0};
    tdm_seq_store *s;
    assert_int_equal(tdm_seq_store_new(ctx, &s), TDM_OK);
    for (uint32_t i = 0; i < 30; i++) {
        char name[8];
        int n = snprintf(name, sizeof name, "w%u", i);
        uint32_t id;
        assert_int_equal(tdm_seq_vocab_intern(tdm_seq_store_vocab(s), name, (size_t)n, &id), TDM_OK);
        model_sym(&m, name, (size_t)n);
    }
    uint32_t first[8];
    for (int t = 0; t < 8; t++) first[t] = 1 + (uint32_t)tu_below(&r, 29); /* never 0: freed memory often is */
    assert_int_equal(tdm_seq_store_add(s, first, 8, NULL), TDM_OK);
    model_add(&m, first, 8);
    for (int k = 0; k < 3000; k++) {
        uint32_t src = k % 500 == 499 ? m.npat - 1 : k % 3 ? 0 : (uint32_t)tu_below(&r, m.npat);
        if (k == 1500) { /* one long pattern, then copies of it */
            uint32_t *big = malloc(70000 * sizeof *big);
            for (size_t t = 0; t < 70000; t++) big[t] = (uint32_t)tu_below(&r, 30);
            assert_int_equal(tdm_seq_store_add(s, big, 70000, NULL), TDM_OK);
            model_add(&m, big, 70000);
            free(big);
            src = m.npat - 1;
        }
        const uint32_t *syms;
        size_t n;
        assert_int_equal(tdm_seq_store_get(s, src, &syms, &n), TDM_OK);
        uint32_t id;
        assert_int_equal(tdm_seq_store_add(s, syms, n, &id), TDM_OK);
        model_add(&m, m.pat[src], m.len[src]);
        assert_int_equal(tdm_seq_store_get(s, id, &syms, &n), TDM_OK);
        tu_check(n == m.len[src] && (!n || !memcmp(syms, m.pat[src], n * sizeof *syms)), "copy %d of pattern %u differs", k, src);
    }
    check_store(s, &m);
    tdm_seq_store_free(s);
    model_free(&m);
}

static void test_store_refusals(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(4);
    model m = {0};
    tdm_seq_store *s = random_store(&r, &m, 20, 100, 15);
    for (int k = 0; k < 200; k++) {
        uint32_t buf[32];
        size_t n = 1 + (size_t)tu_below(&r, 31), bad = (size_t)tu_below(&r, n);
        for (size_t t = 0; t < n; t++) buf[t] = (uint32_t)tu_below(&r, 20);
        static const uint32_t outside[] = {20, 21, 1000, TDM_SEQ_UNKNOWN, UINT32_MAX - 1};
        buf[bad] = outside[tu_below(&r, 5)];
        uint32_t id = 12345;
        tdm_clear_error();
        assert_int_equal(tdm_seq_store_add(s, buf, n, &id), TDM_E_RANGE);
        assert_int_equal(id, 12345);
        char needle[32];
        snprintf(needle, sizeof needle, "symbol %zu ", bad);
        tu_check(strstr(tdm_last_error(), needle) != NULL, "message \"%s\" lacks \"%s\"", tdm_last_error(), needle);
    }
    assert_int_equal(tdm_seq_store_add(s, NULL, 3, NULL), TDM_E_INVAL);
    assert_int_equal(tdm_seq_store_add(NULL, NULL, 0, NULL), TDM_E_INVAL);
    check_store(s, &m); /* nothing was added */

    /* add_strings: interns, and refuses invalid UTF-8 naming the symbol's index. */
    tdm_seq_vocab *v = tdm_seq_store_vocab(s);
    const char *good[] = {"x1", "\xC3\xA9t\xC3\xA9", "", "x1", "a\0b"};
    const size_t good_len[] = {2, 6, 0, 2, 3};
    uint32_t id;
    assert_int_equal(tdm_seq_store_add_strings(s, good, good_len, 5, &id), TDM_OK);
    assert_int_equal(id, m.npat);
    uint32_t want[5];
    for (int k = 0; k < 5; k++) assert_int_equal(tdm_seq_vocab_find(v, good[k], good_len[k], &want[k]), TDM_OK);
    assert_int_equal(want[0], want[3]);
    assert_int_equal(want[2], 0); /* "" is the model's symbol 0 */
    for (int k = 0; k < 5; k++) /* keep the model's vocabulary in step */
        if (want[k] >= m.nvocab) model_sym(&m, good[k], good_len[k]);
    model_add(&m, want, 5);
    check_store(s, &m);
    for (int k = 0; k < 100; k++) {
        const char *syms[8];
        size_t lens[8];
        char names[8][16];
        size_t n = 1 + (size_t)tu_below(&r, 8), bad = (size_t)tu_below(&r, n);
        for (size_t t = 0; t < n; t++) {
            lens[t] = (size_t)snprintf(names[t], sizeof names[t], "n%u", (unsigned)tu_below(&r, 30));
            syms[t] = names[t];
        }
        static const char *const ill[] = {"\xC0\x80", "ab\xED\xA0\x80", "\xF4\x90\x80\x80", "x\xC3", "\x80"};
        syms[bad] = ill[k % 5];
        lens[bad] = strlen(ill[k % 5]);
        uint32_t before = tdm_seq_store_count(s);
        assert_int_equal(tdm_seq_store_add_strings(s, syms, lens, n, &id), TDM_E_UTF8);
        assert_int_equal(tdm_seq_store_count(s), before);
        char needle[32];
        snprintf(needle, sizeof needle, "symbol %zu:", bad);
        tu_check(strstr(tdm_last_error(), needle) != NULL, "message \"%s\" lacks \"%s\"", tdm_last_error(), needle);
    }
    /* The symbols interned before a failure are allowed to stay; the patterns must match the model. */
    assert_int_equal(tdm_seq_store_count(s), m.npat);
    for (uint32_t i = 0; i < m.npat; i++) {
        const uint32_t *syms;
        size_t n;
        assert_int_equal(tdm_seq_store_get(s, i, &syms, &n), TDM_OK);
        assert_int_equal(n, m.len[i]);
    }
    tdm_seq_store_free(s);
    model_free(&m);
}

/* ---- files ------------------------------------------------------------------------------------------- */

static void test_store_round_trip(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(5);
    char path[512];
    for (int round = 0; round < 5; round++) {
        model m = {0};
        tdm_seq_store *s;
        if (round == 0) {
            assert_int_equal(tdm_seq_store_new(ctx, &s), TDM_OK); /* empty store, empty vocabulary */
        } else {
            s = random_store(&r, &m, 1 + (uint32_t)tu_below(&r, 500), (uint32_t)tu_below(&r, 3000), round == 4 ? 3000 : 40);
            if (round == 3) { /* symbols no pattern uses, and one long pattern */
                uint32_t id;
                const char *unused = "unused \xE2\x82\xAC";
                assert_int_equal(tdm_seq_vocab_intern(tdm_seq_store_vocab(s), unused, strlen(unused), &id), TDM_OK);
                model_sym(&m, unused, strlen(unused));
                uint32_t *big = malloc(100000 * sizeof *big);
                for (size_t t = 0; t < 100000; t++) big[t] = (uint32_t)tu_below(&r, m.nvocab);
                assert_int_equal(tdm_seq_store_add(s, big, 100000, NULL), TDM_OK);
                model_add(&m, big, 100000);
                free(big);
            }
        }
        path_in_tmp(path, sizeof path, "round.tdm");
        assert_int_equal(tdm_seq_store_save(s, path), TDM_OK);
        tdm_seq_store *l = NULL;
        int rc = tdm_seq_store_load(ctx, path, &l);
        tu_check(rc == TDM_OK, "round %d: load: %s", round, tdm_last_error());
        check_store(l, &m);
        /* The loaded store works as a store: it grows and saves again to the same bytes plus the add. */
        size_t len1, len2;
        unsigned char *f1 = read_all(path, &len1);
        assert_int_equal(tdm_seq_store_save(l, path), TDM_OK);
        unsigned char *f2 = read_all(path, &len2);
        assert_int_equal(len1, len2);
        assert_memory_equal(f1, f2, len1); /* saving is deterministic */
        free(f1), free(f2);
        uint32_t one = 0;
        if (m.nvocab) {
            assert_int_equal(tdm_seq_store_add(l, &one, 1, NULL), TDM_OK);
            model_add(&m, &one, 1);
            check_store(l, &m);
        }
        tdm_seq_store_free(l);
        tdm_seq_store_free(s);
        model_free(&m);
    }
    /* Saving leaves no temporary file behind. */
    DIR *d = opendir(tmpdir);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            files++;
            tu_check(!strcmp(e->d_name, "round.tdm"), "stray file %s", e->d_name);
        }
    closedir(d);
    assert_int_equal(files, 1);
    unlink(path);
}

/* The small store used by the corruption tests: 3 symbols ("a", "bé", ""), 4 patterns, 6 symbols. */
static unsigned char *small_file(size_t *len, const char *path) {
    tdm_seq_store *s;
    assert_int_equal(tdm_seq_store_new(ctx, &s), TDM_OK);
    tdm_seq_vocab *v = tdm_seq_store_vocab(s);
    uint32_t id;
    assert_int_equal(tdm_seq_vocab_intern(v, "a", 1, &id), TDM_OK);
    assert_int_equal(tdm_seq_vocab_intern(v, "b\xC3\xA9", 3, &id), TDM_OK);
    assert_int_equal(tdm_seq_vocab_intern(v, "", 0, &id), TDM_OK);
    const uint32_t p0[] = {0, 1}, p1[] = {2}, p3[] = {1, 1, 0};
    assert_int_equal(tdm_seq_store_add(s, p0, 2, NULL), TDM_OK);
    assert_int_equal(tdm_seq_store_add(s, p1, 1, NULL), TDM_OK);
    assert_int_equal(tdm_seq_store_add(s, NULL, 0, NULL), TDM_OK);
    assert_int_equal(tdm_seq_store_add(s, p3, 3, NULL), TDM_OK);
    assert_int_equal(tdm_seq_store_save(s, path), TDM_OK);
    tdm_seq_store_free(s);
    unsigned char *b = read_all(path, len);
    assert_int_equal(*len, HEADER + 3 * 4 + 4 + 4 * 4 + 6 * 4 + 8);
    assert_memory_equal(b, "TDMSEQST", 8);
    assert_int_equal(get64(b, OFF_VCOUNT), 3);
    assert_int_equal(get64(b, OFF_VBYTES), 4);
    assert_int_equal(get64(b, OFF_PCOUNT), 4);
    assert_int_equal(get64(b, OFF_SCOUNT), 6);
    assert_int_equal(XXH64(b, *len - 8, 0), get64(b, *len - 8));
    return b;
}

static tdm_seq_store *const SENTINEL = (tdm_seq_store *)(uintptr_t)0x5151;

/* Loads path and returns the status; a failure must leave *out alone and leak nothing. */
static int load_status(const char *path) {
    tdm_alloc_stats a, b;
    tdm_alloc_get_stats(&a);
    tdm_seq_store *out = SENTINEL;
    int rc = tdm_seq_store_load(ctx, path, &out);
    if (rc == TDM_OK) {
        tdm_seq_store_free(out);
        return rc;
    }
    assert_ptr_equal(out, SENTINEL);
    tdm_alloc_get_stats(&b);
    tu_check(b.live == a.live && b.current_bytes == a.current_bytes, "failed load leaked %" PRIu64 " blocks",
             b.live - a.live);
    return rc;
}

static void test_store_load_small_ok(void **state) {
    (void)state;
    char path[512];
    path_in_tmp(path, sizeof path, "small.tdm");
    size_t len;
    unsigned char *b = small_file(&len, path);
    tdm_seq_store *s;
    assert_int_equal(tdm_seq_store_load(ctx, path, &s), TDM_OK);
    assert_int_equal(tdm_seq_store_count(s), 4);
    const uint32_t *syms;
    size_t n;
    assert_int_equal(tdm_seq_store_get(s, 3, &syms, &n), TDM_OK);
    assert_int_equal(n, 3);
    assert_int_equal(syms[0], 1);
    assert_int_equal(syms[2], 0);
    assert_int_equal(tdm_seq_store_get(s, 2, &syms, &n), TDM_OK);
    assert_int_equal(n, 0);
    tdm_seq_store_free(s);
    free(b);
    unlink(path);
}

static void test_store_truncations(void **state) {
    (void)state;
    char path[512], bad[512];
    path_in_tmp(path, sizeof path, "small.tdm");
    path_in_tmp(bad, sizeof bad, "truncated.tdm");
    size_t len;
    unsigned char *b = small_file(&len, path);
    for (size_t cut = 0; cut < len; cut++) {
        write_all(bad, b, cut);
        int rc = load_status(bad);
        tu_check(rc == TDM_E_CORRUPT, "file cut to %zu of %zu bytes: rc %d (%s)", cut, len, rc, tdm_last_error());
    }
    /* One byte too many is as wrong as one too few. */
    unsigned char *longer = malloc(len + 1);
    memcpy(longer, b, len);
    longer[len] = 0;
    write_all(bad, longer, len + 1);
    assert_int_equal(load_status(bad), TDM_E_CORRUPT);
    free(longer);
    free(b);
    unlink(bad);
    unlink(path);
}

static void test_store_byte_flips(void **state) {
    (void)state;
    char path[512], bad[512];
    path_in_tmp(path, sizeof path, "small.tdm");
    path_in_tmp(bad, sizeof bad, "flipped.tdm");
    size_t len;
    unsigned char *b = small_file(&len, path);
    static const unsigned char masks[] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFF, 0x5A};
    for (size_t at = 0; at < len; at++) {
        for (size_t k = 0; k < sizeof masks; k++) {
            b[at] ^= masks[k];
            write_all(bad, b, len);
            int rc = load_status(bad);
            b[at] ^= masks[k];
            /* The version is checked before the checksum, so a changed version reads as a newer format. */
            int want = at >= OFF_VERSION && at < OFF_VERSION + 4 ? TDM_E_VERSION : TDM_E_CORRUPT;
            tu_check(rc == want, "byte %zu ^ 0x%02X: rc %d, want %d (%s)", at, masks[k], rc, want, tdm_last_error());
        }
    }
    free(b);
    unlink(bad);
    unlink(path);
}

/* Files whose checksum is right but whose header or content is not. */
static void test_store_valid_checksum_bad_content(void **state) {
    (void)state;
    char path[512], bad[512];
    path_in_tmp(path, sizeof path, "small.tdm");
    path_in_tmp(bad, sizeof bad, "crafted.tdm");
    size_t len;
    unsigned char *orig = small_file(&len, path);
    unsigned char *b = malloc(len);
    const size_t vlen_at = HEADER, vbytes_at = HEADER + 12, plen_at = HEADER + 16, arena_at = HEADER + 32;
    struct {
        const char *what, *needle;
        int want;
    } cases[] = {
        {"bad magic", "magic", TDM_E_CORRUPT},
        {"version 2", "version 2", TDM_E_VERSION},
        {"version 0", "version 0", TDM_E_VERSION},
        {"other byte order", "byte order", TDM_E_CORRUPT},
        {"arena id = vocabulary size", "outside the vocabulary", TDM_E_CORRUPT},
        {"arena id = UINT32_MAX", "outside the vocabulary", TDM_E_CORRUPT},
        {"pattern lengths too long", "add up", TDM_E_CORRUPT},
        {"duplicate symbol", "repeats", TDM_E_CORRUPT},
        {"ill-formed symbol", "UTF-8", TDM_E_CORRUPT},
        {"vocabulary lengths short", "add up", TDM_E_CORRUPT},
        {"vocabulary entry runs past", "runs past", TDM_E_CORRUPT},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        memcpy(b, orig, len);
        switch (c) {
        case 0: b[7] = 'X'; break;
        case 1: put32(b, OFF_VERSION, 2); break;
        case 2: put32(b, OFF_VERSION, 0); break;
        case 3: put32(b, OFF_ENDIAN, 0x04030201u); break;
        case 4: put32(b, arena_at, 3); break;
        case 5: put32(b, arena_at + 8, UINT32_MAX); break;
        case 6: put32(b, plen_at, 3); break;                                       /* 3+1+0+3 = 7 != 6 */
        case 7: b[vbytes_at + 1] = 'a', put32(b, vlen_at + 4, 1), put32(b, vlen_at + 8, 2); break; /* "a","a","é" */
        case 8: b[vbytes_at + 2] = 0xC0; break;                                    /* "b\xC0\xA9" */
        case 9: put32(b, vlen_at + 4, 1); break;                                   /* "a","b","": 2 != 4 */
        case 10: put32(b, vlen_at + 8, 1); break;                                  /* 1+3+1 > 4 */
        }
        fix_checksum(b, len);
        write_all(bad, b, len);
        tdm_clear_error();
        int rc = load_status(bad);
        tu_check(rc == cases[c].want, "%s: rc %d, want %d (%s)", cases[c].what, rc, cases[c].want, tdm_last_error());
        tu_check(strstr(tdm_last_error(), cases[c].needle) != NULL, "%s: message \"%s\" lacks \"%s\"", cases[c].what,
                 tdm_last_error(), cases[c].needle);
    }
    /* A consistent change (different pattern split, same total) is a different valid store: the test's
     * file editing is right, so the refusals above are the library's doing. */
    memcpy(b, orig, len);
    put32(b, plen_at, 1), put32(b, plen_at + 4, 2);
    fix_checksum(b, len);
    write_all(bad, b, len);
    tdm_seq_store *s;
    assert_int_equal(tdm_seq_store_load(ctx, bad, &s), TDM_OK);
    const uint32_t *syms;
    size_t n;
    assert_int_equal(tdm_seq_store_get(s, 1, &syms, &n), TDM_OK);
    assert_int_equal(n, 2);
    tdm_seq_store_free(s);
    free(b);
    free(orig);
    unlink(bad);
    unlink(path);
}

/* Headers announcing huge sections: refused from the sizes alone, before any large allocation. */
static void test_store_huge_counts(void **state) {
    (void)state;
    char path[512], bad[512];
    path_in_tmp(path, sizeof path, "small.tdm");
    path_in_tmp(bad, sizeof bad, "huge.tdm");
    size_t len;
    unsigned char *orig = small_file(&len, path);
    unsigned char *b = malloc(len);
    /* Each case changes up to two header fields (add to the stored value, or set it). */
    const struct {
        size_t off;
        uint64_t v;
        int set;
        size_t off2;
        uint64_t v2;
    } cases[] = {
        {OFF_SCOUNT, 1ull << 28, 0, 0, 0},
        {OFF_SCOUNT, 1ull << 62, 0, 0, 0}, /* 4 * count wraps to the same 64-bit file size */
        {OFF_SCOUNT, UINT64_MAX, 1, 0, 0},
        {OFF_VCOUNT, UINT32_MAX - 2, 1, 0, 0},
        {OFF_VCOUNT, UINT32_MAX, 1, 0, 0},
        {OFF_VCOUNT, 1ull << 62, 0, 0, 0},
        {OFF_VBYTES, 1ull << 40, 0, 0, 0},
        {OFF_VBYTES, 1ull << 63, 0, OFF_SCOUNT, 1ull << 61}, /* 2^63 + 4 * 2^61 wraps to the file size */
        {OFF_VBYTES, UINT64_MAX - 3, 1, 0, 0},               /* vocab_bytes + header wraps */
        {OFF_PCOUNT, 1ull << 31, 0, 0, 0},
        {OFF_PCOUNT, UINT64_MAX, 1, 0, 0},
        {OFF_PCOUNT, 1ull << 62, 0, 0, 0},
        {OFF_PCOUNT, 2, 0, OFF_SCOUNT, 0 - 2ull}, /* same file size: two arena words read as pattern lengths */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        memcpy(b, orig, len);
        put64(b, cases[c].off, cases[c].set ? cases[c].v : get64(b, cases[c].off) + cases[c].v);
        if (cases[c].off2) put64(b, cases[c].off2, get64(b, cases[c].off2) + cases[c].v2);
        fix_checksum(b, len);
        write_all(bad, b, len);
        tdm_alloc_stats before, after;
        tdm_alloc_get_stats(&before);
        int rc = load_status(bad);
        tdm_alloc_get_stats(&after);
        tu_check(rc == TDM_E_CORRUPT, "case %zu: rc %d (%s)", c, rc, tdm_last_error());
        tu_check(after.peak_bytes - before.peak_bytes < (16u << 20), "case %zu: load allocated %" PRIu64 " bytes", c,
                 after.peak_bytes - before.peak_bytes);
    }
    free(b);
    free(orig);
    unlink(bad);
    unlink(path);
}

static void test_store_io_errors(void **state) {
    (void)state;
    char path[512];
    path_in_tmp(path, sizeof path, "does-not-exist.tdm");
    tdm_seq_store *out = SENTINEL;
    assert_int_equal(tdm_seq_store_load(ctx, path, &out), TDM_E_IO);
    assert_ptr_equal(out, SENTINEL);
    assert_non_null(strstr(tdm_last_error(), path));
    assert_int_equal(tdm_seq_store_load(NULL, path, &out), TDM_E_INVAL);
    assert_int_equal(tdm_seq_store_load(ctx, NULL, &out), TDM_E_INVAL);
    /* A directory is not a store file. */
    assert_int_not_equal(load_status(tmpdir), TDM_OK);
    /* Saving into a missing directory fails with the path named, leaving nothing behind. */
    tdm_seq_store *s;
    assert_int_equal(tdm_seq_store_new(ctx, &s), TDM_OK);
    path_in_tmp(path, sizeof path, "missing-dir/x.tdm");
    assert_int_equal(tdm_seq_store_save(s, path), TDM_E_IO);
    assert_non_null(strstr(tdm_last_error(), path));
    assert_int_equal(tdm_seq_store_save(NULL, path), TDM_E_INVAL);
    assert_int_equal(tdm_seq_store_save(s, NULL), TDM_E_INVAL);
    tdm_seq_store_free(s);
}

int main(void) {
    tu_init_seed("test_store");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_add_get),
        cmocka_unit_test(test_store_long_patterns),
        cmocka_unit_test_setup_teardown(test_store_add_from_itself, perturb_on, perturb_off),
        cmocka_unit_test(test_store_refusals),
        cmocka_unit_test(test_store_round_trip),
        cmocka_unit_test(test_store_load_small_ok),
        cmocka_unit_test(test_store_truncations),
        cmocka_unit_test(test_store_byte_flips),
        cmocka_unit_test(test_store_valid_checksum_bad_content),
        cmocka_unit_test(test_store_huge_counts),
        cmocka_unit_test(test_store_io_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
