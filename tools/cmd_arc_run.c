/* cmd_arc_run.c: `tandem arc run`, the acceptance runner of the ARC DSL: every solver of a file on every
 * train and test pair of its task, with per task "solved" or the first reason it is not (the first
 * differing cell, a shape difference, or the line whose call raised), in text or as JSON lines. */
#define _POSIX_C_SOURCE 200809L
#include "arc_cli.h"
#include "cli.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *usage =
    "usage: tandem arc run PROGRAMS (--data DIR | --task FILE) [--json] [--only TASK] [--quiet]\n"
    "                      [--threads N] [--repeat R] [--stats] [--fresh-inputs] [--device cpu|cuda|auto]\n"
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
    "  --threads N  CPU threads for the solver calls, all tasks in one batch (default: every core)\n"
    "  --repeat R   run every task R times and report solver calls per second; the input grids are made\n"
    "               into values once, before the first run and outside the calls' time (reported apart)\n"
    "  --fresh-inputs  make each call's input grid from its cells in the call, as a batch of distinct grids\n"
    "               does (the calls' time then includes it)\n"
    "  --stats      per-primitive calls and time (adds a clock read per primitive call); with --device, the\n"
    "               calls and time of each primitive's batched form (and where it ran) and of the interpreter\n"
    "  --device D   run with the batched executor: lines of a solver over all its grids at once, batched\n"
    "               primitives (on grids, on objects from objects/partition/fgpartition, on palettes; see\n"
    "               docs/arc.md) on the CPU, on the GPU (cuda), or on the GPU for 4,096 calls or more (auto);\n"
    "               same results, but on the CPU slower than the default interpreter (bench/RESULTS.md)\n"
    "The summary goes to stderr in --json mode. Exit status 0 when every task run was solved, 3 if not.\n";

typedef struct {
    int json, quiet, threads, repeat, stats, device; /* device: -1 the interpreter's runner, else a tdm_device_pref */
    int fresh;            /* --fresh-inputs */
    size_t inputs;        /* input grids made once (tdm_arc_inputs) */
    double input_seconds; /* making them */
    size_t tasks, solved, pairs, pairs_ok;
    double seconds;   /* in the batch runs */
    uint64_t calls;   /* solver calls timed */
    int used_threads;
    tdm_arc_prim_stats prim[160];
    tdm_arc_exec_stats exec[160];
    const char *backend;
} run_state;

/* Why a result differs from the expected grid. */
static void why_result(char *buf, size_t cap, const tdm_arc_result *r, const arc_cli_grid *want) {
    if (!r->cells) {
        snprintf(buf, cap, "the result is not a grid: %.200s", r->repr ? r->repr : "?");
        return;
    }
    if (r->h != want->h || r->w != want->w) {
        snprintf(buf, cap, "shape %dx%d, expected %dx%d", r->h, r->w, want->h, want->w);
        return;
    }
    for (int k = 0; k < r->h * r->w; k++)
        if (r->cells[k] != want->c[k]) {
            snprintf(buf, cap, "first difference at (%d, %d): %d, expected %d", k / r->w, k % r->w, r->cells[k], want->c[k]);
            return;
        }
    snprintf(buf, cap, "differs");
}

static void put_result_grid(FILE *out, const tdm_arc_result *r) {
    if (!r->cells) {
        fputs("null", out);
        return;
    }
    fputc('[', out);
    for (int i = 0; i < r->h; i++) {
        fputs(i ? ", [" : "[", out);
        for (int j = 0; j < r->w; j++) fprintf(out, j ? ", %d" : "%d", r->cells[(size_t)i * r->w + j]);
        fputc(']', out);
    }
    fputc(']', out);
}

/* A task to run: its solver and its pairs; first is the index of its first call in the batch. */
typedef struct {
    size_t prog, first;
    arc_cli_task task;
} job;

/* Prints the task's line(s) from the batch results. Returns 1 solved, 0 not. */
static int report_task(run_state *st, const tdm_arc_programs *progs, const job *jb, const tdm_arc_batch *b) {
    const char *id = tdm_arc_programs_task(progs, jb->prog);
    int solved = 1;
    char first_reason[400] = "";
    if (st->json) {
        fputs("{\"task\": ", stdout);
        cli_put_json_string(stdout, id, strlen(id));
        fputs(", \"pairs\": [", stdout);
    }
    for (int p = 0; p < jb->task.n; p++) {
        const arc_cli_pair *pr = &jb->task.pairs[p];
        const tdm_arc_result *r = tdm_arc_batch_result(b, jb->first + (size_t)p);
        int ok = !r->status && r->cells && r->h == pr->out.h && r->w == pr->out.w &&
                 !memcmp(r->cells, pr->out.c, (size_t)r->h * r->w * sizeof *r->cells);
        char reason[400] = "";
        if (r->status) snprintf(reason, sizeof reason, "%s", r->error ? r->error : tdm_strerror(r->status));
        else if (!ok) why_result(reason, sizeof reason, r, &pr->out);
        st->pairs++, st->pairs_ok += ok;
        if (!ok && solved) {
            solved = 0;
            snprintf(first_reason, sizeof first_reason, "%s %d: %s%.360s", pr->test ? "test" : "train", pr->index,
                     r->status ? "error: " : "", reason);
        }
        if (st->json) {
            printf("%s{\"split\": \"%s\", \"index\": %d, \"ok\": %s, \"output\": ", p ? ", " : "",
                   pr->test ? "test" : "train", pr->index, ok ? "true" : "false");
            put_result_grid(stdout, r);
            fputs(", \"error\": ", stdout);
            if (r->status) cli_put_json_string(stdout, reason, strlen(reason));
            else fputs("null", stdout);
            fputc('}', stdout);
        }
    }
    if (st->json) printf("], \"solved\": %s}\n", solved ? "true" : "false");
    else if (solved && !st->quiet) printf("%s: solved (%d pairs)\n", id, jb->task.n);
    else if (!solved) printf("%s: not solved: %s\n", id, first_reason);
    st->tasks++, st->solved += solved;
    return solved;
}

/* Runs every job's solver on its pairs as one batch (repeated for timing) and reports each task. */
static int run_jobs(run_state *st, const tdm_arc_programs *progs, job *jobs, size_t njobs) {
    size_t ncalls = 0;
    for (size_t j = 0; j < njobs; j++) jobs[j].first = ncalls, ncalls += (size_t)jobs[j].task.n;
    tdm_arc_call_ref *calls = malloc((ncalls ? ncalls : 1) * sizeof *calls);
    if (!calls) return cli_fail("out of memory");
    for (size_t j = 0; j < njobs; j++)
        for (int p = 0; p < jobs[j].task.n; p++) {
            tdm_arc_call_ref *c = &calls[jobs[j].first + (size_t)p];
            const arc_cli_grid *g = &jobs[j].task.pairs[p].in;
            c->prog = jobs[j].prog, c->grid.h = g->h, c->grid.w = g->w, c->grid.cells = g->c;
        }
    tdm_arc_inputs *in = NULL;
    if (st->device < 0 && !st->fresh) { /* the interpreter's runner: each input grid made once for all passes */
        tdm_arc_grid_ref *grids = malloc((ncalls ? ncalls : 1) * sizeof *grids);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (size_t c = 0; grids && c < ncalls; c++) grids[c] = calls[c].grid;
        int rc = grids ? tdm_arc_inputs_new(grids, ncalls, &in) : TDM_E_NOMEM;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        free(grids);
        if (rc) {
            free(calls);
            return cli_fail_status(rc, "arc run: making the input grids");
        }
        st->inputs = tdm_arc_inputs_count(in);
        st->input_seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    }
    tdm_arc_batch *b = NULL;
    for (int rep = 0; rep < st->repeat; rep++) {
        tdm_arc_batch_free(b);
        b = NULL;
        int rc;
        if (st->device < 0) {
            rc = tdm_arc_batch_run_on(progs, in, calls, ncalls, st->threads, st->stats, &b);
        } else {
            tdm_ctx *ctx = cli_ctx();
            rc = ctx ? tdm_arc_batch_exec(ctx, progs, calls, ncalls, (tdm_device_pref)st->device, st->threads, &b) : TDM_E_INVAL;
        }
        if (rc) {
            tdm_arc_inputs_free(in);
            free(calls);
            return cli_fail_status(rc, "arc run");
        }
        st->seconds += tdm_arc_batch_seconds(b);
        st->calls += ncalls;
        st->used_threads = tdm_arc_batch_threads(b);
        for (int pid = 0; st->stats && pid < 160; pid++) {
            tdm_arc_prim_stats ps = tdm_arc_batch_prim_stats(b, pid);
            st->prim[pid].calls += ps.calls, st->prim[pid].ns += ps.ns;
            tdm_arc_exec_stats es = tdm_arc_batch_exec_stats(b, pid);
            st->exec[pid].batched += es.batched, st->exec[pid].launches += es.launches;
            st->exec[pid].batched_ns += es.batched_ns, st->exec[pid].fallback += es.fallback;
            st->exec[pid].fallback_ns += es.fallback_ns;
        }
        st->backend = tdm_arc_batch_backend(b);
    }
    for (size_t j = 0; j < njobs; j++) report_task(st, progs, &jobs[j], b);
    tdm_arc_batch_free(b);
    tdm_arc_inputs_free(in);
    free(calls);
    return 0;
}

static int has_json_suffix(const char *name) {
    size_t n = strlen(name);
    return n > 5 && !strcmp(name + n - 5, ".json");
}

int cmd_arc_run(int argc, char **argv) {
    const char *programs = NULL, *data = NULL, *taskfile = NULL, *only = NULL, *v;
    run_state st = {0};
    st.repeat = 1, st.device = -1;
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
        } else if ((r = cli_opt(argc, argv, &i, "--threads", &v))) {
            unsigned long long x;
            if (r < 0 || cli_parse_u64("--threads", v, 0, 1024, &x)) return 2;
            st.threads = (int)x;
        } else if ((r = cli_opt(argc, argv, &i, "--repeat", &v))) {
            unsigned long long x;
            if (r < 0 || cli_parse_u64("--repeat", v, 1, 1000000, &x)) return 2;
            st.repeat = (int)x;
        } else if ((r = cli_opt(argc, argv, &i, "--device", &v))) {
            if (r < 0) return 2;
            if (!strcmp(v, "cpu")) st.device = TDM_DEVICE_CPU;
            else if (!strcmp(v, "cuda")) st.device = TDM_DEVICE_CUDA;
            else if (!strcmp(v, "auto")) st.device = TDM_DEVICE_AUTO;
            else return cli_usage("arc run: --device takes cpu, cuda or auto, not '%s'\n%s", v, usage);
        } else if (!strcmp(argv[i], "--stats")) {
            st.stats = 1;
        } else if (!strcmp(argv[i], "--fresh-inputs")) {
            st.fresh = 1;
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
    int rc = 0;
    size_t skipped = 0, unsolved_dir = 0;
    job *jobs = calloc(tdm_arc_programs_count(progs) + 1, sizeof *jobs);
    size_t njobs = 0;
    if (!jobs) rc = cli_fail("out of memory");
    if (!rc && taskfile) {
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
        if (!rc) {
            jobs[0].prog = k;
            if (arc_cli_load_task(taskfile, &jobs[0].task)) rc = 1;
            else njobs = 1;
        }
    } else if (!rc) {
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
            jobs[njobs].prog = k;
            if (arc_cli_load_task(path, &jobs[njobs].task)) rc = 1;
            else njobs++;
        }
        DIR *d = rc ? NULL : opendir(data);
        if (!rc && !d) {
            rc = cli_fail("%s: cannot open the directory", data);
        } else if (d) {
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
    if (!rc) rc = run_jobs(&st, progs, jobs, njobs);
    for (size_t j = 0; jobs && j < njobs; j++) arc_cli_task_free(&jobs[j].task);
    free(jobs);
    FILE *sum = st.json ? stderr : stdout;
    if (!rc) {
        fprintf(sum, "solved %zu of %zu tasks (%zu of %zu pairs correct)", st.solved, st.tasks, st.pairs_ok, st.pairs);
        if (data) fprintf(sum, "; %zu solvers without a task in %s; %zu tasks there without a solver", skipped, data, unsolved_dir);
        fputc('\n', sum);
        if (st.repeat > 1 || st.stats)
            fprintf(sum, "%llu solver calls in %.3f s: %.0f calls per second, %.1f us per call (%d threads)\n",
                    (unsigned long long)st.calls, st.seconds, st.seconds > 0 ? (double)st.calls / st.seconds : 0.0,
                    st.calls ? st.seconds / (double)st.calls * 1e6 : 0.0, st.used_threads);
        if ((st.repeat > 1 || st.stats) && st.inputs)
            fprintf(sum, "%zu input grids made once in %.3f ms (%.2f us a grid), outside the calls' time (--fresh-inputs: inside)\n",
                    st.inputs, st.input_seconds * 1e3, st.input_seconds / (double)st.inputs * 1e6);
        if (st.stats && st.device >= 0) {
            fprintf(sum, "batched forms on %s\n%-14s %10s %9s %10s %10s %10s\n", st.backend ? st.backend : "?", "primitive",
                    "batched", "launches", "ms", "interp", "ms");
            for (int pid = 0; pid < 160; pid++) {
                const tdm_arc_exec_stats *e = &st.exec[pid];
                if (e->batched || e->fallback)
                    fprintf(sum, "%-14s %10llu %9llu %10.3f %10llu %10.3f\n", tdm_arc_prim_name(pid),
                            (unsigned long long)e->batched, (unsigned long long)e->launches, (double)e->batched_ns * 1e-6,
                            (unsigned long long)e->fallback, (double)e->fallback_ns * 1e-6);
            }
        } else if (st.stats) {
            fprintf(sum, "%-14s %12s %12s %10s\n", "primitive", "calls", "ms", "us/call");
            for (int pid = 0; pid < 160; pid++)
                if (st.prim[pid].calls)
                    fprintf(sum, "%-14s %12llu %12.3f %10.3f\n", tdm_arc_prim_name(pid), (unsigned long long)st.prim[pid].calls,
                            (double)st.prim[pid].ns * 1e-6, (double)st.prim[pid].ns * 1e-3 / (double)st.prim[pid].calls);
        }
        if (st.solved != st.tasks) rc = 3;
    }
    tdm_arc_programs_free(progs);
    return rc;
}
