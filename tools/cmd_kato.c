/* cmd_kato.c: `tandem kato`, the KATO-compatible engine's command group (learn patterns, predict). */
#include "kato_cli.h"

static const cli_command kato_commands[] = {
    {"learn", "learn patterns from JSON lines and print their KATO names", cmd_kato_learn},
    {"predict", "learn patterns, then print KATO predictions for STMs", cmd_kato_predict},
    {"session", "run one session: observations with auto-learn, learns and predictions", cmd_kato_session},
};

int cmd_kato(int argc, char **argv) {
    return cli_dispatch("tandem kato", kato_commands, sizeof kato_commands / sizeof *kato_commands, argc - 1, argv + 1);
}
