/* cmd_calibrate.c: `tandem calibrate`, measuring the router's cost model on this machine and writing it
 * to TANDEM_COSTMODEL_PATH, so later runs route from measurements without paying for them (lazy
 * calibration on first use does the same per op family). --show prints the model in use without
 * measuring. */
#include "cli.h"

#include "tandem/backend.h"

#include <string.h>

static const char *usage =
    "usage: tandem calibrate [--ops OP[,OP...]] [--show] [--json]\n\n"
    "Measures each op family's cost on every backend that runs it (a size ladder x4 from 2^10 work\n"
    "units, 2 warm-ups and 10 timed runs per size, medians) and the host-device link when a GPU is\n"
    "present, fits T = t0 + W/theta (+ levels*lambda), and writes the model to TANDEM_COSTMODEL_PATH\n"
    "(default ~/.cache/tandem/costmodel.json; empty = keep it in this process only). The total time is\n"
    "bounded by TANDEM_CALIBRATION_BUDGET_MS (default 2000).\n\n"
    "  --ops LIST   op families to measure, by name (seq.lcs, seq.difflib, lattice.bfs, lattice.xor,\n"
    "               lattice.gemm, lattice.gemm_batched, lattice.ewise, lattice.reduce, arc.objects; or the\n"
    "               part after the dot: lcs, bfs, gemm, objects, ...); default all\n"
    "  --show       print the model in use (loaded from the file) without measuring\n"
    "  --json       print the model as JSON\n";

static int parse_ops(const char *list, unsigned *mask) {
    *mask = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int op = 0; op < TDM_OP_COUNT && found < 0; op++) {
            const char *name = tdm_op_name((tdm_op)op), *dot = strchr(name, '.');
            if (!strcmp(tok, name) || (dot && !strcmp(tok, dot + 1))) found = op;
        }
        if (found < 0) return cli_usage("calibrate: unknown op '%s'", tok);
        *mask |= 1u << found;
    }
    return 0;
}

static void print_json(const tdm_ctx *ctx, const tdm_costmodel *m) {
    json_t *classes = json_array();
    for (int op = 0; op < TDM_OP_COUNT; op++)
        for (int g = 0; g < 2; g++) {
            const tdm_cost_class *c = &m->cls[op][g];
            if (!c->samples) continue;
            json_t *b = json_array();
            for (uint32_t i = 0; i < c->nbuckets; i++)
                json_array_append_new(b, json_pack("[f,f]", c->bucket_work[i], c->bucket_us[i]));
            json_array_append_new(classes, json_pack("{s:s,s:s,s:b,s:I,s:f,s:f,s:f,s:f,s:f,s:o}", "op", tdm_op_name((tdm_op)op),
                                                     "backend", g ? "gpu" : "cpu", "trusted", c->trusted, "samples",
                                                     (json_int_t)c->samples, "t0_us", c->t0_us, "us_per_work",
                                                     c->us_per_work, "lambda_us", c->lambda_us, "residual", c->residual,
                                                     "interp_residual", c->interp_residual, "buckets", b));
        }
    json_t *root = json_pack("{s:s,s:s,s:s,s:{s:b,s:[f,f],s:[f,f]},s:o}", "path", tdm_costmodel_path(ctx), "key", m->key,
                             "date", m->date, "link", "trusted", m->link_trusted, "h2d", m->h2d.lat_us,
                             m->h2d.us_per_byte, "d2h", m->d2h.lat_us, m->d2h.us_per_byte, "classes", classes);
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(10));
    if (text) puts(text);
    free(text);
    json_decref(root);
}

static void print_text(const tdm_ctx *ctx, const tdm_costmodel *m) {
    const char *path = tdm_costmodel_path(ctx);
    printf("cost model %s%s\nkey: %s\n", path[0] ? path : "(not persisted)", m->date[0] ? "" : " (empty)", m->key);
    if (m->date[0]) printf("calibrated: %s\n", m->date);
    printf("\n%-12s %-4s %8s %12s %14s %9s %7s %7s  %s\n", "op", "on", "trusted", "t0 (us)", "us per unit", "residual",
           "interp", "runs", "measured work range");
    for (int op = 0; op < TDM_OP_COUNT; op++)
        for (int g = 0; g < 2; g++) {
            const tdm_cost_class *c = &m->cls[op][g];
            if (!c->samples) continue;
            printf("%-12s %-4s %8s %12.2f %14.6g %9.3f %7.3f %7u  ", tdm_op_name((tdm_op)op), g ? "gpu" : "cpu",
                   c->trusted ? "yes" : "no", c->t0_us, c->us_per_work, c->residual, c->interp_residual, c->samples);
            if (c->nbuckets) printf("%.0f .. %.0f\n", c->bucket_work[0], c->bucket_work[c->nbuckets - 1]);
            else putchar('\n');
        }
    if (m->link_trusted)
        printf("\nlink: h2d %.1f us + %.2f GB/s, d2h %.1f us + %.2f GB/s\n", m->h2d.lat_us, 1e-3 / m->h2d.us_per_byte,
               m->d2h.lat_us, 1e-3 / m->d2h.us_per_byte);
}

int cmd_calibrate(int argc, char **argv) {
    int json = 0, show = 0;
    unsigned mask = 0;
    const char *v;
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--show")) show = 1;
        else if ((r = cli_opt(argc, argv, &i, "--ops", &v))) {
            if (r < 0 || parse_ops(v, &mask)) return 2;
        } else
            return cli_usage("calibrate: unknown option '%s'\n%s", argv[i], usage);
    }
    tdm_ctx *ctx = cli_ctx();
    if (!ctx) return 1;
    int rc = TDM_OK;
    if (!show) {
        double t0 = cli_now();
        rc = tdm_calibrate(ctx, mask);
        if (rc && rc != TDM_E_IO) return cli_fail_status(rc, "calibrate");
        if (!json) fprintf(stderr, "tandem: calibrated in %.2f s\n", cli_now() - t0);
    }
    tdm_costmodel m;
    tdm_costmodel_get(ctx, &m);
    if (json) print_json(ctx, &m);
    else print_text(ctx, &m);
    if (rc == TDM_E_IO) return cli_fail_status(rc, "calibrate: the model is measured but was not written");
    return 0;
}
