/* vocab.c: the vocabulary, symbol strings to dense uint32 ids in first-seen order. Strings live in one
 * arena, ids in an open-addressing table keyed by XXH3; each symbol's code points are kept beside it so
 * the character metric never decodes UTF-8 on the query path. */
#include "seq/seq_internal.h"

#include <string.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

int tdm_seq_vocab_new(tdm_seq_vocab **out) {
    tdm_seq_vocab *v = tdm_calloc(1, sizeof *v);
    if (!v) return tdm_error(TDM_E_NOMEM, "tdm_seq_vocab_new: no memory");
    v->tcap = 64;
    v->table = tdm_calloc(v->tcap, sizeof *v->table);
    v->capoff = v->capcpoff = 17;
    v->caphash = 16;
    v->off = tdm_calloc(v->capoff, sizeof *v->off);
    v->cpoff = tdm_calloc(v->capcpoff, sizeof *v->cpoff);
    v->hash = tdm_calloc(v->caphash, sizeof *v->hash);
    if (!v->table || !v->off || !v->cpoff || !v->hash) {
        tdm_seq_vocab_free(v);
        return tdm_error(TDM_E_NOMEM, "tdm_seq_vocab_new: no memory");
    }
    *out = v;
    return TDM_OK;
}

void tdm_seq_vocab_free(tdm_seq_vocab *v) {
    if (!v) return;
    tdm_free(v->bytes);
    tdm_free(v->off);
    tdm_free(v->cpoff);
    tdm_free(v->cps);
    tdm_free(v->table);
    tdm_free(v->hash);
    tdm_free(v);
}

uint32_t tdm_seq_vocab_size(const tdm_seq_vocab *v) { return v->n; }

static int equal_at(const tdm_seq_vocab *v, uint32_t id, const char *s, size_t len) {
    return v->off[id + 1] - v->off[id] == len && memcmp(v->bytes + v->off[id], s, len) == 0;
}

/* Table position holding s, or the empty position where it would go. */
static size_t probe(const tdm_seq_vocab *v, uint64_t h, const char *s, size_t len) {
    size_t p = (size_t)h & (v->tcap - 1);
    while (v->table[p] && !(v->hash[v->table[p] - 1] == h && equal_at(v, v->table[p] - 1, s, len)))
        p = (p + 1) & (v->tcap - 1);
    return p;
}

int tdm_seq_vocab_find(const tdm_seq_vocab *v, const char *s, size_t len, uint32_t *id) {
    size_t p = probe(v, XXH3_64bits(s, len), s, len);
    if (!v->table[p]) return TDM_E_NOTFOUND;
    *id = v->table[p] - 1;
    return TDM_OK;
}

static int grow_table(tdm_seq_vocab *v) {
    size_t ncap = v->tcap * 2;
    uint32_t *t = tdm_calloc(ncap, sizeof *t);
    if (!t) return -1;
    for (uint32_t id = 0; id < v->n; id++) {
        size_t p = (size_t)v->hash[id] & (ncap - 1);
        while (t[p]) p = (p + 1) & (ncap - 1);
        t[p] = id + 1;
    }
    tdm_free(v->table);
    v->table = t;
    v->tcap = ncap;
    return 0;
}

int tdm_seq_vocab_intern(tdm_seq_vocab *v, const char *s, size_t len, uint32_t *id) {
    uint64_t h = XXH3_64bits(s, len);
    size_t p = probe(v, h, s, len);
    if (v->table[p]) {
        *id = v->table[p] - 1;
        return TDM_OK;
    }
    int rc = tdm_seq_utf8_check(s, len);
    if (rc) return rc;
    if (v->n >= UINT32_MAX - 1)
        return tdm_error(TDM_E_OVERFLOW, "vocabulary full (%u symbols)", v->n);
    if (tdm_grow((void **)&v->hash, &v->caphash, (size_t)v->n + 1, sizeof *v->hash) ||
        tdm_grow((void **)&v->off, &v->capoff, (size_t)v->n + 2, sizeof *v->off) ||
        tdm_grow((void **)&v->cpoff, &v->capcpoff, (size_t)v->n + 2, sizeof *v->cpoff))
        return tdm_error(TDM_E_NOMEM, "vocabulary: no memory for %u symbols", v->n + 1);
    if (tdm_grow((void **)&v->bytes, &v->capbytes, v->nbytes + len + 1, 1) ||
        tdm_grow((void **)&v->cps, &v->capcps, v->ncps + len + 1, sizeof *v->cps))
        return tdm_error(TDM_E_NOMEM, "vocabulary: no memory for symbol bytes");
    if ((v->n + 1) * 2 > v->tcap) {
        if (grow_table(v)) return tdm_error(TDM_E_NOMEM, "vocabulary: no memory for the table");
        p = probe(v, h, s, len);
    }
    memcpy(v->bytes + v->nbytes, s, len);
    v->nbytes += len;
    v->ncps += tdm_seq_utf8_decode(s, len, v->cps + v->ncps);
    uint32_t nid = v->n++;
    v->off[nid + 1] = v->nbytes;
    v->cpoff[nid + 1] = v->ncps;
    v->hash[nid] = h;
    v->table[p] = nid + 1;
    *id = nid;
    return TDM_OK;
}

int tdm_seq_vocab_get(const tdm_seq_vocab *v, uint32_t id, const char **s, size_t *len) {
    if (id >= v->n) return tdm_error(TDM_E_RANGE, "symbol id %u out of range (vocabulary of %u)", id, v->n);
    *s = v->bytes + v->off[id];
    *len = v->off[id + 1] - v->off[id];
    return TDM_OK;
}

int tdm_seq_vocab_codepoints(const tdm_seq_vocab *v, uint32_t id, const uint32_t **cps, size_t *n) {
    if (id >= v->n) return tdm_error(TDM_E_RANGE, "symbol id %u out of range (vocabulary of %u)", id, v->n);
    *cps = v->cps + v->cpoff[id];
    *n = v->cpoff[id + 1] - v->cpoff[id];
    return TDM_OK;
}

size_t tdm_seq_joined_length(const tdm_seq_vocab *v, const uint32_t *ids, size_t n) {
    size_t total = n ? n - 1 : 0;
    for (size_t i = 0; i < n; i++) total += v->cpoff[ids[i] + 1] - v->cpoff[ids[i]];
    return total;
}

size_t tdm_seq_joined_write(const tdm_seq_vocab *v, const uint32_t *ids, size_t n, uint32_t *out) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (i) out[k++] = ' ';
        size_t c0 = v->cpoff[ids[i]], c1 = v->cpoff[ids[i] + 1];
        memcpy(out + k, v->cps + c0, (c1 - c0) * sizeof *out);
        k += c1 - c0;
    }
    return k;
}
