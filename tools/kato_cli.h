/* kato_cli.h: what the `tandem kato` subcommands share: reading KATO patterns and STMs from JSON, and
 * writing predictions as KATO's JSON (spec/kato.md 3.7). */
#ifndef TANDEM_TOOLS_KATO_CLI_H
#define TANDEM_TOOLS_KATO_CLI_H

#include "cli.h"
#include "tandem/kato.h"

/* Events read from JSON: strings borrowed from the JSON value. */
typedef struct {
    tdm_kato_event *ev;
    size_t n;
    const char **syms;
    size_t *lens;
} kcli_events;
void kcli_events_free(kcli_events *e);
/* A list of events ([["a","b"],["c"]]). On error prints "<src>: line N: <field>..." and returns -1. */
int kcli_events_from_json(const json_t *arr, const char *src, unsigned long lineno, const char *field, kcli_events *out);

/* Emotives and metadata dicts read from JSON (lists of objects); metadata values become Python's str(). */
typedef struct {
    tdm_kato_emotives *emo;
    size_t nemo;
    tdm_kato_metadata *meta;
    size_t nmeta;
    void **owned;
    size_t nowned;
} kcli_dicts;
void kcli_dicts_free(kcli_dicts *d);
int kcli_dicts_from_json(const json_t *emotives, const json_t *metadata, const char *src, unsigned long lineno, kcli_dicts *out);

/* Learns every JSON line of path into kb: a line is a list of events, or {"events": [...], "emotives":
 * [{...}, ...], "metadata": [{...}, ...]}. names (may be NULL) receives one line per input line: the
 * name, or "" when the pattern had fewer than 2 symbols. Returns 0 or 1 (message printed). */
int kcli_learn_file(tdm_kato_kb *kb, const char *path, uint32_t persistence, FILE *names, int json, unsigned long *lines);

/* Reads KATO configuration keys from a JSON object into cfg (unknown keys and bad values are errors).
 * affinity strings stay owned by the JSON value. Returns 0 or -1 (message printed). */
int kcli_config_from_json(const json_t *obj, const char *src, unsigned long lineno, tdm_kato_config *cfg);

/* The prediction options `kato predict` and `kato session` share (--threshold, --max-predictions, --rank,
 * --affinity, --persistence, --char): argv[*i] is one of them (its value consumed, cfg or *persistence
 * set) -> 1; not one of them -> 0; a bad or missing value (message printed) -> -1. */
int kcli_config_opt(int argc, char **argv, int *i, tdm_kato_config *cfg, unsigned long long *persistence);

/* Writes {"predictions": [...], "future_potentials": [...] or null, "count": N} (no newline). */
void kcli_put_result(FILE *out, const tdm_kato_result *r);
/* A human-readable table of the predictions. */
void kcli_put_table(FILE *out, const tdm_kato_result *r);

int cmd_kato_learn(int argc, char **argv);
int cmd_kato_predict(int argc, char **argv);
int cmd_kato_session(int argc, char **argv);

#endif
