/* tandem.h: the library's base module. Version, status codes and tdm_strerror(), the thread-local detail
 * message, logging, allocation accounting, configuration (TANDEM_* variables) and the context that every
 * engine works under.
 *
 * Conventions used by every tandem header:
 * - Fallible functions return int: TDM_OK (0) or a negative TDM_E_* code. On error they also set a
 *   thread-local message (tdm_last_error()) naming the function and the value at fault.
 * - Results are written through out-parameters, which are left untouched on error unless stated.
 * - Objects are opaque handles made by _new (or tdm_init) and released by _free (or tdm_destroy); every
 *   release function accepts NULL.
 * - "Borrowed" means the callee keeps no reference after it returns unless said otherwise; "owned by X"
 *   means X releases it. */
#ifndef TANDEM_TANDEM_H
#define TANDEM_TANDEM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TDM_VERSION_MAJOR 0
#define TDM_VERSION_MINOR 1
#define TDM_VERSION_PATCH 0
#define TDM_VERSION_STRING "0.1.0"

/* Returns TDM_VERSION_STRING of the library actually linked. */
const char *tdm_version(void);

/* ---- status codes ------------------------------------------------------------------------------------
 * One list generates the enum and tdm_strerror(). Codes are stable: append, never renumber. */
#define TDM_STATUS_LIST(X)                                                                                 \
    X(TDM_OK, 0, "success")                                                                                \
    X(TDM_E_INVAL, -1, "invalid argument")                                                                 \
    X(TDM_E_RANGE, -2, "value out of range")                                                               \
    X(TDM_E_OVERFLOW, -3, "size overflow")                                                                 \
    X(TDM_E_NOMEM, -4, "out of host memory")                                                               \
    X(TDM_E_DEVICE_OOM, -5, "out of device memory")                                                        \
    X(TDM_E_DEVICE, -6, "device error")                                                                    \
    X(TDM_E_DEVICE_LOST, -7, "device lost")                                                                \
    X(TDM_E_NOPATH, -8, "no path")                                                                         \
    X(TDM_E_CONFIG, -9, "invalid configuration")                                                           \
    X(TDM_E_IO, -10, "input/output error")                                                                 \
    X(TDM_E_BUSY, -11, "resource busy")                                                                    \
    X(TDM_E_NOTFOUND, -12, "not found")                                                                    \
    X(TDM_E_CORRUPT, -13, "corrupt or truncated data")                                                     \
    X(TDM_E_UTF8, -14, "invalid UTF-8")                                                                    \
    X(TDM_E_UNSUPPORTED, -15, "not supported")                                                             \
    X(TDM_E_PARSE, -16, "parse error")                                                                     \
    X(TDM_E_VERSION, -17, "unsupported format version")                                                   \
    X(TDM_E_ARC_RAISE, -25, "ARC DSL call failed (the Python reference raises here)")                      \
    X(TDM_E_STALE, -51, "made on another machine or configuration")

typedef enum {
#define TDM_X_ENUM(name, value, text) name = value,
    TDM_STATUS_LIST(TDM_X_ENUM)
#undef TDM_X_ENUM
} tdm_status;

/* Text for a status code; never NULL ("unknown status" for codes outside the list). */
const char *tdm_strerror(int status);
/* Symbolic name of a status code ("TDM_E_INVAL"); never NULL. */
const char *tdm_status_name(int status);

/* The detail message of the last error set on this thread ("" if none). Valid until the next tandem call
 * on this thread that fails. */
const char *tdm_last_error(void);
/* Sets the detail message (printf format) and returns status, so that `return tdm_error(TDM_E_INVAL,
 * "...")` reports and fails in one line. */
int tdm_error(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Forgets the detail message of this thread. */
void tdm_clear_error(void);

/* ---- logging ----------------------------------------------------------------------------------------- */
typedef enum { TDM_LOG_ERROR = 0, TDM_LOG_WARN = 1, TDM_LOG_INFO = 2, TDM_LOG_DEBUG = 3 } tdm_log_level;

/* A log sink. msg is a complete line without the trailing newline; it is valid only during the call.
 * The sink may be called from any thread, concurrently. */
typedef void (*tdm_log_fn)(tdm_log_level level, const char *msg, void *user);

/* Installs a process-wide sink (NULL restores the default, which writes "tandem: <level>: msg" to stderr).
 * user is borrowed and passed back to fn. */
void tdm_log_set_callback(tdm_log_fn fn, void *user);
/* Messages above this level are dropped. tdm_init sets it from TANDEM_LOG_LEVEL. */
void tdm_log_set_level(tdm_log_level level);
tdm_log_level tdm_log_get_level(void);
void tdm_log(tdm_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
const char *tdm_log_level_name(tdm_log_level level);

/* ---- allocation accounting ----------------------------------------------------------------------------
 * Every host allocation of the library goes through these, so tdm_alloc_stats() tells how much memory the
 * library holds. They behave as malloc/calloc/realloc/free, and return NULL (without a detail message) on
 * failure or on a size that overflows. tdm_free accepts NULL. Memory from one family must not be passed
 * to the other. Blocks of 4 MB and more are mappings of their own, aligned to and rounded up to 2 MB
 * pages and advised for transparent huge pages. Freed blocks of 4 MB and more from tdm_malloc or
 * tdm_realloc (the four freed last, 512 MB in all) are kept for the next large tdm_malloc, so that
 * repeated large answers do not fault fresh pages in each time; they count as freed. */
void *tdm_malloc(size_t bytes);
void *tdm_calloc(size_t count, size_t size);
void *tdm_realloc(void *ptr, size_t bytes);
void tdm_free(void *ptr);
/* Copies len bytes and appends a NUL; NULL on failure. */
char *tdm_strndup(const char *s, size_t len);

typedef struct {
    uint64_t current_bytes; /* bytes held now */
    uint64_t peak_bytes;    /* highest current_bytes seen */
    uint64_t allocations;   /* successful allocations so far (realloc of a non-NULL pointer not counted) */
    uint64_t live;          /* allocations not yet freed */
} tdm_alloc_stats;
void tdm_alloc_get_stats(tdm_alloc_stats *out);

/* ---- configuration ------------------------------------------------------------------------------------
 * Every TANDEM_* variable is read and validated in one place (src/core/config.c). Precedence: a field the
 * caller set in tdm_config > the environment > the default. An invalid value makes tdm_config_resolve
 * (and tdm_init) fail with TDM_E_CONFIG and a message naming the variable and the value, e.g.
 * `TANDEM_THREADS="abc": expected an integer in 0..1024`. Unknown TANDEM_* names are warned about with
 * the closest valid name (an error when TANDEM_STRICT is on). */
typedef enum { TDM_DEVICE_AUTO = 0, TDM_DEVICE_CPU = 1, TDM_DEVICE_CUDA = 2 } tdm_device_pref;

typedef struct {
    int log_level;            /* TANDEM_LOG_LEVEL: error|warn|info|debug; default warn */
    int threads;              /* TANDEM_THREADS: 0..1024, 0 = every online core; default 0 */
    int device;               /* TANDEM_DEVICE: auto|cpu|cuda|cuda:N -> tdm_device_pref; default auto */
    int device_index;         /* N of cuda:N; default 0 */
    int strict;               /* TANDEM_STRICT: bool; fallbacks and unknown variables become errors */
    int seq_backend;          /* TANDEM_SEQ_BACKEND: auto|cpu|cuda -> tdm_device_pref; default auto */
    int debug_router;         /* TANDEM_DEBUG_ROUTER: bool; log every placement decision and its reason */
    const char *cuda_module;  /* TANDEM_CUDA_MODULE: path of libtandem_cuda.so; default: search (docs/) */
    int seq_sync_threshold;   /* TANDEM_SEQ_SYNC_THRESHOLD: 0..2^31-1 recent-tier patterns that trigger a sync
                                 of the sequence engine (0 = never by count); default 1000 */
    int seq_sync_interval;    /* TANDEM_SEQ_SYNC_INTERVAL: 0..86400 seconds between background syncs (0 = no
                                 background thread); default 300 */
    int seq_gpu_min;          /* TANDEM_SEQ_GPU_MIN: 0..2^31-1 device-tier patterns from which auto placement
                                 searches them on the GPU; default in docs/configuration.md */
    /* Runtime (issue 6: router, cost model, device memory; spec lattice-and-runtime.md section 7). */
    int route;                /* TANDEM_ROUTE: auto|cpu|gpu -> tdm_device_pref; default auto */
    double route_margin;      /* TANDEM_ROUTE_MARGIN: [0, 0.9], fraction the GPU must beat the CPU by; 0.10 */
    int route_log;            /* TANDEM_ROUTE_LOG: 0..2^24 decision records kept (0 = off); default 4096 */
    int calibrate;            /* TANDEM_CALIBRATE: auto|off|force -> TDM_CALIBRATE_*; default auto */
    int calibration_budget_ms; /* TANDEM_CALIBRATION_BUDGET_MS: 100..600000; default 2000 */
    const char *costmodel_path; /* TANDEM_COSTMODEL_PATH: "" = do not persist; NULL after resolve = the
                                   default $XDG_CACHE_HOME/tandem/costmodel.json (else ~/.cache/...) */
    double mem_pressure[3];   /* TANDEM_MEM_PRESSURE: MODERATE, HIGH, CRITICAL; default 0.60,0.80,0.90 */
    uint64_t mem_limit;       /* TANDEM_MEM_LIMIT: cap on library device bytes, 0 = none; size (K/M/G/T) */
    uint64_t mem_release_threshold; /* TANDEM_MEM_RELEASE_THRESHOLD: pool release threshold; default max */
    double mem_safety;        /* TANDEM_MEM_SAFETY: [0, 0.9] free-memory fraction kept in reserve; 0.20 */
    int batch_max;            /* TANDEM_BATCH_MAX: 1..2^20 items in one batch group at most; 4096 */
    /* TANDEM_ROUTE_<OP> (OP = the op's name after its engine, upper case: TANDEM_ROUTE_LCS for seq.lcs):
     * per-op override, indexed by tdm_op; TDM_CONFIG_UNSET_OP (not set) or a tdm_device_pref. */
    signed char route_op[64];
    const char *api_token;    /* TANDEM_API_TOKEN: bearer token `tandem serve` requires ("" = none); default "" */
    /* Lattice engine (spec/lattice-and-runtime.md section 7). Sizes are bytes; "max" = UINT64_MAX. */
    uint64_t lattice_max_bytes; /* TANDEM_LATTICE_MAX_BYTES: size cap of one lattice's CSR; default 4G */
    uint64_t aux_bytes;        /* TANDEM_AUX_BYTES: catalytic aux size when the library allocates it; 64M */
    int analyze_max_bfs;       /* TANDEM_ANALYZE_MAX_BFS: 1..2^20 BFS sweeps for the exact diameter; 256 */
    int sp_cache;              /* TANDEM_SP_CACHE: 0..2^20 shortest paths kept per context (0 = off); 1024 */
    int test_fail_at_step;     /* TANDEM_TEST_FAIL_AT_STEP: 0 = off, else catalytic programs fail after this
                                  many steps (fault-injection tests of the undo path) */
    int profile;              /* TANDEM_PROFILE: bool; tdm_init starts the profiler (include/tandem/prof.h) */
    const char *profile_out;  /* TANDEM_PROFILE_OUT: path prefix; tdm_destroy writes <prefix>.trace.json and
                                 <prefix>.html; default unset (empty) */
    int profile_capacity;     /* TANDEM_PROFILE_CAPACITY: 1024..2^26 records kept; default 262144 */
    int nvtx;                 /* TANDEM_NVTX: bool; mirror profiler scopes as NVTX ranges */
    /* Filled by tdm_config_resolve: where each variable's value came from, in tdm_config_dump's order
     * (0 default, 1 environment, 2 caller). */
    unsigned char sources[48];
} tdm_config;

/* The value that marks an int field of tdm_config as "not set by the caller"; NULL marks a string field.
 * A resolved string points into the environment or the caller's storage, which must stay unchanged. */
#define TDM_CONFIG_UNSET (-0x7fffffff)
/* The same for double fields (NaN: test with isnan), size fields and route_op entries. A size of
 * UINT64_MAX means "max". */
#define TDM_CONFIG_UNSET_SIZE (UINT64_MAX - 1)
#define TDM_CONFIG_UNSET_OP (-1)
/* TANDEM_CALIBRATE values. */
enum { TDM_CALIBRATE_AUTO = 0, TDM_CALIBRATE_OFF = 1, TDM_CALIBRATE_FORCE = 2 };

/* Marks every field unset. */
void tdm_config_init(tdm_config *cfg);
/* Fills every unset field from the environment, then from defaults, validating everything.
 * Returns TDM_OK or TDM_E_CONFIG (message names the variable). On error cfg is left partly filled. */
int tdm_config_resolve(tdm_config *cfg);
/* Writes each effective value and where it came from ("default", "env", "caller"), one per line. */
void tdm_config_dump(const tdm_config *cfg, FILE *out);

/* ---- context ------------------------------------------------------------------------------------------ */
typedef struct tdm_ctx tdm_ctx;

/* Creates a context: resolves configuration (cfg may be NULL: all from environment and defaults; cfg is
 * borrowed), sets the log level, registers the CPU backend and, when the CUDA module loads and a device is
 * present, the CUDA backend. Errors: TDM_E_CONFIG, TDM_E_NOMEM, TDM_E_INVAL (ctx NULL). A missing GPU is
 * not an error (logged at info level). The caller owns *ctx and releases it with tdm_destroy. */
int tdm_init(tdm_ctx **ctx, const tdm_config *cfg);
void tdm_destroy(tdm_ctx *ctx);
/* The resolved configuration (owned by ctx). */
const tdm_config *tdm_ctx_config(const tdm_ctx *ctx);
/* Worker threads to use for data-parallel work: TANDEM_THREADS, or the online cores when that is 0. */
int tdm_ctx_threads(const tdm_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
