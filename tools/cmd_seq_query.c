/* cmd_seq_query.c: `tandem seq query`, STMs from a file against a store, answered as one batch by the
 * dual-tier engine (seq.h): on a machine with a usable GPU the store is loaded on the device and searched
 * there, with the same results as on the CPU. */
#include "cli.h"

#include "tandem/backend.h"

#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: tandem seq query --store STORE --metric lcs|difflib|char (--threshold T | --top K) --stm FILE\n"
    "                        [--autojunk] [--stm-first] [--threads N] [--stats] [--no-prefilter]\n"
    "\n"
    "FILE ('-' = stdin) holds one STM per line: a JSON list of symbols, or a list of events flattened in\n"
    "order. Symbols the store has never seen count in the STM's length and match nothing. For each STM one\n"
    "line is written:\n"
    "  {\"results\": [{\"id\": ID, \"similarity\": R}, ...]}\n"
    "in similarity-descending, then id-ascending order; R has 17 significant digits.\n"
    "  --threshold T   every pattern with similarity >= T (0 <= T <= 1; KATO's inclusive test)\n"
    "  --top K         the K most similar patterns (ties at the boundary by smaller id)\n"
    "  --autojunk      difflib: CPython's popular-element heuristic (off = KATO's extractor)\n"
    "  --stm-first     difflib: SequenceMatcher(stm, pattern) instead of KATO's (pattern, stm)\n"
    "  --threads N     worker threads (default TANDEM_THREADS, 0 = all cores)\n"
    "  --stats         add \"stats\": what each exact prefilter removed, timings in ms, where it ran\n"
    "                  (backend, route) and how many patterns each tier held (device, recent)\n"
    "  --no-prefilter  score every pattern (for checking that prefilters change nothing)\n";

static void put_stats(const tdm_seq_query_stats *st) {
    printf(", \"stats\": {\"patterns\": %llu, \"length_pruned\": %llu, \"index_pruned\": %llu, \"multiset_pruned\": %llu, \"lcs_pruned\": %llu, "
           "\"scored\": %llu, \"returned\": %llu, \"filter_ms\": %.3f, \"score_ms\": %.3f, \"select_ms\": %.3f, "
           "\"copy_ms\": %.3f, \"device_patterns\": %llu, \"recent_patterns\": %llu, \"backend\": \"%s\", \"route\": \"%s\"}",
           (unsigned long long)st->patterns, (unsigned long long)st->length_pruned, (unsigned long long)st->index_pruned,
           (unsigned long long)st->multiset_pruned,
           (unsigned long long)st->lcs_pruned, (unsigned long long)st->scored, (unsigned long long)st->returned,
           st->filter_ms, st->score_ms, st->select_ms, st->copy_ms, (unsigned long long)st->device_patterns,
           (unsigned long long)st->recent_patterns, st->backend, tdm_route_reason_name((tdm_route_reason)st->route_reason));
}

/* Reads every STM line of f and encodes it against the store's vocabulary. */
static int read_stms(FILE *f, const char *src, const tdm_seq_vocab *v, tdm_seq_stm **out, size_t *n) {
    char *line = NULL;
    size_t cap = 0, cnt = 0, scap = 0;
    long len;
    unsigned long lineno = 0;
    tdm_seq_stm *stms = NULL;
    cli_symbols syms = {0};
    int rc = 0;
    while (!rc && (len = cli_read_line(f, &line, &cap)) >= 0) {
        lineno++;
        json_t *j = cli_parse_json_line(src, lineno, line, (size_t)len);
        if (!j || cli_symbols_from_json(j, src, lineno, "stm", &syms)) rc = 1;
        if (!rc && cnt == scap) {
            scap = scap ? scap * 2 : 64;
            tdm_seq_stm *p = realloc(stms, scap * sizeof *p);
            if (!p) rc = cli_fail("out of memory");
            else stms = p;
        }
        int st;
        if (!rc && (st = tdm_seq_stm_encode(v, syms.syms, syms.lens, syms.n, &stms[cnt]))) {
            cli_fail("%s: line %lu: %s: %s", src, lineno, tdm_strerror(st), tdm_last_error());
            rc = 1;
        }
        if (!rc) cnt++;
        json_decref(j);
    }
    cli_symbols_free(&syms);
    free(line);
    if (rc) {
        for (size_t i = 0; i < cnt; i++) tdm_seq_stm_clear(&stms[i]);
        free(stms);
        return rc;
    }
    *out = stms;
    *n = cnt;
    return 0;
}

int cmd_seq_query(int argc, char **argv) {
    const char *store = NULL, *metric = NULL, *stm = NULL, *v;
    int have_thr = 0, stats = 0;
    unsigned long long u;
    tdm_seq_query_opts o;
    tdm_seq_query_opts_init(&o);
    for (int i = 1; i < argc; i++) {
        int r = 0;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if (!strcmp(argv[i], "--autojunk")) o.autojunk = 1;
        else if (!strcmp(argv[i], "--stm-first")) o.stm_first = 1;
        else if (!strcmp(argv[i], "--stats")) stats = 1;
        else if (!strcmp(argv[i], "--no-prefilter")) o.no_prefilter = 1;
        else if ((r = cli_opt(argc, argv, &i, "--store", &v)) > 0) store = v;
        else if (r == 0 && (r = cli_opt(argc, argv, &i, "--metric", &v)) > 0) metric = v;
        else if (r == 0 && (r = cli_opt(argc, argv, &i, "--stm", &v)) > 0) stm = v;
        else if (r == 0 && (r = cli_opt(argc, argv, &i, "--threshold", &v)) > 0) {
            if (cli_parse_double("--threshold", v, 0.0, 1.0, &o.threshold)) return 2;
            have_thr = 1;
        } else if (r == 0 && (r = cli_opt(argc, argv, &i, "--top", &v)) > 0) {
            if (cli_parse_u64("--top", v, 1, UINT32_MAX, &u)) return 2;
            o.top_k = (uint32_t)u;
        } else if (r == 0 && (r = cli_opt(argc, argv, &i, "--threads", &v)) > 0) {
            if (cli_parse_u64("--threads", v, 0, 1024, &u)) return 2;
            o.threads = (int)u;
        } else if (r == 0)
            return cli_usage("seq query: unknown option '%s'\n%s", argv[i], usage);
        if (r < 0) return 2;
    }
    if (!store || !metric || !stm) return cli_usage("seq query: --store, --metric and --stm are required\n%s", usage);
    if (have_thr == (o.top_k > 0)) return cli_usage("seq query: give exactly one of --threshold and --top\n%s", usage);
    if (tdm_seq_metric_parse(metric, &o.metric)) return cli_usage("seq query: --metric: %s", tdm_last_error());
    tdm_ctx *ctx = cli_ctx();
    if (!ctx) return 1;
    tdm_seq_store *s;
    int rc = tdm_seq_store_load(ctx, store, &s);
    if (rc) return cli_fail_status(rc, "seq query: loading the store");
    tdm_seq_engine *e; /* takes the store over, also when it fails */
    if ((rc = tdm_seq_engine_new(s, NULL, &e))) return cli_fail_status(rc, "seq query: starting the engine");
    FILE *in = cli_open_in(stm);
    tdm_seq_stm *stms = NULL;
    size_t n = 0;
    int fail = !in || read_stms(in, strcmp(stm, "-") ? stm : "stdin", tdm_seq_store_vocab_const(tdm_seq_engine_store(e)),
                                &stms, &n);
    cli_close(in);
    tdm_seq_result *res = fail ? NULL : calloc(n ? n : 1, sizeof *res);
    if (!fail && !res) fail = cli_fail("out of memory");
    if (!fail && (rc = tdm_seq_engine_query_batch(e, stms, n, &o, res))) fail = cli_fail_status(rc, "seq query");
    for (size_t q = 0; !fail && q < n; q++) {
        fputs("{\"results\": [", stdout);
        for (size_t k = 0; k < res[q].n; k++) {
            printf("%s{\"id\": %u, \"similarity\": ", k ? ", " : "", res[q].hits[k].id);
            cli_put_double(stdout, res[q].hits[k].similarity);
            fputc('}', stdout);
        }
        fputc(']', stdout);
        if (stats) put_stats(&res[q].stats);
        fputs("}\n", stdout);
    }
    for (size_t q = 0; q < n; q++) {
        if (res) tdm_seq_result_clear(&res[q]);
        tdm_seq_stm_clear(&stms[q]);
    }
    free(res);
    free(stms);
    tdm_seq_engine_free(e);
    return fail ? 1 : 0;
}
