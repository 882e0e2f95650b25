/* cmd_lattice.c: `tandem lattice`, the lattice engine's command group, and what its subcommands share:
 * the --dims/--size options with messages naming the value at fault, building the lattice, and reading a
 * vertex given either as an id or as comma-separated coordinates. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const cli_command lattice_commands[] = {
    {"analyze", "structure of the d-dimensional lattice of side L (computed, checked by closed forms)", cmd_lattice_analyze},
    {"path", "shortest path between two vertices by BFS (tie rule: lowest-id predecessor)", cmd_lattice_path},
    {"distance", "hop distance by the catalytic traversal (borrowed scratch memory, restored)", cmd_lattice_distance},
    {"xor", "reversible XOR mask of a file with a hex key or a seeded key stream", cmd_lattice_xor},
};

int cmd_lattice(int argc, char **argv) {
    return cli_dispatch("tandem lattice", lattice_commands, sizeof lattice_commands / sizeof *lattice_commands, argc - 1,
                        argv + 1);
}

int cli_lattice_shape_opt(int argc, char **argv, int *i, int *dims, long long *size) {
    const char *v;
    int r;
    unsigned long long x;
    if ((r = cli_opt(argc, argv, i, "--dims", &v))) {
        if (r < 0 || cli_parse_u64("--dims", v, 1, 32, &x)) return -1;
        *dims = (int)x;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "--size", &v))) {
        if (r < 0 || cli_parse_u64("--size", v, 2, 2147483647ull, &x)) return -1;
        *size = (long long)x;
        return 1;
    }
    return 0;
}

int cli_lattice_build(tdm_ctx *ctx, int dims, long long size, tdm_lattice **out) {
    if (!dims || !size) return cli_usage("lattice: --dims D and --size L are required");
    int rc = tdm_lattice_new(ctx, dims, size, 0, out);
    if (rc) return cli_fail_status(rc, "lattice");
    return 0;
}

int cli_lattice_vertex(const tdm_lattice *lat, const char *opt, const char *text, int64_t *v) {
    if (!strchr(text, ',')) {
        unsigned long long x;
        if (cli_parse_u64(opt, text, 0, (unsigned long long)tdm_lattice_vertices(lat) - 1, &x)) return -1;
        *v = (int64_t)x;
        return 0;
    }
    int d = tdm_lattice_dims(lat), n = 0;
    int64_t c[TDM_LATTICE_MAX_DIMS];
    for (const char *p = text; *p;) {
        char *end;
        long long x = strtoll(p, &end, 10);
        if (end == p || (*end && *end != ',')) {
            cli_usage("%s \"%s\": expected a vertex id or %d comma-separated coordinates", opt, text, d);
            return -1;
        }
        if (n < d) c[n] = x;
        n++;
        p = *end ? end + 1 : end;
    }
    if (n != d) {
        cli_usage("%s \"%s\": %d coordinates given, the lattice has %d dimensions", opt, text, n, d);
        return -1;
    }
    int rc = tdm_lattice_index(lat, c, v);
    if (rc) {
        cli_fail_status(rc, opt);
        return -1;
    }
    return 0;
}
