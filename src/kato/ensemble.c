/* ensemble.c: the metrics that depend on the whole candidate set (spec/kato.md 3.6), in KATO's execution
 * order (pruning to 3 x max_predictions has already run in predict.c): weighted metrics, symbol probabilities over the ensemble,
 * itfdf_similarity, confluence, entropies, tfidf, predictive information, Bayesian posterior, potential;
 * then ranking and truncation. Every sum runs left to right in the candidate order (name order, or the
 * pruning's order when pruning ran) with KATO's operation order, so each double matches a Python
 * evaluation over the same order. */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t and clock_gettime under -std=c11 */
#include "kato/predict_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int contains(const uint32_t *sorted, uint32_t n, uint32_t x) {
    return n && bsearch(&x, sorted, n, sizeof x, cmp_u32) != NULL;
}

/* The present events of c as one flat span of its pattern. */
static void present_span(const kato_pred *p, const kato_cand *c, uint32_t *off, uint32_t *len) {
    uint32_t nev;
    const uint32_t *sizes = kato_event_sizes(p, c->pid, &nev);
    *off = *len = 0;
    for (uint32_t e = 0; e < c->pb; e++) *off += sizes[e];
    for (uint32_t e = c->pb; e < c->pe; e++) *len += sizes[e];
}

/* ---- ranking ------------------------------------------------------------------------------------------ */

static double rank_value(const kato_cand *c, tdm_kato_rank k) {
    switch (k) {
    case TDM_KATO_RANK_POTENTIAL: return c->potential;
    case TDM_KATO_RANK_SIMILARITY: return c->sim;
    case TDM_KATO_RANK_EVIDENCE: return c->evidence;
    case TDM_KATO_RANK_CONFIDENCE: return c->confidence;
    case TDM_KATO_RANK_SNR: return c->snr;
    case TDM_KATO_RANK_FRAGMENTATION: return c->frag;
    case TDM_KATO_RANK_FREQUENCY: return 0.0; /* read from the knowledge base by the comparator */
    case TDM_KATO_RANK_NORMALIZED_ENTROPY: return c->nentropy;
    case TDM_KATO_RANK_GLOBAL_NORMALIZED_ENTROPY: return c->gnentropy;
    case TDM_KATO_RANK_ITFDF_SIMILARITY: return c->itfdf;
    case TDM_KATO_RANK_CONFLUENCE: return c->confluence;
    case TDM_KATO_RANK_PREDICTIVE_INFORMATION: return c->pi;
    case TDM_KATO_RANK_BAYESIAN_POSTERIOR: return c->posterior;
    case TDM_KATO_RANK_BAYESIAN_PRIOR: return c->prior;
    case TDM_KATO_RANK_BAYESIAN_LIKELIHOOD: return c->likelihood;
    case TDM_KATO_RANK_TFIDF_SCORE: return c->tfidf;
    /* null weighted values rank below every number */
    case TDM_KATO_RANK_WEIGHTED_SIMILARITY: return c->has_wsim ? c->weighted_similarity : -INFINITY;
    case TDM_KATO_RANK_WEIGHTED_EVIDENCE: return c->has_weighted ? c->weighted_evidence : -INFINITY;
    case TDM_KATO_RANK_WEIGHTED_CONFIDENCE: return c->has_weighted ? c->weighted_confidence : -INFINITY;
    case TDM_KATO_RANK_WEIGHTED_SNR: return c->has_weighted ? c->weighted_snr : -INFINITY;
    default: return c->potential;
    }
}

/* A compact sort record: the key, the name's first 16 hex digits, the candidate. Sorting these rather
 * than the candidates keeps a sort of 100K candidates in cache. */
typedef struct {
    double v;
    uint64_t nk;
    uint32_t i;
} rank_rec;
static _Thread_local const kato_pred *rank_pred;

/* Key descending, then name ascending. */
static int cmp_rank(const void *a, const void *b) {
    const rank_rec *x = a, *y = b;
    if (x->v > y->v) return -1;
    if (x->v < y->v) return 1;
    if (x->nk != y->nk) return x->nk < y->nk ? -1 : 1;
    return kato_name_cmp(rank_pred->kb, rank_pred->c[x->i].pid, rank_pred->c[y->i].pid);
}

/* Sorts p->c by the rank key (descending), ties by name, and keeps the first keep. */
static int sort_keep(kato_pred *p, tdm_kato_rank key, size_t keep) {
    size_t n = p->nc, k = keep < n ? keep : n;
    rank_rec *r = tdm_malloc((n + 1) * sizeof *r);
    kato_cand *kept = tdm_malloc((k + 1) * sizeof *kept);
    if (!r || !kept) {
        tdm_free(r), tdm_free(kept);
        return tdm_error(TDM_E_NOMEM, "predict: no memory to rank %zu candidates", n);
    }
    for (size_t i = 0; i < n; i++) {
        const kato_cand *c = &p->c[i];
        r[i].v = key == TDM_KATO_RANK_FREQUENCY ? (double)p->kb->pats[c->pid].frequency : rank_value(c, key);
        r[i].nk = p->kb->pats[c->pid].name_key;
        r[i].i = (uint32_t)i;
    }
    rank_pred = p;
    qsort(r, n, sizeof *r, cmp_rank);
    for (size_t i = 0; i < k; i++) kept[i] = p->c[r[i].i];
    memcpy(p->c, kept, k * sizeof *kept);
    p->nc = k;
    tdm_free(r), tdm_free(kept);
    return TDM_OK;
}

int kato_rank(kato_pred *p, tdm_kato_rank key) { return sort_keep(p, key, p->cfg->max_predictions); }

/* ---- future groups (predictive information) --------------------------------------------------------------
 * Two futures are one group when they have as many events and each event holds the same multiset of
 * symbols (KATO hashes json.dumps of the per-event sorted futures). */

static int future_canon(const kato_pred *p, const kato_cand *c, uint32_t *buf, uint32_t *len) {
    uint32_t nev, off = 0, n = 0;
    const uint32_t *sizes = kato_event_sizes(p, c->pid, &nev);
    for (uint32_t e = 0; e < c->pe; e++) off += sizes[e];
    buf[n++] = nev - c->pe;
    for (uint32_t e = c->pe; e < nev; e++) {
        buf[n++] = sizes[e];
        memcpy(buf + n, c->P + off, sizes[e] * sizeof *buf);
        qsort(buf + n, sizes[e], sizeof *buf, cmp_u32);
        n += sizes[e], off += sizes[e];
    }
    *len = n;
    return 0;
}

static int group_futures(kato_pred *p) {
    size_t total = 0;
    for (size_t i = 0; i < p->nc; i++) total += p->c[i].np + (p->kb->pats[p->c[i].pid].nevents + 1);
    uint32_t *arena = tdm_malloc((total + 1) * sizeof *arena);
    size_t *start = tdm_malloc((p->nc + 1) * sizeof *start), cap = 16;
    uint32_t *lens = tdm_malloc((p->nc + 1) * sizeof *lens);
    while (cap < 2 * p->nc) cap *= 2;
    uint32_t *table = tdm_calloc(cap, sizeof *table); /* group+1 */
    uint64_t *ghash = tdm_malloc((p->nc + 1) * sizeof *ghash);
    p->group_first = tdm_malloc((p->nc + 1) * sizeof *p->group_first);
    p->group_w = tdm_malloc((p->nc + 1) * sizeof *p->group_w);
    p->group_count = tdm_malloc((p->nc + 1) * sizeof *p->group_count);
    p->group_pid = tdm_malloc((p->nc + 1) * sizeof *p->group_pid);
    p->group_pe = tdm_malloc((p->nc + 1) * sizeof *p->group_pe);
    int rc = TDM_OK;
    if (!arena || !start || !lens || !table || !ghash || !p->group_first || !p->group_w || !p->group_count ||
        !p->group_pid || !p->group_pe) {
        rc = tdm_error(TDM_E_NOMEM, "predict: no memory for future groups");
        goto out;
    }
    size_t at = 0;
    for (size_t i = 0; i < p->nc; i++) {
        kato_cand *c = &p->c[i];
        c->group = UINT32_MAX;
        if (c->pe >= p->kb->pats[c->pid].nevents) continue; /* no future */
        start[i] = at;
        future_canon(p, c, arena + at, &lens[i]);
        at += lens[i];
        uint64_t h = XXH3_64bits(arena + start[i], lens[i] * sizeof *arena);
        size_t slot = (size_t)h & (cap - 1);
        uint32_t g = UINT32_MAX;
        for (; table[slot]; slot = (slot + 1) & (cap - 1)) {
            uint32_t cand = table[slot] - 1;
            size_t f = p->group_first[cand];
            if (ghash[cand] == h && lens[f] == lens[i] && !memcmp(arena + start[f], arena + start[i], lens[i] * sizeof *arena)) {
                g = cand;
                break;
            }
        }
        if (g == UINT32_MAX) {
            g = p->ngroups++;
            table[slot] = g + 1;
            ghash[g] = h;
            p->group_first[g] = (uint32_t)i;
            p->group_pid[g] = c->pid, p->group_pe[g] = c->pe;
            p->group_w[g] = 0.0;
            p->group_count[g] = 0;
        }
        c->group = g;
        p->group_w[g] += (double)p->kb->pats[c->pid].frequency * c->sim;
        p->group_count[g]++;
    }
out:
    tdm_free(arena), tdm_free(start), tdm_free(lens), tdm_free(table), tdm_free(ghash);
    return rc;
}

/* ---- the ensemble ------------------------------------------------------------------------------------- */

typedef struct {
    uint8_t *cached; /* symbol in some prediction's matches or missing: has a probability */
    uint32_t *rank;  /* string order of the symbols of S and of every present */
    uint32_t *scount, *pcount;
} scratch;

static double prob(const kato_pred *p, const scratch *s, uint32_t id) {
    if (id >= p->vocab_n || !s->cached[id] || !p->kb->npats) return 0.0;
    return (double)p->kb->pmf[id] / (double)p->kb->npats;
}

static int cmp_rank_ids(const void *a, const void *b, const uint32_t *rank) {
    uint32_t x = rank[*(const uint32_t *)a], y = rank[*(const uint32_t *)b];
    return (x > y) - (x < y);
}
static _Thread_local const uint32_t *rank_tls;
static int cmp_by_rank(const void *a, const void *b) { return cmp_rank_ids(a, b, rank_tls); }

static _Thread_local const kato_pred *str_pred;
static int cmp_by_string(const void *a, const void *b) {
    const char *x, *y;
    size_t lx, ly;
    kato_sym_bytes(str_pred, *(const uint32_t *)a, &x, &lx);
    kato_sym_bytes(str_pred, *(const uint32_t *)b, &y, &ly);
    int c = memcmp(x, y, lx < ly ? lx : ly);
    return c ? c : (lx > ly) - (lx < ly);
}

/* String ranks of every symbol of S and of every candidate's present: D = sorted(set(present) | set(S)) is
 * then a sort of small integers. */
static int string_ranks(kato_pred *p, scratch *s, size_t nids) {
    uint8_t *seen = tdm_calloc(nids + 1, 1);
    size_t n = 0, cap = 64;
    uint32_t *ids = tdm_malloc(cap * sizeof *ids);
    if (!seen || !ids) goto nomem;
    for (size_t i = 0; i <= p->nc; i++) {
        const uint32_t *src;
        uint32_t len;
        if (i == p->nc) src = p->S, len = p->ns;
        else {
            uint32_t off;
            present_span(p, &p->c[i], &off, &len);
            src = p->c[i].P + off;
        }
        for (uint32_t k = 0; k < len; k++) {
            if (seen[src[k]]) continue;
            seen[src[k]] = 1;
            if (tdm_grow((void **)&ids, &cap, n + 1, sizeof *ids)) goto nomem;
            ids[n++] = src[k];
        }
    }
    str_pred = p;
    qsort(ids, n, sizeof *ids, cmp_by_string);
    for (size_t i = 0; i < n; i++) s->rank[ids[i]] = (uint32_t)i;
    tdm_free(seen), tdm_free(ids);
    return TDM_OK;
nomem:
    tdm_free(seen), tdm_free(ids);
    return tdm_error(TDM_E_NOMEM, "predict: no memory");
}

/* itfdf_similarity's cosine distance between the state and the present (spec 3.6 step 4). */
static double itfdf_distance(const kato_pred *p, const scratch *s, const uint32_t *pres, uint32_t plen, uint32_t *D) {
    uint32_t nd = 0;
    for (uint32_t k = 0; k < plen + p->ns; k++) {
        uint32_t id = k < plen ? pres[k] : p->S[k - plen];
        int dup = 0;
        for (uint32_t j = 0; j < nd && !dup; j++) dup = D[j] == id;
        if (!dup) D[nd++] = id;
    }
    rank_tls = s->rank;
    qsort(D, nd, sizeof *D, cmp_by_rank);
    double dot = 0.0, na = 0.0, nb = 0.0;
    int az = 1, bz = 1;
    for (uint32_t j = 0; j < nd; j++) {
        uint32_t cs = 0, cp = 0;
        for (uint32_t k = 0; k < p->ns; k++) cs += p->S[k] == D[j];
        for (uint32_t k = 0; k < plen; k++) cp += pres[k] == D[j];
        double pr = prob(p, s, D[j]), a = pr * (double)cs, b = pr * (double)cp;
        if (a != 0.0) az = 0;
        if (b != 0.0) bz = 0;
        dot += a * b, na += a * a, nb += b * b;
    }
    if (az || bz) return 1.0;
    double norm_a = sqrt(na), norm_b = sqrt(nb);
    if (norm_a == 0.0 || norm_b == 0.0) return 1.0;
    double dist = 1.0 - dot / (norm_a * norm_b);
    return dist != dist ? 1.0 : dist;
}

int kato_ensemble(kato_pred *p) {
    const tdm_kato_config *cfg = p->cfg;
    int rc;
    /* 0. pruning ran during extraction (predict.c) and left the candidates in its order; otherwise the
     * ensemble order is the name order */
    if (!p->pruned) kato_sort_by_name(p);
    size_t nids = (size_t)p->vocab_n + p->nunk, maxp = 0;
    for (size_t i = 0; i < p->nc; i++) maxp = p->c[i].np > maxp ? p->c[i].np : maxp;
    scratch s = {0};
    s.cached = tdm_calloc(nids + 1, 1);
    s.rank = tdm_calloc(nids + 1, sizeof *s.rank);
    uint32_t *D = tdm_malloc((maxp + p->ns + 1) * sizeof *D), *sorted = tdm_malloc((maxp + 1) * sizeof *sorted);
    uint32_t *cnt = tdm_malloc((maxp + 1) * sizeof *cnt);
    rc = TDM_OK;
    if (!s.cached || !s.rank || !D || !sorted || !cnt) {
        rc = tdm_error(TDM_E_NOMEM, "predict: no memory for the ensemble");
        goto out;
    }
    const tdm_kato_kb *kb = p->kb;
    /* 1. weighted metrics over matches, pattern, present and event extras */
    /* 3. the symbols with a probability: matches and event-aligned missing of every prediction */
    uint64_t F = 0;
    for (size_t i = 0; i < p->nc; i++) {
        kato_cand *c = &p->c[i];
        F += kb->pats[c->pid].frequency;
        memcpy(sorted, c->matches, c->nm * sizeof *sorted);
        qsort(sorted, c->nm, sizeof *sorted, cmp_u32);
        uint32_t off, plen;
        present_span(p, c, &off, &plen);
        for (uint32_t k = 0; k < c->nm; k++) s.cached[c->matches[k]] = 1;
        for (uint32_t k = 0; k < plen; k++)
            if (!contains(sorted, c->nm, c->P[off + k])) s.cached[c->P[off + k]] = 1;
        if (p->affinity) {
            double wm = 0.0, wpat = 0.0, wpres = 0.0, wx = 0.0;
            for (uint32_t k = 0; k < c->nm; k++) wm += kato_weight(p, c->matches[k]);
            for (uint32_t k = 0; k < c->np; k++) wpat += kato_weight(p, c->P[k]);
            for (uint32_t k = 0; k < plen; k++) wpres += kato_weight(p, c->P[off + k]);
            /* event extras: STM symbols not in the present, event by event (= S order) */
            memcpy(D, c->P + off, plen * sizeof *D);
            qsort(D, plen, sizeof *D, cmp_u32);
            for (uint32_t k = 0; k < p->ns; k++)
                if (!contains(D, plen, p->S[k])) wx += kato_weight(p, p->S[k]);
            c->weighted_evidence = wpat != 0.0 ? wm / wpat : 0.0;
            c->weighted_confidence = wpres != 0.0 ? wm / wpres : 0.0;
            c->weighted_snr = wm + wx != 0.0 ? wm / (wm + wx) : 0.0;
            c->has_weighted = 1;
        }
    }
    if ((rc = string_ranks(p, &s, nids))) goto out;
    /* 2. globals */
    uint64_t tpf = kb->tpf, tup = kb->npats, nsym = kb->nsym;
    double lognsym = nsym > 1 ? log((double)nsym) : 0.0;
    for (size_t i = 0; i < p->nc; i++) {
        kato_cand *c = &p->c[i];
        uint64_t f = kb->pats[c->pid].frequency;
        uint32_t off, plen;
        present_span(p, c, &off, &plen);
        const uint32_t *pres = c->P + off;
        /* 4. itfdf_similarity */
        double dist = itfdf_distance(p, &s, pres, plen, D);
        c->itfdf = F > 0 ? 1.0 - dist * (double)f / (double)F : 0.0;
        /* 5. confluence: (f/TPF) * (1 - 10^(sum of log10 p')) */
        if (plen && tpf) {
            double lsum = 0.0;
            for (uint32_t k = 0; k < plen; k++) {
                double pr = prob(p, &s, pres[k]);
                lsum += log10(pr > 0.0 ? pr : 1e-10);
            }
            c->confluence = (double)f / (double)tpf * (1.0 - pow(10.0, lsum));
        } else {
            c->confluence = 0.0;
        }
        /* 7. entropies and 8. tfidf over the present's distinct symbols in first-seen order */
        uint32_t nd = 0;
        for (uint32_t k = 0; k < plen; k++) {
            uint32_t j = 0;
            while (j < nd && D[j] != pres[k]) j++;
            if (j == nd) D[nd] = pres[k], cnt[nd++] = 0;
            cnt[j]++;
        }
        double ent = 0.0, nent = 0.0, gent = 0.0, tf = 0.0;
        for (uint32_t j = 0; j < nd; j++) {
            double q = (double)cnt[j] / (double)plen;
            ent += -(q * (log(q) / log(2.0)));
            if (nsym > 1) nent += -q * (log(q) / lognsym);
            double pr = prob(p, &s, D[j]);
            if (nsym > 1 && pr > 0.0) gent += -pr * (log(pr) / lognsym);
            if (tup) {
                double nx = D[j] < p->vocab_n ? pr * (double)tup : 1.0;
                int64_t n_x = (int64_t)nx;
                if (n_x < 1) n_x = 1;
                tf += q * (log2((double)tup / (double)n_x) + 1.0);
            }
        }
        c->entropy = ent, c->nentropy = nent, c->gnentropy = gent;
        c->tfidf = plen && tup ? tf / (double)nd : 0.0;
    }
    /* 10. predictive information and 11. Bayesian */
    if ((rc = group_futures(p))) goto out;
    double wtotal = 0.0, evidence_total = 0.0;
    for (uint32_t g = 0; g < p->ngroups; g++) wtotal += p->group_w[g];
    for (size_t i = 0; i < p->nc; i++) {
        kato_cand *c = &p->c[i];
        uint64_t f = kb->pats[c->pid].frequency;
        c->pattern_probability = F ? (double)f / (double)F : 0.0;
        c->weighted_strength = c->sim * c->pattern_probability;
        double agg = c->group != UINT32_MAX && wtotal > 0.0 ? p->group_w[c->group] / wtotal : 0.0;
        c->pi = agg > 0.0 ? c->weighted_strength / agg : 0.0;
        c->prior = F ? (double)f / (double)F : 0.0;
        c->likelihood = c->sim;
        evidence_total += c->sim * c->prior;
    }
    for (size_t i = 0; i < p->nc; i++) {
        kato_cand *c = &p->c[i];
        c->posterior = evidence_total > 0.0 ? c->sim * c->prior / evidence_total : 0.0;
        /* 12. potential */
        double t = c->frag == -1.0 ? 0.0 : 1.0 / (c->frag + 1.0);
        if (p->affinity) c->potential = (c->weighted_evidence + c->weighted_confidence) * c->weighted_snr + c->itfdf + t;
        else c->potential = (c->evidence + c->confidence) * c->snr + c->itfdf + t;
    }
    /* 13. rank and truncate */
    rc = kato_rank(p, cfg->rank_sort_algo);
out:
    tdm_free(s.cached), tdm_free(s.rank), tdm_free(D), tdm_free(sorted), tdm_free(cnt);
    return rc;
}
