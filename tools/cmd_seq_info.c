/* cmd_seq_info.c: `tandem seq info`, a store file's size and length distribution. */
#include "cli.h"

#include <string.h>

static const char *usage = "usage: tandem seq info --store STORE [--json]\n\n"
                           "Loads and validates STORE, then prints its pattern count, symbols, vocabulary size,\n"
                           "length range and memory footprint.\n";

int cmd_seq_info(int argc, char **argv) {
    const char *store = NULL, *v;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if (!strcmp(argv[i], "--json")) json = 1;
        else if ((r = cli_opt(argc, argv, &i, "--store", &v))) {
            if (r < 0) return 2;
            store = v;
        } else
            return cli_usage("seq info: unknown option '%s'\n%s", argv[i], usage);
    }
    if (!store) return cli_usage("seq info: --store is required\n%s", usage);
    tdm_ctx *ctx = cli_ctx();
    if (!ctx) return 1;
    tdm_seq_store *s;
    double t0 = cli_now();
    int rc = tdm_seq_store_load(ctx, store, &s);
    if (rc) return cli_fail_status(rc, "seq info");
    double t1 = cli_now();
    uint32_t n = tdm_seq_store_count(s), minlen = 0;
    for (uint32_t len = 0; len <= tdm_seq_store_max_length(s) && n; len++) {
        const uint32_t *ids;
        size_t k;
        tdm_seq_store_by_length(s, len, &ids, &k);
        if (k) {
            minlen = len;
            break;
        }
    }
    unsigned long long sym = (unsigned long long)tdm_seq_store_total_symbols(s), bytes = tdm_seq_store_bytes(s);
    if (json)
        printf("{\"patterns\": %u, \"symbols\": %llu, \"vocabulary\": %u, \"min_length\": %u, \"max_length\": %u, "
               "\"mean_length\": %.3f, \"bytes\": %llu, \"load_seconds\": %.3f}\n",
               n, sym, tdm_seq_vocab_size(tdm_seq_store_vocab(s)), minlen, tdm_seq_store_max_length(s),
               n ? (double)sym / n : 0.0, bytes, t1 - t0);
    else
        printf("%s: %u patterns, %llu symbols (mean length %.2f, %u..%u), vocabulary %u, %.1f MB in memory, loaded in %.2f s\n",
               store, n, sym, n ? (double)sym / n : 0.0, minlen, tdm_seq_store_max_length(s),
               tdm_seq_vocab_size(tdm_seq_store_vocab(s)), bytes / 1e6, t1 - t0);
    tdm_seq_store_free(s);
    return 0;
}
