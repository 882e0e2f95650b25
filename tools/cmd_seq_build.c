/* cmd_seq_build.c: `tandem seq build`, JSON-lines patterns into a store file. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: tandem seq build --input FILE --out STORE [--json] [--quiet]\n"
    "\n"
    "Reads one pattern per line from FILE ('-' = stdin): a JSON list of symbols, or a list of events\n"
    "(lists of symbols) that is flattened in order. Pattern ids are line order, from 0. Writes the store\n"
    "(vocabulary included, checksummed) to STORE atomically and prints a summary (--json: one JSON object).\n"
    "A bad line stops the build with an error naming its line number; nothing is written then.\n";

int cmd_seq_build(int argc, char **argv) {
    const char *in_path = NULL, *out = NULL, *v;
    int json = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--quiet")) quiet = 1;
        else if ((r = cli_opt(argc, argv, &i, "--input", &v))) {
            if (r < 0) return 2;
            in_path = v;
        } else if ((r = cli_opt(argc, argv, &i, "--out", &v))) {
            if (r < 0) return 2;
            out = v;
        } else
            return cli_usage("seq build: unknown option '%s'\n%s", argv[i], usage);
    }
    if (!in_path || !out) return cli_usage("seq build: --input and --out are required\n%s", usage);
    tdm_ctx *ctx = cli_ctx();
    if (!ctx) return 1;
    FILE *in = cli_open_in(in_path);
    if (!in) return 1;
    tdm_seq_store *s;
    int rc = tdm_seq_store_new(ctx, &s);
    if (rc) {
        cli_close(in);
        return cli_fail_status(rc, "seq build");
    }
    const char *src = strcmp(in_path, "-") ? in_path : "stdin";
    char *line = NULL;
    size_t cap = 0;
    long len;
    unsigned long lineno = 0;
    int fail = 0;
    double t0 = cli_now();
    cli_symbols syms = {0};
    while (!fail && (len = cli_read_line(in, &line, &cap)) >= 0) {
        lineno++;
        json_t *j = cli_parse_json_line(src, lineno, line, (size_t)len);
        if (!j || cli_symbols_from_json(j, src, lineno, "pattern", &syms)) fail = 1;
        else if ((rc = tdm_seq_store_add_strings(s, syms.syms, syms.lens, syms.n, NULL))) {
            cli_fail("%s: line %lu: %s: %s", src, lineno, tdm_strerror(rc), tdm_last_error());
            fail = 1;
        }
        json_decref(j);
        if (!quiet && lineno % 1000000 == 0) fprintf(stderr, "seq build: %lu patterns read\n", lineno);
    }
    cli_symbols_free(&syms);
    free(line);
    cli_close(in);
    double t1 = cli_now();
    tdm_seq_store_shrink(s);
    if (!fail && (rc = tdm_seq_store_save(s, out))) fail = cli_fail_status(rc, "seq build: saving the store");
    double t2 = cli_now();
    if (!fail) {
        uint32_t n = tdm_seq_store_count(s);
        unsigned long long bytes = (unsigned long long)tdm_seq_store_bytes(s);
        if (json)
            printf("{\"patterns\": %u, \"symbols\": %llu, \"vocabulary\": %u, \"max_length\": %u, \"bytes\": %llu, "
                   "\"bytes_per_pattern\": %.1f, \"read_seconds\": %.3f, \"save_seconds\": %.3f}\n",
                   n, (unsigned long long)tdm_seq_store_total_symbols(s), tdm_seq_vocab_size(tdm_seq_store_vocab(s)),
                   tdm_seq_store_max_length(s), bytes, n ? (double)bytes / n : 0.0, t1 - t0, t2 - t1);
        else
            printf("%s: %u patterns, %llu symbols, vocabulary %u, %.1f MB in memory (%.1f B/pattern), read %.2f s, saved %.2f s\n",
                   out, n, (unsigned long long)tdm_seq_store_total_symbols(s), tdm_seq_vocab_size(tdm_seq_store_vocab(s)),
                   bytes / 1e6, n ? (double)bytes / n : 0.0, t1 - t0, t2 - t1);
    }
    tdm_seq_store_free(s);
    return fail ? 1 : 0;
}
