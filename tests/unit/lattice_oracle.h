/* lattice_oracle.h: the closed-form shortest path of a d-dimensional lattice (spec section 3), shared by
 * the unit tests and the cross-backend driver: dimension by dimension, first every coordinate that must
 * fall (from the outermost), then every one that must rise (from the innermost), which is the path the
 * tie rule picks. Header-only (static inline) test code. */
#ifndef TANDEM_TESTS_LATTICE_ORACLE_H
#define TANDEM_TESTS_LATTICE_ORACLE_H

#include <stdint.h>

static inline int64_t ipow(int64_t b, int e) {
    int64_t r = 1;
    while (e--) r *= b;
    return r;
}

/* The path from s to t on dD/L into out, which must hold d * (L - 1) + 1 vertices (the farthest pair);
 * returns the hop count. */
static inline int64_t oracle_path(int d, int64_t L, int64_t s, int64_t t, int64_t *out) {
    int64_t cs[32], ct[32], st[32];
    st[d - 1] = 1;
    for (int i = d - 2; i >= 0; i--) st[i] = st[i + 1] * L;
    for (int i = 0; i < d; i++) cs[i] = (s / st[i]) % L, ct[i] = (t / st[i]) % L;
    int64_t n = 0, v = s;
    out[n++] = v;
    for (int i = 0; i < d; i++)
        while (cs[i] > ct[i]) cs[i]--, v -= st[i], out[n++] = v;
    for (int i = d - 1; i >= 0; i--)
        while (cs[i] < ct[i]) cs[i]++, v += st[i], out[n++] = v;
    return n - 1;
}

#endif
