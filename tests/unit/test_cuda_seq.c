/* test_cuda_seq.c: the CUDA module's sequence entry points (src/seq/seq_device.h) called directly, without
 * the engine, against the CPU engine on the same patterns: seeded random stores (tiny and Zipf
 * vocabularies, short and long patterns), appended in several batches so tiles and chunks vary, and
 * random queries (lcs and difflib with autojunk and both argument orders, STMs of 0 to 1,500 symbols,
 * unknown symbols, thresholds 0 and 1, top-k, no prefilter, id limits, block summaries asked for or not,
 * threshold rows sent by rank or as hits). Hits must match bit for bit (rows by rank after the engine's
 * placement), and so must the block summaries (also checked against the matcher's own blocks). On a
 * machine without a GPU it says the GPU half was not run. */
#define _POSIX_C_SOURCE 200809L /* engine_internal.h's locks under -std=c11 */
#include "unit_common.h"

#include "hit_blocks_check.h"

#include "seq/engine_internal.h"
#include "seq/seq_device.h"
#include "seq/seq_internal.h"

static const tdm_backend *device_or_skip(tdm_ctx **ctx) {
    tdm_config cfg;
    tdm_config_init(&cfg);
    assert_int_equal(tdm_init(ctx, &cfg), TDM_OK);
    const tdm_backend *b = tdm_backend_find(*ctx, TDM_BACKEND_CUDA);
    if (!b || !b->seq) {
        printf("GPU half not run: no CUDA backend with sequence kernels on this machine\n");
        const char *req = getenv("TANDEM_TEST_REQUIRE_GPU");
        if (req && !strcmp(req, "1")) fail_msg("TANDEM_TEST_REQUIRE_GPU=1 but the GPU half cannot run");
        return NULL;
    }
    return b;
}

static void same_hits(const tdm_seq_result *cpu, const tdm_seq_hit *dev, size_t n, const char *what) {
    if (cpu->n != n) fail_msg("%s: CPU %zu hits, device %zu", what, cpu->n, n);
    for (size_t i = 0; i < n; i++)
        if (cpu->hits[i].id != dev[i].id || memcmp(&cpu->hits[i].similarity, &dev[i].similarity, sizeof(double)))
            fail_msg("%s: row %zu: CPU (%u, %.17g), device (%u, %.17g)", what, i, cpu->hits[i].id, cpu->hits[i].similarity,
                     dev[i].id, dev[i].similarity);
}

static void run_case(const tdm_backend *b, tdm_ctx *ctx, tu_rng *r, int case_no, size_t *blocks_seen, size_t *ranked_seen) {
    tdm_seq_gen_opts go;
    tdm_seq_gen_opts_init(&go);
    go.seed = tu_next(r);
    int kind = (int)(tu_next(r) % 4);
    go.vocab = kind == 0 ? 3 + (uint32_t)(tu_next(r) % 6) : kind == 1 ? 200 : 50000;
    if (kind == 3) go.min_len = 0, go.max_len = 700, go.mean_len = 150; /* long patterns, purges, wide rows */
    uint32_t npat = (uint32_t)(tu_next(r) % 4000);
    tdm_seq_store *s;
    assert_int_equal(tdm_seq_store_new(ctx, &s), TDM_OK);
    tdm_seq_gen *g;
    assert_int_equal(tdm_seq_gen_new(&go, &g), TDM_OK);
    uint32_t *buf = malloc((go.max_len + 1) * sizeof *buf);
    char name[32];
    for (uint32_t i = 0; i < npat; i++) {
        size_t n;
        tdm_seq_gen_next(g, buf, &n);
        for (size_t k = 0; k < n; k++) { /* generator ranks -> vocabulary ids through their names */
            size_t len = tdm_seq_gen_symbol_name(buf[k], name);
            assert_int_equal(tdm_seq_vocab_intern(tdm_seq_store_vocab(s), name, len, &buf[k]), TDM_OK);
        }
        assert_int_equal(tdm_seq_store_add(s, buf, n, NULL), TDM_OK);
    }
    tdm_seq_dstore *d;
    assert_int_equal(b->seq->store_new(b, &d), TDM_OK);
    for (uint32_t at = 0; at < npat;) { /* batches of random size */
        uint32_t k = 1 + (uint32_t)(tu_next(r) % (npat - at < 1500 ? npat - at : 1500));
        assert_int_equal(b->seq->store_append(d, s->arena + s->off[at], s->off + at, at, k), TDM_OK);
        at += k;
    }
    tdm_seq_dstore_info info;
    b->seq->store_info(d, &info);
    assert_int_equal(info.patterns, npat);
    assert_int_equal(info.symbols, s->nsym);
    for (int qn = 0; qn < 12; qn++) {
        /* STM: a stored pattern, mutated, or fresh symbols; some long, some with unknown symbols */
        size_t m = (size_t)(tu_next(r) % 40);
        int shape = (int)(tu_next(r) % 10);
        if (shape == 0) m = 65 + tu_next(r) % 200;
        if (shape == 1) m = 1025 + tu_next(r) % 500;
        if (shape == 2) m = 0;
        uint32_t *ids = malloc((m + 1) * sizeof *ids);
        const uint32_t *P = NULL;
        size_t np = 0;
        if (npat) tdm_seq_store_get(s, (uint32_t)(tu_next(r) % npat), &P, &np);
        uint32_t V = tdm_seq_vocab_size(tdm_seq_store_vocab(s));
        for (size_t i = 0; i < m; i++) {
            uint64_t x = tu_next(r) % 10;
            if (np && x < 6) ids[i] = P[i % np];
            else if (x < 9 && V) ids[i] = (uint32_t)(tu_next(r) % V);
            else ids[i] = TDM_SEQ_UNKNOWN;
        }
        tdm_seq_stm stm = {ids, m, NULL, 0};
        tdm_seq_query_opts o;
        tdm_seq_query_opts_init(&o);
        o.metric = tu_next(r) % 2 ? TDM_SEQ_DIFFLIB : TDM_SEQ_LCS;
        o.autojunk = (int)(tu_next(r) % 2);
        o.stm_first = (int)(tu_next(r) % 2);
        double thr[] = {0.0, 1.0, 0.1, 0.5, 0.8, (double)(tu_next(r) % 1000) / 1000.0};
        o.threshold = thr[tu_next(r) % 6];
        if (tu_next(r) % 4 == 0) o.top_k = 1 + (uint32_t)(tu_next(r) % 150);
        o.no_prefilter = tu_next(r) % 5 == 0;
        o.blocks = tu_next(r) % 2 == 0;
        uint32_t limit = tu_next(r) % 4 == 0 && npat ? (uint32_t)(tu_next(r) % npat) : npat;
        tdm_seq_result cpu;
        assert_int_equal(tdm_seq_query_range(s, &stm, &o, 0, limit, &cpu), TDM_OK);
        /* A pool of 1 makes difflib's top-k widen its exact set often; 0 is the backend's default. */
        tdm_seq_dquery q = {o.metric, o.autojunk, o.stm_first, ids, m, limit, o.top_k, NULL, 0, o.no_prefilter,
                            (uint32_t)(tu_next(r) % 2), o.blocks, NULL, 0};
        uint32_t *need = NULL;
        if (!o.top_k) assert_int_equal(tdm_seq_need_table(s, m, &o, &need, &q.n_need), 0);
        q.need = need;
        /* Threshold rows by rank (what the engine asks for when an answer is large) for half the queries
         * that may have them, at any threshold here. */
        tdm_seq_ranks rk = {0};
        if (!o.top_k && !o.blocks && tu_next(r) % 2) {
            double *sim = tdm_seq_sim_table(o.metric, m, q.n_need);
            assert_non_null(sim);
            assert_int_equal(tdm_seq_rank_table(sim, q.n_need * (m + 1), &rk.rank, &rk.value, &rk.nrank), 0);
            tdm_free(sim);
            q.rank = rk.rank, q.nrank = rk.nrank;
        }
        tdm_seq_dresult res;
        int rc = b->seq->query(d, &q, &res);
        if (rc) fail_msg("case %d query %d: device query failed: %s", case_no, qn, tdm_last_error());
        char what[256];
        snprintf(what, sizeof what, "case %d query %d (vocab %u, %u patterns, m %zu, %s aj %d sf %d thr %g top %u pool %u nopf %d limit %u blocks %d ranked %d)",
                 case_no, qn, go.vocab, npat, m, tdm_seq_metric_name(o.metric), o.autojunk, o.stm_first, o.threshold, o.top_k,
                 q.top_k_pool, o.no_prefilter, limit, o.blocks, q.rank != NULL);
        if (q.rank) { /* the CUDA module always answers by rank when given the table */
            if (!res.ids || res.hits) fail_msg("%s: no rows by rank", what);
            tdm_seq_result placed = {0};
            if (tdm_seq_place_rows(&res, &rk, limit, 2, 0, 0, &placed)) fail_msg("%s: placing the rows: %s", what, tdm_last_error());
            same_hits(&cpu, placed.hits, placed.n, what);
            (*ranked_seen)++;
            tdm_seq_result_clear(&placed);
            tdm_seq_ranks_clear(&rk);
        } else {
            same_hits(&cpu, res.hits, res.n, what);
        }
        if (o.blocks) { /* the device's summaries: the CPU's, bit for bit, and the matcher's */
            if (!res.blocks) fail_msg("%s: no block summaries from the device", what);
            for (size_t i = 0; i < res.n; i++)
                if (memcmp(&res.blocks[i], &cpu.blocks[i], sizeof res.blocks[i]))
                    fail_msg("%s: row %zu (id %u): device summary {%u, %u, %u, %u, %u, %u}, CPU {%u, %u, %u, %u, %u, %u}", what, i,
                             res.hits[i].id, res.blocks[i].matched, res.blocks[i].nblocks, res.blocks[i].a_first,
                             res.blocks[i].b_first, res.blocks[i].a_end, res.blocks[i].a_repeat, cpu.blocks[i].matched,
                             cpu.blocks[i].nblocks, cpu.blocks[i].a_first, cpu.blocks[i].b_first, cpu.blocks[i].a_end,
                             cpu.blocks[i].a_repeat);
            tdm_seq_result dev = {.hits = res.hits, .n = res.n, .blocks = res.blocks};
            *blocks_seen += hb_check(s, &stm, o.autojunk, &dev, what);
        } else if (res.blocks) {
            fail_msg("%s: block summaries nobody asked for", what);
        }
        tdm_free(res.hits);
        tdm_free(res.blocks);
        tdm_free(need);
        tdm_seq_result_clear(&cpu);
        free(ids);
    }
    b->seq->store_free(d);
    free(buf);
    tdm_seq_gen_free(g);
    tdm_seq_store_free(s);
}

static void test_device_matches_cpu(void **state) {
    (void)state;
    tdm_ctx *ctx;
    const tdm_backend *b = device_or_skip(&ctx);
    if (b) {
        tu_rng r = tu_rng_for(0xC0DA);
        int cases = getenv("TANDEM_TEST_CASES") ? atoi(getenv("TANDEM_TEST_CASES")) : 40;
        size_t blocks_seen = 0, ranked_seen = 0;
        for (int c = 0; c < cases; c++) run_case(b, ctx, &r, c, &blocks_seen, &ranked_seen);
        printf("%zu device hits with blocks checked, %zu queries answered by rank\n", blocks_seen, ranked_seen);
        if (cases >= 40 && blocks_seen < 1000) fail_msg("only %zu device hits with blocks: the summaries were hardly tested", blocks_seen);
        if (cases >= 40 && ranked_seen < 40) fail_msg("only %zu queries answered by rank", ranked_seen);
    }
    tdm_destroy(ctx);
}

int main(void) {
    tu_init_seed("test_cuda_seq");
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_device_matches_cpu)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
