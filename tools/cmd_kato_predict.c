/* cmd_kato_predict.c: `tandem kato predict`, learns JSON-lines patterns, then prints KATO's predictions for
 * one STM (--stm) or for many (--queries, one JSON line each, with per-query configuration). The
 * command-line face of tdm_kato_predict, and what the oracle test drives. */
#include "kato_cli.h"

#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: tandem kato predict --patterns FILE (--stm JSON | --queries FILE) [options]\n"
    "\n"
    "Learns FILE's patterns (as `tandem kato learn`), then predicts. --stm takes one STM as JSON, a list of\n"
    "events ('[[\"a\"], [\"b\", \"c\"]]'). --queries reads JSON lines, each an STM or {\"stm\": [...],\n"
    "\"config\": {...}} with any of recall_threshold, max_predictions, use_token_matching, rank_sort_algo,\n"
    "affinity_emotive (overriding the options below for that query).\n"
    "Prints a table, or with --json one line per STM: {\"predictions\": [...], \"future_potentials\": [...],\n"
    "\"count\": N}, the fields of spec/kato.md 3.7, doubles with 17 significant digits.\n"
    "Options:\n"
    "  --threshold X        recall_threshold in [0, 1] (default 0.1)\n"
    "  --max-predictions N  1..10000 (default 100)\n"
    "  --rank KEY           rank_sort_algo (default potential)\n"
    "  --char               character similarity instead of token LCS (use_token_matching false)\n"
    "  --affinity EMOTIVE   turn the weighted metrics on with this emotive\n"
    "  --persistence N      emotive dicts kept per pattern while learning, 1..100 (default 5)\n"
    "  --json               JSON output\n";

static int predict_one(tdm_kato_kb *kb, const json_t *stm, const tdm_kato_config *cfg, const char *src, unsigned long lineno, int json) {
    kcli_events ev;
    if (kcli_events_from_json(stm, src, lineno, "stm", &ev)) return 1;
    tdm_kato_result *r = NULL;
    int st = tdm_kato_predict(kb, ev.ev, ev.n, cfg, &r);
    kcli_events_free(&ev);
    if (st) return cli_fail("%s: line %lu: %s: %s", src, lineno, tdm_strerror(st), tdm_last_error());
    if (json) kcli_put_result(stdout, r), fputc('\n', stdout);
    else kcli_put_table(stdout, r);
    tdm_kato_result_free(r);
    return 0;
}

int cmd_kato_predict(int argc, char **argv) {
    const char *patterns = NULL, *stm = NULL, *queries = NULL, *v;
    unsigned long long persistence = 5;
    int json = 0;
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if ((r = cli_opt(argc, argv, &i, "--patterns", &v))) {
            if (r < 0) return 2;
            patterns = v;
        } else if ((r = cli_opt(argc, argv, &i, "--stm", &v))) {
            if (r < 0) return 2;
            stm = v;
        } else if ((r = cli_opt(argc, argv, &i, "--queries", &v))) {
            if (r < 0) return 2;
            queries = v;
        } else if ((r = kcli_config_opt(argc, argv, &i, &cfg, &persistence))) {
            if (r < 0) return 2;
        } else if (!strcmp(argv[i], "--json")) json = 1;
        else return cli_usage("kato predict: unknown argument %s (see --help)", argv[i]);
    }
    if (!patterns) return cli_usage("kato predict: --patterns FILE is required (see --help)");
    if (!stm == !queries) return cli_usage("kato predict: give exactly one of --stm JSON and --queries FILE");
    tdm_ctx *ctx = cli_ctx();
    if (!ctx) return 1;
    tdm_kato_kb *kb;
    int st = tdm_kato_kb_new(ctx, &kb);
    if (st) return cli_fail_status(st, "cannot create the knowledge base");
    int rc = kcli_learn_file(kb, patterns, (uint32_t)persistence, NULL, 0, NULL);
    if (!rc && stm) {
        json_error_t err;
        json_t *j = json_loads(stm, JSON_DECODE_ANY, &err);
        if (!j) rc = cli_usage("--stm: %s (column %d)", err.text, err.column);
        else rc = predict_one(kb, j, &cfg, "--stm", 1, json);
        json_decref(j);
    } else if (!rc) {
        FILE *f = cli_open_in(queries);
        char *buf = NULL;
        size_t cap = 0;
        long len;
        unsigned long lineno = 0;
        if (!f) rc = 1;
        while (!rc && (len = cli_read_line(f, &buf, &cap)) >= 0) {
            lineno++;
            if (!len) continue;
            json_t *j = cli_parse_json_line(queries, lineno, buf, (size_t)len);
            if (!j) {
                rc = 1;
                break;
            }
            tdm_kato_config qc = cfg;
            const json_t *s = json_is_object(j) ? json_object_get(j, "stm") : j;
            if (json_is_object(j) && kcli_config_from_json(json_object_get(j, "config"), queries, lineno, &qc)) rc = 1;
            else rc = predict_one(kb, s, &qc, queries, lineno, json);
            json_decref(j);
        }
        free(buf);
        if (f) cli_close(f);
    }
    tdm_kato_kb_free(kb);
    return rc;
}
