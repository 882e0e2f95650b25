/* cmd_kato_learn.c: `tandem kato learn`, learns JSON-lines patterns into a knowledge base and prints each
 * one's KATO name (the oracle test checks them against Python's sha1 of str(pattern)). */
#include "kato_cli.h"

#include <string.h>

static const char *usage =
    "usage: tandem kato learn --patterns FILE [--persistence N] [--json]\n"
    "\n"
    "Learns each JSON line of FILE ('-' = stdin) into an in-memory knowledge base, in order. A line is a\n"
    "list of events ([[\"a\", \"b\"], [\"c\"]]) or an object {\"events\": [...], \"emotives\": [{...}],\n"
    "\"metadata\": [{...}]} (the accumulators KATO learns with). Prints one line per input line: the\n"
    "pattern's name (40 hex digits, KATO's sha1 of str(pattern_data)), or an empty line when the pattern has\n"
    "fewer than 2 symbols and KATO stores nothing; then, on stderr, the knowledge base's totals.\n"
    "Options:\n"
    "  --persistence N  emotive dicts kept per pattern, 1..100 (default 5)\n"
    "  --json           one JSON object per line: {\"name\": ..., \"learned\": true|false}\n";

int cmd_kato_learn(int argc, char **argv) {
    const char *patterns = NULL, *v;
    unsigned long long persistence = 5;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if ((r = cli_opt(argc, argv, &i, "--patterns", &v))) {
            if (r < 0) return 2;
            patterns = v;
        } else if ((r = cli_opt(argc, argv, &i, "--persistence", &v))) {
            if (r < 0 || cli_parse_u64("--persistence", v, 1, 100, &persistence)) return 2;
        } else if (!strcmp(argv[i], "--json")) json = 1;
        else return cli_usage("kato learn: unknown argument %s (see --help)", argv[i]);
    }
    if (!patterns) return cli_usage("kato learn: --patterns FILE is required (see --help)");
    tdm_ctx *ctx = cli_ctx();
    if (!ctx) return 1;
    tdm_kato_kb *kb;
    int st = tdm_kato_kb_new(ctx, &kb);
    if (st) return cli_fail_status(st, "cannot create the knowledge base");
    int rc = kcli_learn_file(kb, patterns, (uint32_t)persistence, stdout, json, NULL);
    if (!rc) {
        tdm_kato_kb_totals t;
        tdm_kato_kb_totals_get(kb, &t);
        fprintf(stderr, "patterns %llu, total_pattern_frequencies %llu, total_symbols_in_patterns_frequencies %llu, symbols %llu\n",
                (unsigned long long)t.patterns, (unsigned long long)t.total_pattern_frequencies,
                (unsigned long long)t.total_symbols_in_patterns_frequencies, (unsigned long long)t.symbols);
    }
    tdm_kato_kb_free(kb);
    return rc;
}
