/* cmd_demo.c: `tandem demo`, what `make run` shows: a generated store of patterns, a few short-term
 * memories made from stored patterns with an edit or two, and what each metric finds for them, with the
 * work each exact prefilter saved and the time taken. */
#include "cli.h"

#include "tandem/backend.h"

#include <stdlib.h>
#include <string.h>

static const char *usage = "usage: tandem demo [--patterns N] [--seed S]\n\n"
                           "Generates N patterns (default 200000) with the benchmark generator, stores them, and\n"
                           "queries the store with a few STMs made by editing stored patterns, showing the results\n"
                           "of the lcs and difflib metrics with their prefilter statistics.\n";

static void put_symbols(const tdm_seq_vocab *v, const uint32_t *ids, size_t n, size_t max) {
    for (size_t i = 0; i < n && i < max; i++) {
        const char *s = "?";
        size_t len = 1;
        if (ids[i] != TDM_SEQ_UNKNOWN) tdm_seq_vocab_get(v, ids[i], &s, &len);
        else s = "<new>", len = 5;
        printf("%s%.*s", i ? " " : "", (int)len, s);
    }
    if (n > max) printf(" ... (%zu symbols)", n);
}

static int show(const tdm_seq_store *s, const tdm_seq_stm *stm, tdm_seq_metric metric, double thr) {
    tdm_seq_query_opts o;
    tdm_seq_query_opts_init(&o);
    o.metric = metric;
    o.threshold = thr;
    tdm_seq_result r;
    double t0 = cli_now();
    int rc = tdm_seq_query(s, stm, &o, &r);
    if (rc) return cli_fail_status(rc, "demo query");
    double ms = (cli_now() - t0) * 1e3;
    const tdm_seq_query_stats *st = &r.stats;
    printf("  %-7s >= %.2f: %zu patterns in %.2f ms (exact bounds removed: length %llu, index %llu, multiset %llu, "
           "LCS %llu; scored %llu)\n",
           tdm_seq_metric_name(metric), thr, r.n, ms, (unsigned long long)st->length_pruned,
           (unsigned long long)st->index_pruned, (unsigned long long)st->multiset_pruned,
           (unsigned long long)st->lcs_pruned, (unsigned long long)st->scored);
    for (size_t k = 0; k < r.n && k < 3; k++) {
        const uint32_t *p;
        size_t n;
        tdm_seq_store_get(s, r.hits[k].id, &p, &n);
        printf("      #%-7u %.4f  ", r.hits[k].id, r.hits[k].similarity);
        put_symbols(tdm_seq_store_vocab_const(s), p, n, 12);
        putchar('\n');
    }
    tdm_seq_result_clear(&r);
    return 0;
}

int cmd_demo(int argc, char **argv) {
    unsigned long long n = 200000, seed = 42;
    const char *v;
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if ((r = cli_opt(argc, argv, &i, "--patterns", &v))) {
            if (r < 0 || cli_parse_u64("--patterns", v, 10, 100000000ull, &n)) return 2;
        } else if ((r = cli_opt(argc, argv, &i, "--seed", &v))) {
            if (r < 0 || cli_parse_u64("--seed", v, 0, UINT64_MAX, &seed)) return 2;
        } else
            return cli_usage("demo: unknown option '%s'\n%s", argv[i], usage);
    }
    tdm_ctx *ctx = cli_ctx();
    if (!ctx) return 1;
    tdm_seq_gen_opts go;
    tdm_seq_gen_opts_init(&go);
    go.seed = seed;
    tdm_seq_gen *g;
    tdm_seq_store *s;
    int rc = tdm_seq_gen_new(&go, &g);
    if (rc) return cli_fail_status(rc, "demo");
    if ((rc = tdm_seq_store_new(ctx, &s))) {
        tdm_seq_gen_free(g);
        return cli_fail_status(rc, "demo");
    }
    /* Symbol ranks become the names "s<rank>"; interning every rank first makes id == rank. */
    tdm_seq_vocab *voc = tdm_seq_store_vocab(s);
    char name[16];
    for (uint32_t r = 0; r < go.vocab && !rc; r++) {
        uint32_t id;
        rc = tdm_seq_vocab_intern(voc, name, tdm_seq_gen_symbol_name(r, name), &id);
    }
    uint32_t buf[64];
    double t0 = cli_now();
    for (unsigned long long k = 0; k < n && !rc; k++) {
        size_t len;
        tdm_seq_gen_next(g, buf, &len);
        rc = tdm_seq_store_add(s, buf, len, NULL);
    }
    if (!rc) tdm_seq_store_shrink(s);
    double t1 = cli_now();
    if (rc) {
        tdm_seq_gen_free(g);
        tdm_seq_store_free(s);
        return cli_fail_status(rc, "demo");
    }
    printf("tandem %s demo: %llu patterns (Zipf symbols over %u, lengths %u-%u, mean %.1f) generated and stored in %.0f ms, %.1f MB\n"
           "backends: ",
           tdm_version(), n, go.vocab, go.min_len, go.max_len, (double)tdm_seq_store_total_symbols(s) / n, (t1 - t0) * 1e3,
           tdm_seq_store_bytes(s) / 1e6);
    for (int i = 0; i < tdm_backend_count(ctx); i++) printf("%s%s", i ? ", " : "", tdm_backend_get(ctx, i)->name);
    printf(" (%d threads)\n", tdm_ctx_threads(ctx));
    /* Three STMs: a stored pattern with one symbol dropped, one with a never-seen symbol inserted, and the
     * second half of one pattern followed by the first half of another. */
    for (int q = 0; q < 3 && !rc; q++) {
        const uint32_t *p, *p2;
        size_t np, np2, m = 0;
        uint32_t ids[130];
        tdm_seq_store_get(s, (uint32_t)tdm_seq_gen_uniform(g, n), &p, &np);
        tdm_seq_store_get(s, (uint32_t)tdm_seq_gen_uniform(g, n), &p2, &np2);
        const char *what;
        if (q == 0) {
            size_t drop = tdm_seq_gen_uniform(g, np);
            for (size_t i = 0; i < np; i++) if (i != drop) ids[m++] = p[i];
            what = "a stored pattern with one symbol dropped";
        } else if (q == 1) {
            for (size_t i = 0; i < np; i++) {
                if (i == np / 2) ids[m++] = TDM_SEQ_UNKNOWN;
                ids[m++] = p[i];
            }
            what = "a stored pattern with a new symbol inserted";
        } else {
            for (size_t i = np / 2; i < np; i++) ids[m++] = p[i];
            for (size_t i = 0; i < np2 / 2; i++) ids[m++] = p2[i];
            what = "the end of one pattern and the start of another";
        }
        /* Encode through the strings, as a client would; "new-event" is not in the vocabulary. */
        const char *strs[130];
        size_t lens[130];
        for (size_t i = 0; i < m; i++) {
            if (ids[i] == TDM_SEQ_UNKNOWN) strs[i] = "new-event", lens[i] = 9;
            else tdm_seq_vocab_get(voc, ids[i], &strs[i], &lens[i]);
        }
        tdm_seq_stm stm;
        if ((rc = tdm_seq_stm_encode(voc, strs, lens, m, &stm))) break;
        printf("\nSTM %d, %s (%zu symbols):\n  ", q + 1, what, m);
        put_symbols(voc, stm.ids, stm.n, 20);
        putchar('\n');
        rc = show(s, &stm, TDM_SEQ_LCS, 0.5) || show(s, &stm, TDM_SEQ_DIFFLIB, 0.5) || show(s, &stm, TDM_SEQ_LCS, 0.1);
        tdm_seq_stm_clear(&stm);
    }
    printf("\nNext: 'tandem seq --help' for the commands behind this, README.md for the project.\n");
    tdm_seq_gen_free(g);
    tdm_seq_store_free(s);
    return rc ? 1 : 0;
}
