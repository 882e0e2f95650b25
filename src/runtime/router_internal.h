/* router_internal.h: the router's state inside a context and the op-family table that calibration
 * walks; shared by router.c, costmodel.c, calibrate.c and devmem.c; not installed. */
#ifndef TANDEM_ROUTER_INTERNAL_H
#define TANDEM_ROUTER_INTERNAL_H

#include "core/internal.h"

#include <pthread.h>
#include <stdatomic.h>

/* One slot of the decision ring: seq is 0 while a writer fills it, so a reader copying the record
 * checks seq before and after and drops torn copies (no lock on the hot path). */
typedef struct {
    _Atomic uint64_t seq;
    tdm_route_record r;
} tdm_route_slot;

typedef struct tdm_router tdm_router;
struct tdm_router {
    _Atomic(tdm_costmodel *) model; /* immutable snapshot; never NULL after init */
    pthread_mutex_t mu;             /* calibration and publishing; never taken by a decision */
    tdm_costmodel **retired;        /* replaced snapshots, freed at tdm_destroy (readers may hold them) */
    size_t nretired, capretired;
    atomic_uchar tried[TDM_OP_COUNT]; /* lazy calibration attempted for the op */
    tdm_route_slot *ring;
    uint64_t mask;                  /* ring size - 1; ring NULL when TANDEM_ROUTE_LOG=0 */
    _Atomic uint64_t seq;
    char path[4096];                /* effective TANDEM_COSTMODEL_PATH ("" = do not persist) */
    char key[768];                  /* this machine's key */
    tdm_mem_monitor *monitors[TDM_MAX_BACKENDS]; /* per backend index, NULL for the CPU */
    const tdm_costmodel *cal;       /* the model tdm_calibrate is measuring (under mu; NULL otherwise) */
};

/* Sets up the router (ring, model snapshot, loading a persisted model) and the device monitors; called
 * by tdm_init once backends are registered. Errors: TDM_E_NOMEM, TDM_E_CONFIG (strict). */
int tdm_router_init(tdm_ctx *ctx);
/* Releases snapshots, the ring and the monitors; called by tdm_destroy after the backends are gone. */
void tdm_router_free(tdm_ctx *ctx);
/* Gives every device backend of ctx a memory monitor (TANDEM_MEM_PRESSURE, TANDEM_MEM_LIMIT) and sets
 * its pool's release threshold (devmem.c). Errors: TDM_E_NOMEM. */
int tdm_devmem_attach(tdm_ctx *ctx);
/* Fills m->date with the current UTC time. */
void tdm_costmodel_stamp(tdm_costmodel *m);

/* ---- op families: how to measure each op (calibrate.c walks this table) ------------------------------ */

/* Medians measured for one backend: point i is (work[i], levels[i]) taking us[i]; runs counts the timed
 * runs behind them. */
typedef struct {
    double work[32], levels[32], us[32];
    size_t n;
    uint32_t runs;
} tdm_cost_points;

typedef struct {
    tdm_op op;
    /* Work units of one call, from the family's own argument struct (documentation of W and a single
     * place to compute it: the engine and the calibration runner both call it). */
    double (*work)(const void *args);
    /* Measures op on backends bs[0..nb) (bs[i] supports op) within budget_ms, filling pts[i] by the
     * size ladder (x4 from 2^10 work units, 2 warm-ups and >= 10 timed runs per size, medians, stopping
     * after a median above 50 ms). */
    int (*calibrate)(tdm_ctx *ctx, tdm_op op, const tdm_backend *const *bs, int nb, double budget_ms,
                     tdm_cost_points *pts);
} tdm_cost_family;

/* The sequence engine's family (src/seq/calib.c): work = symbols of the searched patterns. */
typedef struct {
    uint64_t patterns, symbols;
} tdm_seq_work_args;
double tdm_seq_query_work(const void *args);
int tdm_seq_calibrate(tdm_ctx *ctx, tdm_op op, const tdm_backend *const *bs, int nb, double budget_ms,
                      tdm_cost_points *pts);

/* The lattice engine's families (src/lattice/calib.c): lattice.bfs (W = arcs of the graph, the arcs a sweep
 * scans; levels = BFS levels on the GPU side), lattice.xor (bytes), lattice.gemm (m*n*k),
 * lattice.gemm_batched (m*n*k*batch), lattice.ewise and lattice.reduce (elements). Fields an op does not
 * use are ignored. */
typedef struct {
    tdm_op op;
    double arcs;              /* bfs */
    double bytes;             /* xor */
    double m, n, k, batch;    /* gemm (batch 1), gemm_batched */
    double elements;          /* ewise, reduce */
} tdm_lat_work_args;
double tdm_lat_op_work(const void *args);
int tdm_lat_calibrate(tdm_ctx *ctx, tdm_op op, const tdm_backend *const *bs, int nb, double budget_ms,
                      tdm_cost_points *pts);

/* The ARC engine's family (src/arc/calib.c): arc.objects, W = cells labelled (the sum of h*w over the
 * grids of a batch; the slots' padding is not work). */
typedef struct {
    const uint8_t *hw; /* n (height, width) pairs */
    size_t n;
} tdm_arc_work_args;
double tdm_arc_objects_work(const void *args);
int tdm_arc_calibrate(tdm_ctx *ctx, tdm_op op, const tdm_backend *const *bs, int nb, double budget_ms,
                      tdm_cost_points *pts);

/* Device time of a calibration run less the modelled host<->device copies it made (the router adds those
 * per request from the bytes each call moves, so the fitted class is the device's own cost): measured us,
 * bytes copied each way, under the link of the model being calibrated. Untouched when the link is not trusted (then the
 * router adds no transfers either); never below a tenth of the measurement. */
double tdm_cal_less_link(const tdm_ctx *ctx, double us, uint64_t h2d_bytes, uint64_t d2h_bytes);

/* The family of op, or NULL when op has no calibration runner. */
const tdm_cost_family *tdm_cost_family_of(tdm_op op);

/* Ladder constants shared by the runners. */
#define TDM_CAL_FIRST_WORK 1024.0
#define TDM_CAL_STEP 4.0
#define TDM_CAL_WARMUPS 2
#define TDM_CAL_RUNS 10
#define TDM_CAL_STOP_US 50000.0

/* Median of n values (sorted in place). */
double tdm_cal_median(double *v, size_t n);
/* Appends one measured size to p: its work, levels and time (floored at 0.01 us), TDM_CAL_RUNS runs. */
void tdm_cal_add_point(tdm_cost_points *p, double work, double levels, double us);
/* Monotonic microseconds. */
double tdm_cal_now_us(void);

#endif
