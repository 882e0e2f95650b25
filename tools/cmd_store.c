/* cmd_store.c: `tandem store`, offline work on the service's data directory: `import` learns a JSON-lines
 * file of patterns into one node of the store (what a service would hold after learning them, without
 * going through HTTP: for large stores and benchmarks), `info` lists the stored nodes. */
#define _POSIX_C_SOURCE 200809L
#include "kato_cli.h"

#include <stdlib.h>
#include <string.h>

#ifdef TANDEM_HAVE_SERVER
#include "tandem/server.h"
#include "tandem/store.h"

static const char *usage =
    "usage: tandem store import --data DIR --node NODE_ID --patterns FILE [--persistence N] [--quiet]\n"
    "       tandem store info --data DIR\n"
    "\n"
    "import learns each line of FILE ('-' = stdin) into node NODE_ID of the store in DIR, as `tandem serve`\n"
    "would (same knowledge-base id, records and totals), appending to what the node holds. A line is a list\n"
    "of events ([[\"a\", \"b\"], [\"c\"]]), a flat list of symbols (one event per symbol, what `tandem seq gen`\n"
    "writes) or {\"events\": [...], \"emotives\": [{...}], \"metadata\": [{...}]}. The import flushes to disk at\n"
    "the end (not after each pattern); the service must not be running on DIR. info lists the nodes.\n";

static int import(const char *dir, const char *node_id, const char *path, uint32_t persistence, int quiet) {
    tdm_ctx *ctx = cli_ctx();
    if (!ctx) return 1;
    char *kb_id = tdm_server_kb_id(node_id);
    tdm_store *st = NULL;
    tdm_kato_kb *kb = NULL;
    int rc = kb_id ? tdm_store_open(dir, 0, &st) : TDM_E_NOMEM;
    if (!rc) rc = tdm_kato_kb_new(ctx, &kb);
    if (!rc) rc = tdm_store_load(st, kb_id, kb, NULL, NULL);
    if (!rc) rc = tdm_store_set_durable(st, 0);
    if (!rc) rc = tdm_store_batch_begin(st); /* one transaction per 10000 lines */
    if (rc) {
        cli_fail_status(rc, dir);
        goto out;
    }
    FILE *f = cli_open_in(path);
    if (!f) {
        rc = 1;
        goto out;
    }
    double t0 = cli_now();
    char *buf = NULL;
    size_t cap = 0;
    long len;
    unsigned long lineno = 0, learned_n = 0;
    while (!rc && (len = cli_read_line(f, &buf, &cap)) >= 0) {
        lineno++;
        if (!len) continue;
        json_t *j = cli_parse_json_line(path, lineno, buf, (size_t)len);
        if (!j) {
            rc = 1;
            break;
        }
        json_t *events = json_is_object(j) ? json_object_get(j, "events") : j, *wrapped = NULL;
        if (json_is_array(events) && json_array_size(events) && json_is_string(json_array_get(events, 0))) {
            wrapped = json_array(); /* a flat list: one event per symbol */
            size_t i;
            json_t *s;
            json_array_foreach(events, i, s) json_array_append_new(wrapped, json_pack("[O]", s));
            events = wrapped;
        }
        kcli_events ev;
        kcli_dicts d = {0};
        if (kcli_events_from_json(events, path, lineno, "events", &ev)) rc = 1;
        else if (json_is_object(j) && kcli_dicts_from_json(json_object_get(j, "emotives"), json_object_get(j, "metadata"), path, lineno, &d))
            rc = 1, kcli_events_free(&ev);
        if (!rc) {
            char name[TDM_KATO_NAME_LEN + 1];
            int learned = 0, st2 = tdm_kato_kb_learn(kb, ev.ev, ev.n, d.emo, d.nemo, d.meta, d.nmeta, persistence, name, &learned);
            if (!st2 && learned) st2 = tdm_store_save_learn(st, kb_id, node_id, kb, name), learned_n++;
            if (st2) rc = cli_fail("%s: line %lu: %s: %s", path, lineno, tdm_strerror(st2), tdm_last_error());
            kcli_events_free(&ev);
            kcli_dicts_free(&d);
        }
        json_decref(wrapped);
        json_decref(j);
        if (!rc && lineno % 10000 == 0) {
            int brc = tdm_store_batch_commit(st);
            if (!brc) brc = tdm_store_batch_begin(st);
            if (brc) rc = cli_fail_status(brc, "store batch");
        }
        if (!quiet && lineno % 100000 == 0) fprintf(stderr, "store import: %lu lines, %.1f s\n", lineno, cli_now() - t0);
    }
    free(buf);
    cli_close(f);
    int src = rc ? TDM_OK : tdm_store_batch_commit(st);
    if (!src) src = tdm_store_set_durable(st, 1); /* flushes */
    if (!rc && src) rc = cli_fail_status(src, "store sync");
    if (!rc) {
        tdm_kato_kb_totals t;
        tdm_kato_kb_totals_get(kb, &t);
        printf("imported %lu learns into node %s (%s): %llu patterns, %llu symbols, %.2f s\n", learned_n, node_id, kb_id,
               (unsigned long long)t.patterns, (unsigned long long)t.symbols, cli_now() - t0);
    }
out:
    tdm_kato_kb_free(kb);
    tdm_store_close(st);
    free(kb_id);
    return rc ? 1 : 0;
}

static int info(const char *dir) {
    tdm_store *st;
    int rc = tdm_store_open(dir, 0, &st);
    if (rc) return cli_fail_status(rc, dir);
    tdm_store_node *nodes;
    size_t n;
    rc = tdm_store_nodes(st, &nodes, &n);
    if (rc) {
        tdm_store_close(st);
        return cli_fail_status(rc, dir);
    }
    printf("%zu node%s in %s\n", n, n == 1 ? "" : "s", dir);
    for (size_t i = 0; i < n; i++) printf("  %s (node_id %s): %llu patterns\n", nodes[i].kb_id, nodes[i].node_id, (unsigned long long)nodes[i].patterns);
    tdm_store_nodes_free(nodes, n);
    tdm_store_close(st);
    return 0;
}

int cmd_store(int argc, char **argv) {
    if (argc < 2 || cli_is_help(argv[1])) return fputs(usage, argc < 2 ? stderr : stdout), argc < 2 ? 2 : 0;
    const char *sub = argv[1], *dir = NULL, *node = NULL, *patterns = NULL, *v;
    unsigned long long persistence = 5;
    int quiet = 0;
    for (int i = 2; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if ((r = cli_opt(argc, argv, &i, "--data", &v))) {
            if (r < 0) return 2;
            dir = v;
        } else if ((r = cli_opt(argc, argv, &i, "--node", &v))) {
            if (r < 0) return 2;
            node = v;
        } else if ((r = cli_opt(argc, argv, &i, "--patterns", &v))) {
            if (r < 0) return 2;
            patterns = v;
        } else if ((r = cli_opt(argc, argv, &i, "--persistence", &v))) {
            if (r < 0 || cli_parse_u64("--persistence", v, 1, 100, &persistence)) return 2;
        } else if (!strcmp(argv[i], "--quiet")) quiet = 1;
        else return cli_usage("store: unknown argument %s (see --help)", argv[i]);
    }
    if (!dir) return cli_usage("store %s: --data DIR is required", sub);
    if (!strcmp(sub, "info")) return info(dir);
    if (strcmp(sub, "import")) return cli_usage("store: unknown subcommand %s (import, info)", sub);
    if (!node || !*node || !patterns) return cli_usage("store import: --node NODE_ID and --patterns FILE are required");
    return import(dir, node, patterns, (uint32_t)persistence, quiet);
}
#else
int cmd_store(int argc, char **argv) {
    return cli_fail("store: this build has no service store (install liblmdb-dev and libmicrohttpd-dev, then configure again)");
}
#endif
