/* lattice_internal.h: what the lattice engine's sources share: the lattice's layout, timing, the BFS
 * kernel that analysis, shortest paths and the catalytic path all build on, and placement. Not installed. */
#ifndef TANDEM_LATTICE_INTERNAL_H
#define TANDEM_LATTICE_INTERNAL_H

#include "core/internal.h"
#include "tandem/lattice.h"

#include <time.h>

struct tdm_lattice {
    tdm_ctx *ctx; /* borrowed: its path cache drops this graph's entries when the lattice is freed */
    int d;
    int64_t L, V, E;
    int64_t stride[TDM_LATTICE_MAX_DIMS]; /* s_i = L^(d-1-i) */
    int64_t *row_ptr;                     /* V+1 */
    int32_t *col;                         /* 2E */
    uint64_t id;
    double build_ms;
};

/* A fresh nonzero graph id for caches. */
uint64_t tdm_lat_next_id(void);

/* Top-down queue BFS from s over g into dist (V entries, every entry -1 on entry; dist >= 0 marks visited)
 * using queue (V entries). Stops as soon as every vertex of stop[0..nstop) is labelled (nstop = 0: full
 * sweep). Returns the number of vertices labelled; *ecc (may be NULL) receives the largest distance
 * labelled. */
int64_t tdm_lat_bfs(const tdm_lattice_csr *g, int64_t s, int32_t *dist, int32_t *queue, const int64_t *stop,
                    size_t nstop, int32_t *ecc);

/* A BFS workspace (bfs_ws.c): dist and queue of cap entries each, every dist entry -1 while it rests.
 * take: one with cap >= V (the context's kept one when free and large enough, else a new one); NULL when
 * out of memory. clean: restores dist to -1 after a BFS that labelled `labelled` vertices (the count
 * tdm_lat_bfs returned, with the same queue). give: hands it back (kept or freed); accepts NULL. */
typedef struct tdm_lat_ws {
    size_t cap;
    int32_t *dist, *queue;
} tdm_lat_ws;
tdm_lat_ws *tdm_lat_ws_take(tdm_ctx *ctx, size_t V);
void tdm_lat_ws_clean(tdm_lat_ws *ws, int64_t labelled);
void tdm_lat_ws_give(tdm_ctx *ctx, tdm_lat_ws *ws);

/* Builds the tie-rule path to t from finished distances dist (dist[t] >= 0) into out->vertex/hops. Returns
 * TDM_OK or TDM_E_NOMEM. */
int tdm_lat_path_from_dist(const tdm_lattice_csr *g, const int32_t *dist, int64_t t, tdm_lattice_path *out);

/* The shortest-path cache (sp_cache.c), per context, keyed by (graph id, s, t); graph id 0 is never cached.
 * get: 1 and a fresh copy in out->vertex/hops on a hit, else 0. put: stores a copy of a found path
 * (silently skipped when memory is short). drop_graph: forgets a graph's entries. trim: evicts least
 * recently used entries until `wanted` bytes are freed (for the memory monitor); returns bytes freed. */
typedef struct tdm_lat_cache tdm_lat_cache;
int tdm_lat_cache_get(tdm_ctx *ctx, uint64_t graph, int64_t s, int64_t t, tdm_lattice_path *out);
void tdm_lat_cache_put(tdm_ctx *ctx, uint64_t graph, int64_t s, int64_t t, const tdm_lattice_path *p);
void tdm_lat_cache_drop_graph(tdm_ctx *ctx, uint64_t graph);
size_t tdm_lat_cache_trim(tdm_ctx *ctx, size_t wanted);
void tdm_lat_cache_stats(tdm_ctx *ctx, size_t *entries, uint64_t *hits, uint64_t *misses);

/* The argument checks of tdm_lattice_xor (messages name fn): TDM_OK or TDM_E_INVAL. */
int tdm_lat_xor_check(const char *fn, const void *in, const void *out, size_t n, const tdm_lattice_key *key,
                      unsigned flags);
/* tdm_lattice_xor's CPU body on checked arguments (n > 0), on up to `threads` threads. */
void tdm_lat_xor_cpu(const void *in, void *out, size_t n, const tdm_lattice_key *key, int threads);

/* A seed from getrandom (TDM_LATTICE_SEED_RANDOM). TDM_OK or TDM_E_IO. */
int tdm_lat_random_seed(uint64_t *seed);

/* The portable carry-less product (what CPUs without PCLMULQDQ use), exported so tests cover it too. */
uint64_t tdm_lat_gf64_mul_portable(uint64_t a, uint64_t b);

/* Runs the catalytic program P once on raw aux memory (registers r_0..r_K of g's V words each), without
 * checks: for tests, which must see that one run really changes aux and a second restores it. */
void tdm_lat_catalytic_program(const tdm_lattice_csr *g, void *aux_mem, int64_t K, int64_t s, uint64_t seed, int threads);

/* ---- placement (route.c) ----------------------------------------------------------------------------
 * A call describes itself to the router: work in its op family's units (src/lattice/calib.c), BFS levels,
 * the bytes a device run would move (host operands in, outputs back) and need, and whether its inputs
 * already live on the device. pref is the caller's TDM_DEVICE_AUTO/CPU/CUDA: CPU and CUDA are the
 * router's per-call hint (reason FORCED_CALL), AUTO leaves TANDEM_ROUTE_<OP>, TANDEM_ROUTE and the model
 * to decide. device_ok: this call has a device path (the backend's lattice entry points,
 * lattice_device.h); without one, or when the chosen backend offers none, the CPU answers (calls without a
 * device path are placed by tdm_backend_select, for the preference's checks and the debug line only). */
typedef struct {
    tdm_op op;
    int pref;
    int device_ok;
    double work, levels;
    uint64_t h2d_bytes, d2h_bytes, device_bytes;
    int resident;
} tdm_lat_req;

typedef struct {
    const tdm_backend *backend; /* where the call runs */
    tdm_route_reason reason;
    uint64_t record;            /* the router's decision record (0: none) */
    double t0_ms;               /* when the decision was taken, for the measured time */
} tdm_lat_placement;

/* Places q. Errors: TDM_E_INVAL (unknown pref), those of tdm_route / tdm_backend_select (TDM_E_UNSUPPORTED:
 * GPU forced without one under TANDEM_STRICT). */
int tdm_lat_place(tdm_ctx *ctx, const tdm_lat_req *q, tdm_lat_placement *out);
/* The op ran where p placed it: its time since the decision goes to the decision record. */
void tdm_lat_placed_done(tdm_ctx *ctx, const tdm_lat_placement *p);

/* What a BFS over g from s costs, known before it runs. arcs: what a sweep scans (an s-t query on a
 * lattice: the share within reach of t, estimated as (k / ecc(s))^d of the arcs). levels: the levels a
 * level-synchronous device BFS runs: on a lattice (recognised from the CSR: any id'd graph whose shape is a
 * d-dimensional grid) the L1 distance to t, or the eccentricity of s (sum of max(c_i, L-1-c_i)) for a
 * sweep, or the diameter d(L-1) for s < 0 (some source); on any other graph V-1, the bound that is safe
 * (it never sends a deep graph to a device that pays per level). resident: the device's BFS state already
 * holds g's CSR (tdm_lat_bfs_device_ran); csr_bytes: what uploading it moves. t < 0: a full sweep. */
typedef struct {
    double arcs, levels;
    int resident;
    uint64_t csr_bytes;
} tdm_lat_bfs_est;
void tdm_lat_bfs_estimate(tdm_ctx *ctx, const tdm_lattice_csr *g, int64_t s, int64_t t, tdm_lat_bfs_est *out);
/* A device BFS over g ran (ok = 1) or failed (ok = 0): the CUDA module keeps the CSR of the last graph it
 * searched when that graph has an id (src/cuda/lattice_bfs.cu, prepare), so residency follows it. */
void tdm_lat_bfs_device_ran(tdm_ctx *ctx, const tdm_lattice_csr *g, int ok);

/* ---- CPU bodies, for the entry points and the calibration runner (checked arguments) ------------------ */
/* Errors: TDM_E_UNSUPPORTED (no CPU BLAS could be loaded, matrix.c). */
int tdm_lat_gemm_cpu(tdm_ctx *ctx, tdm_lattice_dtype dt, tdm_lattice_trans ta, tdm_lattice_trans tb, int64_t m,
                      int64_t n, int64_t k, double alpha, const void *A, int64_t lda, int64_t stride_a, const void *B,
                      int64_t ldb, int64_t stride_b, double beta, void *C, int64_t ldc, int64_t stride_c,
                      int64_t batch);
void tdm_lat_ewise_cpu(tdm_lattice_ewise_op op, tdm_lattice_dtype dt, const void *x, const void *y, double alpha,
                       void *out, size_t n);
double tdm_lat_reduce_cpu(tdm_lattice_reduce_op op, tdm_lattice_dtype dt, const void *x, size_t n);

/* A device entry point failed with rc: logs it and returns TDM_OK so that the caller answers on the CPU,
 * or returns rc under TANDEM_STRICT (fallbacks are errors there). */
int tdm_lat_device_failed(tdm_ctx *ctx, const tdm_backend *b, tdm_op op, int rc);

#endif
