/* lcs.c: the bit-parallel longest common subsequence (Allison-Dix / Hyyro: one bit per symbol of the
 * fixed side, 64 per machine word, multi-word with carries for any length) and KATO's ratio formulas.
 * The fixed side is prepared once (tdm_seq_lcsq) so that a query scans millions of patterns, touching
 * only the pattern symbols that occur in the query. */
#include "seq/seq_internal.h"

#include <string.h>

double tdm_seq_lcs_ratio(size_t lcs, size_t na, size_t nb) { return tdm_seq_ratio_lcs(lcs, na, nb); }

double tdm_seq_char_ratio(size_t lcs, size_t na, size_t nb) { return tdm_seq_ratio_char(lcs, na, nb); }

double tdm_seq_difflib_ratio(size_t matches, size_t na, size_t nb) { return tdm_seq_ratio_difflib(matches, na, nb); }

void tdm_seq_valset_clear(tdm_seq_valset *vs) {
    tdm_free(vs->keys);
    tdm_free(vs->slots);
    memset(vs, 0, sizeof *vs);
}

int tdm_seq_valset_build(tdm_seq_valset *vs, const uint32_t *vals, size_t n, int skip_unknown) {
    memset(vs, 0, sizeof *vs);
    size_t size = 16;
    while (size < 2 * n) size *= 2;
    vs->keys = tdm_malloc(size * sizeof *vs->keys);
    vs->slots = tdm_calloc(size, sizeof *vs->slots);
    if (!vs->keys || !vs->slots) {
        tdm_seq_valset_clear(vs);
        return tdm_error(TDM_E_NOMEM, "no memory for a query of %zu symbols", n);
    }
    vs->mask = (uint32_t)(size - 1);
    for (size_t i = 0; i < n; i++) {
        uint32_t v = vals[i];
        if (skip_unknown && v == TDM_SEQ_UNKNOWN) continue;
        uint32_t h = tdm_seq_valset_hash(v), p = h & vs->mask;
        while (vs->slots[p] && vs->keys[p] != v) p = (p + 1) & vs->mask;
        if (vs->slots[p]) continue;
        vs->keys[p] = v;
        vs->slots[p] = ++vs->nslots;
        vs->bitmap[(h >> 6) & 1023] |= 1ull << (h & 63);
    }
    return TDM_OK;
}

void tdm_seq_lcsq_clear(tdm_seq_lcsq *q) {
    tdm_seq_valset_clear(&q->set);
    tdm_free(q->masks);
    tdm_free(q->count);
    memset(q, 0, sizeof *q);
}

int tdm_seq_lcsq_build(tdm_seq_lcsq *q, const uint32_t *vals, size_t n, int skip_unknown) {
    memset(q, 0, sizeof *q);
    int rc = tdm_seq_valset_build(&q->set, vals, n, skip_unknown);
    if (rc) return rc;
    q->len = n;
    q->words = n ? (n + 63) / 64 : 1;
    size_t ns = q->set.nslots ? q->set.nslots : 1;
    q->masks = tdm_calloc(ns * q->words, sizeof *q->masks);
    q->count = tdm_calloc(ns, sizeof *q->count);
    if (!q->masks || !q->count) {
        tdm_seq_lcsq_clear(q);
        return tdm_error(TDM_E_NOMEM, "no memory for a query of %zu symbols", n);
    }
    for (size_t i = 0; i < n; i++) {
        int64_t s = skip_unknown && vals[i] == TDM_SEQ_UNKNOWN ? -1 : tdm_seq_valset_find(&q->set, vals[i]);
        if (s < 0) continue;
        q->masks[(size_t)s * q->words + i / 64] |= 1ull << (i % 64);
        q->count[s]++;
    }
    return TDM_OK;
}

size_t tdm_seq_lcsq_run(const tdm_seq_lcsq *q, const uint32_t *slots, size_t n, uint64_t *V) {
    size_t W = q->words;
    if (W == 1) return tdm_seq_lcsq_word(q, slots, n);
    for (size_t w = 0; w < W; w++) V[w] = ~0ull;
    for (size_t k = 0; k < n; k++) {
        const uint64_t *M = q->masks + (size_t)slots[k] * W;
        uint64_t carry = 0;
        for (size_t w = 0; w < W; w++) {
            uint64_t v = V[w], u = v & M[w];
            uint64_t t = v + u, sum = t + carry;
            carry = (t < v) | (sum < t);
            V[w] = sum | (v - u);
        }
    }
    size_t lcs = 0;
    for (size_t w = 0; w < W; w++) {
        uint64_t live = (w + 1) * 64 <= q->len ? ~0ull : ((1ull << (q->len % 64)) - 1);
        lcs += (size_t)__builtin_popcountll(~V[w] & live);
    }
    return lcs;
}

int tdm_seq_lcs_length(const uint32_t *a, size_t na, const uint32_t *b, size_t nb, size_t *len) {
    if ((na && !a) || (nb && !b) || !len) return tdm_error(TDM_E_INVAL, "tdm_seq_lcs_length: NULL argument");
    if (nb < na) { /* fewer bit-vector words on the shorter side */
        const uint32_t *t = a;
        a = b, b = t;
        size_t tn = na;
        na = nb, nb = tn;
    }
    if (na == 0) return *len = 0, TDM_OK;
    tdm_seq_lcsq q;
    int rc = tdm_seq_lcsq_build(&q, a, na, 0);
    if (rc) return rc;
    uint32_t *slots = tdm_malloc(nb * sizeof *slots);
    uint64_t *V = tdm_malloc(q.words * sizeof *V);
    if (!slots || !V) {
        tdm_free(slots);
        tdm_free(V);
        tdm_seq_lcsq_clear(&q);
        return tdm_error(TDM_E_NOMEM, "tdm_seq_lcs_length: no memory");
    }
    size_t k = 0;
    for (size_t j = 0; j < nb; j++) {
        int64_t s = tdm_seq_valset_find(&q.set, b[j]);
        if (s >= 0) slots[k++] = (uint32_t)s;
    }
    *len = tdm_seq_lcsq_run(&q, slots, k, V);
    tdm_free(slots);
    tdm_free(V);
    tdm_seq_lcsq_clear(&q);
    return TDM_OK;
}
