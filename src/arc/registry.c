/* registry.c: the table of the 160 primitives (names, arities, entry points, and their function values),
 * the 28 constants of constants.py, and the public calling interface. The table is generated from the one
 * ARC_PRIM_LIST so that names, ids and arities cannot drift apart. */
#include "arc_internal.h"

#include <string.h>

typedef struct {
    const char *name;
    int arity;
} prim_entry;

static const prim_entry prims[] = {
#define ARC_X_ENTRY(name, arity) {#name, arity},
    ARC_PRIM_LIST(ARC_X_ENTRY)
#undef ARC_X_ENTRY
};

_Static_assert(sizeof prims / sizeof *prims == 160, "the DSL has 160 primitives");

static tdm_arc_val prim_vals[ARC_NPRIM];

__attribute__((constructor)) static void init_prim_vals(void) {
    for (int k = 0; k < ARC_NPRIM; k++) {
        prim_vals[k].kind = TDM_ARC_FUNC, prim_vals[k].fkind = ARC_FN_PRIM;
        prim_vals[k].arity = (uint8_t)prims[k].arity, prim_vals[k].u.fn.prim = k;
        /* hashed now, so that threads sharing these static values never write them */
        arc_hash(&prim_vals[k]);
    }
}

const arc_prim_fn arc_prim_fns[] = {
#define ARC_X_FN(name, arity) arc_p_##name,
    ARC_PRIM_LIST(ARC_X_FN)
#undef ARC_X_FN
};
tdm_arc_val *arc_prim_val(int id) { return &prim_vals[id]; }

int tdm_arc_prim_count(void) { return ARC_NPRIM; }
const char *tdm_arc_prim_name(int id) { return id >= 0 && id < ARC_NPRIM ? prims[id].name : "?"; }
int tdm_arc_prim_arity(int id) { return id >= 0 && id < ARC_NPRIM ? prims[id].arity : -1; }
const tdm_arc_val *tdm_arc_prim_value(int id) { return id >= 0 && id < ARC_NPRIM ? &prim_vals[id] : NULL; }

int tdm_arc_prim_lookup(const char *name, int *id) {
    /* The names are sorted, so a binary search finds them. */
    int lo = 0, hi = ARC_NPRIM - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(name, prims[mid].name);
        if (!c) {
            if (id) *id = mid;
            return TDM_OK;
        }
        if (c < 0) hi = mid - 1;
        else lo = mid + 1;
    }
    return tdm_error(TDM_E_NOTFOUND, "no primitive named '%s'", name);
}

/* constants.py: booleans, ints and the vector constants. */
typedef struct {
    const char *name;
    int kind; /* 0 bool, 1 int, 2 pair */
    int a, b;
} const_entry;

static const const_entry consts[] = {
    {"F", 0, 0, 0},          {"T", 0, 1, 0},           {"ZERO", 1, 0, 0},        {"ONE", 1, 1, 0},
    {"TWO", 1, 2, 0},        {"THREE", 1, 3, 0},       {"FOUR", 1, 4, 0},        {"FIVE", 1, 5, 0},
    {"SIX", 1, 6, 0},        {"SEVEN", 1, 7, 0},       {"EIGHT", 1, 8, 0},       {"NINE", 1, 9, 0},
    {"TEN", 1, 10, 0},       {"NEG_ONE", 1, -1, 0},    {"NEG_TWO", 1, -2, 0},    {"DOWN", 2, 1, 0},
    {"RIGHT", 2, 0, 1},      {"UP", 2, -1, 0},         {"LEFT", 2, 0, -1},       {"ORIGIN", 2, 0, 0},
    {"UNITY", 2, 1, 1},      {"NEG_UNITY", 2, -1, -1}, {"UP_RIGHT", 2, -1, 1},   {"DOWN_LEFT", 2, 1, -1},
    {"ZERO_BY_TWO", 2, 0, 2}, {"TWO_BY_ZERO", 2, 2, 0}, {"TWO_BY_TWO", 2, 2, 2}, {"THREE_BY_THREE", 2, 3, 3},
};

_Static_assert(sizeof consts / sizeof *consts == 28, "constants.py has 28 names");

int arc_const_lookup(const char *name) {
    for (int k = 0; k < (int)(sizeof consts / sizeof *consts); k++)
        if (!strcmp(name, consts[k].name)) return k;
    return -1;
}

tdm_arc_val *arc_const_value(int k) {
    const const_entry *c = &consts[k];
    /* every constant lies in the interned ranges (ints -2..10, pairs of -1..3): nothing is allocated, so
       no runtime is needed */
    if (c->kind == 0) return arc_bool(c->a);
    if (c->kind == 1) return arc_int(NULL, c->a);
    return arc_ipair(NULL, c->a, c->b);
}

int tdm_arc_name_value(tdm_arc_rt *rt, const char *name, const tdm_arc_val **out) {
    if (!rt || !name || !out) return tdm_error(TDM_E_INVAL, "tdm_arc_name_value: NULL argument");
    int id = 0, k = arc_const_lookup(name);
    if (k >= 0) {
        *out = arc_const_value(k);
        return TDM_OK;
    }
    if (tdm_arc_prim_lookup(name, &id) == TDM_OK) {
        *out = &prim_vals[id];
        return TDM_OK;
    }
    return tdm_error(TDM_E_NOTFOUND, "'%s' is neither a constant nor a primitive", name);
}

int tdm_arc_call(tdm_arc_rt *rt, const tdm_arc_val *fn, int argc, const tdm_arc_val *const *args, const tdm_arc_val **out) {
    if (!rt || !fn || !out || argc < 0 || argc > 4 || (argc && !args)) return tdm_error(TDM_E_INVAL, "tdm_arc_call: bad arguments");
    tdm_arc_val *a[4];
    for (int k = 0; k < argc; k++) {
        if (!args[k]) return tdm_error(TDM_E_INVAL, "tdm_arc_call: argument %d is NULL", k);
        a[k] = (tdm_arc_val *)args[k];
    }
    rt->failed = 0, rt->err[0] = '\0', rt->depth = 0;
    tdm_arc_val *r = arc_call(rt, (tdm_arc_val *)fn, argc, a);
    if (!r) {
        if (!rt->failed) rt->failed = 1, rt->status = TDM_E_ARC_RAISE, snprintf(rt->err, sizeof rt->err, "call failed");
        return tdm_error(rt->status, "%s", rt->err);
    }
    *out = r;
    return TDM_OK;
}
