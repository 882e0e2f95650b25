/* jsonw.c: the service's JSON output. Predictions are the largest and most frequent replies (up to
 * max_predictions objects of some 35 fields), so they are written straight into one buffer in KATO's
 * field order (spec/kato.md 3.7) rather than built as a jansson tree; doubles are printed with the fewest
 * digits that read back as the same double, so a client gets the engine's exact bits. Also Python's
 * str() of metadata values, which KATO stores as text. */
#define _POSIX_C_SOURCE 200809L
#include "server/internal.h"
#include "tandem/seq.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sb_put(sbuf *b, const char *s, size_t n) {
    if (b->failed) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void sb_puts(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

void sb_printf(sbuf *b, const char *fmt, ...) {
    char tmp[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) {
        sb_put(b, tmp, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->failed = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_put(b, big, (size_t)n);
    free(big);
}

/* The escaped body of a JSON string (no quotes) for bytes that are valid UTF-8. */
static void put_escaped(sbuf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        sb_put(b, s + run, i - run);
        run = i + 1;
        char esc[8] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
        switch (c) {
        case '"': sb_put(b, "\\\"", 2); break;
        case '\\': sb_put(b, "\\\\", 2); break;
        case '\n': sb_put(b, "\\n", 2); break;
        case '\t': sb_put(b, "\\t", 2); break;
        case '\r': sb_put(b, "\\r", 2); break;
        default: sb_put(b, esc, 6);
        }
    }
    sb_put(b, s + run, n - run);
}

/* Bytes that are not UTF-8 (a percent-decoded URL echoed in a message, a message cut inside a character)
 * become U+FFFD, so that every reply is valid JSON text. */
void sb_jstr(sbuf *b, const char *s, size_t n) {
    sb_put(b, "\"", 1);
    if (!tdm_seq_utf8_check(s, n)) put_escaped(b, s, n);
    else {
        size_t i = 0, run = 0;
        while (i < n) {
            unsigned char c = (unsigned char)s[i];
            size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
            if (len && i + len <= n && !tdm_seq_utf8_check(s + i, len)) {
                i += len;
                continue;
            }
            put_escaped(b, s + run, i - run);
            sb_put(b, "\\ufffd", 6);
            run = ++i;
        }
        put_escaped(b, s + run, n - run);
    }
    sb_put(b, "\"", 1);
}

void sb_double(sbuf *b, double x) {
    if (!isfinite(x)) {
        sb_put(b, "null", 4);
        return;
    }
    char tmp[40];
    if (x == 0.0 || (fabs(x) < 1e15 && x == (double)(long long)x)) { /* integral: Python writes 2.0 */
        int n = snprintf(tmp, sizeof tmp, "%s%lld.0", signbit(x) && x == 0.0 ? "-" : "", (long long)x);
        sb_put(b, tmp, (size_t)n);
        return;
    }
    int n = 0;
    for (int p = 15; p <= 17; p++) {
        n = snprintf(tmp, sizeof tmp, "%.*g", p, x);
        if (p == 17 || strtod(tmp, NULL) == x) break; /* 17 significant digits always read back */
    }
    sb_put(b, tmp, (size_t)n);
    if (!strpbrk(tmp, ".e")) sb_put(b, ".0", 2);
}

/* Written here rather than by json_dumps so that reals get the shortest round-trip form (jansson writes
 * 17 digits: 0.1 as 0.10000000000000001) and separators match Python's json.dumps. */
void sb_json(sbuf *b, const json_t *j) {
    const char *k;
    json_t *v;
    size_t i = 0;
    switch (json_typeof(j)) {
    case JSON_OBJECT:
        sb_put(b, "{", 1);
        json_object_foreach((json_t *)j, k, v) {
            if (i++) sb_put(b, ", ", 2);
            sb_jstr(b, k, strlen(k));
            sb_put(b, ": ", 2);
            sb_json(b, v);
        }
        sb_put(b, "}", 1);
        break;
    case JSON_ARRAY:
        sb_put(b, "[", 1);
        json_array_foreach(j, i, v) {
            if (i) sb_put(b, ", ", 2);
            sb_json(b, v);
        }
        sb_put(b, "]", 1);
        break;
    case JSON_STRING: sb_jstr(b, json_string_value(j), json_string_length(j)); break;
    case JSON_INTEGER: sb_printf(b, "%lld", (long long)json_integer_value(j)); break;
    case JSON_REAL: sb_double(b, json_real_value(j)); break;
    case JSON_TRUE: sb_put(b, "true", 4); break;
    case JSON_FALSE: sb_put(b, "false", 5); break;
    default: sb_put(b, "null", 4);
    }
}

/* ---- predictions --------------------------------------------------------------------------------------- */

static void sink_put(void *user, const char *s, size_t n) { sb_put((sbuf *)user, s, n); }
static void sink_str(void *user, const char *s, size_t n) { sb_jstr((sbuf *)user, s, n); }
static void sink_num(void *user, double x) { sb_double((sbuf *)user, x); }

void sb_prediction_list(sbuf *b, const tdm_kato_result *r) {
    tdm_kato_json_sink sink = {b, sink_put, sink_str, sink_num};
    tdm_kato_result_write_json(r, TDM_KATO_JSON_LIST, &sink);
}

void sb_predictions(sbuf *b, const tdm_kato_result *r) {
    tdm_kato_json_sink sink = {b, sink_put, sink_str, sink_num};
    tdm_kato_result_write_json(r, TDM_KATO_JSON_OPEN, &sink);
}

