/* prof_summary.c: summaries per (name, backend, category) over a profiler snapshot (calls, total, mean,
 * min, max, nearest-rank p50/p95, bytes moved, share of the session's top-level time), and the text
 * helpers the exporters share, written so that the JSON is strictly valid (escaped names, integers and
 * fixed-point times only: nothing can print NaN or Infinity). */
#include "runtime/prof_internal.h"
#include "core/internal.h"

#include <stdlib.h>
#include <string.h>

void prof_put_us(FILE *f, uint64_t ns) { fprintf(f, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000)); }

/* Length of a valid UTF-8 sequence at s (1..4), or 0 if s does not start one. */
static int utf8_len(const unsigned char *s) {
    if (s[0] < 0x80) return 1;
    int n = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 : s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    return n;
}

void prof_json_string(FILE *f, const char *str) {
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    fputc('"', f);
    while (*s) {
        unsigned char c = *s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c), s++;
        else if (c < 0x20) fprintf(f, "\\u%04x", c), s++;
        else {
            int n = utf8_len(s);
            if (!n) fputs("\\ufffd", f), s++;
            else fwrite(s, 1, (size_t)n, f), s += n;
        }
    }
    fputc('"', f);
}

void prof_html_text(FILE *f, const char *str) {
    /* Names come from callers: markup characters are escaped, control characters become U+FFFD (HTML
     * forbids most of them) and so do bytes that are not UTF-8, so the page is always valid UTF-8. */
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    while (*s) {
        int n = utf8_len(s);
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else if (!n || *s < 0x20 || *s == 0x7f) fputs("&#xfffd;", f);
        else fwrite(s, 1, (size_t)n, f);
        s += n ? n : 1;
    }
}

typedef struct {
    uint32_t name, backend;
    uint8_t cat;
    uint64_t dur, bytes;
} item;

static int by_key(const void *a, const void *b) {
    const item *x = a, *y = b;
    if (x->name != y->name) return x->name < y->name ? -1 : 1;
    if (x->backend != y->backend) return x->backend < y->backend ? -1 : 1;
    if (x->cat != y->cat) return x->cat < y->cat ? -1 : 1;
    return x->dur < y->dur ? -1 : x->dur > y->dur;
}

static int by_total(const void *a, const void *b) {
    const tdm_prof_summary *x = a, *y = b;
    if (x->total != y->total) return x->total > y->total ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    c = strcmp(x->backend, y->backend);
    return c ? c : (int)x->cat - (int)y->cat;
}

/* Nearest rank: the smallest value with at least q of the sample at or below it. */
static uint64_t rank(const item *v, size_t n, double q) {
    size_t k = (size_t)(q * (double)n + 0.999999999);
    if (k < 1) k = 1;
    if (k > n) k = n;
    return v[k - 1].dur;
}

int prof_summarize_snap(const prof_snap *s, tdm_prof_summary **rows, size_t *nrows) {
    *rows = NULL;
    *nrows = 0;
    item *it = tdm_malloc((s->n ? s->n : 1) * sizeof *it);
    if (!it) return tdm_error(TDM_E_NOMEM, "profiler: no memory for summaries");
    size_t n = 0;
    uint64_t top = 0;
    for (size_t i = 0; i < s->n; i++) {
        const prof_rec *r = &s->r[i];
        if (r->kind != PREC_SPAN) continue;
        it[n++] = (item){r->name, r->backend, r->cat, r->dur, r->h2d + r->d2h};
        if (!r->parent && r->stream < 0) top += r->dur;
    }
    qsort(it, n, sizeof *it, by_key);
    size_t groups = 0;
    for (size_t i = 0; i < n; i++)
        groups += !i || it[i].name != it[i - 1].name || it[i].backend != it[i - 1].backend || it[i].cat != it[i - 1].cat;
    tdm_prof_summary *out = tdm_calloc(groups ? groups : 1, sizeof *out);
    if (!out) {
        tdm_free(it);
        return tdm_error(TDM_E_NOMEM, "profiler: no memory for %zu summary rows", groups);
    }
    size_t g = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        tdm_prof_summary *o = &out[g++];
        o->name = prof_snap_name(s, it[i].name);
        o->backend = it[i].backend ? prof_snap_name(s, it[i].backend) : "";
        o->cat = (tdm_prof_cat)it[i].cat;
        o->min = it[i].dur;
        for (; j < n && it[j].name == it[i].name && it[j].backend == it[i].backend && it[j].cat == it[i].cat; j++) {
            o->calls++;
            o->total += it[j].dur;
            o->bytes += it[j].bytes;
        }
        o->max = it[j - 1].dur; /* sorted by duration inside the group */
        o->mean = (double)o->total / (double)o->calls;
        o->p50 = rank(it + i, j - i, 0.50);
        o->p95 = rank(it + i, j - i, 0.95);
        o->share = top ? (double)o->total / (double)top : 0.0;
        i = j;
    }
    tdm_free(it);
    qsort(out, groups, sizeof *out, by_total);
    *rows = out;
    *nrows = groups;
    return TDM_OK;
}

int tdm_prof_summarize(tdm_prof_summary **rows, size_t *n) {
    if (!rows || !n) return tdm_error(TDM_E_INVAL, "tdm_prof_summarize: NULL argument");
    prof_snap s;
    int rc = prof_snapshot(&s);
    if (rc) return rc;
    rc = prof_summarize_snap(&s, rows, n);
    prof_snap_free(&s);
    return rc;
}
