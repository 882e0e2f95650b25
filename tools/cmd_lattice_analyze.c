/* cmd_lattice_analyze.c: `tandem lattice analyze`, the structure of the d-dimensional lattice of side L,
 * every metric computed from the built graph (tests compare them with the closed forms). */
#include "cli.h"

#include <string.h>

static const char *usage =
    "usage: tandem lattice analyze --dims D --size L [--json]\n\n"
    "Builds the open-boundary grid {0..L-1}^D (1 <= D <= 32, L >= 2, L^D <= 2^31-1) and prints its vertices,\n"
    "edges, average degree, exact diameter (BoundingDiameters), density, average clustering, connectivity,\n"
    "components, bipartiteness, triangles, transitivity and degree histogram, with build and analysis times.\n"
    "--json prints one object whose first keys are vertices, edges, avg_degree, diameter, density,\n"
    "clustering and connected.\n";

int cmd_lattice_analyze(int argc, char **argv) {
    int dims = 0, json = 0;
    long long size = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if (!strcmp(argv[i], "--json")) json = 1;
        else if ((r = cli_lattice_shape_opt(argc, argv, &i, &dims, &size))) {
            if (r < 0) return 2;
        } else
            return cli_usage("lattice analyze: unknown option '%s'\n%s", argv[i], usage);
    }
    if (!dims || !size) return cli_usage("lattice analyze: --dims and --size are required\n%s", usage);
    tdm_ctx *ctx = cli_ctx();
    if (!ctx) return 1;
    tdm_lattice *lat;
    int rc = cli_lattice_build(ctx, dims, size, &lat);
    if (rc) return rc;
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    tdm_lattice_analysis a;
    double t0 = cli_now();
    rc = tdm_lattice_analyze(ctx, &g, TDM_LATTICE_ANALYZE_ALL, &a);
    double ms = (cli_now() - t0) * 1e3;
    if (rc) {
        tdm_lattice_free(lat);
        return cli_fail_status(rc, "lattice analyze");
    }
    if (json) {
        printf("{\"vertices\": %lld, \"edges\": %lld, \"avg_degree\": ", (long long)a.vertices, (long long)a.edges);
        cli_put_double(stdout, a.degree_mean);
        printf(", \"diameter\": %lld, \"density\": ", (long long)a.diameter);
        cli_put_double(stdout, a.density);
        printf(", \"clustering\": ");
        cli_put_double(stdout, a.avg_clustering);
        printf(", \"connected\": %s, \"components\": %lld, \"bipartite\": %s, \"triangles\": %lld, \"transitivity\": ",
               a.connected ? "true" : "false", (long long)a.components, a.bipartite ? "true" : "false",
               (long long)a.triangles);
        cli_put_double(stdout, a.transitivity);
        printf(", \"degree_min\": %lld, \"degree_max\": %lld, \"degree_histogram\": {", (long long)a.degree_min,
               (long long)a.degree_max);
        int first = 1;
        for (int64_t k = 0; k <= a.degree_max; k++)
            if (a.degree_hist[k]) printf("%s\"%lld\": %lld", first ? "" : ", ", (long long)k, (long long)a.degree_hist[k]), first = 0;
        printf("}, \"diameter_exact\": %s, \"diameter_bfs\": %lld, \"csr_bytes\": %llu, \"build_ms\": %.3f, "
               "\"analyze_ms\": %.3f, \"backend\": \"%s\", \"backend_diameter\": \"%s\"}\n",
               a.diameter_exact ? "true" : "false", (long long)a.diameter_bfs, (unsigned long long)tdm_lattice_bytes(lat),
               tdm_lattice_build_ms(lat), ms, a.backend, a.backend_diameter ? a.backend_diameter : a.backend);
    } else {
        printf("%dD/%lld lattice: %lld vertices, %lld edges, CSR %.1f KB built in %.3f ms\n", dims, size,
               (long long)a.vertices, (long long)a.edges, tdm_lattice_bytes(lat) / 1e3, tdm_lattice_build_ms(lat));
        printf("  degree       min %lld, max %lld, mean %.6g\n", (long long)a.degree_min, (long long)a.degree_max, a.degree_mean);
        printf("  histogram   ");
        for (int64_t k = 0; k <= a.degree_max; k++)
            if (a.degree_hist[k]) printf(" %lld:%lld", (long long)k, (long long)a.degree_hist[k]);
        printf("\n  diameter     %lld%s (%lld BFS sweeps)\n", (long long)a.diameter, a.diameter_exact ? "" : " (bounds only)",
               (long long)a.diameter_bfs);
        printf("  density      %.6g\n  clustering   %.6g (transitivity %.6g, %lld triangles)\n", a.density, a.avg_clustering,
               a.transitivity, (long long)a.triangles);
        printf("  connected    %s (%lld components), bipartite %s\n", a.connected ? "yes" : "no", (long long)a.components,
               a.bipartite ? "yes" : "no");
        printf("  analysed in %.3f ms on %s (diameter sweeps on %s)\n", ms, a.backend,
               a.backend_diameter ? a.backend_diameter : a.backend);
    }
    tdm_lattice_analysis_release(&a);
    tdm_lattice_free(lat);
    return 0;
}
