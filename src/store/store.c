/* store.c: the durable store of KATO knowledge bases on LMDB (include/tandem/store.h). LMDB is chosen by
 * the project (docs/design): its transactions are atomic and, with the default sync flags, on disk when
 * mdb_txn_commit returns, and its copy-on-write B-trees cannot be left half-written by a crash. One learn =
 * one write transaction holding the pattern record, the records of the pattern's distinct symbols and the
 * node record with the totals; loading walks the records of a node in key order, which is pattern-index
 * order, and restores them through tdm_kato_kb_restore_* (src/kato/kb_persist.c). */
#define _POSIX_C_SOURCE 200809L /* flock needs _DEFAULT_SOURCE below */
#define _DEFAULT_SOURCE
#include "tandem/store.h"

#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "store/codec.h"

#define FORMAT_VERSION 1u
#define PROGRESS_EVERY 100000

struct tdm_store {
    MDB_env *env;
    MDB_dbi meta, nodes, pats, syms;
    int lockfd;
    char *dir;
    MDB_txn *batch; /* an open bulk-load transaction, or NULL */
};

static int mdb_fail(int mrc, const char *what) {
    if (mrc == MDB_MAP_FULL)
        return tdm_error(TDM_E_IO, "%s: the store reached its map size (restart with a larger --map-size)", what);
    return tdm_error(TDM_E_IO, "%s: %s", what, mdb_strerror(mrc));
}

static int mkdir_p(const char *dir) {
    char *p = tdm_strndup(dir, strlen(dir));
    if (!p) return -1;
    for (char *c = p + 1; *c; c++)
        if (*c == '/') {
            *c = '\0';
            if (mkdir(p, 0755) && errno != EEXIST) return tdm_free(p), -1;
            *c = '/';
        }
    int rc = mkdir(p, 0755) && errno != EEXIST ? -1 : 0;
    tdm_free(p);
    return rc;
}

const char *tdm_store_dir(const tdm_store *s) { return s ? s->dir : ""; }

void tdm_store_close(tdm_store *s) {
    if (!s) return;
    if (s->batch) mdb_txn_abort(s->batch);
    if (s->env) mdb_env_close(s->env);
    if (s->lockfd >= 0) close(s->lockfd); /* releases the flock */
    tdm_free(s->dir);
    tdm_free(s);
}

/* Checks or writes the format version (a fresh store gets the current one). */
static int check_version(tdm_store *s) {
    MDB_txn *txn;
    int mrc = mdb_txn_begin(s->env, NULL, 0, &txn);
    if (mrc) return mdb_fail(mrc, "store: begin");
    MDB_val k = {7, "version"}, v;
    mrc = mdb_get(txn, s->meta, &k, &v);
    if (mrc == MDB_NOTFOUND) {
        unsigned char b[4] = {FORMAT_VERSION & 0xff, 0, 0, 0};
        v.mv_size = 4, v.mv_data = b;
        if ((mrc = mdb_put(txn, s->meta, &k, &v, 0))) {
            mdb_txn_abort(txn);
            return mdb_fail(mrc, "store: write the format version");
        }
        return (mrc = mdb_txn_commit(txn)) ? mdb_fail(mrc, "store: write the format version") : TDM_OK;
    }
    if (mrc) {
        mdb_txn_abort(txn);
        return mdb_fail(mrc, "store: read the format version");
    }
    dec d = {v.mv_data, v.mv_size, 0, 0};
    uint32_t ver = dec_u32(&d);
    mdb_txn_abort(txn);
    if (d.bad || ver != FORMAT_VERSION)
        return tdm_error(TDM_E_VERSION, "store %s: format version %u, this build reads %u", s->dir, ver, FORMAT_VERSION);
    return TDM_OK;
}

int tdm_store_open(const char *dir, uint64_t map_bytes, tdm_store **out) {
    if (!dir || !*dir || !out) return tdm_error(TDM_E_INVAL, "tdm_store_open: NULL or empty argument");
    if (mkdir_p(dir)) return tdm_error(TDM_E_IO, "data directory %s: %s", dir, strerror(errno));
    tdm_store *s = tdm_calloc(1, sizeof *s);
    if (!s || !(s->dir = tdm_strndup(dir, strlen(dir)))) {
        tdm_free(s);
        return tdm_error(TDM_E_NOMEM, "tdm_store_open: no memory");
    }
    s->lockfd = -1;
    /* LMDB allows several processes on one environment, but each would keep its own knowledge bases in
     * memory and they would drift apart: one process per directory */
    char path[4096];
    snprintf(path, sizeof path, "%s/tandem.lock", dir);
    s->lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (s->lockfd < 0) {
        int e = errno;
        tdm_store_close(s);
        return tdm_error(TDM_E_IO, "%s: %s", path, strerror(e));
    }
    if (flock(s->lockfd, LOCK_EX | LOCK_NB)) {
        tdm_store_close(s);
        return tdm_error(TDM_E_BUSY, "data directory %s is in use by another process", dir);
    }
    int mrc, rc;
    MDB_txn *txn = NULL;
    /* the default map is large (it is address space, not disk) and is halved down to 1 GiB where the
     * address space is limited (ulimit -v, valgrind); a map size the caller gave is used as it is */
    for (uint64_t map = map_bytes ? map_bytes : 64ull << 30;; map /= 2) {
        if ((mrc = mdb_env_create(&s->env))) goto fail;
        if ((mrc = mdb_env_set_mapsize(s->env, (size_t)map)) || (mrc = mdb_env_set_maxdbs(s->env, 8)) ||
            (mrc = mdb_env_set_maxreaders(s->env, 256)))
            goto fail;
        /* NOTLS: read transactions are not tied to threads (the service's pool threads come and go) */
        if (!(mrc = mdb_env_open(s->env, dir, MDB_NOTLS, 0644))) break;
        mdb_env_close(s->env);
        s->env = NULL;
        if (map_bytes || map <= 1ull << 30 || (mrc != EINVAL && mrc != ENOMEM)) goto fail;
    }
    if ((mrc = mdb_txn_begin(s->env, NULL, 0, &txn))) goto fail;
    if ((mrc = mdb_dbi_open(txn, "meta", MDB_CREATE, &s->meta)) || (mrc = mdb_dbi_open(txn, "nodes", MDB_CREATE, &s->nodes)) ||
        (mrc = mdb_dbi_open(txn, "patterns", MDB_CREATE, &s->pats)) || (mrc = mdb_dbi_open(txn, "symbols", MDB_CREATE, &s->syms)))
        goto fail;
    mrc = mdb_txn_commit(txn);
    txn = NULL;
    if (mrc) goto fail;
    rc = check_version(s);
    if (rc) {
        tdm_store_close(s);
        return rc;
    }
    *out = s;
    return TDM_OK;
fail:
    if (txn) mdb_txn_abort(txn);
    rc = mdb_fail(mrc, dir);
    tdm_store_close(s);
    return rc;
}

/* ---- node records: u32 number, u64 patterns, tpf, tspf, symbols, str node_id ------------------------- */

typedef struct {
    uint32_t no;
    tdm_kato_kb_totals t;
    const char *node_id;
    size_t node_id_len;
} node_rec;

static int node_decode(const MDB_val *v, node_rec *r) {
    dec d = {v->mv_data, v->mv_size, 0, 0};
    r->no = dec_u32(&d);
    r->t.patterns = dec_u64(&d), r->t.total_pattern_frequencies = dec_u64(&d);
    r->t.total_symbols_in_patterns_frequencies = dec_u64(&d), r->t.symbols = dec_u64(&d);
    r->node_id = dec_str(&d, &r->node_id_len);
    return d.bad ? -1 : 0;
}

static void key8(unsigned char k[8], uint32_t no, uint32_t index) {
    for (int i = 0; i < 4; i++) k[i] = (unsigned char)(no >> (24 - 8 * i)), k[4 + i] = (unsigned char)(index >> (24 - 8 * i));
}

void tdm_store_nodes_free(tdm_store_node *nodes, size_t n) {
    for (size_t i = 0; nodes && i < n; i++) tdm_free(nodes[i].kb_id), tdm_free(nodes[i].node_id);
    tdm_free(nodes);
}

int tdm_store_nodes(tdm_store *s, tdm_store_node **out, size_t *n) {
    if (!s || !out || !n) return tdm_error(TDM_E_INVAL, "tdm_store_nodes: NULL argument");
    *out = NULL, *n = 0;
    MDB_txn *txn;
    MDB_cursor *c;
    int mrc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn);
    if (mrc) return mdb_fail(mrc, "store: list nodes");
    if ((mrc = mdb_cursor_open(txn, s->nodes, &c))) {
        mdb_txn_abort(txn);
        return mdb_fail(mrc, "store: list nodes");
    }
    tdm_store_node *list = NULL;
    size_t cnt = 0, cap = 0;
    int rc = TDM_OK;
    MDB_val k, v;
    for (mrc = mdb_cursor_get(c, &k, &v, MDB_FIRST); !mrc; mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        node_rec r;
        if (node_decode(&v, &r)) {
            rc = tdm_error(TDM_E_CORRUPT, "store: node record %.*s is damaged", (int)(k.mv_size > 60 ? 60 : k.mv_size), (char *)k.mv_data);
            break;
        }
        if (tdm_grow((void **)&list, &cap, cnt + 1, sizeof *list)) {
            rc = tdm_error(TDM_E_NOMEM, "store: no memory");
            break;
        }
        list[cnt].kb_id = tdm_strndup(k.mv_data, k.mv_size);
        list[cnt].node_id = tdm_strndup(r.node_id, r.node_id_len);
        list[cnt].patterns = r.t.patterns;
        cnt++;
        if (!list[cnt - 1].kb_id || !list[cnt - 1].node_id) {
            rc = tdm_error(TDM_E_NOMEM, "store: no memory");
            break;
        }
    }
    if (!rc && mrc != MDB_NOTFOUND) rc = mdb_fail(mrc, "store: list nodes");
    mdb_cursor_close(c);
    mdb_txn_abort(txn);
    if (rc) {
        tdm_store_nodes_free(list, cnt);
        return rc;
    }
    *out = list, *n = cnt;
    return TDM_OK;
}

/* ---- pattern records: name[40], u64 frequency, u32 nevents, u32 sizes..., u32 nsyms, str syms...,
 *      u32 ndicts, u32 dict sizes..., (str key, f64 value) entries..., u32 nmeta, (str key, u32 n, str
 *      values...)... ------------------------------------------------------------------------------------ */

static void pattern_encode(enc *e, const tdm_kato_pattern *p) {
    enc_bytes(e, p->name, TDM_KATO_NAME_LEN);
    enc_u64(e, p->frequency);
    enc_u32(e, (uint32_t)p->nevents);
    for (size_t i = 0; i < p->nevents; i++) enc_u32(e, (uint32_t)p->event_sizes[i]);
    enc_u32(e, (uint32_t)p->nsyms);
    for (size_t i = 0; i < p->nsyms; i++) enc_str(e, p->syms[i], p->sym_lens[i]);
    size_t nent = 0, nval = 0;
    enc_u32(e, (uint32_t)p->nemotive_dicts);
    for (size_t d = 0; d < p->nemotive_dicts; d++) enc_u32(e, (uint32_t)p->emotive_sizes[d]), nent += p->emotive_sizes[d];
    for (size_t i = 0; i < nent; i++) enc_str(e, p->emotives[i].key, strlen(p->emotives[i].key)), enc_f64(e, p->emotives[i].value);
    enc_u32(e, (uint32_t)p->nmeta);
    for (size_t m = 0; m < p->nmeta; m++) {
        enc_str(e, p->meta_keys[m], strlen(p->meta_keys[m]));
        enc_u32(e, (uint32_t)p->meta_nvalues[m]);
        for (size_t v = 0; v < p->meta_nvalues[m]; v++, nval++) enc_str(e, p->meta_values[nval], strlen(p->meta_values[nval]));
    }
}

/* Scratch space reused across decoded patterns: arrays sized by the record, strings copied with a NUL. */
typedef struct {
    char *arena;
    size_t arena_cap, at;
    size_t *sizes, *lens, *dsizes, *nvals;
    char **syms, **mkeys, **mvals;
    tdm_kato_emotive *emo;
    size_t cap_items;
} scratch;

static void scratch_free(scratch *s) {
    tdm_free(s->arena), tdm_free(s->sizes), tdm_free(s->lens), tdm_free(s->dsizes), tdm_free(s->nvals);
    tdm_free(s->syms), tdm_free(s->mkeys), tdm_free(s->mvals), tdm_free(s->emo);
}

static char *scratch_str(scratch *s, const char *p, size_t n) {
    char *r = s->arena + s->at;
    memcpy(r, p, n);
    r[n] = '\0';
    s->at += n + 1;
    return r;
}

/* Decodes one record into p (pointers into s). -1 for a damaged record, -2 without memory. */
static int pattern_decode(const MDB_val *v, scratch *s, tdm_kato_pattern *p) {
    /* every item takes at least 4 bytes, so counts are bounded by the record's size; each string's NUL
     * adds at most one byte per 4 */
    size_t items = v->mv_size / 4 + 2, arena = v->mv_size + items + 1;
    if (arena > s->arena_cap) {
        char *a = tdm_realloc(s->arena, arena);
        if (!a) return -2;
        s->arena = a, s->arena_cap = arena;
    }
    if (items > s->cap_items) {
        size_t c = items * 2;
#define GROW(f) do { void *q = tdm_realloc(s->f, c * sizeof *s->f); if (!q) return -2; s->f = q; } while (0)
        GROW(sizes); GROW(lens); GROW(dsizes); GROW(nvals); GROW(syms); GROW(mkeys); GROW(mvals); GROW(emo);
#undef GROW
        s->cap_items = c;
    }
    s->at = 0;
    memset(p, 0, sizeof *p);
    dec d = {v->mv_data, v->mv_size, 0, 0};
    const unsigned char *name = dec_take(&d, TDM_KATO_NAME_LEN);
    if (!name) return -1;
    memcpy(p->name, name, TDM_KATO_NAME_LEN);
    p->name[TDM_KATO_NAME_LEN] = '\0';
    p->frequency = dec_u64(&d);
    p->nevents = dec_u32(&d);
    if (p->nevents > items) return -1;
    p->event_sizes = s->sizes;
    for (size_t i = 0; i < p->nevents; i++) s->sizes[i] = dec_u32(&d);
    p->nsyms = dec_u32(&d);
    if (p->nsyms > items) return -1;
    p->syms = s->syms, p->sym_lens = s->lens;
    for (size_t i = 0; i < p->nsyms && !d.bad; i++) {
        const char *str = dec_str(&d, &s->lens[i]);
        if (str) s->syms[i] = scratch_str(s, str, s->lens[i]);
    }
    p->nemotive_dicts = dec_u32(&d);
    if (p->nemotive_dicts > items) return -1;
    p->emotive_sizes = s->dsizes, p->emotives = s->emo;
    size_t nent = 0, nval = 0;
    for (size_t i = 0; i < p->nemotive_dicts; i++) nent += s->dsizes[i] = dec_u32(&d);
    if (nent > items) return -1;
    for (size_t i = 0; i < nent && !d.bad; i++) {
        size_t n;
        const char *k = dec_str(&d, &n);
        if (k) s->emo[i].key = scratch_str(s, k, n);
        s->emo[i].value = dec_f64(&d);
    }
    p->nmeta = dec_u32(&d);
    if (p->nmeta > items) return -1;
    p->meta_keys = s->mkeys, p->meta_nvalues = s->nvals, p->meta_values = s->mvals;
    for (size_t m = 0; m < p->nmeta && !d.bad; m++) {
        size_t n;
        const char *k = dec_str(&d, &n);
        if (k) s->mkeys[m] = scratch_str(s, k, n);
        s->nvals[m] = dec_u32(&d);
        if (nval + s->nvals[m] > items) return -1;
        for (size_t j = 0; j < s->nvals[m] && !d.bad; j++, nval++) {
            const char *val = dec_str(&d, &n);
            if (val) s->mvals[nval] = scratch_str(s, val, n);
        }
    }
    return d.bad || d.at != d.n ? -1 : 0;
}

/* ---- symbol records: u64 frequency, u64 pmf, u32 n, (str key, f64 sum)..., str symbol ---------------- */

static void symbol_key(unsigned char k[20], uint32_t no, const char *sym, size_t len) {
    XXH128_hash_t h = XXH3_128bits(sym, len);
    key8(k, no, 0);
    for (int i = 0; i < 8; i++) k[4 + i] = (unsigned char)(h.high64 >> (56 - 8 * i)), k[12 + i] = (unsigned char)(h.low64 >> (56 - 8 * i));
}

static void symbol_encode(enc *e, const tdm_kato_symbol *y) {
    enc_u64(e, y->frequency);
    enc_u64(e, y->pattern_member_frequency);
    enc_u32(e, (uint32_t)y->naff);
    for (size_t i = 0; i < y->naff; i++) enc_str(e, y->aff_keys[i], strlen(y->aff_keys[i])), enc_f64(e, y->aff_values[i]);
    enc_str(e, y->sym, y->len);
}

/* The symbol's bytes of a record (for the collision check). */
static const char *symbol_bytes(const MDB_val *v, size_t *len) {
    dec d = {v->mv_data, v->mv_size, 0, 0};
    dec_u64(&d), dec_u64(&d);
    uint32_t n = dec_u32(&d);
    for (uint32_t i = 0; i < n && !d.bad; i++) {
        size_t kl;
        dec_str(&d, &kl);
        dec_f64(&d);
    }
    const char *s = dec_str(&d, len);
    return d.bad ? NULL : s;
}

/* ---- load --------------------------------------------------------------------------------------------- */

static int load_symbols(tdm_store *s, MDB_txn *txn, uint32_t no, const char *kb_id, tdm_kato_kb *kb) {
    MDB_cursor *c;
    int mrc = mdb_cursor_open(txn, s->syms, &c), rc = TDM_OK;
    if (mrc) return mdb_fail(mrc, "store: load symbols");
    unsigned char kb8[8];
    key8(kb8, no, 0);
    MDB_val k = {4, kb8}, v;
    char **keys = NULL;
    double *sums = NULL;
    size_t cap = 0;
    for (mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); !mrc && k.mv_size == 20 && !memcmp(k.mv_data, kb8, 4);
         mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        dec d = {v.mv_data, v.mv_size, 0, 0};
        tdm_kato_symbol y = {0}; /* borrows the record's bytes and the key arrays: restore only reads it */
        y.frequency = dec_u64(&d), y.pattern_member_frequency = dec_u64(&d);
        y.naff = dec_u32(&d);
        if (y.naff > v.mv_size / 4) d.bad = 1;
        if (!d.bad && y.naff + 1 > cap) {
            size_t c2 = y.naff + 1;
            char **k2 = tdm_realloc(keys, c2 * sizeof *k2);
            if (k2) keys = k2;
            double *s2 = tdm_realloc(sums, c2 * sizeof *s2);
            if (s2) sums = s2;
            if (!k2 || !s2) {
                rc = tdm_error(TDM_E_NOMEM, "store: no memory");
                break;
            }
            cap = c2;
        }
        for (size_t i = 0; i < y.naff && !d.bad; i++) {
            size_t n;
            const char *key = dec_str(&d, &n);
            keys[i] = key ? tdm_strndup(key, n) : NULL;
            if (key && !keys[i]) d.bad = 2;
            sums[i] = dec_f64(&d);
        }
        const char *sym = dec_str(&d, &y.len);
        y.sym = (char *)sym, y.aff_keys = keys, y.aff_values = sums;
        if (!d.bad && d.at == d.n) rc = tdm_kato_kb_restore_symbol(kb, &y);
        else rc = d.bad == 2 ? tdm_error(TDM_E_NOMEM, "store: no memory") : tdm_error(TDM_E_CORRUPT, "store %s: a symbol record of node %s is damaged", s->dir, kb_id);
        for (size_t i = 0; i < y.naff && i < cap; i++) tdm_free(keys[i]), keys[i] = NULL;
        if (rc) break;
    }
    if (!rc && mrc && mrc != MDB_NOTFOUND) rc = mdb_fail(mrc, "store: load symbols");
    tdm_free(keys), tdm_free(sums);
    mdb_cursor_close(c);
    return rc;
}

int tdm_store_load(tdm_store *s, const char *kb_id, tdm_kato_kb *kb, tdm_store_progress_fn progress, void *user) {
    if (!s || !kb_id || !kb) return tdm_error(TDM_E_INVAL, "tdm_store_load: NULL argument");
    if (tdm_kato_kb_count(kb)) return tdm_error(TDM_E_INVAL, "tdm_store_load: the knowledge base is not empty");
    MDB_txn *txn;
    int mrc = mdb_txn_begin(s->env, NULL, MDB_RDONLY, &txn), rc = TDM_OK;
    if (mrc) return mdb_fail(mrc, "store: load");
    MDB_val k = {strlen(kb_id), (void *)kb_id}, v;
    node_rec nr;
    if ((mrc = mdb_get(txn, s->nodes, &k, &v))) {
        mdb_txn_abort(txn);
        return mrc == MDB_NOTFOUND ? TDM_OK : mdb_fail(mrc, "store: load");
    }
    if (node_decode(&v, &nr)) {
        mdb_txn_abort(txn);
        return tdm_error(TDM_E_CORRUPT, "store %s: node record %s is damaged", s->dir, kb_id);
    }
    MDB_cursor *c;
    if ((mrc = mdb_cursor_open(txn, s->pats, &c))) {
        mdb_txn_abort(txn);
        return mdb_fail(mrc, "store: load");
    }
    scratch sc = {0};
    unsigned char k8[8];
    key8(k8, nr.no, 0);
    k.mv_size = 8, k.mv_data = k8;
    uint64_t done = 0;
    for (mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); !mrc && k.mv_size == 8 && !memcmp(k.mv_data, k8, 4);
         mrc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        const unsigned char *kb8 = k.mv_data;
        uint32_t index = (uint32_t)kb8[4] << 24 | (uint32_t)kb8[5] << 16 | (uint32_t)kb8[6] << 8 | kb8[7];
        tdm_kato_pattern p;
        int drc = pattern_decode(&v, &sc, &p);
        if (drc == -2) rc = tdm_error(TDM_E_NOMEM, "store: no memory");
        else if (drc || index != done)
            rc = tdm_error(TDM_E_CORRUPT, "store %s: node %s: pattern record %u is %s", s->dir, kb_id, index, drc ? "damaged" : "out of sequence");
        else rc = tdm_kato_kb_restore_pattern(kb, &p);
        if (rc) break;
        if (++done % PROGRESS_EVERY == 0 && progress) progress(kb_id, done, nr.t.patterns, user);
    }
    if (!rc && mrc && mrc != MDB_NOTFOUND) rc = mdb_fail(mrc, "store: load patterns");
    mdb_cursor_close(c);
    scratch_free(&sc);
    if (!rc && done != nr.t.patterns)
        rc = tdm_error(TDM_E_CORRUPT, "store %s: node %s holds %llu pattern records, its totals say %llu", s->dir, kb_id,
                       (unsigned long long)done, (unsigned long long)nr.t.patterns);
    if (!rc) rc = load_symbols(s, txn, nr.no, kb_id, kb);
    if (!rc) rc = tdm_kato_kb_restore_totals(kb, &nr.t);
    mdb_txn_abort(txn);
    if (!rc && progress) progress(kb_id, done, nr.t.patterns, user);
    return rc;
}

/* ---- save --------------------------------------------------------------------------------------------- */

/* The node record of kb_id inside txn, made (with a new number) when missing. */
static int node_get_or_make(tdm_store *s, MDB_txn *txn, const char *kb_id, uint32_t *no) {
    MDB_val k = {strlen(kb_id), (void *)kb_id}, v;
    int mrc = mdb_get(txn, s->nodes, &k, &v);
    if (!mrc) {
        node_rec r;
        if (node_decode(&v, &r)) return tdm_error(TDM_E_CORRUPT, "store %s: node record %s is damaged", s->dir, kb_id);
        *no = r.no;
        return TDM_OK;
    }
    if (mrc != MDB_NOTFOUND) return mdb_fail(mrc, "store: node");
    MDB_val mk = {9, "next_node"}, mv;
    uint32_t next = 1;
    if (!(mrc = mdb_get(txn, s->meta, &mk, &mv))) {
        dec d = {mv.mv_data, mv.mv_size, 0, 0};
        next = dec_u32(&d);
        if (d.bad) return tdm_error(TDM_E_CORRUPT, "store %s: next_node record damaged", s->dir);
    } else if (mrc != MDB_NOTFOUND) return mdb_fail(mrc, "store: node");
    unsigned char b[4] = {(unsigned char)((next + 1)), (unsigned char)((next + 1) >> 8), (unsigned char)((next + 1) >> 16),
                          (unsigned char)((next + 1) >> 24)};
    mv.mv_size = 4, mv.mv_data = b;
    if ((mrc = mdb_put(txn, s->meta, &mk, &mv, 0))) return mdb_fail(mrc, "store: node");
    *no = next;
    return TDM_OK;
}

/* ---- prepared records ------------------------------------------------------------------------------------
 * Preparing reads what learns changed out of the knowledge base (while the caller keeps it from changing)
 * into encoded records; writing puts them into one transaction and commits. The split lets the service
 * read under its learn lock and wait for the disk outside it, and put several learns in one commit. */

typedef struct {
    unsigned char key[20]; /* without the node number: pattern index (4) or symbol hash (16) */
    size_t klen;
    int sym;               /* 1 = symbols database, 0 = patterns */
    size_t off, len;       /* value bytes in the buffer */
    const char *sym_bytes; /* symbol records: the symbol (inside the buffer) for the collision check */
    size_t sym_len;
} rec;

struct tdm_store_pending {
    char *kb_id, *node_id;
    enc buf;
    rec *recs;
    size_t nrecs, caprecs;
    tdm_kato_kb_totals totals;
};

void tdm_store_pending_free(tdm_store_pending *p) {
    if (!p) return;
    tdm_free(p->kb_id), tdm_free(p->node_id), tdm_free(p->buf.p), tdm_free(p->recs);
    tdm_free(p);
}

static rec *add_rec(tdm_store_pending *p, int sym, size_t start) {
    if (tdm_grow((void **)&p->recs, &p->caprecs, p->nrecs + 1, sizeof *p->recs)) return NULL;
    rec *r = &p->recs[p->nrecs++];
    memset(r, 0, sizeof *r);
    r->sym = sym, r->off = start, r->len = p->buf.n - start;
    return r;
}

static int has_sym_rec(const tdm_store_pending *p, const unsigned char h[16]) {
    for (size_t i = 0; i < p->nrecs; i++)
        if (p->recs[i].sym && !memcmp(p->recs[i].key, h, 16)) return 1;
    return 0;
}

/* The records of one pattern and its symbols (already prepared symbols are skipped). */
static int prepare_one(tdm_store_pending *pp, tdm_kato_kb *kb, const char *name) {
    uint32_t index;
    int rc = tdm_kato_kb_find(kb, name, &index);
    if (rc) return rc;
    /* the same pattern learned twice in one batch: its record (read now, the latest state) is there */
    for (size_t i = 0; i < pp->nrecs; i++) {
        const unsigned char *k = pp->recs[i].key;
        uint32_t at = (uint32_t)k[0] << 24 | (uint32_t)k[1] << 16 | (uint32_t)k[2] << 8 | k[3];
        if (!pp->recs[i].sym && at == index) return TDM_OK;
    }
    tdm_kato_pattern p;
    if ((rc = tdm_kato_kb_get(kb, index, &p))) return rc;
    size_t start = pp->buf.n;
    pattern_encode(&pp->buf, &p);
    rec *r = pp->buf.failed ? NULL : add_rec(pp, 0, start);
    if (!r) goto nomem;
    r->klen = 4;
    for (int b = 0; b < 4; b++) r->key[b] = (unsigned char)(index >> (24 - 8 * b));
    for (size_t i = 0; i < p.nsyms; i++) {
        unsigned char k20[20];
        symbol_key(k20, 0, p.syms[i], p.sym_lens[i]);
        if (has_sym_rec(pp, k20 + 4)) continue;
        tdm_kato_symbol y;
        if ((rc = tdm_kato_kb_symbol_find(kb, p.syms[i], p.sym_lens[i], &y))) goto out;
        start = pp->buf.n;
        symbol_encode(&pp->buf, &y);
        tdm_kato_symbol_free(&y);
        if (pp->buf.failed || !(r = add_rec(pp, 1, start))) goto nomem;
        r->klen = 16;
        memcpy(r->key, k20 + 4, 16);
        r->sym_len = p.sym_lens[i]; /* the symbol is the record's last bytes */
    }
    goto out;
nomem:
    rc = tdm_error(TDM_E_NOMEM, "store: no memory");
out:
    tdm_kato_pattern_free(&p);
    return rc;
}

int tdm_store_prepare(tdm_store *s, const char *kb_id, const char *node_id, tdm_kato_kb *kb, const char *const *names, size_t n,
                      tdm_store_pending **out) {
    if (!s || !kb_id || !node_id || !kb || (n && !names) || !out) return tdm_error(TDM_E_INVAL, "tdm_store_prepare: NULL argument");
    tdm_store_pending *p = tdm_calloc(1, sizeof *p);
    if (!p || !(p->kb_id = tdm_strndup(kb_id, strlen(kb_id))) || !(p->node_id = tdm_strndup(node_id, strlen(node_id)))) {
        tdm_store_pending_free(p);
        return tdm_error(TDM_E_NOMEM, "store: no memory");
    }
    int rc = TDM_OK;
    for (size_t i = 0; i < n && !rc; i++) rc = prepare_one(p, kb, names[i]);
    if (rc) {
        tdm_store_pending_free(p);
        return rc;
    }
    tdm_kato_kb_totals_get(kb, &p->totals);
    *out = p;
    return TDM_OK;
}

int tdm_store_write(tdm_store *s, tdm_store_pending *p) {
    if (!s || !p) return tdm_error(TDM_E_INVAL, "tdm_store_write: NULL argument");
    MDB_txn *txn = NULL;
    uint32_t no = 0;
    int rc = TDM_OK, mrc = 0;
    enc e = {0};
    if (s->batch) txn = s->batch;
    else if ((mrc = mdb_txn_begin(s->env, NULL, 0, &txn))) {
        rc = mdb_fail(mrc, "store: begin a learn");
        goto out;
    }
    if ((rc = node_get_or_make(s, txn, p->kb_id, &no))) goto out;
    for (size_t i = 0; i < p->nrecs; i++) {
        const rec *r = &p->recs[i];
        unsigned char key[20];
        key8(key, no, 0);
        memcpy(key + 4, r->key, r->klen);
        MDB_val k = {4 + r->klen, key}, v;
        if (r->sym) { /* another symbol under the same 128-bit hash would be overwritten: refuse */
            const char *sym = (const char *)p->buf.p + r->off + r->len - r->sym_len;
            if (!(mrc = mdb_get(txn, s->syms, &k, &v))) {
                size_t len;
                const char *old = symbol_bytes(&v, &len);
                if (!old || len != r->sym_len || memcmp(old, sym, len)) {
                    rc = tdm_error(TDM_E_CORRUPT, "store: symbol \"%.40s\" shares its 128-bit hash with another stored symbol", sym);
                    goto out;
                }
            } else if (mrc != MDB_NOTFOUND) {
                rc = mdb_fail(mrc, "store: symbol");
                goto out;
            }
        }
        v.mv_size = r->len, v.mv_data = p->buf.p + r->off;
        if ((mrc = mdb_put(txn, r->sym ? s->syms : s->pats, &k, &v, 0))) {
            rc = mdb_fail(mrc, r->sym ? "store: symbol" : "store: pattern");
            goto out;
        }
    }
    enc_u32(&e, no);
    enc_u64(&e, p->totals.patterns), enc_u64(&e, p->totals.total_pattern_frequencies);
    enc_u64(&e, p->totals.total_symbols_in_patterns_frequencies), enc_u64(&e, p->totals.symbols);
    enc_str(&e, p->node_id, strlen(p->node_id));
    if (e.failed) {
        rc = tdm_error(TDM_E_NOMEM, "store: no memory");
        goto out;
    }
    MDB_val k = {strlen(p->kb_id), p->kb_id}, v = {e.n, e.p};
    if ((mrc = mdb_put(txn, s->nodes, &k, &v, 0))) {
        rc = mdb_fail(mrc, "store: node");
        goto out;
    }
    if (s->batch) {
        txn = NULL; /* committed with the batch */
        goto out;
    }
    mrc = mdb_txn_commit(txn);
    txn = NULL;
    if (mrc) rc = mdb_fail(mrc, "store: commit a learn");
out:
    if (txn) mdb_txn_abort(txn);
    if (txn && txn == s->batch) s->batch = NULL; /* a failed save ends the batch */
    tdm_free(e.p);
    tdm_store_pending_free(p);
    return rc;
}

int tdm_store_save_learn(tdm_store *s, const char *kb_id, const char *node_id, tdm_kato_kb *kb, const char *name) {
    tdm_store_pending *p;
    int rc = tdm_store_prepare(s, kb_id, node_id, kb, &name, name ? 1 : 0, &p);
    return rc ? rc : tdm_store_write(s, p);
}

static int delete_prefix(MDB_txn *txn, MDB_dbi dbi, const unsigned char pre[4]) {
    MDB_cursor *c;
    int mrc = mdb_cursor_open(txn, dbi, &c);
    if (mrc) return mrc;
    MDB_val k = {4, (void *)pre}, v;
    for (mrc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE); !mrc && k.mv_size >= 4 && !memcmp(k.mv_data, pre, 4);
         mrc = mdb_cursor_get(c, &k, &v, MDB_GET_CURRENT)) {
        if ((mrc = mdb_cursor_del(c, 0))) break;
    }
    mdb_cursor_close(c);
    return mrc == MDB_NOTFOUND || mrc == EINVAL ? 0 : mrc;
}

int tdm_store_clear(tdm_store *s, const char *kb_id) {
    if (!s || !kb_id) return tdm_error(TDM_E_INVAL, "tdm_store_clear: NULL argument");
    MDB_txn *txn;
    int mrc = mdb_txn_begin(s->env, NULL, 0, &txn);
    if (mrc) return mdb_fail(mrc, "store: clear");
    MDB_val k = {strlen(kb_id), (void *)kb_id}, v;
    mrc = mdb_get(txn, s->nodes, &k, &v);
    if (mrc == MDB_NOTFOUND) {
        mdb_txn_abort(txn);
        return TDM_OK;
    }
    node_rec r;
    if (mrc || node_decode(&v, &r)) {
        mdb_txn_abort(txn);
        return mrc ? mdb_fail(mrc, "store: clear") : tdm_error(TDM_E_CORRUPT, "store: node record %s is damaged", kb_id);
    }
    unsigned char pre[8];
    key8(pre, r.no, 0);
    if ((mrc = delete_prefix(txn, s->pats, pre)) || (mrc = delete_prefix(txn, s->syms, pre)) ||
        (mrc = mdb_del(txn, s->nodes, &k, NULL))) {
        mdb_txn_abort(txn);
        return mdb_fail(mrc, "store: clear");
    }
    /* a failed commit frees the transaction too */
    return (mrc = mdb_txn_commit(txn)) ? mdb_fail(mrc, "store: clear") : TDM_OK;
}

int tdm_store_set_durable(tdm_store *s, int durable) {
    if (!s) return tdm_error(TDM_E_INVAL, "tdm_store_set_durable: NULL argument");
    int mrc = mdb_env_set_flags(s->env, MDB_NOSYNC, durable ? 0 : 1);
    if (mrc) return mdb_fail(mrc, "store: sync mode");
    return durable ? tdm_store_sync(s) : TDM_OK;
}

int tdm_store_sync(tdm_store *s) {
    if (!s) return tdm_error(TDM_E_INVAL, "tdm_store_sync: NULL argument");
    int mrc = mdb_env_sync(s->env, 1);
    return mrc ? mdb_fail(mrc, "store: sync") : TDM_OK;
}

int tdm_store_batch_begin(tdm_store *s) {
    if (!s) return tdm_error(TDM_E_INVAL, "tdm_store_batch_begin: NULL argument");
    if (s->batch) return tdm_error(TDM_E_BUSY, "store: a batch is already open");
    int mrc = mdb_txn_begin(s->env, NULL, 0, &s->batch);
    if (mrc) s->batch = NULL;
    return mrc ? mdb_fail(mrc, "store: begin a batch") : TDM_OK;
}

int tdm_store_batch_commit(tdm_store *s) {
    if (!s || !s->batch) return tdm_error(TDM_E_INVAL, "tdm_store_batch_commit: no batch is open");
    int mrc = mdb_txn_commit(s->batch);
    s->batch = NULL;
    return mrc ? mdb_fail(mrc, "store: commit a batch") : TDM_OK;
}
