/* cmd_seq_gen.c: `tandem seq gen`, the benchmark data generator as JSON lines, so that tandem and the
 * Python peers (difflib, RapidFuzz) read exactly the same patterns. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: tandem seq gen --patterns N --seed S --out FILE [options]\n"
    "\n"
    "Writes N generated patterns, one JSON list of symbols per line (\"s0\" is the most frequent symbol),\n"
    "to FILE ('-' = stdout). The same seed gives the same data on every machine.\n"
    "Options (defaults are the shared benchmark distribution):\n"
    "  --vocab V       symbols in the vocabulary (50000)\n"
    "  --zipf X        Zipf exponent of symbol frequencies (1.0)\n"
    "  --min-len N     shortest pattern (2)\n"
    "  --max-len N     longest pattern (60)\n"
    "  --mean-len X    mean pattern length (20)\n"
    "  --quiet         no progress lines on stderr\n";

int cmd_seq_gen(int argc, char **argv) {
    unsigned long long n = 0, seed = 0, u;
    int have_n = 0, have_seed = 0, quiet = 0;
    const char *out = NULL, *v;
    tdm_seq_gen_opts o;
    tdm_seq_gen_opts_init(&o);
    for (int i = 1; i < argc; i++) {
        int r = 0;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if (!strcmp(argv[i], "--quiet")) quiet = 1;
        else if ((r = cli_opt(argc, argv, &i, "--patterns", &v)) > 0) {
            if (cli_parse_u64("--patterns", v, 0, 1000000000ull, &n)) return 2;
            have_n = 1;
        } else if (r == 0 && (r = cli_opt(argc, argv, &i, "--seed", &v)) > 0) {
            if (cli_parse_u64("--seed", v, 0, UINT64_MAX, &seed)) return 2;
            have_seed = 1;
        } else if (r == 0 && (r = cli_opt(argc, argv, &i, "--out", &v)) > 0) out = v;
        else if (r == 0 && (r = cli_opt(argc, argv, &i, "--vocab", &v)) > 0) {
            if (cli_parse_u64("--vocab", v, 1, 100000000ull, &u)) return 2;
            o.vocab = (uint32_t)u;
        } else if (r == 0 && (r = cli_opt(argc, argv, &i, "--zipf", &v)) > 0) {
            if (cli_parse_double("--zipf", v, 0.0, 10.0, &o.zipf_s)) return 2;
        } else if (r == 0 && (r = cli_opt(argc, argv, &i, "--min-len", &v)) > 0) {
            if (cli_parse_u64("--min-len", v, 0, 1000000ull, &u)) return 2;
            o.min_len = (uint32_t)u;
        } else if (r == 0 && (r = cli_opt(argc, argv, &i, "--max-len", &v)) > 0) {
            if (cli_parse_u64("--max-len", v, 0, 1000000ull, &u)) return 2;
            o.max_len = (uint32_t)u;
        } else if (r == 0 && (r = cli_opt(argc, argv, &i, "--mean-len", &v)) > 0) {
            if (cli_parse_double("--mean-len", v, 0.0, 1e6, &o.mean_len)) return 2;
        } else if (r == 0)
            return cli_usage("seq gen: unknown option '%s'\n%s", argv[i], usage);
        if (r < 0) return 2;
    }
    if (!have_n || !have_seed || !out) return cli_usage("seq gen: --patterns, --seed and --out are required\n%s", usage);
    o.seed = seed;
    tdm_seq_gen *g;
    int rc = tdm_seq_gen_new(&o, &g);
    if (rc) return cli_fail_status(rc, "seq gen");
    FILE *f = cli_open_out(out);
    uint32_t *syms = f ? malloc(((size_t)o.max_len + 1) * sizeof *syms) : NULL;
    if (!syms) {
        tdm_seq_gen_free(g);
        cli_close(f);
        return f ? cli_fail("out of memory") : 1;
    }
    cli_progress p;
    cli_progress_start(&p, "seq gen", n, quiet || f == stdout);
    char name[16];
    for (unsigned long long k = 0; k < n; k++) {
        size_t len;
        tdm_seq_gen_next(g, syms, &len);
        fputc('[', f);
        for (size_t i = 0; i < len; i++) {
            tdm_seq_gen_symbol_name(syms[i], name);
            fprintf(f, i ? ", \"%s\"" : "\"%s\"", name);
        }
        fputs("]\n", f);
        cli_progress_step(&p, k + 1);
    }
    int werr = ferror(f) || fflush(f);
    cli_close(f);
    free(syms);
    tdm_seq_gen_free(g);
    return werr ? cli_fail("%s: write failed", out) : 0;
}
