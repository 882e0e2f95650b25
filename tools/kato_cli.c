/* kato_cli.c: shared parts of `tandem kato`: JSON patterns, STMs, emotives and metadata in; predictions
 * out in KATO's JSON field order and names (spec/kato.md 3.7), with 17 significant digits per double so
 * that the oracle test can compare bits. */
#define _POSIX_C_SOURCE 200809L /* strdup, strndup */
#include "kato_cli.h"

#include "kato/kato_json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void kcli_events_free(kcli_events *e) {
    free(e->ev), free(e->syms), free(e->lens);
    memset(e, 0, sizeof *e);
}

int kcli_events_from_json(const json_t *arr, const char *src, unsigned long lineno, const char *field, kcli_events *out) {
    memset(out, 0, sizeof *out);
    if (!json_is_array(arr)) return cli_fail("%s: line %lu: %s: expected a list of events (lists of strings)", src, lineno, field), -1;
    size_t ne = json_array_size(arr), ns = 0;
    for (size_t e = 0; e < ne; e++) {
        const json_t *ev = json_array_get(arr, e);
        if (!json_is_array(ev)) return cli_fail("%s: line %lu: %s[%zu]: expected a list of strings", src, lineno, field, e), -1;
        for (size_t i = 0; i < json_array_size(ev); i++)
            if (!json_is_string(json_array_get(ev, i)))
                return cli_fail("%s: line %lu: %s[%zu][%zu]: expected a string", src, lineno, field, e, i), -1;
        ns += json_array_size(ev);
    }
    out->ev = calloc(ne + 1, sizeof *out->ev);
    out->syms = calloc(ns + 1, sizeof *out->syms);
    out->lens = calloc(ns + 1, sizeof *out->lens);
    if (!out->ev || !out->syms || !out->lens) return kcli_events_free(out), cli_fail("out of memory"), -1;
    size_t at = 0;
    for (size_t e = 0; e < ne; e++) {
        const json_t *ev = json_array_get(arr, e);
        out->ev[e].syms = out->syms + at, out->ev[e].lens = out->lens + at, out->ev[e].n = json_array_size(ev);
        for (size_t i = 0; i < json_array_size(ev); i++, at++) {
            const json_t *s = json_array_get(ev, i);
            out->syms[at] = json_string_value(s), out->lens[at] = json_string_length(s);
        }
    }
    out->n = ne;
    return 0;
}

static void *own(kcli_dicts *d, void *p) {
    if (!p) return NULL;
    void **o = realloc(d->owned, (d->nowned + 1) * sizeof *o);
    if (!o) return free(p), NULL;
    d->owned = o;
    return d->owned[d->nowned++] = p;
}

void kcli_dicts_free(kcli_dicts *d) {
    for (size_t i = 0; i < d->nowned; i++) free(d->owned[i]);
    free(d->owned), free(d->emo), free(d->meta);
    memset(d, 0, sizeof *d);
}

int kcli_dicts_from_json(const json_t *emotives, const json_t *metadata, const char *src, unsigned long lineno, kcli_dicts *d) {
    memset(d, 0, sizeof *d);
    if (emotives && !json_is_array(emotives)) return cli_fail("%s: line %lu: emotives: expected a list of objects", src, lineno), -1;
    if (metadata && !json_is_array(metadata)) return cli_fail("%s: line %lu: metadata: expected a list of objects", src, lineno), -1;
    size_t ne = emotives ? json_array_size(emotives) : 0, nm = metadata ? json_array_size(metadata) : 0;
    d->emo = calloc(ne + 1, sizeof *d->emo);
    d->meta = calloc(nm + 1, sizeof *d->meta);
    if (!d->emo || !d->meta) return kcli_dicts_free(d), cli_fail("out of memory"), -1;
    for (size_t i = 0; i < ne; i++) {
        const json_t *o = json_array_get(emotives, i);
        if (!json_is_object(o)) return kcli_dicts_free(d), cli_fail("%s: line %lu: emotives[%zu]: expected an object", src, lineno, i), -1;
        tdm_kato_emotive *items = own(d, calloc(json_object_size(o) + 1, sizeof *items));
        if (!items) return kcli_dicts_free(d), cli_fail("out of memory"), -1;
        const char *k;
        json_t *v;
        size_t n = 0;
        json_object_foreach((json_t *)o, k, v) {
            if (!json_is_number(v))
                return kcli_dicts_free(d), cli_fail("%s: line %lu: emotives[%zu].%s: expected a number", src, lineno, i, k), -1;
            items[n].key = k, items[n++].value = json_number_value(v);
        }
        d->emo[d->nemo].items = items, d->emo[d->nemo++].n = n;
    }
    for (size_t i = 0; i < nm; i++) {
        const json_t *o = json_array_get(metadata, i);
        if (!json_is_object(o)) return kcli_dicts_free(d), cli_fail("%s: line %lu: metadata[%zu]: expected an object", src, lineno, i), -1;
        tdm_kato_meta *items = own(d, calloc(json_object_size(o) + 1, sizeof *items));
        if (!items) return kcli_dicts_free(d), cli_fail("out of memory"), -1;
        const char *k;
        json_t *v;
        size_t n = 0;
        json_object_foreach((json_t *)o, k, v) {
            char *s = own(d, tdm_kato_json_py_str(v));
            if (!s)
                return kcli_dicts_free(d), cli_fail("%s: line %lu: metadata[%zu].%s: expected a string, number, boolean or null", src, lineno, i, k), -1;
            items[n].key = k, items[n++].value = s;
        }
        d->meta[d->nmeta].items = items, d->meta[d->nmeta++].n = n;
    }
    return 0;
}

int kcli_learn_file(tdm_kato_kb *kb, const char *path, uint32_t persistence, FILE *names, int json, unsigned long *lines) {
    FILE *f = cli_open_in(path);
    if (!f) return 1;
    char *buf = NULL;
    size_t cap = 0;
    long len;
    unsigned long lineno = 0;
    int rc = 0;
    while (!rc && (len = cli_read_line(f, &buf, &cap)) >= 0) {
        lineno++;
        if (len == 0) continue;
        json_t *j = cli_parse_json_line(path, lineno, buf, (size_t)len);
        if (!j) {
            rc = 1;
            break;
        }
        const json_t *events = json_is_object(j) ? json_object_get(j, "events") : j;
        kcli_events ev;
        kcli_dicts dicts = {0};
        if (kcli_events_from_json(events, path, lineno, "events", &ev)) rc = 1;
        else if (json_is_object(j) && kcli_dicts_from_json(json_object_get(j, "emotives"), json_object_get(j, "metadata"), path, lineno, &dicts)) rc = 1;
        if (!rc) {
            char name[TDM_KATO_NAME_LEN + 1];
            int learned, st = tdm_kato_kb_learn(kb, ev.ev, ev.n, dicts.emo, dicts.nemo, dicts.meta, dicts.nmeta, persistence, name, &learned);
            if (st) rc = cli_fail("%s: line %lu: %s: %s", path, lineno, tdm_strerror(st), tdm_last_error());
            else if (names && json) fprintf(names, "{\"name\": \"%s\", \"learned\": %s}\n", learned ? name : "", learned ? "true" : "false");
            else if (names) fprintf(names, "%s\n", learned ? name : "");
        }
        kcli_events_free(&ev);
        kcli_dicts_free(&dicts);
        json_decref(j);
    }
    free(buf);
    cli_close(f);
    if (lines) *lines = lineno;
    return rc;
}

int kcli_config_opt(int argc, char **argv, int *i, tdm_kato_config *cfg, unsigned long long *persistence) {
    const char *v;
    unsigned long long maxp;
    int r;
    if ((r = cli_opt(argc, argv, i, "--threshold", &v)))
        return r < 0 || cli_parse_double("--threshold", v, 0.0, 1.0, &cfg->recall_threshold) ? -1 : 1;
    if ((r = cli_opt(argc, argv, i, "--max-predictions", &v))) {
        if (r < 0 || cli_parse_u64("--max-predictions", v, 1, 10000, &maxp)) return -1;
        cfg->max_predictions = (uint32_t)maxp;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "--rank", &v))) {
        if (r < 0) return -1;
        if (tdm_kato_rank_parse(v, &cfg->rank_sort_algo)) return cli_usage("--rank: %s", tdm_last_error()), -1;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "--affinity", &v))) {
        if (r < 0) return -1;
        cfg->affinity_emotive = v;
        return 1;
    }
    if ((r = cli_opt(argc, argv, i, "--persistence", &v)))
        return r < 0 || cli_parse_u64("--persistence", v, 1, 100, persistence) ? -1 : 1;
    if (!strcmp(argv[*i], "--char")) return cfg->use_token_matching = 0, 1;
    return 0;
}

int kcli_config_from_json(const json_t *obj, const char *src, unsigned long lineno, tdm_kato_config *cfg) {
    if (!obj) return 0;
    if (!json_is_object(obj)) return cli_fail("%s: line %lu: config: expected an object", src, lineno), -1;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        if (!strcmp(k, "recall_threshold") && json_is_number(v)) cfg->recall_threshold = json_number_value(v);
        else if (!strcmp(k, "max_predictions") && json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= 1000000)
            cfg->max_predictions = (uint32_t)json_integer_value(v);
        else if (!strcmp(k, "use_token_matching") && json_is_boolean(v)) cfg->use_token_matching = json_is_true(v);
        else if (!strcmp(k, "rank_sort_algo") && json_is_string(v)) {
            tdm_kato_rank r;
            if (tdm_kato_rank_parse(json_string_value(v), &r)) return cli_fail("%s: line %lu: %s", src, lineno, tdm_last_error()), -1;
            cfg->rank_sort_algo = r;
        } else if (!strcmp(k, "affinity_emotive") && (json_is_string(v) || json_is_null(v)))
            cfg->affinity_emotive = json_is_null(v) ? NULL : json_string_value(v);
        else return cli_fail("%s: line %lu: config key \"%s\": unknown key or wrong type", src, lineno, k), -1;
    }
    if (tdm_kato_config_check(cfg)) return cli_fail("%s: line %lu: %s", src, lineno, tdm_last_error()), -1;
    return 0;
}

/* ---- output ------------------------------------------------------------------------------------------- */

static void out_put(void *user, const char *s, size_t n) { fwrite(s, 1, n, (FILE *)user); }
static void out_str(void *user, const char *s, size_t n) { cli_put_json_string((FILE *)user, s, n); }
static void out_num(void *user, double x) { cli_put_double((FILE *)user, x); }

void kcli_put_result(FILE *out, const tdm_kato_result *r) {
    const tdm_kato_json_sink sink = {out, out_put, out_str, out_num};
    tdm_kato_result_write_json(r, TDM_KATO_JSON_OPEN, &sink);
    fprintf(out, ", \"count\": %zu}", tdm_kato_result_count(r));
}

void kcli_put_table(FILE *out, const tdm_kato_result *r) {
    size_t n = tdm_kato_result_count(r);
    const tdm_kato_predict_stats *st = tdm_kato_result_stats(r);
    fprintf(out, "%zu prediction%s (%llu candidate%s%s%s; search %.2f ms, extraction %.2f ms, ensemble %.2f ms)\n", n,
            n == 1 ? "" : "s", (unsigned long long)st->candidates, st->candidates == 1 ? "" : "s",
            st->fast_path ? ", single-symbol path" : "", st->pruned ? ", pruned" : "", st->search_ms, st->extract_ms,
            st->ensemble_ms);
    if (n) fprintf(out, "%4s  %-12s %5s %10s %10s %10s  %s\n", "rank", "name", "freq", "similarity", "potential", "evidence", "future");
    for (size_t i = 0; i < n; i++) {
        const tdm_kato_prediction *p = tdm_kato_result_get(r, i);
        fprintf(out, "%4zu  %.12s %5llu %10.6f %10.6f %10.6f  ", i + 1, p->name, (unsigned long long)p->frequency, p->similarity,
                p->potential, p->evidence);
        const tdm_kato_json_sink sink = {out, out_put, out_str, out_num};
        tdm_kato_events_write_json(r, &p->future, &sink);
        fputc('\n', out);
    }
}
