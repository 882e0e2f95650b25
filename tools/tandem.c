/* tandem.c: entry point of the tandem command; dispatches to one file per subcommand. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static tdm_ctx *ctx;

tdm_ctx *cli_ctx(void) {
    if (!ctx) {
        int rc = tdm_init(&ctx, NULL);
        if (rc) {
            cli_fail_status(rc, "cannot start the library");
            ctx = NULL;
        }
    }
    return ctx;
}

static int cmd_version(int argc, char **argv) {
    printf("tandem %s\n", tdm_version());
    return 0;
}

static const cli_command commands[] = {
    {"seq", "sequence engine: score pairs, generate data, build stores, query them", cmd_seq},
    {"kato", "KATO-compatible engine: learn patterns, predict from an STM", cmd_kato},
    {"arc", "ARC DSL: run solver programs on ARC tasks, check program files", cmd_arc},
    {"serve", "the KATO-compatible HTTP service on the durable store (what 'make run' runs)", cmd_serve},
    {"store", "the service's data directory: import patterns into a node, list nodes", cmd_store},
    {"demo", "build a generated store and show matching queries", cmd_demo},
    {"lattice", "lattice engine: structure, shortest paths, catalytic distance, XOR masks", cmd_lattice},
    {"demo", "build a generated store and show matching queries (what 'make run' runs)", cmd_demo},
    {"info", "version, configuration and backends of this machine", cmd_info},
    {"calibrate", "measure the router's cost model on this machine and save it", cmd_calibrate},
    {"version", "print the version", cmd_version},
};

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "--version")) return cmd_version(0, NULL);
    int rc = cli_dispatch("tandem", commands, sizeof commands / sizeof *commands, argc - 1, argv + 1);
    tdm_destroy(ctx);
    if (fflush(stdout)) rc = rc ? rc : cli_fail("cannot write the output");
    return rc;
}
