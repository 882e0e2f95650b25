/* prof.h: the profiler. Per-operation records (name, category, backend that ran, thread, stream, start and
 * duration in ns on CLOCK_MONOTONIC since the profiler started, device spans from CUDA event pairs, bytes
 * moved host-to-device and device-to-host, device memory in use, work units, routing record, parent scope,
 * status), per-thread rings that drop their oldest records when full and count what they dropped, summaries
 * per (name, backend), a Chrome trace event file (Perfetto, chrome://tracing) and a self-contained HTML
 * report (spec: lattice-and-runtime.md §6.5).
 *
 * The profiler is process-wide: a trace describes one process (one pid), and the CUDA module and every
 * context record into the same rings. tdm_init starts it when TANDEM_PROFILE=1 (capacity from
 * TANDEM_PROFILE_CAPACITY) and tdm_destroy of that context writes TANDEM_PROFILE_OUT.trace.json / .html.
 * The tandem command starts it for --profile FILE / --profile-html FILE.
 *
 * Cost: when the profiler is off a site costs one relaxed atomic load and a branch (TANDEM_PROF_ON). When on,
 * a record takes no lock shared with other threads and never waits for the device: device spans are event
 * pairs resolved when the trace is exported (which synchronises once).
 *
 * Thread safety: every function may be called from any thread. Export and summaries take a consistent
 * snapshot of each ring; records being written while the snapshot is taken appear in it or not at all. */
#ifndef TANDEM_PROF_H
#define TANDEM_PROF_H

#include <stdint.h>
#ifndef __cplusplus
#include <stdatomic.h>
#endif

#include "tandem/tandem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Record categories. GPU, H2D and D2H are device spans (drawn on a stream's pseudo-thread); INIT is shown
 * apart in the summaries (context, handles, warm-up). */
typedef enum {
    TDM_PROF_CAT_OP = 0,   /* a library operation on the host (the CPU computing, or the host driving a device) */
    TDM_PROF_CAT_USER = 1, /* TANDEM_PROF_BEGIN/END in user code */
    TDM_PROF_CAT_GPU = 2,  /* device compute, from a CUDA event pair */
    TDM_PROF_CAT_H2D = 3,  /* host-to-device copy, from a CUDA event pair */
    TDM_PROF_CAT_D2H = 4,  /* device-to-host copy, from a CUDA event pair */
    TDM_PROF_CAT_INIT = 5, /* initialisation */
    TDM_PROF_CAT_SYNC = 6, /* moving data between tiers (the sequence engine's syncs) */
    TDM_PROF_CAT_COUNT
} tdm_prof_cat;

/* "op", "user", "gpu", "h2d", "d2h", "init", "sync"; "unknown" outside the list. */
const char *tdm_prof_cat_name(tdm_prof_cat cat);

/* Options of tdm_prof_start. */
typedef struct {
    uint32_t capacity; /* records kept over all threads: 1024 .. 2^26 (TANDEM_PROFILE_CAPACITY, default 262144) */
    int nvtx;          /* 1: mirror scopes as NVTX ranges (TANDEM_NVTX); ignored when built without NVTX */
} tdm_prof_opts;

/* Defaults: capacity 262144, nvtx 0. */
void tdm_prof_opts_init(tdm_prof_opts *o);

/* Starts a profiling session: allocates every ring up front (capacity records, about 112 bytes each),
 * forgets the records of an earlier session and sets the time origin (ts 0) to now. Errors: TDM_E_INVAL
 * (capacity out of range), TDM_E_NOMEM, TDM_E_BUSY (a session is running). opts NULL = defaults. */
int tdm_prof_start(const tdm_prof_opts *opts);
/* Stops recording; the records stay readable (export, summaries) until the next start or tdm_prof_reset.
 * Device spans still pending are resolved first. No effect when not running. */
void tdm_prof_stop(void);
/* Stops and releases the records and rings. Interned names stay (sites cache their ids for the life of the
 * process). Must not race with threads that are recording (nor must tdm_prof_start). */
void tdm_prof_reset(void);
/* 1 while a session records. */
int tdm_prof_running(void);

/* 1 while recording, as a function (for C++ and the CUDA module, which reach the profiler through the
 * host table instead). */
int tdm_prof_on(void);
#ifndef __cplusplus
/* The enable flag that sites test (TANDEM_PROF_ON); exported so that the test is inline. Never write it. */
extern atomic_int tdm_prof_enabled_flag;
#define TANDEM_PROF_ON() (atomic_load_explicit(&tdm_prof_enabled_flag, memory_order_relaxed) != 0)
#endif

/* Nanoseconds since the session's time origin (CLOCK_MONOTONIC); 0 when no session was ever started. */
uint64_t tdm_prof_now(void);

/* The id of a name, interned once per process (names are copied). 0 on failure (no memory), which records
 * then show as "?". Sites cache the id (TANDEM_PROF_BEGIN does). */
uint32_t tdm_prof_intern(const char *name);

/* ---- scopes --------------------------------------------------------------------------------------------
 * A scope is a span on the calling thread; scopes nest (a per-thread stack, 64 deep; deeper scopes are
 * recorded without a parent). tdm_prof_begin returns a token for tdm_prof_end (0 when off or when the
 * stack is full), so an end without a begin is harmless. Fields set between begin and end (bytes, work,
 * backend, status) go into the record. */
typedef struct {
    uint64_t id; /* 0: nothing to end */
} tdm_prof_scope;

tdm_prof_scope tdm_prof_begin(uint32_t name_id, tdm_prof_cat cat);
/* Annotates the innermost open scope of this thread (no effect without one). backend: a name such as "cpu"
 * or "cuda:0" (interned on first use of each pointer value; pass string literals or stable strings). */
void tdm_prof_annotate(const char *backend, uint64_t work, uint64_t h2d_bytes, uint64_t d2h_bytes);
/* Ends the scope with a status (TDM_OK or a negative code). */
void tdm_prof_end(tdm_prof_scope s, int status);
/* Parent for records made on this thread now: the id of the innermost open scope, 0 if none. */
uint64_t tdm_prof_current(void);

#ifndef __cplusplus
/* User code: TANDEM_PROF_BEGIN(x, "name"); ... TANDEM_PROF_END(x); the name must be a literal or stable
 * string (its id is cached per site). Off: one relaxed load and a branch. TANDEM_PROF_BEGIN_CAT gives the
 * category (the library's own operations use it). */
#define TANDEM_PROF_BEGIN_CAT(var, name, cat)                                                               \
    tdm_prof_scope var = {0};                                                                              \
    do {                                                                                                   \
        if (TANDEM_PROF_ON()) {                                                                            \
            static atomic_uint tdm_prof_site_id_;                                                          \
            uint32_t tdm_prof_id_ = atomic_load_explicit(&tdm_prof_site_id_, memory_order_relaxed);         \
            if (!tdm_prof_id_) atomic_store(&tdm_prof_site_id_, tdm_prof_id_ = tdm_prof_intern(name));     \
            var = tdm_prof_begin(tdm_prof_id_, (cat));                                                     \
        }                                                                                                  \
    } while (0)
#define TANDEM_PROF_BEGIN(var, name) TANDEM_PROF_BEGIN_CAT(var, name, TDM_PROF_CAT_USER)
#define TANDEM_PROF_END(var)                                                                                \
    do {                                                                                                   \
        if ((var).id) tdm_prof_end((var), 0);                                                              \
    } while (0)
#endif

/* ---- records made elsewhere -----------------------------------------------------------------------------
 * A finished span or device span, as the CUDA module (or a future copy layer) reports it. ts and dur are
 * in ns on the session clock; tid 0 means the calling thread; stream >= 0 puts the span on the pseudo-thread
 * 1,000,000 + stream. */
typedef struct {
    uint32_t name;      /* tdm_prof_intern id */
    uint8_t cat;        /* tdm_prof_cat */
    int32_t stream;     /* -1: a host span */
    uint64_t ts, dur;   /* ns */
    uint64_t parent;    /* scope id, 0: none */
    const char *backend;
    uint64_t work, h2d_bytes, d2h_bytes;
    uint64_t mem_used, mem_reserved; /* device pool after the op; 0: unknown */
    int64_t route;      /* routing record id, -1: none */
    int32_t status;
} tdm_prof_span;
/* Adds a finished span. No effect when off. */
void tdm_prof_record(const tdm_prof_span *s);

/* Device memory after an operation: a "device memory" counter {used, reserved} and, when pressure >= 0, a
 * "pressure" counter (0 LOW .. 3 CRITICAL). The memory monitor calls this when it samples. */
void tdm_prof_mem_sample(uint64_t used, uint64_t reserved, int pressure);

/* A routing decision as an instant event: op name, chosen backend, reason (stable strings), predicted CPU
 * and GPU times (ns, 0 when the router had no model). The innermost open scope of this thread is taken as
 * the op the decision placed: its span carries the decision's id and its duration is reported as the
 * decision's measured time when it ends. Returns the id, -1 when off. The router calls this once per
 * decision (tdm_backend_select does). */
int64_t tdm_prof_route(const char *op, const char *backend, const char *reason, uint64_t predicted_cpu_ns,
                       uint64_t predicted_gpu_ns);
/* Reports the measured time of decision route explicitly (when the op did not run inside an open scope). */
void tdm_prof_route_measured(int64_t route, uint64_t measured_ns);
/* A fallback (device error, out of device memory, device lost) as an instant event: op, from -> to, why. */
void tdm_prof_fallback(const char *op, const char *from, const char *to, const char *why);

/* ---- device-span sources ------------------------------------------------------------------------------
 * A backend that records device spans as event pairs registers a flush function; export and stop call it
 * (synchronising the device once), and it reports each resolved span with tdm_prof_record. */
typedef void (*tdm_prof_flush_fn)(void *user);
/* Errors: TDM_E_NOMEM (more than 16 sources). */
int tdm_prof_source_add(tdm_prof_flush_fn fn, void *user);
void tdm_prof_source_remove(tdm_prof_flush_fn fn, void *user);
/* Calls every source's flush function. */
void tdm_prof_flush(void);
/* Free text for the trace's otherData (device name, driver); copied; NULL leaves a field unchanged. */
void tdm_prof_set_device_info(const char *device, const char *driver);

/* ---- reading --------------------------------------------------------------------------------------------- */
typedef struct {
    uint64_t recorded; /* records made this session */
    uint64_t kept;     /* records now in the rings */
    uint64_t dropped;  /* recorded - kept: the oldest, overwritten by newer ones */
    uint32_t threads;  /* rings in use */
    uint32_t capacity; /* records kept at most */
} tdm_prof_stats;
void tdm_prof_stats_get(tdm_prof_stats *out);

/* One summary row: every span of one name on one backend (device spans: "<backend> <cat>"). Times in ns. */
typedef struct {
    const char *name;    /* owned by the profiler, valid for the life of the process */
    const char *backend; /* ditto; "" for spans without one (user scopes) */
    tdm_prof_cat cat;
    uint64_t calls, total, min, max, p50, p95; /* p50/p95: nearest-rank percentiles */
    double mean;
    uint64_t bytes;      /* h2d + d2h bytes */
    double share;        /* total / the summed duration of all top-level spans (parent 0) of the session */
} tdm_prof_summary;

/* Summaries sorted by total time, descending (ties by name then backend); init rows included (cat INIT).
 * *rows is from tdm_malloc (tdm_free it); *n its length. Errors: TDM_E_NOMEM. Flushes device spans first. */
int tdm_prof_summarize(tdm_prof_summary **rows, size_t *n);

/* Writes the Chrome trace event JSON (§6.5) to path ("-" = stdout): {"displayTimeUnit":"ns","otherData":{...},
 * "traceEvents":[M, X, C, i events]}, times in µs with three decimals. Flushes device spans first.
 * Errors: TDM_E_IO (message names the path), TDM_E_NOMEM. */
int tdm_prof_export_trace(const char *path);
/* Writes the HTML report: one file, inline CSS and SVG, no script and no network. The swimlane timeline
 * draws at most 20,000 spans (the longest; the trace holds all). Errors: TDM_E_IO, TDM_E_NOMEM. */
int tdm_prof_export_html(const char *path);

#ifdef __cplusplus
}
#endif
#endif
