/* arc_test_util.h: what the ARC DSL unit tests share: a reader for Python literals (ints, True/False,
 * None, tuples, set displays {a, b} built by inserting left to right as CPython's frozenset(iterable)
 * does, frozenset(), and primitive names as function values), calls of primitives on such literals, and
 * the comparison of Python's repr of the result (which shows frozensets in iteration order). The
 * expected reprs in the tests come from the spec's worked examples and from CPython 3.11 itself. */
#ifndef TANDEM_ARC_TEST_UTIL_H
#define TANDEM_ARC_TEST_UTIL_H

#define _POSIX_C_SOURCE 200809L
#include "unit_common.h"

#include "arc/arc_internal.h"

#include <ctype.h>

static tdm_arc_rt *ta_rt;

static inline int ta_setup(void **state) {
    (void)state;
    return tdm_arc_rt_new(&ta_rt);
}

static inline int ta_teardown(void **state) {
    (void)state;
    tdm_arc_rt_free(ta_rt);
    ta_rt = NULL;
    return 0;
}

static void ta_ws(const char **p) {
    while (isspace((unsigned char)**p)) (*p)++;
}

/* Parses one literal at *p; NULL on a syntax error (the test then fails with the text). */
static tdm_arc_val *ta_parse_at(tdm_arc_rt *rt, const char **p) {
    ta_ws(p);
    const char *s = *p;
    if (*s == '(' || *s == '{') {
        char close = *s == '(' ? ')' : '}';
        int is_set = *s == '{';
        tdm_arc_val *items[1024];
        uint32_t n = 0;
        int comma = 0;
        (*p)++;
        for (;;) {
            ta_ws(p);
            if (**p == close) {
                (*p)++;
                break;
            }
            tdm_arc_val *v = ta_parse_at(rt, p);
            if (!v || n == 1024) return NULL;
            items[n++] = v;
            ta_ws(p);
            if (**p == ',') {
                (*p)++;
                comma = 1;
            } else if (**p != close) {
                return NULL;
            }
        }
        if (is_set) return arc_set_from(rt, items, n);
        if (n == 1 && !comma) return items[0]; /* (x) is just x */
        tdm_arc_val *t = arc_tuple(rt, n);
        for (uint32_t k = 0; t && k < n; k++) t->u.items[k] = items[k];
        return t;
    }
    if (*s == '-' || isdigit((unsigned char)*s)) {
        char *end;
        long long v = strtoll(s, &end, 10);
        *p = end;
        return arc_int(rt, v);
    }
    if (isalpha((unsigned char)*s) || *s == '_') {
        const char *e = s;
        while (isalnum((unsigned char)*e) || *e == '_') e++;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(e - s), s);
        *p = e;
        if (!strcmp(name, "True")) return arc_bool(1);
        if (!strcmp(name, "False")) return arc_bool(0);
        if (!strcmp(name, "None")) return &arc_none_val;
        if (!strcmp(name, "frozenset")) { /* frozenset() */
            ta_ws(p);
            if (**p == '(') (*p)++;
            ta_ws(p);
            if (**p == ')') (*p)++;
            return arc_set_new(rt);
        }
        int id;
        if (tdm_arc_prim_lookup(name, &id) == TDM_OK) return arc_prim_val(id);
        return NULL;
    }
    return NULL;
}

static tdm_arc_val *ta_parse(const char *text) {
    const char *p = text;
    tdm_arc_val *v = ta_parse_at(ta_rt, &p);
    ta_ws(&p);
    if (!v || *p) {
        print_error("cannot parse test literal: %s\n", text);
        fail();
    }
    return v;
}

/* repr of a value (malloc'd). */
static char *ta_repr(const tdm_arc_val *v) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    tdm_arc_val_print(m, v);
    fclose(m);
    return buf;
}

/* Calls primitive name on literal arguments (NULL-terminated); returns the repr, or "ERROR". */
static inline char *ta_callv(const char *name, const char **args) {
    int id;
    if (tdm_arc_prim_lookup(name, &id)) {
        print_error("no primitive %s\n", name);
        fail();
    }
    const tdm_arc_val *a[4], *out;
    int n = 0;
    while (args[n]) {
        a[n] = ta_parse(args[n]);
        n++;
    }
    int rc = tdm_arc_call(ta_rt, tdm_arc_prim_value(id), n, a, &out);
    if (rc) return strdup("ERROR");
    return ta_repr(out);
}

/* Checks name(args...) == want (a repr, or "ERROR" for a call that must raise). */
#define TA_CHECK(want, name, ...)                                                                          \
    do {                                                                                                   \
        const char *ta_args_[] = {__VA_ARGS__, NULL};                                                      \
        char *ta_got_ = ta_callv(name, ta_args_);                                                          \
        if (strcmp(ta_got_, want)) {                                                                       \
            print_error("%s:%d: %s(%s%s%s...) = %s, want %s (%s)\n", __FILE__, __LINE__, name, ta_args_[0],     \
                        ta_args_[1] ? ", " : "", ta_args_[1] ? ta_args_[1] : "", ta_got_, want,           \
                        tdm_arc_rt_error(ta_rt));                                                          \
            free(ta_got_);                                                                                 \
            fail();                                                                                        \
        }                                                                                                  \
        free(ta_got_);                                                                                     \
    } while (0)

/* Runs the straight-line body (lines separated by \n, the last assigning O) on the grid value; returns the
 * repr of O or "ERROR" (a parse error or a failing call), and the run's status in *status when not NULL. */
static inline char *ta_prog_val(const tdm_arc_val *grid, const char *body, int *status) {
    char src[4096];
    size_t n = (size_t)snprintf(src, sizeof src, "def solve_t(I):\n    ");
    for (const char *p = body; *p && n < sizeof src - 64; p++) {
        src[n++] = *p;
        if (*p == '\n') n += (size_t)snprintf(src + n, sizeof src - n, "    ");
    }
    n += (size_t)snprintf(src + n, sizeof src - n, "\n    return O\n");
    tdm_arc_programs *p = NULL;
    int rc = tdm_arc_programs_parse(src, n, "test", &p);
    const tdm_arc_val *out;
    if (!rc) rc = tdm_arc_program_run(ta_rt, p, 0, grid, &out);
    tdm_arc_programs_free(p);
    if (status) *status = rc;
    return rc ? strdup("ERROR") : ta_repr(out);
}

/* ta_prog_val on a grid literal. */
static inline char *ta_prog(const char *grid, const char *body) { return ta_prog_val(ta_parse(grid), body, NULL); }

#define TA_PROG(want, grid, body)                                                                          \
    do {                                                                                                   \
        char *ta_got_ = ta_prog(grid, body);                                                               \
        if (strcmp(ta_got_, want)) {                                                                       \
            print_error("%s:%d: on %s: %s\n  = %s\n  want %s (%s)\n", __FILE__, __LINE__, grid, body, ta_got_, \
                        want, tdm_last_error());                                                           \
            free(ta_got_);                                                                                 \
            fail();                                                                                        \
        }                                                                                                  \
        free(ta_got_);                                                                                     \
    } while (0)

/* Two tables are the same layout: mask, fill, used, and slot by slot the same hash and an equal key (the
 * first laid out by now, whatever it was). KEYS_PTR: the same pointer (cells are interned); KEYS_EQ: ==
 * (objects, without laying them out); KEYS_LAYOUT: sets whose own tables are the same layout in turn. */
enum { KEYS_PTR, KEYS_EQ, KEYS_LAYOUT };

static inline void ta_same_table(tdm_arc_val *lazy, tdm_arc_val *eager, int keys) {
    arc_slot *a = arc_set_slots(lazy), *b = arc_set_slots(eager);
    assert_false(arc_set_is_lazy(lazy));
    assert_int_equal(lazy->n, eager->n);
    assert_int_equal(lazy->u.set.mask, eager->u.set.mask);
    assert_int_equal(lazy->u.set.fill, eager->u.set.fill);
    for (uint32_t s = 0; s <= eager->u.set.mask; s++) {
        tdm_arc_val *x = a[s].key, *y = b[s].key;
        assert_true((x == NULL) == (y == NULL));
        assert_true((x == ARC_DUMMY) == (y == ARC_DUMMY));
        if (!x || x == ARC_DUMMY) continue;
        assert_true(a[s].hash == b[s].hash);
        if (keys == KEYS_LAYOUT) ta_same_table(x, y, KEYS_PTR);
        else if (keys == KEYS_EQ) assert_true(arc_eq(x, y));
        else assert_ptr_equal(x, y);
    }
}

/* x under k composes of identity: each call of it begins k frames deeper than x's own. */
static inline tdm_arc_val *ta_under_composes(tdm_arc_rt *rt, tdm_arc_val *x, int k) {
    tdm_arc_val *a[2] = {arc_prim_val(ARC_P_identity), NULL};
    for (int d = 0; d < k; d++) a[1] = x, x = arc_p_compose(rt, a);
    return x;
}

#endif
