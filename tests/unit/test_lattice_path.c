/* test_lattice_path.c: unit tests of BFS shortest paths (spec section 3). On lattices the path must equal
 * the closed-form oracle (walk down every axis with t_i < s_i, lowest axis first, then up every axis with
 * t_i > s_i, highest axis first) built here from coordinates, its length the L1 distance, and
 * path(t,s) = reverse(path(s,t)); the spec's 4D/10 examples are checked literally. On seeded random
 * general graphs the path must follow the tie rule over Floyd-Warshall distances computed here. Batches
 * must equal single calls item by item; multi-source sweeps must match brute force. Interleaved queries
 * on one context over graphs of changing sizes must equal a plain queue BFS (the kept workspace). */
#include "unit_common.h"

#include "lattice_oracle.h"

#include "lattice/lattice_internal.h"
#include "tandem/lattice.h"

/* The CPU reference: device results are compared with it by tests/cross/test_lattice_cross.c. */
static int cpu_ctx(tdm_ctx **out) {
    tdm_config cfg;
    tdm_config_init(&cfg);
    cfg.device = TDM_DEVICE_CPU;
    cfg.sp_cache = 0; /* every query computed (the cache has its own test below) */
    return tdm_init(out, &cfg);
}

static tdm_ctx *new_ctx(void) {
    tdm_ctx *ctx;
    assert_int_equal(cpu_ctx(&ctx), TDM_OK);
    return ctx;
}

static void expect_path(tdm_ctx *ctx, const tdm_lattice_csr *g, int64_t s, int64_t t, const int64_t *want, int64_t hops) {
    tdm_lattice_path p;
    int rc = tdm_lattice_sp(ctx, g, s, t, TDM_DEVICE_AUTO, &p);
    tu_check(rc == TDM_OK, "%lld->%lld: rc %d (%s)", (long long)s, (long long)t, rc, tdm_last_error());
    tu_check(p.hops == hops, "%lld->%lld: %lld hops, want %lld", (long long)s, (long long)t, (long long)p.hops, (long long)hops);
    for (int64_t i = 0; i <= hops; i++)
        tu_check(p.vertex[i] == want[i], "%lld->%lld: vertex %lld is %lld, want %lld", (long long)s, (long long)t,
                 (long long)i, (long long)p.vertex[i], (long long)want[i]);
    tu_check(p.ms >= 0 && p.backend && !strcmp(p.backend, "cpu") && !p.cache_hit, "path metadata");
    tdm_lattice_path_release(&p);
}

static void test_spec_examples(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx();
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(ctx, 4, 10, 0, &lat), TDM_OK);
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    int64_t want[64], n = 0;
    for (int64_t v = 0; v <= 9; v++) want[n++] = v;
    for (int64_t v = 19; v <= 99; v += 10) want[n++] = v;
    for (int64_t v = 199; v <= 999; v += 100) want[n++] = v;
    for (int64_t v = 1999; v <= 9999; v += 1000) want[n++] = v;
    assert_int_equal(n, 37);
    expect_path(ctx, &g, 0, 9999, want, 36);
    n = 0;
    for (int64_t v = 9; v >= 0; v--) want[n++] = v;
    for (int64_t v = 10; v <= 90; v += 10) want[n++] = v;
    expect_path(ctx, &g, 9, 90, want, 18);
    const int64_t ex[] = {1234, 1224, 1223, 1222, 1221, 1321, 2321, 3321, 4321};
    expect_path(ctx, &g, 1234, 4321, ex, 8);
    const int64_t self[] = {4242};
    expect_path(ctx, &g, 4242, 4242, self, 0);
    /* Bad ids name which end is wrong; the output is untouched. */
    tdm_lattice_path p = {.hops = 77};
    assert_int_equal(tdm_lattice_sp(ctx, &g, -1, 5, TDM_DEVICE_AUTO, &p), TDM_E_RANGE);
    assert_non_null(strstr(tdm_last_error(), "source vertex -1"));
    assert_int_equal(tdm_lattice_sp(ctx, &g, 5, 10000, TDM_DEVICE_AUTO, &p), TDM_E_RANGE);
    assert_non_null(strstr(tdm_last_error(), "target vertex 10000"));
    assert_int_equal(p.hops, 77);
    assert_int_equal(tdm_lattice_sp(ctx, &g, 0, 1, 9, &p), TDM_E_INVAL); /* unknown backend preference */
    /* A forced CUDA request without a GPU implementation still answers on the CPU. */
    assert_int_equal(tdm_lattice_sp(ctx, &g, 0, 9999, TDM_DEVICE_CUDA, &p), TDM_OK);
    assert_string_equal(p.backend, "cpu");
    tdm_lattice_path_release(&p);
    tdm_lattice_free(lat);
    /* 2D/3: one of the six shortest 0->8 paths, the tie rule's. */
    assert_int_equal(tdm_lattice_new(ctx, 2, 3, 0, &lat), TDM_OK);
    tdm_lattice_get_csr(lat, &g);
    const int64_t p08[] = {0, 1, 2, 5, 8};
    expect_path(ctx, &g, 0, 8, p08, 4);
    const int64_t p80[] = {8, 5, 2, 1, 0}; /* the reverse, as the closed form says */
    expect_path(ctx, &g, 8, 0, p80, 4);
    tdm_lattice_free(lat);
    tdm_destroy(ctx);
}

static void test_random_lattice_pairs(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx();
    tu_rng r = tu_rng_for(301);
    int64_t *want = malloc(4096 * sizeof *want);
    for (int shape = 0; shape < 40; shape++) {
        int d = (int)tu_range(&r, 1, 6);
        int64_t Lmax = 2;
        while (ipow(Lmax + 1, d) <= 50000 && Lmax < 1000) Lmax++;
        int64_t L = tu_range(&r, 2, Lmax);
        tdm_lattice *lat;
        assert_int_equal(tdm_lattice_new(ctx, d, L, 0, &lat), TDM_OK);
        tdm_lattice_csr g;
        tdm_lattice_get_csr(lat, &g);
        const int64_t V = g.nvertices;
        for (int k = 0; k < 40; k++) {
            int64_t s = (int64_t)tu_below(&r, (uint64_t)V), t = (int64_t)tu_below(&r, (uint64_t)V);
            if (k == 0) s = 0, t = V - 1;
            int64_t hops = oracle_path(d, L, s, t, want), cs[32], ct[32], l1 = 0;
            tdm_lattice_coords(lat, s, cs);
            tdm_lattice_coords(lat, t, ct);
            for (int i = 0; i < d; i++) l1 += cs[i] > ct[i] ? cs[i] - ct[i] : ct[i] - cs[i];
            assert_int_equal(hops, l1);
            expect_path(ctx, &g, s, t, want, hops);
            /* path(t, s) = reverse(path(s, t)) on the lattice. */
            tdm_lattice_path a, b;
            assert_int_equal(tdm_lattice_sp(ctx, &g, s, t, TDM_DEVICE_CPU, &a), TDM_OK);
            assert_int_equal(tdm_lattice_sp(ctx, &g, t, s, TDM_DEVICE_CPU, &b), TDM_OK);
            assert_int_equal(a.hops, b.hops);
            for (int64_t i = 0; i <= a.hops; i++)
                tu_check(a.vertex[i] == b.vertex[a.hops - i], "%dD/%lld %lld<->%lld: not reversed at %lld", d, (long long)L,
                         (long long)s, (long long)t, (long long)i);
            tdm_lattice_path_release(&a);
            tdm_lattice_path_release(&b);
        }
        tdm_lattice_free(lat);
    }
    free(want);
    tdm_destroy(ctx);
}

/* ---- general graphs ------------------------------------------------------------------------------------ */

#define NMAX 40

typedef struct {
    int n;
    unsigned char adj[NMAX][NMAX];
    int dist[NMAX][NMAX];
    int64_t row[NMAX + 1];
    int32_t col[NMAX * NMAX];
} small_graph;

static void make_graph(small_graph *s, tu_rng *r) {
    memset(s, 0, sizeof *s);
    s->n = (int)tu_range(r, 2, NMAX);
    double p = tu_unit(r) * 0.25;
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
    for (int i = 0; i < s->n; i++)
        for (int j = 0; j < s->n; j++) s->dist[i][j] = i == j ? 0 : s->adj[i][j] ? 1 : 1 << 20;
    for (int m = 0; m < s->n; m++)
        for (int i = 0; i < s->n; i++)
            for (int j = 0; j < s->n; j++)
                if (s->dist[i][m] + s->dist[m][j] < s->dist[i][j]) s->dist[i][j] = s->dist[i][m] + s->dist[m][j];
}

/* The tie rule over brute-force distances: from t back to s through the lowest-id closer neighbour. */
static int ref_path(const small_graph *s, int a, int b, int64_t *out) {
    int k = s->dist[a][b];
    if (k >= 1 << 20) return -1;
    int v = b;
    out[k] = b;
    for (int j = k; j > 0; j--) {
        int u = 0;
        while (!(s->adj[v][u] && s->dist[a][u] == j - 1)) u++;
        out[j - 1] = u;
        v = u;
    }
    return k;
}

static void test_random_graphs(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx();
    tu_rng r = tu_rng_for(302);
    static small_graph s;
    int64_t want[NMAX];
    for (int round = 0; round < 200; round++) {
        make_graph(&s, &r);
        tdm_lattice_csr g = {s.n, s.row, s.col, 0};
        for (int k = 0; k < 20; k++) {
            int a = (int)tu_below(&r, (uint64_t)s.n), b = (int)tu_below(&r, (uint64_t)s.n);
            int hops = ref_path(&s, a, b, want);
            if (hops >= 0) {
                expect_path(ctx, &g, a, b, want, hops);
                continue;
            }
            tdm_lattice_path p;
            assert_int_equal(tdm_lattice_sp(ctx, &g, a, b, TDM_DEVICE_AUTO, &p), TDM_E_NOPATH);
            tu_check(p.hops == -1 && p.vertex == NULL, "unreachable %d->%d: hops %lld", a, b, (long long)p.hops);
            tdm_lattice_path_release(&p);
        }
    }
    tdm_destroy(ctx);
}

/* A batch returns exactly what single calls return, in input order, with per-item status. */
static void test_batch(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx();
    tu_rng r = tu_rng_for(303);
    static small_graph s;
    for (int round = 0; round < 30; round++) {
        tdm_lattice *lat = NULL;
        tdm_lattice_csr g;
        if (round % 2) {
            make_graph(&s, &r);
            g = (tdm_lattice_csr){s.n, s.row, s.col, 0};
        } else {
            assert_int_equal(tdm_lattice_new(ctx, (int)tu_range(&r, 1, 4), tu_range(&r, 2, 9), 0, &lat), TDM_OK);
            tdm_lattice_get_csr(lat, &g);
        }
        const size_t n = (size_t)tu_range(&r, 0, 300);
        int64_t *src = malloc((n + 1) * sizeof *src), *dst = malloc((n + 1) * sizeof *dst);
        tdm_lattice_path *paths = malloc((n + 1) * sizeof *paths);
        int *status = malloc((n + 1) * sizeof *status);
        /* Few distinct sources so that grouping matters; some out-of-range ids. */
        int64_t pool[5];
        for (int i = 0; i < 5; i++) pool[i] = (int64_t)tu_below(&r, (uint64_t)g.nvertices);
        for (size_t i = 0; i < n; i++) {
            src[i] = tu_below(&r, 3) ? pool[tu_below(&r, 5)] : (int64_t)tu_below(&r, (uint64_t)g.nvertices);
            dst[i] = (int64_t)tu_below(&r, (uint64_t)g.nvertices);
            if (!tu_below(&r, 40)) src[i] = -3;
            if (!tu_below(&r, 40)) dst[i] = g.nvertices;
        }
        assert_int_equal(tdm_lattice_sp_batch(ctx, &g, n, src, dst, TDM_DEVICE_AUTO, paths, status), TDM_OK);
        for (size_t i = 0; i < n; i++) {
            tdm_lattice_path p;
            int rc = tdm_lattice_sp(ctx, &g, src[i], dst[i], TDM_DEVICE_AUTO, &p);
            tu_check(rc == status[i], "round %d item %zu: batch status %d, single %d", round, i, status[i], rc);
            if (rc == TDM_OK || rc == TDM_E_NOPATH) {
                tu_check(p.hops == paths[i].hops, "round %d item %zu: hops", round, i);
                if (p.hops >= 0)
                    assert_memory_equal(p.vertex, paths[i].vertex, (size_t)(p.hops + 1) * sizeof *p.vertex);
                tdm_lattice_path_release(&p);
            }
            tdm_lattice_path_release(&paths[i]);
        }
        free(src), free(dst), free(paths), free(status);
        tdm_lattice_free(lat);
    }
    assert_int_equal(tdm_lattice_sp_batch(ctx, NULL, 1, NULL, NULL, 0, NULL, NULL), TDM_E_INVAL);
    tdm_destroy(ctx);
}

static void test_multi_source(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx();
    tu_rng r = tu_rng_for(304);
    static small_graph s;
    for (int round = 0; round < 200; round++) {
        make_graph(&s, &r);
        tdm_lattice_csr g = {s.n, s.row, s.col, 0};
        size_t ns = (size_t)tu_range(&r, 1, 6);
        int64_t src[6];
        for (size_t i = 0; i < ns; i++) src[i] = (int64_t)tu_below(&r, (uint64_t)s.n);
        if (ns > 1) src[ns - 1] = src[0]; /* duplicates are ignored */
        int32_t dist[NMAX];
        int64_t nearest[NMAX];
        assert_int_equal(tdm_lattice_bfs_multi(ctx, &g, src, ns, dist, nearest), TDM_OK);
        for (int v = 0; v < s.n; v++) {
            int best = 1 << 20;
            int64_t who = -1;
            for (size_t i = 0; i < ns; i++) {
                int dv = s.dist[src[i]][v];
                if (dv < best || (dv == best && dv < (1 << 20) && src[i] < who)) best = dv, who = src[i];
            }
            if (best >= 1 << 20) best = -1, who = -1;
            tu_check(dist[v] == best && nearest[v] == who, "round %d vertex %d: dist %d nearest %lld, want %d %lld", round, v,
                     dist[v], (long long)nearest[v], best, (long long)who);
        }
    }
    /* On a lattice the single-source sweep is the L1 distance. */
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(ctx, 3, 7, 0, &lat), TDM_OK);
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    int64_t s0 = 100, c0[3], c[3];
    int32_t *dist = malloc(343 * sizeof *dist);
    assert_int_equal(tdm_lattice_bfs_multi(ctx, &g, &s0, 1, dist, NULL), TDM_OK);
    tdm_lattice_coords(lat, s0, c0);
    for (int64_t v = 0; v < 343; v++) {
        tdm_lattice_coords(lat, v, c);
        int64_t l1 = 0;
        for (int i = 0; i < 3; i++) l1 += c[i] > c0[i] ? c[i] - c0[i] : c0[i] - c[i];
        assert_int_equal(dist[v], l1);
    }
    int64_t bad = 343;
    assert_int_equal(tdm_lattice_bfs_multi(ctx, &g, &bad, 1, dist, NULL), TDM_E_RANGE);
    assert_non_null(strstr(tdm_last_error(), "sources[0] = 343"));
    assert_int_equal(tdm_lattice_bfs_multi(ctx, &g, &bad, 0, dist, NULL), TDM_E_INVAL);
    free(dist);
    tdm_lattice_free(lat);
    tdm_destroy(ctx);
}

/* The path cache: hits return the computed path, bounded LRU, keyed by the ordered pair, dropped with the
 * graph, never for anonymous graphs, off with TANDEM_SP_CACHE=0, consistent under concurrent queries. */
static void test_cache(void **state) {
    (void)state;
    tdm_config cfg;
    tdm_config_init(&cfg);
    cfg.device = TDM_DEVICE_CPU;
    cfg.sp_cache = 8;
    tdm_ctx *ctx;
    assert_int_equal(tdm_init(&ctx, &cfg), TDM_OK);
    tdm_lattice *lat;
    assert_int_equal(tdm_lattice_new(ctx, 3, 6, 0, &lat), TDM_OK);
    tdm_lattice_csr g;
    tdm_lattice_get_csr(lat, &g);
    int64_t want[64];
    tdm_lattice_path p;
    assert_int_equal(tdm_lattice_sp(ctx, &g, 5, 200, TDM_DEVICE_AUTO, &p), TDM_OK);
    assert_int_equal(p.cache_hit, 0);
    tdm_lattice_path_release(&p);
    assert_int_equal(tdm_lattice_sp(ctx, &g, 5, 200, TDM_DEVICE_AUTO, &p), TDM_OK);
    assert_int_equal(p.cache_hit, 1);
    assert_string_equal(p.backend, "cache");
    int64_t hops = oracle_path(3, 6, 5, 200, want);
    assert_int_equal(p.hops, hops);
    assert_memory_equal(p.vertex, want, (size_t)(hops + 1) * 8);
    tdm_lattice_path_release(&p);
    /* The reverse pair is its own entry. */
    assert_int_equal(tdm_lattice_sp(ctx, &g, 200, 5, TDM_DEVICE_AUTO, &p), TDM_OK);
    assert_int_equal(p.cache_hit, 0);
    tdm_lattice_path_release(&p);
    /* LRU: 8 entries; touching (5,200) keeps it while (200,5) and older ones are evicted in order. */
    for (int64_t t = 10; t < 17; t++) {
        assert_int_equal(tdm_lattice_sp(ctx, &g, 5, 200, TDM_DEVICE_AUTO, &p), TDM_OK);
        assert_int_equal(p.cache_hit, 1);
        tdm_lattice_path_release(&p);
        assert_int_equal(tdm_lattice_sp(ctx, &g, 0, t, TDM_DEVICE_AUTO, &p), TDM_OK);
        tdm_lattice_path_release(&p);
    }
    assert_int_equal(tdm_lattice_sp(ctx, &g, 5, 200, TDM_DEVICE_AUTO, &p), TDM_OK);
    assert_int_equal(p.cache_hit, 1);
    tdm_lattice_path_release(&p);
    assert_int_equal(tdm_lattice_sp(ctx, &g, 200, 5, TDM_DEVICE_AUTO, &p), TDM_OK);
    assert_int_equal(p.cache_hit, 0); /* evicted */
    tdm_lattice_path_release(&p);
    /* Concurrent queries over a small pair set: every answer equals the oracle, hit or not. */
    int bad = 0;
#pragma omp parallel for num_threads(4) reduction(+ : bad)
    for (int i = 0; i < 2000; i++) {
        int64_t s = (i * 7) % 216, t = (i * 13 + 5) % 216 % 40, w[64];
        tdm_lattice_path q;
        if (tdm_lattice_sp(ctx, &g, s, t, TDM_DEVICE_AUTO, &q)) {
            bad++;
            continue;
        }
        int64_t h = oracle_path(3, 6, s, t, w);
        bad += q.hops != h || memcmp(q.vertex, w, (size_t)(h + 1) * 8) != 0;
        tdm_lattice_path_release(&q);
    }
    assert_int_equal(bad, 0);
    /* Trimming (the memory monitor's eviction hook) empties it; the next query recomputes. */
    size_t entries;
    uint64_t hits, misses;
    tdm_lat_cache_stats(ctx, &entries, &hits, &misses);
    assert_int_equal(entries, 8);
    assert_true(hits > 0 && misses > 0);
    assert_true(tdm_lat_cache_trim(ctx, SIZE_MAX) > 0);
    tdm_lat_cache_stats(ctx, &entries, NULL, NULL);
    assert_int_equal(entries, 0);
    assert_int_equal(tdm_lattice_sp(ctx, &g, 5, 200, TDM_DEVICE_AUTO, &p), TDM_OK);
    assert_int_equal(p.cache_hit, 0);
    tdm_lattice_path_release(&p);
    /* Freeing the lattice drops its entries; a new lattice (new id) starts cold. */
    tdm_lattice_free(lat);
    tdm_lat_cache_stats(ctx, &entries, NULL, NULL);
    assert_int_equal(entries, 0);
    assert_int_equal(tdm_lattice_new(ctx, 3, 6, 0, &lat), TDM_OK);
    tdm_lattice_get_csr(lat, &g);
    assert_int_equal(tdm_lattice_sp(ctx, &g, 5, 200, TDM_DEVICE_AUTO, &p), TDM_OK);
    assert_int_equal(p.cache_hit, 0);
    tdm_lattice_path_release(&p);
    /* Anonymous graphs are never cached. */
    tdm_lattice_csr anon = g;
    anon.id = 0;
    for (int k = 0; k < 2; k++) {
        assert_int_equal(tdm_lattice_sp(ctx, &anon, 1, 2, TDM_DEVICE_AUTO, &p), TDM_OK);
        assert_int_equal(p.cache_hit, 0);
        tdm_lattice_path_release(&p);
    }
    tdm_lattice_free(lat);
    tdm_destroy(ctx);
    /* TANDEM_SP_CACHE=0: never a hit. */
    cfg.sp_cache = 0;
    assert_int_equal(tdm_init(&ctx, &cfg), TDM_OK);
    assert_int_equal(tdm_lattice_new(ctx, 2, 4, 0, &lat), TDM_OK);
    tdm_lattice_get_csr(lat, &g);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(tdm_lattice_sp(ctx, &g, 0, 15, TDM_DEVICE_AUTO, &p), TDM_OK);
        assert_int_equal(p.cache_hit, 0);
        tdm_lattice_path_release(&p);
    }
    tdm_lattice_free(lat);
    tdm_destroy(ctx);
}

/* ---- the kept BFS workspace (src/lattice/bfs_ws.c) ---------------------------------------------------------
 * One context answers interleaved single, batch and multi-source queries over graphs of changing sizes
 * (sparse ones, so early exits leave partial labels and many targets are unreachable); every answer must
 * equal a plain queue BFS written here, with its own fresh arrays, plus the tie-rule walk. A workspace left
 * dirty by an earlier query, or too small for a later graph, shows up as a wrong distance or path. */
typedef struct {
    int64_t n;
    int64_t *row;
    int32_t *col;
} big_graph;

static big_graph random_sparse(tu_rng *r, int64_t n) {
    big_graph b = {n, malloc((size_t)(n + 1) * sizeof *b.row), NULL};
    /* A random symmetric graph of average degree ~2.5: adjacency from an edge list, sorted rows. */
    const int64_t m = n + n / 4;
    int64_t *deg = calloc((size_t)n, sizeof *deg), (*e)[2] = malloc((size_t)m * sizeof *e), ne = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t u = (int64_t)tu_below(r, (uint64_t)n), v = (int64_t)tu_below(r, (uint64_t)n);
        if (u == v) continue;
        e[ne][0] = u, e[ne][1] = v, ne++;
    }
    int64_t *tmp_row = calloc((size_t)n + 1, sizeof *tmp_row);
    for (int64_t i = 0; i < ne; i++) tmp_row[e[i][0] + 1]++, tmp_row[e[i][1] + 1]++;
    for (int64_t v = 0; v < n; v++) tmp_row[v + 1] += tmp_row[v];
    int32_t *tmp_col = malloc((size_t)tmp_row[n] * sizeof *tmp_col + 4);
    for (int64_t i = 0; i < ne; i++) {
        tmp_col[tmp_row[e[i][0]] + deg[e[i][0]]++] = (int32_t)e[i][1];
        tmp_col[tmp_row[e[i][1]] + deg[e[i][1]]++] = (int32_t)e[i][0];
    }
    b.col = malloc((size_t)tmp_row[n] * sizeof *b.col + 4);
    int64_t k = 0;
    for (int64_t v = 0; v < n; v++) {
        b.row[v] = k;
        int32_t *lo = tmp_col + tmp_row[v];
        const int64_t len = tmp_row[v + 1] - tmp_row[v];
        for (int64_t i = 1; i < len; i++) /* insertion sort: rows are short */
            for (int64_t j = i; j > 0 && lo[j - 1] > lo[j]; j--) {
                int32_t t = lo[j];
                lo[j] = lo[j - 1], lo[j - 1] = t;
            }
        for (int64_t i = 0; i < len; i++) /* duplicate edges dropped */
            if (i == 0 || lo[i] != lo[i - 1]) b.col[k++] = lo[i];
    }
    b.row[n] = k;
    free(deg), free(e), free(tmp_row), free(tmp_col);
    return b;
}

static void plain_bfs(const big_graph *b, int64_t s, int32_t *dist) {
    int32_t *q = malloc((size_t)b->n * sizeof *q);
    for (int64_t v = 0; v < b->n; v++) dist[v] = -1;
    int64_t h = 0, t = 0;
    dist[s] = 0, q[t++] = (int32_t)s;
    while (h < t) {
        int32_t u = q[h++];
        for (int64_t a = b->row[u]; a < b->row[u + 1]; a++)
            if (dist[b->col[a]] < 0) dist[b->col[a]] = dist[u] + 1, q[t++] = b->col[a];
    }
    free(q);
}

static void check_against_plain(const big_graph *b, int64_t s, int64_t t, const int32_t *dist, int rc,
                                const tdm_lattice_path *p, const char *what) {
    if (dist[t] < 0) {
        tu_check(rc == TDM_E_NOPATH && p->hops == -1 && !p->vertex, "%s %lld->%lld: rc %d, want NOPATH", what,
                 (long long)s, (long long)t, rc);
        return;
    }
    tu_check(rc == TDM_OK && p->hops == dist[t], "%s %lld->%lld: rc %d hops %lld, want %d", what, (long long)s,
             (long long)t, rc, (long long)p->hops, dist[t]);
    if (rc != TDM_OK || p->hops != dist[t]) return;
    int64_t v = t;
    for (int64_t j = dist[t]; j > 0; j--) {
        tu_check(p->vertex[j] == v, "%s %lld->%lld: vertex %lld", what, (long long)s, (long long)t, (long long)j);
        int64_t a = b->row[v];
        while (dist[b->col[a]] != j - 1) a++;
        v = b->col[a];
    }
    tu_check(p->vertex[0] == s, "%s: path starts at %lld", what, (long long)p->vertex[0]);
}

static void test_workspace_reuse(void **state) {
    (void)state;
    tdm_ctx *ctx = new_ctx();
    tu_rng r = tu_rng_for(305);
    static const int64_t sizes[] = {3000, 50, 20000, 700, 20000, 9, 4096};
    for (size_t round = 0; round < 3 * sizeof sizes / sizeof *sizes; round++) {
        big_graph b = random_sparse(&r, sizes[round % (sizeof sizes / sizeof *sizes)]);
        tdm_lattice_csr g = {b.n, b.row, b.col, 0};
        int32_t *want = malloc((size_t)b.n * sizeof *want), *got = malloc((size_t)b.n * sizeof *got);
        for (int q = 0; q < 12; q++) {
            int64_t s = (int64_t)tu_below(&r, (uint64_t)b.n);
            plain_bfs(&b, s, want);
            /* Near and far targets: early exits of every depth. */
            for (int k = 0; k < 6; k++) {
                int64_t t = (int64_t)tu_below(&r, (uint64_t)b.n);
                tdm_lattice_path p;
                int rc = tdm_lattice_sp(ctx, &g, s, t, TDM_DEVICE_CPU, &p);
                check_against_plain(&b, s, t, want, rc, &p, "sp");
                tdm_lattice_path_release(&p);
            }
            if (q % 4 == 0) {
                int64_t src[8], dst[8];
                tdm_lattice_path paths[8];
                int status[8];
                for (int i = 0; i < 8; i++) src[i] = s, dst[i] = (int64_t)tu_below(&r, (uint64_t)b.n);
                assert_int_equal(tdm_lattice_sp_batch(ctx, &g, 8, src, dst, TDM_DEVICE_CPU, paths, status), TDM_OK);
                for (int i = 0; i < 8; i++) {
                    check_against_plain(&b, s, dst[i], want, status[i], &paths[i], "batch");
                    tdm_lattice_path_release(&paths[i]);
                }
            }
            if (q % 3 == 0) {
                assert_int_equal(tdm_lattice_bfs_multi(ctx, &g, &s, 1, got, NULL), TDM_OK);
                tu_check(!memcmp(got, want, (size_t)b.n * sizeof *got), "sweep from %lld differs (n %lld)", (long long)s,
                         (long long)b.n);
            }
        }
        free(want), free(got), free(b.row), free(b.col);
    }
    tdm_destroy(ctx);
}

int main(void) {
    tu_init_seed("test_lattice_path");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spec_examples), cmocka_unit_test(test_random_lattice_pairs),
        cmocka_unit_test(test_random_graphs), cmocka_unit_test(test_batch),
        cmocka_unit_test(test_multi_source), cmocka_unit_test(test_cache), cmocka_unit_test(test_workspace_reuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
