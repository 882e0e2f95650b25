/* cmd_lattice_distance.c: `tandem lattice distance`, the hop distance found by the catalytic traversal: it
 * borrows a scratch buffer of arbitrary contents ((K+1)*8V bytes, filled here with random bytes), uses it
 * only through reversible XOR updates and gives it back bit for bit, which the command shows by hashing
 * the buffer before and after. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

static const char *usage =
    "usage: tandem lattice distance --dims D --size L --from A --to B [--budget K] [--seed N] [--json]\n\n"
    "Hop distance from A to B (ids or comma-separated coordinates) by the catalytic traversal over\n"
    "GF(2^64), within a level budget K (default: the diameter D*(L-1)). The scratch buffer holds\n"
    "(K+1)*8*L^D bytes of random contents; its hash before and after shows that it was restored. The\n"
    "answer is exact with probability >= 1 - K/2^64 over the seed (default: a random seed, printed).\n";

int cmd_lattice_distance(int argc, char **argv) {
    int dims = 0, json = 0, have_seed = 0;
    long long size = 0;
    unsigned long long budget = 0, seed_arg = 0;
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
        } else if ((r = cli_opt(argc, argv, &i, "--budget", &v))) {
            if (r < 0 || cli_parse_u64("--budget", v, 1, 1u << 20, &budget)) return 2;
        } else if ((r = cli_opt(argc, argv, &i, "--seed", &v))) {
            if (r < 0 || cli_parse_u64("--seed", v, 0, UINT64_MAX, &seed_arg)) return 2;
            have_seed = 1;
        } else
            return cli_usage("lattice distance: unknown option '%s'\n%s", argv[i], usage);
    }
    if (!dims || !size || !from || !to)
        return cli_usage("lattice distance: --dims, --size, --from and --to are required\n%s", usage);
    tdm_ctx *ctx = cli_ctx();
    if (!ctx) return 1;
    tdm_lattice *lat;
    int rc = cli_lattice_build(ctx, dims, size, &lat);
    if (rc) return rc;
    int64_t s, t, K = budget ? (int64_t)budget : (int64_t)dims * (size - 1), d = -1;
    tdm_lattice_aux *aux = NULL;
    if (cli_lattice_vertex(lat, "--from", from, &s) || cli_lattice_vertex(lat, "--to", to, &t)) {
        rc = 2;
        goto out;
    }
    const uint64_t V = (uint64_t)tdm_lattice_vertices(lat);
    if ((uint64_t)(K + 1) > SIZE_MAX / 8 / V) {
        rc = cli_fail("lattice distance: (K+1)*8V bytes of scratch overflow");
        goto out;
    }
    size_t bytes = (size_t)(K + 1) * 8 * (size_t)V;
    if ((rc = tdm_lattice_aux_new(ctx, bytes, &aux))) {
        rc = cli_fail_status(rc, "lattice distance: scratch buffer");
        goto out;
    }
    /* Arbitrary contents: random bytes, so that a restore by accident (all zeros) cannot pass for one. */
    uint8_t *mem = tdm_lattice_aux_data(aux);
    uint64_t fillseed = have_seed ? seed_arg ^ 0x5bd1e995u : (uint64_t)(cli_now() * 1e9);
    tdm_lattice_key_from_seed(fillseed, 0, bytes, mem);
    const uint64_t before = XXH3_64bits(mem, bytes);
    uint64_t seed = seed_arg;
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    double t0 = cli_now();
    rc = tdm_lattice_catalytic_distance(ctx, &g, aux, s, t, K, &seed, have_seed ? 0 : TDM_LATTICE_SEED_RANDOM, &d);
    double ms = (cli_now() - t0) * 1e3;
    const uint64_t after = XXH3_64bits(mem, bytes);
    if (rc && rc != TDM_E_NOPATH) {
        rc = cli_fail_status(rc, "lattice distance");
        goto out;
    }
    if (json)
        printf("{\"distance\": %lld, \"within_budget\": %s, \"budget\": %lld, \"seed\": %llu, \"aux_bytes\": %zu, "
               "\"aux_hash_before\": \"%016llx\", \"aux_hash_after\": \"%016llx\", \"aux_restored\": %s, \"ms\": %.3f}\n",
               (long long)d, rc ? "false" : "true", (long long)K, (unsigned long long)seed, bytes,
               (unsigned long long)before, (unsigned long long)after, before == after ? "true" : "false", ms);
    else {
        if (rc) printf("no path within %lld hops\n", (long long)K);
        else printf("distance %lld\n", (long long)d);
        printf("(budget %lld, seed %llu, %.3f ms; scratch %zu bytes, hash %016llx before, %016llx after: %s)\n",
               (long long)K, (unsigned long long)seed, ms, bytes, (unsigned long long)before, (unsigned long long)after,
               before == after ? "restored" : "NOT RESTORED");
    }
    rc = before == after ? 0 : cli_fail("lattice distance: scratch buffer not restored");
out:
    tdm_lattice_aux_free(aux);
    tdm_lattice_free(lat);
    return rc;
}
