/* lattice.h: the lattice engine (spec/lattice-and-runtime.md sections 1-5). d-dimensional open-boundary
 * grids stored as CSR, structure analysis of any CSR graph, BFS shortest paths with a tie rule that makes
 * every backend return the same path, reversible XOR masks (explicit or seeded keys), a catalytic
 * traversal that borrows caller memory as scratch and gives it back bit for bit, and matrix operations
 * (CBLAS on the CPU).
 *
 * Names: the spec's tdm_lattice_create / tdm_graph_analyze / tdm_sp / tdm_xor / tdm_gemm ... are
 * tdm_lattice_new / tdm_lattice_analyze / tdm_lattice_sp / tdm_lattice_xor / tdm_lattice_gemm here (one
 * prefix per module); the semantics are the spec's.
 *
 * Placement: every operation with a device path asks the router (tdm_route, backend.h) where it should run,
 * from its work (BFS arcs and levels, XOR bytes, GEMM m*n*k, elements), the bytes a device would move and
 * whether its inputs already live there, by the cost model measured on this machine; paths honour the
 * caller's pref argument (TDM_DEVICE_CPU/CUDA is the call's hint, AUTO leaves it to TANDEM_ROUTE_<OP>,
 * TANDEM_ROUTE and the model). Calls without a device path (analysis but its diameter sweeps, batches of
 * paths, multi-source sweeps, the lattice build, catalytic queries on host aux) run on the CPU. A device that
 * fails is logged and the CPU answers with the same result (under TANDEM_STRICT the device's error is
 * returned instead). Results that carry a backend name the one that actually ran. The CPU implementation
 * is the reference; device results equal it bit for bit (paths, distances, XOR, element-wise ops but exp)
 * or within spec section 5's bounds (GEMM, exp, sums).
 *
 * Thread safety: lattices and CSR views are immutable once built, so any number of threads may query them
 * at once. An aux handle is borrowed by one operation at a time (a second gets TDM_E_BUSY). */
#ifndef TANDEM_LATTICE_H
#define TANDEM_LATTICE_H

#include "tandem/backend.h"
#include "tandem/tandem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the lattice (section 1) --------------------------------------------------------------------------
 * Vertices are the vectors c in {0..L-1}^d; u ~ v iff they differ by exactly 1 in exactly one coordinate
 * (no wrap-around, no diagonals). Indexing is row-major, last coordinate fastest: stride s_i = L^(d-1-i),
 * index(c) = sum c_i*s_i. Each adjacency list is sorted ascending. */
#define TDM_LATTICE_MAX_DIMS 32
#define TDM_LATTICE_MAX_VERTICES INT64_C(2147483647) /* 2^31-1: CSR columns are int32 */
/* Reserved: wrap-around boundaries. Rejected with TDM_E_INVAL until the spec defines them. */
#define TDM_LATTICE_PERIODIC 0x1u

typedef struct tdm_lattice tdm_lattice;

/* A borrowed, read-only view of an undirected simple graph in CSR form: row_ptr[nvertices+1] (int64,
 * row_ptr[0] = 0, non-decreasing), col[row_ptr[nvertices]] (int32), each row strictly ascending, no self
 * loops, symmetric (u in row v iff v in row u). id identifies the graph for caches (0 = anonymous). */
typedef struct {
    int64_t nvertices;
    const int64_t *row_ptr;
    const int32_t *col;
    uint64_t id; /* 0 = anonymous: never cached (a caller's arrays may change) */
} tdm_lattice_csr;

/* Sizes of the d-dimensional lattice of side L without building it: V = L^d, E = d*L^(d-1)*(L-1) and the
 * CSR bytes 8(V+1)+8E. Any output may be NULL. Errors: TDM_E_INVAL (d outside 1..32 or L outside
 * 2..2^31-1; the message names which), TDM_E_OVERFLOW (L^d > 2^31-1, message gives the dimension at which
 * it overflowed). */
int tdm_lattice_sizes(int d, int64_t L, int64_t *vertices, int64_t *edges, uint64_t *csr_bytes);

/* Builds the lattice (CSR, O(V+E), parallel over TANDEM_THREADS). ctx must outlive the lattice (its path
 * cache forgets the lattice's paths when the lattice is freed). flags: 0 (TDM_LATTICE_PERIODIC is
 * reserved and refused). Errors: those of tdm_lattice_sizes; TDM_E_INVAL (ctx or out NULL, unknown flag);
 * TDM_E_NOMEM (the CSR would exceed TANDEM_LATTICE_MAX_BYTES, message states the bytes needed and the
 * cap; or host allocation failed). The caller owns *out (tdm_lattice_free). ctx is borrowed. */
int tdm_lattice_new(tdm_ctx *ctx, int d, int64_t L, unsigned flags, tdm_lattice **out);
void tdm_lattice_free(tdm_lattice *lat);

int tdm_lattice_dims(const tdm_lattice *lat);
int64_t tdm_lattice_side(const tdm_lattice *lat);
int64_t tdm_lattice_vertices(const tdm_lattice *lat);
int64_t tdm_lattice_edges(const tdm_lattice *lat);
uint64_t tdm_lattice_bytes(const tdm_lattice *lat); /* 8(V+1)+8E */
/* Milliseconds the CSR build took (for tools and benchmarks). */
double tdm_lattice_build_ms(const tdm_lattice *lat);
/* The CSR view (owned by lat, valid while lat lives). */
void tdm_lattice_get_csr(const tdm_lattice *lat, tdm_lattice_csr *out);

/* Vertex id of coordinates c[0..d). Errors: TDM_E_INVAL (NULL), TDM_E_RANGE (c_i outside 0..L-1; the
 * message names i and the value). */
int tdm_lattice_index(const tdm_lattice *lat, const int64_t *coords, int64_t *v);
/* Coordinates of vertex v into coords[0..d). Errors: TDM_E_INVAL (NULL), TDM_E_RANGE (v outside 0..V-1). */
int tdm_lattice_coords(const tdm_lattice *lat, int64_t v, int64_t *coords);

/* Checks that g is a well-formed CSR as described above (monotone offsets, columns in range, rows strictly
 * ascending, no self loops, symmetric). O(V + E log deg). Errors: TDM_E_INVAL naming the first fault. */
int tdm_lattice_csr_validate(const tdm_lattice_csr *g);

/* ---- structure analysis (section 2) ------------------------------------------------------------------- */
#define TDM_LATTICE_ANALYZE_DEGREES 0x1u    /* degree min/max/mean, histogram, density */
#define TDM_LATTICE_ANALYZE_COMPONENTS 0x2u /* components, connected, bipartite */
#define TDM_LATTICE_ANALYZE_TRIANGLES 0x4u  /* triangles, average clustering, transitivity */
#define TDM_LATTICE_ANALYZE_DIAMETER 0x8u   /* exact diameter by BoundingDiameters (implies COMPONENTS) */
#define TDM_LATTICE_ANALYZE_ALL 0xFu

typedef struct {
    int64_t vertices, edges;   /* edges = arcs / 2 */
    int64_t degree_min, degree_max;
    double degree_mean;        /* 2E/V (0 if V = 0) */
    int64_t *degree_hist;      /* degree_hist[k] = vertices of degree k, k = 0..degree_max; owned, see release */
    double density;            /* 2E/(V(V-1)), 0 if V < 2 */
    int64_t components;
    int connected, bipartite;
    int64_t triangles;
    double avg_clustering;     /* mean over all vertices of 2T_v/(k_v(k_v-1)), 0 where k_v < 2 */
    double transitivity;       /* 3T / sum C(k_v,2), 0 if no wedges */
    int64_t diameter;          /* -1 if disconnected (or not computed) */
    int64_t diameter_lo, diameter_hi; /* final bounds; equal when diameter_exact */
    int diameter_exact;        /* 0 if TANDEM_ANALYZE_MAX_BFS ran out first */
    int64_t diameter_bfs;      /* BFS sweeps BoundingDiameters needed */
    /* Wall time per metric group, milliseconds, and the backends that computed them: the diameter's BFS
     * sweeps may run on a device (backend_diameter), everything else runs on backend. */
    double ms_validate, ms_degrees, ms_components, ms_triangles, ms_diameter;
    const char *backend, *backend_diameter;
    unsigned flags;            /* what was computed */
} tdm_lattice_analysis;

/* Computes the metrics selected by flags (TDM_LATTICE_ANALYZE_*) on g, after validating it (errors:
 * TDM_E_INVAL for NULL, unknown flags or a malformed CSR). Metrics not requested are zero (diameter -1).
 * TDM_E_NOMEM on allocation failure. On success the caller releases out with tdm_lattice_analysis_release. */
int tdm_lattice_analyze(tdm_ctx *ctx, const tdm_lattice_csr *g, unsigned flags, tdm_lattice_analysis *out);
void tdm_lattice_analysis_release(tdm_lattice_analysis *a);

/* ---- shortest paths (section 3) ------------------------------------------------------------------------
 * Tie rule: with dist_s the BFS distances from s, the path is built backwards from t, stepping from v to
 * the lowest-id neighbour u with dist_s(u) = dist_s(v) - 1. It depends only on distances, so every backend
 * returns the same path. On the lattice: from s walk down every axis with t_i < s_i (lowest axis first),
 * then up every axis with t_i > s_i (highest axis first). */
typedef struct {
    int64_t hops;        /* BFS distance; -1 if unreachable */
    int64_t *vertex;     /* hops+1 vertices, s first, t last; NULL when unreachable; owned, see release */
    double ms;           /* this call's own time */
    const char *backend; /* backend that computed it; "cache" on a cache hit */
    int cache_hit;       /* 1 if the path came from the context's path cache (TANDEM_SP_CACHE) */
} tdm_lattice_path;

/* Shortest s-t path. pref: TDM_DEVICE_AUTO/CPU/CUDA (the router's per-call hint; see Placement). Paths of graphs
 * with a nonzero id (lattices) are kept in the context's LRU cache of TANDEM_SP_CACHE entries, keyed by the
 * ordered pair; a hit returns the stored path (cache_hit = 1) with this call's own time. Errors:
 * TDM_E_INVAL (NULL), TDM_E_RANGE (s or t outside 0..V-1; message names which), TDM_E_NOPATH (t not
 * reachable: out->hops = -1, out->vertex = NULL), TDM_E_NOMEM. On success and on TDM_E_NOPATH the caller
 * releases out with tdm_lattice_path_release. g is trusted to be well formed (tdm_lattice_csr_validate). */
int tdm_lattice_sp(tdm_ctx *ctx, const tdm_lattice_csr *g, int64_t s, int64_t t, int pref, tdm_lattice_path *out);
void tdm_lattice_path_release(tdm_lattice_path *p);

/* n shortest paths: paths[i] and status[i] are exactly what tdm_lattice_sp(src[i], dst[i]) gives, in input
 * order. One BFS per distinct source (stopping once all its targets are labelled), distinct sources in
 * parallel. Returns TDM_OK when the batch ran (items may still carry TDM_E_RANGE/TDM_E_NOPATH), or
 * TDM_E_INVAL / TDM_E_NOMEM for the batch as a whole (then no paths are set). Release every paths[i]. */
int tdm_lattice_sp_batch(tdm_ctx *ctx, const tdm_lattice_csr *g, size_t n, const int64_t *src, const int64_t *dst,
                         int pref, tdm_lattice_path *paths, int *status);

/* Multi-source BFS: dist[v] = min over sources of the hop distance (-1 if unreachable), nearest[v] = the
 * lowest source id attaining it (-1 if unreachable); duplicate sources are ignored. dist and nearest hold
 * V entries each (nearest may be NULL). One source gives the plain distance sweep. Errors: TDM_E_INVAL
 * (NULL, nsources = 0), TDM_E_RANGE (a source outside the graph; message gives its position), TDM_E_NOMEM. */
int tdm_lattice_bfs_multi(tdm_ctx *ctx, const tdm_lattice_csr *g, const int64_t *sources, size_t nsources,
                          int32_t *dist, int64_t *nearest);

/* ---- XOR transform (section 4) -------------------------------------------------------------------------
 * out[i] = in[i] ^ key[(offset + i) mod len] on raw bytes (typed arrays are XORed as their in-memory bytes,
 * nothing is cast). Processing [p, p+m) with offset + p equals the one-shot result, so streams can be
 * chunked. xor(xor(x, k), k) = x for every key and offset. It is a reversible mask, not encryption. */
typedef struct {
    const uint8_t *bytes;
    size_t len;      /* >= 1 */
    uint64_t offset; /* key position of byte 0 */
} tdm_lattice_key;

#define TDM_LATTICE_XOR_NO_CYCLE 0x1u /* require offset + n <= len instead of cycling the key */
#define TDM_LATTICE_SEED_RANDOM 0x2u  /* tdm_lattice_xor_seeded: draw the seed from getrandom, write it back */

/* Errors: TDM_E_INVAL (key or key bytes NULL, len 0, in/out NULL with n > 0, in and out overlapping other
 * than in == out, unknown flag, NO_CYCLE with offset + n > len). n = 0 is a no-op. */
int tdm_lattice_xor(tdm_ctx *ctx, const void *in, void *out, size_t n, const tdm_lattice_key *key, unsigned flags);

/* Many small XORs through the runtime's batch executor (backend.h, tdm_batch_*): item i is
 * tdm_lattice_xor(items[i].in, items[i].out, items[i].n, &items[i].key, items[i].flags), and status[i] and
 * the output bytes are exactly what that call gives, whichever backend ran its group. Groups are sized from
 * the cost model (W = bytes) and free device memory and placed by the router per group; pref
 * (TDM_DEVICE_AUTO/CPU/CUDA) is every group's hint. A group that fails on the device (out of memory after
 * one relieved retry, or an error) is rerun on the CPU. Items' outputs must not overlap each other or
 * another item's input (in == out within an item is fine). stats (may be NULL) gets the executor's
 * totals. Returns TDM_OK when the batch ran (items may still carry TDM_E_INVAL), TDM_E_INVAL (ctx NULL,
 * items or status NULL with n > 0, unknown pref), TDM_E_NOMEM (nothing ran), or under TANDEM_STRICT a
 * device group's error (its items carry it; the others ran). n = 0 is TDM_OK. */
typedef struct {
    const void *in;
    void *out;
    size_t n;
    tdm_lattice_key key;
    unsigned flags; /* as tdm_lattice_xor */
} tdm_lattice_xor_item;
int tdm_lattice_xor_batch(tdm_ctx *ctx, const tdm_lattice_xor_item *items, size_t n, int pref, int *status,
                          tdm_batch_stats *stats);

/* The SplitMix64 key stream of seed: word j = mix(seed + (j+1)*0x9E3779B97F4A7C15), byte i = byte i%8
 * (little-endian) of word i/8. Writes stream bytes [offset, offset+len) to buf. */
void tdm_lattice_key_from_seed(uint64_t seed, uint64_t offset, size_t len, uint8_t *buf);
/* Word j of the stream (the catalytic traversal's weights use it too). */
uint64_t tdm_lattice_splitmix_word(uint64_t seed, uint64_t j);

/* out[i] = in[i] ^ stream[offset + i] (no cycling). With TDM_LATTICE_SEED_RANDOM the seed is drawn from
 * getrandom() and written to *seed, so the caller can always undo the mask. Errors: as tdm_lattice_xor
 * (seed NULL is TDM_E_INVAL), TDM_E_IO (getrandom failed). */
int tdm_lattice_xor_seeded(tdm_ctx *ctx, const void *in, void *out, size_t n, uint64_t *seed, uint64_t offset,
                           unsigned flags);

/* ---- catalytic auxiliary memory (section 4) ------------------------------------------------------------
 * An aux handle lends memory of arbitrary contents to operations that use it as scratch only through
 * reversible XOR updates and return it bit for bit (no snapshot is ever taken). */
typedef struct tdm_lattice_aux tdm_lattice_aux;

/* Wraps caller memory (borrowed; must outlive the handle; any alignment). Errors: TDM_E_INVAL (NULL with
 * bytes > 0), TDM_E_NOMEM. */
int tdm_lattice_aux_wrap(tdm_ctx *ctx, void *mem, size_t bytes, tdm_lattice_aux **out);
/* Wraps memory of CUDA device `device` (borrowed, 8-byte aligned): catalytic queries on it run on that
 * device, the only place that may touch it. Errors: TDM_E_INVAL (NULL, misaligned), TDM_E_UNSUPPORTED (no
 * such device, or its backend has no catalytic kernels), TDM_E_NOMEM. */
int tdm_lattice_aux_wrap_device(tdm_ctx *ctx, int device, void *dev_mem, size_t bytes, tdm_lattice_aux **out);
/* Library-allocated aux of bytes (0 = TANDEM_AUX_BYTES); its contents are whatever the allocator gave.
 * Errors: TDM_E_INVAL, TDM_E_NOMEM. */
int tdm_lattice_aux_new(tdm_ctx *ctx, size_t bytes, tdm_lattice_aux **out);
void tdm_lattice_aux_free(tdm_lattice_aux *aux);
size_t tdm_lattice_aux_bytes(const tdm_lattice_aux *aux);
void *tdm_lattice_aux_data(tdm_lattice_aux *aux); /* a device pointer for device aux */
/* 1 if an operation failed in a way that left the contents changed (only a lost device can), else 0. */
int tdm_lattice_aux_dirty(const tdm_lattice_aux *aux);
/* Exclusive borrow, for callers that build their own catalytic steps: TDM_OK or TDM_E_BUSY. */
int tdm_lattice_aux_acquire(tdm_lattice_aux *aux);
void tdm_lattice_aux_release(tdm_lattice_aux *aux);

/* Carry-less product in GF(2^64) modulo x^64 + x^4 + x^3 + x + 1. */
uint64_t tdm_lattice_gf64_mul(uint64_t a, uint64_t b);

/* Hop distance from s to t up to the level budget K (1 <= K <= 2^20), using aux words [jV, (j+1)V) as
 * registers r_0..r_K ((K+1)*8V bytes). Weights w_v = splitmix word v of *seed (0 -> 1). With
 * TDM_LATTICE_SEED_RANDOM in flags the seed is drawn and written back. The answer is exact with probability
 * >= 1 - dist/2^64 over the seed (never too small). aux is restored bit for bit before returning, also on
 * error. Errors: TDM_E_INVAL (NULL, K out of range, unknown flag), TDM_E_RANGE (s, t), TDM_E_NOMEM (aux
 * smaller than (K+1)*8V: message gives both sizes), TDM_E_BUSY (aux borrowed), TDM_E_NOPATH (distance > K;
 * *dist = -1), TDM_E_IO (fault injected by TANDEM_TEST_FAIL_AT_STEP, after undoing). Device aux: the query
 * runs on its device (no CPU fallback: the CPU may not touch it); TDM_E_DEVICE on a device error with aux
 * intact, TDM_E_DEVICE_LOST when aux may have been left changed (the handle is then marked dirty). */
int tdm_lattice_catalytic_distance(tdm_ctx *ctx, const tdm_lattice_csr *g, tdm_lattice_aux *aux, int64_t s, int64_t t,
                                   int64_t K, uint64_t *seed, unsigned flags, int64_t *dist);
/* The section 3 path found with catalytic distance queries only (O(hops*K*E)): at each vertex, step to
 * the lowest-id neighbour one hop closer to s. Same errors; out as tdm_lattice_sp (release it). */
int tdm_lattice_catalytic_path(tdm_ctx *ctx, const tdm_lattice_csr *g, tdm_lattice_aux *aux, int64_t s, int64_t t,
                               int64_t K, uint64_t *seed, unsigned flags, tdm_lattice_path *out);

/* ---- matrix operations (section 5) ---------------------------------------------------------------------
 * Row-major host arrays of f32 or f64. The CPU path is CBLAS (OpenBLAS); element-wise loops are compiled
 * without FP contraction so that each result is one IEEE operation (bitwise comparable across backends). */
typedef enum { TDM_LATTICE_F32 = 0, TDM_LATTICE_F64 = 1 } tdm_lattice_dtype;
typedef enum { TDM_LATTICE_NOTRANS = 0, TDM_LATTICE_TRANS = 1 } tdm_lattice_trans;

/* C = alpha*op(A)*op(B) + beta*C with op(A) m x k, op(B) k x n, C m x n. lda >= columns of A as stored
 * (k, or m when transposed), likewise ldb (n, or k), ldc >= n; every dimension <= INT32_MAX. alpha and beta
 * are rounded to dtype. Errors: TDM_E_INVAL (NULL with a non-empty operand, bad dtype/trans, a leading
 * dimension too small (named), C overlapping A or B), TDM_E_OVERFLOW (a dimension > INT32_MAX or an
 * operand's extent overflowing size_t). */
int tdm_lattice_gemm(tdm_ctx *ctx, tdm_lattice_dtype dt, tdm_lattice_trans ta, tdm_lattice_trans tb, int64_t m,
                     int64_t n, int64_t k, double alpha, const void *A, int64_t lda, const void *B, int64_t ldb,
                     double beta, void *C, int64_t ldc);
/* batch independent GEMMs with operand i at A + i*stride_a elements (likewise B, C); each item equals the
 * single call (within section 5's bounds on a device). C items must not overlap each other (stride_c at least
 * one C item's extent, (m-1)*ldc + n, when batch > 1) nor any A/B item; A and B strides may be 0 (one operand
 * for every item). Errors as gemm. */
int tdm_lattice_gemm_batched(tdm_ctx *ctx, tdm_lattice_dtype dt, tdm_lattice_trans ta, tdm_lattice_trans tb,
                             int64_t m, int64_t n, int64_t k, double alpha, const void *A, int64_t lda,
                             int64_t stride_a, const void *B, int64_t ldb, int64_t stride_b, double beta, void *C,
                             int64_t ldc, int64_t stride_c, int64_t batch);

/* The pointer-array form: item i is A[i], B[i], C[i] (each an operand as in tdm_lattice_gemm). No C item may
 * overlap another C item or any A/B item. Errors as gemm (a NULL item pointer is named by its index). CPU
 * only for now (device placement would need device pointer tables). */
int tdm_lattice_gemm_batched_ptrs(tdm_ctx *ctx, tdm_lattice_dtype dt, tdm_lattice_trans ta, tdm_lattice_trans tb,
                                  int64_t m, int64_t n, int64_t k, double alpha, const void *const *A, int64_t lda,
                                  const void *const *B, int64_t ldb, double beta, void *const *C, int64_t ldc,
                                  int64_t batch);

typedef enum {
    TDM_LATTICE_EW_ADD = 0, /* x + y */
    TDM_LATTICE_EW_SUB,     /* x - y */
    TDM_LATTICE_EW_MUL,     /* x * y */
    TDM_LATTICE_EW_DIV,     /* x / y (IEEE) */
    TDM_LATTICE_EW_SCALE,   /* alpha * x */
    TDM_LATTICE_EW_ADDS,    /* x + alpha */
    TDM_LATTICE_EW_NEG,     /* -x */
    TDM_LATTICE_EW_ABS,     /* |x| */
    TDM_LATTICE_EW_SQUARE,  /* x * x */
    TDM_LATTICE_EW_SQRT,    /* sqrt(x) (IEEE) */
    TDM_LATTICE_EW_EXP,     /* exp(x) (libm; not bitwise across backends, see spec tolerances) */
    TDM_LATTICE_EW_COUNT
} tdm_lattice_ewise_op;

/* out[i] = op(x[i], y[i]) for i < n. y is used only by the binary ops (may be NULL otherwise); alpha (rounded
 * to dtype) only by SCALE and ADDS. out may equal x or y; partial overlap is TDM_E_INVAL. */
int tdm_lattice_ewise(tdm_ctx *ctx, tdm_lattice_ewise_op op, tdm_lattice_dtype dt, const void *x, const void *y,
                      double alpha, void *out, size_t n);

typedef enum { TDM_LATTICE_RED_SUM = 0, TDM_LATTICE_RED_MIN, TDM_LATTICE_RED_MAX } tdm_lattice_reduce_op;
/* Sum (pairwise in dtype's precision; 0 for n = 0), min or max (NaN if any element is NaN; -0 counts as less
 * than +0; TDM_E_INVAL for n = 0) of x[0..n), widened to double in *out. */
int tdm_lattice_reduce(tdm_ctx *ctx, tdm_lattice_reduce_op op, tdm_lattice_dtype dt, const void *x, size_t n,
                       double *out);

#ifdef __cplusplus
}
#endif
#endif
