/* cmd_seq.c: `tandem seq`, the sequence engine's command group. */
#include "cli.h"

static const cli_command seq_commands[] = {
    {"score", "similarity of symbol-list pairs (lcs, difflib with blocks, char)", cmd_seq_score},
    {"gen", "write generated benchmark patterns as JSON lines", cmd_seq_gen},
    {"build", "build a store file from JSON-lines patterns", cmd_seq_build},
    {"query", "query a store with STMs (threshold or top-k)", cmd_seq_query},
    {"info", "describe a store file", cmd_seq_info},
};

int cmd_seq(int argc, char **argv) {
    return cli_dispatch("tandem seq", seq_commands, sizeof seq_commands / sizeof *seq_commands, argc - 1, argv + 1);
}
