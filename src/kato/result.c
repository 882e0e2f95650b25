/* result.c: turns the working state of a prediction call into a self-contained result: every symbol
 * the predictions mention is copied into the result's own table (so a result outlives learns and the
 * knowledge base), lists of events become (symbols, sizes) arrays, the event-aligned missing and extras
 * are built (spec/kato.md 3.5 step 5), and emotives are averaged over each pattern's stored window. */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t and clock_gettime under -std=c11 */
#include "kato/predict_internal.h"

#include <stdlib.h>
#include <string.h>

struct tdm_kato_result {
    tdm_kato_prediction *preds;
    size_t n;
    tdm_kato_future_potential *fut;
    size_t nfut;
    char *bytes;                /* the symbol table: symbol i is bytes[off[i] .. off[i+1]) */
    size_t nbytes, capbytes;
    size_t *off;
    size_t nsym, capoff;
    void **blocks;              /* every array handed out, freed with the result */
    size_t nblocks, capblocks;
    tdm_kato_predict_stats stats;
};

/* Building state: work id -> result symbol, and emotive key -> result symbol. */
typedef struct {
    tdm_kato_result *r;
    const kato_pred *p;
    uint32_t *map;      /* work id -> index+1 (0 = not yet) */
    uint32_t *emomap;   /* emotive key -> index+1 */
} builder;

static void *keep(tdm_kato_result *r, size_t bytes) {
    void *b = tdm_malloc(bytes ? bytes : 1);
    if (!b) return NULL;
    if (tdm_grow((void **)&r->blocks, &r->capblocks, r->nblocks + 1, sizeof *r->blocks)) {
        tdm_free(b);
        return NULL;
    }
    return r->blocks[r->nblocks++] = b;
}

static int add_string(tdm_kato_result *r, const char *s, size_t len, uint32_t *out) {
    if (tdm_grow((void **)&r->bytes, &r->capbytes, r->nbytes + len + 1, 1) ||
        tdm_grow((void **)&r->off, &r->capoff, r->nsym + 2, sizeof *r->off))
        return -1;
    if (r->nsym == 0) r->off[0] = 0;
    memcpy(r->bytes + r->nbytes, s, len);
    r->nbytes += len;
    r->bytes[r->nbytes] = '\0'; /* keeps each string readable as C text too */
    r->nbytes++;
    r->off[r->nsym + 1] = r->nbytes;
    *out = (uint32_t)r->nsym++;
    return 0;
}

static int sym(builder *b, uint32_t id, tdm_kato_sym *out) {
    if (!b->map[id]) {
        const char *s;
        size_t len;
        uint32_t k;
        kato_sym_bytes(b->p, id, &s, &len);
        if (add_string(b->r, s, len, &k)) return -1;
        b->map[id] = k + 1;
    }
    *out = b->map[id] - 1;
    return 0;
}

/* An events list from nevents event sizes over the flat work ids src. */
static int events(builder *b, const uint32_t *src, const uint32_t *sizes, uint32_t nevents, int flat, tdm_kato_events *out) {
    uint32_t n = 0;
    for (uint32_t e = 0; e < nevents; e++) n += sizes[e];
    tdm_kato_sym *s = keep(b->r, n * sizeof *s);
    uint32_t *z = keep(b->r, (nevents ? nevents : 1) * sizeof *z);
    if (!s || !z) return -1;
    for (uint32_t i = 0; i < n; i++)
        if (sym(b, src[i], &s[i])) return -1;
    if (flat) z[0] = n;
    else memcpy(z, sizes, nevents * sizeof *z);
    out->syms = s, out->sizes = z, out->nevents = flat ? 1 : nevents, out->nsyms = n, out->flat = flat;
    return 0;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int one(builder *b, const kato_cand *c, tdm_kato_prediction *o) {
    const kato_pred *p = b->p;
    const kato_pat *pat = &p->kb->pats[c->pid];
    const uint32_t *sizes = pat->event_sizes;
    uint32_t nev = pat->nevents, off_pb = 0, off_pe = 0;
    for (uint32_t e = 0; e < c->pb; e++) off_pb += sizes[e];
    off_pe = off_pb;
    for (uint32_t e = c->pb; e < c->pe; e++) off_pe += sizes[e];
    memset(o, 0, sizeof *o);
    memcpy(o->name, pat->name, sizeof o->name);
    o->pattern = c->pid;
    o->frequency = pat->frequency;
    o->similarity = c->sim, o->evidence = c->evidence, o->confidence = c->confidence, o->snr = c->snr;
    o->fragmentation = c->frag, o->potential = c->potential;
    if (c->has_wsim) o->weighted_similarity = c->weighted_similarity, o->flags |= TDM_KATO_HAS_WEIGHTED_SIMILARITY;
    tdm_kato_sym *m = keep(b->r, c->nm * sizeof *m);
    if (!m) return -1;
    for (uint32_t i = 0; i < c->nm; i++)
        if (sym(b, c->matches[i], &m[i])) return -1;
    o->matches = m, o->nmatches = c->nm;
    if (p->fast) { /* flat past/present/future; no missing or extras */
        uint32_t zero = 0, one1 = 1, rest = c->np - 1;
        if (events(b, c->P, &zero, 1, 1, &o->past) || events(b, c->P, &one1, 1, 1, &o->present) ||
            events(b, c->P + 1, &rest, 1, 1, &o->future) || events(b, c->P, &zero, 1, 1, &o->missing) ||
            events(b, c->P, &zero, 1, 1, &o->extras) || events(b, c->P, sizes, nev, 0, &o->sequence))
            return -1;
    } else {
        o->flags |= TDM_KATO_HAS_ENSEMBLE;
        if (p->pruned) o->flags |= TDM_KATO_HAS_PRE_POTENTIAL, o->pre_potential = c->pre_potential;
        if (c->has_weighted) {
            o->flags |= TDM_KATO_HAS_WEIGHTED;
            o->weighted_evidence = c->weighted_evidence, o->weighted_confidence = c->weighted_confidence;
            o->weighted_snr = c->weighted_snr;
        }
        o->confluence = c->confluence, o->predictive_information = c->pi, o->entropy = c->entropy;
        o->normalized_entropy = c->nentropy, o->global_normalized_entropy = c->gnentropy;
        o->itfdf_similarity = c->itfdf, o->tfidf_score = c->tfidf, o->pattern_probability = c->pattern_probability;
        o->weighted_strength = c->weighted_strength, o->bayesian_posterior = c->posterior;
        o->bayesian_prior = c->prior, o->bayesian_likelihood = c->likelihood;
        if (events(b, c->P, sizes, c->pb, 0, &o->past) || events(b, c->P + off_pb, sizes + c->pb, c->pe - c->pb, 0, &o->present) ||
            events(b, c->P + off_pe, sizes + c->pe, nev - c->pe, 0, &o->future) || events(b, c->P, sizes, nev, 0, &o->sequence))
            return -1;
        /* event-aligned missing: present symbols not among the matches; extras: STM symbols not in the
         * present (membership tests, duplicates kept as they occur) */
        uint32_t plen = off_pe - off_pb, nmiss = 0, nx = 0;
        uint32_t *ms = tdm_malloc((c->nm + 1) * sizeof *ms), *ps = tdm_malloc((plen + 1) * sizeof *ps);
        uint32_t *miss = tdm_malloc((plen + 1) * sizeof *miss), *msz = tdm_malloc((c->pe - c->pb + 1) * sizeof *msz);
        uint32_t *ex = tdm_malloc((p->ns + 1) * sizeof *ex), *xsz = tdm_malloc((p->nstm + 1) * sizeof *xsz);
        int bad = !ms || !ps || !miss || !msz || !ex || !xsz;
        if (!bad) {
            memcpy(ms, c->matches, c->nm * sizeof *ms);
            qsort(ms, c->nm, sizeof *ms, cmp_u32);
            memcpy(ps, c->P + off_pb, plen * sizeof *ps);
            qsort(ps, plen, sizeof *ps, cmp_u32);
            for (uint32_t e = c->pb, at = off_pb; e < c->pe; e++) {
                msz[e - c->pb] = 0;
                for (uint32_t k = 0; k < sizes[e]; k++, at++)
                    if (!(c->nm && bsearch(&c->P[at], ms, c->nm, sizeof *ms, cmp_u32)))
                        miss[nmiss++] = c->P[at], msz[e - c->pb]++;
            }
            for (uint32_t e = 0, at = 0; e < p->nstm; e++) {
                xsz[e] = 0;
                for (uint32_t k = 0; k < p->stm_sizes[e]; k++, at++)
                    if (!(plen && bsearch(&p->S[at], ps, plen, sizeof *ps, cmp_u32))) ex[nx++] = p->S[at], xsz[e]++;
            }
            bad = events(b, miss, msz, c->pe - c->pb, 0, &o->missing) || events(b, ex, xsz, p->nstm, 0, &o->extras);
        }
        tdm_free(ms), tdm_free(ps), tdm_free(miss), tdm_free(msz), tdm_free(ex), tdm_free(xsz);
        if (bad) return -1;
    }
    /* emotives: average_emotives over the stored window */
    uint32_t total = 0;
    for (uint32_t d = 0; d < pat->ndicts; d++) total += pat->dsize[d];
    uint32_t *keys = keep(b->r, total * sizeof *keys);
    double *vals = keep(b->r, total * sizeof *vals);
    if (!keys || !vals) return -1;
    o->nemotives = kato_average_emotives(pat->ndicts, pat->dsize, pat->ekeys, pat->evals, keys, vals);
    for (uint32_t k = 0; k < o->nemotives; k++) {
        uint32_t ek = keys[k];
        if (!b->emomap[ek]) {
            uint32_t idx;
            const char *name = p->kb->emokeys[ek];
            if (add_string(b->r, name, strlen(name), &idx)) return -1;
            b->emomap[ek] = idx + 1;
        }
        keys[k] = b->emomap[ek] - 1;
    }
    o->emotive_keys = keys, o->emotive_values = vals;
    return 0;
}

static int cmp_fut(const void *a, const void *b) {
    const tdm_kato_future_potential *x = a, *y = b;
    if (x->aggregate_potential > y->aggregate_potential) return -1;
    if (x->aggregate_potential < y->aggregate_potential) return 1;
    return 0;
}

void tdm_kato_result_free(tdm_kato_result *r) {
    if (!r) return;
    for (size_t i = 0; i < r->nblocks; i++) tdm_free(r->blocks[i]);
    tdm_free(r->blocks), tdm_free(r->preds), tdm_free(r->fut), tdm_free(r->bytes), tdm_free(r->off);
    tdm_free(r);
}

int kato_result_build(const kato_pred *p, const tdm_kato_predict_stats *st, tdm_kato_result **out) {
    tdm_kato_result *r = tdm_calloc(1, sizeof *r);
    builder b = {r, p, NULL, NULL};
    if (!r) return tdm_error(TDM_E_NOMEM, "predict: no memory for the result");
    r->stats = *st;
    b.map = tdm_calloc((size_t)p->vocab_n + p->nunk + 1, sizeof *b.map);
    b.emomap = tdm_calloc(p->kb->nemokeys + 1, sizeof *b.emomap);
    r->preds = tdm_calloc(p->nc + 1, sizeof *r->preds);
    r->fut = tdm_calloc(p->ngroups + 1, sizeof *r->fut);
    int bad = !b.map || !b.emomap || !r->preds || !r->fut;
    for (size_t i = 0; i < p->nc && !bad; i++) bad = one(&b, &p->c[i], &r->preds[r->n++]);
    /* future_potentials: one entry per future group, with the future of its first pattern */
    double wtotal = 0.0;
    for (uint32_t g = 0; g < p->ngroups; g++) wtotal += p->group_w[g];
    for (uint32_t g = 0; g < p->ngroups && !bad; g++) {
        tdm_kato_future_potential *f = &r->fut[r->nfut++];
        /* the group's first candidate may have been truncated away: its pattern is still known */
        f->aggregate_potential = wtotal > 0.0 ? p->group_w[g] / wtotal : 0.0;
        f->total_weighted_frequency = p->group_w[g];
        f->supporting_patterns = p->group_count[g];
        const kato_pat *pat = &p->kb->pats[p->group_pid[g]];
        const uint32_t *P;
        size_t np;
        tdm_seq_store_get(p->store, p->group_pid[g], &P, &np);
        uint32_t off = 0;
        for (uint32_t e = 0; e < p->group_pe[g]; e++) off += pat->event_sizes[e];
        bad = events(&b, P + off, pat->event_sizes + p->group_pe[g], pat->nevents - p->group_pe[g], 0, &f->future);
    }
    /* stable: ties keep the groups' order of appearance */
    if (!bad) {
        for (size_t i = 1; i < r->nfut; i++) {
            tdm_kato_future_potential t = r->fut[i];
            size_t j = i;
            for (; j > 0 && cmp_fut(&r->fut[j - 1], &t) > 0; j--) r->fut[j] = r->fut[j - 1];
            r->fut[j] = t;
        }
    }
    tdm_free(b.map), tdm_free(b.emomap);
    if (bad) {
        tdm_kato_result_free(r);
        return tdm_error(TDM_E_NOMEM, "predict: no memory for the result");
    }
    *out = r;
    return TDM_OK;
}

size_t tdm_kato_result_count(const tdm_kato_result *r) { return r ? r->n : 0; }
const tdm_kato_prediction *tdm_kato_result_get(const tdm_kato_result *r, size_t i) {
    return r && i < r->n ? &r->preds[i] : NULL;
}
size_t tdm_kato_result_future_count(const tdm_kato_result *r) { return r ? r->nfut : 0; }
const tdm_kato_future_potential *tdm_kato_result_future(const tdm_kato_result *r, size_t i) {
    return r && i < r->nfut ? &r->fut[i] : NULL;
}
void tdm_kato_result_symbol(const tdm_kato_result *r, tdm_kato_sym s, const char **str, size_t *len) {
    if (!r || s >= r->nsym) {
        *str = "", *len = 0;
        return;
    }
    *str = r->bytes + r->off[s];
    *len = r->off[s + 1] - r->off[s] - 1;
}
const tdm_kato_predict_stats *tdm_kato_result_stats(const tdm_kato_result *r) { return r ? &r->stats : NULL; }
