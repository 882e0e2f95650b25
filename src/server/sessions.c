/* sessions.c: the service's sessions (spec/kato.md 6): ids of KATO's form, a TTL, an STM and an effective
 * configuration each, in a hash table. The configuration keys of spec 1.5 are validated from one table
 * (type and range per key, a message naming the key and the value); keys tandem does not implement (the
 * fuzzy tokens and filter pipeline of docs/kato-compat.md) accept only their "off" values. Expired
 * sessions are dropped when looked up and by a sweep at most once a second. */
#define _GNU_SOURCE /* getrandom */
#include "server/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

double now_wall(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void iso_time(double t, char out[40]) {
    if (!(t > 0 && t < 253402300799.0)) t = 0; /* years 1970..9999 */
    time_t sec = (time_t)floor(t);
    long us = (long)((t - (double)sec) * 1e6);
    if (us > 999999) us = 999999;
    struct tm tm;
    gmtime_r(&sec, &tm);
    snprintf(out, 40, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", (tm.tm_year + 1900) % 10000, (tm.tm_mon + 1) % 100, tm.tm_mday % 100,
             tm.tm_hour % 100, tm.tm_min % 100, tm.tm_sec % 100, (int)us);
}

void random_hex32(char out[33]) {
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n > 0) got += (size_t)n;
        else { /* no entropy source: the time and a counter still make ids unique in this process */
            static _Atomic unsigned long ctr;
            unsigned long c = ++ctr;
            double t = now_wall();
            memcpy(b, &t, 8), memcpy(b + 8, &c, 8);
            break;
        }
    }
    for (int i = 0; i < 16; i++) sprintf(out + 2 * i, "%02x", b[i]);
}

/* ---- configuration (spec 1.5) --------------------------------------------------------------------------- */

typedef enum { K_NUM, K_INT, K_BOOL, K_MODE, K_RANK, K_STR_OR_NULL, K_EMPTY_LIST } kind;

typedef struct {
    const char *key;
    kind k;
    double lo, hi;     /* K_NUM / K_INT bounds, inclusive */
    const char *def;   /* default as JSON text */
    const char *note;  /* extra rule for the message */
} cfgkey;

static const cfgkey keys[] = {
    {"recall_threshold", K_NUM, 0, 1, "0.1", NULL},
    {"max_predictions", K_INT, 1, 10000, "100", NULL},
    {"max_pattern_length", K_INT, 0, 1000000, "0", NULL},
    {"persistence", K_INT, 1, 100, "5", NULL},
    {"stm_mode", K_MODE, 0, 0, "\"CLEAR\"", NULL},
    {"sort_symbols", K_BOOL, 0, 0, "true", NULL},
    {"use_token_matching", K_BOOL, 0, 0, "true", NULL},
    {"rank_sort_algo", K_RANK, 0, 0, "\"potential\"", NULL},
    {"affinity_emotive", K_STR_OR_NULL, 0, 0, "null", NULL},
    /* accepted for KATO clients; tandem implements only the values that turn them off */
    {"fuzzy_token_threshold", K_NUM, 0, 0, "0.0", "fuzzy token matching is not implemented (docs/kato-compat.md)"},
    {"filter_pipeline", K_EMPTY_LIST, 0, 0, "[]", "filter stages are not implemented (docs/kato-compat.md)"},
    /* parameters of the filter stages: stored and shown, without effect while filter_pipeline is [] */
    {"length_min_ratio", K_NUM, 0, 1e6, "0.5", NULL},
    {"length_max_ratio", K_NUM, 0, 1e6, "2.0", NULL},
    {"jaccard_threshold", K_NUM, 0, 1, "0.3", NULL},
    {"jaccard_min_overlap", K_INT, 0, 1e6, "2", NULL},
    {"minhash_threshold", K_NUM, 0, 1, "0.7", NULL},
    {"minhash_bands", K_INT, 1, 1e6, "20", NULL},
    {"minhash_rows", K_INT, 1, 1e6, "5", NULL},
    {"minhash_num_hashes", K_INT, 1, 1e6, "100", NULL},
    {"bloom_false_positive_rate", K_NUM, 0, 1, "0.01", NULL},
    {"max_candidates_per_stage", K_INT, 1, 1e9, "100000", NULL},
};
#define NKEYS (sizeof keys / sizeof *keys)

json_t *config_defaults(void) {
    json_t *o = json_object();
    for (size_t i = 0; o && i < NKEYS; i++) json_object_set_new(o, keys[i].key, json_loads(keys[i].def, JSON_DECODE_ANY, NULL));
    return o;
}

static int bad(json_t *errs, const char *key, const char *fmt, const char *extra) {
    char msg[600];
    snprintf(msg, sizeof msg, fmt, key, extra ? extra : "");
    json_object_set_new(errs, key, json_string(msg));
    return -1;
}

/* Checks one value; 0 and the value to store (new reference), or -1 with a message in errs. */
static int check_value(const cfgkey *c, const json_t *v, json_t *errs, json_t **out) {
    char range[160];
    switch (c->k) {
    case K_NUM:
        if (!json_is_number(v) || json_is_boolean(v)) return bad(errs, c->key, "%s: expected a number%s", "");
        if (c->note && json_number_value(v) != 0.0) return bad(errs, c->key, "%s: only 0 is accepted: %s", c->note);
        if (!(json_number_value(v) >= c->lo && json_number_value(v) <= c->hi)) {
            snprintf(range, sizeof range, " in [%g, %g], got %.17g", c->lo, c->hi, json_number_value(v));
            return bad(errs, c->key, "%s: expected a number%s", range);
        }
        *out = json_real(json_number_value(v));
        return 0;
    case K_INT:
        if (!json_is_integer(v) || (double)json_integer_value(v) < c->lo || (double)json_integer_value(v) > c->hi) {
            snprintf(range, sizeof range, " in %.0f..%.0f", c->lo, c->hi);
            return bad(errs, c->key, "%s: expected an integer%s", range);
        }
        *out = json_integer(json_integer_value(v));
        return 0;
    case K_BOOL:
        if (!json_is_boolean(v)) return bad(errs, c->key, "%s: expected true or false%s", "");
        *out = json_boolean(json_is_true(v));
        return 0;
    case K_MODE:
        if (!json_is_string(v) || (strcmp(json_string_value(v), "CLEAR") && strcmp(json_string_value(v), "ROLLING")))
            return bad(errs, c->key, "%s: expected \"CLEAR\" or \"ROLLING\"%s", "");
        *out = json_string(json_string_value(v));
        return 0;
    case K_RANK: {
        tdm_kato_rank r;
        if (!json_is_string(v) || tdm_kato_rank_parse(json_string_value(v), &r))
            return bad(errs, c->key, "%s: expected one of potential, similarity, evidence, confidence, snr, fragmentation, "
                                     "frequency, normalized_entropy, global_normalized_entropy, itfdf_similarity, confluence, "
                                     "predictive_information, bayesian_posterior, bayesian_prior, bayesian_likelihood, "
                                     "tfidf_score, weighted_similarity, weighted_evidence, weighted_confidence, weighted_snr%s", "");
        *out = json_string(json_string_value(v));
        return 0;
    }
    case K_STR_OR_NULL:
        if (!json_is_null(v) && !json_is_string(v)) return bad(errs, c->key, "%s: expected a string or null%s", "");
        *out = json_is_null(v) || !*json_string_value(v) ? json_null() : json_string(json_string_value(v));
        return 0;
    case K_EMPTY_LIST:
        if (!json_is_array(v)) return bad(errs, c->key, "%s: expected a list%s", "");
        if (json_array_size(v)) return bad(errs, c->key, "%s: only [] is accepted: %s", c->note);
        *out = json_array();
        return 0;
    }
    return -1;
}

int config_apply(json_t *eff, const json_t *cfg, json_t *errs) {
    if (!json_is_object(cfg)) {
        json_object_set_new(errs, "config", json_string("config: expected an object"));
        return -1;
    }
    json_t *next = json_deep_copy(eff);
    if (!next) return json_object_set_new(errs, "config", json_string("no memory")), -1;
    const char *k;
    json_t *v;
    int fails = 0;
    json_object_foreach((json_t *)cfg, k, v) {
        size_t i = 0;
        while (i < NKEYS && strcmp(keys[i].key, k)) i++;
        if (i == NKEYS) {
            char msg[300];
            snprintf(msg, sizeof msg, "%.200s: unknown configuration key", k);
            json_object_set_new(errs, k, json_string(msg));
            fails++;
            continue;
        }
        json_t *val = NULL;
        if (check_value(&keys[i], v, errs, &val)) fails++;
        else json_object_set_new(next, k, val);
    }
    /* KATO: setting use_token_matching alone makes sort_symbols follow it */
    if (json_object_get(cfg, "use_token_matching") && !json_object_get(cfg, "sort_symbols") && !fails)
        json_object_set(next, "sort_symbols", json_object_get(next, "use_token_matching"));
    if (!fails) json_object_update(eff, next);
    json_decref(next);
    return fails ? -1 : 0;
}

void session_derive(session *s) {
    tdm_kato_config *c = &s->kcfg;
    json_t *o = s->config;
    tdm_kato_config_init(c);
    c->recall_threshold = json_number_value(json_object_get(o, "recall_threshold"));
    c->max_predictions = (uint32_t)json_integer_value(json_object_get(o, "max_predictions"));
    c->max_pattern_length = (uint32_t)json_integer_value(json_object_get(o, "max_pattern_length"));
    c->persistence = (uint32_t)json_integer_value(json_object_get(o, "persistence"));
    c->stm_mode = !strcmp(json_string_value(json_object_get(o, "stm_mode")), "ROLLING") ? TDM_KATO_STM_ROLLING : TDM_KATO_STM_CLEAR;
    c->sort_symbols = json_is_true(json_object_get(o, "sort_symbols"));
    c->use_token_matching = json_is_true(json_object_get(o, "use_token_matching"));
    tdm_kato_rank_parse(json_string_value(json_object_get(o, "rank_sort_algo")), &c->rank_sort_algo);
    c->affinity_emotive = json_string_value(json_object_get(o, "affinity_emotive")); /* NULL for null */
}

/* ---- the table --------------------------------------------------------------------------------------------- */

static size_t bucket(const char *id) {
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)id; *p; p++) h = (h ^ *p) * 1099511628211ull;
    return (size_t)(h % SESSION_BUCKETS);
}

static void session_free(session *ss) {
    tdm_kato_stm_free(ss->stm);
    json_decref(ss->config), json_decref(ss->metadata), json_decref(ss->percept);
    pthread_mutex_destroy(&ss->mu);
    tdm_free(ss);
}

/* Unlinks ss (table lock held); freed now or by the last session_put. */
static void unlink_locked(tdm_server *s, session *ss) {
    session **pp = &s->sessions[bucket(ss->id)];
    while (*pp && *pp != ss) pp = &(*pp)->next;
    if (*pp) *pp = ss->next, s->nsessions--;
    ss->dead = 1;
    if (!ss->refs) session_free(ss);
}

static void sweep_locked(tdm_server *s, double now) {
    if (now - s->last_sweep < 1.0) return;
    s->last_sweep = now;
    for (size_t b = 0; b < SESSION_BUCKETS; b++)
        for (session *ss = s->sessions[b], *nx; ss; ss = nx) {
            nx = ss->next;
            if (ss->expires <= now) unlink_locked(s, ss);
        }
}

int session_create(tdm_server *s, node *nd, json_t *config, json_t *metadata, uint32_t ttl, session **out) {
    session *ss = tdm_calloc(1, sizeof *ss);
    if (!ss) return tdm_error(TDM_E_NOMEM, "no memory for a session");
    int rc = tdm_kato_stm_new(&ss->stm);
    if (rc) {
        tdm_free(ss);
        return rc;
    }
    pthread_mutex_init(&ss->mu, NULL);
    char hex[33];
    random_hex32(hex);
    double now = now_wall();
    snprintf(ss->id, sizeof ss->id, "session-%s-%lld", hex, (long long)(now * 1000.0));
    ss->nd = nd, ss->config = config, ss->metadata = metadata, ss->ttl = ttl;
    ss->created = now, ss->expires = now + ttl;
    session_derive(ss);
    pthread_mutex_lock(&s->sessions_mu);
    sweep_locked(s, now);
    if (s->nsessions >= s->o.max_sessions) {
        pthread_mutex_unlock(&s->sessions_mu);
        ss->config = ss->metadata = NULL; /* the caller keeps them */
        session_free(ss);
        return tdm_error(TDM_E_BUSY, "%u sessions are live, the most this server keeps (--max-sessions)", s->o.max_sessions);
    }
    size_t b = bucket(ss->id);
    ss->next = s->sessions[b], s->sessions[b] = ss, s->nsessions++;
    ss->refs = 1;
    pthread_mutex_unlock(&s->sessions_mu);
    *out = ss;
    return TDM_OK;
}

session *session_get(tdm_server *s, const char *id, int *expired) {
    if (expired) *expired = 0;
    double now = now_wall();
    pthread_mutex_lock(&s->sessions_mu);
    session *ss = s->sessions[bucket(id)];
    while (ss && strcmp(ss->id, id)) ss = ss->next;
    if (ss && ss->expires <= now) {
        unlink_locked(s, ss);
        ss = NULL;
        if (expired) *expired = 1;
    }
    if (ss) ss->refs++;
    pthread_mutex_unlock(&s->sessions_mu);
    return ss;
}

void session_put(tdm_server *s, session *ss) {
    if (!ss) return;
    pthread_mutex_lock(&s->sessions_mu);
    int gone = --ss->refs == 0 && ss->dead;
    pthread_mutex_unlock(&s->sessions_mu);
    if (gone) session_free(ss);
}

int session_delete(tdm_server *s, const char *id) {
    pthread_mutex_lock(&s->sessions_mu);
    session *ss = s->sessions[bucket(id)];
    while (ss && strcmp(ss->id, id)) ss = ss->next;
    int rc = -1;
    if (ss) {
        rc = ss->expires > now_wall() ? 0 : -1;
        unlink_locked(s, ss);
    }
    pthread_mutex_unlock(&s->sessions_mu);
    return rc;
}

uint32_t sessions_live(tdm_server *s) {
    pthread_mutex_lock(&s->sessions_mu);
    sweep_locked(s, now_wall());
    uint32_t n = s->nsessions;
    pthread_mutex_unlock(&s->sessions_mu);
    return n;
}

void sessions_free(tdm_server *s) {
    for (size_t b = 0; b < SESSION_BUCKETS; b++)
        for (session *ss = s->sessions[b], *nx; ss; ss = nx) {
            nx = ss->next;
            session_free(ss);
        }
    memset(s->sessions, 0, sizeof s->sessions);
    s->nsessions = 0;
}
