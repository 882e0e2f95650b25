/* cmd_arc.c: `tandem arc`, the ARC DSL's command group. */
#include "cli.h"

static const cli_command arc_commands[] = {
    {"run", "run solver programs on ARC tasks and say which are solved", cmd_arc_run},
    {"eval", "print Python's repr of each solver's result on grids (JSON lines)", cmd_arc_eval},
    {"check", "parse solver programs and list them (no task data needed)", cmd_arc_check},
};

int cmd_arc(int argc, char **argv) {
    return cli_dispatch("tandem arc", arc_commands, sizeof arc_commands / sizeof *arc_commands, argc - 1, argv + 1);
}
