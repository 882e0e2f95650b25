/* json.c: KATO's prediction objects as JSON text (kato.h, tdm_kato_result_write_json), in KATO's field
 * order (spec/kato.md 3.5-3.7), and Python's repr() of a float for metadata values. The command line
 * and the service both print predictions; the field list,
 * its order and the optional fields are written once here, while each caller keeps its own output target,
 * string escaping and number format through the sink. */
#include "tandem/kato.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(const tdm_kato_json_sink *s, const char *text) { s->put(s->user, text, strlen(text)); }

static void put_sym(const tdm_kato_json_sink *s, const tdm_kato_result *r, tdm_kato_sym sym) {
    const char *str;
    size_t len;
    tdm_kato_result_symbol(r, sym, &str, &len);
    s->str(s->user, str, len);
}

void tdm_kato_events_write_json(const tdm_kato_result *r, const tdm_kato_events *ev, const tdm_kato_json_sink *s) {
    put(s, "[");
    if (ev->flat) {
        for (uint32_t i = 0; i < ev->nsyms; i++) {
            if (i) put(s, ", ");
            put_sym(s, r, ev->syms[i]);
        }
    } else {
        for (uint32_t e = 0, k = 0; e < ev->nevents; e++) {
            put(s, e ? ", [" : "[");
            for (uint32_t i = 0; i < ev->sizes[e]; i++, k++) {
                if (i) put(s, ", ");
                put_sym(s, r, ev->syms[k]);
            }
            put(s, "]");
        }
    }
    put(s, "]");
}

/* , "key": x */
static void put_num(const tdm_kato_json_sink *s, const char *key, double x) {
    put(s, ", \"");
    put(s, key);
    put(s, "\": ");
    s->num(s->user, x);
}

static void put_opt(const tdm_kato_json_sink *s, const char *key, int has, double x) {
    if (has) put_num(s, key, x);
    else put(s, ", \""), put(s, key), put(s, "\": null");
}

static void put_prediction(const tdm_kato_json_sink *s, const tdm_kato_result *r, const tdm_kato_prediction *p) {
    char tmp[96];
    int full = p->flags & TDM_KATO_HAS_ENSEMBLE;
    snprintf(tmp, sizeof tmp, "{%s\"name\": \"%s\", ", full ? "\"type\": \"prototypical\", " : "", p->name);
    put(s, tmp);
    if (!full) { /* the single-symbol path's dict also carries the pattern itself */
        put(s, "\"pattern_data\": "), tdm_kato_events_write_json(r, &p->sequence, s);
        snprintf(tmp, sizeof tmp, ", \"length\": %u, ", p->sequence.nsyms);
        put(s, tmp);
    }
    snprintf(tmp, sizeof tmp, "\"frequency\": %llu, \"emotives\": {", (unsigned long long)p->frequency);
    put(s, tmp);
    for (uint32_t i = 0; i < p->nemotives; i++) {
        if (i) put(s, ", ");
        put_sym(s, r, p->emotive_keys[i]);
        put(s, ": ");
        s->num(s->user, p->emotive_values[i]);
    }
    put(s, "}, \"matches\": [");
    for (uint32_t i = 0; i < p->nmatches; i++) {
        if (i) put(s, ", ");
        put_sym(s, r, p->matches[i]);
    }
    put(s, "], \"past\": "), tdm_kato_events_write_json(r, &p->past, s);
    put(s, ", \"present\": "), tdm_kato_events_write_json(r, &p->present, s);
    put(s, ", \"future\": "), tdm_kato_events_write_json(r, &p->future, s);
    put(s, ", \"missing\": "), tdm_kato_events_write_json(r, &p->missing, s);
    put(s, ", \"extras\": "), tdm_kato_events_write_json(r, &p->extras, s);
    put(s, ", \"anomalies\": []");
    put_num(s, "similarity", p->similarity);
    put_num(s, "evidence", p->evidence);
    put_num(s, "confidence", p->confidence);
    put_num(s, "snr", p->snr);
    put_num(s, "fragmentation", p->fragmentation);
    put_num(s, "potential", p->potential);
    put_opt(s, "weighted_similarity", p->flags & TDM_KATO_HAS_WEIGHTED_SIMILARITY, p->weighted_similarity);
    put_opt(s, "weighted_evidence", p->flags & TDM_KATO_HAS_WEIGHTED, p->weighted_evidence);
    put_opt(s, "weighted_confidence", p->flags & TDM_KATO_HAS_WEIGHTED, p->weighted_confidence);
    put_opt(s, "weighted_snr", p->flags & TDM_KATO_HAS_WEIGHTED, p->weighted_snr);
    if (full) {
        put_num(s, "confluence", p->confluence);
        put_num(s, "predictive_information", p->predictive_information);
        put(s, ", \"sequence\": "), tdm_kato_events_write_json(r, &p->sequence, s);
        put_num(s, "entropy", p->entropy);
        put_num(s, "normalized_entropy", p->normalized_entropy);
        put_num(s, "global_normalized_entropy", p->global_normalized_entropy);
        put_num(s, "itfdf_similarity", p->itfdf_similarity);
        put_num(s, "tfidf_score", p->tfidf_score);
        put_num(s, "pattern_probability", p->pattern_probability);
        put_num(s, "weighted_strength", p->weighted_strength);
        put_num(s, "bayesian_posterior", p->bayesian_posterior);
        put_num(s, "bayesian_prior", p->bayesian_prior);
        put_num(s, "bayesian_likelihood", p->bayesian_likelihood);
        if (p->flags & TDM_KATO_HAS_PRE_POTENTIAL) put_num(s, "_pre_potential", p->pre_potential);
    }
    put(s, "}");
}

void tdm_kato_result_write_json(const tdm_kato_result *r, int form, const tdm_kato_json_sink *s) {
    size_t n = tdm_kato_result_count(r);
    if (form == TDM_KATO_JSON_OPEN) put(s, "{\"predictions\": ");
    put(s, "[");
    for (size_t i = 0; i < n; i++) {
        if (i) put(s, ", ");
        put_prediction(s, r, tdm_kato_result_get(r, i));
    }
    put(s, "]");
    if (form != TDM_KATO_JSON_OPEN) return;
    put(s, ", \"future_potentials\": ");
    if (tdm_kato_result_stats(r)->fast_path) {
        put(s, "null");
        return;
    }
    put(s, "[");
    for (size_t i = 0, nf = tdm_kato_result_future_count(r); i < nf; i++) {
        const tdm_kato_future_potential *f = tdm_kato_result_future(r, i);
        char tmp[64];
        put(s, i ? ", {\"future\": " : "{\"future\": ");
        tdm_kato_events_write_json(r, &f->future, s);
        put_num(s, "aggregate_potential", f->aggregate_potential);
        snprintf(tmp, sizeof tmp, ", \"supporting_patterns\": %u", f->supporting_patterns);
        put(s, tmp);
        put_num(s, "total_weighted_frequency", f->total_weighted_frequency);
        put(s, "}");
    }
    put(s, "]");
}

/* repr(float): shortest round-trip digits; exponent form when the exponent is < -4 or >= 16. */
void tdm_kato_py_float(double x, char *out, size_t cap) {
    if (isnan(x)) {
        snprintf(out, cap, "nan");
        return;
    }
    if (isinf(x)) {
        snprintf(out, cap, "%sinf", x < 0 ? "-" : "");
        return;
    }
    char e[40];
    int p = 1;
    for (; p < 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, x);
        if (strtod(e, NULL) == x) break;
    }
    snprintf(e, sizeof e, "%.*e", p - 1, x);
    /* e = [-]d[.ddd]e(+|-)XX: split into sign, digits and exponent */
    const char *sign = x < 0 || (x == 0 && signbit(x)) ? "-" : "";
    char digits[24];
    size_t nd = 0;
    char *ep = strchr(e, 'e');
    for (char *c = e; c < ep; c++)
        if (*c >= '0' && *c <= '9') digits[nd++] = *c;
    digits[nd] = '\0';
    int exp10 = atoi(ep + 1);
    if (exp10 < -4 || exp10 >= 16) {
        snprintf(out, cap, "%s%c%s%se%c%02d", sign, digits[0], nd > 1 ? "." : "", digits + 1, exp10 < 0 ? '-' : '+', abs(exp10));
    } else if (exp10 < 0) {
        snprintf(out, cap, "%s0.%.*s%s", sign, -exp10 - 1, "0000", digits);
    } else if ((size_t)exp10 + 1 >= nd) {
        snprintf(out, cap, "%s%s%.*s.0", sign, digits, (int)((size_t)exp10 + 1 - nd), "0000000000000000");
    } else {
        snprintf(out, cap, "%s%.*s.%s", sign, exp10 + 1, digits, digits + exp10 + 1);
    }
}
