/* handlers.c: routing and the endpoints of spec/kato.md section 6 other than observation (observe.c):
 * sessions (create, info, delete, exists, config, extend), STM, learn, clears, predictions, training,
 * percept and cognition data, patterns by name, health, status and the root. Each session request holds
 * the session's lock for its whole run; node state is reached through the node's locks (nodes.c). Replies
 * keep KATO's shapes; where tandem answers differently on purpose (404 for a missing pattern) it is in
 * docs/kato-compat.md. */
#define _POSIX_C_SOURCE 200809L
#include "server/internal.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define TTL_MAX 31536000 /* one year */

json_t *body_object(request *q, reply *r, int allow_empty) {
    size_t n = q->body_len;
    while (n && (q->body[n - 1] == ' ' || q->body[n - 1] == '\n' || q->body[n - 1] == '\r' || q->body[n - 1] == '\t')) n--;
    if (!n && allow_empty) return json_object();
    if (!n) return reply_detail(r, 422, "request body: expected a JSON object, got nothing"), NULL;
    json_error_t err;
    json_t *j = json_loadb(q->body, q->body_len, JSON_REJECT_DUPLICATES, &err);
    if (!j) return reply_detail(r, 400, "request body is not valid JSON: %s (line %d, column %d)", err.text, err.line, err.column), NULL;
    if (!json_is_object(j)) {
        json_decref(j);
        return reply_detail(r, 422, "request body: expected a JSON object"), NULL;
    }
    return j;
}

static int not_found_session(reply *r, const char *id) { return reply_detail(r, 404, "Session %.200s not found or expired", id); }

static json_t *session_info(session *ss, int remaining) {
    char created[40], expires[40];
    iso_time(ss->created, created), iso_time(ss->expires, expires);
    long long ttl = ss->ttl;
    if (remaining) {
        ttl = (long long)(ss->expires - now_wall());
        if (ttl < 0) ttl = 0;
    }
    return json_pack("{s:s, s:s, s:s, s:s, s:I, s:O, s:O}", "session_id", ss->id, "node_id", ss->nd->node_id, "created_at", created,
                     "expires_at", expires, "ttl_seconds", (json_int_t)ttl, "metadata", ss->metadata, "session_config", ss->config);
}

/* ---- POST /sessions ------------------------------------------------------------------------------------- */

static int ttl_value(const json_t *v, uint32_t *out, reply *r, const char *where) {
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > TTL_MAX)
        return reply_detail(r, 422, "%s: expected an integer in 1..%d (seconds)", where, TTL_MAX), -1;
    *out = (uint32_t)json_integer_value(v);
    return 0;
}

static int config_error(reply *r, json_t *errs) {
    return reply_json(r, 400, json_pack("{s:{s:s, s:o}}", "detail", "error", "Configuration validation failed", "validation_errors", errs));
}

static int h_create(request *q, reply *r) {
    json_t *b = body_object(q, r, 0);
    if (!b) return 0;
    json_t *nid = json_object_get(b, "node_id"), *cfg = json_object_get(b, "config"), *meta = json_object_get(b, "metadata");
    json_t *ttlv = json_object_get(b, "ttl_seconds");
    uint32_t ttl = q->srv->o.default_ttl;
    if (!nid) reply_detail(r, 422, "node_id: field required");
    else if (!json_is_string(nid) || !json_string_length(nid) || json_string_length(nid) > 1024)
        reply_detail(r, 422, "node_id: expected a non-empty string of at most 1024 bytes");
    else if (meta && !json_is_null(meta) && !json_is_object(meta)) reply_detail(r, 422, "metadata: expected an object");
    else if (cfg && !json_is_null(cfg) && !json_is_object(cfg)) reply_detail(r, 422, "config: expected an object");
    else if (ttlv && !json_is_null(ttlv) && ttl_value(ttlv, &ttl, r, "ttl_seconds")) {
    } else {
        json_t *eff = config_defaults(), *errs = json_object();
        if (cfg && json_is_object(cfg) && config_apply(eff, cfg, errs)) {
            json_decref(eff), json_decref(b);
            return config_error(r, errs);
        }
        json_decref(errs);
        node *nd;
        session *ss;
        int rc = node_get(q->srv, json_string_value(nid), 1, &nd);
        json_t *md = meta && json_is_object(meta) ? json_deep_copy(meta) : json_object();
        if (!rc) rc = session_create(q->srv, nd, eff, md, ttl, &ss);
        if (rc) {
            json_decref(eff), json_decref(md);
            reply_status(r, rc, "cannot create the session");
        } else {
            reply_json(r, 200, session_info(ss, 0));
            session_put(q->srv, ss);
        }
    }
    json_decref(b);
    return 0;
}

/* ---- session endpoints ------------------------------------------------------------------------------------- */

static int h_config_update(request *q, session *ss, reply *r) {
    json_t *b = body_object(q, r, 0);
    if (!b) return 0;
    json_t *cfg = json_object_get(b, "config");
    if (!cfg || !json_is_object(cfg)) cfg = b; /* KATO takes {"config": {...}} or the bare dict */
    json_t *errs = json_object();
    if (config_apply(ss->config, cfg, errs)) config_error(r, errs);
    else {
        json_decref(errs);
        session_derive(ss);
        reply_json(r, 200, json_pack("{s:s, s:s, s:s}", "status", "okay", "message", "Configuration updated", "session_id", ss->id));
    }
    json_decref(b);
    return 0;
}

static int h_extend(request *q, session *ss, reply *r) {
    const char *v = MHD_lookup_connection_value(q->conn, MHD_GET_ARGUMENT_KIND, "ttl_seconds");
    uint32_t ttl = 3600;
    if (v) {
        char *end;
        long long x = strtoll(v, &end, 10);
        if (!*v || *end || x < 1 || x > TTL_MAX) return reply_detail(r, 422, "ttl_seconds=%.40s: expected an integer in 1..%d", v, TTL_MAX);
        ttl = (uint32_t)x;
    }
    ss->ttl = ttl, ss->expires = now_wall() + ttl;
    return reply_json(r, 200, json_pack("{s:s, s:s, s:I}", "status", "extended", "session_id", ss->id, "ttl_seconds", (json_int_t)ttl));
}

static void put_stm(sbuf *b, const tdm_kato_stm *stm) {
    sb_puts(b, "[");
    for (size_t e = 0; e < tdm_kato_stm_nevents(stm); e++) {
        tdm_kato_event ev;
        tdm_kato_stm_event(stm, e, &ev);
        sb_puts(b, e ? ", [" : "[");
        for (size_t i = 0; i < ev.n; i++) {
            if (i) sb_puts(b, ", ");
            sb_jstr(b, ev.syms[i], ev.lens[i]);
        }
        sb_puts(b, "]");
    }
    sb_puts(b, "]");
}

static int h_stm(session *ss, reply *r) {
    sb_puts(&r->body, "{\"stm\": ");
    put_stm(&r->body, ss->stm);
    sb_puts(&r->body, ", \"session_id\": ");
    sb_jstr(&r->body, ss->id, strlen(ss->id));
    sb_printf(&r->body, ", \"length\": %zu}", tdm_kato_stm_nevents(ss->stm));
    return 0;
}

int session_learn(request *q, session *ss, char name[TDM_KATO_NAME_LEN + 1], reply *r) {
    node *nd = ss->nd;
    int learned = 0;
    waiter w;
    pthread_mutex_lock(&nd->learn_mu);
    int rc = node_queue_reserve(nd);
    if (!rc) {
        pthread_rwlock_rdlock(&nd->rw);
        rc = tdm_kato_stm_learn(ss->stm, nd->kb, ss->kcfg.persistence, name, &learned);
        pthread_rwlock_unlock(&nd->rw);
    }
    if (!rc && learned) node_queue(nd, name, &w);
    pthread_mutex_unlock(&nd->learn_mu);
    if (!rc && learned) rc = node_commit_wait(q->srv, nd, &w); /* answered once on disk */
    if (rc) return reply_status(r, rc, "learn failed"), -1;
    if (!learned) name[0] = '\0';
    return 0;
}

static int h_learn(request *q, session *ss, reply *r) {
    if (!tdm_kato_stm_nevents(ss->stm)) return reply_detail(r, 400, "Cannot learn from empty STM");
    char name[TDM_KATO_NAME_LEN + 1];
    if (session_learn(q, ss, name, r)) return 0;
    char pn[TDM_KATO_NAME_LEN + 6], msg[128];
    snprintf(pn, sizeof pn, "%s%s", *name ? "PTRN|" : "", name);
    snprintf(msg, sizeof msg, *name ? "Learned pattern %s" : "Nothing learned: a pattern needs at least 2 symbols%s", pn);
    return reply_json(r, 200, json_pack("{s:s, s:s, s:s, s:s}", "status", "learned", "pattern_name", pn, "session_id", ss->id, "message", msg));
}

static int predict(request *q, session *ss, tdm_kato_result **res, reply *r) {
    node *nd = ss->nd;
    pthread_rwlock_rdlock(&nd->rw);
    int rc = tdm_kato_stm_predict(ss->stm, nd->kb, &ss->kcfg, res);
    pthread_rwlock_unlock(&nd->rw);
    if (rc) return reply_status(r, rc, "predictions failed"), -1;
    return 0;
}

static int h_predictions(request *q, session *ss, reply *r) {
    tdm_kato_result *res;
    if (predict(q, ss, &res, r)) return 0;
    sb_predictions(&r->body, res);
    sb_puts(&r->body, ", \"session_id\": ");
    sb_jstr(&r->body, ss->id, strlen(ss->id));
    sb_printf(&r->body, ", \"count\": %zu}", tdm_kato_result_count(res));
    tdm_kato_result_free(res);
    return 0;
}

static int h_clear_all(request *q, session *ss, reply *r) {
    int rc = node_clear(q->srv, ss->nd);
    if (rc) return reply_status(r, rc, "clear-all failed");
    tdm_kato_stm_clear(ss->stm);
    json_decref(ss->percept), ss->percept = NULL;
    return reply_json(r, 200, json_pack("{s:s, s:s, s:s}", "status", "cleared", "session_id", ss->id, "scope", "all"));
}

static int h_finalize(request *q, session *ss, reply *r) {
    double t0 = now_wall();
    pthread_rwlock_rdlock(&ss->nd->rw);
    uint32_t n = tdm_kato_kb_count(ss->nd->kb);
    pthread_rwlock_unlock(&ss->nd->rw);
    return reply_json(r, 200, json_pack("{s:s, s:I, s:f, s:s, s:s, s:s}", "status", "completed", "patterns_processed", (json_int_t)n,
                                        "time_ms", (now_wall() - t0) * 1e3, "session_id", ss->id, "node_id", ss->nd->node_id, "message",
                                        "Nothing to precompute: tandem computes entropies over the present at prediction time "
                                        "(docs/kato-compat.md)"));
}

static json_t *percept_or_empty(session *ss) {
    if (ss->percept) return json_deep_copy(ss->percept);
    return json_pack("{s:[], s:{}, s:{}}", "strings", "emotives", "metadata");
}

static int h_percept(session *ss, reply *r) {
    json_t *p = percept_or_empty(ss);
    if (p) json_object_set_new(p, "vectors", json_array()), json_object_set_new(p, "path", json_array());
    return reply_json(r, 200, json_pack("{s:o, s:s, s:s}", "percept_data", p, "session_id", ss->id, "node_id", ss->nd->node_id));
}

static int h_cognition(request *q, session *ss, reply *r) {
    tdm_kato_result *res;
    if (predict(q, ss, &res, r)) return 0;
    json_t *p = percept_or_empty(ss);
    sbuf *b = &r->body;
    sb_puts(b, "{\"cognition_data\": {\"predictions\": ");
    sb_prediction_list(b, res);
    tdm_kato_result_free(res);
    sb_puts(b, ", \"emotives\": "), sb_json(b, json_object_get(p, "emotives"));
    sb_puts(b, ", \"symbols\": [], \"command\": \"\", \"metadata\": "), sb_json(b, json_object_get(p, "metadata"));
    sb_puts(b, ", \"path\": [], \"strings\": "), sb_json(b, json_object_get(p, "strings"));
    sb_puts(b, ", \"vectors\": [], \"short_term_memory\": ");
    put_stm(b, ss->stm);
    sb_printf(b, ", \"time\": %llu}, \"session_id\": ", (unsigned long long)tdm_kato_stm_time(ss->stm));
    sb_jstr(b, ss->id, strlen(ss->id));
    sb_puts(b, ", \"node_id\": ");
    sb_jstr(b, ss->nd->node_id, strlen(ss->nd->node_id));
    sb_puts(b, "}");
    json_decref(p);
    return 0;
}

/* One session action; the session's lock is held. */
static void session_action(request *q, session *ss, const char *action, reply *r) {
    int get = !strcmp(q->method, "GET"), post = !strcmp(q->method, "POST"), del = !strcmp(q->method, "DELETE");
#define ON(name, cond) if (!strcmp(action, name)) { if (!(cond)) { reply_detail(r, 405, "Method Not Allowed"); return; }
    ON("", get || del)
        if (get) reply_json(r, 200, session_info(ss, 1));
        else {
            session_delete(q->srv, ss->id);
            reply_json(r, 200, json_pack("{s:s, s:s}", "status", "deleted", "session_id", ss->id));
        }
        return;
    }
    ON("config", get || post)
        if (get) reply_json(r, 200, json_pack("{s:s, s:O}", "session_id", ss->id, "config", ss->config));
        else h_config_update(q, ss, r);
        return;
    }
    ON("extend", post) h_extend(q, ss, r); return; }
    ON("observe", post) h_observe(q, ss, r); return; }
    ON("observe-sequence", post) h_observe_sequence(q, ss, r); return; }
    ON("stm", get) h_stm(ss, r); return; }
    ON("learn", post) h_learn(q, ss, r); return; }
    ON("clear-stm", post)
        tdm_kato_stm_clear(ss->stm);
        json_decref(ss->percept), ss->percept = NULL;
        reply_json(r, 200, json_pack("{s:s, s:s}", "status", "cleared", "session_id", ss->id));
        return;
    }
    ON("clear-all", post) h_clear_all(q, ss, r); return; }
    ON("predictions", get) h_predictions(q, ss, r); return; }
    ON("finalize-training", post) h_finalize(q, ss, r); return; }
    ON("percept-data", get) h_percept(ss, r); return; }
    ON("cognition-data", get) h_cognition(q, ss, r); return; }
#undef ON
    reply_detail(r, 404, "Not Found: no endpoint /sessions/{id}/%.100s", action);
}

static void h_exists(request *q, const char *id, reply *r) {
    int expired;
    session *ss = session_get(q->srv, id, &expired);
    reply_json(r, 200, json_pack("{s:b, s:b, s:s}", "exists", ss != NULL, "expired", expired, "session_id", id));
    session_put(q->srv, ss);
}

/* ---- patterns, health, status, root ---------------------------------------------------------------------- */

static int h_pattern(request *q, const char *pid, reply *r) {
    const char *nid = MHD_lookup_connection_value(q->conn, MHD_GET_ARGUMENT_KIND, "node_id");
    if (!nid) nid = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, "x-node-id");
    if (!nid) nid = MHD_lookup_connection_value(q->conn, MHD_HEADER_KIND, "x-test-id");
    if (!nid || !*nid) nid = "default_node";
    char name[64];
    snprintf(name, sizeof name, "%.60s", pid);
    if (!strncasecmp(name, "PTRN%7C", 7)) memmove(name + 5, name + 7, strlen(name + 7) + 1), name[4] = '|';
    node *nd;
    int rc = node_get(q->srv, nid, 0, &nd);
    if (rc) return reply_detail(r, 404, "Pattern %.60s not found in node %.200s", pid, nid);
    uint32_t index;
    tdm_kato_pattern p;
    pthread_rwlock_rdlock(&nd->rw);
    rc = tdm_kato_kb_find(nd->kb, name, &index);
    if (!rc) rc = tdm_kato_kb_get(nd->kb, index, &p);
    pthread_rwlock_unlock(&nd->rw);
    if (rc == TDM_E_NOTFOUND) return reply_detail(r, 404, "Pattern %.60s not found in node %.200s", pid, nid);
    if (rc) return reply_status(r, rc, "pattern");
    json_t *data = json_array(), *emo = json_array(), *meta = json_object();
    for (size_t e = 0, k = 0; e < p.nevents; e++) {
        json_t *ev = json_array();
        for (size_t i = 0; i < p.event_sizes[e]; i++, k++) json_array_append_new(ev, json_stringn(p.syms[k], p.sym_lens[k]));
        json_array_append_new(data, ev);
    }
    for (size_t d = 0, k = 0; d < p.nemotive_dicts; d++) {
        json_t *o = json_object();
        for (size_t i = 0; i < p.emotive_sizes[d]; i++, k++) json_object_set_new(o, p.emotives[k].key, json_real(p.emotives[k].value));
        json_array_append_new(emo, o);
    }
    for (size_t m = 0, k = 0; m < p.nmeta; m++) {
        json_t *vals = json_array();
        for (size_t v = 0; v < p.meta_nvalues[m]; v++, k++) json_array_append_new(vals, json_string(p.meta_values[k]));
        json_object_set_new(meta, p.meta_keys[m], vals);
    }
    char pn[TDM_KATO_NAME_LEN + 6];
    snprintf(pn, sizeof pn, "PTRN|%s", p.name);
    json_t *pat = json_pack("{s:s, s:o, s:I, s:I, s:o, s:o}", "name", pn, "pattern_data", data, "length", (json_int_t)p.nsyms,
                            "frequency", (json_int_t)p.frequency, "emotives", emo, "metadata", meta);
    tdm_kato_pattern_free(&p);
    return reply_json(r, 200, json_pack("{s:{s:s, s:o}, s:s}", "pattern", "status", "okay", "pattern", pat, "node_id", nid));
}

static int h_health(request *q, reply *r, int full) {
    tdm_server *s = q->srv;
    double now = now_wall();
    char ts[40];
    iso_time(now, ts);
    uint32_t nnodes;
    uint64_t pats = nodes_patterns(s, &nnodes);
    json_t *j = json_pack("{s:s, s:s, s:s, s:f, s:[], s:I, s:s, s:I, s:s}", "status", "healthy", "processor_status", "healthy",
                          "service_name", "tandem", "uptime_seconds", now - s->started, "issues", "metrics_collected",
                          (json_int_t)atomic_load(&s->requests), "last_collection", ts, "active_sessions",
                          (json_int_t)sessions_live(s), "timestamp", ts);
    if (j && full) {
        json_object_set_new(j, "version", json_string(tdm_version()));
        json_object_set_new(j, "nodes", json_integer(nnodes));
        json_object_set_new(j, "patterns", json_integer((json_int_t)pats));
        json_object_set_new(j, "requests", json_pack("{s:I, s:I}", "total", (json_int_t)atomic_load(&s->requests), "errors",
                                                     (json_int_t)atomic_load(&s->errors)));
        json_object_set_new(j, "store", json_pack("{s:s, s:I, s:I, s:f}", "data_dir", s->data_dir, "loaded_nodes",
                                                  (json_int_t)s->loaded_nodes, "loaded_patterns", (json_int_t)s->loaded_patterns,
                                                  "load_seconds", s->load_seconds));
        json_object_set_new(j, "listen", json_pack("{s:s, s:i}", "host", s->host, "port", s->port));
        json_object_set_new(j, "authentication", json_boolean(s->token != NULL));
    }
    return reply_json(r, 200, j);
}

static int h_root(reply *r) {
    return reply_json(r, 200, json_pack("{s:s, s:s, s:s, s:[s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s,s]}", "service", "tandem", "version",
                                        tdm_version(), "message", "KATO-compatible session API (spec/kato.md section 6)", "endpoints",
                                        "POST /sessions", "GET /sessions/{id}", "DELETE /sessions/{id}", "GET /sessions/{id}/exists",
                                        "GET|POST /sessions/{id}/config", "POST /sessions/{id}/extend", "POST /sessions/{id}/observe",
                                        "POST /sessions/{id}/observe-sequence", "GET /sessions/{id}/stm", "POST /sessions/{id}/learn",
                                        "POST /sessions/{id}/clear-stm", "POST /sessions/{id}/clear-all",
                                        "GET /sessions/{id}/predictions", "POST /sessions/{id}/finalize-training",
                                        "GET /sessions/{id}/percept-data", "GET /sessions/{id}/cognition-data",
                                        "GET /pattern/{id}?node_id=", "GET /health", "GET /status"));
}

void route(request *q, const char *url, reply *r) {
    char path[1024];
    size_t n = strlen(url);
    if (n >= sizeof path) {
        reply_detail(r, 414, "URL too long");
        return;
    }
    memcpy(path, url, n + 1);
    while (n > 1 && path[n - 1] == '/') path[--n] = '\0';
    int get = !strcmp(q->method, "GET"), post = !strcmp(q->method, "POST");
    if (!strcmp(path, "/") || !strcmp(path, "/health") || !strcmp(path, "/status")) {
        if (!get) reply_detail(r, 405, "Method Not Allowed");
        else if (path[1] == '\0') h_root(r);
        else h_health(q, r, path[1] == 's');
        return;
    }
    if (!strcmp(path, "/sessions")) {
        if (!post) reply_detail(r, 405, "Method Not Allowed");
        else h_create(q, r);
        return;
    }
    if (!strncmp(path, "/pattern/", 9) && path[9] && !strchr(path + 9, '/')) {
        if (!get) reply_detail(r, 405, "Method Not Allowed");
        else h_pattern(q, path + 9, r);
        return;
    }
    if (strncmp(path, "/sessions/", 10) || !path[10]) {
        reply_detail(r, 404, "Not Found");
        return;
    }
    char *id = path + 10, *action = strchr(id, '/');
    if (action) *action++ = '\0';
    else action = "";
    if (strchr(action, '/')) {
        reply_detail(r, 404, "Not Found");
        return;
    }
    if (!strcmp(action, "exists")) {
        if (!get) reply_detail(r, 405, "Method Not Allowed");
        else h_exists(q, id, r);
        return;
    }
    session *ss = session_get(q->srv, id, NULL);
    if (!ss) {
        not_found_session(r, id);
        return;
    }
    pthread_mutex_lock(&ss->mu);
    session_action(q, ss, action, r);
    pthread_mutex_unlock(&ss->mu);
    session_put(q->srv, ss);
}
