/* arc.h: the native ARC DSL (spec: shared/spec/arc-dsl.md, reference: Hodel's arc-dsl under CPython 3.11).
 *
 * Values are immutable and live in a runtime (tdm_arc_rt): every value made by a call belongs to the
 * runtime and stays valid until tdm_arc_rt_reset or tdm_arc_rt_free. A runtime is used by one thread at a
 * time; use one runtime per thread. Frozensets keep the slot layout CPython 3.11 would give them, so
 * iteration order (and every primitive that reads it: first, last, argmax ties, mostcolor ties, ...)
 * matches the reference. Some frozensets (those objects() returns) are made lazily: their contents are
 * known, their layout is built in the runtime the first time anything reads their order (including
 * tdm_arc_val_items, tdm_arc_val_print, and tdm_arc_val_equal of two such sets), so those may allocate in
 * the value's runtime; if that runs out of memory the set reads as empty and the runtime's error says so
 * (tdm_arc_rt_error).
 *
 * Errors: a primitive call that raises in Python fails with TDM_E_ARC_RAISE and a message (tdm_last_error
 * and tdm_arc_rt_error); running out of memory gives TDM_E_NOMEM. Programs that do not parse give
 * TDM_E_PARSE with "file:line:col: message 'token'".
 *
 * Size limits (values Python would build but only a runaway program asks for, docs/arc.md): a primitive
 * whose result would pass 4,000,000 cells or elements (canvas, upscale, hupscale, vupscale, backdrop,
 * product, repeat, interval) fails with TDM_E_ARC_RAISE naming itself and the size; and a runtime holds at
 * most 1 GiB of values between resets, past which the call that asked fails with TDM_E_NOMEM (reset the
 * runtime between programs, as tdm_arc_batch_run does after every call). */
#ifndef TANDEM_ARC_H
#define TANDEM_ARC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tandem/tandem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tdm_arc_rt tdm_arc_rt;
typedef struct tdm_arc_val tdm_arc_val;

typedef enum {
    TDM_ARC_INT = 0,
    TDM_ARC_BOOL = 1,
    TDM_ARC_NONE = 2,
    TDM_ARC_TUPLE = 3,
    TDM_ARC_FSET = 4,
    TDM_ARC_FUNC = 5
} tdm_arc_kind;

/* ---- runtime ------------------------------------------------------------------------------------------ */
/* Creates a runtime. Errors: TDM_E_INVAL (out NULL), TDM_E_NOMEM. Release with tdm_arc_rt_free. */
int tdm_arc_rt_new(tdm_arc_rt **out);
void tdm_arc_rt_free(tdm_arc_rt *rt);
/* Frees every value of the runtime at once, clears its error and numbers closures (their hashes) from 1
 * again, so a run's results never depend on the runs before it; keeps its blocks (up to 64 MiB) for reuse. */
void tdm_arc_rt_reset(tdm_arc_rt *rt);
/* The message of the runtime's last failed call ("" if none). */
const char *tdm_arc_rt_error(const tdm_arc_rt *rt);
/* Bytes the runtime holds for values. */
size_t tdm_arc_rt_bytes(const tdm_arc_rt *rt);

/* ---- values ------------------------------------------------------------------------------------------- */
tdm_arc_kind tdm_arc_val_kind(const tdm_arc_val *v);
/* The int of an int or bool value (0 for other kinds). */
int64_t tdm_arc_val_int(const tdm_arc_val *v);
/* Elements of a tuple or frozenset (0 for other kinds). */
size_t tdm_arc_val_len(const tdm_arc_val *v);
/* Copies up to cap elements of a tuple (index order) or frozenset (CPython iteration order) into out;
 * returns the number of elements (which may exceed cap). Elements stay owned by their runtime. */
size_t tdm_arc_val_items(const tdm_arc_val *v, const tdm_arc_val **out, size_t cap);
/* Python's ==: 1 equal, 0 not. Frozensets by membership, tuples by order, bools as ints. */
int tdm_arc_val_equal(const tdm_arc_val *a, const tdm_arc_val *b);
/* CPython 3.11's hash() of the value (functions and None: a deterministic stand-in; spec §4.10). */
int64_t tdm_arc_val_hash(const tdm_arc_val *v);
/* Writes Python's repr of the value (frozensets in iteration order, functions as <function name>). */
void tdm_arc_val_print(FILE *out, const tdm_arc_val *v);

/* Makes the grid of h rows of w cells (row-major in cells). h = 0 gives (); w = 0 gives h empty rows.
 * Errors: TDM_E_INVAL (NULL arguments, negative sizes), TDM_E_NOMEM. */
int tdm_arc_grid_new(tdm_arc_rt *rt, int h, int w, const int *cells, tdm_arc_val **out);
/* Reads a grid value: *h, *w and, when cells is not NULL and cap >= h*w, the cells row-major. Errors:
 * TDM_E_INVAL when v is not a tuple of equally long tuples of ints that fit an int. */
int tdm_arc_grid_read(const tdm_arc_val *v, int *h, int *w, int *cells, size_t cap);

/* ---- primitives ---------------------------------------------------------------------------------------- */
/* The number of primitives (160); ids are 0..count-1 in alphabetical order. */
int tdm_arc_prim_count(void);
const char *tdm_arc_prim_name(int id);
int tdm_arc_prim_arity(int id);
/* Id of a primitive by name. Errors: TDM_E_NOTFOUND. */
int tdm_arc_prim_lookup(const char *name, int *id);
/* The function value of a primitive (static, valid forever). NULL for a bad id. */
const tdm_arc_val *tdm_arc_prim_value(int id);
/* Value of a constant of constants.py (T, F, ZERO .. TEN, NEG_ONE, NEG_TWO, DOWN, ...), or of a
 * primitive's name; *out is owned by rt. Errors: TDM_E_NOTFOUND, TDM_E_NOMEM. */
int tdm_arc_name_value(tdm_arc_rt *rt, const char *name, const tdm_arc_val **out);
/* Calls a function value (a primitive or a closure) with argc arguments. Errors: TDM_E_ARC_RAISE (wrong
 * arity, or the Python reference raises: message says why), TDM_E_NOMEM, TDM_E_INVAL (NULL). */
int tdm_arc_call(tdm_arc_rt *rt, const tdm_arc_val *fn, int argc, const tdm_arc_val *const *args,
                 const tdm_arc_val **out);

/* ---- programs ------------------------------------------------------------------------------------------ */
/* A file of solver programs (spec §5): `def solve_<id>(I):`, one `v = callee(args)` per line, `return O`.
 * Lines before, between and after functions may be blank, comments or import lines. */
typedef struct tdm_arc_programs tdm_arc_programs;

/* Parses src[0..len). name is used in messages (the file name). Errors: TDM_E_PARSE with
 * "name:line:col: what 'token'", TDM_E_NOMEM, TDM_E_INVAL. Release with tdm_arc_programs_free. The first
 * parse in a process also makes the lookup tables that objects(), partition and frozenset hashes read
 * (about 1 ms, once), so that no solver call pays for them. */
int tdm_arc_programs_parse(const char *src, size_t len, const char *name, tdm_arc_programs **out);
void tdm_arc_programs_free(tdm_arc_programs *p);
size_t tdm_arc_programs_count(const tdm_arc_programs *p);
/* The task id of program k (the part after solve_), owned by p. */
const char *tdm_arc_programs_task(const tdm_arc_programs *p, size_t k);
/* Index of the program for task id, or TDM_E_NOTFOUND. */
int tdm_arc_programs_find(const tdm_arc_programs *p, const char *task, size_t *k);
/* Runs program k on grid (a value of rt) and sets *out to O. Errors: TDM_E_ARC_RAISE with
 * "line N: x3 = first(x2): <why>", TDM_E_NOMEM, TDM_E_INVAL. Values stay in rt until its reset. */
int tdm_arc_program_run(tdm_arc_rt *rt, const tdm_arc_programs *p, size_t k, const tdm_arc_val *grid,
                        const tdm_arc_val **out);

/* ---- batches ------------------------------------------------------------------------------------------
 * Many programs over many grids in one call: the shape of program search (thousands of candidates on every
 * grid of a task) and of acceptance runs. The CPU backend spreads the (program, grid) calls over threads,
 * one runtime per thread; results do not depend on the thread count. The GPU backend (later) takes the same
 * call and keeps grids on the device (docs/arc.md). */
typedef struct {
    int h, w;
    const int *cells; /* h*w values, row-major; borrowed for the call */
} tdm_arc_grid_ref;

typedef struct {
    int status;   /* TDM_OK, TDM_E_ARC_RAISE (the program raised) or TDM_E_NOMEM */
    int h, w;     /* the result's shape when it is a grid of ints, else h = w = -1 */
    int *cells;   /* the result's cells (owned by the batch), NULL when not a grid */
    char *repr;   /* Python's repr of a result that is not a grid (owned by the batch), else NULL */
    char *error;  /* the message when status != TDM_OK (owned by the batch), else NULL */
} tdm_arc_result;

/* Per-primitive statistics: calls and time in them (nested calls count in both caller and callee). */
typedef struct {
    uint64_t calls;
    uint64_t ns;
} tdm_arc_prim_stats;

typedef struct tdm_arc_batch tdm_arc_batch;

/* One call of a batch: program prog of the programs, on grid. */
typedef struct {
    size_t prog;
    tdm_arc_grid_ref grid;
} tdm_arc_call_ref;

/* Runs calls[0..ncalls) (for program search: every candidate on every grid; for acceptance: each solver on
 * its task's grids); result c belongs to calls[c]. threads: <= 0 = every core (OpenMP's default, which
 * follows OMP_NUM_THREADS); stats: collect per-primitive statistics (a clock read per primitive call).
 * Errors (no batch is made): TDM_E_INVAL (NULL arguments, a program index out of range, a negative grid
 * size), TDM_E_NOMEM. A program that raises is not an error of the batch: its result carries the status and
 * the message. Release with tdm_arc_batch_free. */
int tdm_arc_batch_run(const tdm_arc_programs *p, const tdm_arc_call_ref *calls, size_t ncalls, int threads, int stats,
                      tdm_arc_batch **out);
/* Input grids made into values once (a set of them): for batches that run many programs over the same
 * grids, as a search over candidate programs does, or the passes of a timing run. A call whose grid ref has
 * the cells pointer, h and w of one of the set's starts from its value, not from converting its cells. The
 * set copies what it needs (the cells may change or go after tdm_arc_inputs_new; a ref to the same pointer
 * then still gets the cells as they were). Empty grids and repeated refs are kept once or not at all.
 * Errors: TDM_E_INVAL (NULL grids with n > 0, a negative size, no cells), TDM_E_NOMEM (about 10 KB per
 * 30x30 grid; 1 GiB in all at most). Read-only once made: threads and batches share it. */
typedef struct tdm_arc_inputs tdm_arc_inputs;
int tdm_arc_inputs_new(const tdm_arc_grid_ref *grids, size_t n, tdm_arc_inputs **out);
void tdm_arc_inputs_free(tdm_arc_inputs *in);
/* Grids the set holds (distinct refs of at least one cell). */
size_t tdm_arc_inputs_count(const tdm_arc_inputs *in);
/* tdm_arc_batch_run with prepared inputs (in may be NULL: tdm_arc_batch_run itself); results identical. in
 * must outlive the call only. */
int tdm_arc_batch_run_on(const tdm_arc_programs *p, const tdm_arc_inputs *in, const tdm_arc_call_ref *calls, size_t ncalls,
                         int threads, int stats, tdm_arc_batch **out);
void tdm_arc_batch_free(tdm_arc_batch *b);
/* Result of call c; NULL when out of range. Owned by b. */
const tdm_arc_result *tdm_arc_batch_result(const tdm_arc_batch *b, size_t c);
/* Statistics of primitive id summed over the batch (zeros unless stats was on); wall seconds of the run;
 * threads used. */
tdm_arc_prim_stats tdm_arc_batch_prim_stats(const tdm_arc_batch *b, int id);
double tdm_arc_batch_seconds(const tdm_arc_batch *b);
int tdm_arc_batch_threads(const tdm_arc_batch *b);

/* ---- the batched executor ------------------------------------------------------------------------------
 * The same calls as tdm_arc_batch_run with the same results, run line by line over all grids of a program at
 * once: each line whose primitive has a batched form (hmirror, vmirror, dmirror, cmirror, rot90, rot180,
 * rot270, tophalf, bottomhalf, lefthalf, righthalf, trim, replace, switch, upscale, hupscale, vupscale,
 * downscale, crop, hconcat, vconcat, cellwise, fill, underfill, paint, underpaint, numcolors, mostcolor,
 * leastcolor, colorcount, height, width, shape, ofcolor) runs as one call over every grid whose arguments
 * that form can hold (grids of 1..30 x 1..30 cells of colours 0..9, ints, pairs of ints, patches as cells);
 * every other line, and every grid the batched form cannot hold, runs in the interpreter, grid by grid.
 * On the GPU, grids and values stay in device memory from line to line and move to the host only for the
 * interpreter's lines. docs/arc.md lists the representation rules. */
typedef struct {
    uint64_t batched;     /* calls (grids) the batched form computed */
    uint64_t launches;    /* batched calls made (one per line and chunk of grids) */
    uint64_t batched_ns;  /* their wall time, argument conversions and copies included */
    uint64_t fallback;    /* calls the interpreter computed */
    uint64_t fallback_ns; /* their wall time, moving values to the host included */
} tdm_arc_exec_stats;

/* Runs calls[0..ncalls) with the executor; results as tdm_arc_batch_run (identical to it, bit for bit, repr
 * for repr, error for error). pref: TDM_DEVICE_CPU (batched forms on the host), TDM_DEVICE_CUDA (on a GPU;
 * without one the CPU, or TDM_E_UNSUPPORTED under TANDEM_STRICT) or TDM_DEVICE_AUTO (a GPU for 4,096 calls
 * or more when there is one). A device error falls back to the CPU (unless pref is CUDA under
 * TANDEM_STRICT). threads: <= 0 = the context's. Statistics are always collected (tdm_arc_batch_exec_stats;
 * tdm_arc_batch_prim_stats gives their sums). Errors: as tdm_arc_batch_run, and TDM_E_DEVICE_OOM /
 * TDM_E_DEVICE under strict CUDA. Release with tdm_arc_batch_free. */
int tdm_arc_batch_exec(tdm_ctx *ctx, const tdm_arc_programs *p, const tdm_arc_call_ref *calls, size_t ncalls,
                       tdm_device_pref pref, int threads, tdm_arc_batch **out);
/* Primitive id's statistics split by where it ran (zeros for tdm_arc_batch_run's batches). */
tdm_arc_exec_stats tdm_arc_batch_exec_stats(const tdm_arc_batch *b, int id);
/* Where batched forms ran: "cpu" or the device's name ("cuda:0"); static. */
const char *tdm_arc_batch_backend(const tdm_arc_batch *b);

/* Statistics of one runtime (tdm_arc_call and tdm_arc_program_run): turned on or off (and cleared on on). */
void tdm_arc_rt_stats_enable(tdm_arc_rt *rt, int on);
tdm_arc_prim_stats tdm_arc_rt_prim_stats(const tdm_arc_rt *rt, int id);

/* ---- batched objects() labels (CPU or GPU) ------------------------------------------------------------
 * The connected components that objects(grid, univalued, diagonal, without_bg) finds (spec §3.9), for many
 * grids in one call: the partition only, as labels; the frozenset values themselves are built by the
 * interpreter (their layout follows the reference's set operations, spec §4.8). Grids live in fixed 30 x 30
 * slots: grid g's cell (i, j) is cells[g*900 + i*30 + j] (colour 0..9), its shape h = hw[2g], w = hw[2g+1]
 * (1..30; slot cells outside the shape are ignored). labels[g*900 + i*30 + j] receives, for a cell of an
 * object, the smallest row-major index i'*w + j' among the object's cells; -1 for a background cell (when
 * without_bg: colour mostcolor(grid), ties as CPython's set order gives them) and for slot positions outside
 * the shape. The GPU gives the same labels as the CPU, bit for bit. */
#define TDM_ARC_SLOT 30

typedef struct {
    const char *backend; /* "cpu" or "cuda:0" (static) */
    int route_reason;    /* tdm_route_reason */
    double h2d_ms, kernel_ms, d2h_ms; /* device path: copies and kernel (CUDA events); 0 on the CPU */
    double total_ms;     /* the whole call, host clock */
} tdm_arc_objects_stats;

/* pref: TDM_DEVICE_CPU, TDM_DEVICE_CUDA (the router's per-call hint) or TDM_DEVICE_AUTO (tdm_route decides
 * from the cells to label and the copies, by the measured cost model; without a trusted arc.objects class,
 * the GPU for 4,096 grids or more, when one is present). A device error falls back to the CPU, unless pref
 * is CUDA and TANDEM_STRICT is on. st->route_reason says why. threads
 * (CPU path): <= 0 = the context's. st may be NULL. Errors: TDM_E_INVAL (NULL arguments; a shape outside
 * 1..30 or a colour above 9: the message names the grid, and the row and column), TDM_E_NOMEM, and under
 * TANDEM_STRICT with pref CUDA the device's errors. */
int tdm_arc_objects_labels(tdm_ctx *ctx, const uint8_t *cells, const uint8_t *hw, size_t n, int univalued,
                           int diagonal, int without_bg, tdm_device_pref pref, int threads, int16_t *labels,
                           tdm_arc_objects_stats *st);

#ifdef __cplusplus
}
#endif
#endif
