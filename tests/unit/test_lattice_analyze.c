/* test_lattice_analyze.c: unit tests of structure analysis (spec section 2). On lattices every metric is
 * compared with the closed forms (degrees, density, 0 triangles, connected, bipartite, diameter d(L-1)) and
 * the BoundingDiameters sweep count with the spec's bound (at most twice the prototype's count); on seeded
 * random general graphs with brute-force references written here (triple-loop triangles, all-pairs
 * Floyd-Warshall distances, union-find components, two-colouring). */
#include "unit_common.h"

#include "tandem/lattice.h"

#include <math.h>

static tdm_ctx *new_ctx(int max_bfs) {
    tdm_config cfg;
    tdm_config_init(&cfg);
    if (max_bfs) cfg.analyze_max_bfs = max_bfs;
    tdm_ctx *ctx;
    assert_int_equal(tdm_init(&ctx, &cfg), TDM_OK);
    return ctx;
}

static int64_t ipow(int64_t b, int e) {
    int64_t r = 1;
    while (e--) r *= b;
    return r;
}

static int64_t binom(int n, int k) {
    int64_t r = 1;
    for (int i = 1; i <= k; i++) r = r * (n - k + i) / i;
    return r;
}

/* Analyses dD/L and checks everything against the closed forms; returns the BFS sweeps used. */
static int64_t check_lattice(tdm_ctx *ctx, int d, int64_t L) {
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(ctx, d, L, 0, &lat), TDM_OK);
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    tdm_lattice_analysis a;
    int rc = tdm_lattice_analyze(ctx, &g, TDM_LATTICE_ANALYZE_ALL, &a);
    tu_check(rc == TDM_OK, "%dD/%lld: %s", d, (long long)L, tdm_last_error());
    const int64_t V = ipow(L, d), E = (int64_t)d * ipow(L, d - 1) * (L - 1);
    tu_check(a.vertices == V && a.edges == E, "%dD/%lld: V %lld E %lld", d, (long long)L, (long long)a.vertices,
             (long long)a.edges);
    tu_check(a.degree_min == d && a.degree_max == (L >= 3 ? 2 * d : d), "%dD/%lld: degrees %lld..%lld", d, (long long)L,
             (long long)a.degree_min, (long long)a.degree_max);
    for (int j = 0; j <= d && L >= 3; j++)
        tu_check(a.degree_hist[d + j] == binom(d, j) * ipow(L - 2, j) * ipow(2, d - j), "%dD/%lld: hist[%d]", d,
                 (long long)L, d + j);
    const double mean = 2.0 * d * (double)(L - 1) / (double)L, dens = 2.0 * E / ((double)V * (double)(V - 1));
    tu_check(fabs(a.degree_mean - mean) <= 1e-12 * mean, "%dD/%lld: mean degree %.17g vs %.17g", d, (long long)L,
             a.degree_mean, mean);
    tu_check(fabs(a.density - dens) <= 1e-12 * dens, "%dD/%lld: density %.17g vs %.17g", d, (long long)L, a.density, dens);
    tu_check(a.triangles == 0 && a.avg_clustering == 0.0 && a.transitivity == 0.0, "%dD/%lld: triangles", d, (long long)L);
    tu_check(a.components == 1 && a.connected && a.bipartite, "%dD/%lld: components %lld connected %d bipartite %d", d,
             (long long)L, (long long)a.components, a.connected, a.bipartite);
    tu_check(a.diameter == d * (L - 1) && a.diameter_exact && a.diameter_lo == a.diameter && a.diameter_hi == a.diameter,
             "%dD/%lld: diameter %lld (exact %d, bounds %lld..%lld), want %lld", d, (long long)L, (long long)a.diameter,
             a.diameter_exact, (long long)a.diameter_lo, (long long)a.diameter_hi, (long long)(d * (L - 1)));
    assert_non_null(a.backend);
    int64_t runs = a.diameter_bfs;
    tdm_lattice_analysis_release(&a);
    tdm_lattice_free(lat);
    return runs;
}

static void test_spec_table(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx(0);
    /* Shapes with the prototype's BFS counts (spec section 2): more than twice that is a failure. */
    static const struct {
        int d, L, proto;
    } rows[] = {{2, 3, 3}, {3, 10, 11}, {4, 8, 32}, {4, 10, 35}, {4, 18, 35}, {5, 10, 92}};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        int64_t runs = check_lattice(ctx, rows[i].d, rows[i].L);
        print_message("%dD/%d: %lld BFS sweeps (prototype %d)\n", rows[i].d, rows[i].L, (long long)runs, rows[i].proto);
        tu_check(runs >= 1 && runs <= 2 * rows[i].proto, "%dD/%d: %lld BFS sweeps, prototype %d", rows[i].d, rows[i].L,
                 (long long)runs, rows[i].proto);
    }
    /* 2D/3 by hand: V=9, E=12, degrees {2:4, 3:4, 4:1}, diameter 4. */
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(ctx, 2, 3, 0, &lat), TDM_OK);
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    tdm_lattice_analysis a;
    assert_int_equal(tdm_lattice_analyze(ctx, &g, TDM_LATTICE_ANALYZE_ALL, &a), TDM_OK);
    assert_int_equal(a.vertices, 9);
    assert_int_equal(a.edges, 12);
    assert_int_equal(a.degree_hist[2], 4);
    assert_int_equal(a.degree_hist[3], 4);
    assert_int_equal(a.degree_hist[4], 1);
    assert_int_equal(a.diameter, 4);
    tdm_lattice_analysis_release(&a);
    tdm_lattice_free(lat);
    tdm_destroy(ctx);
}

static void test_random_lattices(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx(0);
    tu_rng r = tu_rng_for(201);
    for (int round = 0; round < 40; round++) {
        int d = (int)tu_range(&r, 1, 6);
        int64_t Lmax = 2;
        while (ipow(Lmax + 1, d) <= 20000 && Lmax < 2000) Lmax++;
        check_lattice(ctx, d, tu_range(&r, 2, Lmax));
    }
    tdm_destroy(ctx);
}

/* ---- general graphs against brute force --------------------------------------------------------------- */

#define NMAX 48

typedef struct {
    int n;
    unsigned char adj[NMAX][NMAX];
    int64_t row[NMAX + 1];
    int32_t col[NMAX * NMAX];
} small_graph;

static void make_graph(small_graph *s, tu_rng *r) {
    memset(s, 0, sizeof *s);
    s->n = (int)tu_range(r, 1, NMAX);
    double p = tu_unit(r) * 0.4;
    for (int i = 0; i < s->n; i++)
        for (int j = i + 1; j < s->n; j++)
            if (tu_unit(r) < p) s->adj[i][j] = s->adj[j][i] = 1;
    int64_t k = 0;
    for (int i = 0; i < s->n; i++) {
        s->row[i] = k;
        for (int j = 0; j < s->n; j++)
            if (s->adj[i][j]) s->col[k++] = j;
    }
    s->row[s->n] = k;
}

static void test_random_graphs(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx(0);
    tu_rng r = tu_rng_for(202);
    static small_graph s;
    for (int round = 0; round < 300; round++) {
        make_graph(&s, &r);
        const int n = s.n;
        tdm_lattice_csr g = {n, s.row, s.col, 0};
        tdm_lattice_analysis a;
        int rc = tdm_lattice_analyze(ctx, &g, TDM_LATTICE_ANALYZE_ALL, &a);
        tu_check(rc == TDM_OK, "round %d: %s", round, tdm_last_error());
        /* Brute-force references. */
        int dist[NMAX][NMAX];
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) dist[i][j] = i == j ? 0 : s.adj[i][j] ? 1 : 1 << 20;
        for (int k = 0; k < n; k++)
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++)
                    if (dist[i][k] + dist[k][j] < dist[i][j]) dist[i][j] = dist[i][k] + dist[k][j];
        int comp[NMAX], ncomp = 0, diam = 0;
        for (int i = 0; i < n; i++) comp[i] = -1;
        for (int i = 0; i < n; i++) {
            if (comp[i] >= 0) continue;
            for (int j = 0; j < n; j++)
                if (dist[i][j] < (1 << 20)) comp[j] = ncomp;
            ncomp++;
        }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (dist[i][j] < (1 << 20) && dist[i][j] > diam) diam = dist[i][j];
        /* Bipartite iff no odd cycle: two-colour by distance parity from each component's first vertex. */
        int bip = 1;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (s.adj[i][j]) {
                    int root = 0;
                    while (comp[root] != comp[i]) root++;
                    if ((dist[root][i] & 1) == (dist[root][j] & 1)) bip = 0;
                }
        int64_t tri = 0, tv[NMAX] = {0}, edges = 0, kmin = INT64_MAX, kmax = 0;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) {
                edges += s.adj[i][j];
                for (int k = j + 1; k < n; k++)
                    if (s.adj[i][j] && s.adj[j][k] && s.adj[i][k]) tri++, tv[i]++, tv[j]++, tv[k]++;
            }
        double csum = 0, wedges = 0;
        for (int i = 0; i < n; i++) {
            int64_t k = s.row[i + 1] - s.row[i];
            if (k < kmin) kmin = k;
            if (k > kmax) kmax = k;
            if (k >= 2) csum += 2.0 * tv[i] / ((double)k * (k - 1)), wedges += k * (k - 1) / 2.0;
        }
        tu_check(a.edges == edges, "round %d: edges %lld vs %lld", round, (long long)a.edges, (long long)edges);
        tu_check(a.degree_min == kmin && a.degree_max == kmax, "round %d: degrees", round);
        tu_check(a.components == ncomp && a.connected == (ncomp == 1), "round %d: components %lld vs %d", round,
                 (long long)a.components, ncomp);
        tu_check(a.bipartite == bip, "round %d: bipartite %d vs %d", round, a.bipartite, bip);
        tu_check(a.triangles == tri, "round %d: triangles %lld vs %lld", round, (long long)a.triangles, (long long)tri);
        tu_check(fabs(a.avg_clustering - csum / n) <= 1e-12, "round %d: clustering %.17g vs %.17g", round, a.avg_clustering,
                 csum / n);
        double trans = wedges > 0 ? 3.0 * tri / wedges : 0.0;
        tu_check(fabs(a.transitivity - trans) <= 1e-12, "round %d: transitivity %.17g vs %.17g", round, a.transitivity, trans);
        if (ncomp == 1)
            tu_check(a.diameter == diam && a.diameter_exact, "round %d: diameter %lld vs %d", round, (long long)a.diameter, diam);
        else
            tu_check(a.diameter == -1, "round %d: disconnected graph has diameter %lld", round, (long long)a.diameter);
        tdm_lattice_analysis_release(&a);
    }
    tdm_destroy(ctx);
}

/* With too small a BFS budget the bounds come back, marked inexact, and still bracket the diameter. */
static void test_budget(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx(2);
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(ctx, 4, 10, 0, &lat), TDM_OK);
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    tdm_lattice_analysis a;
    assert_int_equal(tdm_lattice_analyze(ctx, &g, TDM_LATTICE_ANALYZE_DIAMETER, &a), TDM_OK);
    assert_int_equal(a.diameter_bfs, 2);
    assert_int_equal(a.diameter_exact, 0);
    assert_true(a.diameter_lo <= 36 && a.diameter_hi >= 36 && a.diameter_lo < a.diameter_hi);
    assert_true(a.flags & TDM_LATTICE_ANALYZE_COMPONENTS); /* the diameter needs connectivity */
    assert_null(a.degree_hist);                             /* not asked for */
    tdm_lattice_analysis_release(&a);
    assert_int_equal(tdm_lattice_analyze(ctx, &g, 0x100, &a), TDM_E_INVAL);
    assert_int_equal(tdm_lattice_analyze(ctx, NULL, 0, &a), TDM_E_INVAL);
    /* A malformed graph is refused before any metric runs. */
    int64_t row[3] = {0, 1, 1};
    int32_t col[1] = {1};
    tdm_lattice_csr bad = {2, row, col, 0};
    assert_int_equal(tdm_lattice_analyze(ctx, &bad, TDM_LATTICE_ANALYZE_ALL, &a), TDM_E_INVAL);
    tdm_lattice_free(lat);
    tdm_destroy(ctx);
}

int main(void) {
    tu_init_seed("test_lattice_analyze");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_table),
        cmocka_unit_test(test_random_lattices),
        cmocka_unit_test(test_random_graphs),
        cmocka_unit_test(test_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
