/* cmd_seq_score.c: `tandem seq score`, pairwise similarity of JSON-lines pairs. It is the command-line
 * face of the exactness contract: the oracle tests feed it thousands of pairs and compare every ratio's
 * bits and every difflib block with CPython. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: tandem seq score --metric lcs|difflib|char [--autojunk] --pairs FILE\n"
    "\n"
    "Reads JSON lines {\"a\": [symbols...], \"b\": [symbols...]} from FILE ('-' = stdin); a and b may also be\n"
    "lists of events (lists of symbols), flattened in order. Writes one line per pair:\n"
    "  {\"ratio\": R, \"blocks\": [[i, j, n], ...]}\n"
    "R has 17 significant digits, so it reads back as the same double. Metrics:\n"
    "  lcs      KATO's token similarity ((2.0*L/T)*100.0)/100.0, L = LCS length, T = |a|+|b|\n"
    "  difflib  CPython 3.11 difflib.SequenceMatcher(None, a, b) ratio; blocks = its matching blocks\n"
    "           without the final sentinel (only this metric prints blocks)\n"
    "  char     KATO's character mode: LCS over the code points of ' '.join(a) and ' '.join(b)\n"
    "Options:\n"
    "  --autojunk  difflib's popular-element heuristic (CPython's default); off by default, as KATO\n"
    "A bad line stops the command with an error naming its line number.\n";

typedef struct {
    tdm_seq_metric metric;
    int autojunk;
    tdm_seq_vocab *vocab;
    tdm_seq_matcher *matcher;
    uint32_t *ids;
    size_t cap;
} scorer;

static int encode(scorer *sc, const cli_symbols *s, size_t at, const char *src, unsigned long lineno, const char *field) {
    for (size_t i = 0; i < s->n; i++) {
        int rc = tdm_seq_vocab_intern(sc->vocab, s->syms[i], s->lens[i], &sc->ids[at + i]);
        if (rc) {
            cli_fail("%s: line %lu: %s symbol %zu: %s", src, lineno, field, i, tdm_last_error());
            return -1;
        }
    }
    return 0;
}

static int score_line(scorer *sc, const json_t *obj, const char *src, unsigned long lineno) {
    if (!json_is_object(obj)) return cli_fail("%s: line %lu: expected an object {\"a\": [...], \"b\": [...]}", src, lineno), -1;
    const json_t *ja = json_object_get(obj, "a"), *jb = json_object_get(obj, "b");
    if (!ja || !jb) return cli_fail("%s: line %lu: missing \"%s\"", src, lineno, ja ? "b" : "a"), -1;
    cli_symbols a = {0}, b = {0};
    int rc = -1;
    if (cli_symbols_from_json(ja, src, lineno, "a", &a) || cli_symbols_from_json(jb, src, lineno, "b", &b)) goto out;
    size_t need = a.n + b.n + 1;
    if (need > sc->cap) {
        uint32_t *p = realloc(sc->ids, need * sizeof *p);
        if (!p) {
            cli_fail("out of memory");
            goto out;
        }
        sc->ids = p, sc->cap = need;
    }
    if (encode(sc, &a, 0, src, lineno, "a") || encode(sc, &b, a.n, src, lineno, "b")) goto out;
    const uint32_t *ia = sc->ids, *ib = sc->ids + a.n;
    int st;
    if (sc->metric == TDM_SEQ_DIFFLIB) {
        const tdm_seq_block *bl;
        size_t nbl, m;
        st = tdm_seq_matcher_set_b(sc->matcher, ib, b.n, sc->autojunk);
        if (!st) st = tdm_seq_matcher_blocks(sc->matcher, ia, a.n, &bl, &nbl, &m);
        if (st) {
            cli_fail_status(st, "difflib");
            goto out;
        }
        fputs("{\"ratio\": ", stdout);
        cli_put_double(stdout, tdm_seq_difflib_ratio(m, a.n, b.n));
        fputs(", \"blocks\": [", stdout);
        for (size_t k = 0; k < nbl; k++) printf("%s[%u, %u, %u]", k ? ", " : "", bl[k].i, bl[k].j, bl[k].n);
        fputs("]}\n", stdout);
    } else {
        size_t L, la = a.n, lb = b.n;
        st = sc->metric == TDM_SEQ_LCS ? tdm_seq_lcs_length(ia, a.n, ib, b.n, &L)
                                       : tdm_seq_char_lcs(sc->vocab, ia, a.n, ib, b.n, &L, &la, &lb);
        if (st) {
            cli_fail_status(st, "scoring");
            goto out;
        }
        double r = sc->metric == TDM_SEQ_LCS ? tdm_seq_lcs_ratio(L, la, lb) : tdm_seq_char_ratio(L, la, lb);
        fputs("{\"ratio\": ", stdout);
        cli_put_double(stdout, r);
        fputs("}\n", stdout);
    }
    rc = 0;
out:
    cli_symbols_free(&a);
    cli_symbols_free(&b);
    return rc;
}

int cmd_seq_score(int argc, char **argv) {
    const char *metric = NULL, *pairs = NULL, *v;
    scorer sc = {0};
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if ((r = cli_opt(argc, argv, &i, "--metric", &v))) {
            if (r < 0) return 2;
            metric = v;
        } else if ((r = cli_opt(argc, argv, &i, "--pairs", &v))) {
            if (r < 0) return 2;
            pairs = v;
        } else if (!strcmp(argv[i], "--autojunk")) {
            sc.autojunk = 1;
        } else
            return cli_usage("seq score: unknown option '%s'\n%s", argv[i], usage);
    }
    if (!metric || !pairs) return cli_usage("seq score: --metric and --pairs are required\n%s", usage);
    if (tdm_seq_metric_parse(metric, &sc.metric)) return cli_usage("seq score: --metric: %s", tdm_last_error());
    FILE *in = cli_open_in(pairs);
    if (!in) return 1;
    int rc = 0;
    if (tdm_seq_vocab_new(&sc.vocab) || tdm_seq_matcher_new(&sc.matcher)) rc = cli_fail_status(TDM_E_NOMEM, "seq score");
    char *line = NULL;
    size_t cap = 0;
    long len;
    unsigned long lineno = 0;
    const char *src = strcmp(pairs, "-") ? pairs : "stdin";
    while (!rc && (len = cli_read_line(in, &line, &cap)) >= 0) {
        lineno++;
        json_t *obj = cli_parse_json_line(src, lineno, line, (size_t)len);
        if (!obj || score_line(&sc, obj, src, lineno)) rc = 1;
        json_decref(obj);
    }
    free(line);
    free(sc.ids);
    tdm_seq_matcher_free(sc.matcher);
    tdm_seq_vocab_free(sc.vocab);
    cli_close(in);
    return rc;
}
