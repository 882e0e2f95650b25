/* cmd_lattice_xor.c: `tandem lattice xor`, the reversible XOR mask applied to a file, with an explicit hex
 * key (cycled) or the SplitMix64 stream of a seed. A random seed is always reported, so the mask can be
 * undone by running the command again with it. A mask, not encryption. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: tandem lattice xor --in FILE --out FILE (--key HEX | --seed N | --random-seed) [--offset N] [--json]\n\n"
    "out[i] = in[i] XOR key[(offset + i) mod len] for a hex key, or XOR byte offset+i of the seed's SplitMix64\n"
    "stream. Running it again with the same key or seed and offset restores the input. FILE '-' is stdin or\n"
    "stdout. The report (bytes, seed) goes to stderr, or to stdout as JSON with --json (then --out must be a file).\n";

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int cmd_lattice_xor(int argc, char **argv) {
    const char *in = NULL, *outp = NULL, *hex = NULL, *v;
    int json = 0, random_seed = 0, have_seed = 0;
    unsigned long long seed = 0, offset = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--random-seed")) random_seed = 1;
        else if ((r = cli_opt(argc, argv, &i, "--in", &v))) {
            if (r < 0) return 2;
            in = v;
        } else if ((r = cli_opt(argc, argv, &i, "--out", &v))) {
            if (r < 0) return 2;
            outp = v;
        } else if ((r = cli_opt(argc, argv, &i, "--key", &v))) {
            if (r < 0) return 2;
            hex = v;
        } else if ((r = cli_opt(argc, argv, &i, "--seed", &v))) {
            if (r < 0 || cli_parse_u64("--seed", v, 0, UINT64_MAX, &seed)) return 2;
            have_seed = 1;
        } else if ((r = cli_opt(argc, argv, &i, "--offset", &v))) {
            if (r < 0 || cli_parse_u64("--offset", v, 0, UINT64_MAX, &offset)) return 2;
        } else
            return cli_usage("lattice xor: unknown option '%s'\n%s", argv[i], usage);
    }
    if (!in || !outp) return cli_usage("lattice xor: --in and --out are required\n%s", usage);
    if ((hex != NULL) + have_seed + random_seed != 1)
        return cli_usage("lattice xor: give exactly one of --key, --seed, --random-seed\n%s", usage);
    if (json && !strcmp(outp, "-")) return cli_usage("lattice xor: --json needs --out to be a file");
    uint8_t *key = NULL;
    size_t klen = 0;
    if (hex) {
        size_t n = strlen(hex);
        if (n == 0 || n % 2) return cli_usage("lattice xor: --key \"%s\": expected an even number (>= 2) of hex digits", hex);
        key = malloc(n / 2);
        if (!key) return cli_fail("out of memory");
        for (size_t i = 0; i < n; i += 2) {
            int a = hexval(hex[i]), b = hexval(hex[i + 1]);
            if (a < 0 || b < 0) {
                free(key);
                return cli_usage("lattice xor: --key: '%c%c' at position %zu is not a hex byte", hex[i], hex[i + 1], i);
            }
            key[klen++] = (uint8_t)(a * 16 + b);
        }
    }
    int rc = 1;
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    FILE *f = cli_open_in(in), *o = NULL;
    if (!f) goto out;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            uint8_t *p = realloc(buf, cap);
            if (!p) {
                cli_fail("out of memory reading %s", in);
                goto out;
            }
            buf = p;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        cli_fail("%s: read error", in);
        goto out;
    }
    tdm_ctx *ctx = cli_ctx();
    if (!ctx) goto out;
    int st;
    uint64_t s64 = seed;
    if (hex) {
        tdm_lattice_key k = {key, klen, offset};
        st = tdm_lattice_xor(ctx, buf, buf, n, &k, 0);
    } else {
        st = tdm_lattice_xor_seeded(ctx, buf, buf, n, &s64, offset, random_seed ? TDM_LATTICE_SEED_RANDOM : 0);
    }
    if (st) {
        cli_fail_status(st, "lattice xor");
        goto out;
    }
    if (!(o = cli_open_out(outp))) goto out;
    if (fwrite(buf, 1, n, o) != n || fflush(o)) {
        cli_fail("%s: write error", outp);
        goto out;
    }
    if (json) {
        printf("{\"bytes\": %zu, \"offset\": %llu, ", n, offset);
        if (hex) printf("\"key_bytes\": %zu}\n", klen);
        else printf("\"seed\": %llu}\n", (unsigned long long)s64);
    } else if (!hex) {
        fprintf(stderr, "tandem: lattice xor: %zu bytes masked with seed %llu (offset %llu); run again with --seed %llu to undo\n",
                n, (unsigned long long)s64, offset, (unsigned long long)s64);
    }
    rc = 0;
out:
    if (f) cli_close(f);
    if (o) cli_close(o);
    free(buf);
    free(key);
    return rc;
}
