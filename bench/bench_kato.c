/* bench_kato.c: KATO predictions and learning on the shared generator's patterns (issue 4's benchmark):
 * learn N patterns (one symbol per event, as KATO sessions usually observe), then time predictions for
 * STMs of 5-20 symbols drawn from stored patterns (edited copies) and from fresh generated sequences, at
 * the given threshold and max_predictions. Prints, per size, the learn rate and the prediction latency
 * (median, p99) with the candidate count and the split into search / extraction / ensemble.
 * Timings are for bench/RESULTS.md; nothing here asserts on them. */
#define _POSIX_C_SOURCE 200809L
#define BENCH_NAME "bench_kato"
#include "bench_common.h"

#include "tandem/kato.h"

static const char *usage =
    "usage: bench_kato [--sizes N,N,...] [--queries N] [--seed S] [--threshold X] [--max-predictions N] [--quick]\n"
    "Defaults: --sizes 10000,100000 --queries 100 --seed 42 --threshold 0.1 --max-predictions 100\n"
    "--quick: --sizes 2000 --queries 20 (a smoke run).\n"
    "Threads: TANDEM_THREADS (default every core); placement: TANDEM_SEQ_BACKEND.\n";

int main(int argc, char **argv) {
    double sizes[8] = {10000, 100000};
    int nsizes = 2;
    uint32_t queries = 100, maxp = 100;
    uint64_t seed = 42;
    double thr = 0.1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return fputs(usage, stdout), 0;
        if (!strcmp(a, "--quick")) {
            sizes[0] = 2000, nsizes = 1, queries = 20;
            continue;
        }
        if (!v) return fprintf(stderr, "bench_kato: %s needs a value\n%s", a, usage), 2;
        i++;
        if (!strcmp(a, "--sizes")) {
            if ((nsizes = parse_list(v, sizes, 8)) <= 0) return fprintf(stderr, "bench_kato: bad --sizes %s\n", v), 2;
        } else if (!strcmp(a, "--queries")) queries = (uint32_t)strtoul(v, NULL, 10);
        else if (!strcmp(a, "--seed")) seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--threshold")) thr = strtod(v, NULL);
        else if (!strcmp(a, "--max-predictions")) maxp = (uint32_t)strtoul(v, NULL, 10);
        else return fprintf(stderr, "bench_kato: unknown option '%s'\n%s", a, usage), 2;
    }
    if (!queries) return fprintf(stderr, "bench_kato: --queries must be positive\n"), 2;
    tdm_ctx *ctx;
    int rc = tdm_init(&ctx, NULL);
    if (rc) die("init", rc);
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    cfg.recall_threshold = thr, cfg.max_predictions = maxp;
    if ((rc = tdm_kato_config_check(&cfg))) die("configuration", rc);
    printf("# bench_kato: threads %d, threshold %g, max_predictions %u, seed %llu\n", tdm_ctx_threads(ctx), thr, maxp,
           (unsigned long long)seed);
    for (int si = 0; si < nsizes; si++) {
        uint32_t n = (uint32_t)sizes[si];
        patterns pat;
        generate(seed, n, &pat);
        tdm_kato_kb *kb;
        if ((rc = tdm_kato_kb_new(ctx, &kb))) die("knowledge base", rc);
        /* names of the generator's ranks, and one event per symbol */
        char(*names)[16] = xmalloc((size_t)60 * 3 * sizeof *names);
        const char **syms = xmalloc(180 * sizeof *syms);
        size_t *lens = xmalloc(180 * sizeof *lens);
        tdm_kato_event *ev = xmalloc(180 * sizeof *ev);
        double t0 = now_s();
        for (uint32_t k = 0; k < n; k++) {
            size_t len = (size_t)(pat.off[k + 1] - pat.off[k]);
            for (size_t t = 0; t < len; t++) {
                lens[t] = tdm_seq_gen_symbol_name(pat.sym[pat.off[k] + t], names[t]);
                syms[t] = names[t];
                ev[t].syms = &syms[t], ev[t].lens = &lens[t], ev[t].n = 1;
            }
            if ((rc = tdm_kato_kb_learn(kb, ev, len, NULL, 0, NULL, 0, 5, NULL, NULL))) die("learn", rc);
        }
        double learn_s = now_s() - t0;
        size_t *slens;
        uint32_t **stms = make_stms(seed, queries, &pat, n, &slens);
        tdm_seq_gen *g = new_gen(seed + 7);
        double *lat = xmalloc(queries * sizeof *lat), *srch = xmalloc(queries * sizeof *srch);
        double *extr = xmalloc(queries * sizeof *extr), *ens = xmalloc(queries * sizeof *ens);
        double cands = 0, preds = 0;
        for (uint32_t q = 0; q < queries; q++) {
            size_t want = 5 + (size_t)tdm_seq_gen_uniform(g, 16), len = slens[q] < want ? slens[q] : want;
            size_t start = slens[q] > len ? (size_t)tdm_seq_gen_uniform(g, slens[q] - len + 1) : 0;
            for (size_t t = 0; t < len; t++) {
                lens[t] = tdm_seq_gen_symbol_name(stms[q][start + t], names[t]);
                syms[t] = names[t];
                ev[t].syms = &syms[t], ev[t].lens = &lens[t], ev[t].n = 1;
            }
            tdm_kato_result *r;
            double q0 = now_s();
            if ((rc = tdm_kato_predict(kb, ev, len, &cfg, &r))) die("predict", rc);
            lat[q] = (now_s() - q0) * 1e3;
            const tdm_kato_predict_stats *st = tdm_kato_result_stats(r);
            srch[q] = st->search_ms, extr[q] = st->extract_ms, ens[q] = st->ensemble_ms;
            cands += (double)st->candidates, preds += (double)tdm_kato_result_count(r);
            tdm_kato_result_free(r);
        }
        qsort(lat, queries, sizeof *lat, cmp_double);
        printf("patterns %u: learn %.2f us/pattern (%.1f s); predict median %.3f ms, p99 %.3f ms; candidates %.0f, "
               "predictions %.1f on average; median split search %.3f, extraction %.3f, ensemble %.3f ms\n",
               n, learn_s * 1e6 / n, learn_s, percentile(lat, queries, 50), percentile(lat, queries, 99), cands / queries,
               preds / queries, median(srch, queries), median(extr, queries), median(ens, queries));
        fflush(stdout);
        for (uint32_t q = 0; q < queries; q++) free(stms[q]);
        free(stms), free(slens), free(lat), free(srch), free(extr), free(ens), free(names), free(syms), free(lens), free(ev);
        free(pat.sym), free(pat.off);
        tdm_seq_gen_free(g);
        tdm_kato_kb_free(kb);
    }
    tdm_destroy(ctx);
    return 0;
}
