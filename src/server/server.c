/* server.c: the HTTP side of `tandem serve` on libmicrohttpd: start-up (store, load, bind), the request
 * callback (body collected up to the size limit, bearer token checked in constant time), and the reply
 * (JSON, FastAPI's {"detail": ...} form for errors). Routing and the endpoints are in handlers.c. */
#define _POSIX_C_SOURCE 200809L
#include "server/internal.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

void tdm_server_opts_init(tdm_server_opts *o) {
    memset(o, 0, sizeof *o);
    o->host = "127.0.0.1";
    o->port = 8000;
    o->data_dir = "./tandem-data";
    o->max_body = 1u << 20;
    o->default_ttl = 3600;
    o->max_sessions = 100000;
    o->max_nodes = 4096;
}

int reply_detail(reply *r, int code, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->code = code;
    r->body.n = 0;
    sb_puts(&r->body, "{\"detail\": ");
    sb_jstr(&r->body, msg, strlen(msg));
    sb_puts(&r->body, "}");
    return 0;
}

int reply_status(reply *r, int status, const char *what) {
    int code = 500;
    switch (status) {
    case TDM_E_INVAL: case TDM_E_RANGE: case TDM_E_UTF8: case TDM_E_PARSE: case TDM_E_OVERFLOW: code = 400; break;
    case TDM_E_NOTFOUND: code = 404; break;
    case TDM_E_NOMEM: case TDM_E_BUSY: code = 503; break;
    case TDM_E_UNSUPPORTED: code = 501; break;
    default: code = 500;
    }
    const char *d = tdm_last_error();
    return reply_detail(r, code, "%s%s%s", what, *d ? ": " : "", *d ? d : tdm_strerror(status));
}

int reply_json(reply *r, int code, json_t *j) {
    r->code = code;
    r->body.n = 0;
    if (!j) return reply_detail(r, 503, "no memory to build the reply");
    sb_json(&r->body, j);
    json_decref(j);
    return 0;
}

/* ---- the request callback --------------------------------------------------------------------------------- */

typedef struct {
    sbuf body;
    int too_large;
} conn_state;

static int token_ok(const tdm_server *s, struct MHD_Connection *c) {
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (!h || strncasecmp(h, "Bearer ", 7)) return 0;
    h += 7;
    size_t a = strlen(h), b = strlen(s->token);
    unsigned char diff = a != b;
    for (size_t i = 0; i < b; i++) diff |= (unsigned char)(h[i < a ? i : 0] ^ s->token[i]); /* constant time */
    return !diff;
}

static enum MHD_Result send_reply(struct MHD_Connection *c, reply *r) {
    if (r->body.failed || !r->body.p) {
        free(r->body.p);
        r->body = (sbuf){0};
        r->code = 503;
        sb_puts(&r->body, "{\"detail\": \"no memory to build the reply\"}");
        if (r->body.failed) { /* nothing left: an empty 503 */
            free(r->body.p);
            r->body = (sbuf){0};
        }
    }
    struct MHD_Response *resp = r->body.p ? MHD_create_response_from_buffer(r->body.n, r->body.p, MHD_RESPMEM_MUST_FREE)
                                          : MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        free(r->body.p);
        return MHD_NO;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    if (r->www_auth) MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, r->www_auth);
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)r->code, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls) {
    tdm_server *s = cls;
    conn_state *st = *con_cls;
    if (!st) { /* headers only so far: refuse an announced oversized body before reading it */
        if (!(st = calloc(1, sizeof *st))) return MHD_NO;
        *con_cls = st;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > s->o.max_body) {
            reply r = {0};
            reply_detail(&r, 413, "request body of %s bytes is larger than the limit of %zu bytes (--max-body)", cl, s->o.max_body);
            atomic_fetch_add(&s->requests, 1), atomic_fetch_add(&s->errors, 1);
            return send_reply(c, &r);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        if (st->body.n + *upload_size > s->o.max_body) st->too_large = 1;
        else sb_put(&st->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    atomic_fetch_add(&s->requests, 1);
    reply r = {.code = 200};
    int open_path = !strcmp(method, "GET") && (!strcmp(url, "/health") || !strcmp(url, "/health/"));
    if (st->too_large) reply_detail(&r, 413, "request body is larger than the limit of %zu bytes (--max-body)", s->o.max_body);
    else if (st->body.failed) reply_detail(&r, 503, "no memory for the request body");
    else if (s->token && !open_path && !token_ok(s, c)) {
        reply_detail(&r, 401, "Not authenticated: send the header 'Authorization: Bearer <TANDEM_API_TOKEN>'");
        r.www_auth = "Bearer";
    } else {
        request q = {s, c, method, st->body.p ? st->body.p : "", st->body.n};
        route(&q, url, &r);
    }
    if (r.code >= 400) atomic_fetch_add(&s->errors, 1);
    return send_reply(c, &r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe) {
    conn_state *st = *con_cls;
    if (st) free(st->body.p), free(st);
    *con_cls = NULL;
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) {
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && msg[n - 1] == '\n') msg[--n] = '\0';
    tdm_log(TDM_LOG_WARN, "http: %s", msg);
}

/* ---- start and stop ---------------------------------------------------------------------------------------- */

static void server_free(tdm_server *s) {
    if (!s) return;
    if (s->mhd) MHD_stop_daemon(s->mhd);
    sessions_free(s);
    nodes_free(s);
    tdm_store_close(s->store);
    pthread_mutex_destroy(&s->nodes_mu), pthread_mutex_destroy(&s->sessions_mu);
    free(s->token), free(s->host), free(s->data_dir);
    tdm_free(s);
}

void tdm_server_stop(tdm_server *s) { server_free(s); }

int tdm_server_port(const tdm_server *s) { return s ? s->port : 0; }

void tdm_server_loaded(const tdm_server *s, uint64_t *nodes, uint64_t *patterns, double *seconds) {
    if (nodes) *nodes = s->loaded_nodes;
    if (patterns) *patterns = s->loaded_patterns;
    if (seconds) *seconds = s->load_seconds;
}

int tdm_server_start(tdm_ctx *ctx, const tdm_server_opts *o, tdm_server **out) {
    if (!ctx || !o || !out) return tdm_error(TDM_E_INVAL, "tdm_server_start: NULL argument");
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    if (!o->host || inet_pton(AF_INET, o->host, &addr.sin_addr) != 1)
        return tdm_error(TDM_E_INVAL, "listen host \"%s\": expected an IPv4 address such as 127.0.0.1", o->host ? o->host : "");
    if (o->port < 0 || o->port > 65535) return tdm_error(TDM_E_INVAL, "listen port %d: expected 0..65535", o->port);
    if (!o->data_dir || !*o->data_dir) return tdm_error(TDM_E_INVAL, "data directory: empty");
    if (!o->max_body || !o->default_ttl || !o->max_sessions || !o->max_nodes)
        return tdm_error(TDM_E_INVAL, "max_body, default_ttl, max_sessions and max_nodes must be positive");
    addr.sin_port = htons((uint16_t)o->port);
    tdm_server *s = tdm_calloc(1, sizeof *s);
    if (!s) return tdm_error(TDM_E_NOMEM, "no memory");
    s->ctx = ctx, s->o = *o;
    pthread_mutex_init(&s->nodes_mu, NULL), pthread_mutex_init(&s->sessions_mu, NULL);
    const char *token = o->api_token ? o->api_token : tdm_ctx_config(ctx)->api_token;
    s->host = strdup(o->host), s->data_dir = strdup(o->data_dir);
    if (token && *token) s->token = strdup(token);
    s->o.host = s->host, s->o.data_dir = s->data_dir, s->o.api_token = s->token;
    if (!s->host || !s->data_dir || (token && *token && !s->token)) {
        server_free(s);
        return tdm_error(TDM_E_NOMEM, "no memory");
    }
    double t0 = now_wall();
    int rc = tdm_store_open(s->data_dir, o->map_bytes, &s->store);
    if (!rc) rc = nodes_load(s);
    if (rc) {
        server_free(s);
        return rc;
    }
    s->load_seconds = now_wall() - t0;
    unsigned threads = o->threads ? o->threads : (unsigned)tdm_ctx_threads(ctx);
    if (threads > 64) threads = 64;
    if (threads < 1) threads = 1;
    s->started = now_wall();
    s->mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL_LINUX_ONLY | MHD_USE_ERROR_LOG, 0, NULL, NULL,
                              on_request, s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s, MHD_OPTION_SOCK_ADDR,
                              (struct sockaddr *)&addr, MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_NOTIFY_COMPLETED,
                              on_completed, s, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120, MHD_OPTION_CONNECTION_LIMIT,
                              (unsigned)4096, MHD_OPTION_END);
    if (!s->mhd) {
        server_free(s);
        return tdm_error(TDM_E_IO, "cannot listen on %s:%d (in use, or not an address of this machine)", o->host, o->port);
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : o->port;
    *out = s;
    return TDM_OK;
}
