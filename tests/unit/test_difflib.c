/* test_difflib.c: unit tests of the difflib port (Ratcliff/Obershelp matching blocks exactly as CPython
 * 3.11's difflib.SequenceMatcher(None, a, b, autojunk)). KATO's matches, past/present/future and
 * fragmentation all come from these blocks, so they must be the reference's, block for block. The test
 * holds its own slow, plain re-statement of CPython's __chain_b, find_longest_match and
 * get_matching_blocks (dense arrays standing in for the dicts) and compares it with the library on
 * thousands of random pairs: short and long (>= 200, where autojunk's popular-element purge applies),
 * tiny alphabets with heavy repetition and skewed ones where only some elements are popular, autojunk
 * on and off, both argument orders, and one matcher reused across many a and b. The spec's worked
 * examples (spec/kato.md section 2.5) pin the exact ratios. (tests/oracle compares with real CPython.) */
#include "unit_common.h"

#include "tandem/seq.h"
#include "seq/seq_internal.h"

/* ---- the reference --------------------------------------------------------------------------------- */

typedef struct {
    size_t i, j, k;
} match;

typedef struct {
    const uint32_t *a, *b;
    size_t na, nb;
    unsigned char *in_b2j; /* b2j holds b[j]'s index j: not purged as popular (no junk: isjunk is None) */
    size_t *row_len[2];    /* j2len and newj2len: value for key j at [j] ... */
    unsigned char *row_has[2]; /* ... and whether the dict has key j */
} ref_matcher;

/* SequenceMatcher.__chain_b with isjunk None: every element indexed, then, if autojunk and n >= 200,
 * elements occurring more than n // 100 + 1 times are deleted from b2j. */
static void ref_init(ref_matcher *m, const uint32_t *a, size_t na, const uint32_t *b, size_t nb, int autojunk) {
    m->a = a, m->na = na, m->b = b, m->nb = nb;
    m->in_b2j = malloc(nb + 1);
    for (size_t j = 0; j < nb; j++) {
        size_t count = 0;
        for (size_t t = 0; t < nb; t++) count += b[t] == b[j];
        m->in_b2j[j] = !(autojunk && nb >= 200 && count > nb / 100 + 1);
    }
    for (int r = 0; r < 2; r++) {
        m->row_len[r] = calloc(nb + 1, sizeof(size_t));
        m->row_has[r] = calloc(nb + 1, 1);
    }
}

static void ref_free(ref_matcher *m) {
    free(m->in_b2j);
    for (int r = 0; r < 2; r++) free(m->row_len[r]), free(m->row_has[r]);
}

/* bjunk is empty when isjunk is None (popular elements are not junk). */
static int isbjunk(const ref_matcher *m, uint32_t x) {
    (void)m, (void)x;
    return 0;
}

static match find_longest_match(ref_matcher *m, size_t alo, size_t ahi, size_t blo, size_t bhi) {
    const uint32_t *a = m->a, *b = m->b;
    size_t besti = alo, bestj = blo, bestsize = 0;
    int cur = 0; /* j2len = row cur^1, newj2len = row cur */
    memset(m->row_has[0], 0, m->nb + 1);
    memset(m->row_has[1], 0, m->nb + 1);
    for (size_t i = alo; i < ahi; i++) {
        size_t *j2len = m->row_len[cur ^ 1], *newj2len = m->row_len[cur];
        unsigned char *has = m->row_has[cur ^ 1], *newhas = m->row_has[cur];
        memset(newhas, 0, m->nb + 1); /* newj2len = {} */
        for (size_t j = 0; j < m->nb; j++) { /* for j in b2j.get(a[i], nothing): ascending */
            if (b[j] != a[i] || !m->in_b2j[j]) continue;
            if (j < blo) continue;
            if (j >= bhi) break;
            size_t k = (j > 0 && has[j - 1] ? j2len[j - 1] : 0) + 1; /* j2lenget(j-1, 0) + 1 */
            newj2len[j] = k, newhas[j] = 1;
            if (k > bestsize) besti = i - k + 1, bestj = j - k + 1, bestsize = k;
        }
        cur ^= 1; /* j2len = newj2len */
    }
    while (besti > alo && bestj > blo && !isbjunk(m, b[bestj - 1]) && a[besti - 1] == b[bestj - 1])
        besti--, bestj--, bestsize++;
    while (besti + bestsize < ahi && bestj + bestsize < bhi && !isbjunk(m, b[bestj + bestsize]) &&
           a[besti + bestsize] == b[bestj + bestsize])
        bestsize++;
    while (besti > alo && bestj > blo && isbjunk(m, b[bestj - 1]) && a[besti - 1] == b[bestj - 1])
        besti--, bestj--, bestsize++;
    while (besti + bestsize < ahi && bestj + bestsize < bhi && isbjunk(m, b[bestj + bestsize]) &&
           a[besti + bestsize] == b[bestj + bestsize])
        bestsize++;
    return (match){besti, bestj, bestsize};
}

static int cmp_match(const void *x, const void *y) { /* tuple order */
    const match *p = x, *q = y;
    if (p->i != q->i) return p->i < q->i ? -1 : 1;
    if (p->j != q->j) return p->j < q->j ? -1 : 1;
    return p->k < q->k ? -1 : p->k > q->k;
}

/* get_matching_blocks(), sentinel included; returns the count. out holds min(na, nb) + 2 entries. */
static size_t get_matching_blocks(ref_matcher *m, match *out) {
    size_t cap = m->na + m->nb + 2;
    size_t (*queue)[4] = malloc(cap * sizeof *queue);
    match *blocks = malloc(cap * sizeof *blocks);
    size_t nq = 0, nbk = 0;
    queue[nq][0] = 0, queue[nq][1] = m->na, queue[nq][2] = 0, queue[nq][3] = m->nb, nq++;
    while (nq) {
        nq--; /* queue.pop() */
        size_t alo = queue[nq][0], ahi = queue[nq][1], blo = queue[nq][2], bhi = queue[nq][3];
        match x = find_longest_match(m, alo, ahi, blo, bhi);
        if (x.k) {
            blocks[nbk++] = x;
            if (alo < x.i && blo < x.j) queue[nq][0] = alo, queue[nq][1] = x.i, queue[nq][2] = blo, queue[nq][3] = x.j, nq++;
            if (x.i + x.k < ahi && x.j + x.k < bhi)
                queue[nq][0] = x.i + x.k, queue[nq][1] = ahi, queue[nq][2] = x.j + x.k, queue[nq][3] = bhi, nq++;
        }
    }
    qsort(blocks, nbk, sizeof *blocks, cmp_match);
    size_t i1 = 0, j1 = 0, k1 = 0, n = 0;
    for (size_t t = 0; t < nbk; t++) {
        if (i1 + k1 == blocks[t].i && j1 + k1 == blocks[t].j) k1 += blocks[t].k;
        else {
            if (k1) out[n++] = (match){i1, j1, k1};
            i1 = blocks[t].i, j1 = blocks[t].j, k1 = blocks[t].k;
        }
    }
    if (k1) out[n++] = (match){i1, j1, k1};
    out[n++] = (match){m->na, m->nb, 0};
    free(queue);
    free(blocks);
    return n;
}

/* ---- comparing with the library ----------------------------------------------------------------------- */

/* Blocks of (a, b) from the reference, without the sentinel; returns the count. */
static size_t reference_blocks(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, int autojunk, match *out) {
    ref_matcher m;
    ref_init(&m, a, na, b, nb, autojunk);
    size_t n = get_matching_blocks(&m, out);
    ref_free(&m);
    assert_true(n >= 1);
    assert_int_equal(out[n - 1].i, na);
    assert_int_equal(out[n - 1].j, nb);
    assert_int_equal(out[n - 1].k, 0);
    return n - 1;
}

/* Compares the library's blocks (from matcher m, b already set) with the reference's. Returns matches. */
static size_t compare(tdm_seq_matcher *m, const uint32_t *a, size_t na, const uint32_t *b, size_t nb, int autojunk,
                      const char *what, int iter) {
    match *want = malloc((na + nb + 2) * sizeof *want);
    size_t nw = reference_blocks(a, na, b, nb, autojunk, want);
    const tdm_seq_block *got;
    size_t ng = 99, matches = 99;
    int rc = tdm_seq_matcher_blocks(m, a, na, &got, &ng, &matches);
    tu_check(rc == TDM_OK, "%s %d: rc %d", what, iter, rc);
    size_t total = 0;
    for (size_t t = 0; t < nw; t++) total += want[t].k;
    int same = ng == nw;
    for (size_t t = 0; same && t < nw; t++) same = got[t].i == want[t].i && got[t].j == want[t].j && got[t].n == want[t].k;
    if (!same) {
        print_error("%s %d: |a| %zu |b| %zu autojunk %d\n  library:  ", what, iter, na, nb, autojunk);
        for (size_t t = 0; t < ng && t < 20; t++) print_error("(%u,%u,%u) ", got[t].i, got[t].j, got[t].n);
        print_error("(%zu blocks)\n  reference: ", ng);
        for (size_t t = 0; t < nw && t < 20; t++) print_error("(%zu,%zu,%zu) ", want[t].i, want[t].j, want[t].k);
        print_error("(%zu blocks)\n", nw);
        fail();
    }
    tu_check(matches == total, "%s %d: matches %zu, want %zu", what, iter, matches, total);
    free(want);
    return total;
}

static size_t check_pair(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, int autojunk, const char *what, int iter) {
    tdm_seq_matcher *m;
    assert_int_equal(tdm_seq_matcher_new(&m), TDM_OK);
    assert_int_equal(tdm_seq_matcher_set_b(m, b, nb, autojunk), TDM_OK);
    size_t total = compare(m, a, na, b, nb, autojunk, what, iter);
    tdm_seq_matcher_free(m);
    /* Ratcliff/Obershelp blocks form a common subsequence: never more than the LCS. */
    size_t l;
    assert_int_equal(tdm_seq_lcs_length(a, na, b, nb, &l), TDM_OK);
    tu_check(total <= l, "%s %d: %zu matches > LCS %zu", what, iter, total, l);
    /* What queries rely on: an LCS of 0 or 1 is the count when autojunk cannot act, and for |b| <= 64
     * the count alone comes from the listed rows of a (tdm_seq_difflib_count_rows). */
    if (l <= 1 && (!autojunk || nb < 200)) tu_check(total == l, "%s %d: %zu matches, LCS %zu", what, iter, total, l);
    if (nb <= 64) {
        uint32_t *pos = malloc((na + 1) * sizeof *pos);
        uint64_t *rows = malloc((na + 1) * sizeof *rows);
        size_t ne = 0;
        for (size_t i = 0; i < na; i++) {
            uint64_t bits = 0;
            for (size_t j = 0; j < nb; j++) bits |= (uint64_t)(a[i] == b[j]) << j;
            if (bits) pos[ne] = (uint32_t)i, rows[ne++] = bits;
        }
        size_t got = tdm_seq_difflib_count_rows(pos, rows, ne, na, nb, SIZE_MAX);
        tu_check(got == total, "%s %d: count_rows %zu, want %zu (|a| %zu |b| %zu)", what, iter, got, total, na, nb);
        got = tdm_seq_difflib_count_rows(pos, rows, ne, na, nb, l); /* stopped at the LCS, as queries do */
        tu_check(got == total, "%s %d: count_rows capped at LCS %zu: %zu, want %zu", what, iter, l, got, total);
        free(pos);
        free(rows);
    }
    return total;
}

/* Symbol streams: tiny alphabets, skewed ones (a few very frequent values among many rare ones, so that
 * autojunk purges some and keeps others) and large ones. */
typedef enum { TINY, SKEWED, LARGE } kind;
static uint32_t sym(tu_rng *r, kind k, uint32_t tiny) {
    switch (k) {
    case TINY: return (uint32_t)tu_below(r, tiny);
    case SKEWED: return tu_below(r, 3) ? (uint32_t)tu_below(r, 3) : 100 + (uint32_t)tu_below(r, 400);
    case LARGE: return (uint32_t)tu_below(r, 100000);
    }
    return 0;
}

static void fill(tu_rng *r, uint32_t *x, size_t n, kind k, uint32_t tiny) {
    for (size_t i = 0; i < n; i++) x[i] = sym(r, k, tiny);
}

/* b sometimes shares runs with a (copied and edited), as real patterns and STMs do. */
static size_t fill_related(tu_rng *r, const uint32_t *a, size_t na, uint32_t *b, size_t cap, kind k, uint32_t tiny) {
    size_t nb = 0;
    for (size_t i = 0; i < na && nb + 2 <= cap; i++) {
        uint64_t e = tu_below(r, 8);
        if (e == 0) continue;
        if (e == 1) b[nb++] = sym(r, k, tiny);
        b[nb++] = e == 2 ? sym(r, k, tiny) : a[i];
    }
    return nb;
}

static void test_difflib_random_short(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(1);
    uint32_t a[64], b[64];
    for (int iter = 0; iter < 6000; iter++) {
        kind k = (kind)tu_below(&r, 3);
        uint32_t tiny = 1 + (uint32_t)tu_below(&r, 6);
        size_t na = (size_t)tu_below(&r, 41), nb = (size_t)tu_below(&r, 41);
        fill(&r, a, na, k, tiny);
        if (tu_below(&r, 3) == 0) nb = fill_related(&r, a, na, b, 64, k, tiny);
        else fill(&r, b, nb, k, tiny);
        int aj = (int)tu_below(&r, 2);
        check_pair(a, na, b, nb, aj, "short", iter);
        check_pair(b, nb, a, na, aj, "short reversed", iter);
    }
}

static void test_difflib_random_long(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(2);
    enum { CAP = 460 };
    uint32_t a[CAP], b[CAP];
    int differ = 0; /* pairs where autojunk changed the result: the purge was exercised */
    for (int iter = 0; iter < 160; iter++) {
        kind k = (kind)tu_below(&r, 3);
        uint32_t tiny = 2 + (uint32_t)tu_below(&r, 3);
        size_t na = tu_below(&r, 4) ? 150 + (size_t)tu_below(&r, 300) : (size_t)tu_below(&r, 60);
        size_t nb = 195 + (size_t)tu_below(&r, 250);
        fill(&r, a, na, k, tiny);
        if (tu_below(&r, 3) == 0 && na >= 200) nb = fill_related(&r, a, na, b, CAP, k, tiny);
        else fill(&r, b, nb, k, tiny);
        size_t on = check_pair(a, na, b, nb, 1, "long autojunk", iter);
        size_t off = check_pair(a, na, b, nb, 0, "long", iter);
        differ += on != off;
        check_pair(b, nb, a, na, 1, "long reversed autojunk", iter);
        check_pair(b, nb, a, na, 0, "long reversed", iter);
    }
    tu_check(differ > 10, "autojunk changed only %d of 160 long pairs", differ);
}

/* Long a against b of at most 64 (the query path's count_rows, whose rows list skips absent elements). */
static void test_difflib_long_a_short_b(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(3);
    enum { CAP = 420 };
    uint32_t a[CAP], b[64];
    for (int iter = 0; iter < 600; iter++) {
        kind k = (kind)tu_below(&r, 3);
        uint32_t tiny = 1 + (uint32_t)tu_below(&r, 8);
        size_t na = (size_t)tu_below(&r, CAP), nb = (size_t)tu_below(&r, 65);
        fill(&r, a, na, k, tiny);
        if (tu_below(&r, 2) == 0) nb = fill_related(&r, a, na < 40 ? na : 40, b, 64, k, tiny);
        else fill(&r, b, nb, k, tiny);
        check_pair(a, na, b, nb, (int)tu_below(&r, 2), "long a", iter);
    }
}

/* The purge threshold itself: n >= 200, count > n // 100 + 1. */
static void test_difflib_autojunk_threshold(void **state) {
    (void)state;
    uint32_t b[301];
    const uint32_t X = 900001, Y = 900002;
    static const struct {
        size_t n;     /* |b| */
        size_t count; /* occurrences of Y in b */
        int purged;   /* under autojunk */
    } cases[] = {{199, 4, 0}, {199, 50, 0}, {200, 3, 0}, {200, 4, 1}, {299, 3, 0}, {299, 4, 1}, {300, 4, 0}, {300, 5, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        size_t n = cases[c].n;
        for (size_t j = 0; j < n; j++) b[j] = (uint32_t)j; /* unique */
        for (size_t t = 0; t < cases[c].count; t++) b[10 + t * (n - 20) / cases[c].count] = Y;
        b[5] = X;
        const uint32_t a1[] = {Y}, a2[] = {77777, Y, 77777};
        for (int aj = 0; aj < 2; aj++) {
            size_t want = aj && cases[c].purged ? 0 : 1;
            assert_int_equal(check_pair(a1, 1, b, n, aj, "threshold", (int)c), want);
            assert_int_equal(check_pair(a2, 3, b, n, aj, "threshold", (int)c), want);
        }
    }
    /* A purged element is still matched by the extension loops next to a kept match: a = [t, t],
     * b = [t] * 200 gives one block (0, 0, 2) with autojunk on. */
    uint32_t t2[2] = {5, 5}, t200[200];
    for (int j = 0; j < 200; j++) t200[j] = 5;
    tdm_seq_matcher *m;
    assert_int_equal(tdm_seq_matcher_new(&m), TDM_OK);
    assert_int_equal(tdm_seq_matcher_set_b(m, t200, 200, 1), TDM_OK);
    const tdm_seq_block *bl;
    size_t nbl, matches;
    assert_int_equal(tdm_seq_matcher_blocks(m, t2, 2, &bl, &nbl, &matches), TDM_OK);
    assert_int_equal(nbl, 1);
    assert_int_equal(bl[0].i, 0);
    assert_int_equal(bl[0].j, 0);
    assert_int_equal(bl[0].n, 2);
    assert_int_equal(matches, 2);
    compare(m, t2, 2, t200, 200, 1, "extension", 0);
    tdm_seq_matcher_free(m);
}

/* ---- the spec's worked examples (spec/kato.md section 2.5) --------------------------------------------- */

static size_t blocks_of(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, int autojunk, tdm_seq_block *out,
                        double *ratio) {
    tdm_seq_matcher *m;
    assert_int_equal(tdm_seq_matcher_new(&m), TDM_OK);
    assert_int_equal(tdm_seq_matcher_set_b(m, b, nb, autojunk), TDM_OK);
    const tdm_seq_block *bl;
    size_t n, matches;
    assert_int_equal(tdm_seq_matcher_blocks(m, a, na, &bl, &n, &matches), TDM_OK);
    if (out && n) memcpy(out, bl, n * sizeof *bl);
    *ratio = tdm_seq_difflib_ratio(matches, na, nb);
    compare(m, a, na, b, nb, autojunk, "example", 0);
    tdm_seq_matcher_free(m);
    return n;
}

static void test_difflib_spec_examples(void **state) {
    (void)state;
    enum { A = 1, B, C, D, START, TICK, SA, SB, SC };
    tdm_seq_block bl[8];
    double ratio;
    /* E1: P = A B C, S = B D C A. */
    const uint32_t p1[] = {A, B, C}, s1[] = {B, D, C, A};
    for (int aj = 0; aj < 2; aj++) {
        assert_int_equal(blocks_of(p1, 3, s1, 4, aj, bl, &ratio), 1);
        assert_true(bl[0].i == 0 && bl[0].j == 3 && bl[0].n == 1);
        tu_assert_same_double(ratio, 0.2857142857142857, "E1 (P,S)");
        assert_int_equal(blocks_of(s1, 4, p1, 3, aj, bl, &ratio), 2);
        tu_assert_same_double(ratio, 0.5714285714285714, "E1 (S,P)");
    }
    /* E2: A B A vs B C A. */
    const uint32_t p2[] = {A, B, A}, s2[] = {B, C, A};
    assert_int_equal(blocks_of(p2, 3, s2, 3, 0, bl, &ratio), 1);
    assert_true(bl[0].i == 0 && bl[0].j == 2 && bl[0].n == 1);
    tu_assert_same_double(ratio, 0.3333333333333333, "E2 (P,S)");
    blocks_of(s2, 3, p2, 3, 0, bl, &ratio);
    tu_assert_same_double(ratio, 0.6666666666666666, "E2 (S,P)");
    /* E3: P = start tick tick, S = tick x 200. */
    uint32_t p3[] = {START, TICK, TICK}, s3[200];
    for (int j = 0; j < 200; j++) s3[j] = TICK;
    blocks_of(p3, 3, s3, 200, 0, bl, &ratio);
    tu_assert_same_double(ratio, 0.019704433497536946, "E3 autojunk off");
    assert_int_equal(blocks_of(p3, 3, s3, 200, 1, bl, &ratio), 0);
    tu_assert_same_double(ratio, 0.0, "E3 autojunk on");
    blocks_of(s3, 200, p3, 3, 1, bl, &ratio);
    tu_assert_same_double(ratio, 0.019704433497536946, "E3 (S,P)");
    /* E5: P = (a b) x 100, S = c a. */
    uint32_t p5[200], s5[] = {SC, SA};
    for (int j = 0; j < 200; j++) p5[j] = j % 2 ? SB : SA;
    for (int aj = 0; aj < 2; aj++) {
        blocks_of(p5, 200, s5, 2, aj, bl, &ratio);
        tu_assert_same_double(ratio, 0.009900990099009901, "E5 (P,S)");
    }
    assert_int_equal(blocks_of(s5, 2, p5, 200, 1, bl, &ratio), 0);
    tu_assert_same_double(ratio, 0.0, "E5 difflib(S,P) autojunk");
    blocks_of(s5, 2, p5, 200, 0, bl, &ratio);
    tu_assert_same_double(ratio, 0.009900990099009901, "E5 (S,P) autojunk off");
    /* Empty sides. */
    assert_int_equal(blocks_of(NULL, 0, NULL, 0, 1, bl, &ratio), 0);
    tu_assert_same_double(ratio, 1.0, "both empty");
    assert_int_equal(blocks_of(p1, 3, NULL, 0, 0, bl, &ratio), 0);
    tu_assert_same_double(ratio, 0.0, "b empty");
    assert_int_equal(blocks_of(NULL, 0, p1, 3, 0, bl, &ratio), 0);
    tu_assert_same_double(ratio, 0.0, "a empty");
}

/* One matcher, many b and many a: growth, shrinking and autojunk changes must leave no trace. */
static void test_difflib_matcher_reuse(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(3);
    tdm_seq_matcher *m;
    assert_int_equal(tdm_seq_matcher_new(&m), TDM_OK);
    /* Blocks before any set_b: b is empty. */
    const uint32_t one[] = {1, 2};
    const tdm_seq_block *bl;
    size_t nbl = 9, matches = 9;
    assert_int_equal(tdm_seq_matcher_blocks(m, one, 2, &bl, &nbl, &matches), TDM_OK);
    assert_int_equal(nbl, 0);
    assert_int_equal(matches, 0);
    uint32_t a[400], b[400];
    for (int round = 0; round < 300; round++) {
        kind k = (kind)tu_below(&r, 3);
        uint32_t tiny = 1 + (uint32_t)tu_below(&r, 4);
        size_t nb = tu_below(&r, 5) == 0 ? 200 + (size_t)tu_below(&r, 200) : (size_t)tu_below(&r, 60);
        fill(&r, b, nb, k, tiny);
        int aj = (int)tu_below(&r, 2);
        assert_int_equal(tdm_seq_matcher_set_b(m, b, nb, aj), TDM_OK);
        for (int q = 0; q < 4; q++) {
            size_t na = tu_below(&r, 6) == 0 ? 200 + (size_t)tu_below(&r, 200) : (size_t)tu_below(&r, 60);
            if (q == 3) na = fill_related(&r, b, nb, a, 400, k, tiny);
            else fill(&r, a, na, k, tiny);
            size_t want = compare(m, a, na, b, nb, aj, "reuse", round);
            /* The same a again, and a fresh matcher: identical. */
            assert_int_equal(compare(m, a, na, b, nb, aj, "reuse again", round), want);
            tdm_seq_matcher *fresh;
            assert_int_equal(tdm_seq_matcher_new(&fresh), TDM_OK);
            assert_int_equal(tdm_seq_matcher_set_b(fresh, b, nb, aj), TDM_OK);
            const tdm_seq_block *fb, *mb;
            size_t nf, nm, mf, mm;
            assert_int_equal(tdm_seq_matcher_blocks(fresh, a, na, &fb, &nf, &mf), TDM_OK);
            assert_int_equal(tdm_seq_matcher_blocks(m, a, na, &mb, &nm, &mm), TDM_OK);
            assert_int_equal(nf, nm);
            assert_int_equal(mf, mm);
            if (nf) assert_memory_equal(fb, mb, nf * sizeof *fb);
            tdm_seq_matcher_free(fresh);
        }
    }
    /* set_b copies b: changing the caller's array afterwards changes nothing. */
    for (int j = 0; j < 50; j++) b[j] = (uint32_t)j % 3;
    assert_int_equal(tdm_seq_matcher_set_b(m, b, 50, 0), TDM_OK);
    for (int j = 0; j < 50; j++) a[j] = (uint32_t)(j * 7) % 3;
    uint32_t saved[50];
    memcpy(saved, b, sizeof saved);
    size_t want = compare(m, a, 50, saved, 50, 0, "copy", 0);
    for (int j = 0; j < 50; j++) b[j] = 99;
    assert_int_equal(tdm_seq_matcher_blocks(m, a, 50, &bl, &nbl, &matches), TDM_OK);
    assert_int_equal(matches, want);
    assert_int_equal(tdm_seq_matcher_new(NULL), TDM_E_INVAL);
    assert_int_equal(tdm_seq_matcher_set_b(m, NULL, 3, 0), TDM_E_INVAL);
    assert_int_equal(tdm_seq_matcher_blocks(m, NULL, 3, &bl, &nbl, NULL), TDM_E_INVAL);
    assert_int_equal(tdm_seq_matcher_blocks(m, a, 3, &bl, &nbl, NULL), TDM_OK); /* matches optional */
    tdm_seq_matcher_free(m);
    tdm_seq_matcher_free(NULL);
}

/* KATO's extraction (src/kato/predict.c) takes the flat extras of (present_flat, S) from the blocks of
 * (P, S) instead of matching again: with no junk, the blocks of a[i0, iend) against b, where [i0, iend)
 * runs from the first block's start to the last block's end, are the blocks of (a, b) shifted by i0.
 * Checked here on the reference transcription, both sides of the 64-element bit-parallel limit. */
static void test_difflib_present_span(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(4);
    uint32_t a[160], b[160];
    match full[170], part[170];
    int spans = 0;
    for (int iter = 0; iter < 8000; iter++) {
        kind k = (kind)tu_below(&r, 3);
        uint32_t tiny = 1 + (uint32_t)tu_below(&r, 6);
        size_t na = (size_t)tu_below(&r, tu_below(&r, 4) ? 41 : 150), nb = (size_t)tu_below(&r, tu_below(&r, 4) ? 41 : 150);
        fill(&r, a, na, k, tiny);
        if (tu_below(&r, 2) == 0) nb = fill_related(&r, a, na, b, 160, k, tiny);
        else fill(&r, b, nb, k, tiny);
        size_t n = reference_blocks(a, na, b, nb, 0, full);
        if (!n) continue;
        size_t i0 = full[0].i, iend = full[n - 1].i + full[n - 1].k;
        spans += i0 > 0 || iend < na;
        size_t n2 = reference_blocks(a + i0, iend - i0, b, nb, 0, part);
        tu_check(n2 == n, "iter %d: %zu blocks on the span, %zu on the whole", iter, n2, n);
        for (size_t t = 0; t < n; t++)
            tu_check(part[t].i + i0 == full[t].i && part[t].j == full[t].j && part[t].k == full[t].k,
                     "iter %d: block %zu differs on the span", iter, t);
        /* and the library agrees on the span */
        check_pair(a + i0, iend - i0, b, nb, 0, "span", iter);
    }
    tu_check(spans > 1000, "only %d proper spans: the test does not exercise the identity", spans);
}

int main(void) {
    tu_init_seed("test_difflib");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_difflib_spec_examples),
        cmocka_unit_test(test_difflib_autojunk_threshold),
        cmocka_unit_test(test_difflib_random_short),
        cmocka_unit_test(test_difflib_random_long),
        cmocka_unit_test(test_difflib_long_a_short_b),
        cmocka_unit_test(test_difflib_matcher_reuse),
        cmocka_unit_test(test_difflib_present_span),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
