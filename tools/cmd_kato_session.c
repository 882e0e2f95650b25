/* cmd_kato_session.c: `tandem kato session`, one session driven by JSON-lines observations: each line is
 * observed into the STM (with auto-learn), and may ask for a learn or for predictions. It is the
 * command-line face of tdm_kato_stm_* and lets the oracle test replay whole sessions against Python. */
#include "kato_cli.h"

#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: tandem kato session --observations FILE [--patterns FILE] [options]\n"
    "\n"
    "Runs one session over a knowledge base (empty, or learned from --patterns first). Each JSON line of\n"
    "FILE is an observation {\"strings\": [...], \"emotives\": {...}, \"metadata\": {...}} with optional\n"
    "\"learn\": true (learn the STM after observing) and \"predict\": true (predict after that), or\n"
    "{\"clear\": true} (clear the STM and the accumulators). Prints one JSON line per input line:\n"
    "  {\"auto_learned\": NAME|null, \"learned\": NAME|\"\"|null, \"stm_length\": N, \"time\": T,\n"
    "   \"predictions\": {...}|null}\n"
    "Options:\n"
    "  --max-pattern-length N  auto-learn when the STM holds N events (default 0: never)\n"
    "  --rolling               STM mode ROLLING (default CLEAR)\n"
    "  --no-sort               keep each observation's symbols in the given order\n"
    "  --persistence N         emotive dicts kept per pattern, 1..100 (default 5)\n"
    "  --threshold X, --max-predictions N, --rank KEY, --char, --affinity EMOTIVE  as `tandem kato predict`\n";

static int one_line(tdm_kato_kb *kb, tdm_kato_stm *stm, const tdm_kato_config *cfg, const json_t *j, const char *src,
                    unsigned long lineno) {
    if (!json_is_object(j)) return cli_fail("%s: line %lu: expected an object", src, lineno);
    if (json_is_true(json_object_get(j, "clear"))) {
        tdm_kato_stm_clear(stm);
        printf("{\"auto_learned\": null, \"learned\": null, \"stm_length\": 0, \"time\": 0, \"predictions\": null}\n");
        return 0;
    }
    const json_t *strings = json_object_get(j, "strings"), *emo = json_object_get(j, "emotives"), *meta = json_object_get(j, "metadata");
    if (strings && !json_is_array(strings)) return cli_fail("%s: line %lu: strings: expected a list of strings", src, lineno);
    size_t n = strings ? json_array_size(strings) : 0;
    const char **syms = calloc(n + 1, sizeof *syms);
    size_t *lens = calloc(n + 1, sizeof *lens);
    if (!syms || !lens) return free(syms), free(lens), cli_fail("out of memory");
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(strings, i);
        if (!json_is_string(s)) return free(syms), free(lens), cli_fail("%s: line %lu: strings[%zu]: expected a string", src, lineno, i);
        syms[i] = json_string_value(s), lens[i] = json_string_length(s);
    }
    /* a single dict each: wrap them so the shared reader turns them into tdm_kato_* dicts */
    json_t *ew = emo ? json_pack("[O]", emo) : NULL, *mw = meta ? json_pack("[O]", meta) : NULL;
    kcli_dicts d;
    int rc = kcli_dicts_from_json(ew, mw, src, lineno, &d) ? 1 : 0;
    json_decref(ew), json_decref(mw);
    char auto_name[TDM_KATO_NAME_LEN + 1] = "", name[TDM_KATO_NAME_LEN + 1] = "";
    int learned = -1;
    if (!rc) {
        int st = tdm_kato_stm_observe(stm, kb, cfg, syms, lens, n, d.nemo ? &d.emo[0] : NULL, d.nmeta ? &d.meta[0] : NULL, auto_name);
        if (st) rc = cli_fail("%s: line %lu: %s: %s", src, lineno, tdm_strerror(st), tdm_last_error());
    }
    if (!rc && json_is_true(json_object_get(j, "learn"))) {
        int st = tdm_kato_stm_learn(stm, kb, cfg->persistence, name, &learned);
        if (st) rc = cli_fail("%s: line %lu: learn: %s: %s", src, lineno, tdm_strerror(st), tdm_last_error());
    }
    tdm_kato_result *r = NULL;
    if (!rc && json_is_true(json_object_get(j, "predict"))) {
        int st = tdm_kato_stm_predict(stm, kb, cfg, &r);
        if (st) rc = cli_fail("%s: line %lu: predict: %s: %s", src, lineno, tdm_strerror(st), tdm_last_error());
    }
    if (!rc) {
        printf("{\"auto_learned\": ");
        if (auto_name[0]) printf("\"%s\"", auto_name);
        else fputs("null", stdout);
        fputs(", \"learned\": ", stdout);
        if (learned < 0) fputs("null", stdout);
        else printf("\"%s\"", learned ? name : "");
        printf(", \"stm_length\": %zu, \"time\": %llu, \"predictions\": ", tdm_kato_stm_nevents(stm),
               (unsigned long long)tdm_kato_stm_time(stm));
        if (r) kcli_put_result(stdout, r);
        else fputs("null", stdout);
        fputs("}\n", stdout);
    }
    tdm_kato_result_free(r);
    kcli_dicts_free(&d);
    free(syms), free(lens);
    return rc;
}

int cmd_kato_session(int argc, char **argv) {
    const char *patterns = NULL, *observations = NULL, *v;
    unsigned long long persistence = 5, mpl;
    tdm_kato_config cfg;
    tdm_kato_config_init(&cfg);
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if ((r = cli_opt(argc, argv, &i, "--patterns", &v))) {
            if (r < 0) return 2;
            patterns = v;
        } else if ((r = cli_opt(argc, argv, &i, "--observations", &v))) {
            if (r < 0) return 2;
            observations = v;
        } else if ((r = cli_opt(argc, argv, &i, "--max-pattern-length", &v))) {
            if (r < 0 || cli_parse_u64("--max-pattern-length", v, 0, 1000000, &mpl)) return 2;
            cfg.max_pattern_length = (uint32_t)mpl;
        } else if ((r = kcli_config_opt(argc, argv, &i, &cfg, &persistence))) {
            if (r < 0) return 2;
        } else if (!strcmp(argv[i], "--rolling")) cfg.stm_mode = TDM_KATO_STM_ROLLING;
        else if (!strcmp(argv[i], "--no-sort")) cfg.sort_symbols = 0;
        else return cli_usage("kato session: unknown argument %s (see --help)", argv[i]);
    }
    if (!observations) return cli_usage("kato session: --observations FILE is required (see --help)");
    cfg.persistence = (uint32_t)persistence;
    tdm_ctx *ctx = cli_ctx();
    if (!ctx) return 1;
    tdm_kato_kb *kb;
    tdm_kato_stm *stm;
    int st = tdm_kato_kb_new(ctx, &kb);
    if (st) return cli_fail_status(st, "cannot create the knowledge base");
    if ((st = tdm_kato_stm_new(&stm))) {
        tdm_kato_kb_free(kb);
        return cli_fail_status(st, "cannot create the STM");
    }
    int rc = patterns ? kcli_learn_file(kb, patterns, (uint32_t)persistence, NULL, 0, NULL) : 0;
    FILE *f = rc ? NULL : cli_open_in(observations);
    if (!rc && !f) rc = 1;
    char *buf = NULL;
    size_t cap = 0;
    long len;
    unsigned long lineno = 0;
    while (!rc && (len = cli_read_line(f, &buf, &cap)) >= 0) {
        lineno++;
        if (!len) continue;
        json_t *j = cli_parse_json_line(observations, lineno, buf, (size_t)len);
        if (!j) rc = 1;
        else rc = one_line(kb, stm, &cfg, j, observations, lineno);
        json_decref(j);
    }
    free(buf);
    if (f) cli_close(f);
    tdm_kato_stm_free(stm);
    tdm_kato_kb_free(kb);
    return rc;
}
