/* codec.h: the byte encoding of the store's records (little-endian integers, doubles as their IEEE bits,
 * strings as a 32-bit length and the bytes). The writer grows one buffer; the reader checks every length
 * against what is left, so a damaged record is reported, never read past. Private to src/store. */
#ifndef TANDEM_STORE_CODEC_H
#define TANDEM_STORE_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/internal.h"

typedef struct {
    unsigned char *p;
    size_t n, cap;
    int failed; /* no memory at some point: the record is incomplete */
} enc;

static inline void enc_bytes(enc *e, const void *b, size_t n) {
    if (e->failed) return;
    if (tdm_grow((void **)&e->p, &e->cap, e->n + n + 1, 1)) {
        e->failed = 1;
        return;
    }
    if (n) memcpy(e->p + e->n, b, n);
    e->n += n;
}

static inline void enc_u64(enc *e, uint64_t v) {
    unsigned char b[8];
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
    enc_bytes(e, b, 8);
}

static inline void enc_u32(enc *e, uint32_t v) {
    unsigned char b[4];
    for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
    enc_bytes(e, b, 4);
}

static inline void enc_f64(enc *e, double d) {
    uint64_t v;
    memcpy(&v, &d, 8);
    enc_u64(e, v);
}

static inline void enc_str(enc *e, const char *s, size_t n) {
    enc_u32(e, (uint32_t)n);
    enc_bytes(e, s, n);
}

typedef struct {
    const unsigned char *p;
    size_t n, at;
    int bad; /* ran past the end */
} dec;

static inline const unsigned char *dec_take(dec *d, size_t n) {
    if (d->bad || n > d->n - d->at) {
        d->bad = 1;
        return NULL;
    }
    const unsigned char *r = d->p + d->at;
    d->at += n;
    return r;
}

static inline uint64_t dec_u64(dec *d) {
    const unsigned char *b = dec_take(d, 8);
    uint64_t v = 0;
    for (int i = 7; b && i >= 0; i--) v = v << 8 | b[i];
    return v;
}

static inline uint32_t dec_u32(dec *d) {
    const unsigned char *b = dec_take(d, 4);
    uint32_t v = 0;
    for (int i = 3; b && i >= 0; i--) v = v << 8 | b[i];
    return v;
}

static inline double dec_f64(dec *d) {
    uint64_t v = dec_u64(d);
    double x;
    memcpy(&x, &v, 8);
    return x;
}

/* A string: pointer into the record (not NUL-terminated) and its length. */
static inline const char *dec_str(dec *d, size_t *len) {
    *len = dec_u32(d);
    return (const char *)dec_take(d, *len);
}

#endif
