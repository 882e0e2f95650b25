/* cmd_lattice_path.c: `tandem lattice path`, the shortest path between two lattice vertices by BFS, with
 * the spec's tie rule (the same path on every backend). */
#include "cli.h"

#include <string.h>

static const char *usage =
    "usage: tandem lattice path --dims D --size L --from A --to B [--backend auto|cpu|cuda] [--json]\n\n"
    "A and B are vertex ids (row-major, last coordinate fastest) or comma-separated coordinates such as\n"
    "1,2,3,4. Prints the vertices of the shortest path (both ends included) and its hop count; among equal\n"
    "paths, the one that steps back from B to the lowest-id vertex one hop closer to A. --json prints\n"
    "{\"path\": [...], \"hops\": N, ...}. --backend is a placement hint; the answer names the backend used.\n";

int cmd_lattice_path(int argc, char **argv) {
    int dims = 0, json = 0, pref = TDM_DEVICE_AUTO;
    long long size = 0;
    const char *from = NULL, *to = NULL, *v;
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if (!strcmp(argv[i], "--json")) json = 1;
        else if ((r = cli_lattice_shape_opt(argc, argv, &i, &dims, &size))) {
            if (r < 0) return 2;
        } else if ((r = cli_opt(argc, argv, &i, "--from", &v))) {
            if (r < 0) return 2;
            from = v;
        } else if ((r = cli_opt(argc, argv, &i, "--to", &v))) {
            if (r < 0) return 2;
            to = v;
        } else if ((r = cli_opt(argc, argv, &i, "--backend", &v))) {
            if (r < 0) return 2;
            if (!strcmp(v, "auto")) pref = TDM_DEVICE_AUTO;
            else if (!strcmp(v, "cpu")) pref = TDM_DEVICE_CPU;
            else if (!strcmp(v, "cuda")) pref = TDM_DEVICE_CUDA;
            else return cli_usage("lattice path: --backend \"%s\": expected auto, cpu or cuda", v);
        } else
            return cli_usage("lattice path: unknown option '%s'\n%s", argv[i], usage);
    }
    if (!dims || !size || !from || !to)
        return cli_usage("lattice path: --dims, --size, --from and --to are required\n%s", usage);
    tdm_ctx *ctx = cli_ctx();
    if (!ctx) return 1;
    tdm_lattice *lat;
    int rc = cli_lattice_build(ctx, dims, size, &lat);
    if (rc) return rc;
    int64_t s, t;
    if (cli_lattice_vertex(lat, "--from", from, &s) || cli_lattice_vertex(lat, "--to", to, &t)) {
        tdm_lattice_free(lat);
        return 2;
    }
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    tdm_lattice_path p;
    rc = tdm_lattice_sp(ctx, &g, s, t, pref, &p);
    if (rc) {
        tdm_lattice_free(lat);
        return cli_fail_status(rc, "lattice path");
    }
    if (json) {
        printf("{\"path\": [");
        for (int64_t i = 0; i <= p.hops; i++) printf("%s%lld", i ? ", " : "", (long long)p.vertex[i]);
        printf("], \"hops\": %lld, \"ms\": %.6f, \"backend\": \"%s\"}\n", (long long)p.hops, p.ms, p.backend);
    } else {
        printf("%lld hops:", (long long)p.hops);
        for (int64_t i = 0; i <= p.hops; i++) printf(" %lld", (long long)p.vertex[i]);
        printf("\n(%.3f ms on %s)\n", p.ms, p.backend);
    }
    tdm_lattice_path_release(&p);
    tdm_lattice_free(lat);
    return 0;
}
