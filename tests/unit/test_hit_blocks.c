/* test_hit_blocks.c: the matching-block summaries queries return with their hits (tdm_seq_query_opts.blocks,
 * tdm_seq_hit_blocks; src/seq/hit_blocks.c): for seeded random stores (small alphabets with runs of repeats,
 * patterns of 200+ symbols where autojunk purges, duplicates) and STMs (copies, edited copies, unknown
 * symbols, the empty STM, long repetitive STMs), every metric configuration, thresholds, top-k, prefilters
 * on and off, one and two threads, single queries and batches (the lanes included): asking for blocks
 * must not change the hits, and every hit's summary must equal the one recomputed from the matcher's own
 * blocks (hit_blocks_check.h). tdm_seq_matcher_summary is checked the same way on random pairs and on
 * hand-worked examples. */
#include "unit_common.h"

#include "hit_blocks_check.h"
#include "seq/seq_internal.h"
#include "seq_configs.h"

TU_CTX2_GROUP

/* ---- the pair-level summary ----------------------------------------------------------------------------- */

static tdm_seq_hit_blocks summary_of(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, int autojunk) {
    tdm_seq_matcher *m;
    assert_int_equal(tdm_seq_matcher_new(&m), TDM_OK);
    assert_int_equal(tdm_seq_matcher_set_b(m, b, nb, autojunk), TDM_OK);
    tdm_seq_hit_blocks x;
    assert_int_equal(tdm_seq_matcher_summary(m, a, na, &x), TDM_OK);
    tdm_seq_matcher_free(m);
    return x;
}

/* Worked by hand from CPython's get_matching_blocks. */
static void test_summary_examples(void **state) {
    (void)state;
    enum { A = 1, B, C, D, X, Y };
    /* spec 2.5 E1: P = A B C, S = B D C A: one block (0, 3, 1) */
    const uint32_t p1[] = {A, B, C}, s1[] = {B, D, C, A};
    tdm_seq_hit_blocks x = summary_of(p1, 3, s1, 4, 0);
    assert_true(hb_same(x, (tdm_seq_hit_blocks){1, 1, 0, 3, 1, 0}));
    /* P = X A Y A B, S = A B: the longest block (3, 0, 2) first; A occurs 2 before position 3 */
    const uint32_t p2[] = {X, A, Y, A, B}, s2[] = {A, B};
    x = summary_of(p2, 5, s2, 2, 0);
    assert_true(hb_same(x, (tdm_seq_hit_blocks){2, 1, 3, 0, 5, 2}));
    /* P = A B X C D, S = A B Y C D: blocks (0, 0, 2) and (3, 3, 2) */
    const uint32_t p3[] = {A, B, X, C, D}, s3[] = {A, B, Y, C, D};
    x = summary_of(p3, 5, s3, 5, 0);
    assert_true(hb_same(x, (tdm_seq_hit_blocks){4, 2, 0, 0, 5, 0}));
    /* nothing in common, an empty side, unknown symbols: all zero */
    const uint32_t s4[] = {Y, TDM_SEQ_UNKNOWN};
    x = summary_of(p1, 3, s4, 2, 0);
    assert_true(hb_same(x, (tdm_seq_hit_blocks){0}));
    x = summary_of(p1, 3, s4, 0, 1);
    assert_true(hb_same(x, (tdm_seq_hit_blocks){0}));
    x = summary_of(NULL, 0, s1, 4, 0);
    assert_true(hb_same(x, (tdm_seq_hit_blocks){0}));
    /* E3: P = start tick tick, S = tick x 200: with autojunk tick is popular and nothing matches; without,
     * the first tick of P meets the first of S */
    uint32_t s5[200];
    for (int i = 0; i < 200; i++) s5[i] = B;
    const uint32_t p5[] = {A, B, B};
    x = summary_of(p5, 3, s5, 200, 1);
    assert_true(hb_same(x, (tdm_seq_hit_blocks){0}));
    x = summary_of(p5, 3, s5, 200, 0);
    assert_true(hb_same(x, (tdm_seq_hit_blocks){2, 1, 1, 0, 3, 0}));
    tdm_seq_matcher *m;
    assert_int_equal(tdm_seq_matcher_new(&m), TDM_OK);
    assert_int_equal(tdm_seq_matcher_summary(m, p1, 3, NULL), TDM_E_INVAL);
    tdm_seq_matcher_free(m);
}

/* Random pairs over 1 to 6 symbols, b up to 400 long (autojunk both ways): the summary against the block
 * list, and tdm_seq_blocks_summary against both. */
static void test_summary_random(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0xB10C);
    tdm_seq_matcher *m;
    assert_int_equal(tdm_seq_matcher_new(&m), TDM_OK);
    uint32_t a[320], b[420];
    int several = 0, repeats = 0;
    for (int t = 0; t < 6000; t++) {
        uint32_t alpha = 1 + (uint32_t)tu_below(&r, 6);
        size_t na = (size_t)tu_below(&r, t % 7 == 0 ? 320 : 30), nb = (size_t)tu_below(&r, t % 5 == 0 ? 420 : 30);
        for (size_t i = 0; i < na; i++) a[i] = (uint32_t)tu_below(&r, alpha);
        for (size_t i = 0; i < nb; i++) b[i] = tu_below(&r, 10) ? (uint32_t)tu_below(&r, alpha) : TDM_SEQ_UNKNOWN;
        int aj = (int)tu_below(&r, 2);
        assert_int_equal(tdm_seq_matcher_set_b(m, b, nb, aj), TDM_OK);
        tdm_seq_hit_blocks want = hb_expect(m, a, na), got;
        assert_int_equal(tdm_seq_matcher_summary(m, a, na, &got), TDM_OK);
        tu_check(hb_same(got, want), "pair %d (|a| %zu, |b| %zu, autojunk %d): summary differs", t, na, nb, aj);
        const tdm_seq_block *bl;
        size_t nbl, total;
        assert_int_equal(tdm_seq_matcher_blocks(m, a, na, &bl, &nbl, &total), TDM_OK);
        tdm_seq_blocks_summary(bl, nbl, total, a, &got);
        tu_check(hb_same(got, want), "pair %d: tdm_seq_blocks_summary differs", t);
        several += want.nblocks > 1;
        repeats += want.a_repeat > 0;
    }
    tdm_seq_matcher_free(m);
    tu_check(several > 1000 && repeats > 300, "only %d pairs with several blocks, %d with a repeat", several, repeats);
}

/* ---- queries -------------------------------------------------------------------------------------------- */

static uint32_t rank_id(tdm_seq_store *s, uint32_t rank) {
    char name[16];
    size_t len = tdm_seq_gen_symbol_name(rank, name);
    uint32_t id;
    assert_int_equal(tdm_seq_vocab_intern(tdm_seq_store_vocab(s), name, len, &id), TDM_OK);
    return id;
}

/* npat patterns over vocab ranks: generated ones, duplicates, runs of one symbol, and long ones (200-300). */
static tdm_seq_store *make_store(tu_rng *r, uint32_t vocab, uint32_t npat) {
    tdm_seq_store *s;
    assert_int_equal(tdm_seq_store_new(ctx, &s), TDM_OK);
    tdm_seq_gen_opts o;
    tdm_seq_gen_opts_init(&o);
    o.seed = tu_next(r), o.vocab = vocab, o.min_len = 0, o.max_len = 40, o.mean_len = 12, o.zipf_s = 0.9;
    tdm_seq_gen *g;
    assert_int_equal(tdm_seq_gen_new(&o, &g), TDM_OK);
    uint32_t ranks[300], ids[300];
    for (uint32_t p = 0; p < npat; p++) {
        size_t n;
        uint64_t kind = tu_below(r, 100);
        if (kind < 4 && p) {
            const uint32_t *old;
            assert_int_equal(tdm_seq_store_get(s, (uint32_t)tu_below(r, p), &old, &n), TDM_OK);
            memcpy(ids, old, n * sizeof *ids);
        } else if (kind < 7) {
            n = 200 + (size_t)tu_below(r, 100);
            for (size_t i = 0; i < n; i++) ids[i] = rank_id(s, tdm_seq_gen_symbol(g));
        } else {
            tdm_seq_gen_next(g, ranks, &n);
            for (size_t i = 0; i < n; i++) ids[i] = rank_id(s, ranks[i]);
            if (kind < 12 && n > 3) /* a run of one symbol: repeats before the first block */
                for (size_t i = 1; i < n / 2; i++) ids[i] = ids[0];
        }
        assert_int_equal(tdm_seq_store_add(s, ids, n, NULL), TDM_OK);
    }
    tdm_seq_gen_free(g);
    return s;
}

/* STMs: empty, copies and edited copies of stored patterns, fresh draws with unknown symbols, and long
 * repetitive ones (200+, where autojunk purges the STM's popular symbols). */
static size_t make_stms(tu_rng *r, const tdm_seq_store *s, uint32_t vocab, tdm_seq_stm *out, size_t cap) {
    uint32_t count = tdm_seq_store_count(s), V = tdm_seq_vocab_size(tdm_seq_store_vocab_const(s));
    uint32_t ids[400];
    size_t k = 0;
    while (k < cap) {
        size_t n = 0, kind = k % 5;
        if (kind == 1 || kind == 2) {
            const uint32_t *p;
            size_t np;
            assert_int_equal(tdm_seq_store_get(s, (uint32_t)tu_below(r, count), &p, &np), TDM_OK);
            for (size_t i = 0; i < np && n < 60; i++) {
                if (kind == 2 && !tu_below(r, 4)) ids[n++] = (uint32_t)tu_below(r, V);
                if (kind == 2 && !tu_below(r, 5)) continue;
                ids[n++] = p[i];
            }
        } else if (kind == 3) {
            n = 1 + (size_t)tu_below(r, 30);
            for (size_t i = 0; i < n; i++) ids[i] = tu_below(r, 5) ? (uint32_t)tu_below(r, V < vocab ? V : vocab) : TDM_SEQ_UNKNOWN;
        } else if (kind == 4) {
            n = 200 + (size_t)tu_below(r, 150);
            for (size_t i = 0; i < n; i++) ids[i] = tu_below(r, 3) ? (uint32_t)tu_below(r, 4 < V ? 4 : V) : (uint32_t)tu_below(r, V);
        }
        /* through the vocabulary, so that the char metric has the code points (unknowns stay unknown) */
        tdm_seq_stm *q = &out[k++];
        const char **syms = malloc((n + 1) * sizeof *syms);
        size_t *lens = malloc((n + 1) * sizeof *lens);
        for (size_t i = 0; i < n; i++)
            if (ids[i] == TDM_SEQ_UNKNOWN) syms[i] = "zz", lens[i] = 2;
            else assert_int_equal(tdm_seq_vocab_get(tdm_seq_store_vocab_const(s), ids[i], &syms[i], &lens[i]), TDM_OK);
        assert_int_equal(tdm_seq_stm_encode(tdm_seq_store_vocab_const(s), syms, lens, n, q), TDM_OK);
        if (n) assert_memory_equal(q->ids, ids, n * sizeof *ids);
        free(syms), free(lens);
    }
    return k;
}

static void free_stms(tdm_seq_stm *stms, size_t n) {
    for (size_t i = 0; i < n; i++) tdm_seq_stm_clear(&stms[i]);
}

static void same_hits(const tdm_seq_result *a, const tdm_seq_result *b, const char *what) {
    tu_check(a->n == b->n, "%s: %zu hits with blocks, %zu without", what, a->n, b->n);
    for (size_t h = 0; h < a->n; h++) {
        tu_check(a->hits[h].id == b->hits[h].id, "%s: hit %zu: id %u vs %u", what, h, a->hits[h].id, b->hits[h].id);
        tu_assert_same_double(a->hits[h].similarity, b->hits[h].similarity, "%s: hit %zu", what, h);
    }
}

/* Every configuration, thresholds and top-k, prefilters on and off, one and two threads. */
static void test_query_blocks(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0xB10C5);
    size_t with = 0, empty = 0, total = 0;
    for (int round = 0; round < 3; round++) {
        uint32_t vocab = round == 0 ? 5 : round == 1 ? 30 : 400;
        tdm_seq_store *s = make_store(&r, vocab, round == 2 ? 3000 : 600);
        enum { N = 10 };
        tdm_seq_stm stms[N];
        size_t n = make_stms(&r, s, vocab, stms, N);
        for (size_t c = 0; c < NCONFIG; c++) {
            for (int t = 0; t < 7; t++) {
                tdm_seq_query_opts o;
                tdm_seq_query_opts_init(&o);
                o.metric = configs[c].metric, o.autojunk = configs[c].autojunk, o.stm_first = configs[c].stm_first;
                const double thr[] = {0.0, 0.1, 0.5, 1.0};
                if (t < 4) o.threshold = thr[t];
                else o.top_k = t == 4 ? 1 : t == 5 ? 7 : tdm_seq_store_count(s) + 3;
                for (size_t i = 0; i < n; i++) {
                    if (o.metric == TDM_SEQ_CHAR && stms[i].n > 60) continue; /* char LCS over long STMs: slow */
                    o.no_prefilter = (int)tu_below(&r, 4) == 0;
                    o.threads = 1 + (int)tu_below(&r, 2);
                    char what[160];
                    snprintf(what, sizeof what, "round %d %s thr %g top %u STM %zu (m %zu) nopf %d threads %d", round,
                             configs[c].name, o.threshold, o.top_k, i, stms[i].n, o.no_prefilter, o.threads);
                    tdm_seq_result plain, got;
                    o.blocks = 0;
                    assert_int_equal(tdm_seq_query(s, &stms[i], &o, &plain), TDM_OK);
                    assert_null(plain.blocks);
                    o.blocks = 1;
                    assert_int_equal(tdm_seq_query(s, &stms[i], &o, &got), TDM_OK);
                    same_hits(&got, &plain, what);
                    with += hb_check(s, &stms[i], o.autojunk, &got, what);
                    empty += got.n == 0;
                    total += got.n;
                    tdm_seq_result_clear(&plain);
                    tdm_seq_result_clear(&got);
                    assert_null(got.blocks);
                }
            }
        }
        free_stms(stms, n);
        tdm_seq_store_free(s);
    }
    tu_check(with > 10000 && empty > 20 && total > with, "coverage: %zu hits with blocks of %zu, %zu empty results", with,
             total, empty);
}

/* Batches answer as single queries do, summaries included: low-threshold lcs batches go through the
 * lanes (sixteen STMs at a time), the rest one by one. */
static void test_batch_blocks(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0xBA7C4);
    tdm_seq_store *s = make_store(&r, 40, 8000);
    enum { N = 40 };
    tdm_seq_stm stms[N];
    size_t n = make_stms(&r, s, 40, stms, N);
    size_t with = 0;
    for (size_t c = 0; c < NCONFIG; c++) {
        if (configs[c].metric == TDM_SEQ_CHAR) continue;
        for (int t = 0; t < 4; t++) {
            tdm_seq_query_opts o;
            tdm_seq_query_opts_init(&o);
            o.metric = configs[c].metric, o.autojunk = configs[c].autojunk, o.stm_first = configs[c].stm_first;
            const double thr[] = {0.0, 0.1, 0.4};
            if (t < 3) o.threshold = thr[t];
            else o.top_k = 9;
            o.blocks = 1;
            o.threads = t % 2 ? 1 : 0;
            tdm_seq_result out[N];
            assert_int_equal(tdm_seq_query_batch(s, stms, n, &o, out), TDM_OK);
            for (size_t i = 0; i < n; i++) {
                char what[128];
                snprintf(what, sizeof what, "batch %s thr %g top %u STM %zu", configs[c].name, o.threshold, o.top_k, i);
                tdm_seq_result one;
                assert_int_equal(tdm_seq_query(s, &stms[i], &o, &one), TDM_OK);
                same_hits(&out[i], &one, what);
                with += hb_check(s, &stms[i], o.autojunk, &out[i], what);
                for (size_t h = 0; h < one.n; h++) tu_check(hb_same(out[i].blocks[h], one.blocks[h]), "%s: hit %zu", what, h);
                tdm_seq_result_clear(&one);
                tdm_seq_result_clear(&out[i]);
            }
        }
    }
    tu_check(with > 10000, "only %zu batch hits with blocks", with);
    free_stms(stms, n);
    tdm_seq_store_free(s);
}

/* The lanes directly (the batch decides by cost whether to use them): their results get summaries too. */
static void test_lanes_blocks(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(0x1A9E5);
    tdm_seq_store *s = make_store(&r, 40, 6000);
    enum { N = 20 };
    tdm_seq_stm stms[N];
    size_t n = make_stms(&r, s, 40, stms, N);
    const tdm_seq_stm *use[N];
    tdm_seq_result res[N], *out[N];
    size_t nu = 0;
    for (size_t i = 0; i < n; i++)
        if (tdm_seq_lanes_fit(s, stms[i].n)) use[nu] = &stms[i], out[nu] = &res[nu], nu++;
    assert_true(nu >= 2);
    tdm_seq_query_opts o;
    tdm_seq_query_opts_init(&o);
    o.blocks = 1;
    assert_int_equal(tdm_seq_query_lanes(s, use, nu, &o, out), TDM_OK);
    size_t with = 0;
    for (size_t i = 0; i < nu; i++) {
        assert_null(res[i].blocks);
        assert_int_equal(tdm_seq_result_add_blocks(s, use[i], &o, &res[i]), TDM_OK);
        with += hb_check(s, use[i], 0, &res[i], "lanes");
        tdm_seq_result_clear(&res[i]);
    }
    tu_check(with > 1000, "only %zu lane hits with blocks", with);
    free_stms(stms, n);
    tdm_seq_store_free(s);
}

int main(void) {
    tu_init_seed("test_hit_blocks");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_examples),
        cmocka_unit_test(test_summary_random),
        cmocka_unit_test_setup_teardown(test_query_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_blocks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lanes_blocks, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
