/* cmd_arc_eval.c: `tandem arc eval`, runs every solver of a file on every grid of a JSON-lines file and
 * prints Python's repr of each result. The repr shows frozensets in iteration order at every nesting
 * level, which is what the oracle tests compare with CPython's own sets. */
#define _POSIX_C_SOURCE 200809L
#include "arc_cli.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: tandem arc eval PROGRAMS --grids FILE\n"
    "\n"
    "FILE ('-' = stdin) holds one grid per line as a JSON list of rows of integers. For each grid and each\n"
    "solver of PROGRAMS (in file order) prints one JSON line:\n"
    "  {\"grid\": N, \"task\": ID, \"value\": REPR}   REPR is Python's repr of O (frozensets in iteration order)\n"
    "  {\"grid\": N, \"task\": ID, \"error\": MSG}    when a call raised (the line and the reason)\n"
    "N counts grid lines from 0.\n";

static int read_grid_line(const json_t *j, tdm_arc_rt *rt, tdm_arc_val **out, const char *src, unsigned long lineno) {
    if (!json_is_array(j)) return cli_fail("%s: line %lu: expected a list of rows", src, lineno), -1;
    size_t h = json_array_size(j), w = h ? json_array_size(json_array_get(j, 0)) : 0;
    int *c = malloc((h * w > 0 ? h * w : 1) * sizeof *c);
    if (!c) return cli_fail("out of memory"), -1;
    for (size_t i = 0; i < h; i++) {
        const json_t *row = json_array_get(j, i);
        if (!json_is_array(row) || json_array_size(row) != w) {
            free(c);
            return cli_fail("%s: line %lu: row %zu is not a list as long as row 0", src, lineno, i), -1;
        }
        for (size_t k = 0; k < w; k++) {
            const json_t *v = json_array_get(row, k);
            if (!json_is_integer(v)) {
                free(c);
                return cli_fail("%s: line %lu: cell (%zu, %zu) is not an integer", src, lineno, i, k), -1;
            }
            c[i * w + k] = (int)json_integer_value(v);
        }
    }
    int rc = tdm_arc_grid_new(rt, (int)h, (int)w, c, out);
    free(c);
    if (rc) return cli_fail_status(rc, "arc eval"), -1;
    return 0;
}

int cmd_arc_eval(int argc, char **argv) {
    const char *programs = NULL, *grids = NULL, *v;
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if ((r = cli_opt(argc, argv, &i, "--grids", &v))) {
            if (r < 0) return 2;
            grids = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage("arc eval: unknown option '%s'\n%s", argv[i], usage);
        } else if (!programs) {
            programs = argv[i];
        } else {
            return cli_usage("arc eval: more than one PROGRAMS file ('%s')", argv[i]);
        }
    }
    if (!programs || !grids) return cli_usage("arc eval: PROGRAMS and --grids are required\n%s", usage);
    tdm_arc_programs *progs = arc_cli_load_programs(programs);
    if (!progs) return 1;
    FILE *in = cli_open_in(grids);
    tdm_arc_rt *rt = NULL;
    if (!in || tdm_arc_rt_new(&rt)) {
        tdm_arc_programs_free(progs);
        if (in) cli_close(in);
        return 1;
    }
    const char *src = strcmp(grids, "-") ? grids : "stdin";
    char *line = NULL, *text = NULL;
    size_t cap = 0, tlen = 0;
    long len;
    unsigned long lineno = 0;
    int rc = 0;
    while (!rc && (len = cli_read_line(in, &line, &cap)) >= 0) {
        lineno++;
        json_t *j = cli_parse_json_line(src, lineno, line, (size_t)len);
        if (!j) {
            rc = 1;
            break;
        }
        for (size_t k = 0; k < tdm_arc_programs_count(progs) && !rc; k++) {
            tdm_arc_rt_reset(rt);
            tdm_arc_val *g;
            if (read_grid_line(j, rt, &g, src, lineno)) {
                rc = 1;
                break;
            }
            const tdm_arc_val *out;
            const char *id = tdm_arc_programs_task(progs, k);
            printf("{\"grid\": %lu, \"task\": ", lineno - 1);
            cli_put_json_string(stdout, id, strlen(id));
            int st = tdm_arc_program_run(rt, progs, k, g, &out);
            if (st) {
                fputs(", \"error\": ", stdout);
                cli_put_json_string(stdout, tdm_last_error(), strlen(tdm_last_error()));
            } else {
                FILE *m = open_memstream(&text, &tlen);
                if (!m) {
                    rc = cli_fail("out of memory");
                    break;
                }
                tdm_arc_val_print(m, out);
                fclose(m);
                fputs(", \"value\": ", stdout);
                cli_put_json_string(stdout, text, tlen);
                free(text);
                text = NULL;
            }
            fputs("}\n", stdout);
        }
        json_decref(j);
    }
    free(line);
    cli_close(in);
    tdm_arc_rt_free(rt);
    tdm_arc_programs_free(progs);
    return rc;
}
