/* tandem.c: entry point of the tandem command; dispatches to one file per subcommand. --profile FILE and
 * --profile-html FILE are taken out of the arguments wherever they appear, so that every command can be
 * profiled without each one knowing about it. */
#include "cli.h"
#include "tandem/prof.h"

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

/* Removes --profile[=]FILE and --profile-html[=]FILE from argv (up to a "--"), keeping the last of each.
 * Returns -1 (message printed) when a value is missing. */
static int take_profile_opts(int *argc, char **argv, const char **trace, const char **html) {
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *v = NULL;
        int r = 0;
        if (!strcmp(argv[i], "--")) {
            while (i < *argc) argv[out++] = argv[i++];
            break;
        }
        if ((r = cli_opt(*argc, argv, &i, "--profile-html", &v)) == 1) *html = v;
        else if (!r && (r = cli_opt(*argc, argv, &i, "--profile", &v)) == 1) *trace = v;
        if (r < 0) return -1;
        if (!r) argv[out++] = argv[i];
    }
    *argc = out;
    argv[out] = NULL;
    return 0;
}

/* Starts the profiler with TANDEM_PROFILE_CAPACITY / TANDEM_NVTX (validated as tdm_init would). */
static int profile_start(void) {
    tdm_config cfg;
    tdm_config_init(&cfg);
    int rc = tdm_config_resolve(&cfg);
    if (rc) return cli_fail_status(rc, "cannot start the profiler");
    tdm_prof_opts po = {.capacity = (uint32_t)cfg.profile_capacity, .nvtx = cfg.nvtx};
    rc = tdm_prof_start(&po);
    return rc ? cli_fail_status(rc, "cannot start the profiler") : 0;
}

int main(int argc, char **argv) {
    const char *trace = NULL, *html = NULL;
    if (take_profile_opts(&argc, argv, &trace, &html)) return 2;
    if ((trace || html) && profile_start()) return 1;
    if (argc >= 2 && !strcmp(argv[1], "--version")) return cmd_version(0, NULL);
    int rc = cli_dispatch("tandem", commands, sizeof commands / sizeof *commands, argc - 1, argv + 1);
    /* Reports are written while the context (and its device) still exists, so device spans resolve. */
    int prc = trace ? tdm_prof_export_trace(trace) : 0;
    if (prc) rc = rc ? rc : cli_fail_status(prc, "cannot write the profile");
    prc = html ? tdm_prof_export_html(html) : 0;
    if (prc) rc = rc ? rc : cli_fail_status(prc, "cannot write the profile report");
    tdm_destroy(ctx);
    if (fflush(stdout)) rc = rc ? rc : cli_fail("cannot write the output");
    return rc;
}
