/* prim_func.c: function values and the higher-order primitives (spec §1.8, §3.3): calling a function
 * value with CPython's arity rule, the closures built by compose, chain, matcher, fork, rbind and lbind
 * (rbind/lbind read the bound function's arity as the reference reads co_argcount), power, and the
 * mapping primitives with their type-preserving rebuilds (mapply's set and merge deferred when the results'
 * contents are known: bits.c). Calls nest like Python frames, so the nesting
 * is bounded as CPython's recursion limit bounds it. */
#define _POSIX_C_SOURCE 200809L
#include "arc_internal.h"

#include <string.h>
#include <time.h>

/* CPython's default recursion limit is 1000 frames; a solver runs a few frames below the top. */
#define ARC_MAX_DEPTH 990

static tdm_arc_val *call_frame(tdm_arc_rt *rt, tdm_arc_val *fn, int argc, tdm_arc_val **args);
static tdm_arc_val *call_frame_lazy(tdm_arc_rt *rt, tdm_arc_val *fn, int argc, tdm_arc_val **args);

/* fn(args) as call() makes it (lazy: its lazy form), a primitive of that arity called here without
 * call()'s frame (most calls: the inner and outer primitives of closures, the lines of a program): the
 * same checks, depth and out-of-memory rule; anything else (a closure, a wrong arity, the recursion limit,
 * statistics) through call_frame or call_frame_lazy. */
static inline __attribute__((always_inline)) tdm_arc_val *callp_as(tdm_arc_rt *rt, tdm_arc_val *fn, int argc,
                                                                   tdm_arc_val **args, const int lazy) {
    if (arc_is_func(fn) && fn->fkind == ARC_FN_PRIM && argc == fn->arity && !rt->stats && rt->depth < ARC_MAX_DEPTH) {
        rt->depth++;
        tdm_arc_val *r = arc_offered(rt, arc_prim_table_fn(fn->u.fn.prim), args, lazy);
        rt->depth--;
        return r && rt->failed && rt->status == TDM_E_NOMEM ? NULL : r;
    }
    return lazy ? call_frame_lazy(rt, fn, argc, args) : call_frame(rt, fn, argc, args);
}
static inline __attribute__((always_inline)) tdm_arc_val *callp(tdm_arc_rt *rt, tdm_arc_val *fn, int argc, tdm_arc_val **args) {
    return callp_as(rt, fn, argc, args, 0);
}

/* A closure's last call, lazy as the closure's own (a constant below). */
static inline tdm_arc_val *tail(tdm_arc_rt *rt, tdm_arc_val *fn, int argc, tdm_arc_val **args, int lazy) {
    return lazy ? arc_call_ex(rt, fn, argc, args, 1) : callp(rt, fn, argc, args);
}
static inline tdm_arc_val *call1(tdm_arc_rt *rt, tdm_arc_val *fn, tdm_arc_val *x, int lazy) { return tail(rt, fn, 1, &x, lazy); }

/* Whether calls that would begin `frames` frames below this one may be left unmade for a result known
 * without them: they could not fail (the recursion limit not reached), and neither statistics nor the eager
 * runtime (the tests' reference), which make every call, is on. */
static inline int calls_skippable(const tdm_arc_rt *rt, int frames) {
    return arc_defer(rt) && !rt->stats && rt->depth + frames < ARC_MAX_DEPTH;
}

/* fn(x) for fn the primitive first or last and x a listed, non-empty tuple: what the call gives, without
 * making it (fork(f, first, last) and compose(g, first) over pairs are a solver's commonest closures).
 * NULL when not such a call, when the call would count (statistics) or fail (recursion depth), and in an
 * eager runtime (the tests' reference makes every call). */
static inline tdm_arc_val *pick(const tdm_arc_rt *rt, const tdm_arc_val *fn, const tdm_arc_val *x) {
    if (!arc_is_func(fn) || fn->fkind != ARC_FN_PRIM || !arc_is_tuple(x) || !x->n || arc_tuple_is_lazy(x) ||
        !calls_skippable(rt, 0))
        return NULL;
    return fn->u.fn.prim == ARC_P_first ? x->u.items[0] : fn->u.fn.prim == ARC_P_last ? x->u.items[x->n - 1] : NULL;
}

static __attribute__((noinline)) tdm_arc_val *kept(tdm_arc_rt *rt, tdm_arc_val *fn, tdm_arc_val *x);

/* arc_call1 of a closure's inner function: first and last of a tuple read in place (pick), a marked
 * closure's result kept (kept). */
static inline __attribute__((always_inline)) tdm_arc_val *inner1(tdm_arc_rt *rt, tdm_arc_val *fn, tdm_arc_val *x) {
    if (arc_is_closure(fn) && fn->n & 1) return kept(rt, fn, x);
    tdm_arc_val *r = pick(rt, fn, x);
    return r ? r : callp(rt, fn, 1, &x);
}

/* A call (arc_call's, through callp and call_frame) and its lazy form (arc_call_ex's), one body: lazy is
 * a constant in each, so a plain call pays nothing for it. */
static inline __attribute__((always_inline)) tdm_arc_val *call(tdm_arc_rt *rt, tdm_arc_val *fn, int argc,
                                                               tdm_arc_val **args, const int lazy) {
    if (!arc_is_func(fn)) return arc_fail(rt, "'%s' object is not callable", arc_type_name(fn));
    if (argc != fn->arity) {
        if (fn->fkind == ARC_FN_PRIM)
            return arc_fail(rt, "%s() takes %d positional arguments but %d were given", tdm_arc_prim_name(fn->u.fn.prim),
                            fn->arity, argc);
        return arc_fail(rt, "<lambda>() takes %d positional arguments but %d were given", fn->arity, argc);
    }
    if (rt->depth >= ARC_MAX_DEPTH) return arc_fail(rt, "maximum recursion depth exceeded");
    rt->depth++;
    tdm_arc_val *r = NULL, **cap = fn->u.fn.cap, *t, *u, *buf[4];
    switch (fn->fkind) {
    case ARC_FN_PRIM:
        if (rt->stats) {
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            r = arc_offered(rt, arc_prim_table_fn(fn->u.fn.prim), args, lazy);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            rt->stats[fn->u.fn.prim].calls++;
            rt->stats[fn->u.fn.prim].ns += (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec));
        } else {
            r = arc_offered(rt, arc_prim_table_fn(fn->u.fn.prim), args, lazy);
        }
        break;
    case ARC_FN_COMPOSE:
        if ((t = inner1(rt, cap[1], args[0]))) r = call1(rt, cap[0], t, lazy);
        break;
    case ARC_FN_CHAIN:
        if ((t = inner1(rt, cap[2], args[0])) && (u = inner1(rt, cap[1], t))) r = call1(rt, cap[0], u, lazy);
        break;
    case ARC_FN_MATCHER:
        if ((t = inner1(rt, cap[0], args[0]))) r = arc_bool(arc_eq(t, cap[1]));
        break;
    case ARC_FN_FORK:
        if ((t = inner1(rt, cap[1], args[0])) && (u = inner1(rt, cap[2], args[0])))
            buf[0] = t, buf[1] = u, r = tail(rt, cap[0], 2, buf, lazy);
        break;
    case ARC_FN_RBIND:
        for (int k = 0; k < argc; k++) buf[k] = args[k];
        buf[argc] = cap[1];
        r = tail(rt, cap[0], argc + 1, buf, lazy);
        break;
    case ARC_FN_LBIND:
        buf[0] = cap[1];
        for (int k = 0; k < argc; k++) buf[k + 1] = args[k];
        r = tail(rt, cap[0], argc + 1, buf, lazy);
        break;
    }
    rt->depth--;
    /* a lazy set that could not be laid out (no memory) inside a primitive that cannot fail reads as empty:
       the error stands, so the call fails rather than return a value built from it */
    if (r && rt->failed && rt->status == TDM_E_NOMEM) r = NULL;
    return r;
}

/* A marked closure's call from a closure (inner1): the result kept (rt->memo) and given again for the same
 * argument (a twin of a set the call made, as the reference's second call makes a second set; a result
 * holding one inside is not kept: arc_fresh_sets), when making it made no closure (serial numbers are
 * hashes: the reference makes them again) and raised nothing, and the call now begins no deeper than the
 * kept one did (so the call again would stay within the depths the kept one reached, and could not hit the
 * recursion limit where it did not). The eager runtime (the tests' reference) and statistics make every
 * call. */
static tdm_arc_val *kept(tdm_arc_rt *rt, tdm_arc_val *fn, tdm_arc_val *x) {
    if (!arc_defer(rt) || rt->stats) return arc_call1(rt, fn, x);
    if (!rt->memo) { /* in the arena, made on first use: reset forgets it with the results it holds */
        if (!(rt->memo = arc_alloc(rt, ARC_MEMO_N * sizeof *rt->memo))) return NULL;
        memset(rt->memo, 0, ARC_MEMO_N * sizeof *rt->memo);
    }
    struct arc_memo *m = &rt->memo[((uintptr_t)fn ^ (uintptr_t)x * 31) / sizeof(tdm_arc_val) % ARC_MEMO_N];
    if (m->fn == fn && m->arg == x && rt->depth <= m->depth) return arc_given_again(rt, m->fresh, m->r);
    int serial = rt->serial, depth = rt->depth, fresh;
    arc_at at = arc_at_now(rt);
    tdm_arc_val *r = arc_call1(rt, fn, x);
    if (r && !rt->failed && rt->serial == serial && (fresh = arc_fresh_sets(rt, at, r)) != ARC_FRESH_HELD)
        m->fn = fn, m->arg = x, m->r = r, m->depth = depth, m->fresh = fresh;
    return r;
}

/* call() in a frame of its own (its closures' cases save many registers), for what callp does not take. */
static __attribute__((noinline)) tdm_arc_val *call_frame(tdm_arc_rt *rt, tdm_arc_val *fn, int argc, tdm_arc_val **args) {
    return call(rt, fn, argc, args, 0);
}

/* call(..., 1) in a frame of its own, for what callp_as's lazy form does not take. */
static __attribute__((noinline)) tdm_arc_val *call_frame_lazy(tdm_arc_rt *rt, tdm_arc_val *fn, int argc, tdm_arc_val **args) {
    return call(rt, fn, argc, args, 1);
}

tdm_arc_val *arc_call_ex(tdm_arc_rt *rt, tdm_arc_val *fn, int argc, tdm_arc_val **args, int lazy) {
    return lazy ? callp_as(rt, fn, argc, args, 1) : callp_as(rt, fn, argc, args, 0);
}

void tdm_arc_rt_stats_enable(tdm_arc_rt *rt, int on) {
    if (!rt) return;
    if (!on) {
        tdm_free(rt->stats);
        rt->stats = NULL;
        return;
    }
    if (!rt->stats) rt->stats = tdm_calloc(ARC_NPRIM, sizeof *rt->stats); /* no memory: statistics stay off */
    else memset(rt->stats, 0, ARC_NPRIM * sizeof *rt->stats);
}

tdm_arc_prim_stats tdm_arc_rt_prim_stats(const tdm_arc_rt *rt, int id) {
    tdm_arc_prim_stats z = {0, 0};
    if (!rt || !rt->stats || id < 0 || id >= ARC_NPRIM) return z;
    return rt->stats[id];
}

tdm_arc_val *arc_call(tdm_arc_rt *rt, tdm_arc_val *fn, int argc, tdm_arc_val **args) { return callp(rt, fn, argc, args); }

tdm_arc_val *arc_call1(tdm_arc_rt *rt, tdm_arc_val *fn, tdm_arc_val *x) { return arc_call(rt, fn, 1, &x); }

tdm_arc_val *arc_call2(tdm_arc_rt *rt, tdm_arc_val *fn, tdm_arc_val *x, tdm_arc_val *y) {
    tdm_arc_val *a[2] = {x, y};
    return arc_call(rt, fn, 2, a);
}

/* ---- a closure over many arguments: a column a node ------------------------------------------------------ */

/* arc_call_column's walk. A node (f, called at depth d, as call() would be) computes out[k] = f(x[k]) for
 * all k before its parent reads them, where call() computes a whole call per argument; the calls made are
 * the same, at the same depths, but for two savings that give equal values: a one-argument primitive is
 * not called again on the argument it was just given (a 16-entry table by address), and a marked closure
 * (kept()) called on one column at one depth twice gives its first column when computing it made no closure.
 * Both give a set the call made as a twin (arc_set_twin), and never a tuple holding one (arc_fresh_sets).
 * Returns 0, or 1 when a call raised or ran out of memory (the caller puts the runtime back). */
typedef struct {
    tdm_arc_rt *rt;
    struct col_kept { const tdm_arc_val *fn; tdm_arc_val **x, **out; int d; arc_at at; } kept[4], prim[8];
    int nkept, nprim; /* kept: marked closures' results; prim: box primitives' (remade), which the branches
                         of a fork often make again on one column (the composes of 0962bcdd) */
} col_walk;

static int column(col_walk *w, tdm_arc_val *f, uint32_t n, tdm_arc_val **x, tdm_arc_val **out, int d, int lazy);

/* g(a[k * sa], b[k * sb]) into out, each called at depth d as a closure's last call (tail): stride 0 for a
 * bound constant. A primitive of two arguments is called directly (callp's checks hold for all or none). */
static int column2(col_walk *w, tdm_arc_val *g, uint32_t n, tdm_arc_val **a, int sa, tdm_arc_val **b, int sb,
                   tdm_arc_val **out, int d, int lazy) {
    tdm_arc_rt *rt = w->rt;
    int direct = arc_is_func(g) && g->fkind == ARC_FN_PRIM && g->arity == 2 && d < ARC_MAX_DEPTH;
    arc_prim_fn fn = direct ? arc_prim_table_fn(g->u.fn.prim) : NULL;
    if (direct && !lazy && g->u.fn.prim == ARC_P_manhattan && !sa != !sb) { /* lbind(manhattan, patch): its rows once */
        int r = arc_manhattan_column(rt, sa ? b[0] : a[0], !sa, n, sa ? a : b, out, d + 1);
        if (r <= 0) return r != 0;
    }
    for (uint32_t k = 0; k < n; k++) {
        tdm_arc_val *args[2] = {a[k * (uint32_t)sa], b[k * (uint32_t)sb]};
        if (direct) rt->depth = d + 1, out[k] = arc_offered(rt, fn, args, lazy);
        else rt->depth = d, out[k] = tail(rt, g, 2, args, lazy);
        if (!out[k] || rt->failed) return 1;
    }
    return 0;
}

/* f a primitive called on one argument at depth d, as inner1 calls it, or lazy as a closure's last call.
 * callp's and pick's checks on f and the runtime hold for all arguments or none: made once (column_prim
 * and arc_call_column), then first and last of a listed tuple are read in place (picks) and any other
 * primitive is called directly; look: not again on the argument it was just given (a 16-entry table by
 * address). One body, the flags constants in each of column_prim's calls (as call()'s lazy). */
static inline __attribute__((always_inline)) int prim_loop(tdm_arc_rt *rt, tdm_arc_val *f, uint32_t n, tdm_arc_val **x,
                                                           tdm_arc_val **out, int d, const int picks, const int look,
                                                           const int lazy) {
    int id = f->u.fn.prim;
    arc_prim_fn fn = arc_prim_table_fn(id);
    const tdm_arc_val *seen[16];
    tdm_arc_val *got[16];
    arc_at at = arc_at_now(rt); /* what the calls make is newer (arc_fresh_sets: given again as a twin) */
    unsigned h = 0;
    _Static_assert(sizeof seen == 128, "arc_zero128 clears seen");
    if (look) arc_zero128(seen);
    for (uint32_t k = 0; k < n; k++) {
        tdm_arc_val *v = x[k], *r;
        if (picks && arc_is_tuple(v) && v->n && !arc_tuple_is_lazy(v)) {
            out[k] = v->u.items[id == ARC_P_first ? 0 : v->n - 1];
            continue;
        }
        if (look && seen[h = (unsigned)((uintptr_t)v >> 4 ^ (uintptr_t)v >> 8) & 15] == v) {
            int fresh = arc_fresh_sets(rt, at, got[h]);
            if (fresh != ARC_FRESH_HELD) {
                if (!(out[k] = arc_given_again(rt, fresh, got[h]))) return 1;
                continue;
            }
        }
        rt->depth = d + 1, r = arc_offered(rt, fn, &v, lazy);
        if (!r || rt->failed) return 1;
        if (look) seen[h] = v, got[h] = r;
        out[k] = r;
    }
    return 0;
}

static int column_prim(col_walk *w, tdm_arc_val *f, uint32_t n, tdm_arc_val **x, tdm_arc_val **out, int d, int lazy) {
    if (f->arity != 1 || d >= ARC_MAX_DEPTH) return 1; /* the call raises: the caller's path says what */
    if (lazy) return prim_loop(w->rt, f, n, x, out, d, 0, 0, 1);
    if (f->u.fn.prim == ARC_P_first || f->u.fn.prim == ARC_P_last) return prim_loop(w->rt, f, n, x, out, d, 1, 0, 0);
    return n >= 8 ? prim_loop(w->rt, f, n, x, out, d, 0, 1, 0) : prim_loop(w->rt, f, n, x, out, d, 0, 0, 0);
}

/* The primitives whose results a walk keeps for another call on the same column: those that make a set
 * of the patch's box (a check costs more than most primitives' calls). */
static int remade(int id) {
    return id == ARC_P_outbox || id == ARC_P_inbox || id == ARC_P_box || id == ARC_P_backdrop || id == ARC_P_delta ||
           id == ARC_P_corners || id == ARC_P_toindices || id == ARC_P_normalize;
}

/* The results of f over column x kept in this walk (kept[0..nk)), made at depth d or deeper, given again
 * into out (arc_fresh_sets: a set the calls made as its twin): 0 done, 1 not kept (or a result holds a set
 * the calls made, which the calls again must make anew), -1 out of memory. */
static int given_again(tdm_arc_rt *rt, const struct col_kept *kept, int nk, const tdm_arc_val *f, uint32_t n,
                       tdm_arc_val **x, tdm_arc_val **out, int d) {
    for (int i = 0; i < nk; i++)
        if (kept[i].fn == f && kept[i].x == x && kept[i].d >= d) {
            uint32_t k = 0;
            for (int fresh; k < n && (fresh = arc_fresh_sets(rt, kept[i].at, kept[i].out[k])) != ARC_FRESH_HELD; k++)
                if (!(out[k] = arc_given_again(rt, fresh, kept[i].out[k]))) return -1;
            return k == n ? 0 : 1;
        }
    return 1;
}

static int column(col_walk *w, tdm_arc_val *f, uint32_t n, tdm_arc_val **x, tdm_arc_val **out, int d, int lazy) {
    tdm_arc_rt *rt = w->rt;
    if (!arc_is_func(f)) return 1;
    if (f->fkind == ARC_FN_PRIM) {
        if (!remade(f->u.fn.prim)) return column_prim(w, f, n, x, out, d, lazy);
        /* a box primitive's column again: its results again */
        if (d >= ARC_MAX_DEPTH) return 1; /* the call raises: the caller's path says what */
        int serial = rt->serial, again;
        arc_at at = arc_at_now(rt);
        if ((again = given_again(rt, w->prim, w->nprim < 8 ? w->nprim : 8, f, n, x, out, d)) <= 0) return again < 0;
        if (column_prim(w, f, n, x, out, d, lazy)) return 1;
        if (!lazy && rt->serial == serial) w->prim[w->nprim++ & 7] = (struct col_kept){f, x, out, d, at};
        return 0;
    }
    if (f->arity != 1 || d >= ARC_MAX_DEPTH) return 1;
    int marked = f->n & 1, serial = rt->serial;
    arc_at at = arc_at_now(rt);
    if (marked)
        for (int i = 0; i < w->nkept && i < 4; i++)
            if (w->kept[i].fn == f && w->kept[i].x == x && w->kept[i].d >= d) {
                uint32_t k = 0;
                for (int fresh; k < n && (fresh = arc_fresh_sets(rt, w->kept[i].at, w->kept[i].out[k])) != ARC_FRESH_HELD; k++)
                    if (!(out[k] = arc_given_again(rt, fresh, w->kept[i].out[k]))) return 1;
                if (k == n) return 0;
                break; /* a tuple holding a set the call made: the calls again */
            }
    tdm_arc_val **cap = f->u.fn.cap, **t = NULL, **u = NULL;
    int kind = f->fkind, two = kind == ARC_FN_CHAIN || kind == ARC_FN_FORK;
    if (kind != ARC_FN_RBIND && kind != ARC_FN_LBIND && !(t = arc_alloc(rt, (size_t)n * sizeof *t))) return 1;
    if (two && !(u = arc_alloc(rt, (size_t)n * sizeof *u))) return 1;
    switch (kind) {
    case ARC_FN_COMPOSE:
        if (column(w, cap[1], n, x, t, d + 1, 0) || column(w, cap[0], n, t, out, d + 1, lazy)) return 1;
        break;
    case ARC_FN_CHAIN:
        if (column(w, cap[2], n, x, t, d + 1, 0) || column(w, cap[1], n, t, u, d + 1, 0) ||
            column(w, cap[0], n, u, out, d + 1, lazy))
            return 1;
        break;
    case ARC_FN_MATCHER:
        if (column(w, cap[0], n, x, t, d + 1, 0)) return 1;
        for (uint32_t k = 0; k < n; k++) out[k] = arc_bool(arc_eq(t[k], cap[1]));
        break;
    case ARC_FN_FORK:
        if (column(w, cap[1], n, x, t, d + 1, 0) || column(w, cap[2], n, x, u, d + 1, 0) ||
            column2(w, cap[0], n, t, 1, u, 1, out, d + 1, lazy))
            return 1;
        break;
    case ARC_FN_RBIND:
        if (column2(w, cap[0], n, x, 1, &cap[1], 0, out, d + 1, lazy)) return 1;
        break;
    case ARC_FN_LBIND:
        if (column2(w, cap[0], n, &cap[1], 0, x, 1, out, d + 1, lazy)) return 1;
        break;
    default: return 1;
    }
    if (marked && rt->serial == serial) w->kept[w->nkept++ & 3] = (struct col_kept){f, x, out, d, at};
    return 0;
}

int arc_call_column(tdm_arc_rt *rt, tdm_arc_val *f, uint32_t n, tdm_arc_val **x, tdm_arc_val **out, int lazy) {
    if (!arc_defer(rt) || rt->stats || n < 2 || !arc_is_closure(f)) return 0;
    col_walk w; /* the tables are read only below their counts */
    w.rt = rt, w.nkept = w.nprim = 0;
    arc_mark mk = arc_mark_of(rt);
    int bad = column(&w, f, n, x, out, rt->depth, lazy);
    rt->depth = mk.depth;
    for (uint32_t k = 0; !bad && rt->serial != mk.serial && k < n; k++) bad = arc_holds_function(out[k]);
    if (bad || rt->failed) return arc_put_back(rt, mk) ? -1 : 0;
    rt->columns++;
    return 1;
}

static int reads_first(const tdm_arc_val *f, int depth) {
    if (!arc_is_func(f) || f->arity != 1 || depth > 16) return 0;
    tdm_arc_val *const *cap = f->u.fn.cap;
    switch (f->fkind) {
    case ARC_FN_PRIM: return f->u.fn.prim == ARC_P_first;
    case ARC_FN_COMPOSE: return reads_first(cap[1], depth + 1);
    case ARC_FN_CHAIN: return reads_first(cap[2], depth + 1);
    case ARC_FN_MATCHER: return reads_first(cap[0], depth + 1);
    case ARC_FN_FORK: return reads_first(cap[1], depth + 1) && reads_first(cap[2], depth + 1);
    default: return 0;
    }
}

int arc_fn_reads_first(const tdm_arc_val *f) { return reads_first(f, 0); }

/* ---- builders ------------------------------------------------------------------------------------------ */

tdm_arc_val *arc_p_branch(tdm_arc_rt *rt, tdm_arc_val **a) { return arc_truthy(a[0]) ? a[1] : a[2]; }
tdm_arc_val *arc_p_compose(tdm_arc_rt *rt, tdm_arc_val **a) { return arc_closure(rt, ARC_FN_COMPOSE, 1, a[0], a[1], NULL); }
tdm_arc_val *arc_p_chain(tdm_arc_rt *rt, tdm_arc_val **a) { return arc_closure(rt, ARC_FN_CHAIN, 1, a[0], a[1], a[2]); }
tdm_arc_val *arc_p_matcher(tdm_arc_rt *rt, tdm_arc_val **a) { return arc_closure(rt, ARC_FN_MATCHER, 1, a[0], a[1], NULL); }
/* Walks the closures that closure g reaches through compose, chain, fork, matcher and the binds, g
 * included, each once: mark 0 stamps them with stamp; mark 1 marks those stamped so (bit 0) and stamps
 * them with stamp + 1. n of a closure: its last stamp << 1 | marked. */
static void reach(tdm_arc_val *g, uint32_t stamp, int mark) {
    uint32_t seen = g->n >> 1; /* closures are made in the arena, and n is these walks' alone */
    if (seen == stamp + (uint32_t)mark) return; /* walked already (the closures form a DAG) */
    if (mark && seen == stamp) g->n |= 1;
    g->n = (stamp + (uint32_t)mark) << 1 | (g->n & 1);
    for (int k = 0; k < 3; k++)
        if (arc_is_closure(g->u.fn.cap[k])) reach(g->u.fn.cap[k], stamp, mark);
}

/* fork(outer, a, b): a closure that both a and b reach is called on the same value twice per call (x14 in
 * fork(mapply, compose(.., fork(shift, identity, chain(invert, ulcorner, x14))), chain(.., normalize,
 * x14))); it is marked so that its results are kept (kept()). A mark only saves work: any closure's result
 * could be kept. */
tdm_arc_val *arc_p_fork(tdm_arc_rt *rt, tdm_arc_val **a) {
    if (arc_is_closure(a[1]) && arc_is_closure(a[2])) {
        rt->fork_stamp = (rt->fork_stamp + 2) & 0x7ffffffe; /* stamp and stamp + 1 are this walk's */
        reach(a[1], rt->fork_stamp, 0), reach(a[2], rt->fork_stamp, 1);
    }
    return arc_closure(rt, ARC_FN_FORK, 1, a[0], a[1], a[2]);
}

static tdm_arc_val *bind(tdm_arc_rt *rt, int kind, tdm_arc_val **a) {
    if (!arc_is_func(a[0]))
        return arc_fail(rt, "%s: '%s' object has no attribute '__code__'", kind == ARC_FN_RBIND ? "rbind" : "lbind",
                        arc_type_name(a[0]));
    int n = a[0]->arity, arity = n == 2 ? 1 : n == 3 ? 2 : 3;
    return arc_closure(rt, kind, arity, a[0], a[1], NULL);
}

tdm_arc_val *arc_p_rbind(tdm_arc_rt *rt, tdm_arc_val **a) { return bind(rt, ARC_FN_RBIND, a); }
tdm_arc_val *arc_p_lbind(tdm_arc_rt *rt, tdm_arc_val **a) { return bind(rt, ARC_FN_LBIND, a); }

tdm_arc_val *arc_p_power(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t n;
    if (arc_is_int(a[1]) && a[1]->u.i == 1) return a[0];
    ARC_TRYI(arc_get_int(rt, a[1], &n, "power"));
    /* n <= 0 recurses forever in the reference; n near 1000 exceeds CPython's recursion limit. */
    if (n <= 0 || n >= 1000) return arc_fail(rt, "power: maximum recursion depth exceeded (n = %lld)", (long long)n);
    tdm_arc_val *r = a[0];
    for (int64_t k = 1; k < n; k++) ARC_TRY(r = arc_closure(rt, ARC_FN_COMPOSE, 1, a[0], r, NULL));
    return r;
}

/* ---- mapping ------------------------------------------------------------------------------------------ */

static int is_prim(const tdm_arc_val *f, int id) { return arc_is_func(f) && f->fkind == ARC_FN_PRIM && f->u.fn.prim == id; }

/* apply(mostcommon | leastcommon, g) for g a grid of colours: each row counted from g's bytes, no call per
 * row (statistics and the eager runtime make the calls). NULL when not such a call, -1 in *r out of memory. */
static tdm_arc_val *rows_common(tdm_arc_rt *rt, tdm_arc_val **a, int *r) {
    int most = is_prim(a[0], ARC_P_mostcommon);
    arc_gview v;
    *r = 0;
    if ((!most && !is_prim(a[0], ARC_P_leastcommon)) || !arc_is_tuple(a[1]) || !calls_skippable(rt, 1) ||
        (*r = arc_grid_view(rt, a[1], &v)) <= 0)
        return NULL;
    tdm_arc_val *t = arc_rows_common(rt, &v, most);
    if (!t) *r = -1;
    return t;
}

tdm_arc_val *arc_p_apply(tdm_arc_rt *rt, tdm_arc_val **a) {
    int deferred, r;
    tdm_arc_val *rows = rows_common(rt, a, &r);
    ARC_TRYI(r);
    if (rows) return rows;
    if (arc_grid_is_lazy(a[1])) ARC_TRYI(arc_grid_force(rt, a[1])); /* the interpreter let one come for rows_common */
    tdm_arc_val *d = arc_map_members(rt, a[0], a[1], &deferred); /* over objects(): no layout (image.c) */
    if (d || deferred) return d;
    arc_list l;
    ARC_TRYI(arc_elems(rt, a[1], &l, "apply"));
    tdm_arc_val **out = arc_alloc(rt, (size_t)(l.n ? l.n : 1) * sizeof *out);
    ARC_TRY(out);
    int col = arc_call_column(rt, a[0], l.n, l.v, out, 0);
    ARC_TRYI(col);
    for (uint32_t k = 0; !col && k < l.n; k++) ARC_TRY(out[k] = arc_call1(rt, a[0], l.v[k]));
    return arc_rebuild(rt, a[1], out, l.n);
}

tdm_arc_val *arc_p_rapply(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_list l;
    ARC_TRYI(arc_elems(rt, a[0], &l, "rapply"));
    tdm_arc_val **out = arc_alloc(rt, (size_t)(l.n ? l.n : 1) * sizeof *out);
    ARC_TRY(out);
    for (uint32_t k = 0; k < l.n; k++) ARC_TRY(out[k] = arc_call1(rt, l.v[k], a[1]));
    return arc_rebuild(rt, a[0], out, l.n);
}

/* mapply's layout, deferred: the set apply would have made from the results (a[1], a tuple, in the
 * order f was called), merged. */
static tdm_arc_val *mapply_recipe(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val *applied = arc_rebuild(rt, a[0], a[1]->u.items, a[1]->n);
    ARC_TRY(applied);
    return arc_merge_eager(rt, &applied);
}

/* mapply's layout when f was called on the members of a[0] (a[1], a tuple) giving a[2] (a tuple): apply's set
 * from the results in a[0]'s CPython order, merged. */
static tdm_arc_val *mapply_members_recipe(tdm_arc_rt *rt, tdm_arc_val **a) {
    tdm_arc_val **out = arc_alloc(rt, (size_t)(a[1]->n ? a[1]->n : 1) * sizeof *out);
    ARC_TRY(out);
    int n = arc_images_in_order(rt, a[0], a[1]->u.items, a[2]->u.items, a[1]->n, out);
    ARC_TRYI(n);
    tdm_arc_val *applied = arc_set_from(rt, out, (uint32_t)n);
    ARC_TRY(applied);
    return arc_merge_eager(rt, &applied);
}

/* Over objects() (a set that lists its members): f called on the members, in their order (image.c says when
 * that is the same as CPython's), the results' union deferred as below. *done 0: the ordered path. */
static tdm_arc_val *mapply_members(tdm_arc_rt *rt, tdm_arc_val **a, int *done) {
    tdm_arc_val **m, **img, *args[3];
    arc_mark mk;
    arc_bits b;
    int r = arc_call_members(rt, a[0], a[1], &m, &img, &mk, 1);
    *done = r != 0;
    if (r <= 0) return NULL;
    uint32_t n = a[1]->n;
    tdm_arc_val *mt = arc_tuple(rt, n), *it = arc_tuple(rt, n);
    ARC_TRY(mt && it);
    memcpy(mt->u.items, m, n * sizeof *m), memcpy(it->u.items, img, n * sizeof *img);
    args[0] = a[1], args[1] = mt, args[2] = it;
    ARC_TRYI(arc_bits_init_wide(rt, &b));
    int fits = 1;
    for (uint32_t k = 0; k < n && fits; k++) ARC_TRYI(fits = arc_bits_add(&b, img[k]));
    return fits ? arc_bits_set(rt, &b, mapply_members_recipe, args, 3) : mapply_members_recipe(rt, args);
}

/* The layout of mapply(rbind(shoot, d), s) (cells 0) or of mapply(fork(recolor, first, compose(rbind(shoot,
 * d), last)), s) (cells 1), a = {s, d}: the lines made as apply would make them, then as mapply_recipe
 * (shoot of a position, first and last of a cell and recolor of a line cannot raise, and are called here
 * without a frame: no recursion limit to meet). */
static tdm_arc_val *lines_recipe(tdm_arc_rt *rt, tdm_arc_val **a, int cells) {
    arc_list l;
    ARC_TRYI(arc_elems(rt, a[0], &l, "apply"));
    tdm_arc_val *out = arc_tuple(rt, l.n), *m[2] = {a[0], out};
    ARC_TRY(out);
    for (uint32_t k = 0; k < l.n; k++) {
        tdm_arc_val *sa[2] = {cells ? l.v[k]->u.items[1] : l.v[k], a[1]};
        ARC_TRY(out->u.items[k] = arc_p_shoot(rt, sa));
        if (cells) {
            tdm_arc_val *ra[2] = {l.v[k]->u.items[0], out->u.items[k]};
            ARC_TRY(out->u.items[k] = arc_p_recolor(rt, ra));
        }
    }
    return mapply_recipe(rt, m);
}
static tdm_arc_val *shoots_recipe(tdm_arc_rt *rt, tdm_arc_val **a) { return lines_recipe(rt, a, 0); }
static tdm_arc_val *cell_shoots_recipe(tdm_arc_rt *rt, tdm_arc_val **a) { return lines_recipe(rt, a, 1); }


/* d when f is rbind(shoot, d), else NULL. */
static tdm_arc_val *shoot_dir(const tdm_arc_val *f) {
    return arc_is_closure(f) && f->fkind == ARC_FN_RBIND && is_prim(f->u.fn.cap[0], ARC_P_shoot) ? f->u.fn.cap[1] : NULL;
}

/* mapply(rbind(shoot, d), s) over positions, and mapply(fork(recolor, first, compose(rbind(shoot, d), last)),
 * s) over cells (lines cast from cells, a common solver step): the lines' union (arc_shoot_union), with
 * no call made, when the calls could not fail: the recursion limit not near, and neither statistics nor
 * the eager runtime (they make every call). NULL with *done 0: not such. */
static tdm_arc_val *mapply_shoots(tdm_arc_rt *rt, tdm_arc_val **a, int *done) {
    tdm_arc_val *f = a[0], *d = shoot_dir(f);
    const tdm_arc_val *g = arc_is_closure(f) && f->fkind == ARC_FN_FORK ? f->u.fn.cap[2] : NULL;
    int cells = !d && g && is_prim(f->u.fn.cap[0], ARC_P_recolor) && is_prim(f->u.fn.cap[1], ARC_P_first) &&
                arc_is_closure(g) && g->fkind == ARC_FN_COMPOSE && is_prim(g->u.fn.cap[1], ARC_P_last) &&
                (d = shoot_dir(g->u.fn.cap[0]));
    arc_bits b;
    *done = 0;
    /* the calls go three frames deep (test_prim_calls_depth holds both forms to a runtime that makes them) */
    if (!d || !calls_skippable(rt, 3)) return NULL;
    int r = arc_shoot_union(rt, a[1], d, cells, &b);
    if (r <= 0) return *done = r < 0, NULL;
    *done = 1;
    tdm_arc_val *args[2] = {a[1], d};
    return arc_bits_set(rt, &b, cells ? cell_shoots_recipe : shoots_recipe, args, 2);
}

/* The layout of mapply(f, s) for f one of the neighbourhood primitives, a = {s, f}: the calls made in s's
 * order as apply makes them (on a position none can raise), then as mapply_recipe. */
static tdm_arc_val *neighbours_recipe(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_list l;
    ARC_TRYI(arc_elems(rt, a[0], &l, "apply"));
    tdm_arc_val *out = arc_tuple(rt, l.n), *m[2] = {a[0], out};
    ARC_TRY(out);
    arc_prim_fn f = arc_prim_table_fn(a[1]->u.fn.prim);
    for (uint32_t k = 0; k < l.n; k++) ARC_TRY(out->u.items[k] = f(rt, &l.v[k]));
    return mapply_recipe(rt, m);
}

/* mapply(dneighbors, s), mapply(ineighbors, s) and mapply(neighbors, s) over positions: the neighbourhoods'
 * union (arc_neighbours_union) with no call made, when the calls could not fail (as mapply_shoots). NULL
 * with *done 0: not such. */
static tdm_arc_val *mapply_neighbours(tdm_arc_rt *rt, tdm_arc_val **a, int *done) {
    tdm_arc_val *f = a[0];
    int which = is_prim(f, ARC_P_dneighbors) ? 1 : is_prim(f, ARC_P_ineighbors) ? 2 : is_prim(f, ARC_P_neighbors) ? 3 : 0;
    arc_bits b;
    *done = 0;
    if (!which || !calls_skippable(rt, 3)) return NULL;
    int r = arc_neighbours_union(rt, a[1], which, &b);
    if (r <= 0) return *done = r < 0, NULL;
    *done = 1;
    tdm_arc_val *args[2] = {a[1], f};
    return arc_bits_set(rt, &b, neighbours_recipe, args, 2);
}

tdm_arc_val *arc_p_mapply(tdm_arc_rt *rt, tdm_arc_val **a) {
    int done, lazy = arc_take_lazy(rt, a);
    tdm_arc_val *r = mapply_shoots(rt, a, &done);
    if (r || done) return r;
    r = mapply_neighbours(rt, a, &done);
    if (r || done) return r;
    r = mapply_members(rt, a, &done);
    if (r || done) return r;
    if (!arc_defer(rt) || !arc_is_set(a[1]) || !a[1]->n) {
        tdm_arc_val *applied = arc_p_apply(rt, a);
        ARC_TRY(applied);
        return arc_merge(rt, &applied, lazy); /* over a tuple: a deferred concatenation when the caller allows */
    }
    /* f called on the elements in order, as apply calls it; when every result's contents are known
       (arc_bits), their union is the value and neither apply's set nor the merge is built until read */
    arc_list l;
    arc_bits b;
    ARC_TRYI(arc_elems(rt, a[1], &l, "apply"));
    tdm_arc_val *out = arc_tuple(rt, l.n);
    ARC_TRY(out);
    ARC_TRYI(arc_bits_init_wide(rt, &b));
    int fits = 1, col = arc_call_column(rt, a[0], l.n, l.v, out->u.items, 1);
    ARC_TRYI(col);
    for (uint32_t k = 0; k < l.n; k++) {
        /* lazy: the results are unioned (or rebuilt into apply's set, which lists them) */
        if (!col) ARC_TRY(out->u.items[k] = call1(rt, a[0], l.v[k], 1));
        if (fits) ARC_TRYI(fits = arc_bits_add(&b, out->u.items[k]));
    }
    tdm_arc_val *args[2] = {a[1], out};
    if (fits) return arc_bits_set(rt, &b, mapply_recipe, args, 2);
    return mapply_recipe(rt, args);
}

/* zip(a, b) mapped through function, as a tuple. */
tdm_arc_val *arc_p_papply(tdm_arc_rt *rt, tdm_arc_val **a) {
    arc_list la, lb;
    ARC_TRYI(arc_elems(rt, a[1], &la, "papply"));
    ARC_TRYI(arc_elems(rt, a[2], &lb, "papply"));
    uint32_t n = la.n < lb.n ? la.n : lb.n;
    tdm_arc_val *t = arc_tuple(rt, n);
    ARC_TRY(t);
    for (uint32_t k = 0; k < n; k++) ARC_TRY(t->u.items[k] = arc_call2(rt, a[0], la.v[k], lb.v[k]));
    return t;
}

tdm_arc_val *arc_p_mpapply(tdm_arc_rt *rt, tdm_arc_val **a) {
    int lazy = arc_take_lazy(rt, a);
    tdm_arc_val *p = arc_p_papply(rt, a);
    ARC_TRY(p);
    return arc_merge(rt, &p, lazy);
}

tdm_arc_val *arc_p_prapply(tdm_arc_rt *rt, tdm_arc_val **a) {
    /* connect over two sets of positions: the distinct lines, deferred (product.c), when the calls could not
       fail: each would begin a frame deeper, within the limit exactly when this one is below it
       (test_prim_calls_depth fails with no test here), and neither statistics nor the eager runtime is on */
    if (is_prim(a[0], ARC_P_connect) && calls_skippable(rt, 0)) {
        int done;
        tdm_arc_val *r = arc_connect_pairs(rt, a, &done);
        if (r || done) return r;
    }
    return arc_prapply_eager(rt, a, 0);
}

tdm_arc_val *arc_prapply_eager(tdm_arc_rt *rt, tdm_arc_val **a, int direct) {
    arc_list la, lb;
    ARC_TRYI(arc_elems(rt, a[1], &la, "prapply"));
    ARC_TRYI(arc_elems(rt, a[2], &lb, "prapply"));
    tdm_arc_val *s = arc_set_new(rt);
    ARC_TRY(s);
    for (uint32_t y = 0; y < lb.n; y++)
        for (uint32_t x = 0; x < la.n; x++) {
            tdm_arc_val *xy[2] = {la.v[x], lb.v[y]};
            tdm_arc_val *r = direct ? arc_prim_table_fn(a[0]->u.fn.prim)(rt, xy) : arc_call(rt, a[0], 2, xy);
            ARC_TRY(r);
            if (arc_set_add(rt, s, r)) return NULL;
        }
    return s;
}
