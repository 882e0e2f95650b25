/* name.c: KATO's pattern names. KATO names a pattern by the SHA-1 of Python's str() of its list of event
 * lists (spec/kato.md 1.3), so the name depends on every detail of Python's string repr: the choice of
 * quote, the escapes, and which non-ASCII code points count as printable (kept verbatim) or not (escaped).
 * The last comes from CPython's Unicode database, as a generated table (pyrepr_table.h). SHA-1 is
 * OpenSSL's libcrypto. */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t and clock_gettime under -std=c11 */
#include "kato/kato_internal.h"

#include <openssl/evp.h>
#include <string.h>

#include "kato/pyrepr_table.h"

/* A growing byte buffer for the repr. */
typedef struct {
    char *p;
    size_t n, cap;
} buf;

static int put(buf *b, const char *s, size_t len) {
    if (tdm_grow((void **)&b->p, &b->cap, b->n + len + 1, 1)) return -1;
    memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = '\0';
    return 0;
}

static int printable(uint32_t cp) {
    size_t lo = 0, hi = sizeof pyrepr_nonprintable / sizeof *pyrepr_nonprintable;
    while (lo < hi) { /* binary search over sorted disjoint ranges */
        size_t mid = (lo + hi) / 2;
        if (cp < pyrepr_nonprintable[mid][0]) hi = mid;
        else if (cp > pyrepr_nonprintable[mid][1]) lo = mid + 1;
        else return 0;
    }
    return 1;
}

/* Decodes one code point of valid UTF-8 at s (the caller checked validity); returns its byte length. */
static size_t decode1(const unsigned char *s, uint32_t *cp) {
    if (s[0] < 0x80) return *cp = s[0], 1;
    if (s[0] < 0xE0) return *cp = (uint32_t)(s[0] & 0x1F) << 6 | (s[1] & 0x3F), 2;
    if (s[0] < 0xF0) return *cp = (uint32_t)(s[0] & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F), 3;
    *cp = (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 | (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F);
    return 4;
}

/* Python's repr() of one str, appended to b. */
static int repr_str(buf *b, const char *s, size_t len) {
    int has_sq = memchr(s, '\'', len) != NULL, has_dq = memchr(s, '"', len) != NULL;
    char quote = has_sq && !has_dq ? '"' : '\'';
    if (put(b, &quote, 1)) return -1;
    for (size_t i = 0; i < len;) {
        uint32_t cp;
        size_t k = decode1((const unsigned char *)s + i, &cp);
        char esc[16];
        int rc;
        if (cp == (uint32_t)quote || cp == '\\') esc[0] = '\\', esc[1] = (char)cp, rc = put(b, esc, 2);
        else if (cp == '\t') rc = put(b, "\\t", 2);
        else if (cp == '\n') rc = put(b, "\\n", 2);
        else if (cp == '\r') rc = put(b, "\\r", 2);
        else if (cp < 0x20 || cp == 0x7F) rc = put(b, esc, (size_t)snprintf(esc, sizeof esc, "\\x%02x", cp));
        else if (cp < 0x7F || printable(cp)) rc = put(b, s + i, k);
        else if (cp <= 0xFF) rc = put(b, esc, (size_t)snprintf(esc, sizeof esc, "\\x%02x", cp));
        else if (cp <= 0xFFFF) rc = put(b, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x", cp));
        else rc = put(b, esc, (size_t)snprintf(esc, sizeof esc, "\\U%08x", cp));
        if (rc) return -1;
        i += k;
    }
    return put(b, &quote, 1);
}

int tdm_kato_repr(const tdm_kato_event *events, size_t nevents, char **out, size_t *len) {
    if (!out || !len || (nevents && !events)) return tdm_error(TDM_E_INVAL, "tdm_kato_repr: NULL argument");
    for (size_t e = 0; e < nevents; e++) {
        if (events[e].n && (!events[e].syms || !events[e].lens))
            return tdm_error(TDM_E_INVAL, "tdm_kato_repr: event %zu has NULL symbols", e);
        for (size_t i = 0; i < events[e].n; i++) {
            if (!events[e].syms[i] && events[e].lens[i])
                return tdm_error(TDM_E_INVAL, "tdm_kato_repr: event %zu symbol %zu is NULL", e, i);
            if (tdm_seq_utf8_check(events[e].syms[i], events[e].lens[i])) {
                char msg[200];
                snprintf(msg, sizeof msg, "%s", tdm_last_error());
                return tdm_error(TDM_E_UTF8, "event %zu symbol %zu: %s", e, i, msg);
            }
        }
    }
    buf b = {0};
    int bad = put(&b, "[", 1);
    for (size_t e = 0; e < nevents && !bad; e++) {
        bad = put(&b, e ? ", [" : "[", e ? 3 : 1);
        for (size_t i = 0; i < events[e].n && !bad; i++)
            bad = (i && put(&b, ", ", 2)) || repr_str(&b, events[e].syms[i] ? events[e].syms[i] : "", events[e].lens[i]);
        if (!bad) bad = put(&b, "]", 1);
    }
    if (!bad) bad = put(&b, "]", 1);
    if (bad) {
        tdm_free(b.p);
        return tdm_error(TDM_E_NOMEM, "tdm_kato_repr: no memory");
    }
    *out = b.p;
    *len = b.n;
    return TDM_OK;
}

int tdm_kato_sha1_hex(const void *data, size_t len, char hex[TDM_KATO_NAME_LEN + 1]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!EVP_Digest(data, len, md, &mdlen, EVP_sha1(), NULL) || mdlen != 20)
        return tdm_error(TDM_E_NOMEM, "SHA-1: libcrypto failed");
    static const char digits[] = "0123456789abcdef";
    for (unsigned i = 0; i < 20; i++) hex[2 * i] = digits[md[i] >> 4], hex[2 * i + 1] = digits[md[i] & 15];
    hex[40] = '\0';
    return TDM_OK;
}

int tdm_kato_pattern_name(const tdm_kato_event *events, size_t nevents, char name[TDM_KATO_NAME_LEN + 1]) {
    if (!name) return tdm_error(TDM_E_INVAL, "tdm_kato_pattern_name: name is NULL");
    char *r;
    size_t n;
    int rc = tdm_kato_repr(events, nevents, &r, &n);
    if (rc) return rc;
    rc = tdm_kato_sha1_hex(r, n, name);
    tdm_free(r);
    return rc;
}
