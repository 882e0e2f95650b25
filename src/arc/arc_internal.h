/* arc_internal.h: what the ARC DSL's source files share: the value layout (a tagged value whose
 * frozensets carry a CPython 3.11 set table, so that iteration order is reproduced), the per-run arena,
 * the set-table operations of spec §4.5-4.6, the helpers the primitive families use to read grids and
 * patches, and the list of the 160 primitives. Nothing here is public API (include/tandem/arc.h is). */
#ifndef TANDEM_ARC_INTERNAL_H
#define TANDEM_ARC_INTERNAL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "tandem/arc.h"

/* One slot of a set table: key NULL means empty, key == ARC_DUMMY a deleted entry. */
typedef struct {
    int64_t hash;
    tdm_arc_val *key;
} arc_slot;

/* A frozenset whose contents are known but whose CPython layout is not built yet (spec §4.11): objects()
 * computes its partition by labelling and lays out a set only when something reads its iteration order.
 * A lazy set has n (len) set and no table (tab NULL, mask 0); its maker answers the questions that need
 * no layout (hash, membership) and replays the exact build recipe on demand. Every reader of a table goes
 * through arc_set_slots (or a function of fset.c that calls it), which lays the set out first, so no
 * primitive can see a set without its layout. */
typedef struct arc_lazy arc_lazy;
typedef struct arc_lazy_ops arc_lazy_ops;
struct arc_bits;
struct arc_lazy_ops {
    /* Builds part's table in CPython's layout into s (tab, mask, fill): 0, or -1 with rt's error set. */
    int (*layout)(arc_lazy *z, tdm_arc_val *s);
    /* CPython's hash of the set's value (layout-independent). */
    int64_t (*hash)(arc_lazy *z, tdm_arc_val *s);
    /* Membership without a layout: 1 in, 0 not, -1 cannot tell (the caller lays the set out and looks). */
    int (*contains)(arc_lazy *z, tdm_arc_val *s, tdm_arc_val *key);
    /* 1 when every element is a cell (c, (i, j)) of one colour c, written to *c; else 0. Then whatever
       reads only colours in iteration order (color, colorfilter, palette) has its answer without a layout. */
    int (*uniform)(arc_lazy *z, tdm_arc_val *s, int64_t *c);
    /* 1 when every element is a cell (c, (i, j)), with box = {min i, min j, max i, max j}; else 0. */
    int (*bbox)(arc_lazy *z, tdm_arc_val *s, int64_t box[4]);
    /* With bbox: 1 when some cell of s is at (i, j) (membership in toindices(s)), else 0. */
    int (*holds_pos)(arc_lazy *z, tdm_arc_val *s, int64_t i, int64_t j);
    /* Adds s's elements to *dst (arc_bits, bits.c) without a layout: 1, or 0 when they do not fit it (then
       *dst is spent). NULL: the elements are only known through the layout. */
    int (*bits)(arc_lazy *z, tdm_arc_val *s, struct arc_bits *dst);
    /* The elements in no particular order, without a layout: 1 with *v (s->n entries, owned by the maker,
       the same values a layout would hold), 0 when only the layout knows them, -1 out of memory. NULL:
       never. For readers whose answer does not depend on the order (a union, a deferred filter). */
    int (*members)(arc_lazy *z, tdm_arc_val *s, tdm_arc_val ***v);
    /* The positions of s as arc_bits_rows gives them (row masks, *used the rows not empty): 1, or 0 when
       they are not known this way. NULL: never (arc_bits_rows goes through bits). */
    int (*rows)(arc_lazy *z, tdm_arc_val *s, uint32_t rows[32], uint32_t *used);
};
/* A lazy set's maker: its runtime, and its kind's hooks (one table per kind, shared by its sets). */
struct arc_lazy {
    tdm_arc_rt *rt; /* the runtime that owns the set and receives its table */
    const arc_lazy_ops *op;
};

/* Closure kinds of function values; ARC_FN_PRIM is a primitive itself. */
enum { ARC_FN_PRIM, ARC_FN_COMPOSE, ARC_FN_CHAIN, ARC_FN_MATCHER, ARC_FN_FORK, ARC_FN_RBIND, ARC_FN_LBIND };

struct tdm_arc_val {
    uint8_t kind;   /* tdm_arc_kind */
    uint8_t hashed; /* hash below is valid */
    uint8_t fkind;  /* function values: ARC_FN_*; tuples: ARC_TUP_LAZY while a deferred concatenation,
                       ARC_TUP_GRID while a grid of bytes */
    uint8_t arity;  /* function values: positional arguments accepted */
    uint32_t n;     /* tuple: length; frozenset: live entries (CPython's used); closure: bit 0 set when its
                       results are kept (both branches of a fork reach it), the rest arc_p_fork's stamp */
    int64_t hash;
    union {
        int64_t i;           /* int, bool */
        tdm_arc_val **items; /* tuple */
        struct {
            arc_slot *tab;       /* read through arc_set_slots: NULL while the set is lazy */
            uint32_t mask, fill; /* fill = live + dummy slots */
            arc_lazy *lazy;      /* non-NULL: layout not built yet (see arc_lazy) */
            uint32_t part;       /* which set of its maker a lazy set is */
        } set;
        struct {                 /* a grid known by its bytes (ARC_TUP_GRID in fkind): items NULL, n its rows */
            tdm_arc_val **items; /* u.items: made by arc_grid_force, which turns it into a plain tuple */
            const uint8_t *c;    /* its h x w colours, row-major, and a view's slack (arc_gview) */
            int32_t w;
        } grid;
        struct {                 /* a deferred concatenation (ARC_TUP_LAZY in fkind; cat.c) */
            tdm_arc_val **items; /* u.items: NULL until arc_cat_force lists them */
            tdm_arc_val *parts;  /* the tuple merged: its sets (or tuples) in order */
            tdm_arc_val *set;    /* frozenset of the items, deferred (arc_bits): what order-free readers take */
            tdm_arc_rt *rt;      /* the runtime whose arena receives the items */
        } cat;
        struct {
            int prim;            /* ARC_FN_PRIM: primitive id; closures: a serial number (their hash) */
            tdm_arc_val *cap[3]; /* captured values: functions and the bound argument */
        } fn;
    } u;
};

extern tdm_arc_val arc_dummy_key;
#define ARC_DUMMY (&arc_dummy_key)

/* A primitive's C form: its arguments in, its value out (NULL with rt's error set). */
typedef tdm_arc_val *(*arc_prim_fn)(tdm_arc_rt *rt, tdm_arc_val **a);

/* A bump arena that owns every value of a run; reset frees them all at once. */
typedef struct arc_chunk arc_chunk;

#define ARC_PICK_UNKNOWN (-2)
#define ARC_MEMO_N 64
#define ARC_ROWS_N 16

/* A grid as bytes (gview.c): h rows (1..30) of w colours 0..9 (1..30), row-major (c[i * w + j]),
 * then 32 bytes of 0xff that a 32-byte read of any row may reach. */
typedef struct {
    const uint8_t *c; /* in the runtime's arena */
    int h, w;
} arc_gview;
#define ARC_GVIEWS 4 /* views a runtime keeps */

struct tdm_arc_rt {
    arc_chunk *chunks; /* in allocation order; reset rewinds to the first and reuses them all */
    arc_chunk *chunk;  /* the one being filled */
    char *cur, *end;
    int failed;      /* an error is pending: err holds the message, status its code */
    int status;      /* TDM_E_ARC_RAISE or TDM_E_NOMEM */
    int depth;       /* nesting of function calls, bounded like CPython's recursion limit */
    int serial;      /* closure serial numbers: deterministic hashes for function values */
    size_t bytes;    /* bytes in chunks */
    size_t max_bytes; /* bytes may not pass it (ARC_RT_MAX_BYTES; tests set less) */
    char err[256];
    tdm_arc_prim_stats *stats; /* per primitive, when statistics are on (tdm_arc_rt_stats_enable) */
    /* the last program's frame (owned, outside the arena: reset keeps it): its constants stay written for
       the next call of the same program (arc_program_run), which writes every other slot before reading it */
    tdm_arc_val **frame;
    size_t frame_cap;
    uint64_t frame_of; /* the program's uid; 0: none */
    int eager;       /* no deferred layouts (bits.c): every set is laid out when made (tests compare) */
    /* arc_read_grid's last grid and its dense copy (values never change; reset forgets it), and its
       colour masks once asked for (arc_grid_colour_rows) */
    tdm_arc_val *grid_seen;
    int grid_h, grid_w;
    int64_t *grid_c;
    uint32_t *grid_colours;
    /* The last grid whose mostcolor or leastcolor was found (arc_mostcolor_of, objects()' labelling), and
       those (pick[least]): ARC_PICK_UNKNOWN until found, -1 when it is not a grid of colours 0..9. */
    tdm_arc_val *pick_grid;
    int8_t pick[2];
    /* The last grid whose colours were counted through its view (arc_grid_view_counts), and the counts. */
    const tdm_arc_val *counts_of;
    uint32_t counts[10];
    /* A deferred concatenation (cat.c) may be returned by a call made with arc_call_ex(..., lazy 1): that
       passes lazy on to the call whose result it returns (a closure's last call), and to a primitive as
       its own args array here while it runs, which the primitive takes with arc_take_lazy. */
    tdm_arc_val **lazy_args;
    /* The same for a grid of bytes (arc_take_grid): the interpreter's args of a line whose result only the
       grid argument of paint, fill and their kin reads, or the program returns. */
    tdm_arc_val **grid_args;
    tdm_arc_val *empty_set; /* arc_set_empty's, made on first use (in the arena: reset forgets it) */
    uint32_t columns; /* closures called by column (arc_call_column gave 1) since the runtime was made: tests read it */
    /* Results of recent calls of marked closures (prim_func.c: those both branches of a fork reach, which
       call them on one value twice), by the closure and argument: ARC_MEMO_N entries in the arena, made on
       first use (reset forgets them). */
    struct arc_memo {
        const tdm_arc_val *fn, *arg;
        tdm_arc_val *r;
        int depth; /* rt->depth where the kept call began */
        int fresh; /* arc_fresh_sets of r (ARC_FRESH_SET: each giving is a twin of it) */
    } *memo;
    /* The row masks of the patches a pair reader (manhattan, adjacent, gravitate, hmatching, vmatching:
       prim_geom.c) read last, by value (values never change; reset forgets them): ARC_ROWS_N entries, each
       value in its home entry by address or the one after (the pairs of a product meet each member
       again). */
    struct arc_rows {
        const tdm_arc_val *key;
        uint32_t m[32]; /* arc_bits_rows's: the rows outside used are not read */
        uint32_t used, cols; /* the rows not empty; the columns in use (the OR of those rows; 0: not yet) */
    } rows[ARC_ROWS_N];
    int rows_any; /* an entry of rows was written since the last reset (which then forgets them) */
    /* The views of the last grids read as bytes (gview.c), by value (NULL: none; a view with c NULL: the
       grid is not one of colours; reset forgets them). */
    const tdm_arc_val *gview_of[ARC_GVIEWS];
    arc_gview gview[ARC_GVIEWS];
    unsigned gview_next;
    uint32_t fork_stamp; /* arc_p_fork's walks (never reset: a stale stamp could only mark a closure more) */
};

/* ---- arena and errors ------------------------------------------------------------------------------ */
/* Another chunk, then bytes (a multiple of 16) from it: arc_alloc's rare path. */
void *arc_alloc_slow(tdm_arc_rt *rt, size_t bytes);
/* bytes from the arena, 16-aligned; NULL (with rt's error set) when memory runs out. Inline: a solver call
 * makes a few hundred values, and the call cost as much as the bump. */
static inline void *arc_alloc(tdm_arc_rt *rt, size_t bytes) {
    bytes = (bytes + 15) & ~(size_t)15;
    if ((size_t)(rt->end - rt->cur) < bytes) return arc_alloc_slow(rt, bytes);
    void *p = rt->cur;
    rt->cur += bytes;
    return p;
}
/* arc_alloc without its rare path: NULL when the chunk has no room, for a caller that then calls arc_alloc
 * from a function apart, so that its own common path makes no call (and saves no registers for one). */
static inline void *arc_alloc_bump(tdm_arc_rt *rt, size_t bytes) {
    bytes = (bytes + 15) & ~(size_t)15;
    return (size_t)(rt->end - rt->cur) < bytes ? NULL : arc_alloc(rt, bytes);
}
/* A point in rt's arena: what is allocated after it is newer (arc_fresh_sets). */
typedef struct {
    const arc_chunk *chunk; /* NULL: none yet (all the arena's values are newer) */
    const char *cur;
} arc_at;
static inline arc_at arc_at_now(const tdm_arc_rt *rt) { return (arc_at){rt->chunk, rt->cur}; }
/* What one run's values may take in all (its arena chunks, tdm_arc_rt.max_bytes): a run that would pass it
 * fails the call that asked with TDM_E_NOMEM, so a runaway program (a chain of concatenations, say) cannot
 * exhaust the machine. Python would build such values too; no solver comes near (docs/arc.md, deliberate
 * differences). */
#define ARC_RT_MAX_BYTES ((size_t)1 << 30)
/* The most cells (grids) or elements (tuples, sets) a primitive that multiplies its input's size
 * (canvas, upscale, hupscale, vupscale, backdrop, product, repeat, interval) may build. */
#define ARC_MAX_CELLS 4000000
/* 0 when h rows of w cells (a grid, or what = "box", a bounding box) are within ARC_MAX_CELLS (rows count
 * as one cell at least, so that many empty rows are bounded too); else -1 with `who: a HxW grid (N cells) is
 * more than the port allows (...)`. Negative h or w count as 0. */
int arc_grid_limit(tdm_arc_rt *rt, const char *who, const char *what, int64_t h, int64_t w);
/* 0 when a container of n elements is within ARC_MAX_CELLS; else -1 with `who: N elements is more than the
 * port allows (...)`. */
int arc_elems_limit(tdm_arc_rt *rt, const char *who, uint64_t n);
/* Records a Python-raises error (first one wins) and returns NULL so primitives can `return arc_fail(...)`. */
void *arc_fail(tdm_arc_rt *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int arc_failf(tdm_arc_rt *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3))); /* returns -1 */

/* ---- values ---------------------------------------------------------------------------------------- */
/* Ints ARC_INT_LO..ARC_INT_HI are interned (value.c): grids and coordinates use them over and over. */
#define ARC_INT_LO (-256)
#define ARC_INT_HI 1023
extern tdm_arc_val arc_small_ints[ARC_INT_HI - ARC_INT_LO + 1];
tdm_arc_val *arc_int_alloc(tdm_arc_rt *rt, int64_t v); /* an int outside the interned range */
static inline tdm_arc_val *arc_int(tdm_arc_rt *rt, int64_t v) {
    return v >= ARC_INT_LO && v <= ARC_INT_HI ? &arc_small_ints[v - ARC_INT_LO] : arc_int_alloc(rt, v);
}
/* The interned int 0; small ints follow it in one array, so a grid cell's colour 0..9 is its offset. */
extern const tdm_arc_val *const arc_int_zero;
/* v's colour when v is an interned int 0..9 (told by its address, not read), else -1. */
static inline int arc_interned_colour(const tdm_arc_val *v) {
    uintptr_t d = (uintptr_t)v - (uintptr_t)arc_int_zero; /* below &0 wraps: a large offset */
    return d < 10 * sizeof *v ? (int)(d / sizeof *v) : -1;
}
tdm_arc_val *arc_bool(int v);
extern tdm_arc_val arc_none_val;
tdm_arc_val *arc_tuple(tdm_arc_rt *rt, uint32_t n); /* items uninitialised */
/* A tuple of the n items at items, shared, not copied (a slice of a tuple: values never change). */
tdm_arc_val *arc_tuple_of(tdm_arc_rt *rt, tdm_arc_val **items, uint32_t n);
tdm_arc_val *arc_pair(tdm_arc_rt *rt, tdm_arc_val *a, tdm_arc_val *b);
tdm_arc_val *arc_ipair(tdm_arc_rt *rt, int64_t a, int64_t b);
tdm_arc_val *arc_cell(tdm_arc_rt *rt, int64_t c, int64_t i, int64_t j); /* (c, (i, j)) */
/* The interned pairs (value.c): positions (i, j) for i, j in ARC_POS_LO..ARC_POS_HI, at
 * arc_pos_vals[(i - ARC_POS_LO) * ARC_POS_N + j - ARC_POS_LO], and cells (c, (i, j)) for colours 0..9 at
 * arc_cell_vals[c * ARC_POS_N * ARC_POS_N + the position's index]. arc_pair returns these for such pairs. */
#define ARC_POS_LO (-2)
#define ARC_POS_HI 32
#define ARC_POS_N (ARC_POS_HI - ARC_POS_LO + 1)
extern tdm_arc_val arc_pos_vals[ARC_POS_N * ARC_POS_N], arc_cell_vals[10 * ARC_POS_N * ARC_POS_N];
/* Whether v is one of the interned positions or cells (they hold ints only). */
static inline int arc_is_interned_pair(const tdm_arc_val *v) {
    return (uintptr_t)v - (uintptr_t)arc_pos_vals < sizeof arc_pos_vals || (uintptr_t)v - (uintptr_t)arc_cell_vals < sizeof arc_cell_vals;
}
tdm_arc_val *arc_prim_val(int id);
tdm_arc_val *arc_closure(tdm_arc_rt *rt, int fkind, int arity, tdm_arc_val *a, tdm_arc_val *b, tdm_arc_val *c);

static inline int arc_is_int(const tdm_arc_val *v) { return v->kind == TDM_ARC_INT || v->kind == TDM_ARC_BOOL; }
static inline int arc_is_tuple(const tdm_arc_val *v) { return v->kind == TDM_ARC_TUPLE; }
static inline int arc_is_set(const tdm_arc_val *v) { return v->kind == TDM_ARC_FSET; }
static inline int arc_is_func(const tdm_arc_val *v) { return v->kind == TDM_ARC_FUNC; }
/* v is a closure (a function value other than a primitive); v may be NULL (an unused capture). */
static inline int arc_is_closure(const tdm_arc_val *v) { return v && v->kind == TDM_ARC_FUNC && v->fkind != ARC_FN_PRIM; }

/* ---- deferred concatenations (cat.c) ----------------------------------------------------------------- */
/* merge (and mapply) over a tuple of sets gives the tuple of their elements, each set's in its iteration
 * order: every set laid out. When the caller reads only the contents (mapply's deferred union, paint, fill)
 * the tuple is made deferred instead: its length and its contents (u.cat.set, a deferred frozenset) are
 * known, its items are listed (the sets laid out) on first read. Such a tuple never reaches a program
 * variable that anything but paint/underpaint/fill/underfill reads, nor an argument of any other primitive:
 * it goes from the primitive that made it, through the closures that return it, to the caller that asked
 * (arc_call_ex with lazy 1). Those callers, arc_elems, arc_first, arc_hash, arc_eq and arc_cmp list the items first. */
#define ARC_TUP_LAZY 1
static inline int arc_tuple_is_lazy(const tdm_arc_val *v) { return v->kind == TDM_ARC_TUPLE && v->fkind == ARC_TUP_LAZY; }
/* ---- grids of bytes (gview.c) -------------------------------------------------------------------------
 * fill, paint, underfill, underpaint, cover, replace, switch and canvas write a grid's bytes (its view) and
 * then its cells, h x w pointers. When a line's result is read only as the grid that another of those
 * writes over (their argument 0) or is the program's result, the interpreter lets the call return a grid of
 * bytes instead: a tuple of n rows whose items are not made (u.grid). Its view is its bytes (arc_grid_view);
 * arc_grid_force makes its rows in place. Such a grid reaches no other primitive or argument; the program's
 * result is forced unless the caller reads it as bytes (batch.c: arc_result_fill). */
#define ARC_TUP_GRID 2
static inline int arc_grid_is_lazy(const tdm_arc_val *v) { return v->kind == TDM_ARC_TUPLE && v->fkind == ARC_TUP_GRID; }
/* A grid of bytes over c (h x w, 1..30 each, colours 0..9, with a view's slack; not copied). NULL out of
 * memory. */
tdm_arc_val *arc_grid_lazy(tdm_arc_rt *rt, const uint8_t *c, int h, int w);
/* Makes a grid of bytes' rows and cells in place, so that it reads as any grid (no-op for another value): 0,
 * or -1 out of memory (rt's error set). */
int arc_grid_force(tdm_arc_rt *rt, tdm_arc_val *g);
/* The grid primitives that only move cells, on bytes (gbytes.c), called first by their primitives with
 * their args: 1 with *out, 0 when the tuple form is to run (no argument a grid of bytes then), -1 out of
 * memory. op: ARC_GB_* (upscale: of a grid). It spends the line's permission (arc_take_grid); the inline
 * check calls it only when there is one or an argument is a grid of bytes. ON_BYTES(call) returns the
 * primitive's result when the bytes form ran (call writes it to bytes_out). */
enum { ARC_GB_HMIRROR, ARC_GB_VMIRROR, ARC_GB_DMIRROR, ARC_GB_CMIRROR, ARC_GB_ROT90, ARC_GB_ROT180, ARC_GB_ROT270,
       ARC_GB_UPSCALE, ARC_GB_HCONCAT, ARC_GB_VCONCAT };
int arc_gbytes_run(tdm_arc_rt *rt, tdm_arc_val **a, int op, tdm_arc_val **out);
static inline int arc_gbytes(tdm_arc_rt *rt, tdm_arc_val **a, int op, tdm_arc_val **out) {
    int lazy = rt->grid_args == a || arc_grid_is_lazy(a[0]) || (op >= ARC_GB_HCONCAT && arc_grid_is_lazy(a[1]));
    return lazy ? arc_gbytes_run(rt, a, op, out) : 0;
}
#define ON_BYTES(call)                                                                                     \
    do {                                                                                                   \
        tdm_arc_val *bytes_out;                                                                            \
        int ran_ = (call);                                                                                 \
        ARC_TRYI(ran_);                                                                                    \
        if (ran_) return bytes_out;                                                                        \
    } while (0)
/* 1 when the primitive running on args a may return a grid of bytes (the permission is then spent), else 0
 * (as arc_take_lazy). */
static inline int arc_take_grid(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (rt->grid_args != a) return 0;
    rt->grid_args = NULL;
    return 1;
}

/* Whether a call's result v, made after at, may be given again for the call made again (kept results): CPython's
 * second call makes a second, equal frozenset of each it made, and a & a of one set takes the copy shortcut
 * (fset.c arc_set_meet), whose table can differ from that of two equal sets; a set that predates at (the
 * call passed it through) is the same object in CPython's calls too. ARC_FRESH_NONE: v holds no set made
 * after at (give v again); ARC_FRESH_SET: v is such a set itself (give a twin, arc_set_twin); ARC_FRESH_HELD:
 * a tuple made after at holds one, or v is a lazy concatenation (make the call again). */
enum { ARC_FRESH_NONE, ARC_FRESH_SET, ARC_FRESH_HELD };
int arc_fresh_sets_slow(const tdm_arc_rt *rt, arc_at at, const tdm_arc_val *v);
static inline int arc_fresh_sets(const tdm_arc_rt *rt, arc_at at, const tdm_arc_val *v) {
    if (v->kind != TDM_ARC_FSET && v->kind != TDM_ARC_TUPLE) return ARC_FRESH_NONE; /* most results: ints */
    if (at.chunk == rt->chunk) { /* nothing allocated past rt's chunk since at: [at.cur, rt->cur) is what is new */
        if ((const char *)v < at.cur || (const char *)v >= rt->cur) return ARC_FRESH_NONE;
        if (v->kind == TDM_ARC_FSET) return ARC_FRESH_SET;
        if (v->n == 2 && !arc_tuple_is_lazy(v) && v->u.items[0]->kind == TDM_ARC_INT && v->u.items[1]->kind == TDM_ARC_INT)
            return ARC_FRESH_NONE; /* a position */
    }
    return arc_fresh_sets_slow(rt, at, v);
}
/* A distinct frozenset of s's value and layout (a header of its own over s's table, or over s's maker while
 * s is lazy: each is laid out when read): the second of two equal sets a call made again would make
 * (arc_fresh_sets). NULL out of memory (rt's error set). */
tdm_arc_val *arc_set_twin(tdm_arc_rt *rt, const tdm_arc_val *s);
/* A kept result v given again, fresh being arc_fresh_sets's word on it (not ARC_FRESH_HELD): v, or its
 * twin when the call made it. NULL out of memory. */
static inline tdm_arc_val *arc_given_again(tdm_arc_rt *rt, int fresh, tdm_arc_val *v) {
    return fresh == ARC_FRESH_SET ? arc_set_twin(rt, v) : v;
}
/* Lists a deferred concatenation's items now (no-op for anything else): 0, or -1 out of memory (rt's
 * error set; the tuple reads as empty). arc_cat_listed is the inline check for readers of any tuple. */
int arc_cat_force(tdm_arc_val *t);
static inline int arc_cat_listed(tdm_arc_val *t) { return arc_tuple_is_lazy(t) ? arc_cat_force(t) : 0; }
/* merge(parts) deferred, for a tuple parts of sets of positions or of cells (or such tuples) whose contents
 * fit arc_bits: 1 with *out, 0 when not such (the caller merges eagerly), -1 out of memory. */
int arc_cat(tdm_arc_rt *rt, tdm_arc_val *parts, tdm_arc_val **out);
/* 1 when the primitive running on args a may return a deferred concatenation (the permission is then
 * spent), else 0. A primitive's args array is its own while it runs: no call it makes has the same. */
static inline int arc_take_lazy(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (rt->lazy_args != a) return 0;
    rt->lazy_args = NULL;
    return 1;
}
int arc_truthy(const tdm_arc_val *v);
int64_t arc_hash(tdm_arc_val *v);
/* CPython's hash of an int, and of a 2-tuple whose items hash to h0 and h1 (what arc_hash gives). */
int64_t arc_int_hash(int64_t n);
int64_t arc_pair_hash(int64_t h0, int64_t h1);
/* A frozenset's hash (spec §4.4) as a fold over its elements' hashes in any order: acc starts at 0. */
static inline uint64_t arc_fset_hash_add(uint64_t acc, int64_t h) {
    uint64_t x = (uint64_t)h;
    return acc ^ (((x ^ 89869747ull) ^ (x << 16)) * 3644798167ull);
}
int64_t arc_fset_hash_end(uint64_t acc, uint32_t n);
/* The cached hash without a call (most keys are interned and hashed already). */
static inline int64_t arc_hash_fast(tdm_arc_val *v) { return v->hashed ? v->hash : arc_hash(v); }
/* The home slot of key (an address or a hash) in an open-addressing table of 2^bits slots (1 <= bits <=
 * 63): the top bits of a Fibonacci multiply, which spread keys that differ only in low bits. */
static inline size_t arc_hash_slot(uint64_t key, int bits) { return (size_t)(key * 0x9e3779b97f4a7c15ull >> (64 - bits)); }
/* Python's a == b: the same value or two equal ints inline (a grid's cells against a colour), the rest
 * in value.c. */
int arc_eq_slow(tdm_arc_val *a, tdm_arc_val *b);
static inline int arc_eq(tdm_arc_val *a, tdm_arc_val *b) {
    if (a == b) return 1;
    if (arc_is_int(a) && arc_is_int(b)) return a->u.i == b->u.i;
    return arc_eq_slow(a, b);
}
/* Python's a < b (op 0) or a > b (op 1): 1/0, or -1 with a TypeError recorded. */
int arc_cmp(tdm_arc_rt *rt, tdm_arc_val *a, tdm_arc_val *b, int gt);
const char *arc_type_name(const tdm_arc_val *v);
/* Python's len(); -1 with an error for ints, None and functions. */
int64_t arc_len(tdm_arc_rt *rt, const tdm_arc_val *v);
/* Reads an int (bools count); -1 with an error otherwise. */
int arc_get_int(tdm_arc_rt *rt, const tdm_arc_val *v, int64_t *out, const char *who);
/* Reads a pair of ints, as Python's `a, b = v` unpacking with int use afterwards. */
int arc_get_ipair(tdm_arc_rt *rt, const tdm_arc_val *v, int64_t *a, int64_t *b, const char *who);

/* Iteration in Python order: a tuple by index, a frozenset by slot. Fills out (n = arc_len entries). */
typedef struct {
    tdm_arc_val **v;
    uint32_t n;
} arc_list;
/* The elements of a container (tuple or frozenset), borrowed; -1 with an error for other kinds. */
int arc_elems(tdm_arc_rt *rt, tdm_arc_val *c, arc_list *out, const char *who);
/* First element in iteration order, or NULL if empty (no error). Container must be a tuple or frozenset. A
 * lazy set of one that lists its member gives it without a layout. */
tdm_arc_val *arc_first(tdm_arc_val *c);

/* ---- CPython set table (spec §4.5-4.6) ------------------------------------------------------------- */
/* Lays out a lazy set now (no-op otherwise). On failure (no memory: rt's error is set, and the program run
 * fails) the set is left as an empty table, so readers never touch a missing one. Returns 0 or -1. */
int arc_set_force(tdm_arc_val *s);
/* The slot table of s in CPython's layout (mask + 1 slots), laid out first if s is lazy. */
static inline arc_slot *arc_set_slots(tdm_arc_val *s) {
    if (s->u.set.lazy) arc_set_force(s);
    return s->u.set.tab;
}
static inline int arc_set_is_lazy(const tdm_arc_val *s) { return arc_is_set(s) && s->u.set.lazy != NULL; }
/* 1 (and *c) when s is a lazy set of cells all of colour c (arc_lazy.uniform); 0 when not or not known. */
/* s's elements in no particular order (arc_lazy.members): 1 with *v (s->n entries, borrowed), 0 when s
 * lists none that way (read it with arc_elems), -1 out of memory. */
static inline int arc_set_members(tdm_arc_val *s, tdm_arc_val ***v) {
    arc_lazy *z = arc_set_is_lazy(s) ? s->u.set.lazy : NULL;
    return z && z->op->members ? z->op->members(z, s, v) : 0;
}
/* The order-free forms below call functions on a set's members in the list's order, not CPython's; when
 * that order could show (a raise, a closure kept), they give up and the caller takes its ordered path,
 * which must make the same calls the reference does. So they mark the runtime before (the closure serial
 * and the call depth) and put it back (a raised error cleared too): arc_put_back gives 0, or -1 when the
 * pending error is out of memory. */
typedef struct {
    int serial, depth;
} arc_mark;
static inline arc_mark arc_mark_of(const tdm_arc_rt *rt) { return (arc_mark){rt->serial, rt->depth}; }
int arc_put_back(tdm_arc_rt *rt, arc_mark mk);
/* sfilter's keep: the truth of f(e) (f the function value passed as ctx), -1 when the call raised. */
int arc_keep_true(tdm_arc_rt *rt, tdm_arc_val *e, void *f);
/* A filter over a set that lists its members (arc_set_members), deferred (image.c): keep(e) on each member
 * in the list's order (1 keep, 0 drop, < 0 when it raised, ran out of memory or needs CPython's order),
 * (keep arc_keep_true: its calls by column first, arc_call_column), then a lazy set whose layout, when
 * read, walks c in CPython's order adding the kept elements, as frozenset(e for e in c if keep(e)) does. Returns the set (an empty set when nothing is kept), NULL with
 * rt's error, or NULL with *deferred 0 when c lists no members or keep gave up: then the caller takes its
 * ordered path, the runtime put back. */
tdm_arc_val *arc_filter_members(tdm_arc_rt *rt, tdm_arc_val *c, int (*keep)(tdm_arc_rt *, tdm_arc_val *, void *),
                                void *ctx, int *deferred);
/* difference(c, d) for d a deferred filter over c's own member list (d = sizefilter(c, ...)), or over the
 * same members as c, itself such a filter (c = remove(x, s), d = colorfilter(s, ...)): c's members that d
 * dropped, as arc_filter_members gives them, read from the filters' kept flags without a membership test.
 * 1 with *out, 0 when not such sets (or in an eager runtime), -1 out of memory. */
int arc_filter_minus(tdm_arc_rt *rt, tdm_arc_val *c, tdm_arc_val *d, tdm_arc_val **out);
/* combine(a[0], a[1]) for two deferred filters over the same members (colorfilter(s, 7), colorfilter(s,
 * 3)): the members either kept, listed, hashed and tested by address as a filter's, laid out by
 * recipe(a) (combine's own form: a's order, then b's) when read. 1 with *out, 0 when not such sets (or in
 * an eager runtime), -1 out of memory. */
int arc_filter_union(tdm_arc_rt *rt, tdm_arc_val **a, arc_prim_fn recipe, tdm_arc_val **out);
/* apply(f, c) the same way (image.c): f called once per member, in the list's order; the lazy set's layout
 * adds f's results in c's CPython order. Falls back (NULL, *deferred 0, the runtime put back) when a call
 * raises or a result holds a function value (closures hash by serial number, which another order changes). */
tdm_arc_val *arc_map_members(tdm_arc_rt *rt, tdm_arc_val *f, tdm_arc_val *c, int *deferred);
/* Its two halves, for mapply and the selections: f on each of c's members (*m), in that order: 1 with *img
 * (f's results, member order) and *mk (the runtime before the calls, to put back if the caller still
 * takes the ordered path), 0 when c lists no members or after a fallback as above, -1 out of memory (lazy
 * 1: f may return deferred concatenations, which the caller lists before any other use); and
 * the images of c's elements in CPython's order (c laid out, dropped images skipped) into out (nm entries
 * of room): their count, or -1. */
int arc_call_members(tdm_arc_rt *rt, tdm_arc_val *f, tdm_arc_val *c, tdm_arc_val ***m, tdm_arc_val ***img,
                     arc_mark *mk, int lazy);
int arc_images_in_order(tdm_arc_rt *rt, tdm_arc_val *c, tdm_arc_val **m, tdm_arc_val **img, uint32_t nm,
                        tdm_arc_val **out);
static inline int arc_set_uniform_colour(tdm_arc_val *s, int64_t *c) {
    return arc_set_is_lazy(s) && s->u.set.lazy->op->uniform && s->u.set.lazy->op->uniform(s->u.set.lazy, s, c);
}
/* *s = a lazy set of n elements, part `part` of maker z (hash unset), written whole. */
static inline void arc_lazy_set_init(tdm_arc_val *s, arc_lazy *z, uint32_t part, uint32_t n) {
    *s = (tdm_arc_val){.kind = TDM_ARC_FSET, .n = n, .u.set = {.lazy = z, .part = part}};
}
/* Such a set in rt's arena. NULL out of memory. */
tdm_arc_val *arc_set_lazy(tdm_arc_rt *rt, arc_lazy *z, uint32_t part, uint32_t n);
tdm_arc_val *arc_set_new(tdm_arc_rt *rt);
/* frozenset(), one per run and hashed once: for primitives that often return an empty set (connect of two
 * points off a line), which callers then hash and compare. Never add to it. NULL out of memory. */
tdm_arc_val *arc_set_empty(tdm_arc_rt *rt);
int arc_set_add(tdm_arc_rt *rt, tdm_arc_val *s, tdm_arc_val *key); /* 0 or -1 (no memory) */
int arc_set_contains(tdm_arc_val *s, tdm_arc_val *key);
tdm_arc_val *arc_set_copy(tdm_arc_rt *rt, tdm_arc_val *s);             /* freeze */
int arc_set_merge(tdm_arc_rt *rt, tdm_arc_val *r, tdm_arc_val *b);      /* r |= b */
tdm_arc_val *arc_set_union(tdm_arc_rt *rt, tdm_arc_val *a, tdm_arc_val *b);
tdm_arc_val *arc_set_minus(tdm_arc_rt *rt, tdm_arc_val *a, tdm_arc_val *b);
tdm_arc_val *arc_set_meet(tdm_arc_rt *rt, tdm_arc_val *a, tdm_arc_val *b);
/* minus(a, B) for a set B given by its size bn and a membership test (spec §4.6, both branches): the same
 * table arc_set_minus gives when B holds exactly the keys `in` accepts. objects()'s lazy replay uses it
 * with `occupied` described by the partition instead of built. */
tdm_arc_val *arc_set_minus_where(tdm_arc_rt *rt, tdm_arc_val *a, uint32_t bn, int (*in)(void *ctx, tdm_arc_val *key),
                                 void *ctx);
/* Moves src's table into dst (a lazy set being laid out) and clears dst's laziness; src is spent. */
void arc_set_take(tdm_arc_val *dst, tdm_arc_val *src);
/* arc_set_take of r, the result of dst's recipe (NULL: the recipe failed, rt's error set), laid out first:
 * 0, or -1 when r is NULL, or not a set of dst's size (reported as an internal error). */
int arc_set_take_recipe(tdm_arc_rt *rt, tdm_arc_val *dst, tdm_arc_val *r);
/* seq of a list: a fresh table with the elements inserted in order. */
tdm_arc_val *arc_set_from(tdm_arc_rt *rt, tdm_arc_val **v, uint32_t n);
/* arc_set_from of one element (initset): one allocation. NULL out of memory. */
tdm_arc_val *arc_set_of1(tdm_arc_rt *rt, tdm_arc_val *e);
/* The type-preserving rebuild T(c, s): a tuple of s if c is a tuple, seq(s) otherwise. */
tdm_arc_val *arc_rebuild(tdm_arc_rt *rt, const tdm_arc_val *like, tdm_arc_val **v, uint32_t n);
/* Python membership `x in c` for a tuple (== scan) or a frozenset (hash lookup). */
int arc_contains(tdm_arc_rt *rt, tdm_arc_val *c, tdm_arc_val *x);

/* ---- grids and patches ------------------------------------------------------------------------------- */
/* A dense copy of a grid value: h rows of w ints. Grids whose rows differ in length or whose cells are not
 * ints are refused with an error (docs/arc.md: the port's one representation limit). h may be 0. c is in
 * rt's arena and read only: the runtime keeps the last grid read and hands the same copy to the next read
 * of that value. */
typedef struct {
    int h, w;
    int64_t *c;
} arc_grid;
int arc_read_grid(tdm_arc_rt *rt, tdm_arc_val *v, arc_grid *g, const char *who);
/* Per row of g (read from v, at most 32 wide), for each colour 0..9 the columns holding it: row i, colour
 * c at [i * ARC_COLOURS_N + c] (bit j). In rt's arena, read only; kept with the last grid read. NULL out of
 * memory. */
const uint32_t *arc_grid_colour_rows(tdm_arc_rt *rt, tdm_arc_val *v, const arc_grid *g);
/* Like arc_read_grid, but also fails (as Python's grid[0]) on an empty grid. */
int arc_read_grid0(tdm_arc_rt *rt, tdm_arc_val *v, arc_grid *g, const char *who);
/* g as bytes (arc_gview), for readers that scan a grid's cells: 1 with *v when g is a grid of 1..30 rows
 * of one width 1..30 whose cells are all the interned ints 0..9; 0 when not such (the caller
 * reads it the general way, as the eager runtime reads every grid); -1 out of memory. Views are kept for
 * the runtime's last ARC_GVIEWS grids. */
static inline int arc_grid_view(tdm_arc_rt *rt, const tdm_arc_val *g, arc_gview *v);
/* arc_grid_view when g is neither a grid of bytes nor kept: its view made (and kept, or its absence). */
int arc_grid_view_make(tdm_arc_rt *rt, const tdm_arc_val *g, arc_gview *v);
/* Keeps the view of grid g made from its h x w ints (tdm_arc_grid_new's): 1, or 0 when they are not all
 * colours 0..9 or the grid is empty or larger than 30 x 30, -1 out of memory. */
int arc_grid_view_ints(tdm_arc_rt *rt, const tdm_arc_val *g, int h, int w, const int *cells);
/* g's cells into cells (room for all of them and ARC_ROWS_SLACK more, which rows of up to 16 are written
 * past) from the input grid's view (tdm_arc_grid_new's, entry 0) when g's rows all have g's width (>= 1)
 * and each is a run of the input's cells: its rows, or slices of them, which hmirror, tophalf, crop and
 * the splits share (values never change). 1, or 0 when not so (cells then partly written). */
#define ARC_ROWS_SLACK 16
int arc_grid_input_rows(const tdm_arc_rt *rt, const tdm_arc_val *g, int *cells);
/* The view of g when one is kept (none is made): 1 with *v, else 0. */
int arc_grid_view_kept(tdm_arc_rt *rt, const tdm_arc_val *g, arc_gview *v);
/* Room for an h x w grid's bytes (1..30 each) and the slack a 32-byte read of any row may reach (set, so
 * that no read is of memory never written), in rt's arena: NULL out of memory. */
uint8_t *arc_grid_view_bytes(tdm_arc_rt *rt, int h, int w);
/* A writable copy of v's bytes (and slack), in rt's arena, for a grid made from v's by writing cells: NULL
 * out of memory. */
uint8_t *arc_grid_view_copy(tdm_arc_rt *rt, const arc_gview *v);
/* Keeps c (from arc_grid_view_bytes or _copy, h x w, every byte the colour of g's cell) as grid g's view. */
void arc_grid_view_keep(tdm_arc_rt *rt, const tdm_arc_val *g, const uint8_t *c, int h, int w);
/* The same for the input grid (entry 0, which arc_grid_input_rows reads): a prepared input's (inputs.c). */
void arc_grid_view_keep_input(tdm_arc_rt *rt, const tdm_arc_val *g, const uint8_t *c, int h, int w);
/* The prepared value of grid ref g when in holds one (in may be NULL): 1 with *out, g's bytes kept as rt's
 * input view; else 0 (the caller converts the cells). */
int arc_inputs_take(tdm_arc_rt *rt, const tdm_arc_inputs *in, const tdm_arc_grid_ref *g, const tdm_arc_val **out);
/* A new h x w grid (1..30 each) whose cells are the interned colours of bytes c (from arc_grid_view_bytes,
 * written), laid out as tdm_arc_grid_new lays one out, with c kept as its view: NULL out of memory. */
tdm_arc_val *arc_grid_of_bytes(tdm_arc_rt *rt, const uint8_t *c, int h, int w);
/* A primitive's result from its bytes c: a grid of bytes when its line allows one (bytes, arc_take_grid),
 * else arc_grid_of_bytes. NULL out of memory. */
tdm_arc_val *arc_grid_result(tdm_arc_rt *rt, const uint8_t *c, int h, int w, int bytes);
/* The same grid without c kept as its view (for a grid whose cells are written next). */
tdm_arc_val *arc_grid_cells(tdm_arc_rt *rt, const uint8_t *c, int h, int w);
/* A grid of h rows of w cells in one block of rt's arena, its cells in *items (row-major, not written):
 * NULL out of memory. */
tdm_arc_val *arc_grid_block(tdm_arc_rt *rt, int h, int w, tdm_arc_val ***items);
/* The rows of grid g (a non-empty tuple): 2 when they are listed tuples of one length *w whose items lie
 * back to back from row 0's (arc_grid_block's layout), 1 when of one length but not so, 0 when not such
 * (a row that is no tuple or a deferred one, lengths that differ). */
static inline int arc_grid_rows_shape(const tdm_arc_val *g, uint32_t *w) {
    const tdm_arc_val *r0 = g->u.items[0];
    if (!arc_is_tuple(r0)) return 0;
    tdm_arc_val *const *at = r0->u.items;
    int one = 1; /* the rows' items lie one after another */
    *w = r0->n;
    for (uint32_t i = 0; i < g->n; i++) {
        const tdm_arc_val *r = g->u.items[i];
        if (!arc_is_tuple(r) || arc_tuple_is_lazy(r) || r->n != *w) return 0;
        one &= r->u.items == at + (size_t)i * *w;
    }
    return one ? 2 : 1;
}

/* out[k] = c[k] for n bytes (a view's cells as ints). */
void arc_bytes_to_ints(int *out, const uint8_t *c, size_t n);
/* Per colour 0..9 (count[10]), how many of the n bytes c (at most 30 x 30, each 0..9) hold it. */
void arc_colour_counts(const uint8_t *c, uint32_t n, uint32_t *count);
/* Per colour 0..9 (first[10]), where the first of the n bytes c holding it is (UINT32_MAX: none), from
 * arc_colour_counts' counts. */
void arc_colour_firsts(const uint8_t *c, uint32_t n, const uint32_t *count, uint32_t *first);
/* mostcolor (least 0) or leastcolor (least 1) of the n bytes c as arc_colour_counts reads them (-1: n 0):
 * the first cells are found only for a tie. */
int arc_bytes_pick(const uint8_t *c, uint32_t n, int least);
/* The same from the counts already made (count[10], arc_colour_counts' of the same bytes). */
int arc_bytes_pick_counted(const uint8_t *c, uint32_t n, const uint32_t *count, int least);
/* The colour counts of grid g, whose view is v (arc_grid_view's): counted once for the last grid asked
 * (rt->counts_of; reset forgets it), so that palette, mostcolor and fgpartition of one grid count once.
 * The pointer is the runtime's, valid until the next call. */
const uint32_t *arc_grid_view_counts(tdm_arc_rt *rt, const tdm_arc_val *g, const arc_gview *v);
/* The colours of grid g, whose view is v, in an order that inserting them in gives palette(g)'s table (the
 * order its cells first hold them, or ascending where any order gives that table): their number, written to
 * order[0..n). (prim_color.c) */
int arc_view_palette_order(tdm_arc_rt *rt, const tdm_arc_val *g, const arc_gview *v, int *order);
#if defined(__SSE2__) && UINTPTR_MAX > UINT32_MAX
#define ARC_VEC_ADDR 1 /* the grid conversions' vector forms do arithmetic on 64-bit addresses */
/* The indices of cells[0..3] in an array of values at base (their offsets d = address - base, d / 48,
 * exact: (d >> 4) * 0xaaaaaaab mod 2^32), and in *in the lanes cleared where a cell lies outside the
 * array's size bytes (below base wraps to a large offset). */
static inline __m128i arc_addr_index4(tdm_arc_val *const *cells, uintptr_t base, uint32_t size, __m128i *in) {
    _Static_assert(sizeof(tdm_arc_val) == 48, "arc_addr_index4's arithmetic");
    const __m128i vb = _mm_set1_epi64x((int64_t)base), sign = _mm_set1_epi32(INT32_MIN),
                  top = _mm_set1_epi32((int)(size ^ (uint32_t)INT32_MIN)), inv3 = _mm_set1_epi64x(0xaaaaaaabll);
    __m128i d0 = _mm_sub_epi64(_mm_loadu_si128((const __m128i *)cells), vb);
    __m128i d1 = _mm_sub_epi64(_mm_loadu_si128((const __m128i *)(cells + 2)), vb);
    __m128i low = _mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(d0), _mm_castsi128_ps(d1), _MM_SHUFFLE(2, 0, 2, 0)));
    __m128i high = _mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(d0), _mm_castsi128_ps(d1), _MM_SHUFFLE(3, 1, 3, 1)));
    *in = _mm_and_si128(*in, _mm_and_si128(_mm_cmpeq_epi32(high, _mm_setzero_si128()), _mm_cmplt_epi32(_mm_xor_si128(low, sign), top)));
    __m128i k0 = _mm_mul_epu32(_mm_srli_epi64(d0, 4), inv3), k1 = _mm_mul_epu32(_mm_srli_epi64(d1, 4), inv3);
    return _mm_castps_si128(_mm_shuffle_ps(_mm_castsi128_ps(k0), _mm_castsi128_ps(k1), _MM_SHUFFLE(2, 0, 2, 0)));
}
#endif

/* Bit j set where r[j] == c, for j in 0..31 (32 bytes read: a view's row, with its slack). */
static inline uint32_t arc_colour_mask32(const uint8_t *r, int c) {
#if defined(__SSE2__)
    __m128i v = _mm_set1_epi8((char)c);
    return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)r), v)) |
           (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(r + 16)), v)) << 16;
#else
    uint32_t m = 0;
    for (int j = 0; j < 32; j++) m |= (uint32_t)(r[j] == c) << j;
    return m;
#endif
}
/* Bit j set where a[j] == b[j], for j in 0..31 (32 bytes read from each). */
static inline uint32_t arc_eq_mask32(const uint8_t *a, const uint8_t *b) {
#if defined(__SSE2__)
    __m128i a0 = _mm_loadu_si128((const __m128i *)a), a1 = _mm_loadu_si128((const __m128i *)(a + 16));
    __m128i b0 = _mm_loadu_si128((const __m128i *)b), b1 = _mm_loadu_si128((const __m128i *)(b + 16));
    return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a0, b0)) | (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(a1, b1)) << 16;
#else
    uint32_t m = 0;
    for (int j = 0; j < 32; j++) m |= (uint32_t)(a[j] == b[j]) << j;
    return m;
#endif
}
/* Bit j set where row i of view v holds colour c, for j < v->w. */
static inline uint32_t arc_gview_row_mask(const arc_gview *v, int i, int c) {
    return arc_colour_mask32(v->c + i * v->w, c) & ((1u << v->w) - 1u);
}
tdm_arc_val *arc_make_grid(tdm_arc_rt *rt, int h, int w, const int64_t *c);
tdm_arc_val *arc_grid_rows0(tdm_arc_rt *rt, int h); /* h rows of width 0 */

/* Positions of toindices(patch), in its iteration order. dedup: as the Python set (objects collapse
 * positions); otherwise one position per element. Errors as Python's `for i, j in ...`. */
typedef struct {
    int64_t i, j;
} arc_pos;
int arc_positions(tdm_arc_rt *rt, tdm_arc_val *patch, int dedup, arc_pos **out, uint32_t *n, const char *who);
/* 1 if patch is an Object (first element's [1] is a tuple), 0 if Indices, 2 if empty, -1 error. */
int arc_patch_kind(tdm_arc_rt *rt, tdm_arc_val *patch, const char *who);
tdm_arc_val *arc_toindices(tdm_arc_rt *rt, tdm_arc_val *patch);
/* Cells (c, i, j) of an object in iteration order (each element unpacked as `v, (i, j)`). */
typedef struct {
    int64_t c, i, j;
} arc_cellv;
int arc_cells(tdm_arc_rt *rt, tdm_arc_val *obj, arc_cellv **out, uint32_t *n, const char *who);
int arc_mostcolor_of(tdm_arc_rt *rt, tdm_arc_val *elem, int least, int64_t *out);
/* Keeps c as grid g's mostcolor (least 0) or leastcolor (least 1) for arc_mostcolor_of (rt->pick_grid: the
 * last grid's answers only). */
void arc_pick_keep(tdm_arc_rt *rt, tdm_arc_val *g, int least, int c);
/* Bounding box of a non-empty position list. */
void arc_bbox(const arc_pos *p, uint32_t n, int64_t *u, int64_t *l, int64_t *d, int64_t *r);
/* The number of positions of a patch (one per element, as arc_positions without dedup) and, when there
 * are any, their bounding box: for measures that do not depend on order, so a lazy object needs no
 * layout. Errors as arc_positions. */
int arc_patch_box(tdm_arc_rt *rt, tdm_arc_val *patch, uint32_t *n, int64_t *u, int64_t *l, int64_t *d, int64_t *r,
                  const char *who);

/* tuple(zip(*rows)) with rows taken bottom-up (rows_rev) and read right to left (cols_rev 1: each row by
 * its own length, as r[::-1] before zip; 2: by the shortest row's, as reversing zip's output): the
 * transposes behind dmirror, cmirror and the rotations. Rows must be tuples. */
tdm_arc_val *arc_transpose(tdm_arc_rt *rt, tdm_arc_val *g, int rows_rev, int cols_rev, const char *who);
tdm_arc_val *arc_reversed(tdm_arc_rt *rt, tdm_arc_val *t); /* t[::-1] */

/* ---- objects() (prim_objects.c, objects_lazy.c) ----------------------------------------------------- */
/* The order of N((i, j)) (dneighbors, or neighbors when diagonal) as offsets, for 0 <= i, j < 30; NULL if
 * it could not be computed. */
const int8_t (*arc_neigh_order(int diagonal, int i, int j))[2];
/* Makes the per-process lookup tables that primitives otherwise make on first use (neighbourhood orders,
 * cells' and mask elements' hash parts), each once: tdm_arc_programs_parse calls it, so that no solver
 * call pays for them. Thread-safe. */
void arc_tables_make(void);
void arc_cell_mix_make(void);
void arc_elem_pxor_make(void);
/* asindices(h x w)'s iteration order as row-major indices, for 1 <= h, w <= 30 (NULL otherwise). */
const uint16_t *arc_asindices_order(int64_t h, int64_t w);
/* Its inverse: each row-major index's place in that order. */
const uint16_t *arc_asindices_rank(int64_t h, int64_t w);
/* objects() by replaying the reference's set operations one by one (spec §4.8): every set laid out now. */
tdm_arc_val *arc_objects_eager(tdm_arc_rt *rt, tdm_arc_val **a);
/* objects() with lazy layouts (objects_lazy.c): NULL with *fallback = 1 when the grid is outside what the
 * lazy path handles (over 30x30, colours outside 0..9, rows of width 0, cells not ints); the caller then
 * takes the eager path, which also gives Python's errors. */
tdm_arc_val *arc_objects_lazy(tdm_arc_rt *rt, tdm_arc_val **a, int *fallback);
/* colorfilter(objects(a...), c) for univalued objects (a[1] true), made as arc_objects_lazy makes objects()
 * but of the cells of colour c only (0..9): the same values, hash and, when asked, layouts (read from the
 * full objects() of a, made then). *fallback as arc_objects_lazy's. */
tdm_arc_val *arc_objects_of_colour(tdm_arc_rt *rt, tdm_arc_val **a, int c, int *fallback);
/* 1 when s is arc_objects_of_colour's set of colour c (its outer set, not laid out yet), else 0. */
int arc_objects_only(const tdm_arc_val *s, int c);
/* For a line objects(...) read only by a line colorfilter(·, c) (program.c): the primitives the two lines
 * run, objects' (arc_objects_of_colour's set when it applies, else objects()) and colorfilter's (which gives
 * such a set back as it is, since it is that filter's result; else filters). */
arc_prim_fn arc_objects_of_fn(int c);
tdm_arc_val *arc_colorfilter_of(tdm_arc_rt *rt, tdm_arc_val **a);
/* For a set fresh from arc_objects_lazy (still lazy: nothing has read its layout): each cell's object
 * (comp, row-major over the grid, -1 for background) and the objects (objs[k] is the element of the set that
 * comp value k names), both owned by the set's runtime. 0, or -1 when outer is not such a set or memory ran
 * out (rt's error set then). The batched executor decodes its object lanes with it (exec_lane.c). */
int arc_objects_lazy_parts(tdm_arc_val *outer, const int16_t **comp, tdm_arc_val **objs);
/* For an object of objects() whose layout is still lazy: 1 with its rows (cols 0) or columns (cols 1) as
 * lo..hi, which are one run since an object is connected; 0 for any other value. */
int arc_objs_span(const tdm_arc_val *s, int cols, int64_t *lo, int64_t *hi);
/* objects()'s components of an h x w grid of colours 0..9 in a 30 x 30 slot (cells[i * 30 + j]; flags
 * ARC_OBJ_*), by objects()'s own labelling (objects_label.c): per cell inside the grid, the id (< 900) of its
 * component, one id per component, -1 for the background; slots outside the grid are not written. */
void arc_objs_label_slot(const uint8_t *cells, int h, int w, int flags, int16_t *out);

/* ---- sets of cells and positions with deferred layouts (bits.c) ------------------------------------- */
/* The contents of a frozenset of positions (i, j) or of cells (c, (i, j)) (c in 0..9): interned ones with
 * -2 <= i, j < 30 as row masks, and in a wide set the others as a sorted list of keys. This is what merge,
 * toindices, difference, recolor, shift, connect, shoot, ofcolor, ... know of their result without its
 * CPython layout. Such a result is a lazy set (arc_lazy) whose layout is its primitive's eager form run
 * again on the same arguments when something reads an order (spec §4.11); len, hash, ==, membership,
 * boxes, fill and paint read the contents. */
enum { ARC_BITS_NONE, ARC_BITS_POS, ARC_BITS_CELLS };
typedef struct arc_bits {
    int kind;        /* ARC_BITS_NONE (no element yet), ARC_BITS_POS or ARC_BITS_CELLS */
    uint32_t blocks; /* bit b: block b of m is written (positions use block 0; cells, block c for colour c) */
    uint32_t *m;     /* up to 10 blocks of 32 row masks: bit j + ARC_BITS_OFF of m[32 * b + i + ARC_BITS_OFF]
                        is (i, j) (of colour b) */
    tdm_arc_rt *rt;  /* a wide accumulator's runtime (out grows in its arena); NULL: masks only */
    uint64_t *out;   /* wide: the other elements as keys (arc_bits_key): sorted and unique in a made set */
    uint32_t nout, cap;
    uint32_t rows;   /* in a made set (arc_bits_set): bit i when row i of some block is not empty; 0 while
                        not known (an accumulator), when every row may hold elements */
} arc_bits;
/* Masks hold -2 <= i, j < 30: a 30 x 30 grid and the ring of positions just outside its top and left
 * (neighbours, outboxes, shifts by one), all of them interned pairs. */
#define ARC_BITS_OFF 2
static inline int arc_bits_fits(int64_t i, int64_t j) {
    return i >= -ARC_BITS_OFF && j >= -ARC_BITS_OFF && i < 32 - ARC_BITS_OFF && j < 32 - ARC_BITS_OFF;
}
/* A wide set's element as a key: colour (0 for positions), then i, then j, so keys sort as (c, i, j). */
#define ARC_KEY_BIAS (1 << 23)
static inline int arc_key_ok(int64_t i, int64_t j) {
    return i > -ARC_KEY_BIAS && i < ARC_KEY_BIAS && j > -ARC_KEY_BIAS && j < ARC_KEY_BIAS;
}
static inline uint64_t arc_bits_key(int64_t c, int64_t i, int64_t j) {
    return (uint64_t)c << 48 | (uint64_t)(i + ARC_KEY_BIAS) << 24 | (uint64_t)(j + ARC_KEY_BIAS);
}
static inline int64_t arc_key_c(uint64_t k) { return (int64_t)(k >> 48); }
static inline int64_t arc_key_i(uint64_t k) { return (int64_t)(k >> 24 & 0xffffff) - ARC_KEY_BIAS; }
static inline int64_t arc_key_j(uint64_t k) { return (int64_t)(k & 0xffffff) - ARC_KEY_BIAS; }
#define ARC_COLOURS_N 10
/* Set bits of v, inline: without -mpopcnt __builtin_popcount is a library call. */
static inline int arc_popc(uint32_t v) {
    v = v - ((v >> 1) & 0x55555555u);
    v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
    return (int)((((v + (v >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24);
}
/* The rows [*lo, *hi) outside which every block of b is empty (all 32 while b->rows is not known). */
static inline void arc_bits_span(const arc_bits *b, int *lo, int *hi) {
    *lo = b->rows ? __builtin_ctz(b->rows) : 0;
    *hi = b->rows ? 32 - __builtin_clz(b->rows) : 32;
}
/* The slot a key of hash h takes in a fresh CPython set's 8-slot table, where bit s of *taken marks slot s
 * held, and marks it (set_add_entry's probes: no linear run fits in 8 slots, so each collision perturbs).
 * Up to 4 keys stay in that table (the fifth grows it). */
static inline int arc_slot8(uint32_t *taken, uint64_t h) {
    uint64_t perturb = h, i = h & 7;
    while (*taken >> i & 1) perturb >>= 5, i = (i * 5 + 1 + perturb) & 7;
    *taken |= 1u << i;
    return (int)i;
}
/* Clears the 128 bytes at p (a block of 32 row masks, an 8-slot table) with eight 16-byte stores, written
 * out: gcc makes a loop of them, or a memset of 128 bytes, a loop of stores (src/arc's string-operation
 * strategy, CMakeLists.txt). */
static inline void arc_zero128(void *p) {
#if defined(__SSE2__)
    __m128i *q = (__m128i *)p, z = _mm_setzero_si128();
    _mm_storeu_si128(q, z), _mm_storeu_si128(q + 1, z), _mm_storeu_si128(q + 2, z), _mm_storeu_si128(q + 3, z);
    _mm_storeu_si128(q + 4, z), _mm_storeu_si128(q + 5, z), _mm_storeu_si128(q + 6, z), _mm_storeu_si128(q + 7, z);
#else
    memset(p, 0, 128);
#endif
}
/* Block c of b, zeroed on its first use. */
static inline uint32_t *arc_bits_block(arc_bits *b, int c) {
    uint32_t *m = b->m + 32 * c;
    if (!(b->blocks >> c & 1)) {
        arc_zero128(m);
        b->blocks |= 1u << c;
    }
    return m;
}
/* The interned element at bit j of row i of block c of masks of that kind. */
static inline tdm_arc_val *arc_bits_elem(int kind, int c, int i, int j) {
    int p = (i - ARC_BITS_OFF - ARC_POS_LO) * ARC_POS_N + (j - ARC_BITS_OFF - ARC_POS_LO);
    return kind == ARC_BITS_POS ? &arc_pos_vals[p] : &arc_cell_vals[c * ARC_POS_N * ARC_POS_N + p];
}
/* An empty accumulator with room for cells (m in rt's arena), masks only (init) or wide (init_wide): 0, or
 * -1 out of memory. */
int arc_bits_init(tdm_arc_rt *rt, arc_bits *b);
int arc_bits_init_wide(tdm_arc_rt *rt, arc_bits *b);
/* Adds element (c, i, j) (c 0 for a position) of b's kind to a wide b: to the masks when it fits, else to
 * out. 0, or -1 out of memory. */
int arc_bits_put(arc_bits *b, int64_t c, int64_t i, int64_t j);
/* arc_bits_put of the n points (i + k di, j + k dj), k = 0..n-1 (di, dj each -1, 0 or 1), in that order,
 * with room for the keys reserved once (a line of connect or shoot, most of it often off the masks). Its two
 * ends must pass arc_key_ok (then all its points do). 0, or -1 out of memory. */
int arc_bits_put_run(arc_bits *b, int64_t c, int64_t i, int64_t j, int64_t di, int64_t dj, uint32_t n);
/* Room in a wide b's out for m more keys: 0, or -1 out of memory. */
int arc_bits_reserve(arc_bits *b, uint32_t m);
/* Adds the elements of frozenset s (or of a deferred concatenation) to b: 1, or 0 when one does not fit
 * (for masks only: not an interned position or cell in range; wide: not a position or cell at all), or is
 * not of b's kind (b is unspecified then), -1 out of memory. Reads no layout (a lazy set answers through
 * its bits hook, or is declined when it has none). */
int arc_bits_add(arc_bits *b, tdm_arc_val *s);
/* The same for n values given as elements (a lazy set's members): 1, 0 or -1 as above. */
int arc_bits_add_elems(arc_bits *b, tdm_arc_val *const *v, uint32_t n);
/* s's contents: 1 and *b (borrowed from s if s is deferred, else built in rt's arena), 0 when they do not
 * fit, -1 out of memory. arc_bits_get takes masks only (b->nout is 0); arc_bits_get_wide, wide sets too. */
int arc_bits_get(tdm_arc_rt *rt, tdm_arc_val *s, arc_bits *b);
int arc_bits_get_wide(tdm_arc_rt *rt, tdm_arc_val *s, arc_bits *b);
/* The contents of mapply(rbind(shoot, d), s) (cells 0: s a set of positions) or of mapply(fork(recolor,
 * first, compose(rbind(shoot, d), last)), s) (cells 1: s a set of cells, each line in its cell's colour)
 * without the calls, when d is a unit direction and s is non-empty and in the masks: 1 with *b (a wide
 * accumulator), 0 when not such, -1 out of memory (prim_patch.c). */
int arc_shoot_union(tdm_arc_rt *rt, tdm_arc_val *s, tdm_arc_val *d, int cells, arc_bits *b);
/* The contents of mapply(f, s) for f dneighbors (which 1), ineighbors (2) or neighbors (3) without the
 * calls, when s is a non-empty set of positions in the masks and every neighbour of them fits the masks too:
 * 1 with *b (masks only), 0 when not such, -1 out of memory (prim_patch.c). */
int arc_neighbours_union(tdm_arc_rt *rt, tdm_arc_val *s, int which, arc_bits *b);
/* Whether (ai, aj) and (bi, bj) lie on one row, column or diagonal (else connect gives the empty set). */
static inline int arc_on_line(int64_t ai, int64_t aj, int64_t bi, int64_t bj) {
    return ai == bi || aj == bj || bi - ai == bj - aj || bi - ai == aj - bj;
}
/* prapply(connect, a, b) for a and b sets of positions whose elements are known without a layout: the
 * distinct lines as a deferred set (product.c); NULL with *done 0 when not such, with *done 1 out of
 * memory. */
tdm_arc_val *arc_connect_pairs(tdm_arc_rt *rt, tdm_arc_val **a, int *done);
/* frozenset(f(x, y) for y in b for x in a), a = {f, a, b}, as the reference makes it; direct: f, a primitive
 * that cannot raise on these, called in place without a frame (a deferred layout's recipe, which may run
 * at any depth). */
tdm_arc_val *arc_prapply_eager(tdm_arc_rt *rt, tdm_arc_val **a, int direct);
/* *d = x & y (a wide accumulator, in rt's arena), for x and y of one kind: 0, or -1 out of memory. */
int arc_bits_meet(tdm_arc_rt *rt, const arc_bits *x, const arc_bits *y, arc_bits *d);
/* The bounding box {min i, min j, max i, max j} of a non-empty made b (positions, not bit indices). */
void arc_bits_box(const arc_bits *b, int64_t box[4]);
/* The same for a deferred set s (arc_bits_of(s) not NULL), computed once per set. */
void arc_bits_box_of(tdm_arc_val *s, int64_t box[4]);
/* The box of set s whose contents b came from arc_bits_get (masks only): the one s keeps when s is
 * deferred or an object of objects() (its bbox hook), else b's. */
void arc_bits_box_for(tdm_arc_val *s, const arc_bits *b, int64_t box[4]);
/* Bit i: rows[i] is not 0. */
uint32_t arc_rows_nonzero(const uint32_t rows[32]);
/* The positions in b's masks as one mask per row, in their bit layout: toindices of its cells (or b
 * itself), less the wide part. */
void arc_bits_positions(const arc_bits *b, uint32_t rows[32]);
/* The positions of frozenset s (its cells' positions, for cells) as row masks in that bit layout, and in
 * *used the rows that are not empty (bit i: rows[i]; the others may be left unwritten), read without a
 * layout and without the runtime's arena: 1, or 0 when s's contents do not fit the masks (not all
 * positions or all cells, or any out of range), -1 out of memory. */
int arc_bits_rows(tdm_arc_val *s, uint32_t rows[32], uint32_t *used);
/* The one position of s, a one-element eager frozenset (as initset makes) of a position or a cell inside
 * the masks, as arc_bits_rows lays it out: row index into *row, that row's mask into *bits: 1, or 0 for
 * any other s (deferred, more elements, another element, out of range). Reads nothing else. */
int arc_bits_point(const tdm_arc_val *s, int *row, uint32_t *bits);
/* manhattan over a column (prim_geom.c): out[k] = manhattan(c, x[k]) (manhattan(x[k], c) when c_first is
 * 0), each call at depth d, c's rows read once and a member of one position measured from them. 0 done;
 * 1 not taken (c is not a patch that fits the masks), nothing called; -1 a call raised or memory ran out. */
int arc_manhattan_column(tdm_arc_rt *rt, tdm_arc_val *c, int c_first, uint32_t n, tdm_arc_val **x, tdm_arc_val **out, int d);
/* The frozenset with b's elements whose layout is eager(rt, args) (the primitive's own form, args copied:
 * nargs <= 3), made when something reads it; b's memory passes to the set. NULL out of memory. */
tdm_arc_val *arc_bits_set(tdm_arc_rt *rt, arc_bits *b, arc_prim_fn eager, tdm_arc_val **args, int nargs);
/* Non-zero: the portable forms even where the CPU has popcnt and AVX2 (arc_bits_set's counts,
 * arc_colour_counts, objects()' labelling): the tests run both forms; a process-wide setting, not for
 * threads that are running. */
extern int arc_bits_portable;
/* The same for contents already in the form arc_bits_set leaves them (every block in b->blocks holding an
 * element, b->rows the non-empty rows, wide keys sorted and unique) with n elements: a mirror or shift of
 * a set knows these, and its box (NULL when not known). No mask is read. */
tdm_arc_val *arc_bits_set_known(tdm_arc_rt *rt, arc_bits *b, uint32_t n, const int64_t box[4], arc_prim_fn eager,
                                tdm_arc_val **args, int nargs);
/* The same for n distinct elements whose wide keys are sorted and unique (a line's): the masks' non-empty
 * rows and blocks are found, not their elements counted; box as for arc_bits_set_known. */
tdm_arc_val *arc_bits_set_counted(tdm_arc_rt *rt, arc_bits *b, uint32_t n, const int64_t box[4], arc_prim_fn eager,
                                  tdm_arc_val **args, int nargs);
/* The contents of s if s is such a deferred set (borrowed), else NULL. */
const arc_bits *arc_bits_of(const tdm_arc_val *s);
/* Marks s, a set just made by arc_bits_set (or _known, _counted), as one whose recipe adds its elements to
 * a new set in row-major order (i, then j) and nothing else: ofcolor's, an object of partition's. */
void arc_bits_row_major(tdm_arc_val *s);
/* The first and last elements in the table order of such a set of 1 to 4 elements, all in the masks,
 * with no layout made (CPython's probes replayed in the first 8-slot table): 1 with *first and *last, 0
 * when s is not such a set. */
int arc_bits_small_ends(tdm_arc_val *s, tdm_arc_val **first, tdm_arc_val **last);
/* a == b for frozensets of equal size when one is deferred and the other's contents fit: 1 or 0; -1 when
 * that cannot be told this way (the caller compares element by element). */
int arc_bits_equal(tdm_arc_val *a, tdm_arc_val *b);
/* merge's eager form (every set laid out), the recipe of merges deferred elsewhere (mapply). */
tdm_arc_val *arc_merge_eager(tdm_arc_rt *rt, tdm_arc_val **a);
/* merge(a[0]) for callers inside the runtime; lazy 1: a tuple of sets may give a deferred concatenation. */
tdm_arc_val *arc_merge(tdm_arc_rt *rt, tdm_arc_val **a, int lazy);
/* 1 when sets of rt may defer their layouts (rt->eager off). */
static inline int arc_defer(const tdm_arc_rt *rt) { return !rt->eager; }
/* A grid of bytes' view, its own bytes: 1 with *v, 0 for any other value. */
static inline int arc_grid_lazy_view(const tdm_arc_val *g, arc_gview *v) {
    if (!arc_grid_is_lazy(g)) return 0;
    v->c = g->u.grid.c, v->h = (int)g->n, v->w = g->u.grid.w;
    return 1;
}
/* g's entry among the kept views (its c NULL: g is known to be no grid of colours), or NULL. */
static inline const arc_gview *arc_grid_view_entry(const tdm_arc_rt *rt, const tdm_arc_val *g) {
    for (int k = 0; k < ARC_GVIEWS; k++)
        if (rt->gview_of[k] == g) return &rt->gview[k];
    return NULL;
}
/* arc_grid_view's answers without a call (a grid of bytes, a kept view: most of them); the rest made. */
static inline int arc_grid_view(tdm_arc_rt *rt, const tdm_arc_val *g, arc_gview *v) {
    if (arc_grid_lazy_view(g, v)) return 1;
    if (!arc_defer(rt)) return 0; /* the eager runtime (the tests' reference) reads grids cell by cell */
    const arc_gview *k = arc_grid_view_entry(rt, g);
    if (!k) return arc_grid_view_make(rt, g, v);
    *v = *k;
    return v->c != NULL;
}

/* apply(mostcommon, g) (most 1) or apply(leastcommon, g) over g's bytes v: the tuple of each row's answer,
 * as common() would give it from the row's ints. NULL out of memory. */
tdm_arc_val *arc_rows_common(tdm_arc_rt *rt, const arc_gview *v, int most);

/* ---- calls ----------------------------------------------------------------------------------------- */
/* Primitive fn on args; lazy: args offered to it (arc_take_lazy) for this call only: not taken, no later
 * call may find them. The interpreter's lines and prim_func.c's calls make primitive calls this way. */
static inline __attribute__((always_inline)) tdm_arc_val *arc_offered(tdm_arc_rt *rt, arc_prim_fn fn, tdm_arc_val **args,
                                                                      int lazy) {
    if (lazy) rt->lazy_args = args;
    tdm_arc_val *r = fn(rt, args);
    if (lazy) rt->lazy_args = NULL;
    return r;
}
tdm_arc_val *arc_call(tdm_arc_rt *rt, tdm_arc_val *fn, int argc, tdm_arc_val **args);
/* The same; lazy 1: the caller reads only the result's contents, or lists its items first, so the result
 * may be a deferred concatenation (cat.c). */
tdm_arc_val *arc_call_ex(tdm_arc_rt *rt, tdm_arc_val *fn, int argc, tdm_arc_val **args, int lazy);
tdm_arc_val *arc_call1(tdm_arc_rt *rt, tdm_arc_val *fn, tdm_arc_val *x);
tdm_arc_val *arc_call2(tdm_arc_rt *rt, tdm_arc_val *fn, tdm_arc_val *x, tdm_arc_val *y);
/* 1 when the one-argument function value f reads its argument only through first(x) (first itself, or
 * compose, chain, matcher and fork closures whose innermost calls on x are such), so that f gives equal
 * results on arguments with equal first items; 0 when that is not known. */
int arc_fn_reads_first(const tdm_arc_val *f);
/* f(x[k]) for every k < n into out (n entries, the caller's), a closure's calls made node by node over all
 * n arguments (a column a node: no call frame per argument and node) where that gives the values calling f
 * on each would (prim_func.c says when). 1 done; 0 not done (rt not deferring or counting statistics, n < 2,
 * f no closure, or a call raised: rt is put back, as arc_put_back does, and the caller calls f member by
 * member); -1 out of memory. Like the order-free forms (image.c), it calls f in another order than the
 * reference, so closures made inside get other serial numbers: when it made any, a result that holds a
 * function sends it back to 0 too. */
/* Whether v holds a function value (whose hash is its serial number, which another order of calls would
 * change): v itself, or an item or element at any depth. */
int arc_holds_function_deep(tdm_arc_val *v); /* a tuple (not an interned pair) or a laid-out set */
static inline int arc_holds_function(tdm_arc_val *v) {
    if (v->kind == TDM_ARC_FUNC) return 1;
    if (v->kind == TDM_ARC_TUPLE) return !arc_is_interned_pair(v) && arc_holds_function_deep(v);
    /* lazy sets hold cells, positions, objects or their sets */
    return v->kind == TDM_ARC_FSET && !v->u.set.lazy && arc_holds_function_deep(v);
}
int arc_call_column(tdm_arc_rt *rt, tdm_arc_val *f, uint32_t n, tdm_arc_val **x, tdm_arc_val **out, int lazy);

/* ---- the primitives ---------------------------------------------------------------------------------- */

/* name, arity. Order is the alphabetical index of spec §3.10; the position is the primitive's id. */
#define ARC_PRIM_LIST(X)                                                                                   \
    X(add, 2) X(adjacent, 2) X(apply, 2) X(argmax, 2) X(argmin, 2) X(asindices, 1) X(asobject, 1)          \
    X(astuple, 2) X(backdrop, 1) X(bordering, 2) X(both, 2) X(bottomhalf, 1) X(box, 1) X(branch, 3)        \
    X(canvas, 2) X(cellwise, 3) X(center, 1) X(centerofmass, 1) X(chain, 3) X(cmirror, 1) X(color, 1)      \
    X(colorcount, 2) X(colorfilter, 2) X(combine, 2) X(compose, 2) X(compress, 1) X(connect, 2)            \
    X(contained, 2) X(corners, 1) X(cover, 2) X(crement, 1) X(crop, 3) X(decrement, 1) X(dedupe, 1)        \
    X(delta, 1) X(difference, 2) X(divide, 2) X(dmirror, 1) X(dneighbors, 1) X(double, 1)                  \
    X(downscale, 2) X(either, 2) X(equality, 2) X(even, 1) X(extract, 2) X(fgpartition, 1) X(fill, 3)      \
    X(first, 1) X(flip, 1) X(fork, 3) X(frontiers, 1) X(gravitate, 2) X(greater, 2) X(halve, 1)            \
    X(hconcat, 2) X(height, 1) X(hfrontier, 1) X(hline, 1) X(hmatching, 2) X(hmirror, 1) X(hperiod, 1)     \
    X(hsplit, 2) X(hupscale, 2) X(identity, 1) X(inbox, 1) X(increment, 1) X(index, 2) X(ineighbors, 1)    \
    X(initset, 1) X(insert, 2) X(intersection, 2) X(interval, 3) X(invert, 1) X(last, 1) X(lbind, 2)       \
    X(leastcolor, 1) X(leastcommon, 1) X(lefthalf, 1) X(leftmost, 1) X(llcorner, 1) X(lowermost, 1)       \
    X(lrcorner, 1) X(manhattan, 2) X(mapply, 2) X(matcher, 2) X(maximum, 1) X(merge, 1) X(mfilter, 2)     \
    X(minimum, 1) X(mostcolor, 1) X(mostcommon, 1) X(move, 3) X(mpapply, 3) X(multiply, 2)                 \
    X(neighbors, 1) X(normalize, 1) X(numcolors, 1) X(objects, 4) X(occurrences, 2) X(ofcolor, 2)          \
    X(order, 2) X(other, 2) X(outbox, 1) X(paint, 2) X(pair, 2) X(palette, 1) X(papply, 3)                 \
    X(partition, 1) X(portrait, 1) X(position, 2) X(positive, 1) X(power, 2) X(prapply, 3) X(product, 2)  \
    X(rapply, 2) X(rbind, 2) X(recolor, 2) X(remove, 2) X(repeat, 2) X(replace, 3) X(righthalf, 1)         \
    X(rightmost, 1) X(rot180, 1) X(rot270, 1) X(rot90, 1) X(sfilter, 2) X(shape, 1) X(shift, 2)            \
    X(shoot, 2) X(sign, 1) X(size, 1) X(sizefilter, 2) X(square, 1) X(subgrid, 2) X(subtract, 2)           \
    X(switch, 3) X(toindices, 1) X(toivec, 1) X(tojvec, 1) X(toobject, 2) X(tophalf, 1) X(totuple, 1)      \
    X(trim, 1) X(ulcorner, 1) X(underfill, 3) X(underpaint, 2) X(uppermost, 1) X(upscale, 2)               \
    X(urcorner, 1) X(valmax, 2) X(valmin, 2) X(vconcat, 2) X(vfrontier, 1) X(vline, 1) X(vmatching, 2)     \
    X(vmirror, 1) X(vperiod, 1) X(vsplit, 2) X(vupscale, 2) X(width, 1)

enum {
#define ARC_X_ID(name, arity) ARC_P_##name,
    ARC_PRIM_LIST(ARC_X_ID)
#undef ARC_X_ID
    ARC_NPRIM
};

extern const arc_prim_fn arc_prim_fns[]; /* registry.c: entry points by id */
static inline arc_prim_fn arc_prim_table_fn(int id) { return arc_prim_fns[id]; }
/* Index of a constants.py name, or -1; its value (interned: shared, never freed). */
int arc_const_lookup(const char *name);
tdm_arc_val *arc_const_value(int k);

#define ARC_X_DECL(name, arity) tdm_arc_val *arc_p_##name(tdm_arc_rt *rt, tdm_arc_val **a);
ARC_PRIM_LIST(ARC_X_DECL)
#undef ARC_X_DECL

/* ---- programs, step by step (program.c), for the batched executor (exec.c) ----------------------------- */
enum { ARC_STEP_VAR, ARC_STEP_PRIM, ARC_STEP_CONST, ARC_STEP_INPUT };
typedef struct {
    int n, nslots, result; /* lines, variables, the returned variable */
} arc_prog_info;
typedef struct {
    int callee_kind, callee; /* ARC_STEP_VAR (slot) or ARC_STEP_PRIM (primitive id) */
    int nargs, target, line;
    int arg_kind[4], arg[4]; /* ARC_STEP_*: slot, primitive id, constant index (arc_const_value), input */
    const char *text;        /* the line as written, owned by the programs */
    int lazy;                /* the interpreter lets the call return a deferred concatenation (cat.c) */
    int grid;                /* ... and a grid of bytes (the executor does not: its calls are its own) */
    int only;                /* the interpreter runs this objects or colorfilter line for one colour's objects
                                (arc_objects_of_fn): that colour, else -1 (the executor runs the line as written) */
} arc_step;
/* The shape of program k: 0, or -1 when k is out of range. */
int arc_prog_view(const tdm_arc_programs *p, size_t k, arc_prog_info *out);
/* Line i (0 <= i < n) of program k. */
void arc_prog_step(const tdm_arc_programs *p, size_t k, int i, arc_step *out);
/* tdm_arc_program_run, whose result may be left a grid of bytes (arc_grid_is_lazy) when bytes_out: for a
 * caller that reads it only through arc_grid_view (batch.c). */
int arc_program_run(tdm_arc_rt *rt, const tdm_arc_programs *p, size_t k, const tdm_arc_val *grid,
                    const tdm_arc_val **out, int bytes_out);
/* After a failed call on a line: rewrites rt's error as tdm_arc_program_run reports it ("line N: text:
 * why") and returns its status (TDM_E_ARC_RAISE or TDM_E_NOMEM), also set as the thread's last error. */
int arc_prog_fail(tdm_arc_rt *rt, int line, const char *text);
typedef struct arc_cells_slab arc_cells_slab;
/* A batch's per-primitive statistics (zeroed when made). */
typedef struct {
    tdm_arc_prim_stats stats[ARC_NPRIM];
    tdm_arc_exec_stats exec[ARC_NPRIM]; /* the executor's split by backend (zeros for tdm_arc_batch_run) */
} arc_batch_counts;
/* A batch's results and statistics (batch.c's runner and exec.c's executor fill it). */
struct tdm_arc_batch {
    tdm_arc_result *res;
    size_t n;
    arc_batch_counts *counts; /* NULL when none were kept (their accessors give zeros): 9 KB a batch to clear */
    const char *backend;      /* where batched primitives ran: "cpu" or the device's name */
    double seconds;
    int threads;
    arc_cells_slab *slabs; /* tdm_arc_batch_run: the blocks that hold every result's cells (batch.c) */
};
/* Whether grid ref g is well formed: sizes not negative, cells present unless it has none. */
static inline int arc_grid_ref_ok(const tdm_arc_grid_ref *g) { return g->h >= 0 && g->w >= 0 && (!g->h || !g->w || g->cells); }
/* TDM_OK when every call names one of p's programs and a well-formed grid, else TDM_E_INVAL with
 * "who: call C: ..." (who: the entry point). */
int arc_check_calls(const tdm_arc_programs *p, const tdm_arc_call_ref *calls, size_t n, const char *who);
/* A batch of n zeroed results (backend "cpu"), with zeroed counts when counts is not 0; NULL when out of
 * memory. */
tdm_arc_batch *arc_batch_alloc(size_t n, int counts);
/* Copies a program's result into r as tdm_arc_batch_run gives it (cells of a grid of ints, else repr):
 * 0, or -1 when memory ran out (r->status says TDM_E_NOMEM when laying out a lazy set failed). The cells
 * come from *slab's blocks (which the caller gives the batch) when slab is not NULL, else from tdm_malloc. */
int arc_result_fill(tdm_arc_rt *rt, const tdm_arc_val *out, tdm_arc_result *r, arc_cells_slab **slab);
/* Sets r to a failed call's status and rt's (or the thread's last) error: 0, or -1 out of memory. */
int arc_result_error(tdm_arc_rt *rt, int status, tdm_arc_result *r);

/* Shorthand for propagating failures inside primitives. */
#define ARC_TRY(x)                                                                                         \
    do {                                                                                                   \
        if (!(x)) return NULL;                                                                             \
    } while (0)
#define ARC_TRYI(x)                                                                                        \
    do {                                                                                                   \
        if ((x) < 0) return NULL;                                                                          \
    } while (0)

#endif
