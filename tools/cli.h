/* cli.h: what the tandem command's subcommand files share: the command table, option scanning, JSON
 * line input (symbol lists, flat or as events) and output helpers. */
#ifndef TANDEM_TOOLS_CLI_H
#define TANDEM_TOOLS_CLI_H

#include <jansson.h>
#include <stdio.h>

#include "tandem/seq.h"

typedef struct {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the command name */
} cli_command;

/* Runs the command named argv[0] from table (n entries); prints a listing for --help or no name. */
int cli_dispatch(const char *prog, const cli_command *table, size_t n, int argc, char **argv);

/* Prints "tandem: msg" to stderr and returns 2 (usage error) or 1 (failure). */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Reports a library failure: "tandem: what: <strerror>: <detail>". Returns 1. */
int cli_fail_status(int status, const char *what);

/* Option scanning: `--name value` or `--name=value`. Returns 1 and sets *value if argv[*i] is the option
 * (advancing *i past a separate value), 0 if not, -1 if the value is missing (message printed). */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **value);
/* Parses numbers; on failure prints which option and value were wrong and returns -1. */
int cli_parse_u64(const char *opt, const char *text, unsigned long long lo, unsigned long long hi, unsigned long long *out);
int cli_parse_double(const char *opt, const char *text, double lo, double hi, double *out);
/* True if argv[i] is -h or --help. */
int cli_is_help(const char *arg);

/* Opens FILE for reading ("-" = stdin) or writing ("-" = stdout); prints the error and returns NULL. */
FILE *cli_open_in(const char *path);
FILE *cli_open_out(const char *path);
void cli_close(FILE *f);

/* Reads the next line (without the newline) into *buf; returns its length, or -1 at end of input. */
long cli_read_line(FILE *f, char **buf, size_t *cap);
/* Parses one JSON line; on error prints "tandem: <src>: line N: ..." and returns NULL. */
json_t *cli_parse_json_line(const char *src, unsigned long lineno, const char *text, size_t len);

/* A list of symbols borrowed from a JSON value. */
typedef struct {
    const char **syms;
    size_t *lens;
    size_t n, cap;
} cli_symbols;
void cli_symbols_free(cli_symbols *s);
/* Reads a flat array of strings, or an array of events (arrays of strings) flattened in order. The
 * strings stay owned by the JSON value. On error prints "<src>: line N: <field>..." and returns -1. */
int cli_symbols_from_json(const json_t *arr, const char *src, unsigned long lineno, const char *field, cli_symbols *out);

/* Writes a JSON string literal (escaped) for bytes s[0..len). */
void cli_put_json_string(FILE *out, const char *s, size_t len);
/* Writes a double with 17 significant digits, so that it reads back as the same double. */
void cli_put_double(FILE *out, double x);

/* Wall clock in seconds. */
double cli_now(void);

/* Progress line on stderr for long jobs: "label: done/total (pct%)" at most every 10 percent. */
typedef struct {
    const char *label;
    unsigned long long total, next;
    int enabled;
} cli_progress;
void cli_progress_start(cli_progress *p, const char *label, unsigned long long total, int quiet);
void cli_progress_step(cli_progress *p, unsigned long long done);

/* Subcommands. */
int cmd_seq(int argc, char **argv);
int cmd_seq_score(int argc, char **argv);
int cmd_seq_gen(int argc, char **argv);
int cmd_seq_build(int argc, char **argv);
int cmd_seq_query(int argc, char **argv);
int cmd_seq_info(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_kato(int argc, char **argv);
int cmd_arc(int argc, char **argv);
int cmd_arc_run(int argc, char **argv);
int cmd_arc_check(int argc, char **argv);
int cmd_arc_eval(int argc, char **argv);

/* The process's context, created on first use; failures are printed and give NULL. */
tdm_ctx *cli_ctx(void);

#endif
