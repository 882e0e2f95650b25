/* arc_cli.h: what the `tandem arc` subcommands share: reading a solver file into parsed programs and an
 * ARC task file (spec §6) into grids. */
#ifndef TANDEM_TOOLS_ARC_CLI_H
#define TANDEM_TOOLS_ARC_CLI_H

#include "tandem/arc.h"

/* Reads and parses a solver file; prints the parse error (file:line:col) and returns NULL on failure. */
tdm_arc_programs *arc_cli_load_programs(const char *path);

/* One task: its train pairs then its test pairs, grids as row-major ints. */
typedef struct {
    int h, w;
    int *c;
} arc_cli_grid;
typedef struct {
    arc_cli_grid in, out;
    int test;  /* 0 train, 1 test */
    int index; /* position within its split */
} arc_cli_pair;
typedef struct {
    arc_cli_pair *pairs;
    int n;
} arc_cli_task;

/* Reads a task file; prints what is wrong (file, split, pair) and returns -1 on failure. */
int arc_cli_load_task(const char *path, arc_cli_task *out);
void arc_cli_task_free(arc_cli_task *t);

#endif
