/* cmd_arc_check.c: `tandem arc check`, parses a solver file and lists its solvers, so that a program's
 * syntax and names can be checked (with file:line:col errors) without any task data. */
#include "arc_cli.h"
#include "cli.h"

#include <string.h>

int cmd_arc_check(int argc, char **argv) {
    const char *programs = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i]))
            return fputs("usage: tandem arc check PROGRAMS [--json]\n\nParses the solver file PROGRAMS (spec §5) and "
                         "prints the task id of each solver, or the first\nparse error as FILE:LINE:COL: what 'token'. "
                         "--json prints {\"solvers\": [ids]}.\n", stdout), 0;
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (argv[i][0] == '-' && argv[i][1]) return cli_usage("arc check: unknown option '%s'", argv[i]);
        else if (!programs) programs = argv[i];
        else return cli_usage("arc check: more than one PROGRAMS file ('%s')", argv[i]);
    }
    if (!programs) return cli_usage("arc check: PROGRAMS is required (try --help)");
    tdm_arc_programs *p = arc_cli_load_programs(programs);
    if (!p) return 1;
    size_t n = tdm_arc_programs_count(p);
    if (json) fputs("{\"solvers\": [", stdout);
    for (size_t k = 0; k < n; k++) {
        const char *id = tdm_arc_programs_task(p, k);
        if (json) {
            if (k) fputs(", ", stdout);
            cli_put_json_string(stdout, id, strlen(id));
        } else {
            printf("solve_%s\n", id);
        }
    }
    if (json) fputs("]}\n", stdout);
    else printf("%zu solvers\n", n);
    tdm_arc_programs_free(p);
    return 0;
}
