/* server.h: the HTTP service (`tandem serve`): KATO's session API (spec/kato.md section 6) over the KATO
 * engine (kato.h) with every node's knowledge base kept in the durable store (store.h).
 *
 * Nodes: a session names a node; sessions of one node share its knowledge base (patterns, statistics),
 * each session has its own STM and configuration, and nodes never see each other's patterns. Every learn
 * (explicit, auto-learn, observe-sequence) is written to the store and committed before it is answered.
 * At start every stored node is loaded. Sessions live in memory with a TTL.
 *
 * Threads: libmicrohttpd's thread pool answers requests; one session's requests run one at a time, a
 * node's learns and their commits run in order, predictions of a node run together. */
#ifndef TANDEM_SERVER_H
#define TANDEM_SERVER_H

#include "tandem/tandem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    const char *host;       /* IPv4 address to bind; default "127.0.0.1" */
    int port;               /* 0..65535; 0 = any free port (tdm_server_port tells which); default 8000 */
    const char *data_dir;   /* the store's directory; default "./tandem-data" */
    const char *api_token;  /* NULL = the context's TANDEM_API_TOKEN (none when empty) */
    size_t max_body;        /* request bodies above this many bytes get 413; default 1 MiB */
    unsigned threads;       /* request threads; 0 = the context's thread count (at most 64) */
    uint32_t default_ttl;   /* session TTL in seconds when a request gives none; default 3600 */
    uint32_t max_sessions;  /* live sessions at most (503 beyond); default 100000 */
    uint32_t max_nodes;     /* nodes at most (503 beyond); default 4096 */
    uint64_t map_bytes;     /* the store's map size; 0 = its default */
    int quiet;              /* no progress lines while loading */
} tdm_server_opts;

void tdm_server_opts_init(tdm_server_opts *o);

typedef struct tdm_server tdm_server;

/* Opens the store, loads every stored node (with a progress line on stderr for large stores), binds and
 * starts answering. ctx is borrowed and must outlive the server. Errors: TDM_E_INVAL (bad options: the
 * message names the option), TDM_E_IO (cannot bind: the message says why; the store's errors), TDM_E_BUSY
 * (the data directory is in use), TDM_E_NOMEM, and the store's load errors. The caller owns *out. */
int tdm_server_start(tdm_ctx *ctx, const tdm_server_opts *o, tdm_server **out);
/* The port actually bound. */
int tdm_server_port(const tdm_server *s);
/* Nodes and patterns loaded at start, and the time the load took. */
void tdm_server_loaded(const tdm_server *s, uint64_t *nodes, uint64_t *patterns, double *seconds);
/* Stops answering (requests in flight finish), closes the store and frees everything. Accepts NULL. */
void tdm_server_stop(tdm_server *s);

/* KATO's knowledge-base id of a node id (spec/kato.md 6), the key of the node in the store: a malloc'd
 * string the caller frees with free(), or NULL without memory. */
char *tdm_server_kb_id(const char *node_id);

#ifdef __cplusplus
}
#endif
#endif
