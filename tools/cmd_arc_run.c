/* cmd_arc_run.c: `tandem arc run`, the acceptance runner of the ARC DSL: every solver of a file on every
 * train and test pair of its task, with per task "solved" or the first reason it is not (the first
 * differing cell, a shape difference, or the line whose call raised), in text or as JSON lines. */
#define _POSIX_C_SOURCE 200809L
#include "arc_cli.h"
#include "cli.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: tandem arc run PROGRAMS (--data DIR | --task FILE) [--json] [--only TASK] [--quiet]\n"
    "\n"
    "Runs each solver `def solve_<task>(I):` of the file PROGRAMS on every train and test pair of its task\n"
    "and prints per task whether all outputs equal the expected ones, or why not.\n"
    "  --data DIR   task files <task>.json in DIR; solvers whose task is missing are skipped and counted,\n"
    "               and so are tasks without a solver\n"
    "  --task FILE  one task file; its solver is the one named after the file (or the only one in PROGRAMS)\n"
    "  --only TASK  run only this task's solver\n"
    "  --json       one line per task: {\"task\": ID, \"solved\": BOOL, \"pairs\": [{\"split\": \"train\"|\"test\",\n"
    "               \"index\": N, \"ok\": BOOL, \"output\": GRID-or-null, \"error\": STRING-or-null}, ...]}\n"
    "  --quiet      text mode: print only the summary and the tasks that are not solved\n"
    "The summary goes to stderr in --json mode. Exit status 0 when every task run was solved, 3 if not.\n";

static void put_grid(FILE *out, const tdm_arc_val *v) {
    int h, w;
    if (tdm_arc_grid_read(v, &h, &w, NULL, 0)) {
        fputs("null", out);
        return;
    }
    int *c = malloc((size_t)(h * w > 0 ? h * w : 1) * sizeof *c);
    if (!c || tdm_arc_grid_read(v, &h, &w, c, (size_t)h * w)) {
        free(c);
        fputs("null", out);
        return;
    }
    fputc('[', out);
    for (int i = 0; i < h; i++) {
        fputs(i ? ", [" : "[", out);
        for (int j = 0; j < w; j++) fprintf(out, j ? ", %d" : "%d", c[(size_t)i * w + j]);
        fputc(']', out);
    }
    fputc(']', out);
    free(c);
}

/* Why got differs from the expected grid (got may be any value). */
static void why(char *buf, size_t cap, const tdm_arc_val *got, const arc_cli_grid *want) {
    int h, w;
    if (tdm_arc_grid_read(got, &h, &w, NULL, 0)) {
        snprintf(buf, cap, "the result is not a grid");
        return;
    }
    if (h != want->h || w != want->w) {
        snprintf(buf, cap, "shape %dx%d, expected %dx%d", h, w, want->h, want->w);
        return;
    }
    int *c = malloc((size_t)(h * w > 0 ? h * w : 1) * sizeof *c);
    if (!c || tdm_arc_grid_read(got, &h, &w, c, (size_t)h * w)) {
        snprintf(buf, cap, "differs");
        free(c);
        return;
    }
    for (int k = 0; k < h * w; k++)
        if (c[k] != want->c[k]) {
            snprintf(buf, cap, "first difference at (%d, %d): %d, expected %d", k / w, k % w, c[k], want->c[k]);
            break;
        }
    free(c);
}

typedef struct {
    int json, quiet;
    size_t tasks, solved, pairs, pairs_ok;
} run_state;

/* Runs program k on every pair of the task; prints its line(s). Returns 1 solved, 0 not, -1 failure. */
static int run_task(run_state *st, tdm_arc_rt *rt, const tdm_arc_programs *progs, size_t k, const char *task_path) {
    arc_cli_task task;
    if (arc_cli_load_task(task_path, &task)) return -1;
    const char *id = tdm_arc_programs_task(progs, k);
    int solved = 1;
    char first_reason[400] = "";
    if (st->json) {
        fputs("{\"task\": ", stdout);
        cli_put_json_string(stdout, id, strlen(id));
        fputs(", \"pairs\": [", stdout);
    }
    for (int p = 0; p < task.n; p++) {
        const arc_cli_pair *pr = &task.pairs[p];
        tdm_arc_rt_reset(rt);
        tdm_arc_val *in, *want;
        const tdm_arc_val *got = NULL;
        int rc = tdm_arc_grid_new(rt, pr->in.h, pr->in.w, pr->in.c, &in);
        if (!rc) rc = tdm_arc_grid_new(rt, pr->out.h, pr->out.w, pr->out.c, &want);
        if (!rc) rc = tdm_arc_program_run(rt, progs, k, in, &got);
        int ok = !rc && tdm_arc_val_equal(got, want);
        char reason[400] = "";
        if (rc) snprintf(reason, sizeof reason, "%s", tdm_last_error());
        else if (!ok) why(reason, sizeof reason, got, &pr->out);
        st->pairs++, st->pairs_ok += ok;
        if (!ok && solved) {
            solved = 0;
            snprintf(first_reason, sizeof first_reason, "%s %d: %s%s", pr->test ? "test" : "train", pr->index,
                     rc ? "error: " : "", reason);
        }
        if (st->json) {
            printf("%s{\"split\": \"%s\", \"index\": %d, \"ok\": %s, \"output\": ", p ? ", " : "", pr->test ? "test" : "train",
                   pr->index, ok ? "true" : "false");
            if (got) put_grid(stdout, got);
            else fputs("null", stdout);
            fputs(", \"error\": ", stdout);
            if (rc) cli_put_json_string(stdout, reason, strlen(reason));
            else fputs("null", stdout);
            fputc('}', stdout);
        }
    }
    if (st->json) printf("], \"solved\": %s}\n", solved ? "true" : "false");
    else if (solved && !st->quiet) printf("%s: solved (%d pairs)\n", id, task.n);
    else if (!solved) printf("%s: not solved: %s\n", id, first_reason);
    st->tasks++, st->solved += solved;
    arc_cli_task_free(&task);
    return solved;
}

static int has_json_suffix(const char *name) {
    size_t n = strlen(name);
    return n > 5 && !strcmp(name + n - 5, ".json");
}

int cmd_arc_run(int argc, char **argv) {
    const char *programs = NULL, *data = NULL, *taskfile = NULL, *only = NULL, *v;
    run_state st = {0};
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if ((r = cli_opt(argc, argv, &i, "--data", &v))) {
            if (r < 0) return 2;
            data = v;
        } else if ((r = cli_opt(argc, argv, &i, "--task", &v))) {
            if (r < 0) return 2;
            taskfile = v;
        } else if ((r = cli_opt(argc, argv, &i, "--only", &v))) {
            if (r < 0) return 2;
            only = v;
        } else if (!strcmp(argv[i], "--json")) {
            st.json = 1;
        } else if (!strcmp(argv[i], "--quiet")) {
            st.quiet = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage("arc run: unknown option '%s'\n%s", argv[i], usage);
        } else if (!programs) {
            programs = argv[i];
        } else {
            return cli_usage("arc run: more than one PROGRAMS file ('%s')\n%s", argv[i], usage);
        }
    }
    if (!programs || (!data == !taskfile)) return cli_usage("arc run: PROGRAMS and one of --data or --task are required\n%s", usage);
    tdm_arc_programs *progs = arc_cli_load_programs(programs);
    if (!progs) return 1;
    tdm_arc_rt *rt = NULL;
    if (tdm_arc_rt_new(&rt)) {
        tdm_arc_programs_free(progs);
        return cli_fail_status(TDM_E_NOMEM, "arc run");
    }
    int rc = 0;
    size_t skipped = 0, unsolved_dir = 0;
    if (taskfile) {
        const char *base = strrchr(taskfile, '/');
        base = base ? base + 1 : taskfile;
        size_t n = strlen(base);
        if (n > 5 && !strcmp(base + n - 5, ".json")) n -= 5;
        char id[256];
        snprintf(id, sizeof id, "%.*s", (int)n, base);
        size_t k;
        if (only) snprintf(id, sizeof id, "%s", only);
        if (tdm_arc_programs_find(progs, id, &k)) {
            if (tdm_arc_programs_count(progs) == 1 && !only) k = 0;
            else rc = cli_fail("%s: no solver solve_%s", programs, id);
        }
        if (!rc && run_task(&st, rt, progs, k, taskfile) < 0) rc = 1;
    } else {
        for (size_t k = 0; k < tdm_arc_programs_count(progs) && !rc; k++) {
            const char *id = tdm_arc_programs_task(progs, k);
            if (only && strcmp(only, id)) continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s.json", data, id);
            FILE *f = fopen(path, "r");
            if (!f) {
                skipped++;
                continue;
            }
            fclose(f);
            if (run_task(&st, rt, progs, k, path) < 0) rc = 1;
        }
        DIR *d = opendir(data);
        if (!d) {
            rc = cli_fail("%s: cannot open the directory", data);
        } else {
            struct dirent *e;
            while ((e = readdir(d))) {
                if (!has_json_suffix(e->d_name)) continue;
                char id[256];
                snprintf(id, sizeof id, "%.*s", (int)(strlen(e->d_name) - 5), e->d_name);
                if (tdm_arc_programs_find(progs, id, NULL)) unsolved_dir++;
            }
            closedir(d);
        }
        tdm_clear_error();
    }
    FILE *sum = st.json ? stderr : stdout;
    if (!rc) {
        fprintf(sum, "solved %zu of %zu tasks (%zu of %zu pairs correct)", st.solved, st.tasks, st.pairs_ok, st.pairs);
        if (data) fprintf(sum, "; %zu solvers without a task in %s; %zu tasks there without a solver", skipped, data, unsolved_dir);
        fputc('\n', sum);
        if (st.solved != st.tasks) rc = 3;
    }
    tdm_arc_rt_free(rt);
    tdm_arc_programs_free(progs);
    return rc;
}
