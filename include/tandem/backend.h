/* backend.h: the backend interface. A backend is a struct of function pointers plus a context (the
 * ggml-style interface): the CPU backend is always registered and is the correctness reference for every
 * operation; the CUDA backend lives in a separately built module (libtandem_cuda.so) that tdm_init loads
 * with dlopen and registers only when a device is present, so the core library has no link-time CUDA
 * dependency and everything works without a GPU.
 *
 * Each backend answers one `supports` switch over the operation list below; engines ask
 * tdm_backend_select() where an operation may run. */
#ifndef TANDEM_BACKEND_H
#define TANDEM_BACKEND_H

#include "tandem/tandem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { TDM_BACKEND_CPU = 0, TDM_BACKEND_CUDA = 1 } tdm_backend_kind;

/* Operations that backends may implement. Append only. */
#define TDM_OP_LIST(X)                                                                                     \
    X(TDM_OP_SEQ_LCS, "seq.lcs")                                                                           \
    X(TDM_OP_SEQ_DIFFLIB, "seq.difflib")                                                                   \
    X(TDM_OP_SEQ_CHAR, "seq.char")                                                                         \
    X(TDM_OP_SEQ_PREFILTER, "seq.prefilter")                                                               \
    X(TDM_OP_SEQ_SELECT, "seq.select")                                                                     \
    X(TDM_OP_ARC_OBJECTS, "arc.objects")                                                                   \
    X(TDM_OP_LATTICE_BUILD, "lattice.build")                                                               \
    X(TDM_OP_LATTICE_BFS, "lattice.bfs")                                                                   \
    X(TDM_OP_LATTICE_XOR, "lattice.xor")                                                                   \
    X(TDM_OP_LATTICE_CATALYTIC, "lattice.catalytic")                                                       \
    X(TDM_OP_LATTICE_GEMM, "lattice.gemm")                                                                 \
    X(TDM_OP_LATTICE_GEMM_BATCHED, "lattice.gemm_batched")                                                 \
    X(TDM_OP_LATTICE_EWISE, "lattice.ewise")                                                               \
    X(TDM_OP_LATTICE_REDUCE, "lattice.reduce")

typedef enum {
#define TDM_X_OP(name, text) name,
    TDM_OP_LIST(TDM_X_OP)
#undef TDM_X_OP
        TDM_OP_COUNT
} tdm_op;

/* "seq.lcs" etc.; "unknown" outside the list. */
const char *tdm_op_name(tdm_op op);

typedef enum { TDM_COPY_H2D = 0, TDM_COPY_D2H = 1, TDM_COPY_D2D = 2 } tdm_copy_kind;

typedef struct tdm_backend tdm_backend;
struct tdm_backend {
    const char *name;      /* "cpu", "cuda:0"; owned by the backend */
    tdm_backend_kind kind;
    int device;            /* device ordinal; -1 for the CPU */
    char description[128]; /* e.g. the GPU's name and compute capability, or the CPU model */
    void *impl;            /* backend-private state */

    /* 1 if this backend computes op exactly (bit-identical to the CPU reference), else 0. */
    int (*supports)(const tdm_backend *b, tdm_op op);
    /* Free and total memory the backend can allocate from, in bytes. */
    int (*mem_info)(const tdm_backend *b, size_t *free_bytes, size_t *total_bytes);
    /* Memory on the backend (device memory for CUDA, host memory for the CPU). Errors: TDM_E_NOMEM
     * (CPU), TDM_E_DEVICE_OOM, TDM_E_DEVICE. */
    int (*alloc)(const tdm_backend *b, size_t bytes, void **ptr);
    int (*release)(const tdm_backend *b, void *ptr); /* accepts NULL */
    /* Synchronous copy of bytes between host and this backend's memory. */
    int (*copy)(const tdm_backend *b, void *dst, const void *src, size_t bytes, tdm_copy_kind kind);
    /* Waits until all work issued to the backend has finished. */
    int (*sync)(const tdm_backend *b);
    /* Releases impl and the struct itself; called by tdm_destroy. */
    void (*destroy)(tdm_backend *b);
    /* The sequence engine's device entry points (src/seq/seq_device.h) where the backend keeps patterns
     * in its own memory; NULL otherwise (the CPU works on the host store directly). */
    const struct tdm_seq_dev_ops *seq;
    /* The ARC engine's device entry points (src/arc/arc_device.h); NULL where there are none. */
    const struct tdm_arc_dev_ops *arc;

    /* Appended with the router and device memory (CUDA module ABI 4). */
    /* Pool statistics of the backend's allocator (device: ReservedMemCurrent/UsedMemCurrent); NULL where
     * there is no pool (the CPU). */
    int (*pool_stats)(const tdm_backend *b, uint64_t *reserved, uint64_t *used);
    /* Returns cached pool memory to the driver (cudaMemPoolTrimTo(pool, 0) after a synchronise). */
    int (*trim)(const tdm_backend *b);
    /* Sets the pool's release threshold (TANDEM_MEM_RELEASE_THRESHOLD). */
    int (*set_release_threshold)(const tdm_backend *b, uint64_t bytes);
    /* The device's memory monitor (struct tdm_mem_monitor, below), set by the core after creation;
     * the module's allocations report to it. NULL for the CPU. */
    struct tdm_mem_monitor *mem;
    /* Identity for the cost model's machine key (UUID, driver and runtime versions); "" if unknown. */
    char identity[160];
    /* The lattice engine's device entry points (src/lattice/lattice_device.h); NULL on the CPU. */
    const struct tdm_lattice_dev_ops *lattice;
};

/* Number of registered backends (>= 1: index 0 is always the CPU). */
int tdm_backend_count(const tdm_ctx *ctx);
/* Backend i (0 <= i < count), owned by ctx; NULL out of range. */
const tdm_backend *tdm_backend_get(const tdm_ctx *ctx, int i);
/* First backend of this kind, or NULL. */
const tdm_backend *tdm_backend_find(const tdm_ctx *ctx, tdm_backend_kind kind);

/* Why tdm_backend_select (or an engine on top of it) chose what it chose. SMALL_INPUT: auto kept the work
 * on the CPU because it is below the size where the GPU was measured to win. DEVICE_ERROR: the device
 * failed (an error or a full device) and the CPU gave the answer instead. */
#define TDM_ROUTE_REASON_LIST(X)                                                                           \
    X(TDM_ROUTE_ONLY_CPU, "NO_GPU")                                                                        \
    X(TDM_ROUTE_NO_GPU_IMPL, "NO_GPU_IMPL")                                                                \
    X(TDM_ROUTE_FORCED_CPU, "FORCED_CPU")                                                                  \
    X(TDM_ROUTE_FORCED_GPU, "FORCED_GPU")                                                                  \
    X(TDM_ROUTE_FORCED_GPU_UNAVAILABLE, "FORCED_GPU_UNAVAILABLE")                                          \
    X(TDM_ROUTE_PREFER_GPU, "PREFER_GPU")                                                                  \
    X(TDM_ROUTE_SMALL_INPUT, "SMALL_INPUT")                                                                \
    X(TDM_ROUTE_DEVICE_ERROR, "DEVICE_ERROR")                                                              \
    X(TDM_ROUTE_MODEL_CPU, "MODEL_CPU")                                                                    \
    X(TDM_ROUTE_MODEL_GPU, "MODEL_GPU")                                                                    \
    X(TDM_ROUTE_FORCED_CALL, "FORCED_CALL")                                                                \
    X(TDM_ROUTE_FORCED_ENV, "FORCED_ENV")                                                                  \
    X(TDM_ROUTE_RESIDENCY_ONLY, "RESIDENCY_ONLY")                                                          \
    X(TDM_ROUTE_MEM_PRESSURE, "MEM_PRESSURE")                                                              \
    X(TDM_ROUTE_MEM_INSUFFICIENT, "MEM_INSUFFICIENT")                                                      \
    X(TDM_ROUTE_OOM_FALLBACK, "OOM_FALLBACK")                                                              \
    X(TDM_ROUTE_DEVICE_LOST, "DEVICE_LOST")

typedef enum {
#define TDM_X_REASON(name, text) name,
    TDM_ROUTE_REASON_LIST(TDM_X_REASON)
#undef TDM_X_REASON
} tdm_route_reason;
const char *tdm_route_reason_name(tdm_route_reason r);

/* Chooses the backend for op under preference pref (TDM_DEVICE_AUTO/CPU/CUDA): a backend is considered
 * only if it supports op. Forced CUDA without a usable device falls back to the CPU with reason
 * FORCED_GPU_UNAVAILABLE, or fails with TDM_E_UNSUPPORTED when TANDEM_STRICT is on. With
 * TANDEM_DEBUG_ROUTER=1 each decision and its reason is logged (at warn level, so it shows by default). This
 * answers what *can* run op (auto: a GPU that supports it, reason PREFER_GPU); where it *should* run,
 * given its size and residency, is tdm_route's answer below. */
int tdm_backend_select(const tdm_ctx *ctx, tdm_op op, tdm_device_pref pref, const tdm_backend **out,
                       tdm_route_reason *reason);

/* ---- the router and its cost model (src/runtime/router.c, costmodel*.c; spec section 6.2) --------------
 * tdm_backend_select answers what can run an op; tdm_route decides where it should, from a cost model
 * measured on this machine: for backend b, T_b = t0 + W/theta + [GPU] levels*lambda + transfers of the
 * inputs not resident on b and of the outputs wanted on the host. The GPU is chosen when
 * T_gpu <= (1 - TANDEM_ROUTE_MARGIN) * T_cpu. Overrides, highest first: the call's hint >
 * TANDEM_ROUTE_<OP> > TANDEM_ROUTE > model. A decision reads one immutable model snapshot (atomic
 * pointer): no lock, allocation or formatting unless TANDEM_DEBUG_ROUTER=1. */

#define TDM_COST_BUCKETS 16

/* One (op, backend kind) class of the model. Times in microseconds. */
typedef struct {
    int trusted;          /* >= 10 timed runs, and median relative residual <= 0.25 or (at least 4 buckets)
                             interp_residual <= 0.25: then predictions inside the measured range
                             interpolate between buckets, which a curve no line fits still allows */
    uint32_t samples;     /* timed runs behind the fit */
    double t0_us;         /* fixed cost of a call (launch, setup, small transfers) */
    double us_per_work;   /* 1/theta: cost of one work unit */
    double lambda_us;     /* per level of a level-synchronous op on the GPU; 0 for other ops */
    double residual;      /* median |fit - median| / median over the buckets */
    double interp_residual; /* median over the interior buckets of |interpolation from its two neighbours
                               (log-log) - median| / median; -1 with fewer than 3 buckets */
    uint32_t nbuckets;    /* measured sizes: median time per work (ascending work, levels 0) */
    double bucket_work[TDM_COST_BUCKETS], bucket_us[TDM_COST_BUCKETS];
} tdm_cost_class;

/* Host<->device link, one direction: lat_us + bytes * us_per_byte. */
typedef struct {
    double lat_us, us_per_byte;
} tdm_cost_link;

typedef struct {
    char key[768];  /* machine key: CPU model, cores, TANDEM_THREADS, GPUs, library version */
    char date[32];  /* ISO 8601 UTC of the calibration */
    tdm_cost_class cls[TDM_OP_COUNT][2]; /* [op][0 = CPU, 1 = GPU] */
    int link_trusted;
    tdm_cost_link h2d, d2h;
} tdm_costmodel;

/* Predicted time of op on the CPU (gpu = 0) or the GPU (gpu = 1) for work and levels, transfers not
 * included: log-log interpolation between bucket medians inside the measured range (levels 0), the fit
 * outside it. Returns -1 when the class is not trusted. */
double tdm_costmodel_predict(const tdm_costmodel *m, tdm_op op, int gpu, double work, double levels);
/* Fits c from n measured medians (work, levels, time): least squares with relative weights (1/t^2),
 * t0 and slopes kept >= 0, buckets filled from the level-0 points, samples = runs (timed runs behind
 * the medians), trust rule applied. Errors: TDM_E_INVAL (n == 0, NULL, a time <= 0 or NaN). */
int tdm_costmodel_fit(tdm_cost_class *c, const double *work, const double *levels, const double *us, size_t n,
                      uint32_t runs);
/* This machine's key for ctx (see tdm_costmodel.key). */
void tdm_costmodel_machine_key(const tdm_ctx *ctx, char *buf, size_t cap);
/* Writes m as JSON to path atomically (temp file + rename, under an flock on path.lock). Errors: TDM_E_IO. */
int tdm_costmodel_save(const tdm_costmodel *m, const char *path);
/* Reads path. Errors: TDM_E_NOTFOUND (no file), TDM_E_IO, TDM_E_PARSE / TDM_E_CORRUPT (bad content),
 * TDM_E_STALE (made under another key than key: the caller recalibrates, never uses it). */
int tdm_costmodel_load(const char *path, const char *key, tdm_costmodel *out);
/* The effective model path of ctx ("" when persistence is off). */
const char *tdm_costmodel_path(const tdm_ctx *ctx);
/* A copy of ctx's current model. */
void tdm_costmodel_get(const tdm_ctx *ctx, tdm_costmodel *out);
/* Publishes a copy of m as ctx's model (atomic swap; the previous snapshot stays valid until
 * tdm_destroy). Errors: TDM_E_NOMEM, TDM_E_INVAL. */
int tdm_costmodel_set(tdm_ctx *ctx, const tdm_costmodel *m);

/* Measures the op families in mask (bit 1u << op; 0 = all that exist) on every backend that supports them,
 * plus the host-device link when a GPU is present, within TANDEM_CALIBRATION_BUDGET_MS; publishes the
 * model and writes it to TANDEM_COSTMODEL_PATH unless that is "". Errors: TDM_E_NOMEM, TDM_E_IO (the
 * model is published even when it cannot be written), TDM_E_DEVICE. */
int tdm_calibrate(tdm_ctx *ctx, unsigned mask);

typedef struct {
    tdm_op op;
    double work;          /* W in the op family's units (seq queries: symbols searched) */
    double levels;        /* level count of level-synchronous ops, else 0 */
    uint64_t h2d_bytes;   /* inputs not valid on the device (moved if the GPU runs it) */
    uint64_t d2h_bytes;   /* outputs wanted on the host (moved if the GPU runs it) */
    uint64_t to_cpu_bytes; /* inputs valid only on the device (moved if the CPU runs it) */
    uint64_t device_bytes; /* device memory the op needs */
    int resident;         /* the inputs already live on the device */
    tdm_device_pref hint; /* per-call override: AUTO (none), CPU or CUDA */
} tdm_route_req;

typedef struct {
    const tdm_backend *backend;
    tdm_route_reason reason;
    double t_cpu_us, t_gpu_us; /* predictions (-1: not computed) */
    uint64_t record;           /* id of the decision record (0: logging off) */
} tdm_route_decision;

/* Decides where req runs. Errors: TDM_E_INVAL (bad op or NULL), TDM_E_UNSUPPORTED (GPU forced but no
 * usable GPU, with TANDEM_STRICT=1). With TANDEM_CALIBRATE=auto an untrusted class with a GPU available
 * is calibrated once, on its first decision (that decision pays for it). */
int tdm_route(const tdm_ctx *ctx, const tdm_route_req *req, tdm_route_decision *out);

typedef struct {
    uint64_t seq;          /* 1, 2, ... in decision order */
    double ts_ms;          /* CLOCK_MONOTONIC milliseconds */
    tdm_op op;
    double work, levels;
    uint64_t bytes_moved;  /* bytes the chosen backend has to move */
    double t_cpu_us, t_gpu_us;
    int chosen_gpu;
    tdm_route_reason reason;
    double measured_us;    /* filled by tdm_route_measured; -1 until then */
} tdm_route_record;

/* Records the measured time of decision `record` (ignored when it left the ring). */
void tdm_route_measured(const tdm_ctx *ctx, uint64_t record, double us);
/* Copies up to cap of the newest records, oldest first, into out; *n gets the count. */
void tdm_route_log_read(const tdm_ctx *ctx, tdm_route_record *out, size_t cap, size_t *n);

/* ---- device memory (src/runtime/devmem.c; spec section 6.3) ---------------------------------------------
 * A monitor per device: samples {free, total, pool reserved, pool used}, utilisation
 * u = (total - free - (reserved - used)) / total, pressure levels with hysteresis (a level is left
 * downwards only 0.05 below its threshold), trimming and eviction callbacks, accounting of the library's
 * device bytes with TANDEM_MEM_LIMIT, and the allocation-failure path: trim -> CRITICAL callbacks -> one
 * retry -> TDM_E_DEVICE_OOM, which callers absorb by running on the CPU (reason OOM_FALLBACK, counted). */
typedef enum {
    TDM_PRESSURE_LOW = 0,
    TDM_PRESSURE_MODERATE = 1,
    TDM_PRESSURE_HIGH = 2,
    TDM_PRESSURE_CRITICAL = 3
} tdm_pressure;
const char *tdm_pressure_name(tdm_pressure p);
/* The next level from cur at utilisation u under thresholds thr (MODERATE, HIGH, CRITICAL). */
tdm_pressure tdm_pressure_step(tdm_pressure cur, double u, const double thr[3]);

/* Eviction callback: frees what it can towards `wanted` bytes and returns the bytes freed. Called with
 * no library lock held; it may allocate, free and query the monitor (an event it raises meanwhile is
 * handled by one more pass, not by recursion). */
typedef size_t (*tdm_evict_fn)(void *user, tdm_pressure level, size_t wanted);

typedef struct {
    uint64_t total, free, reserved, used;
} tdm_mem_sample;

/* Where a monitor reads memory figures and trims: a device backend, or a fake in tests. */
typedef struct {
    int (*sample)(void *user, tdm_mem_sample *out);
    int (*trim)(void *user); /* may be NULL */
    void *user;
} tdm_mem_source;

typedef struct tdm_mem_monitor tdm_mem_monitor;

typedef struct {
    tdm_pressure level;
    double utilisation;          /* of the last sample */
    tdm_mem_sample last;
    uint64_t limit;              /* TANDEM_MEM_LIMIT (0 = none) */
    uint64_t live_bytes, peak_bytes;
    uint64_t allocations, frees, failures, fallbacks, retries_ok;
    uint64_t trims, callback_passes, evicted_bytes, samples;
} tdm_mem_stats;

/* A monitor over src (copied) with thresholds thr (NULL: 0.60, 0.80, 0.90) and a byte limit (0 = none).
 * Errors: TDM_E_INVAL, TDM_E_NOMEM. */
int tdm_mem_monitor_new(const tdm_mem_source *src, const double thr[3], uint64_t limit, tdm_mem_monitor **out);
void tdm_mem_monitor_free(tdm_mem_monitor *m); /* accepts NULL */
/* Registers an eviction callback; lower priority values are called first. *handle identifies it.
 * Errors: TDM_E_INVAL, TDM_E_NOMEM (more than 64 callbacks). */
int tdm_mem_monitor_register(tdm_mem_monitor *m, tdm_evict_fn fn, void *user, int priority, int *handle);
/* Removes a callback; on return no pass calls it any more (a pass already running is waited for, unless
 * the caller is that pass), so its user data may be freed. */
void tdm_mem_monitor_unregister(tdm_mem_monitor *m, int handle);
/* Samples now and acts on a level entered (MODERATE: callbacks notified with wanted 0; HIGH, CRITICAL:
 * trim, then callbacks until u < (HIGH threshold - 0.05)). *level (may be NULL) gets the new level. */
int tdm_mem_monitor_sample(tdm_mem_monitor *m, tdm_pressure *level);
tdm_pressure tdm_mem_monitor_level(const tdm_mem_monitor *m);
/* Accounts bytes about to be allocated on the device. Over the limit it relieves (trim, CRITICAL
 * callbacks) and checks once more. Errors: TDM_E_DEVICE_OOM (counted as a failure). */
int tdm_mem_monitor_reserve(tdm_mem_monitor *m, size_t bytes);
void tdm_mem_monitor_unreserve(tdm_mem_monitor *m, size_t bytes);
/* After a real allocation failure: trim and CRITICAL callbacks asking for `wanted` bytes, before the
 * caller's one retry. Returns the bytes the callbacks freed. */
size_t tdm_mem_monitor_relieve(tdm_mem_monitor *m, size_t wanted);
/* Counts an allocation that failed after the retry / an operation rerun on the CPU. */
void tdm_mem_monitor_count_failure(tdm_mem_monitor *m);
void tdm_mem_monitor_count_fallback(tdm_mem_monitor *m);
void tdm_mem_monitor_stats(const tdm_mem_monitor *m, tdm_mem_stats *out);
/* The monitor of backend b in ctx (NULL for the CPU). */
tdm_mem_monitor *tdm_backend_monitor(const tdm_backend *b);


/* ---- the batch executor (src/runtime/batch.c; spec section 6.4) -----------------------------------------
 * Many small independent items of the same op families, run in groups: per family, the executor derives a
 * device group size from measured throughput (the smallest group reaching 90 % of the device's peak
 * items/s, B_thr = ceil(9 t0 / t1) from the cost model) capped by TANDEM_BATCH_MAX and by free device
 * memory (F_eff (1 - TANDEM_MEM_SAFETY) / 2 per group, two groups in flight, halved at CRITICAL pressure),
 * asks tdm_route where each such group should run, and splits the groups routed to the CPU into CPU
 * groups sized to keep every thread busy. Device groups run one after another on one thread while the
 * other threads (and that one, once the device is done) run the CPU groups in parallel. A device group
 * that fails for want of memory is retried once after relief (trim, eviction callbacks); if it fails
 * again, it and the family's remaining device groups run on the CPU (reason OOM_FALLBACK; other device
 * errors: DEVICE_ERROR), counted in the monitor and logged: nothing is lost and the results are those of
 * the CPU. Results are written by the caller's executors per item index, so they come back in submission
 * order by construction.
 *
 * Ownership and threads: a tdm_batch belongs to one thread at a time (no internal lock); its ctx must
 * outlive it. Family executors are called from several threads at once (distinct items), and for a
 * device backend from one thread at a time. */
typedef struct tdm_batch tdm_batch;

/* What one item costs: work W in its op family's units (tdm_route_req.work), host bytes a device would
 * read (moved host-to-device) and write back (device-to-host), and device scratch. The item's device
 * footprint is in + out + scratch. */
typedef struct {
    double work;
    uint64_t in_bytes, out_bytes, scratch_bytes;
} tdm_batch_cost;

/* Runs one group on backend b: items[0..count) are submission indices (ascending). Writes status[items[i]]
 * for each item (TDM_OK, or that item's own error such as TDM_E_RANGE) and the item's outputs. Returns
 * TDM_OK when the group ran, or a group-wide error: TDM_E_DEVICE_OOM, TDM_E_DEVICE, TDM_E_DEVICE_LOST
 * from a device (then no output of the group may have been written: copy results back last), after which
 * the executor reruns the group, on the device or on the CPU. A group-wide error on the CPU is given to
 * every item of the group that still says TDM_OK. */
typedef int (*tdm_batch_fn)(void *user, const tdm_backend *b, const size_t *items, size_t count, int *status);

typedef struct {
    tdm_op op;            /* routing, the cost model's class, statistics */
    tdm_batch_fn run;     /* required */
    void *user;           /* borrowed; handed to run */
    int device_ok;        /* 1: run has a device path; 0: CPU only (the router is still asked, for the record) */
    uint64_t group_bytes; /* device bytes a group needs once whatever its size (tables, a shared key) */
} tdm_batch_family;

typedef struct {
    tdm_device_pref hint; /* every group: AUTO (the router decides), CPU or CUDA (as tdm_route_req.hint) */
    size_t max_group;     /* cap on a group's items; 0: TANDEM_BATCH_MAX */
    int threads;          /* threads for CPU groups; 0: TANDEM_THREADS (tdm_ctx_threads) */
} tdm_batch_opts;

/* One group as it ran. */
typedef struct {
    int family;              /* index from tdm_batch_add_family */
    tdm_op op;
    size_t first, count;     /* submission index of its first item; its item count */
    const char *backend;     /* backend that gave the results ("cpu" after a fallback) */
    tdm_route_reason reason; /* the router's reason; OOM_FALLBACK / DEVICE_ERROR after a device failure */
    double work;             /* sum of its items' work */
    uint64_t device_bytes;   /* its device footprint (group_bytes + items' in + out + scratch) */
    double predicted_us;     /* the router's prediction for the backend chosen; -1 when none */
    double ms;               /* measured, retry and rerun included */
    int retried;             /* 1: the device failed, was relieved and ran it again */
    int fell_back;           /* 1: the device failed and the CPU gave the results */
    int status;              /* TDM_OK, or the group-wide error that its items received */
    uint64_t record;         /* routing decision (tdm_route_log_read); 0 when logging is off */
} tdm_batch_group;

typedef struct {
    size_t items, groups, device_groups, cpu_groups, retries, fallbacks;
    size_t device_group_items; /* the largest device group planned (0: none) */
    uint64_t mem_budget;       /* bytes a device group could use at planning (0: no device or no figure) */
    double ms;                 /* wall time of tdm_batch_run */
} tdm_batch_stats;

/* Sets opts to the defaults (AUTO, TANDEM_BATCH_MAX, TANDEM_THREADS). */
void tdm_batch_opts_init(tdm_batch_opts *opts);
/* An empty batch on ctx (borrowed) with opts (NULL: defaults; copied). Errors: TDM_E_INVAL (ctx or out
 * NULL, a hint outside AUTO/CPU/CUDA), TDM_E_NOMEM. The caller owns *out (tdm_batch_free). */
int tdm_batch_new(tdm_ctx *ctx, const tdm_batch_opts *opts, tdm_batch **out);
void tdm_batch_free(tdm_batch *b); /* accepts NULL */
/* Adds an op family (copied); *id (may be NULL) gets its index 0, 1, ... Errors: TDM_E_INVAL (NULL, no run
 * function, op outside the op list), TDM_E_NOMEM (more than 64 families). */
int tdm_batch_add_family(tdm_batch *b, const tdm_batch_family *f, int *id);
/* Submits one item of family; *index (may be NULL) gets its submission index 0, 1, ... which the
 * family's run function receives. Errors: TDM_E_INVAL (unknown family, NULL cost, work negative or NaN),
 * TDM_E_NOMEM. */
int tdm_batch_add(tdm_batch *b, int family, const tdm_batch_cost *cost, size_t *index);
/* Number of items submitted. */
size_t tdm_batch_count(const tdm_batch *b);
/* Plans and runs every submitted item; status[i] (tdm_batch_count entries; may be NULL only for an empty
 * batch) gets item i's status. Returns TDM_OK when every group ran (items may still carry their own
 * errors), TDM_E_INVAL (NULL status with items), TDM_E_NOMEM (planning; nothing ran), TDM_E_UNSUPPORTED
 * (GPU forced without one, TANDEM_STRICT), or under TANDEM_STRICT the device error of a failed group (not
 * rerun: its items carry it, the other groups still ran). An empty batch is TDM_OK. Items stay submitted:
 * a second run runs them again (tdm_batch_clear forgets them). */
int tdm_batch_run(tdm_batch *b, int *status);
/* The groups of the last run, in planning order (family, then submission order); owned by b, valid until
 * the next run, clear or free. */
const tdm_batch_group *tdm_batch_groups(const tdm_batch *b, size_t *n);
/* Totals of the last run (zeros before one). */
void tdm_batch_stats_get(const tdm_batch *b, tdm_batch_stats *out);
/* Forgets the items and the last run's groups; families stay. */
void tdm_batch_clear(tdm_batch *b);

#ifdef __cplusplus
}
#endif
#endif
