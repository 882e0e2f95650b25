/* program.c: the solver-program parser and interpreter (spec §5). A file holds straight-line functions
 * `def solve_<task>(I):` whose lines are `v = callee(arg, ...)` with variables, primitive names, the
 * constants of constants.py and I as arguments, ending in `return O`. Parsing resolves every name once
 * (slots for variables, ids for primitives and constants) and reports the file, line, column and token
 * of the first problem; running evaluates every line in order, as Python would (dead lines included),
 * and reports the line whose call raised. */
#include "arc_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>

enum { ARG_VAR, ARG_PRIM, ARG_CONST, ARG_INPUT };

typedef struct {
    uint8_t kind;
    int32_t idx;
} prog_arg;

typedef struct {
    int line, target, nargs;
    int lazy; /* the target is read only as the patch of paint, underpaint, fill or underfill: the call may
                 return a deferred concatenation (arc_internal.h) */
    int grid;  /* the callee may return a grid of bytes and the target is read only where one may be, or
                  returned (grid_bytes): the call may return one (arc_internal.h) */
    int only;  /* the colour of an objects line and its colorfilter line run as one colour's objects, or -1 */
    prog_arg callee, args[4];
    int32_t at[5]; /* the callee's and the four arguments' places in the run's frame (an unused one: I's) */
    arc_prim_fn prim; /* the callee when it is a primitive (of the arity given: the parse checked it) */
    char *text;    /* the line as written, for messages */
} prog_instr;

/* A run's frame: the variables' slots, then I, then the primitives and constants the lines name (fixed,
 * interned values, copied in at the start), so that every argument is one load, with no branch on its
 * kind. */
typedef struct {
    char *task;
    prog_instr *ins;
    int n, nslots, result;
    int nfixed;
    tdm_arc_val **fixed; /* owned */
    uint64_t uid;        /* unique in the process (a runtime's kept frame names its program by it) */
} prog;

struct tdm_arc_programs {
    prog *p;
    size_t n, cap;
};

/* ---- parsing ------------------------------------------------------------------------------------------ */

typedef struct {
    const char *name; /* file name for messages */
    int line;
    const char *ls, *le; /* current line */
    const char *p;       /* cursor */
    /* the function being parsed */
    char **vars;
    int nvars, capvars;
} parser;

static int perr(parser *ps, const char *at, size_t toklen, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int perr(parser *ps, const char *at, size_t toklen, const char *fmt, ...) {
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int col = (int)(at - ps->ls) + 1;
    if (at >= ps->le) return tdm_error(TDM_E_PARSE, "%s:%d:%d: %s '<end of line>'", ps->name, ps->line, col, what);
    if (!toklen) {
        const char *e = at;
        while (e < ps->le && !isspace((unsigned char)*e)) e++;
        toklen = (size_t)(e - at);
    }
    if (toklen > 40) toklen = 40;
    return tdm_error(TDM_E_PARSE, "%s:%d:%d: %s '%.*s'", ps->name, ps->line, col, what, (int)toklen, at);
}

static void skip_ws(parser *ps) {
    while (ps->p < ps->le && (*ps->p == ' ' || *ps->p == '\t')) ps->p++;
}

/* An identifier at the cursor: its start and length (0 if none). */
static size_t ident(parser *ps, const char **start) {
    skip_ws(ps);
    *start = ps->p;
    if (ps->p >= ps->le || !(isalpha((unsigned char)*ps->p) || *ps->p == '_')) return 0;
    while (ps->p < ps->le && (isalnum((unsigned char)*ps->p) || *ps->p == '_')) ps->p++;
    return (size_t)(ps->p - *start);
}

static int expect(parser *ps, char c, const char *what) {
    skip_ws(ps);
    if (ps->p >= ps->le || *ps->p != c) {
        return perr(ps, ps->p, 1, "expected %s, found", what);
    }
    ps->p++;
    return 0;
}

static int var_find(parser *ps, const char *s, size_t n) {
    for (int k = 0; k < ps->nvars; k++)
        if (strlen(ps->vars[k]) == n && !memcmp(ps->vars[k], s, n)) return k;
    return -1;
}

static int name_is(const char *s, size_t n, const char *lit) { return strlen(lit) == n && !memcmp(s, lit, n); }

static int prim_find(const char *s, size_t n, int *id) {
    char buf[64];
    if (n >= sizeof buf) return -1;
    memcpy(buf, s, n), buf[n] = '\0';
    return tdm_arc_prim_lookup(buf, id) == TDM_OK ? 0 : -1;
}

static int const_find(const char *s, size_t n) {
    char buf[64];
    if (n >= sizeof buf) return -1;
    memcpy(buf, s, n), buf[n] = '\0';
    return arc_const_lookup(buf);
}

/* Resolves an argument name: variable, primitive, constant or I. */
static int resolve(parser *ps, const char *s, size_t n, prog_arg *out) {
    int id, k;
    if ((k = var_find(ps, s, n)) >= 0) return out->kind = ARG_VAR, out->idx = k, 0;
    if (name_is(s, n, "I")) return out->kind = ARG_INPUT, out->idx = 0, 0;
    if (!prim_find(s, n, &id)) return out->kind = ARG_PRIM, out->idx = id, 0;
    if ((k = const_find(s, n)) >= 0) return out->kind = ARG_CONST, out->idx = k, 0;
    return perr(ps, s, n, "unknown name (not an earlier variable, a primitive, a constant or I)");
}

static int add_var(parser *ps, const char *s, size_t n) {
    if (ps->nvars == ps->capvars) {
        int cap = ps->capvars ? 2 * ps->capvars : 32;
        char **v = tdm_realloc(ps->vars, (size_t)cap * sizeof *v);
        if (!v) return tdm_error(TDM_E_NOMEM, "no memory for program variables");
        ps->vars = v, ps->capvars = cap;
    }
    if (!(ps->vars[ps->nvars] = tdm_strndup(s, n))) return tdm_error(TDM_E_NOMEM, "no memory for program variables");
    return ps->nvars++;
}

static void clear_vars(parser *ps) {
    for (int k = 0; k < ps->nvars; k++) tdm_free(ps->vars[k]);
    ps->nvars = 0;
}

/* One assignment line `target = callee(a, b, ...)` into ins. */
static int parse_assign(parser *ps, prog_instr *ins) {
    const char *ts, *cs;
    size_t tn = ident(ps, &ts);
    if (!tn) return perr(ps, ts, 0, "expected 'variable = callee(arguments)' or 'return O', found");
    int id;
    if (!prim_find(ts, tn, &id)) return perr(ps, ts, tn, "a primitive's name cannot be assigned");
    if (const_find(ts, tn) >= 0 || name_is(ts, tn, "I")) return perr(ps, ts, tn, "a constant or I cannot be assigned");
    if (var_find(ps, ts, tn) >= 0) return perr(ps, ts, tn, "variable assigned twice");
    int rc;
    if ((rc = expect(ps, '=', "'='"))) return rc;
    size_t cn = ident(ps, &cs);
    if (!cn) return perr(ps, cs, 0, "expected a callee (primitive or variable), found");
    if ((rc = resolve(ps, cs, cn, &ins->callee))) return rc;
    if (ins->callee.kind == ARG_CONST || ins->callee.kind == ARG_INPUT) return perr(ps, cs, cn, "not callable");
    if ((rc = expect(ps, '(', "'('"))) return rc;
    ins->nargs = 0;
    for (;;) {
        const char *as;
        size_t an = ident(ps, &as);
        if (!an) return perr(ps, as, 0, "expected an argument name, found");
        if (ins->nargs == 4) return perr(ps, as, an, "more than 4 arguments at");
        if ((rc = resolve(ps, as, an, &ins->args[ins->nargs]))) return rc;
        ins->nargs++;
        skip_ws(ps);
        if (ps->p < ps->le && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if ((rc = expect(ps, ')', "',' or ')'"))) return rc;
        break;
    }
    skip_ws(ps);
    if (ps->p < ps->le && *ps->p != '#') return perr(ps, ps->p, 0, "unexpected text after the call");
    if (ins->callee.kind == ARG_PRIM && tdm_arc_prim_arity(ins->callee.idx) != ins->nargs)
        return perr(ps, cs, cn, "takes %d arguments, %d given:", tdm_arc_prim_arity(ins->callee.idx), ins->nargs);
    int slot = add_var(ps, ts, tn);
    if (slot < 0) return slot;
    ins->target = slot;
    return 0;
}

static int blank_or_comment(const char *s, const char *e) {
    while (s < e && (*s == ' ' || *s == '\t' || *s == '\r')) s++;
    return s == e || *s == '#';
}

void tdm_arc_programs_free(tdm_arc_programs *p) {
    if (!p) return;
    for (size_t k = 0; k < p->n; k++) {
        for (int i = 0; i < p->p[k].n; i++) tdm_free(p->p[k].ins[i].text);
        tdm_free(p->p[k].ins);
        tdm_free(p->p[k].task);
        tdm_free(p->p[k].fixed);
    }
    tdm_free(p->p);
    tdm_free(p);
}

/* The patch argument's index when a line's callee is paint, underpaint, fill or underfill (they read a
 * deferred concatenation's contents, or list its items), else -1. */
static int patch_arg(const prog_instr *ins) {
    if (ins->callee.kind != ARG_PRIM) return -1;
    int p = ins->callee.idx;
    return p == ARC_P_paint || p == ARC_P_underpaint ? 1 : p == ARC_P_fill || p == ARC_P_underfill ? 2 : -1;
}

/* Marks the lines whose result is read only as such a patch (not returned, not called). */
static void mark_lazy(prog *pr) {
    for (int i = 0; i < pr->n; i++) {
        int t = pr->ins[i].target, ok = t != pr->result;
        for (int j = i + 1; j < pr->n && ok; j++) {
            const prog_instr *u = &pr->ins[j];
            if (u->callee.kind == ARG_VAR && u->callee.idx == t) ok = 0;
            for (int a = 0; a < u->nargs; a++)
                if (u->args[a].kind == ARG_VAR && u->args[a].idx == t) ok = ok && a == patch_arg(u);
        }
        pr->ins[i].lazy = ok;
    }
}

/* Whether a line's callee may return a grid of bytes (arg -1), or reads one as its argument arg: the
 * grid of fill, paint and their kin (they write its bytes; move covers and paints), of the mirrors,
 * rotations, concatenations and upscale (gbytes.c); canvas makes one of nothing, cellwise of two grids. */
static int grid_bytes(const prog_instr *ins, int arg) {
    if (ins->callee.kind != ARG_PRIM) return 0;
    switch (ins->callee.idx) {
    case ARC_P_fill: case ARC_P_underfill: case ARC_P_paint: case ARC_P_underpaint: case ARC_P_cover:
    case ARC_P_replace: case ARC_P_switch: case ARC_P_move: case ARC_P_hmirror: case ARC_P_vmirror: case ARC_P_dmirror:
    case ARC_P_cmirror: case ARC_P_rot90: case ARC_P_rot180: case ARC_P_rot270: case ARC_P_upscale:
        return arg <= 0;
    case ARC_P_hconcat: case ARC_P_vconcat:
        return arg <= 1;
    case ARC_P_canvas: case ARC_P_cellwise:
        return arg < 0;
    case ARC_P_apply: /* apply(mostcommon | leastcommon, g) counts g's rows from its bytes (prim_func.c) */
        return arg == 1 && ins->args[0].kind == ARG_PRIM &&
               (ins->args[0].idx == ARC_P_mostcommon || ins->args[0].idx == ARC_P_leastcommon);
    }
    return 0;
}

/* Whether an argument of line i may be a grid of bytes: a variable last set by a marked line. */
static int bytes_arg(const prog *pr, int i) {
    const prog_instr *ins = &pr->ins[i];
    int any = 0;
    for (int a = 0; a < ins->nargs; a++)
        for (int j = i - 1; ins->args[a].kind == ARG_VAR && j >= 0; j--)
            if (pr->ins[j].target == ins->args[a].idx) {
                any |= pr->ins[j].grid;
                break;
            }
    return any;
}

/* Marks the lines that may return a grid of bytes whose result only such a reader reads, or is returned.
 * hmirror and vconcat make one only of one (gbytes.c): their lines are marked only when an argument may be. */
static void mark_grid(prog *pr) {
    for (int i = 0; i < pr->n; i++) {
        const prog_instr *ins = &pr->ins[i];
        int t = ins->target, ok = grid_bytes(ins, -1);
        if (ok && (ins->callee.idx == ARC_P_hmirror || ins->callee.idx == ARC_P_vconcat)) /* ok: a primitive */
            ok = bytes_arg(pr, i);
        for (int j = i + 1; j < pr->n && ok; j++) {
            const prog_instr *u = &pr->ins[j];
            if (u->callee.kind == ARG_VAR && u->callee.idx == t) ok = 0;
            for (int a = 0; a < u->nargs; a++)
                if (u->args[a].kind == ARG_VAR && u->args[a].idx == t) ok = ok && grid_bytes(u, a);
        }
        pr->ins[i].grid = ok;
    }
}

/* The frame place of a (a primitive or constant is added to pr->fixed once, which has room for them all). */
static int32_t frame_at(prog *pr, const prog_arg *a) {
    if (a->kind == ARG_VAR) return a->idx;
    if (a->kind == ARG_INPUT) return pr->nslots;
    tdm_arc_val *v = a->kind == ARG_PRIM ? arc_prim_val(a->idx) : arc_const_value(a->idx);
    int f = 0;
    while (f < pr->nfixed && pr->fixed[f] != v) f++;
    if (f == pr->nfixed) pr->fixed[pr->nfixed++] = v;
    return pr->nslots + 1 + f;
}

/* How many reads of variable t lines make (as callee or argument; 100 when a line other than line `at`
 * assigns it); *all_arg0 whether each is argument 0 of a line calling primitive prim, *last the last such
 * line. */
static int reads_of(const prog *pr, int t, int at, int prim, int *all_arg0, int *last) {
    int n = 0;
    *all_arg0 = 1;
    for (int j = 0; j < pr->n; j++) {
        const prog_instr *u = &pr->ins[j];
        if ((j != at && u->target == t) || (u->callee.kind == ARG_VAR && u->callee.idx == t)) return 100;
        for (int a = 0; a < u->nargs; a++)
            if (u->args[a].kind == ARG_VAR && u->args[a].idx == t)
                n++, *last = j, *all_arg0 &= a == 0 && u->callee.kind == ARG_PRIM && u->callee.idx == prim;
    }
    return n;
}

/* A line objects(...) read only by a line colorfilter(target, C), C a constant colour, whose result only
 * mfilter lines read (as the container: they merge the kept objects, in no order that needs a layout; a
 * reader that lays the filter out would make the full objects() too, which then costs more): the two lines
 * run arc_objects_of_fn(C), which labels only that colour's objects when it can, and
 * arc_colorfilter_of, which gives that set back as the filter's result. After frame_layout. */
static void mark_only(prog *pr) {
    for (int i = 0; i < pr->n; i++) pr->ins[i].only = -1;
    for (int i = 0; i < pr->n; i++) {
        prog_instr *ins = &pr->ins[i];
        int t = ins->target, arg0, j, last;
        if (ins->callee.kind != ARG_PRIM || ins->callee.idx != ARC_P_objects || t == pr->result) continue;
        if (reads_of(pr, t, i, ARC_P_colorfilter, &arg0, &j) != 1 || !arg0) continue;
        prog_instr *cf = &pr->ins[j]; /* the reader */
        const tdm_arc_val *v = cf->args[1].kind == ARG_CONST ? arc_const_value(cf->args[1].idx) : NULL;
        if (!v || v->kind != TDM_ARC_INT || v->u.i < 0 || v->u.i >= ARC_COLOURS_N || cf->target == pr->result) continue;
        if (reads_of(pr, cf->target, j, ARC_P_mfilter, &arg0, &last) < 1 || !arg0) continue;
        ins->only = cf->only = (int)v->u.i;
        ins->prim = arc_objects_of_fn(ins->only), cf->prim = arc_colorfilter_of;
    }
}

/* Lays out pr's frame (pr->nslots set): 0, or -1 out of memory. */
static int frame_layout(prog *pr) {
    static _Atomic uint64_t uids;
    pr->uid = atomic_fetch_add(&uids, 1) + 1;
    if (!(pr->fixed = tdm_malloc((size_t)(5 * pr->n) * sizeof *pr->fixed))) return -1;
    for (int i = 0; i < pr->n; i++) {
        prog_instr *ins = &pr->ins[i];
        ins->at[0] = frame_at(pr, &ins->callee);
        ins->prim = ins->callee.kind == ARG_PRIM ? arc_prim_table_fn(ins->callee.idx) : NULL;
        for (int a = 0; a < 4; a++) ins->at[a + 1] = a < ins->nargs ? frame_at(pr, &ins->args[a]) : pr->nslots;
    }
    return 0;
}

int tdm_arc_programs_parse(const char *src, size_t len, const char *name, tdm_arc_programs **out) {
    if (!src || !out) return tdm_error(TDM_E_INVAL, "tdm_arc_programs_parse: NULL argument");
    tdm_arc_programs *ps_out = tdm_calloc(1, sizeof *ps_out);
    if (!ps_out) return tdm_error(TDM_E_NOMEM, "no memory for programs");
    parser ps = {.name = name ? name : "<programs>"};
    prog *cur = NULL;
    int rc = 0, capins = 0;
    const char *s = src, *end = src + len;
    while (!rc && s < end) {
        const char *e = memchr(s, '\n', (size_t)(end - s));
        if (!e) e = end;
        ps.line++, ps.ls = s, ps.le = e, ps.p = s;
        while (ps.le > ps.ls && ps.le[-1] == '\r') ps.le--;
        const char *next = e < end ? e + 1 : end;
        if (blank_or_comment(s, ps.le)) {
            s = next;
            continue;
        }
        int indented = *s == ' ' || *s == '\t';
        if (!cur) {
            const char *is;
            size_t n = ident(&ps, &is);
            if (name_is(is, n, "from") || name_is(is, n, "import")) {
                s = next;
                continue;
            }
            if (indented || !name_is(is, n, "def")) {
                rc = perr(&ps, is, 0, "expected 'def solve_<task>(I):', found");
                break;
            }
            n = ident(&ps, &is);
            if (n <= 6 || strncmp(is, "solve_", 6)) {
                rc = perr(&ps, is, n, "a solver's name must be solve_<task>, found");
                break;
            }
            const char *ai;
            size_t an;
            if ((rc = expect(&ps, '(', "'('"))) break;
            an = ident(&ps, &ai);
            if (!name_is(ai, an, "I")) {
                rc = perr(&ps, ai, an, "the solver's parameter must be I, found");
                break;
            }
            if ((rc = expect(&ps, ')', "')'")) || (rc = expect(&ps, ':', "':'"))) break;
            for (size_t k = 0; k < ps_out->n; k++)
                if (strlen(ps_out->p[k].task) == n - 6 && !memcmp(ps_out->p[k].task, is + 6, n - 6)) {
                    rc = perr(&ps, is, n, "a second solver for the same task:");
                    break;
                }
            if (rc) break;
            if (ps_out->n == ps_out->cap) {
                size_t cap = ps_out->cap ? 2 * ps_out->cap : 64;
                prog *np = tdm_realloc(ps_out->p, cap * sizeof *np);
                if (!np) {
                    rc = tdm_error(TDM_E_NOMEM, "no memory for programs");
                    break;
                }
                ps_out->p = np, ps_out->cap = cap;
            }
            cur = &ps_out->p[ps_out->n++];
            memset(cur, 0, sizeof *cur);
            capins = 0;
            if (!(cur->task = tdm_strndup(is + 6, n - 6))) rc = tdm_error(TDM_E_NOMEM, "no memory for programs");
            clear_vars(&ps);
            s = next;
            continue;
        }
        if (!indented) {
            rc = perr(&ps, s, 0, "solver ends without 'return O' before");
            break;
        }
        const char *ks;
        const char *save = ps.p;
        size_t kn = ident(&ps, &ks);
        if (name_is(ks, kn, "return")) {
            const char *vs;
            size_t vn = ident(&ps, &vs);
            int slot = vn ? var_find(&ps, vs, vn) : -1;
            if (slot < 0) {
                rc = perr(&ps, vs, vn, "return of a name that was not assigned:");
                break;
            }
            skip_ws(&ps);
            if (ps.p < ps.le && *ps.p != '#') {
                rc = perr(&ps, ps.p, 0, "unexpected text after return");
                break;
            }
            if (!cur->n) {
                rc = perr(&ps, ks, kn, "a solver needs at least one assignment before");
                break;
            }
            cur->result = slot, cur->nslots = ps.nvars;
            mark_lazy(cur), mark_grid(cur);
            if (frame_layout(cur)) {
                rc = tdm_error(TDM_E_NOMEM, "no memory for programs");
                break;
            }
            mark_only(cur);
            cur = NULL;
            s = next;
            continue;
        }
        ps.p = save;
        if (cur->n == capins) {
            int cap = capins ? 2 * capins : 16;
            prog_instr *ni = tdm_realloc(cur->ins, (size_t)cap * sizeof *ni);
            if (!ni) {
                rc = tdm_error(TDM_E_NOMEM, "no memory for programs");
                break;
            }
            cur->ins = ni, capins = cap;
        }
        prog_instr *ins = &cur->ins[cur->n];
        memset(ins, 0, sizeof *ins);
        if ((rc = parse_assign(&ps, ins))) break;
        const char *t = s;
        while (t < ps.le && (*t == ' ' || *t == '\t')) t++;
        ins->line = ps.line;
        if (!(ins->text = tdm_strndup(t, (size_t)(ps.le - t)))) {
            rc = tdm_error(TDM_E_NOMEM, "no memory for programs");
            break;
        }
        cur->n++;
        s = next;
    }
    if (!rc && cur) {
        ps.ls = ps.le = ps.p = end;
        rc = tdm_error(TDM_E_PARSE, "%s:%d: solver solve_%s ends without 'return O'", ps.name, ps.line, cur->task);
    }
    clear_vars(&ps);
    tdm_free(ps.vars);
    if (rc) {
        tdm_arc_programs_free(ps_out);
        return rc;
    }
    arc_tables_make(); /* once per process: no call pays for them */
    *out = ps_out;
    return TDM_OK;
}

size_t tdm_arc_programs_count(const tdm_arc_programs *p) { return p ? p->n : 0; }
const char *tdm_arc_programs_task(const tdm_arc_programs *p, size_t k) { return p && k < p->n ? p->p[k].task : NULL; }

int tdm_arc_programs_find(const tdm_arc_programs *p, const char *task, size_t *k) {
    for (size_t i = 0; p && task && i < p->n; i++)
        if (!strcmp(p->p[i].task, task)) {
            if (k) *k = i;
            return TDM_OK;
        }
    return tdm_error(TDM_E_NOTFOUND, "no solver for task '%s'", task ? task : "(null)");
}

/* ---- running ------------------------------------------------------------------------------------------ */

int arc_prog_view(const tdm_arc_programs *p, size_t k, arc_prog_info *out) {
    if (!p || k >= p->n) return -1;
    out->n = p->p[k].n, out->nslots = p->p[k].nslots, out->result = p->p[k].result;
    return 0;
}

void arc_prog_step(const tdm_arc_programs *p, size_t k, int i, arc_step *out) {
    const prog_instr *ins = &p->p[k].ins[i];
    static const int kinds[] = {[ARG_VAR] = ARC_STEP_VAR, [ARG_PRIM] = ARC_STEP_PRIM, [ARG_CONST] = ARC_STEP_CONST,
                                [ARG_INPUT] = ARC_STEP_INPUT};
    out->callee_kind = kinds[ins->callee.kind], out->callee = ins->callee.idx;
    out->nargs = ins->nargs, out->target = ins->target, out->line = ins->line, out->text = ins->text, out->lazy = ins->lazy;
    out->grid = ins->grid, out->only = ins->only;
    for (int a = 0; a < ins->nargs; a++) out->arg_kind[a] = kinds[ins->args[a].kind], out->arg[a] = ins->args[a].idx;
}

int arc_prog_fail(tdm_arc_rt *rt, int line, const char *text) {
    char msg[sizeof rt->err];
    snprintf(msg, sizeof msg, "%s", rt->failed ? rt->err : "call failed");
    int st = rt->failed ? rt->status : TDM_E_ARC_RAISE;
    snprintf(rt->err, sizeof rt->err, "line %d: %.60s: %.160s", line, text, msg);
    return tdm_error(st, "%s", rt->err);
}

/* rt's frame made pr's: room for its slots, the input and its constants, which are written (NULL out of
 * memory). A run of the program it was made for takes it as it is. */
static tdm_arc_val **frame_for(tdm_arc_rt *rt, const prog *pr) {
    size_t n = (size_t)pr->nslots + 1 + (size_t)pr->nfixed;
    rt->frame_of = 0;
    if (n > rt->frame_cap) {
        size_t cap = n < 64 ? 64 : n;
        tdm_free(rt->frame);
        rt->frame_cap = 0;
        if (!(rt->frame = tdm_malloc(cap * sizeof *rt->frame))) return NULL;
        rt->frame_cap = cap;
    }
    memcpy(rt->frame + pr->nslots + 1, pr->fixed, (size_t)pr->nfixed * sizeof *rt->frame);
    rt->frame_of = pr->uid;
    return rt->frame;
}

int arc_program_run(tdm_arc_rt *rt, const tdm_arc_programs *p, size_t k, const tdm_arc_val *grid,
                    const tdm_arc_val **out, int bytes_out) {
    if (!rt || !p || !grid || !out || k >= p->n) return tdm_error(TDM_E_INVAL, "tdm_arc_program_run: bad arguments");
    const prog *pr = &p->p[k];
    rt->failed = 0, rt->err[0] = '\0', rt->depth = 0;
    tdm_arc_val **f = rt->frame_of == pr->uid ? rt->frame : frame_for(rt, pr);
    if (!f) return tdm_error(TDM_E_NOMEM, "solve_%s: no memory for its frame", pr->task);
    f[pr->nslots] = (tdm_arc_val *)grid;
    const int direct = !rt->stats; /* statistics time each call: arc_call_ex's way */
    for (int i = 0; i < pr->n; i++) {
        const prog_instr *ins = &pr->ins[i];
        tdm_arc_val *args[4] = {f[ins->at[1]], f[ins->at[2]], f[ins->at[3]], f[ins->at[4]]}, *r;
        if (ins->prim && direct) {
            /* a primitive called here, one frame deep, as arc_call_ex calls one (its args offered for a
               deferred concatenation or a grid of bytes when the line allows them), without its checks */
            rt->grid_args = ins->grid ? args : NULL, rt->depth = 1;
            r = arc_offered(rt, ins->prim, args, ins->lazy);
            rt->grid_args = NULL, rt->depth = 0;
            if (r && rt->failed && rt->status == TDM_E_NOMEM) r = NULL; /* as arc_call_ex: a lazy layout failed */
        } else {
            if (ins->grid) rt->grid_args = args; /* the callee may take it (arc_take_grid) */
            r = arc_call_ex(rt, f[ins->at[0]], ins->nargs, args, ins->lazy);
            rt->grid_args = NULL;
        }
        if (!r) return arc_prog_fail(rt, ins->line, ins->text);
        f[ins->target] = r;
    }
    if (!bytes_out && arc_grid_force(rt, f[pr->result])) return tdm_error(TDM_E_NOMEM, "solve_%s: %s", pr->task, rt->err);
    *out = f[pr->result];
    return TDM_OK;
}

int tdm_arc_program_run(tdm_arc_rt *rt, const tdm_arc_programs *p, size_t k, const tdm_arc_val *grid,
                        const tdm_arc_val **out) {
    return arc_program_run(rt, p, k, grid, out, 0);
}
