/* test_query.c: unit tests of threshold and top-k queries (src/seq/query.c) and STM encoding. A query
 * must return exactly what scoring every pattern one by one returns: the prefilters (length bound,
 * symbol-multiset bound, LCS bound for difflib) may only drop patterns that cannot pass, the parallel
 * scan must not change the result or its order, and each similarity must be the same double as the
 * pair-level functions give. So for random stores made with the library's generator (small vocabularies,
 * so that similarities are spread out) and random STMs (perturbed copies of stored patterns, unknown
 * symbols, the empty STM, long ones), every metric configuration is checked against a brute-force scan
 * written here from KATO's acceptance rules (spec/kato.md section 2.3): filtered == unfiltered, threads 1
 * == threads 2, batch == single, top-k == the head of the full ranking (ties at the boundary included),
 * and the prefilter statistics add up. */
#include "unit_common.h"

#include <math.h>

#include "tandem/backend.h"
#include "tandem/seq.h"
#include "seq/seq_internal.h"

TU_CTX2_GROUP

/* ---- stores and STMs ---------------------------------------------------------------------------------- */

static uint32_t intern(tdm_seq_store *s, const char *name) {
    uint32_t id;
    assert_int_equal(tdm_seq_vocab_intern(tdm_seq_store_vocab(s), name, strlen(name), &id), TDM_OK);
    return id;
}

static uint32_t rank_id(tdm_seq_store *s, uint32_t rank) {
    char name[16];
    tdm_seq_gen_symbol_name(rank, name);
    return intern(s, name);
}

/* npat generated patterns (lengths 0..max_len) over vocab ranks, plus duplicates (ties), a few long
 * patterns (>= 200, where difflib's autojunk applies) and a few with multi-byte symbols. */
static tdm_seq_store *make_store(uint64_t seed, uint32_t vocab, uint32_t npat, uint32_t max_len, double mean) {
    tdm_seq_store *s;
    assert_int_equal(tdm_seq_store_new(ctx, &s), TDM_OK);
    tdm_seq_gen_opts o;
    tdm_seq_gen_opts_init(&o);
    o.seed = seed, o.vocab = vocab, o.min_len = 0, o.max_len = max_len, o.mean_len = mean, o.zipf_s = 0.8;
    tdm_seq_gen *g;
    assert_int_equal(tdm_seq_gen_new(&o, &g), TDM_OK);
    uint32_t *ranks = malloc(300 * sizeof *ranks), *ids = malloc(300 * sizeof *ids);
    const char *wide[] = {"\xE6\x97\xA5", "s\xC3\xA9", "\xF0\x9F\x98\x80s1"};
    for (uint32_t p = 0; p < npat; p++) {
        size_t n;
        uint64_t kind = tdm_seq_gen_uniform(g, 100);
        if (kind < 2 && p > 0) { /* a duplicate of an earlier pattern */
            const uint32_t *old;
            assert_int_equal(tdm_seq_store_get(s, (uint32_t)tdm_seq_gen_uniform(g, p), &old, &n), TDM_OK);
            memcpy(ids, old, n * sizeof *ids);
        } else if (kind == 2) { /* long */
            n = 200 + (size_t)tdm_seq_gen_uniform(g, 60);
            for (size_t i = 0; i < n; i++) ids[i] = rank_id(s, tdm_seq_gen_symbol(g));
        } else {
            tdm_seq_gen_next(g, ranks, &n);
            for (size_t i = 0; i < n; i++) ids[i] = rank_id(s, ranks[i]);
            if (kind == 3)
                for (size_t i = 0; i < n; i += 2) ids[i] = intern(s, wide[tdm_seq_gen_uniform(g, 3)]);
        }
        assert_int_equal(tdm_seq_store_add(s, ids, n, NULL), TDM_OK);
    }
    free(ranks), free(ids);
    tdm_seq_gen_free(g);
    return s;
}

/* STMs of every kind the engine meets. The caller releases them with tdm_seq_stm_clear. */
static size_t make_stms(tdm_seq_store *s, tu_rng *r, uint32_t vocab, tdm_seq_stm *out, size_t cap, int allow_long) {
    const tdm_seq_vocab *v = tdm_seq_store_vocab_const(s);
    uint32_t count = tdm_seq_store_count(s);
    size_t k = 0;
    uint32_t ids[400];
    /* The empty STM. */
    assert_int_equal(tdm_seq_stm_from_ids(v, NULL, 0, &out[k++]), TDM_OK);
    while (k < cap) {
        uint64_t kind = k % 6;
        size_t n = 0;
        if (kind <= 2) { /* a stored pattern, copied (kind 0) or perturbed */
            const uint32_t *p;
            size_t np;
            assert_int_equal(tdm_seq_store_get(s, (uint32_t)tu_below(r, count), &p, &np), TDM_OK);
            if (np > 60) np = 60;
            for (size_t i = 0; i < np; i++) {
                uint64_t e = kind == 0 ? 9 : tu_below(r, 8);
                if (e == 0) continue;
                if (e == 1) ids[n++] = rank_id(s, (uint32_t)tu_below(r, vocab));
                ids[n++] = e == 2 ? rank_id(s, (uint32_t)tu_below(r, vocab)) : p[i];
            }
            assert_int_equal(tdm_seq_stm_from_ids(v, ids, n, &out[k++]), TDM_OK);
        } else if (kind == 3) { /* random, sometimes long */
            n = allow_long && k == 3 ? 200 + (size_t)tu_below(r, 30) : 1 + (size_t)tu_below(r, 25);
            for (size_t i = 0; i < n; i++) ids[i] = rank_id(s, (uint32_t)tu_below(r, vocab));
            assert_int_equal(tdm_seq_stm_from_ids(v, ids, n, &out[k++]), TDM_OK);
        } else { /* strings, some unknown to the vocabulary (they keep their place and never match) */
            char names[40][24];
            const char *syms[40];
            size_t lens[40];
            n = 1 + (size_t)tu_below(r, 30);
            for (size_t i = 0; i < n; i++) {
                uint64_t u = tu_below(r, 4);
                if (u == 0) snprintf(names[i], sizeof names[i], "zz%u", (unsigned)tu_below(r, 5));
                else if (u == 1) snprintf(names[i], sizeof names[i], "s%u\xC3\xA9", (unsigned)tu_below(r, vocab));
                else tdm_seq_gen_symbol_name((uint32_t)tu_below(r, vocab + 2), names[i]); /* maybe unseen ranks */
                syms[i] = names[i];
                lens[i] = strlen(names[i]);
            }
            uint32_t before = tdm_seq_vocab_size(v);
            assert_int_equal(tdm_seq_stm_encode(v, syms, lens, n, &out[k]), TDM_OK);
            assert_int_equal(tdm_seq_vocab_size(v), before); /* encoding never grows the vocabulary */
            k++;
        }
    }
    return k;
}

/* ---- the brute-force reference ---------------------------------------------------------------------- */

#include "seq_configs.h" /* the metric configurations every query test runs */

typedef struct {
    uint32_t id;
    double sim;
    size_t count, m, n; /* common elements, STM and pattern lengths in the metric's units */
} scored;

/* KATO's acceptance test, from the spec: RapidFuzz's cutoff thr*100-1e-6 on r, then r/100 >= thr, for the
 * token and character metrics; ratio >= thr for difflib. */
static int kato_passes(tdm_seq_metric metric, size_t count, size_t m, size_t n, double thr) {
    size_t t = m + n;
    if (metric == TDM_SEQ_DIFFLIB) return (t ? 2.0 * (double)count / (double)t : 1.0) >= thr;
    double r = metric == TDM_SEQ_LCS ? (t ? (2.0 * (double)count / (double)t) * 100.0 : 0.0)
                                     : (t ? (1.0 - (double)(t - 2 * count) / (double)t) * 100.0 : 100.0);
    return r >= thr * 100.0 - 1e-6 && r / 100.0 >= thr;
}

/* Code points of the space-joined symbols of a pattern. */
static size_t joined(const tdm_seq_vocab *v, const uint32_t *p, size_t n, uint32_t *out) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (i) out[k++] = ' ';
        const uint32_t *cps;
        size_t nc;
        assert_int_equal(tdm_seq_vocab_codepoints(v, p[i], &cps, &nc), TDM_OK);
        memcpy(out + k, cps, nc * sizeof *cps);
        k += nc;
    }
    return k;
}

/* Every pattern scored with the pair-level functions. */
static void brute(const tdm_seq_store *s, const tdm_seq_stm *stm, config c, scored *out) {
    const tdm_seq_vocab *v = tdm_seq_store_vocab_const(s);
    uint32_t count = tdm_seq_store_count(s);
    int has_unknown = 0;
    for (size_t i = 0; i < stm->n; i++) has_unknown |= stm->ids[i] == TDM_SEQ_UNKNOWN;
    tdm_seq_matcher *mt;
    assert_int_equal(tdm_seq_matcher_new(&mt), TDM_OK);
    if (c.metric == TDM_SEQ_DIFFLIB && !c.stm_first) assert_int_equal(tdm_seq_matcher_set_b(mt, stm->ids, stm->n, c.autojunk), TDM_OK);
    uint32_t *cps = malloc(40 * (tdm_seq_store_max_length(s) + 1) * sizeof *cps);
    for (uint32_t id = 0; id < count; id++) {
        const uint32_t *p;
        size_t np;
        assert_int_equal(tdm_seq_store_get(s, id, &p, &np), TDM_OK);
        scored x = {id, 0.0, 0, stm->n, np};
        if (c.metric == TDM_SEQ_LCS) {
            assert_int_equal(tdm_seq_lcs_length(p, np, stm->ids, stm->n, &x.count), TDM_OK);
            x.sim = tdm_seq_lcs_ratio(x.count, np, stm->n);
        } else if (c.metric == TDM_SEQ_CHAR) {
            x.n = joined(v, p, np, cps);
            x.m = stm->ncp;
            assert_int_equal(tdm_seq_lcs_length(cps, x.n, stm->cps, stm->ncp, &x.count), TDM_OK);
            x.sim = tdm_seq_char_ratio(x.count, x.n, x.m);
            if (!has_unknown && tu_below(&(tu_rng){id ^ stm->n}, 8) == 0) { /* the vocabulary-level function agrees */
                size_t l, la, lb;
                assert_int_equal(tdm_seq_char_lcs(v, p, np, stm->ids, stm->n, &l, &la, &lb), TDM_OK);
                assert_int_equal(l, x.count);
                assert_int_equal(la, x.n);
                assert_int_equal(lb, x.m);
            }
        } else {
            const tdm_seq_block *bl;
            size_t nbl;
            if (c.stm_first) {
                assert_int_equal(tdm_seq_matcher_set_b(mt, p, np, c.autojunk), TDM_OK);
                assert_int_equal(tdm_seq_matcher_blocks(mt, stm->ids, stm->n, &bl, &nbl, &x.count), TDM_OK);
            } else {
                assert_int_equal(tdm_seq_matcher_blocks(mt, p, np, &bl, &nbl, &x.count), TDM_OK);
            }
            x.sim = tdm_seq_difflib_ratio(x.count, np, stm->n);
        }
        out[id] = x;
    }
    free(cps);
    tdm_seq_matcher_free(mt);
}

static int cmp_scored(const void *x, const void *y) {
    const scored *a = x, *b = y;
    if (a->sim != b->sim) return a->sim > b->sim ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

/* Fails unless res holds exactly want[0..n): same ids, same bits, same order. */
static void check_hits(const tdm_seq_result *res, const scored *want, size_t n, const char *what, const char *cfg,
                       size_t stm, double thr, uint32_t k) {
    int same = res->n == n;
    size_t bad = 0;
    for (size_t i = 0; same && i < n; i++)
        if (res->hits[i].id != want[i].id || tu_bits(res->hits[i].similarity) != tu_bits(want[i].sim)) same = 0, bad = i;
    if (!same) {
        print_error("%s: %s, STM %zu, threshold %.17g, top_k %u: %zu hits, want %zu\n", what, cfg, stm, thr, k, res->n, n);
        if (bad < n && bad < res->n)
            print_error("  first difference at %zu: (%u, %.17g) vs (%u, %.17g)\n", bad, res->hits[bad].id,
                        res->hits[bad].similarity, want[bad].id, want[bad].sim);
        fail();
    }
    assert_int_equal(res->stats.returned, n);
}

static tdm_seq_result run(const tdm_seq_store *s, const tdm_seq_stm *stm, config c, double thr, uint32_t k, int nofilter,
                          int threads) {
    tdm_seq_query_opts o;
    tdm_seq_query_opts_init(&o);
    o.metric = c.metric, o.autojunk = c.autojunk, o.stm_first = c.stm_first;
    o.threshold = thr, o.top_k = k, o.no_prefilter = nofilter, o.threads = threads;
    tdm_seq_result res;
    memset(&res, 0, sizeof res);
    int rc = tdm_seq_query(s, stm, &o, &res);
    tu_check(rc == TDM_OK, "query %s: rc %d (%s)", c.name, rc, tdm_last_error());
    return res;
}

/* ---- the checks -------------------------------------------------------------------------------------- */

static uint64_t pruned(const tdm_seq_query_stats *st) {
    return st->length_pruned + st->index_pruned + st->multiset_pruned + st->lcs_pruned;
}

/* Which prefilter paths the random queries went through (each must be exercised). */
static struct {
    int index, length, multiset, lcs, block, one;
} paths;

/* Whether query.c applies the index bound block by block for this query (its plan, recomputed), and
 * with exact single counts (no symbol left unwalked). */
static void note_block_path(const tdm_seq_store *s, const tdm_seq_stm *stm, config c, double thr) {
    if (c.metric == TDM_SEQ_CHAR || !tdm_seq_store_count(s)) return;
    tdm_seq_query_opts o;
    tdm_seq_query_opts_init(&o);
    o.metric = c.metric, o.threshold = thr;
    uint32_t *need;
    size_t n_need;
    assert_int_equal(tdm_seq_need_table(s, stm->n, &o, &need, &n_need), 0);
    tdm_seq_walk w;
    assert_int_equal(tdm_seq_walk_plan(s, stm, need, n_need, &w), TDM_OK);
    int block = w.usable && w.cost * 2 <= tdm_seq_store_total_symbols(s) && w.cost * 16 >= tdm_seq_store_count(s);
    paths.block += block;
    paths.one += block && w.cf == 0;
    tdm_seq_walk_clear(&w);
    tdm_free(need);
}

/* Threshold queries of one STM under one configuration against the brute force. */
static void check_thresholds(const tdm_seq_store *s, const tdm_seq_stm *stm, size_t si, config c, const scored *all,
                             tu_rng *r) {
    uint32_t count = tdm_seq_store_count(s);
    double thr[16];
    size_t nt = 0;
    thr[nt++] = 0.0, thr[nt++] = 1.0, thr[nt++] = 0.8, thr[nt++] = 0.5, thr[nt++] = 0.6666666666666666;
    thr[nt++] = tu_unit(r);
    for (int k = 0; k < 2 && count; k++) { /* exactly an achieved similarity, and its neighbours */
        double x = all[tu_below(r, count)].sim;
        thr[nt++] = x, thr[nt++] = nextafter(x, 0.0), thr[nt++] = nextafter(x, 1.0);
    }
    scored *want = malloc((count + 1) * sizeof *want);
    for (size_t t = 0; t < nt; t++) {
        size_t n = 0;
        for (uint32_t id = 0; id < count; id++)
            if (kato_passes(c.metric, all[id].count, all[id].m, all[id].n, thr[t])) want[n++] = all[id];
        qsort(want, n, sizeof *want, cmp_scored);
        if (thr[t] == 0.0) assert_int_equal(n, count); /* threshold 0 returns every pattern, zeros included */
        /* Unfiltered scans cost the most, and every parallel region leaves OpenMP workers spinning: a
         * few thresholds (0, 1, 0.8, a random one, an achieved value) are enough for those. */
        int unfiltered = t == 0 || t == 1 || t == 2 || t == 6, two = t == 0 || t == 2 || t == 5 || t == 6;
        tdm_seq_result f1 = run(s, stm, c, thr[t], 0, 0, 1);
        tdm_seq_result f2 = two ? run(s, stm, c, thr[t], 0, 0, 2) : f1;
        tdm_seq_result u = unfiltered ? run(s, stm, c, thr[t], 0, 1, t == 0 ? 2 : 1) : f1;
        check_hits(&f1, want, n, "filtered, 1 thread", c.name, si, thr[t], 0);
        if (two) check_hits(&f2, want, n, "filtered, 2 threads", c.name, si, thr[t], 0);
        if (unfiltered) check_hits(&u, want, n, "unfiltered", c.name, si, thr[t], 0);
        /* Statistics: every pattern is pruned once or scored; nothing pruned without prefilters. */
        for (int q = 0; q < 2; q++) {
            const tdm_seq_query_stats *st = q ? &f1.stats : &f2.stats;
            assert_int_equal(st->patterns, count);
            tu_check(pruned(st) + st->scored == count, "%s STM %zu thr %.17g: %" PRIu64 " pruned + %" PRIu64 " scored != %u",
                     c.name, si, thr[t], pruned(st), st->scored, count);
            if (c.metric != TDM_SEQ_DIFFLIB) assert_int_equal(st->lcs_pruned, 0);
            if (thr[t] == 0.0) assert_int_equal(pruned(st), 0);
            tu_check(st->scored >= n, "scored fewer than returned");
        }
        paths.index += f1.stats.index_pruned > 0;
        note_block_path(s, stm, c, thr[t]);
        paths.length += f1.stats.length_pruned > 0;
        paths.multiset += f1.stats.multiset_pruned > 0;
        paths.lcs += f1.stats.lcs_pruned > 0;
        /* The pruning counts do not depend on the thread count in threshold mode. */
        assert_int_equal(f1.stats.length_pruned, f2.stats.length_pruned);
        assert_int_equal(f1.stats.index_pruned, f2.stats.index_pruned);
        assert_int_equal(f1.stats.multiset_pruned, f2.stats.multiset_pruned);
        assert_int_equal(f1.stats.lcs_pruned, f2.stats.lcs_pruned);
        if (unfiltered) {
            assert_int_equal(pruned(&u.stats), 0);
            assert_int_equal(u.stats.scored, count);
            tdm_seq_result_clear(&u);
        }
        if (thr[t] == 0.8 && count > 0) /* the prefilters do prune on a realistic threshold */
            tu_check(pruned(&f1.stats) > 0, "%s STM %zu: nothing pruned at 0.8", c.name, si);
        if (two) tdm_seq_result_clear(&f2);
        tdm_seq_result_clear(&f1);
    }
    free(want);
}

/* Top-k: the head of the full ranking, thresholds ignored, ties at the boundary by id. */
static void check_topk(const tdm_seq_store *s, const tdm_seq_stm *stm, size_t si, config c, const scored *all, tu_rng *r) {
    uint32_t count = tdm_seq_store_count(s);
    scored *sorted = malloc((count + 1) * sizeof *sorted);
    memcpy(sorted, all, count * sizeof *sorted);
    qsort(sorted, count, sizeof *sorted, cmp_scored);
    uint32_t ks[16];
    size_t nk = 0;
    ks[nk++] = 1, ks[nk++] = 2, ks[nk++] = 7, ks[nk++] = 1 + (uint32_t)tu_below(r, count + 1);
    ks[nk++] = count, ks[nk++] = count + 5;
    if (count > 1) ks[nk++] = count - 1;
    /* k that cuts through a run of equal similarities */
    uint32_t ties = 0;
    for (uint32_t p = 1 + (uint32_t)tu_below(r, 50); p < count && ties < 3; p++)
        if (sorted[p - 1].sim == sorted[p].sim && (p == 1 || tu_below(r, 4) == 0)) ks[nk++] = p, ties++;
    for (size_t t = 0; t < nk; t++) {
        uint32_t k = ks[t];
        size_t n = k < count ? k : count;
        double thr = t % 3 == 0 ? 0.9 : t % 3 == 1 ? 1.0 : NAN; /* ignored in top-k mode */
        tdm_seq_result f1 = run(s, stm, c, thr, k, 0, 1);
        check_hits(&f1, sorted, n, "top-k filtered, 1 thread", c.name, si, thr, k);
        tu_check(pruned(&f1.stats) + f1.stats.scored == count, "top-k stats do not add up");
        tdm_seq_result_clear(&f1);
        if (t % 2 == 0) {
            tdm_seq_result f2 = run(s, stm, c, thr, k, 0, 2);
            check_hits(&f2, sorted, n, "top-k filtered, 2 threads", c.name, si, thr, k);
            tu_check(pruned(&f2.stats) + f2.stats.scored == count, "top-k stats do not add up");
            tdm_seq_result_clear(&f2);
        }
        if (t == 0 || t == 4 || t >= 7) {
            tdm_seq_result u = run(s, stm, c, thr, k, 1, t == 0 ? 2 : 1);
            check_hits(&u, sorted, n, "top-k unfiltered", c.name, si, thr, k);
            tdm_seq_result_clear(&u);
        }
    }
    free(sorted);
}

/* nontrivial: how many of the (pattern, STM, configuration) similarities, per pattern and STM, must lie
 * strictly between 0 and 1 (6 configurations), so that the thresholds really cut. */
static void run_store(uint64_t salt, uint32_t vocab, uint32_t npat, uint32_t max_len, double mean, size_t nstm,
                      int allow_long, double nontrivial) {
    tu_rng r = tu_rng_for(salt);
    tdm_seq_store *s = make_store(tu_next(&r), vocab, npat, max_len, mean);
    tdm_seq_stm *stms = calloc(nstm, sizeof *stms);
    size_t n = make_stms(s, &r, vocab, stms, nstm, allow_long);
    uint32_t count = tdm_seq_store_count(s);
    scored *all = malloc((count + 1) * sizeof *all);
    int nonzero = 0;
    for (size_t c = 0; c < NCONFIG; c++)
        for (size_t i = 0; i < n; i++) {
            brute(s, &stms[i], configs[c], all);
            for (uint32_t id = 0; id < count; id++) nonzero += all[id].sim > 0.0 && all[id].sim < 1.0;
            check_thresholds(s, &stms[i], i, configs[c], all, &r);
            check_topk(s, &stms[i], i, configs[c], all, &r);
        }
    tu_check(nonzero > nontrivial * count * n, "similarities are mostly trivial (%d)", nonzero);
    for (size_t i = 0; i < n; i++) tdm_seq_stm_clear(&stms[i]);
    free(stms);
    free(all);
    tdm_seq_store_free(s);
}

static void test_query_small_vocabulary(void **state) {
    (void)state;
    run_store(1, 6, 1200, 24, 6.0, 12, 1, 2.0);
}

/* More patterns than one work chunk (2048), so that two threads really split a scan. */
static void test_query_medium_vocabulary(void **state) {
    (void)state;
    run_store(2, 40, 2300, 40, 12.0, 5, 0, 1.0);
}

/* A larger vocabulary: rare symbols make the inverted-index prefilter pay off. */
static void test_query_large_vocabulary(void **state) {
    (void)state;
    run_store(5, 400, 3000, 30, 10.0, 4, 0, 0.3);
    tu_check(paths.index > 0 && paths.length > 0 && paths.multiset > 0 && paths.lcs > 0 && paths.block > 0 && paths.one > 0,
             "prefilter paths not all exercised: index %d length %d multiset %d lcs %d block %d one %d", paths.index,
             paths.length, paths.multiset, paths.lcs, paths.block, paths.one);
}

/* Batches answer each STM as a single query would, on the parallel and the serial path. */
static void test_query_batch(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(3);
    tdm_seq_store *s = make_store(tu_next(&r), 10, 1500, 30, 8.0);
    enum { N = 9 };
    tdm_seq_stm stms[N];
    size_t n = make_stms(s, &r, 10, stms, N, 0);
    for (size_t c = 0; c < NCONFIG; c++) {
        for (int mode = 0; mode < 3; mode++) {
            tdm_seq_query_opts o;
            tdm_seq_query_opts_init(&o);
            o.metric = configs[c].metric, o.autojunk = configs[c].autojunk, o.stm_first = configs[c].stm_first;
            o.threshold = mode == 2 ? 0.0 : 0.45;
            o.top_k = mode == 1 ? 5 : 0;
            o.threads = mode == 0 ? 2 : 1;
            tdm_seq_result batch[N];
            assert_int_equal(tdm_seq_query_batch(s, stms, n, &o, batch), TDM_OK);
            for (size_t i = 0; i < n; i++) {
                tdm_seq_result one;
                o.threads = 2;
                assert_int_equal(tdm_seq_query(s, &stms[i], &o, &one), TDM_OK);
                o.threads = mode == 0 ? 2 : 1;
                assert_int_equal(batch[i].n, one.n);
                for (size_t h = 0; h < one.n; h++) {
                    assert_int_equal(batch[i].hits[h].id, one.hits[h].id);
                    tu_assert_same_double(batch[i].hits[h].similarity, one.hits[h].similarity, "batch %s %zu", configs[c].name, i);
                }
                if (!o.top_k) { /* a batch may answer through the lanes: other work, the same totals */
                    assert_int_equal(batch[i].stats.scored + pruned(&batch[i].stats), batch[i].stats.patterns);
                    assert_int_equal(batch[i].stats.patterns, one.stats.patterns);
                    assert_int_equal(batch[i].stats.returned, one.stats.returned);
                }
                tdm_seq_result_clear(&one);
                tdm_seq_result_clear(&batch[i]);
            }
        }
    }
    /* One bad STM fails the batch and leaves every result cleared. */
    tdm_seq_query_opts o;
    tdm_seq_query_opts_init(&o);
    uint32_t bad_ids[2] = {0, tdm_seq_vocab_size(tdm_seq_store_vocab_const(s)) + 3};
    tdm_seq_stm saved = stms[4];
    stms[4].ids = bad_ids, stms[4].n = 2;
    for (int threads = 1; threads <= 2; threads++) {
        o.threads = threads;
        tdm_seq_result batch[N];
        assert_int_equal(tdm_seq_query_batch(s, stms, n, &o, batch), TDM_E_RANGE);
        for (size_t i = 0; i < n; i++) {
            assert_null(batch[i].hits);
            assert_int_equal(batch[i].n, 0);
        }
    }
    stms[4] = saved;
    tdm_seq_result none;
    assert_int_equal(tdm_seq_query_batch(s, stms, 0, &o, &none), TDM_OK);
    for (size_t i = 0; i < n; i++) tdm_seq_stm_clear(&stms[i]);
    tdm_seq_store_free(s);
}

/* The lanes (query_lanes.c): lcs threshold queries answered 16 (wide) or 32 (narrow: STMs of at most 32
 * symbols) at a time, more than one group of each and partial ones, at the thresholds that use them, with
 * STMs of 1 to 60 symbols, repeats and unknown symbols, on 1 to 3 threads, through the vector-popcount
 * kernels (where the CPU has them) and the portable ones in turn; each answer equals the single query's,
 * hit for hit and bit for bit. */
static void test_query_lanes(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(11);
    for (int round = 0; round < 3; round++) {
        uint32_t vocab = round == 0 ? 6 : round == 1 ? 40 : 400;
        tdm_seq_store *s = make_store(tu_next(&r), vocab, 2500 + 4000 * (uint32_t)round, 40, 10.0);
        enum { N = 37 + 24 };
        tdm_seq_stm stms[N];
        size_t n = make_stms(s, &r, vocab, stms, 37, 0);
        while (n < N) { /* STMs of 33 to 60 symbols, for two wide groups */
            uint32_t ids[60];
            size_t m = 33 + (size_t)tu_below(&r, 28);
            for (size_t i = 0; i < m; i++) ids[i] = rank_id(s, (uint32_t)tu_below(&r, vocab));
            assert_int_equal(tdm_seq_stm_from_ids(tdm_seq_store_vocab_const(s), ids, m, &stms[n++]), TDM_OK);
        }
        const tdm_seq_stm *use[N];
        tdm_seq_result res[N], *out[N];
        size_t nu = 0;
        size_t nwide = 0;
        for (size_t i = 0; i < n; i++)
            if (tdm_seq_lanes_fit(s, stms[i].n)) use[nu] = &stms[i], out[nu] = &res[nu], nu++, nwide += stms[i].n > 32;
        assert_true(nu - nwide > 32 && nwide > 16);
        static const double thr[] = {0.0, 0.1, 0.25, 0.6, 1.0};
        for (int t = 0; t < 5; t++)
            for (int threads = 1; threads <= 3; threads++) {
                tdm_seq_query_opts o;
                tdm_seq_query_opts_init(&o);
                o.threshold = thr[t], o.threads = threads;
                tdm_seq_portable_kernels = (t + threads) % 2;
                assert_int_equal(tdm_seq_query_lanes(s, use, nu, &o, out), TDM_OK);
                tdm_seq_portable_kernels = 0;
                for (size_t i = 0; i < nu; i++) {
                    tdm_seq_result one;
                    assert_int_equal(tdm_seq_query(s, use[i], &o, &one), TDM_OK);
                    tu_check(res[i].n == one.n, "round %d thr %g threads %d query %zu (m %zu): %zu hits, want %zu", round,
                             thr[t], threads, i, use[i]->n, res[i].n, one.n);
                    for (size_t h = 0; h < one.n; h++) {
                        tu_check(res[i].hits[h].id == one.hits[h].id, "query %zu hit %zu: id %u, want %u", i, h,
                                 res[i].hits[h].id, one.hits[h].id);
                        tu_assert_same_double(res[i].hits[h].similarity, one.hits[h].similarity, "lanes query %zu", i);
                    }
                    assert_int_equal(res[i].stats.scored + pruned(&res[i].stats), res[i].stats.patterns);
                    tdm_seq_result_clear(&one);
                    tdm_seq_result_clear(&res[i]);
                }
            }
        /* Results kept from batch to batch (opts.reuse), answers growing and shrinking, blocks asked for
         * every other time: the same hits, in the kept arrays whenever they had room. */
        static const double order[] = {1.0, 0.0, 0.6, 0.1, 0.25, 0.0};
        memset(res, 0, sizeof res);
        for (int t = 0; t < 6; t++) {
            tdm_seq_query_opts o;
            tdm_seq_query_opts_init(&o);
            o.threshold = order[t], o.threads = 2, o.reuse = 1, o.blocks = t % 2;
            tdm_seq_hit *before[N];
            size_t cap[N];
            for (size_t i = 0; i < n; i++) before[i] = res[i].hits, cap[i] = res[i].cap;
            assert_int_equal(tdm_seq_query_batch(s, stms, n, &o, res), TDM_OK);
            for (size_t i = 0; i < n; i++) {
                tdm_seq_result one = {0}; /* o.reuse: the query reads it (a zeroed result is an empty one) */
                assert_int_equal(tdm_seq_query(s, &stms[i], &o, &one), TDM_OK);
                tu_check(res[i].n == one.n && (res[i].blocks != NULL) == o.blocks && res[i].cap >= res[i].n,
                         "reuse thr %g query %zu: %zu hits (cap %zu), want %zu", order[t], i, res[i].n, res[i].cap, one.n);
                for (size_t h = 0; h < one.n; h++) {
                    tu_check(res[i].hits[h].id == one.hits[h].id, "reuse query %zu hit %zu: id %u, want %u", i, h,
                             res[i].hits[h].id, one.hits[h].id);
                    tu_assert_same_double(res[i].hits[h].similarity, one.hits[h].similarity, "reuse query %zu", i);
                    if (o.blocks) tu_check(!memcmp(&res[i].blocks[h], &one.blocks[h], sizeof one.blocks[h]), "reuse query %zu summary %zu", i, h);
                }
                if (before[i] && cap[i] >= one.n)
                    tu_check(res[i].hits == before[i], "reuse thr %g query %zu: %zu hits not in the kept array of %zu", order[t], i, one.n, cap[i]);
                tdm_seq_result_clear(&one);
            }
        }
        for (size_t i = 0; i < n; i++) tdm_seq_result_clear(&res[i]);
        for (size_t i = 0; i < n; i++) tdm_seq_stm_clear(&stms[i]);
        tdm_seq_store_free(s);
    }
}

/* The lanes over a store of more ids than one range of hits spans (2^18): one thread then scans it in
 * several ranges, each hit kept as its offset in its range; with over 48 short STMs, the last narrow group
 * is a partial one. Each answer equals the single query's. */
static void test_query_lanes_ranges(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(13);
    tdm_seq_store *s = make_store(tu_next(&r), 50, 600000, 8, 3.0);
    enum { N = 60 };
    tdm_seq_stm stms[N];
    size_t n = make_stms(s, &r, 50, stms, N, 0), nu = 0, nshort = 0;
    const tdm_seq_stm *use[N];
    tdm_seq_result res[N], *out[N];
    for (size_t i = 0; i < n; i++)
        if (tdm_seq_lanes_fit(s, stms[i].n)) use[nu] = &stms[i], out[nu] = &res[nu], nu++, nshort += stms[i].n <= 32;
    assert_true(nshort > 48 && nu - nshort < 16);
    for (int threads = 1; threads <= 2; threads++) {
        tdm_seq_query_opts o;
        tdm_seq_query_opts_init(&o);
        o.threshold = 0.2, o.threads = threads;
        assert_int_equal(tdm_seq_query_lanes(s, use, nu, &o, out), TDM_OK);
        for (size_t i = 0; i < nu; i++) {
            tdm_seq_result one;
            assert_int_equal(tdm_seq_query(s, use[i], &o, &one), TDM_OK);
            tu_check(res[i].n == one.n, "threads %d query %zu: %zu hits, want %zu", threads, i, res[i].n, one.n);
            for (size_t h = 0; h < one.n; h++) {
                tu_check(res[i].hits[h].id == one.hits[h].id, "query %zu hit %zu: id %u, want %u", i, h,
                         res[i].hits[h].id, one.hits[h].id);
                tu_assert_same_double(res[i].hits[h].similarity, one.hits[h].similarity, "lanes query %zu", i);
            }
            tdm_seq_result_clear(&one);
            tdm_seq_result_clear(&res[i]);
        }
    }
    for (size_t i = 0; i < n; i++) tdm_seq_stm_clear(&stms[i]);
    tdm_seq_store_free(s);
}

/* Low thresholds over a store of over 2^21 symbols: the scan places its many hits by similarity rank
 * (query.c, ranked_plan) instead of sorting them; the answers must equal the brute force's, on one and
 * two threads, for lcs and difflib in both argument orders. */
static void test_query_ranked(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(12);
    tdm_seq_store *s = make_store(tu_next(&r), 3000, 110000, 60, 20.0);
    uint32_t count = tdm_seq_store_count(s);
    assert_true(tdm_seq_store_total_symbols(s) >= (1u << 21));
    enum { N = 7 };
    tdm_seq_stm stms[N];
    size_t n = make_stms(s, &r, 3000, stms, N, 0);
    scored *all = malloc((count + 1) * sizeof *all), *want = malloc((count + 1) * sizeof *want);
    static const size_t use[] = {0, 2, 4}; /* lcs, difflib, difflib stm-first */
    static const double thr[] = {0.05, 0.1, 0.2};
    int ranked = 0;
    for (size_t ci = 0; ci < sizeof use / sizeof *use; ci++)
        for (size_t i = 1; i < n; i++) { /* not the empty STM */
            config c = configs[use[ci]];
            brute(s, &stms[i], c, all);
            for (size_t t = 0; t < sizeof thr / sizeof *thr; t++) {
                size_t k = 0;
                for (uint32_t id = 0; id < count; id++)
                    if (kato_passes(c.metric, all[id].count, all[id].m, all[id].n, thr[t])) want[k++] = all[id];
                qsort(want, k, sizeof *want, cmp_scored);
                /* query.c's condition for placing by rank (besides the size and the chunk kinds) */
                tdm_seq_query_opts o;
                tdm_seq_query_opts_init(&o);
                o.metric = c.metric, o.threshold = thr[t];
                uint32_t *need;
                size_t n_need;
                assert_int_equal(tdm_seq_need_table(s, stms[i].n, &o, &need, &n_need), 0);
                for (size_t len = 0; len < n_need; len++)
                    if (need[len] != UINT32_MAX && (uint64_t)need[len] * 8 <= stms[i].n + len) {
                        ranked++;
                        break;
                    }
                tdm_free(need);
                for (int threads = 1; threads <= 2; threads++) {
                    tdm_seq_result res = run(s, &stms[i], c, thr[t], 0, 0, threads);
                    check_hits(&res, want, k, threads == 1 ? "ranked, 1 thread" : "ranked, 2 threads", c.name, i, thr[t], 0);
                    tdm_seq_result_clear(&res);
                }
            }
        }
    tu_check(ranked > 10, "the ranked placement ran for only %d queries", ranked);
    for (size_t i = 0; i < n; i++) tdm_seq_stm_clear(&stms[i]);
    free(all), free(want);
    tdm_seq_store_free(s);
}

static size_t plen(const tdm_seq_store *s, uint32_t id) {
    const uint32_t *P;
    size_t n;
    assert_int_equal(tdm_seq_store_get(s, id, &P, &n), TDM_OK);
    return n;
}

/* The index bound's counts are exactly sum over walked symbols x of min(STM count, pattern count), capped
 * at 255: not lower (a pattern that passes would be lost) and not higher (the bound is as tight as the
 * counts allow). Small vocabularies, so that both the STMs and the patterns repeat symbols; block walks at
 * several offsets and the candidate list. */
static void test_walk_counts_exact(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(13);
    for (int round = 0; round < 3; round++) {
        uint32_t vocab = round == 0 ? 6 : round == 1 ? 40 : 400;
        tdm_seq_store *s = make_store(tu_next(&r), vocab, 3000, 60, 20.0);
        uint32_t count = tdm_seq_store_count(s);
        enum { N = 12 };
        tdm_seq_stm stms[N];
        size_t n = make_stms(s, &r, vocab, stms, N, 1);
        uint8_t *u = malloc(count), *want = malloc(count);
        uint32_t *ids = malloc(count * sizeof *ids);
        int repeats = 0;
        for (size_t i = 0; i < n; i++) {
            static const double thr[] = {0.05, 0.3, 0.7};
            for (size_t t = 0; t < 3; t++) {
                tdm_seq_query_opts o;
                tdm_seq_query_opts_init(&o);
                o.threshold = thr[t];
                uint32_t *need;
                size_t n_need;
                assert_int_equal(tdm_seq_need_table(s, stms[i].n, &o, &need, &n_need), 0);
                tdm_seq_walk w;
                assert_int_equal(tdm_seq_walk_plan(s, &stms[i], need, n_need, &w), TDM_OK);
                tdm_free(need);
                if (!w.usable) {
                    tdm_seq_walk_clear(&w);
                    continue;
                }
                for (uint32_t id = 0; id < count; id++) {
                    const uint32_t *P;
                    size_t np;
                    assert_int_equal(tdm_seq_store_get(s, id, &P, &np), TDM_OK);
                    uint32_t sum = 0;
                    for (size_t k = 0; k < w.n; k++) {
                        uint32_t cp = 0;
                        for (size_t e = 0; e < np; e++) cp += P[e] == w.sym[k];
                        repeats += cp > 1 && w.cnt[k] > 1;
                        sum += cp < w.cnt[k] ? cp : w.cnt[k];
                    }
                    want[id] = (uint8_t)(sum > 255 ? 255 : sum);
                }
                uint32_t lo = (uint32_t)tu_below(&r, 64), step = 1 + (uint32_t)tu_below(&r, 700);
                for (uint32_t b = lo; b < count; b += step) {
                    uint32_t len = count - b < step ? count - b : step;
                    size_t kept = tdm_seq_walk_block(s, &w, b, len, u, ids);
                    size_t want_kept = 0;
                    for (uint32_t j = 0; j < len; j++) {
                        tu_check(u[j] == want[b + j], "vocab %u STM %zu thr %g: id %u counted %u, want %u", vocab, i, thr[t],
                                 b + j, u[j], want[b + j]);
                        if (want[b + j] >= w.tneed[plen(s, b + j)]) {
                            tu_check(want_kept < kept && ids[want_kept] == b + j, "vocab %u STM %zu: id %u not kept", vocab, i, b + j);
                            want_kept++;
                        }
                    }
                    assert_int_equal(kept, want_kept);
                }
                uint32_t *cand;
                size_t ncand, want_cand = 0;
                assert_int_equal(tdm_seq_walk_candidates(s, &w, &cand, &ncand), TDM_OK);
                for (uint32_t id = 0; id < count; id++)
                    if (want[id] && want[id] >= w.tneed[plen(s, id)]) {
                        tu_check(want_cand < ncand && cand[want_cand] == id, "vocab %u STM %zu: candidate %u missing", vocab, i, id);
                        want_cand++;
                    }
                assert_int_equal(ncand, want_cand);
                tdm_free(cand);
                tdm_seq_walk_clear(&w);
            }
        }
        tu_check(repeats > 100, "vocab %u: only %d repeated symbols in both an STM and a pattern", vocab, repeats);
        for (size_t i = 0; i < n; i++) tdm_seq_stm_clear(&stms[i]);
        free(u), free(want), free(ids);
        tdm_seq_store_free(s);
    }
}

static void test_query_invalid(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(4);
    tdm_seq_store *s = make_store(tu_next(&r), 8, 100, 10, 4.0);
    tdm_seq_stm stm;
    uint32_t ids[3] = {0, 1, 2};
    assert_int_equal(tdm_seq_stm_from_ids(tdm_seq_store_vocab_const(s), ids, 3, &stm), TDM_OK);
    tdm_seq_query_opts o;
    tdm_seq_query_opts_init(&o);
    assert_int_equal(o.metric, TDM_SEQ_LCS);
    tu_assert_same_double(o.threshold, 0.1, "default threshold");
    assert_int_equal(o.top_k, 0);
    assert_int_equal(o.no_prefilter, 0);
    assert_int_equal(o.threads, 0);
    assert_int_equal(o.autojunk, 0);
    assert_int_equal(o.stm_first, 0);
    const double bad_thr[] = {-0.1, 1.5, NAN, -0.0 - 1e-300, 1.0000000000000002, INFINITY};
    tdm_seq_result out;
    for (size_t i = 0; i < sizeof bad_thr / sizeof *bad_thr; i++) {
        for (int m = 0; m < 3; m++) {
            tdm_seq_query_opts_init(&o);
            o.metric = (tdm_seq_metric)m;
            o.threshold = bad_thr[i];
            out.hits = (tdm_seq_hit *)&out, out.n = 4242;
            tu_check(tdm_seq_query(s, &stm, &o, &out) == TDM_E_INVAL, "threshold %g accepted", bad_thr[i]);
            assert_ptr_equal(out.hits, (tdm_seq_hit *)&out);
            assert_int_equal(out.n, 4242);
        }
    }
    const int bad_metric[] = {7, 3, -1};
    for (size_t i = 0; i < 3; i++) {
        tdm_seq_query_opts_init(&o);
        o.metric = (tdm_seq_metric)bad_metric[i];
        assert_int_equal(tdm_seq_query(s, &stm, &o, &out), TDM_E_INVAL);
    }
    tdm_seq_query_opts_init(&o);
    o.threads = -1;
    assert_int_equal(tdm_seq_query(s, &stm, &o, &out), TDM_E_INVAL);
    tdm_seq_query_opts_init(&o);
    assert_int_equal(tdm_seq_query(NULL, &stm, &o, &out), TDM_E_INVAL);
    assert_int_equal(tdm_seq_query(s, NULL, &o, &out), TDM_E_INVAL);
    assert_int_equal(tdm_seq_query(s, &stm, NULL, &out), TDM_E_INVAL);
    assert_int_equal(tdm_seq_query(s, &stm, &o, NULL), TDM_E_INVAL);
    /* An STM id outside the vocabulary (TDM_SEQ_UNKNOWN is the only id allowed to be). */
    uint32_t nv = tdm_seq_vocab_size(tdm_seq_store_vocab_const(s));
    uint32_t bad[3] = {0, nv, 1};
    tdm_seq_stm raw = {bad, 3, stm.cps, stm.ncp};
    for (int m = 0; m < 3; m++) {
        o.metric = (tdm_seq_metric)m;
        assert_int_equal(tdm_seq_query(s, &raw, &o, &out), TDM_E_RANGE);
        assert_non_null(strstr(tdm_last_error(), "symbol 1"));
    }
    bad[1] = TDM_SEQ_UNKNOWN;
    o.metric = TDM_SEQ_LCS;
    assert_int_equal(tdm_seq_query(s, &raw, &o, &out), TDM_OK);
    tdm_seq_result_clear(&out);
    tdm_seq_result_clear(NULL);
    /* Metric names. */
    static const char *names[] = {"lcs", "difflib", "char"};
    for (int m = 0; m < 3; m++) {
        tdm_seq_metric got = (tdm_seq_metric)-1;
        assert_string_equal(tdm_seq_metric_name((tdm_seq_metric)m), names[m]);
        assert_int_equal(tdm_seq_metric_parse(names[m], &got), TDM_OK);
        assert_int_equal(got, m);
    }
    tdm_seq_metric got = TDM_SEQ_CHAR;
    assert_int_equal(tdm_seq_metric_parse("LCS", &got), TDM_E_INVAL);
    assert_int_equal(tdm_seq_metric_parse("levenshtein", &got), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "levenshtein"));
    assert_int_equal(tdm_seq_metric_parse(NULL, &got), TDM_E_INVAL);
    assert_int_equal(got, TDM_SEQ_CHAR);
    tdm_seq_stm_clear(&stm);
    tdm_seq_store_free(s);
}

/* A bare store is searched on the CPU whatever TANDEM_SEQ_BACKEND says: the statistics name the CPU and
 * FORCED_CPU, and forcing CUDA (strict or not) changes nothing. Device placement belongs to the engine
 * (test_engine.c). */
static void test_query_backend_choice(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(5);
    tdm_seq_store *s = make_store(tu_next(&r), 8, 50, 10, 4.0);
    uint32_t ids[3] = {0, 1, 2};
    tdm_seq_stm stm;
    assert_int_equal(tdm_seq_stm_from_ids(tdm_seq_store_vocab_const(s), ids, 3, &stm), TDM_OK);
    tdm_seq_query_opts o;
    tdm_seq_query_opts_init(&o);
    tdm_seq_result out;
    assert_int_equal(tdm_seq_query(s, &stm, &o, &out), TDM_OK);
    assert_string_equal(out.stats.backend, "cpu");
    assert_int_equal(out.stats.route_reason, TDM_ROUTE_FORCED_CPU);
    assert_int_equal(out.stats.device_patterns, 0);
    assert_int_equal(out.stats.recent_patterns, 0);
    assert_true(out.stats.copy_ms == 0.0);
    tdm_seq_result_clear(&out);
    for (int strict = 0; strict <= 1; strict++) {
        tdm_config c;
        tdm_config_init(&c);
        c.seq_backend = TDM_DEVICE_CUDA;
        c.strict = strict;
        c.device = TDM_DEVICE_CPU; /* no CUDA backend at all, GPU machine or not */
        tdm_ctx *forced;
        assert_int_equal(tdm_init(&forced, &c), TDM_OK);
        tdm_seq_store *fs;
        assert_int_equal(tdm_seq_store_new(forced, &fs), TDM_OK);
        for (uint32_t k = 0; k < 3; k++) intern(fs, (const char *[]){"x", "y", "z"}[k]);
        assert_int_equal(tdm_seq_store_add(fs, ids, 3, NULL), TDM_OK);
        assert_int_equal(tdm_seq_query(fs, &stm, &o, &out), TDM_OK);
        assert_string_equal(out.stats.backend, "cpu");
        assert_int_equal(out.stats.route_reason, TDM_ROUTE_FORCED_CPU);
        assert_int_equal(out.n, 1);
        tdm_seq_result_clear(&out);
        tdm_seq_store_free(fs);
        tdm_destroy(forced);
    }
    tdm_seq_stm_clear(&stm);
    tdm_seq_store_free(s);
}

/* STM encoding: ids looked up without growing the vocabulary, unknown symbols marked, code points of the
 * space-joined strings. */
static void test_stm_encode(void **state) {
    (void)state;
    tdm_seq_store *s;
    assert_int_equal(tdm_seq_store_new(ctx, &s), TDM_OK);
    uint32_t a = intern(s, "alpha"), e = intern(s, ""), w = intern(s, "\xE6\x97\xA5");
    const tdm_seq_vocab *v = tdm_seq_store_vocab_const(s);
    const char *syms[] = {"alpha", "nope", "", "\xE6\x97\xA5", "alpha"};
    const size_t lens[] = {5, 4, 0, 3, 5};
    tdm_seq_stm stm;
    assert_int_equal(tdm_seq_stm_encode(v, syms, lens, 5, &stm), TDM_OK);
    assert_int_equal(stm.n, 5);
    const uint32_t want_ids[] = {a, TDM_SEQ_UNKNOWN, e, w, a};
    assert_memory_equal(stm.ids, want_ids, sizeof want_ids);
    const uint32_t want_cps[] = {'a', 'l', 'p', 'h', 'a', ' ', 'n', 'o', 'p', 'e', ' ', ' ', 0x65E5, ' ', 'a', 'l', 'p', 'h', 'a'};
    assert_int_equal(stm.ncp, sizeof want_cps / sizeof *want_cps);
    assert_memory_equal(stm.cps, want_cps, sizeof want_cps);
    assert_int_equal(tdm_seq_vocab_size(v), 3);
    tdm_seq_stm_clear(&stm);
    assert_null(stm.ids);
    tdm_seq_stm_clear(NULL);
    /* from_ids gives the same code points. */
    const uint32_t ids[] = {a, e, w, a};
    assert_int_equal(tdm_seq_stm_from_ids(v, ids, 4, &stm), TDM_OK);
    const uint32_t want2[] = {'a', 'l', 'p', 'h', 'a', ' ', ' ', 0x65E5, ' ', 'a', 'l', 'p', 'h', 'a'};
    assert_int_equal(stm.ncp, sizeof want2 / sizeof *want2);
    assert_memory_equal(stm.cps, want2, sizeof want2);
    tdm_seq_stm_clear(&stm);
    /* Errors. */
    const char *ill[] = {"ok", "b\xC0\x80"};
    const size_t ill_len[] = {2, 3};
    assert_int_equal(tdm_seq_stm_encode(v, ill, ill_len, 2, &stm), TDM_E_UTF8);
    assert_non_null(strstr(tdm_last_error(), "symbol 1"));
    const uint32_t out_of_range[] = {a, 3};
    assert_int_equal(tdm_seq_stm_from_ids(v, out_of_range, 2, &stm), TDM_E_RANGE);
    const uint32_t unknown[] = {TDM_SEQ_UNKNOWN};
    assert_int_equal(tdm_seq_stm_from_ids(v, unknown, 1, &stm), TDM_E_RANGE);
    /* The empty store: every query answers nothing. */
    assert_int_equal(tdm_seq_stm_from_ids(v, ids, 4, &stm), TDM_OK);
    for (size_t c = 0; c < NCONFIG; c++) {
        tdm_seq_result res = run(s, &stm, configs[c], 0.0, 0, 0, 2);
        assert_int_equal(res.n, 0);
        assert_int_equal(res.stats.patterns, 0);
        tdm_seq_result_clear(&res);
        res = run(s, &stm, configs[c], 0.0, 3, 0, 2);
        assert_int_equal(res.n, 0);
        tdm_seq_result_clear(&res);
    }
    tdm_seq_stm_clear(&stm);
    tdm_seq_store_free(s);
}

int main(void) {
    tu_init_seed("test_query");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stm_encode),
        cmocka_unit_test(test_query_invalid),
        cmocka_unit_test(test_query_backend_choice),
        cmocka_unit_test(test_query_small_vocabulary),
        cmocka_unit_test(test_query_medium_vocabulary),
        cmocka_unit_test(test_query_large_vocabulary),
        cmocka_unit_test(test_query_batch),
        cmocka_unit_test(test_query_lanes),
        cmocka_unit_test(test_query_lanes_ranges),
        cmocka_unit_test(test_query_ranked),
        cmocka_unit_test(test_walk_counts_exact),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
