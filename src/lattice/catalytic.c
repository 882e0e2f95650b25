/* catalytic.c: catalytic auxiliary memory (spec section 4). An aux handle lends memory of arbitrary
 * contents; the traversal uses it as K+1 registers of V words each, changes it only by r_j ^= B r_{j-1}
 * (B = diag(w) (I + A) over GF(2^64)) and r_0[s] ^= 1, and gives it back by running the same program P a
 * second time (P is its own inverse). Nothing is ever copied aside: the only clean memory is the K+1
 * words of t's column, so the distance costs O(K) clean words however large the graph.
 *
 * Why it works: after P, r_j = tau_j ^ B^j e_s where tau is the original contents, and (B^j e_s)[t] is a
 * sum over walks with stays of length j from s to t of the product of weights along them. It is exactly 0
 * for j < dist(s, t) and, at j = dist, a sum of distinct monomials (one per shortest path) that vanishes
 * with probability <= dist / 2^64 over the seed (Schwartz-Zippel). */
#include "lattice/lattice_internal.h"
#include "lattice/lattice_device.h"

#include <omp.h>
#include <stdatomic.h>
#include <string.h>

struct tdm_lattice_aux {
    unsigned char *mem;
    const tdm_backend *device; /* NULL: host memory */
    size_t bytes;
    int owned;
    int dirty;
    atomic_int busy;
};

/* ---- GF(2^64) arithmetic modulo x^64 + x^4 + x^3 + x + 1 ---------------------------------------------- */

/* Reduces hi*x^64 + lo: x^64 = x^4 + x^3 + x + 1 (0x1b), applied twice because hi*0x1b spills <= 4 bits. */
static inline uint64_t gf64_reduce(uint64_t hi, uint64_t lo) {
    uint64_t spill = (hi >> 60) ^ (hi >> 61) ^ (hi >> 63);              /* bits of hi*0x1b above 2^64 */
    uint64_t low = hi ^ (hi << 1) ^ (hi << 3) ^ (hi << 4);               /* low 64 bits of hi*0x1b */
    low ^= spill ^ (spill << 1) ^ (spill << 3) ^ (spill << 4);           /* spill*0x1b: < 2^8, no new spill */
    return lo ^ low;
}

/* Portable carry-less product: 64 shift-and-xor steps, branch-free. */
static inline uint64_t gf64_mul_portable(uint64_t a, uint64_t b) {
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < 64; i++) {
        uint64_t m = 0 - ((b >> i) & 1);
        lo ^= (a << i) & m;
        if (i) hi ^= (a >> (64 - i)) & m;
    }
    return gf64_reduce(hi, lo);
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("pclmul,sse4.1"))) static inline uint64_t gf64_mul_pclmul(uint64_t a, uint64_t b) {
    __m128i p = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)a), _mm_cvtsi64_si128((long long)b), 0x00);
    uint64_t lo = (uint64_t)_mm_cvtsi128_si64(p), hi = (uint64_t)_mm_extract_epi64(p, 1);
    return gf64_reduce(hi, lo);
}
static int have_pclmul(void) {
    static int cached = -1;
    if (cached < 0) cached = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
    return cached;
}
#endif

uint64_t tdm_lat_gf64_mul_portable(uint64_t a, uint64_t b) { return gf64_mul_portable(a, b); }

uint64_t tdm_lattice_gf64_mul(uint64_t a, uint64_t b) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (have_pclmul()) return gf64_mul_pclmul(a, b);
#endif
    return gf64_mul_portable(a, b);
}

/* ---- aux handles -------------------------------------------------------------------------------------- */

int tdm_lattice_aux_wrap(tdm_ctx *ctx, void *mem, size_t bytes, tdm_lattice_aux **out) {
    if (!ctx || !out || (!mem && bytes)) return tdm_error(TDM_E_INVAL, "tdm_lattice_aux_wrap: NULL argument");
    tdm_lattice_aux *a = tdm_calloc(1, sizeof *a);
    if (!a) return tdm_error(TDM_E_NOMEM, "tdm_lattice_aux_wrap: no memory");
    a->mem = mem;
    a->bytes = bytes;
    atomic_init(&a->busy, 0);
    *out = a;
    return TDM_OK;
}

int tdm_lattice_aux_wrap_device(tdm_ctx *ctx, int device, void *dev_mem, size_t bytes, tdm_lattice_aux **out) {
    if (!ctx || !out || !dev_mem) return tdm_error(TDM_E_INVAL, "tdm_lattice_aux_wrap_device: NULL argument");
    if ((uintptr_t)dev_mem % 8) return tdm_error(TDM_E_INVAL, "tdm_lattice_aux_wrap_device: %p is not 8-byte aligned", dev_mem);
    const tdm_backend *b = NULL;
    for (int i = 1; i < tdm_backend_count(ctx) && !b; i++) {
        const tdm_backend *c = tdm_backend_get(ctx, i);
        if (c->kind == TDM_BACKEND_CUDA && c->device == device) b = c;
    }
    if (!b || !b->lattice || !b->lattice->catalytic_distance)
        return tdm_error(TDM_E_UNSUPPORTED, "tdm_lattice_aux_wrap_device: %s", b ? "that device has no catalytic kernels"
                                                                             : "no such CUDA device in this context");
    int rc = tdm_lattice_aux_wrap(ctx, dev_mem, bytes, out);
    if (rc) return rc;
    (*out)->device = b;
    return TDM_OK;
}

int tdm_lattice_aux_new(tdm_ctx *ctx, size_t bytes, tdm_lattice_aux **out) {
    if (!ctx || !out) return tdm_error(TDM_E_INVAL, "tdm_lattice_aux_new: NULL argument");
    if (!bytes) {
        uint64_t cfg = tdm_ctx_config(ctx)->aux_bytes;
        if (cfg > SIZE_MAX) return tdm_error(TDM_E_NOMEM, "tdm_lattice_aux_new: TANDEM_AUX_BYTES=%llu too large", (unsigned long long)cfg);
        bytes = (size_t)cfg;
    }
    void *mem = tdm_malloc(bytes ? bytes : 1);
    if (!mem) return tdm_error(TDM_E_NOMEM, "tdm_lattice_aux_new: cannot allocate %zu bytes", bytes);
    int rc = tdm_lattice_aux_wrap(ctx, mem, bytes, out);
    if (rc) {
        tdm_free(mem);
        return rc;
    }
    (*out)->owned = 1;
    return TDM_OK;
}

void tdm_lattice_aux_free(tdm_lattice_aux *aux) {
    if (!aux) return;
    if (aux->owned) tdm_free(aux->mem);
    tdm_free(aux);
}

size_t tdm_lattice_aux_bytes(const tdm_lattice_aux *aux) { return aux->bytes; }
void *tdm_lattice_aux_data(tdm_lattice_aux *aux) { return aux->mem; }
int tdm_lattice_aux_dirty(const tdm_lattice_aux *aux) { return aux->dirty; }

int tdm_lattice_aux_acquire(tdm_lattice_aux *aux) {
    if (!aux) return tdm_error(TDM_E_INVAL, "aux: NULL handle");
    int expected = 0;
    if (!atomic_compare_exchange_strong(&aux->busy, &expected, 1))
        return tdm_error(TDM_E_BUSY, "aux: already borrowed by another operation");
    return TDM_OK;
}

void tdm_lattice_aux_release(tdm_lattice_aux *aux) {
    if (aux) atomic_store(&aux->busy, 0);
}

/* ---- the program P ------------------------------------------------------------------------------------ */

typedef struct {
    const tdm_lattice_csr *g;
    unsigned char *aux; /* register j, word v at byte (j*V + v)*8; any alignment */
    int64_t V, K, s;
    uint64_t seed;
    int threads;
} program;

static inline uint64_t ld(const unsigned char *p) {
    uint64_t x;
    memcpy(&x, p, 8);
    return x;
}
static inline void st(unsigned char *p, uint64_t x) { memcpy(p, &x, 8); }

/* r_j ^= B r_{j-1}, pull style: each v reads only register j-1 and writes only its own word of register j,
 * so vertices run in parallel without atomics and the result does not depend on the thread count. */
static void step_b(const program *P, int64_t j) {
    const tdm_lattice_csr *g = P->g;
    const unsigned char *x = P->aux + (size_t)(j - 1) * (size_t)P->V * 8;
    unsigned char *r = P->aux + (size_t)j * (size_t)P->V * 8;
    const int use_threads = P->V >= 32768 ? P->threads : 1;
#pragma omp parallel for num_threads(use_threads) schedule(static) if (use_threads > 1)
    for (int64_t v = 0; v < P->V; v++) {
        uint64_t acc = ld(x + (size_t)v * 8);
        for (int64_t a = g->row_ptr[v]; a < g->row_ptr[v + 1]; a++) acc ^= ld(x + (size_t)g->col[a] * 8);
        uint64_t w = tdm_lattice_splitmix_word(P->seed, (uint64_t)v);
        if (!w) w = 1;
        st(r + (size_t)v * 8, ld(r + (size_t)v * 8) ^ tdm_lattice_gf64_mul(w, acc));
    }
}

/* Step q of one run of P (0 <= q <= 2K): K descending B-steps, the toggle of r_0[s], K ascending B-steps.
 * Every step is an involution given the state the others leave, so undoing a prefix is re-applying it in
 * reverse order. */
static void apply_step(const program *P, int64_t q) {
    if (q < P->K) step_b(P, P->K - q);
    else if (q == P->K) {
        unsigned char *w = P->aux + (size_t)P->s * 8;
        st(w, ld(w) ^ 1);
    } else step_b(P, q - P->K);
}

/* Runs steps [from, to) of the two-run schedule (step i is step i mod (2K+1) of P). With fault injection
 * on (fail_at > 0) it stops once fail_at steps in total have been applied, undoes them and returns
 * TDM_E_IO, leaving aux as it found it. *done counts the steps applied so far. */
static int run_steps(const program *P, int64_t from, int64_t to, int64_t fail_at, int64_t *done) {
    const int64_t per = 2 * P->K + 1;
    for (int64_t i = from; i < to; i++) {
        if (fail_at > 0 && *done >= fail_at) {
            for (int64_t u = *done - 1; u >= 0; u--) apply_step(P, u % per);
            *done = 0;
            return tdm_error(TDM_E_IO, "catalytic: fault injected after %lld steps (TANDEM_TEST_FAIL_AT_STEP); aux restored",
                             (long long)fail_at);
        }
        apply_step(P, i % per);
        (*done)++;
    }
    return TDM_OK;
}

void tdm_lat_catalytic_program(const tdm_lattice_csr *g, void *aux_mem, int64_t K, int64_t s, uint64_t seed, int threads) {
    program P = {g, aux_mem, g->nvertices, K, s, seed, threads};
    for (int64_t q = 0; q <= 2 * K; q++) apply_step(&P, q);
}

static int check_common(const char *fn, tdm_ctx *ctx, const tdm_lattice_csr *g, tdm_lattice_aux *aux, int64_t s,
                        int64_t t, int64_t K, uint64_t *seed, unsigned flags) {
    if (!ctx || !g || !g->row_ptr || !aux || !seed) return tdm_error(TDM_E_INVAL, "%s: NULL argument", fn);
    if (flags & ~TDM_LATTICE_SEED_RANDOM) return tdm_error(TDM_E_INVAL, "%s: unknown flags 0x%x", fn, flags);
    if (K < 1 || K > (1 << 20)) return tdm_error(TDM_E_INVAL, "%s: level budget K=%lld outside 1..1048576", fn, (long long)K);
    if (g->nvertices < 1 || g->nvertices > TDM_LATTICE_MAX_VERTICES)
        return tdm_error(TDM_E_INVAL, "%s: %lld vertices outside 1..2^31-1", fn, (long long)g->nvertices);
    if (s < 0 || s >= g->nvertices || t < 0 || t >= g->nvertices)
        return tdm_error(TDM_E_RANGE, "%s: %s vertex %lld outside 0..%lld", fn, s < 0 || s >= g->nvertices ? "source" : "target",
                         (long long)(s < 0 || s >= g->nvertices ? s : t), (long long)(g->nvertices - 1));
    uint64_t need;
    if ((uint64_t)(K + 1) > UINT64_MAX / 8 / (uint64_t)g->nvertices)
        return tdm_error(TDM_E_OVERFLOW, "%s: (K+1)*8V overflows", fn);
    need = (uint64_t)(K + 1) * 8u * (uint64_t)g->nvertices;
    if (need > aux->bytes)
        return tdm_error(TDM_E_NOMEM, "%s: aux of %zu bytes is smaller than the (K+1)*8V = %llu bytes needed (K=%lld, V=%lld)",
                         fn, aux->bytes, (unsigned long long)need, (long long)K, (long long)g->nvertices);
    return TDM_OK;
}

/* The distance query proper; aux already borrowed and arguments checked. */
static int distance_locked(tdm_ctx *ctx, const tdm_lattice_csr *g, tdm_lattice_aux *aux, int64_t s, int64_t t,
                           int64_t K, uint64_t seed, int64_t *dist) {
    program P = {g, aux->mem, g->nvertices, K, s, seed, tdm_ctx_threads(ctx)};
    uint64_t *tau = tdm_malloc((size_t)(K + 1) * sizeof *tau);
    if (!tau) return tdm_error(TDM_E_NOMEM, "catalytic: no memory for %lld clean words", (long long)(K + 1));
    for (int64_t j = 0; j <= K; j++) tau[j] = ld(P.aux + ((size_t)j * (size_t)P.V + (size_t)t) * 8);
    const int64_t per = 2 * K + 1, fail_at = tdm_ctx_config(ctx)->test_fail_at_step;
    int64_t done = 0;
    int rc = run_steps(&P, 0, per, fail_at, &done);
    if (rc) {
        tdm_free(tau);
        return rc;
    }
    int64_t d = -1;
    for (int64_t j = 0; j <= K && d < 0; j++)
        if (ld(P.aux + ((size_t)j * (size_t)P.V + (size_t)t) * 8) != tau[j]) d = j;
    tdm_free(tau);
    if ((rc = run_steps(&P, per, 2 * per, fail_at, &done))) return rc;
    *dist = d;
    if (d < 0)
        return tdm_error(TDM_E_NOPATH, "catalytic: vertex %lld not within %lld hops of %lld", (long long)t, (long long)K,
                         (long long)s);
    return TDM_OK;
}

/* One query wherever aux lives: on its device, or the CPU program above. */
static int distance_any(tdm_ctx *ctx, const tdm_lattice_csr *g, tdm_lattice_aux *aux, int64_t s, int64_t t, int64_t K,
                        uint64_t seed, int64_t *dist) {
    if (!aux->device) return distance_locked(ctx, g, aux, s, t, K, seed, dist);
    const tdm_backend *b = aux->device;
    int rc = b->lattice->catalytic_distance(b, g, aux->mem, s, t, K, seed, tdm_ctx_config(ctx)->test_fail_at_step, dist);
    if (rc == TDM_E_DEVICE_LOST) aux->dirty = 1;
    if (rc == TDM_OK && *dist < 0)
        rc = tdm_error(TDM_E_NOPATH, "catalytic: vertex %lld not within %lld hops of %lld", (long long)t, (long long)K,
                       (long long)s);
    return rc;
}

static int draw_seed(uint64_t *seed, unsigned flags) {
    return flags & TDM_LATTICE_SEED_RANDOM ? tdm_lat_random_seed(seed) : TDM_OK;
}

int tdm_lattice_catalytic_distance(tdm_ctx *ctx, const tdm_lattice_csr *g, tdm_lattice_aux *aux, int64_t s, int64_t t,
                                   int64_t K, uint64_t *seed, unsigned flags, int64_t *dist) {
    int rc = check_common("tdm_lattice_catalytic_distance", ctx, g, aux, s, t, K, seed, flags);
    if (rc) return rc;
    if (!dist) return tdm_error(TDM_E_INVAL, "tdm_lattice_catalytic_distance: dist is NULL");
    tdm_lat_req q = {.op = TDM_OP_LATTICE_CATALYTIC, .pref = TDM_DEVICE_AUTO};
    tdm_lat_placement pl;
    if ((rc = tdm_lat_place(ctx, &q, &pl))) return rc;
    if ((rc = tdm_lattice_aux_acquire(aux))) return rc;
    if ((rc = draw_seed(seed, flags)) == TDM_OK) rc = distance_any(ctx, g, aux, s, t, K, *seed, dist);
    tdm_lattice_aux_release(aux);
    if (rc == TDM_E_NOPATH) *dist = -1;
    return rc;
}

int tdm_lattice_catalytic_path(tdm_ctx *ctx, const tdm_lattice_csr *g, tdm_lattice_aux *aux, int64_t s, int64_t t,
                               int64_t K, uint64_t *seed, unsigned flags, tdm_lattice_path *out) {
    int rc = check_common("tdm_lattice_catalytic_path", ctx, g, aux, s, t, K, seed, flags);
    if (rc) return rc;
    if (!out) return tdm_error(TDM_E_INVAL, "tdm_lattice_catalytic_path: out is NULL");
    tdm_lattice_path p = {.hops = -1, .vertex = NULL, .cache_hit = 0};
    tdm_lat_req q = {.op = TDM_OP_LATTICE_CATALYTIC, .pref = TDM_DEVICE_AUTO};
    tdm_lat_placement pl;
    if ((rc = tdm_lat_place(ctx, &q, &pl))) return rc;
    p.backend = aux->device ? aux->device->name : pl.backend->name; /* the query runs where aux lives */
    double t0 = tdm_now_ms();
    if ((rc = tdm_lattice_aux_acquire(aux))) return rc;
    if ((rc = draw_seed(seed, flags))) goto out;
    int64_t hops;
    if ((rc = distance_any(ctx, g, aux, s, t, K, *seed, &hops))) goto out;
    p.vertex = tdm_malloc((size_t)(hops + 1) * sizeof *p.vertex);
    if (!p.vertex) {
        rc = tdm_error(TDM_E_NOMEM, "catalytic path: no memory for %lld vertices", (long long)(hops + 1));
        goto out;
    }
    p.hops = hops;
    p.vertex[hops] = t;
    /* Walk back from t: the lowest-id neighbour exactly one hop closer to s (the section 3 tie rule). */
    for (int64_t k = hops, v = t; k > 0; k--) {
        int64_t next = -1;
        for (int64_t a = g->row_ptr[v]; a < g->row_ptr[v + 1] && next < 0; a++) {
            int64_t u = g->col[a], du;
            if (k == 1) {
                if (u == s) next = u;
                continue;
            }
            rc = distance_any(ctx, g, aux, s, u, k - 1, *seed, &du);
            if (rc == TDM_OK && du == k - 1) next = u;
            else if (rc && rc != TDM_E_NOPATH) goto out;
        }
        if (next < 0) {
            /* Only a seed whose polynomial vanishes (probability <= hops/2^64) gets here. */
            rc = tdm_error(TDM_E_NOPATH, "catalytic path: no predecessor of %lld at distance %lld found (unlucky seed %llu)",
                           (long long)v, (long long)(k - 1), (unsigned long long)*seed);
            goto out;
        }
        p.vertex[k - 1] = next;
        v = next;
    }
    rc = TDM_OK;
out:
    tdm_lattice_aux_release(aux);
    if (rc) {
        tdm_free(p.vertex);
        p.vertex = NULL;
        p.hops = -1;
        if (rc != TDM_E_NOPATH) return rc;
    }
    p.ms = tdm_now_ms() - t0;
    *out = p;
    return rc;
}
