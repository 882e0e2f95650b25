/* internal.h: what the service's sources share: the server, node and session records, the reply being
 * built, the JSON writer and the helpers between them. Private to src/server. */
#ifndef TANDEM_SERVER_INTERNAL_H
#define TANDEM_SERVER_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>

#include "core/internal.h"
#include "tandem/kato.h"
#include "tandem/server.h"
#include "tandem/store.h"

/* ---- a growable output buffer and JSON writing (jsonw.c) ------------------------------------------- */
typedef struct {
    char *p; /* malloc'd (libmicrohttpd frees responses with free()) */
    size_t n, cap;
    int failed;
} sbuf;

void sb_put(sbuf *b, const char *s, size_t n);
void sb_puts(sbuf *b, const char *s);
void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal for bytes s[0..n) (valid UTF-8). */
void sb_jstr(sbuf *b, const char *s, size_t n);
/* The shortest decimal that reads back as x (Python's repr for the usual cases); null when not finite. */
void sb_double(sbuf *b, double x);
/* A jansson value, compact. */
void sb_json(sbuf *b, const json_t *j);
/* {"predictions": [...], "future_potentials": [...] or null, then the caller's fields */
void sb_predictions(sbuf *b, const tdm_kato_result *r);
/* The list of predictions alone: [{...}, ...] */
void sb_prediction_list(sbuf *b, const tdm_kato_result *r);

/* ---- a node: one knowledge base and where it is stored (nodes.c) ---------------------------------- */
typedef struct node {
    char *node_id; /* as first given */
    char *kb_id;   /* KATO's processor id derived from it (spec 6) */
    tdm_kato_kb *kb;
    pthread_rwlock_t rw;      /* read: use kb; write: replace kb (clear-all, reload after a failed commit) */
    /* Learns and group commit. A learn changes kb under learn_mu and queues its name; then whoever holds
     * commit_mu reads every queued learn's records out of kb (under learn_mu: one consistent state), writes
     * them in one transaction and waits for the disk (outside learn_mu, so learns go on meanwhile), and
     * tells each queued learner its outcome. Lock order: commit_mu, learn_mu, rw. */
    pthread_mutex_t learn_mu;
    pthread_mutex_t commit_mu;
    char (*queue)[TDM_KATO_NAME_LEN + 1]; /* names learned since the last commit (learn_mu) */
    size_t nqueue, capqueue;
    struct waiter *waiters;   /* learners waiting for their commit (learn_mu) */
    struct node *next;
} node;

/* A learner waiting for its learn to be committed (on its own stack). */
typedef struct waiter {
    int done, rc;
    char msg[256];
    struct waiter *next;
} waiter;

/* ---- a session (sessions.c) ------------------------------------------------------------------------- */
typedef struct session {
    char id[80];
    node *nd;
    tdm_kato_stm *stm;
    json_t *config;        /* the effective configuration (every key) */
    tdm_kato_config kcfg;  /* the engine's view of config (affinity_emotive borrowed from it) */
    json_t *metadata;
    json_t *percept;       /* the last observation: strings (sorted), emotives, metadata; or NULL */
    double created, expires; /* wall clock, seconds */
    uint32_t ttl;
    pthread_mutex_t mu;    /* one request of this session at a time */
    int refs, dead;        /* under the table's lock */
    struct session *next;
} session;

#define SESSION_BUCKETS 4096
#define NODE_BUCKETS 1024

struct tdm_server {
    tdm_ctx *ctx;
    tdm_server_opts o;
    char *token;           /* NULL = no authentication */
    char *host, *data_dir;
    tdm_store *store;
    struct MHD_Daemon *mhd;
    int port;
    double started;        /* wall clock */
    double load_seconds;
    uint64_t loaded_nodes, loaded_patterns;
    pthread_mutex_t nodes_mu;
    node *nodes[NODE_BUCKETS];
    uint32_t nnodes;
    pthread_mutex_t sessions_mu;
    session *sessions[SESSION_BUCKETS];
    uint32_t nsessions;
    double last_sweep;
    atomic_ullong requests, errors;
};

/* A reply under construction: status code and body (malloc'd JSON). */
typedef struct {
    int code;
    sbuf body;
    const char *www_auth; /* a WWW-Authenticate header value, or NULL */
} reply;

/* {"detail": "<message>"} with this code; returns 0 so handlers can `return reply_detail(...)`. */
int reply_detail(reply *r, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The reply for a library failure (status -> HTTP code; message from tdm_last_error()). */
int reply_status(reply *r, int status, const char *what);
/* A jansson value as the body (the reference is stolen). */
int reply_json(reply *r, int code, json_t *j);

double now_wall(void);
/* ISO 8601 UTC with microseconds ("2026-01-02T03:04:05.123456Z"). */
void iso_time(double t, char out[40]);
/* 32 random lower-case hex digits and a NUL. */
void random_hex32(char out[33]);

/* ---- nodes.c ------------------------------------------------------------------------------------------- */
/* KATO's kb id of a node id into a malloc'd string (NULL without memory). */
char *kb_id_of(const char *node_id);
/* The node of node_id, made when missing (create = 1). Errors: TDM_E_NOTFOUND (create = 0), TDM_E_BUSY
 * (max_nodes reached), TDM_E_NOMEM. */
int node_get(tdm_server *s, const char *node_id, int create, node **out);
/* Loads every stored node (start-up). */
int nodes_load(tdm_server *s);
void nodes_free(tdm_server *s);
/* Room in the queue for one more learn; call with learn_mu held before a learn that may store a pattern.
 * Errors: TDM_E_NOMEM. */
int node_queue_reserve(node *nd);
/* After a learn of `name` in nd->kb (learn_mu held, room reserved): queues it, registering w. */
void node_queue(node *nd, const char *name, waiter *w);
/* After releasing learn_mu: returns once w's learn is committed (committing the queue itself when no one
 * else is), with its outcome. A failed commit reloads the node from the store so that memory never holds
 * what the disk lacks, and fails every learn that was queued. */
int node_commit_wait(tdm_server *s, node *nd, waiter *w);
/* Deletes the node's patterns in memory and in the store. */
int node_clear(tdm_server *s, node *nd);
uint64_t nodes_patterns(tdm_server *s, uint32_t *count);

/* ---- sessions.c ---------------------------------------------------------------------------------------- */
/* Validates cfg's keys into the effective configuration *eff (which holds the current values); on a bad
 * key or value fills errs (an object: key -> message) and returns -1. */
int config_apply(json_t *eff, const json_t *cfg, json_t *errs);
json_t *config_defaults(void);
/* Derives s->kcfg from s->config. */
void session_derive(session *s);
int session_create(tdm_server *s, node *nd, json_t *config, json_t *metadata, uint32_t ttl, session **out);
/* The session with this id, referenced (release with session_put), or NULL; *expired says whether it
 * existed but its TTL had passed (it is removed then). */
session *session_get(tdm_server *s, const char *id, int *expired);
void session_put(tdm_server *s, session *ss);
/* Removes a session now; 0 or -1 when unknown. */
int session_delete(tdm_server *s, const char *id);
void sessions_free(tdm_server *s);
uint32_t sessions_live(tdm_server *s);

/* ---- handlers.c / observe.c ------------------------------------------------------------------------------ */
typedef struct {
    tdm_server *srv;
    struct MHD_Connection *conn;
    const char *method;
    const char *body;
    size_t body_len;
} request;

/* Routes one request (path already split off the query string). */
void route(request *q, const char *path, reply *r);
int h_observe(request *q, session *ss, reply *r);
int h_observe_sequence(request *q, session *ss, reply *r);
/* Parses the body as a JSON object; on failure replies 400/422 and returns NULL. */
json_t *body_object(request *q, reply *r, int allow_empty);
/* Learns ss's STM into its node and commits it; name receives the 40-hex name or "" (fewer than 2
 * symbols). On failure replies and returns -1. */
int session_learn(request *q, session *ss, char name[TDM_KATO_NAME_LEN + 1], reply *r);

#endif
