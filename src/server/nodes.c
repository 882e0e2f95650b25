/* nodes.c: the service's nodes. A node id maps to KATO's knowledge-base id (spec/kato.md 6: unsafe
 * characters to '_', "_kato" appended, long ids cut with an MD5 suffix), so node ids that KATO would
 * store together share a knowledge base here too. Each node owns a knowledge base and its place in the
 * durable store; a learn is committed before it is answered, and if the commit fails the node is reloaded
 * from the store so that what is served never runs ahead of what is on disk. */
#define _POSIX_C_SOURCE 200809L
#include "server/internal.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BASE_ID "kato" /* KATO's base processor id */
#define KB_ID_MAX 60   /* KATO keeps database names to 60 characters */

/* Code points in UTF-8 text (valid input assumed: jansson checks it). */
static size_t cp_len(const char *s) {
    size_t n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Byte length of the first max code points of s. */
static size_t cp_prefix(const char *s, size_t max) {
    size_t n = 0, i = 0;
    for (; s[i]; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80 && n++ == max) break;
    }
    return i;
}

char *kb_id_of(const char *node_id) {
    size_t len = strlen(node_id);
    char *safe = malloc(len + 1);
    if (!safe) return NULL;
    for (size_t i = 0; i <= len; i++) safe[i] = node_id[i] && strchr("/\\.\"$*<>:|?- ", node_id[i]) ? '_' : node_id[i];
    size_t cap = len + sizeof BASE_ID + 16;
    char *out = malloc(cap);
    if (!out) return free(safe), NULL;
    if (cp_len(safe) + 1 + strlen(BASE_ID) <= KB_ID_MAX) {
        snprintf(out, cap, "%s_%s", safe, BASE_ID);
    } else {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int mdlen = 0;
        EVP_Digest(safe, len, md, &mdlen, EVP_md5(), NULL);
        size_t keep = cp_prefix(safe, KB_ID_MAX - strlen(BASE_ID) - 1 - 8 - 1);
        snprintf(out, cap, "%.*s_%02x%02x%02x%02x_%s", (int)keep, safe, md[0], md[1], md[2], md[3], BASE_ID);
    }
    free(safe);
    return out;
}

char *tdm_server_kb_id(const char *node_id) { return node_id ? kb_id_of(node_id) : NULL; }

static size_t nbucket(const char *kb_id) {
    uint64_t h = 1469598103934665603ull;
    for (const unsigned char *p = (const unsigned char *)kb_id; *p; p++) h = (h ^ *p) * 1099511628211ull;
    return (size_t)(h % NODE_BUCKETS);
}

static void node_free(node *nd) {
    tdm_kato_kb_free(nd->kb);
    pthread_rwlock_destroy(&nd->rw);
    pthread_mutex_destroy(&nd->learn_mu);
    pthread_mutex_destroy(&nd->commit_mu);
    tdm_free(nd->queue);
    free(nd->node_id), free(nd->kb_id);
    tdm_free(nd);
}

static node *node_new(tdm_server *s, const char *node_id, const char *kb_id, int *rc) {
    node *nd = tdm_calloc(1, sizeof *nd);
    if (!nd) return *rc = tdm_error(TDM_E_NOMEM, "no memory for a node"), NULL;
    pthread_rwlock_init(&nd->rw, NULL);
    pthread_mutex_init(&nd->learn_mu, NULL);
    pthread_mutex_init(&nd->commit_mu, NULL);
    nd->node_id = strdup(node_id), nd->kb_id = strdup(kb_id);
    if (!nd->node_id || !nd->kb_id) {
        node_free(nd);
        return *rc = tdm_error(TDM_E_NOMEM, "no memory for a node"), NULL;
    }
    if ((*rc = tdm_kato_kb_new(s->ctx, &nd->kb))) {
        node_free(nd);
        return NULL;
    }
    return nd;
}

/* The node of kb_id (table lock held), or NULL. */
static node *find_locked(tdm_server *s, const char *kb_id) {
    node *nd = s->nodes[nbucket(kb_id)];
    while (nd && strcmp(nd->kb_id, kb_id)) nd = nd->next;
    return nd;
}

static void insert_locked(tdm_server *s, node *nd) {
    size_t b = nbucket(nd->kb_id);
    nd->next = s->nodes[b], s->nodes[b] = nd, s->nnodes++;
}

int node_get(tdm_server *s, const char *node_id, int create, node **out) {
    char *kb_id = kb_id_of(node_id);
    if (!kb_id) return tdm_error(TDM_E_NOMEM, "no memory");
    int rc = TDM_OK;
    pthread_mutex_lock(&s->nodes_mu);
    node *nd = find_locked(s, kb_id);
    if (!nd && !create) rc = tdm_error(TDM_E_NOTFOUND, "node %.200s has no knowledge base", node_id);
    else if (!nd && s->nnodes >= s->o.max_nodes)
        rc = tdm_error(TDM_E_BUSY, "%u nodes exist, the most this server keeps (--max-nodes)", s->o.max_nodes);
    else if (!nd && (nd = node_new(s, node_id, kb_id, &rc))) insert_locked(s, nd);
    pthread_mutex_unlock(&s->nodes_mu);
    free(kb_id);
    if (!rc) *out = nd;
    return rc;
}

typedef struct {
    tdm_server *s;
    double t0;
} progress_ctx;

static void progress(const char *kb_id, uint64_t done, uint64_t total, void *user) {
    progress_ctx *p = user;
    if (p->s->o.quiet || total < 100000) return;
    fprintf(stderr, "tandem serve: loading %s: %llu/%llu patterns (%.0f%%, %.1f s)\n", kb_id, (unsigned long long)done,
            (unsigned long long)total, total ? 100.0 * (double)done / (double)total : 100.0, now_wall() - p->t0);
}

int nodes_load(tdm_server *s) {
    tdm_store_node *list;
    size_t n;
    int rc = tdm_store_nodes(s->store, &list, &n);
    if (rc) return rc;
    progress_ctx pc = {s, now_wall()};
    for (size_t i = 0; i < n && !rc; i++) {
        node *nd = node_new(s, list[i].node_id, list[i].kb_id, &rc);
        if (!nd) break;
        if ((rc = tdm_store_load(s->store, nd->kb_id, nd->kb, progress, &pc))) {
            node_free(nd);
            break;
        }
        insert_locked(s, nd);
        s->loaded_nodes++;
        s->loaded_patterns += tdm_kato_kb_count(nd->kb);
    }
    tdm_store_nodes_free(list, n);
    return rc;
}

void nodes_free(tdm_server *s) {
    for (size_t b = 0; b < NODE_BUCKETS; b++)
        for (node *nd = s->nodes[b], *nx; nd; nd = nx) {
            nx = nd->next;
            node_free(nd);
        }
    memset(s->nodes, 0, sizeof s->nodes);
}

uint64_t nodes_patterns(tdm_server *s, uint32_t *count) {
    uint64_t total = 0;
    pthread_mutex_lock(&s->nodes_mu);
    for (size_t b = 0; b < NODE_BUCKETS; b++)
        for (node *nd = s->nodes[b]; nd; nd = nd->next) {
            pthread_rwlock_rdlock(&nd->rw);
            total += tdm_kato_kb_count(nd->kb);
            pthread_rwlock_unlock(&nd->rw);
        }
    if (count) *count = s->nnodes;
    pthread_mutex_unlock(&s->nodes_mu);
    return total;
}

/* Replaces nd->kb by a fresh one loaded from the store (learn_mu held). */
static int reload(tdm_server *s, node *nd) {
    tdm_kato_kb *kb;
    int rc = tdm_kato_kb_new(s->ctx, &kb);
    if (!rc) rc = tdm_store_load(s->store, nd->kb_id, kb, NULL, NULL);
    if (rc) {
        tdm_kato_kb_free(kb);
        return rc;
    }
    pthread_rwlock_wrlock(&nd->rw);
    tdm_kato_kb *old = nd->kb;
    nd->kb = kb;
    pthread_rwlock_unlock(&nd->rw);
    tdm_kato_kb_free(old);
    return TDM_OK;
}

int node_queue_reserve(node *nd) {
    if (tdm_grow((void **)&nd->queue, &nd->capqueue, nd->nqueue + 1, sizeof *nd->queue))
        return tdm_error(TDM_E_NOMEM, "no memory to queue a learn");
    return TDM_OK;
}

void node_queue(node *nd, const char *name, waiter *w) {
    memcpy(nd->queue[nd->nqueue++], name, TDM_KATO_NAME_LEN + 1);
    memset(w, 0, sizeof *w);
    w->next = nd->waiters, nd->waiters = w;
}

/* Tells every registered learner the outcome (learn_mu held). */
static void resolve_locked(node *nd, int rc, const char *msg) {
    for (waiter *w = nd->waiters, *nx; w; w = nx) {
        nx = w->next;
        w->rc = rc, w->done = 1;
        snprintf(w->msg, sizeof w->msg, "%s", msg ? msg : "");
    }
    nd->waiters = NULL;
}

/* One group commit (commit_mu held). */
static void commit_queue(tdm_server *s, node *nd) {
    pthread_mutex_lock(&nd->learn_mu);
    if (!nd->nqueue && !nd->waiters) { /* nothing to write */
        pthread_mutex_unlock(&nd->learn_mu);
        return;
    }
    const char **names = tdm_malloc((nd->nqueue + 1) * sizeof *names);
    tdm_store_pending *p = NULL;
    int rc = names ? TDM_OK : tdm_error(TDM_E_NOMEM, "no memory for a commit");
    for (size_t i = 0; names && i < nd->nqueue; i++) names[i] = nd->queue[i];
    if (!rc) rc = tdm_store_prepare(s->store, nd->kb_id, nd->node_id, nd->kb, names, nd->nqueue, &p);
    tdm_free(names);
    /* the learners queued so far are this commit's; later ones wait for the next */
    waiter *mine = nd->waiters;
    nd->waiters = NULL, nd->nqueue = 0;
    pthread_mutex_unlock(&nd->learn_mu);
    if (!rc) rc = tdm_store_write(s->store, p); /* the disk wait, with learn_mu free */
    char msg[256] = "";
    if (rc) snprintf(msg, sizeof msg, "the learn was not stored: %s", tdm_last_error());
    pthread_mutex_lock(&nd->learn_mu);
    if (rc) {
        /* memory is ahead of the disk: go back to what the disk holds, which also undoes the learns queued
         * meanwhile, so they fail too */
        tdm_log(TDM_LOG_ERROR, "node %s: %s; reloading the node from the store", nd->kb_id, msg);
        int rrc = reload(s, nd);
        if (rrc) tdm_log(TDM_LOG_ERROR, "node %s: reload failed too: %s", nd->kb_id, tdm_last_error());
        resolve_locked(nd, rc, msg);
        nd->nqueue = 0;
    }
    waiter *later = nd->waiters;
    nd->waiters = mine;
    resolve_locked(nd, rc, msg);
    nd->waiters = later;
    pthread_mutex_unlock(&nd->learn_mu);
}

int node_commit_wait(tdm_server *s, node *nd, waiter *w) {
    pthread_mutex_lock(&nd->commit_mu);
    while (!w->done) commit_queue(s, nd); /* w is queued: this commit or an earlier one resolves it */
    pthread_mutex_unlock(&nd->commit_mu);
    return w->rc ? tdm_error(w->rc, "%s", w->msg) : TDM_OK;
}

int node_clear(tdm_server *s, node *nd) {
    tdm_kato_kb *kb;
    int rc = tdm_kato_kb_new(s->ctx, &kb);
    if (rc) return rc;
    pthread_mutex_lock(&nd->commit_mu);
    commit_queue(s, nd); /* learns made before the clear are answered first */
    pthread_mutex_lock(&nd->learn_mu);
    rc = tdm_store_clear(s->store, nd->kb_id);
    if (!rc) {
        pthread_rwlock_wrlock(&nd->rw);
        tdm_kato_kb *old = nd->kb;
        nd->kb = kb, kb = old;
        pthread_rwlock_unlock(&nd->rw);
    }
    pthread_mutex_unlock(&nd->learn_mu);
    pthread_mutex_unlock(&nd->commit_mu);
    tdm_kato_kb_free(kb);
    return rc;
}
