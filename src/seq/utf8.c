/* utf8.c: strict UTF-8 validation and decoding. Symbols are arbitrary UTF-8 strings; the character
 * metric needs their code points, and bad input must be rejected with the offending byte offset. */
#include "seq/seq_internal.h"

/* Length of the well-formed sequence starting at s[i] (1..4), or 0 if malformed (RFC 3629 table). */
static size_t seq_len(const unsigned char *s, size_t len, size_t i, uint32_t *cp) {
    unsigned c = s[i];
    if (c < 0x80) return *cp = c, 1;
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;
    uint32_t v;
    if (c >= 0xC2 && c <= 0xDF) n = 2, v = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3, v = c & 0x0F;
        if (c == 0xE0) lo = 0xA0;       /* no overlongs */
        else if (c == 0xED) hi = 0x9F;  /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4, v = c & 0x07;
        if (c == 0xF0) lo = 0x90;
        else if (c == 0xF4) hi = 0x8F;  /* nothing above U+10FFFF */
    } else
        return 0;
    if (len - i < n) return 0;
    for (size_t k = 1; k < n; k++) {
        unsigned b = s[i + k];
        if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return 0;
        v = (v << 6) | (b & 0x3F);
    }
    *cp = v;
    return n;
}

int tdm_seq_utf8_check(const char *s, size_t len) {
    const unsigned char *u = (const unsigned char *)s;
    uint32_t cp;
    for (size_t i = 0; i < len;) {
        size_t n = seq_len(u, len, i, &cp);
        if (!n) return tdm_error(TDM_E_UTF8, "invalid UTF-8 at byte %zu (0x%02X)", i, u[i]);
        i += n;
    }
    return TDM_OK;
}

size_t tdm_seq_utf8_decode(const char *s, size_t len, uint32_t *out) {
    const unsigned char *u = (const unsigned char *)s;
    size_t k = 0;
    for (size_t i = 0; i < len;) {
        size_t n = seq_len(u, len, i, &out[k]);
        if (!n) break; /* callers pass validated text */
        i += n;
        k++;
    }
    return k;
}
