/* prim_math.c: integer, vector and logic primitives (spec §3.1). The arithmetic follows the reference's
 * dispatch order exactly (int/int, tuple/tuple, int/tuple, then tuple/int) with Python's floor division;
 * component arithmetic is on ints (a tuple component would make Python concatenate or repeat tuples,
 * which no DSL program does; the port reports it as an error, docs/arc.md). */
#include "arc_internal.h"

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV };
static const char *op_names[] = {"add", "subtract", "multiply", "divide"};

static int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

static int64_t floormod(int64_t a, int64_t b) {
    int64_t m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) m += b;
    return m;
}

static tdm_arc_val *scalar(tdm_arc_rt *rt, int op, tdm_arc_val *x, tdm_arc_val *y) {
    if (!arc_is_int(x) || !arc_is_int(y))
        return arc_fail(rt, "%s: unsupported operand types %s and %s", op_names[op], arc_type_name(x), arc_type_name(y));
    int64_t a = x->u.i, b = y->u.i;
    switch (op) {
    case OP_ADD: return arc_int(rt, a + b);
    case OP_SUB: return arc_int(rt, a - b);
    case OP_MUL: return arc_int(rt, a * b);
    default:
        if (b == 0) return arc_fail(rt, "divide: integer division or modulo by zero");
        return arc_int(rt, floordiv(a, b));
    }
}

/* x[k] as Python indexing of a tuple (frozensets and ints are not subscriptable). */
static tdm_arc_val *item(tdm_arc_rt *rt, tdm_arc_val *x, uint32_t k, const char *who) {
    if (!arc_is_tuple(x)) return arc_fail(rt, "%s: '%s' object is not subscriptable", who, arc_type_name(x));
    if (k >= x->n) return arc_fail(rt, "%s: tuple index out of range", who);
    return x->u.items[k];
}

static tdm_arc_val *arith(tdm_arc_rt *rt, int op, tdm_arc_val *a, tdm_arc_val *b) {
    const char *who = op_names[op];
    if (arc_is_int(a) && arc_is_int(b)) return scalar(rt, op, a, b);
    tdm_arc_val *x0, *x1;
    if (arc_is_tuple(a) && arc_is_tuple(b)) {
        tdm_arc_val *a0 = item(rt, a, 0, who), *b0 = a0 ? item(rt, b, 0, who) : NULL;
        ARC_TRY(b0);
        ARC_TRY(x0 = scalar(rt, op, a0, b0));
        tdm_arc_val *a1 = item(rt, a, 1, who), *b1 = a1 ? item(rt, b, 1, who) : NULL;
        ARC_TRY(b1);
        ARC_TRY(x1 = scalar(rt, op, a1, b1));
    } else if (arc_is_int(a) && arc_is_tuple(b)) {
        tdm_arc_val *b0 = item(rt, b, 0, who);
        ARC_TRY(b0);
        ARC_TRY(x0 = scalar(rt, op, a, b0));
        tdm_arc_val *b1 = item(rt, b, 1, who);
        ARC_TRY(b1);
        ARC_TRY(x1 = scalar(rt, op, a, b1));
    } else {
        tdm_arc_val *a0 = item(rt, a, 0, who);
        ARC_TRY(a0);
        ARC_TRY(x0 = scalar(rt, op, a0, b));
        tdm_arc_val *a1 = item(rt, a, 1, who);
        ARC_TRY(a1);
        ARC_TRY(x1 = scalar(rt, op, a1, b));
    }
    return arc_pair(rt, x0, x1);
}

tdm_arc_val *arc_p_add(tdm_arc_rt *rt, tdm_arc_val **a) { return arith(rt, OP_ADD, a[0], a[1]); }
tdm_arc_val *arc_p_subtract(tdm_arc_rt *rt, tdm_arc_val **a) { return arith(rt, OP_SUB, a[0], a[1]); }
tdm_arc_val *arc_p_multiply(tdm_arc_rt *rt, tdm_arc_val **a) { return arith(rt, OP_MUL, a[0], a[1]); }
tdm_arc_val *arc_p_divide(tdm_arc_rt *rt, tdm_arc_val **a) { return arith(rt, OP_DIV, a[0], a[1]); }

/* Unary Numerical primitives: f(n) for an int, (f(n[0]), f(n[1])) otherwise. */
enum { U_INVERT, U_DOUBLE, U_HALVE, U_INC, U_DEC, U_CREMENT, U_SIGN };
static const char *u_names[] = {"invert", "double", "halve", "increment", "decrement", "crement", "sign"};

static int64_t unary_int(int op, int64_t x) {
    switch (op) {
    case U_INVERT: return -x;
    case U_DOUBLE: return x * 2;
    case U_HALVE: return floordiv(x, 2);
    case U_INC: return x + 1;
    case U_DEC: return x - 1;
    case U_CREMENT: return x == 0 ? 0 : (x > 0 ? x + 1 : x - 1);
    default: return x == 0 ? 0 : (x > 0 ? 1 : -1);
    }
}

static tdm_arc_val *unary(tdm_arc_rt *rt, int op, tdm_arc_val *n) {
    const char *who = u_names[op];
    if (arc_is_int(n)) return arc_int(rt, unary_int(op, n->u.i));
    tdm_arc_val *c0 = item(rt, n, 0, who), *c1 = c0 ? item(rt, n, 1, who) : NULL;
    ARC_TRY(c1);
    if (!arc_is_int(c0) || !arc_is_int(c1)) return arc_fail(rt, "%s: components must be ints", who);
    return arc_ipair(rt, unary_int(op, c0->u.i), unary_int(op, c1->u.i));
}

tdm_arc_val *arc_p_invert(tdm_arc_rt *rt, tdm_arc_val **a) { return unary(rt, U_INVERT, a[0]); }
tdm_arc_val *arc_p_double(tdm_arc_rt *rt, tdm_arc_val **a) { return unary(rt, U_DOUBLE, a[0]); }
tdm_arc_val *arc_p_halve(tdm_arc_rt *rt, tdm_arc_val **a) { return unary(rt, U_HALVE, a[0]); }
tdm_arc_val *arc_p_increment(tdm_arc_rt *rt, tdm_arc_val **a) { return unary(rt, U_INC, a[0]); }
tdm_arc_val *arc_p_decrement(tdm_arc_rt *rt, tdm_arc_val **a) { return unary(rt, U_DEC, a[0]); }
tdm_arc_val *arc_p_crement(tdm_arc_rt *rt, tdm_arc_val **a) { return unary(rt, U_CREMENT, a[0]); }
tdm_arc_val *arc_p_sign(tdm_arc_rt *rt, tdm_arc_val **a) { return unary(rt, U_SIGN, a[0]); }

tdm_arc_val *arc_p_even(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t n;
    ARC_TRYI(arc_get_int(rt, a[0], &n, "even"));
    return arc_bool(floormod(n, 2) == 0);
}

tdm_arc_val *arc_p_positive(tdm_arc_rt *rt, tdm_arc_val **a) {
    int64_t n;
    ARC_TRYI(arc_get_int(rt, a[0], &n, "positive"));
    return arc_bool(n > 0);
}

tdm_arc_val *arc_p_greater(tdm_arc_rt *rt, tdm_arc_val **a) {
    int r = arc_cmp(rt, a[0], a[1], 1);
    ARC_TRYI(r);
    return arc_bool(r);
}

tdm_arc_val *arc_p_toivec(tdm_arc_rt *rt, tdm_arc_val **a) { return arc_pair(rt, a[0], arc_int(rt, 0)); }
tdm_arc_val *arc_p_tojvec(tdm_arc_rt *rt, tdm_arc_val **a) { return arc_pair(rt, arc_int(rt, 0), a[0]); }
tdm_arc_val *arc_p_astuple(tdm_arc_rt *rt, tdm_arc_val **a) { return arc_pair(rt, a[0], a[1]); }
tdm_arc_val *arc_p_identity(tdm_arc_rt *rt, tdm_arc_val **a) { return a[0]; }
tdm_arc_val *arc_p_flip(tdm_arc_rt *rt, tdm_arc_val **a) { return arc_bool(!arc_truthy(a[0])); }
tdm_arc_val *arc_p_both(tdm_arc_rt *rt, tdm_arc_val **a) { return arc_truthy(a[0]) ? a[1] : a[0]; }
tdm_arc_val *arc_p_either(tdm_arc_rt *rt, tdm_arc_val **a) { return arc_truthy(a[0]) ? a[0] : a[1]; }
tdm_arc_val *arc_p_equality(tdm_arc_rt *rt, tdm_arc_val **a) { return arc_bool(arc_eq(a[0], a[1])); }

tdm_arc_val *arc_p_contained(tdm_arc_rt *rt, tdm_arc_val **a) {
    int r = arc_contains(rt, a[1], a[0]);
    ARC_TRYI(r);
    return arc_bool(r);
}
