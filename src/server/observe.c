/* observe.c: POST /sessions/{id}/observe and /observe-sequence (spec/kato.md 1.1, 1.2, 6). An observation
 * is checked completely (every field's type, with its position in the message) before the STM changes, so
 * a rejected request changes nothing; a sequence is checked whole before its first observation runs.
 * Auto-learned patterns are committed to the store before the reply, like explicit learns. */
#define _POSIX_C_SOURCE 200809L
#include "server/internal.h"
#include "kato/kato_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char **syms;
    size_t *lens, n;
    tdm_kato_emotive *emo;
    size_t nemo;
    tdm_kato_meta *meta;
    size_t nmeta;
    char **owned; /* metadata value texts */
    const json_t *src; /* the observation object (borrowed) */
} obs;

static void obs_free(obs *o) {
    for (size_t i = 0; i < o->nmeta; i++) free(o->owned[i]);
    free(o->syms), free(o->lens), free(o->emo), free(o->meta), free(o->owned);
    memset(o, 0, sizeof *o);
}

/* Reads one observation; on error replies 422 naming the field (prefixed by where) and returns -1. */
static int obs_parse(const json_t *j, const char *where, obs *o, reply *r) {
    memset(o, 0, sizeof *o);
    o->src = j;
    if (!json_is_object(j)) return reply_detail(r, 422, "%sexpected an observation object", where), -1;
    const json_t *strings = json_object_get(j, "strings"), *vectors = json_object_get(j, "vectors");
    const json_t *emotives = json_object_get(j, "emotives"), *metadata = json_object_get(j, "metadata");
    const json_t *uid = json_object_get(j, "unique_id");
    if (strings && !json_is_null(strings) && !json_is_array(strings)) return reply_detail(r, 422, "%sstrings: expected a list of strings", where), -1;
    if (vectors && !json_is_null(vectors)) {
        if (!json_is_array(vectors)) return reply_detail(r, 422, "%svectors: expected a list of lists of numbers", where), -1;
        if (json_array_size(vectors))
            return reply_detail(r, 422, "%svectors: not supported by tandem (only strings; docs/kato-compat.md), send []", where), -1;
    }
    if (emotives && !json_is_null(emotives) && !json_is_object(emotives)) return reply_detail(r, 422, "%semotives: expected an object of numbers", where), -1;
    if (metadata && !json_is_null(metadata) && !json_is_object(metadata)) return reply_detail(r, 422, "%smetadata: expected an object", where), -1;
    if (uid && !json_is_null(uid) && !json_is_string(uid)) return reply_detail(r, 422, "%sunique_id: expected a string", where), -1;
    size_t ns = json_is_array(strings) ? json_array_size(strings) : 0;
    size_t ne = json_is_object(emotives) ? json_object_size(emotives) : 0, nm = json_is_object(metadata) ? json_object_size(metadata) : 0;
    o->syms = calloc(ns + 1, sizeof *o->syms), o->lens = calloc(ns + 1, sizeof *o->lens);
    o->emo = calloc(ne + 1, sizeof *o->emo), o->meta = calloc(nm + 1, sizeof *o->meta), o->owned = calloc(nm + 1, sizeof *o->owned);
    if (!o->syms || !o->lens || !o->emo || !o->meta || !o->owned) return obs_free(o), reply_detail(r, 503, "no memory"), -1;
    for (size_t i = 0; i < ns; i++) {
        const json_t *s = json_array_get(strings, i);
        if (!json_is_string(s)) return obs_free(o), reply_detail(r, 422, "%sstrings[%zu]: expected a string", where, i), -1;
        o->syms[i] = json_string_value(s), o->lens[i] = json_string_length(s);
    }
    o->n = ns;
    const char *k;
    json_t *v;
    if (ne) json_object_foreach((json_t *)emotives, k, v) {
        if (!json_is_number(v) || !isfinite(json_number_value(v)))
            return obs_free(o), reply_detail(r, 422, "%semotives.%.100s: expected a finite number", where, k), -1;
        o->emo[o->nemo].key = k, o->emo[o->nemo++].value = json_number_value(v);
    }
    if (nm) json_object_foreach((json_t *)metadata, k, v) {
        char *text = tdm_kato_json_py_str(v);
        if (!text)
            return obs_free(o), reply_detail(r, 422, "%smetadata.%.100s: expected a string, number, boolean or null "
                                                     "(tandem stores metadata values as Python's str() of scalars)", where, k), -1;
        o->owned[o->nmeta] = text;
        o->meta[o->nmeta].key = k, o->meta[o->nmeta++].value = text;
    }
    return 0;
}

static int cmp_bytes(const void *a, const void *b) {
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    size_t lx = json_string_length(x), ly = json_string_length(y);
    int c = memcmp(json_string_value(x), json_string_value(y), lx < ly ? lx : ly);
    return c ? c : (lx > ly) - (lx < ly);
}

/* The percept data of an observation: strings (sorted as the STM sorts them), emotives, metadata. */
static void set_percept(session *ss, const obs *o) {
    json_t *strings = json_array();
    size_t n = o->n;
    json_t **items = malloc((n + 1) * sizeof *items);
    if (!strings || !items) {
        json_decref(strings), free(items);
        return;
    }
    for (size_t i = 0; i < n; i++) items[i] = json_stringn(o->syms[i], o->lens[i]);
    if (ss->kcfg.sort_symbols) qsort(items, n, sizeof *items, cmp_bytes);
    for (size_t i = 0; i < n; i++) json_array_append_new(strings, items[i]);
    free(items);
    json_t *e = json_object_get(o->src, "emotives"), *m = json_object_get(o->src, "metadata");
    json_decref(ss->percept);
    ss->percept = json_pack("{s:o, s:o, s:o}", "strings", strings, "emotives", json_is_object(e) ? json_deep_copy(e) : json_object(),
                            "metadata", json_is_object(m) ? json_deep_copy(m) : json_object());
}

/* Runs one parsed observation; auto_name gets an auto-learned name or "". -1 after replying on failure. */
static int run_obs(request *q, session *ss, const obs *o, char auto_name[TDM_KATO_NAME_LEN + 1], reply *r) {
    node *nd = ss->nd;
    const tdm_kato_config *c = &ss->kcfg;
    int may_learn = c->max_pattern_length > 0 && o->n > 0 && tdm_kato_stm_nevents(ss->stm) + 1 >= c->max_pattern_length;
    tdm_kato_emotives emo = {o->emo, o->nemo};
    tdm_kato_metadata meta = {o->meta, o->nmeta};
    waiter w;
    int rc = TDM_OK;
    if (may_learn) {
        pthread_mutex_lock(&nd->learn_mu);
        rc = node_queue_reserve(nd);
    }
    if (!rc) {
        pthread_rwlock_rdlock(&nd->rw);
        rc = tdm_kato_stm_observe(ss->stm, nd->kb, c, o->syms, o->lens, o->n, &emo, &meta, auto_name);
        pthread_rwlock_unlock(&nd->rw);
    }
    int queued = may_learn && !rc && auto_name[0];
    if (queued) node_queue(nd, auto_name, &w);
    if (may_learn) pthread_mutex_unlock(&nd->learn_mu);
    if (queued) rc = node_commit_wait(q->srv, nd, &w); /* answered once on disk */
    if (rc) return reply_status(r, rc, "observe failed"), -1;
    set_percept(ss, o);
    return 0;
}

static json_t *ptrn_or_null(const char *name) {
    if (!name || !*name) return json_null();
    char pn[TDM_KATO_NAME_LEN + 6];
    snprintf(pn, sizeof pn, "PTRN|%s", name);
    return json_string(pn);
}

int h_observe(request *q, session *ss, reply *r) {
    json_t *b = body_object(q, r, 0);
    if (!b) return 0;
    obs o;
    char name[TDM_KATO_NAME_LEN + 1] = "";
    if (!obs_parse(b, "", &o, r)) {
        if (!run_obs(q, ss, &o, name, r)) {
            char hex[33], uid[40];
            random_hex32(hex);
            snprintf(uid, sizeof uid, "obs-%s", hex);
            reply_json(r, 200, json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:o}", "status", "okay", "session_id", ss->id, "processor_id",
                                         ss->nd->node_id, "stm_length", (json_int_t)tdm_kato_stm_nevents(ss->stm), "time",
                                         (json_int_t)tdm_kato_stm_time(ss->stm), "unique_id", uid, "auto_learned_pattern",
                                         ptrn_or_null(name)));
        }
        obs_free(&o);
    }
    json_decref(b);
    return 0;
}

static int flag(const json_t *b, const char *key, int *out, reply *r) {
    const json_t *v = json_object_get(b, key);
    *out = 0;
    if (!v || json_is_null(v)) return 0;
    if (!json_is_boolean(v)) return reply_detail(r, 422, "%s: expected true or false", key), -1;
    *out = json_is_true(v);
    return 0;
}

int h_observe_sequence(request *q, session *ss, reply *r) {
    json_t *b = body_object(q, r, 0);
    if (!b) return 0;
    const json_t *list = json_object_get(b, "observations");
    int after_each, at_end, isolated;
    obs *os = NULL;
    size_t n = 0;
    json_t *results = NULL, *autos = NULL;
    if (!list) reply_detail(r, 422, "observations: field required");
    else if (!json_is_array(list)) reply_detail(r, 422, "observations: expected a list of observation objects");
    else if (!flag(b, "learn_after_each", &after_each, r) && !flag(b, "learn_at_end", &at_end, r) &&
             !flag(b, "clear_stm_between", &isolated, r)) {
        n = json_array_size(list);
        if (!(os = calloc(n + 1, sizeof *os))) {
            reply_detail(r, 503, "no memory");
            goto out;
        }
        for (size_t i = 0; i < n; i++) {
            char where[48];
            snprintf(where, sizeof where, "observations[%zu]: ", i);
            if (obs_parse(json_array_get(list, i), where, &os[i], r)) {
                n = i;
                goto out;
            }
        }
        size_t initial = tdm_kato_stm_nevents(ss->stm);
        results = json_array(), autos = json_array();
        char final_name[TDM_KATO_NAME_LEN + 1] = "";
        for (size_t i = 0; i < n; i++) {
            if (isolated && i) tdm_kato_stm_clear(ss->stm);
            char name[TDM_KATO_NAME_LEN + 1] = "", learned[TDM_KATO_NAME_LEN + 1] = "";
            if (run_obs(q, ss, &os[i], name, r)) goto out;
            if (*name) json_array_append_new(autos, ptrn_or_null(name));
            if (after_each && tdm_kato_stm_nevents(ss->stm) && session_learn(q, ss, learned, r)) goto out;
            const json_t *uid = json_object_get(os[i].src, "unique_id");
            char hex[33], gen[40];
            random_hex32(hex);
            snprintf(gen, sizeof gen, "obs-%s", hex);
            json_t *res = json_pack("{s:s, s:I, s:I, s:I, s:s, s:o}", "status", "okay", "sequence_position", (json_int_t)i, "stm_length",
                                    (json_int_t)tdm_kato_stm_nevents(ss->stm), "time", (json_int_t)tdm_kato_stm_time(ss->stm),
                                    "unique_id", json_is_string(uid) ? json_string_value(uid) : gen, "auto_learned_pattern",
                                    ptrn_or_null(name));
            if (res && after_each) json_object_set_new(res, "learned_pattern", ptrn_or_null(learned));
            json_array_append_new(results, res);
        }
        if (at_end && tdm_kato_stm_nevents(ss->stm) && session_learn(q, ss, final_name, r)) goto out;
        reply_json(r, 200, json_pack("{s:s, s:s, s:I, s:I, s:I, s:O, s:O, s:o, s:b}", "status", "completed", "processor_id",
                                     ss->nd->node_id, "observations_processed", (json_int_t)n, "initial_stm_length", (json_int_t)initial,
                                     "final_stm_length", (json_int_t)tdm_kato_stm_nevents(ss->stm), "results", results,
                                     "auto_learned_patterns", autos, "final_learned_pattern", ptrn_or_null(final_name), "isolated",
                                     isolated));
    }
out:
    for (size_t i = 0; os && i < n; i++) obs_free(&os[i]);
    free(os);
    json_decref(results), json_decref(autos), json_decref(b);
    return 0;
}
