/* gen.c: the seeded data generator shared by tests, the `tandem seq gen` command and the benchmarks.
 * Symbols follow a Zipf law over a fixed vocabulary (drawn by binary search in the cumulative weights);
 * lengths follow a geometric law truncated to [min_len, max_len] whose mean is tuned to mean_len. The
 * random stream is splitmix64, so a seed gives the same data on every platform. */
#include "seq/seq_internal.h"

#include <math.h>
#include <stdio.h>

struct tdm_seq_gen {
    tdm_seq_gen_opts o;
    uint64_t state;
    double *cdf;  /* vocab entries, last = 1 */
    double *lcdf; /* length distribution over min_len..max_len */
};

void tdm_seq_gen_opts_init(tdm_seq_gen_opts *o) {
    *o = (tdm_seq_gen_opts){.seed = 1, .vocab = 50000, .zipf_s = 1.0, .min_len = 2, .max_len = 60, .mean_len = 20.0};
}

static uint64_t next64(tdm_seq_gen *g) {
    uint64_t z = (g->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform double in [0, 1) with 53 random bits. */
static double unit(tdm_seq_gen *g) { return (double)(next64(g) >> 11) * 0x1.0p-53; }

uint64_t tdm_seq_gen_uniform(tdm_seq_gen *g, uint64_t bound) {
    /* Rejection keeps it unbiased. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound, x;
    do x = next64(g);
    while (x >= limit);
    return x % bound;
}

/* Mean of the geometric law p(k) ~ q^k on [lo, hi]. For q > 1 it is the mirror image of the law with
 * ratio 1/q, which keeps every power <= 1: no overflow on long ranges. */
static double trunc_geo_mean(double q, uint32_t lo, uint32_t hi) {
    if (q > 1.0) return (double)lo + (double)hi - trunc_geo_mean(1.0 / q, lo, hi);
    double w = 1.0, sw = 0.0, swk = 0.0;
    for (uint64_t k = lo; k <= hi; k++, w *= q) sw += w, swk += w * (double)k;
    return swk / sw;
}

int tdm_seq_gen_new(const tdm_seq_gen_opts *o, tdm_seq_gen **out) {
    if (!o || !out) return tdm_error(TDM_E_INVAL, "tdm_seq_gen_new: NULL argument");
    if (o->vocab == 0) return tdm_error(TDM_E_INVAL, "generator: vocabulary size must be > 0");
    if (o->min_len > o->max_len) return tdm_error(TDM_E_INVAL, "generator: min_len %u > max_len %u", o->min_len, o->max_len);
    if (o->max_len == UINT32_MAX) return tdm_error(TDM_E_INVAL, "generator: max_len must be below 2^32-1");
    if (!(o->mean_len >= o->min_len && o->mean_len <= o->max_len))
        return tdm_error(TDM_E_INVAL, "generator: mean length %g outside [%u, %u]", o->mean_len, o->min_len, o->max_len);
    if (!(o->zipf_s >= 0.0 && o->zipf_s <= 10.0)) return tdm_error(TDM_E_INVAL, "generator: zipf exponent %g outside [0, 10]", o->zipf_s);
    tdm_seq_gen *g = tdm_calloc(1, sizeof *g);
    uint32_t nl = o->max_len - o->min_len + 1;
    if (g) {
        g->cdf = tdm_malloc((size_t)o->vocab * sizeof *g->cdf);
        g->lcdf = tdm_malloc((size_t)nl * sizeof *g->lcdf);
    }
    if (!g || !g->cdf || !g->lcdf) {
        tdm_seq_gen_free(g);
        return tdm_error(TDM_E_NOMEM, "generator: no memory");
    }
    g->o = *o;
    g->state = o->seed;
    double acc = 0.0;
    for (uint32_t r = 0; r < o->vocab; r++) g->cdf[r] = acc += pow((double)r + 1.0, -o->zipf_s);
    for (uint32_t r = 0; r < o->vocab; r++) g->cdf[r] /= acc;
    /* Bisect the ratio q in (0, 2) of the truncated geometric law to reach the requested mean; a mean
     * within about 1 of max_len needs a larger ratio. */
    double lo = 1e-9, hi = 2.0, q = 1.0;
    if (nl > 1 && trunc_geo_mean(hi, o->min_len, o->max_len) < o->mean_len) lo = hi, hi = 1e12;
    for (int it = 0; it < 200 && nl > 1; it++) {
        q = 0.5 * (lo + hi);
        if (trunc_geo_mean(q, o->min_len, o->max_len) < o->mean_len) lo = q;
        else hi = q;
    }
    /* Weights relative to the largest one (the first for q <= 1, the last for q > 1): no overflow. */
    double w = 1.0;
    acc = 0.0;
    if (q > 1.0) {
        for (uint32_t k = nl; k-- > 0; w /= q) g->lcdf[k] = w;
        for (uint32_t k = 0; k < nl; k++) g->lcdf[k] = acc += g->lcdf[k];
    } else {
        for (uint32_t k = 0; k < nl; k++, w *= q) g->lcdf[k] = acc += w;
    }
    for (uint32_t k = 0; k < nl; k++) g->lcdf[k] /= acc;
    *out = g;
    return TDM_OK;
}

void tdm_seq_gen_free(tdm_seq_gen *g) {
    if (!g) return;
    tdm_free(g->cdf);
    tdm_free(g->lcdf);
    tdm_free(g);
}

/* First index whose cumulative weight exceeds u. */
static uint32_t draw(const double *cdf, uint32_t n, double u) {
    uint32_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] > u) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

uint32_t tdm_seq_gen_symbol(tdm_seq_gen *g) { return draw(g->cdf, g->o.vocab, unit(g)); }

void tdm_seq_gen_next(tdm_seq_gen *g, uint32_t *syms, size_t *n) {
    uint32_t len = g->o.min_len + draw(g->lcdf, g->o.max_len - g->o.min_len + 1, unit(g));
    for (uint32_t i = 0; i < len; i++) syms[i] = tdm_seq_gen_symbol(g);
    *n = len;
}

size_t tdm_seq_gen_symbol_name(uint32_t rank, char *buf) { return (size_t)snprintf(buf, 16, "s%u", rank); }
