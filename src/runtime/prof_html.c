/* prof_html.c: the profiler's HTML report (§6.5): one self-contained file with inline CSS and SVG drawn
 * here, no script and no network: the summary table (with each total in exact ns as a data attribute, so
 * tests can compare it with the trace), time per op split into CPU / GPU compute / H2D / D2H, p50 and p95
 * per op, memory over time with pressure bands, routing counts with a predicted-vs-measured scatter, and a
 * swimlane timeline of at most 20,000 spans (the longest; the trace holds everything). Every number comes
 * from the session's records; a chart with nothing to draw says so instead of drawing a placeholder. */
#include "runtime/prof_internal.h"
#include "core/internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TIMELINE_MAX 20000
#define W 1100 /* chart width in px */

/* One colour per series; the headless-browser test looks for these exact colours in a screenshot. */
static const char *const CAT_COLOR[TDM_PROF_CAT_COUNT] = {"#1f77b4", "#8c564b", "#2ca02c", "#ff7f0e",
                                                          "#d62728", "#7f7f7f", "#9467bd"};
#define C_CPU "#4e79a7"
#define C_GPU "#59a14f"
#define C_H2D "#f28e2b"
#define C_D2H "#e15759"
#define C_P50 "#76b7b2"
#define C_P95 "#edc948"
#define C_HOSTMEM "#bab0ac"
#define C_DEVUSED "#17becf"
#define C_DEVRES "#bcbd22"
#define C_ROUTE "#b07aa1"
#define C_SCATTER "#ff9da7"

static const char *CSS =
    "body{font:14px/1.4 sans-serif;margin:24px;color:#222;background:#fff}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}"
    "table{border-collapse:collapse;font-size:12px}td,th{padding:3px 8px;border-bottom:1px solid #eee;text-align:right}"
    "td:first-child,th:first-child,td.l{text-align:left}.meta{color:#555}.none{color:#888;font-style:italic}"
    "svg{display:block;margin:8px 0}svg text{font:11px sans-serif;fill:#333}"
    ".key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}";

static void fmt_ms(FILE *f, uint64_t ns) { fprintf(f, "%.3f", (double)ns / 1e6); }

static void key(FILE *f, const char *const *names, const char *const *colors, int n) {
    fputs("<div class=\"key\">", f);
    for (int i = 0; i < n; i++) fprintf(f, "<span style=\"background:%s\"></span>%s", colors[i], names[i]);
    fputs("</div>\n", f);
}

/* ---- summary tables ----------------------------------------------------------------------------------- */

static void summary_table(FILE *f, const tdm_prof_summary *rows, size_t n, int init, const char *id) {
    size_t shown = 0;
    for (size_t i = 0; i < n; i++) shown += (rows[i].cat == TDM_PROF_CAT_INIT) == init;
    if (!shown) {
        fprintf(f, "<p class=\"none\" id=\"%s\">no %s spans recorded</p>\n", id, init ? "init" : "operation");
        return;
    }
    fprintf(f, "<table id=\"%s\"><tr><th>op</th><th>backend</th><th>category</th><th>calls</th><th>total ms</th>"
               "<th>mean ms</th><th>min ms</th><th>max ms</th><th>p50 ms</th><th>p95 ms</th><th>bytes</th><th>share</th></tr>\n",
            id);
    for (size_t i = 0; i < n; i++) {
        const tdm_prof_summary *r = &rows[i];
        if ((r->cat == TDM_PROF_CAT_INIT) != init) continue;
        fputs("<tr class=\"row\" data-name=\"", f);
        prof_html_text(f, r->name);
        fputs("\" data-backend=\"", f);
        prof_html_text(f, r->backend);
        fprintf(f, "\" data-cat=\"%s\" data-calls=\"%llu\" data-total-ns=\"%llu\"><td>", tdm_prof_cat_name(r->cat),
                (unsigned long long)r->calls, (unsigned long long)r->total);
        prof_html_text(f, r->name);
        fputs("</td><td class=\"l\">", f);
        prof_html_text(f, r->backend);
        fprintf(f, "</td><td class=\"l\">%s</td><td>%llu</td><td>", tdm_prof_cat_name(r->cat), (unsigned long long)r->calls);
        fmt_ms(f, r->total);
        fprintf(f, "</td><td>%.3f</td><td>", r->mean / 1e6);
        fmt_ms(f, r->min);
        fputs("</td><td>", f);
        fmt_ms(f, r->max);
        fputs("</td><td>", f);
        fmt_ms(f, r->p50);
        fputs("</td><td>", f);
        fmt_ms(f, r->p95);
        fprintf(f, "</td><td>%llu</td><td>%.1f%%</td></tr>\n", (unsigned long long)r->bytes, r->share * 100.0);
    }
    fputs("</table>\n", f);
}

/* ---- time per op, split ------------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    uint64_t part[4]; /* cpu, gpu, h2d, d2h */
    uint64_t p50, p95;
} op_row;

/* Rows per op name from the summaries: CPU = host spans that ran on the CPU (backend "cpu" or none), GPU /
 * H2D / D2H = device spans of those categories. Host spans that drove a device are not CPU work. */
static size_t op_rows(const tdm_prof_summary *s, size_t n, op_row *out) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].cat == TDM_PROF_CAT_INIT) continue;
        int part = s[i].cat == TDM_PROF_CAT_GPU ? 1 : s[i].cat == TDM_PROF_CAT_H2D ? 2 : s[i].cat == TDM_PROF_CAT_D2H ? 3
                   : (!s[i].backend[0] || !strcmp(s[i].backend, "cpu")) ? 0 : -1;
        if (part < 0) continue;
        size_t j = 0;
        while (j < k && strcmp(out[j].name, s[i].name)) j++;
        if (j == k) out[k++] = (op_row){.name = s[i].name};
        out[j].part[part] += s[i].total;
        if (part == 0 && s[i].p95 > out[j].p95) out[j].p50 = s[i].p50, out[j].p95 = s[i].p95;
    }
    return k;
}

static void split_chart(FILE *f, const op_row *ops, size_t n) {
    static const char *names[] = {"CPU", "GPU compute", "H2D", "D2H"}, *colors[] = {C_CPU, C_GPU, C_H2D, C_D2H};
    if (!n) {
        fputs("<p class=\"none\" id=\"chart-split\">no operations recorded</p>\n", f);
        return;
    }
    key(f, names, colors, 4);
    uint64_t max = 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t t = ops[i].part[0] + ops[i].part[1] + ops[i].part[2] + ops[i].part[3];
        if (t > max) max = t;
    }
    int left = 220, bar = 18, h = (int)n * (bar + 6) + 10;
    fprintf(f, "<svg class=\"chart\" id=\"chart-split\" width=\"%d\" height=\"%d\" shape-rendering=\"crispEdges\">\n", W, h);
    for (size_t i = 0; i < n; i++) {
        int y = 5 + (int)i * (bar + 6);
        double x = left;
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6, y + 13);
        prof_html_text(f, ops[i].name);
        fputs("</text>", f);
        for (int p = 0; p < 4; p++) {
            if (!ops[i].part[p]) continue;
            double w = (double)ops[i].part[p] / (double)max * (W - left - 120);
            if (w < 1) w = 1;
            fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s ", x, y, w, bar, colors[p], names[p]);
            fmt_ms(f, ops[i].part[p]);
            fputs(" ms</title></rect>", f);
            x += w;
        }
        fprintf(f, "<text x=\"%.1f\" y=\"%d\">", x + 6, y + 13);
        fmt_ms(f, ops[i].part[0] + ops[i].part[1] + ops[i].part[2] + ops[i].part[3]);
        fputs(" ms</text>\n", f);
    }
    fputs("</svg>\n", f);
}

static void pct_chart(FILE *f, const op_row *ops, size_t n) {
    static const char *names[] = {"p50", "p95"}, *colors[] = {C_P50, C_P95};
    size_t m = 0;
    uint64_t max = 1;
    for (size_t i = 0; i < n; i++)
        if (ops[i].p95) m++, max = ops[i].p95 > max ? ops[i].p95 : max;
    if (!m) {
        fputs("<p class=\"none\" id=\"chart-pct\">no CPU spans recorded</p>\n", f);
        return;
    }
    key(f, names, colors, 2);
    int left = 220, bar = 9, h = (int)m * (2 * bar + 8) + 10, row = 0;
    fprintf(f, "<svg class=\"chart\" id=\"chart-pct\" width=\"%d\" height=\"%d\" shape-rendering=\"crispEdges\">\n", W, h);
    for (size_t i = 0; i < n; i++) {
        if (!ops[i].p95) continue;
        int y = 5 + row++ * (2 * bar + 8);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6, y + 13);
        prof_html_text(f, ops[i].name);
        fputs("</text>", f);
        uint64_t v[2] = {ops[i].p50, ops[i].p95};
        for (int k = 0; k < 2; k++) {
            double w = (double)v[k] / (double)max * (W - left - 120);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/><text x=\"%.1f\" y=\"%d\">", left,
                    y + k * bar, w < 1 ? 1 : w, bar, colors[k], left + (w < 1 ? 1 : w) + 4, y + k * bar + 8);
            fmt_ms(f, v[k]);
            fputs(" ms</text>", f);
        }
        fputc('\n', f);
    }
    fputs("</svg>\n", f);
}

/* (time, value) pairs by time. */
static int cmp_pair(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* ---- memory over time --------------------------------------------------------------------------------- */

static void memory_chart(FILE *f, const prof_snap *s, uint64_t t0, uint64_t t1) {
    uint64_t max = 1;
    size_t nh = 0, nd = 0;
    for (size_t i = 0; i < s->n; i++) {
        const prof_rec *r = &s->r[i];
        if (r->kind == PREC_SPAN && r->stream < 0 && r->host_mem) nh++, max = r->host_mem > max ? r->host_mem : max;
        if (r->kind == PREC_MEM) {
            nd++;
            if (r->work > max) max = r->work;
            if (r->h2d > max) max = r->h2d;
        }
    }
    if (!nh && !nd) {
        fputs("<p class=\"none\" id=\"chart-memory\">no memory samples</p>\n", f);
        return;
    }
    static const char *names[] = {"host memory of the library", "device pool used", "device pool reserved"},
                      *colors[] = {C_HOSTMEM, C_DEVUSED, C_DEVRES};
    key(f, names, colors, 3);
    int left = 70, top = 10, h = 220;
    double span = t1 > t0 ? (double)(t1 - t0) : 1.0, plot = W - left - 20;
#define X(t) (left + ((double)((t) > t0 ? (t) - t0 : 0) / span) * plot)
#define Y(v) (top + h - (double)(v) / (double)max * h)
    fprintf(f, "<svg class=\"chart\" id=\"chart-memory\" width=\"%d\" height=\"%d\">\n", W, h + 40);
    /* Pressure bands: each pressure sample colours the time until the next one. */
    static const char *band[] = {"none", "#fff3bf", "#ffd8a8", "#ffc9c9"};
    int level = 0;
    double from = left;
    for (size_t i = 0; i <= s->n; i++) {
        const prof_rec *r = i < s->n ? &s->r[i] : NULL;
        if (r && !(r->kind == PREC_MEM && r->status >= 0)) continue;
        double x = r ? X(r->ts) : left + plot;
        if (level > 0 && level < 4)
            fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"/>", from, top, x - from, h, band[level]);
        if (r) level = r->status, from = x;
    }
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%.0f\" y2=\"%d\" stroke=\"#999\"/>", left, top + h, left + plot, top + h);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.1f MiB</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>",
            left - 4, top + 8, (double)max / 1048576.0, left - 4, top + h);
    fprintf(f, "<text x=\"%d\" y=\"%d\">0 ms</text><text x=\"%.0f\" y=\"%d\" text-anchor=\"end\">%.3f ms</text>\n", left,
            top + h + 16, left + plot, top + h + 16, span / 1e6);
    uint64_t *hs = nh ? tdm_malloc(nh * 2 * sizeof *hs) : NULL;
    if (hs) { /* host memory as a filled step area over the span ends, in time order */
        size_t m = 0;
        for (size_t i = 0; i < s->n; i++) {
            const prof_rec *r = &s->r[i];
            if (r->kind == PREC_SPAN && r->stream < 0 && r->host_mem) hs[2 * m] = r->ts + r->dur, hs[2 * m + 1] = r->host_mem, m++;
        }
        qsort(hs, m, 2 * sizeof *hs, cmp_pair);
        fprintf(f, "<polygon fill=\"%s\" points=\"%.1f,%d", C_HOSTMEM, X(hs[0]), top + h);
        for (size_t i = 0; i < m; i++) {
            fprintf(f, " %.1f,%.1f", X(hs[2 * i]), Y(hs[2 * i + 1]));
            if (i + 1 < m) fprintf(f, " %.1f,%.1f", X(hs[2 * i + 2]), Y(hs[2 * i + 1]));
        }
        fprintf(f, " %.1f,%.1f %.1f,%d\"/>\n", left + plot, Y(hs[2 * m - 1]), left + plot, top + h);
        tdm_free(hs);
    }
    for (int k = 0; k < 2 && nd; k++) {
        /* A step line: the pool holds a value until the next sample says otherwise. */
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"3\" shape-rendering=\"crispEdges\" points=\"",
                k ? C_DEVRES : C_DEVUSED);
        double last = -1;
        for (size_t i = 0; i < s->n; i++) {
            if (s->r[i].kind != PREC_MEM) continue;
            double y = Y(k ? s->r[i].h2d : s->r[i].work);
            if (last >= 0) fprintf(f, "%.1f,%.1f ", X(s->r[i].ts), last);
            fprintf(f, "%.1f,%.1f ", X(s->r[i].ts), y);
            last = y;
        }
        if (last >= 0) fprintf(f, "%.1f,%.1f", left + plot, last);
        fputs("\"/>\n", f);
    }
#undef X
#undef Y
    fputs("</svg>\n", f);
}

/* Sorted (key, index) pairs, to find a record by id with bsearch. */
typedef struct {
    uint64_t key;
    size_t idx;
} key_idx;
static int cmp_key(const void *a, const void *b) {
    uint64_t x = ((const key_idx *)a)->key, y = ((const key_idx *)b)->key;
    return x < y ? -1 : x > y;
}

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Per op class: how far the chosen backend's predicted time was from the measured one (|p - m| / m). */
static void prediction_errors(FILE *f, const prof_snap *s, const double *px, size_t pts) {
    double *err = tdm_malloc(pts * sizeof *err);
    if (!err) return;
    fputs("<table id=\"prediction-table\"><tr><th>op</th><th>decisions</th><th>median error</th><th>max error</th></tr>\n", f);
    for (size_t i = 0; i < pts; i++) {
        int first = 1;
        for (size_t j = 0; j < i && first; j++) first = px[3 * j + 2] != px[3 * i + 2];
        if (!first) continue;
        size_t k = 0;
        for (size_t j = i; j < pts; j++)
            if (px[3 * j + 2] == px[3 * i + 2]) err[k++] = fabs(px[3 * j] - px[3 * j + 1]) / px[3 * j + 1];
        qsort(err, k, sizeof *err, cmp_dbl);
        double mid = k % 2 ? err[k / 2] : 0.5 * (err[k / 2 - 1] + err[k / 2]);
        fputs("<tr><td>", f);
        prof_html_text(f, prof_snap_name(s, (uint32_t)px[3 * i + 2]));
        fprintf(f, "</td><td>%zu</td><td>%.1f%%</td><td>%.1f%%</td></tr>\n", k, 100.0 * mid, 100.0 * err[k - 1]);
    }
    fputs("</table>\n", f);
    tdm_free(err);
}

/* ---- routing ------------------------------------------------------------------------------------------ */

typedef struct {
    uint32_t op, backend, reason;
    uint8_t kind;
    uint64_t count;
} route_row;

static void routing(FILE *f, const prof_snap *s) {
    route_row *rows = tdm_malloc((s->n ? s->n : 1) * sizeof *rows);
    if (!rows) return;
    size_t k = 0;
    uint64_t max = 1;
    for (size_t i = 0; i < s->n; i++) {
        const prof_rec *r = &s->r[i];
        if (r->kind != PREC_ROUTE && r->kind != PREC_FALLBACK) continue;
        size_t j = 0;
        while (j < k && !(rows[j].op == r->name && rows[j].backend == r->backend && rows[j].reason == (uint32_t)r->status &&
                          rows[j].kind == r->kind))
            j++;
        if (j == k) rows[k++] = (route_row){r->name, r->backend, (uint32_t)r->status, r->kind, 0};
        if (++rows[j].count > max) max = rows[j].count;
    }
    if (!k) {
        fputs("<p class=\"none\" id=\"routing-table\">no routing decisions or fallbacks recorded</p>\n", f);
    } else {
        fputs("<table id=\"routing-table\"><tr><th>event</th><th>op</th><th>backend</th><th>reason</th><th>count</th><th></th></tr>\n", f);
        for (size_t j = 0; j < k; j++) {
            fprintf(f, "<tr data-count=\"%llu\"><td>%s</td><td class=\"l\">", (unsigned long long)rows[j].count,
                    rows[j].kind == PREC_ROUTE ? "decision" : "fallback");
            prof_html_text(f, prof_snap_name(s, rows[j].op));
            fputs("</td><td class=\"l\">", f);
            prof_html_text(f, prof_snap_name(s, rows[j].backend));
            fputs("</td><td class=\"l\">", f);
            prof_html_text(f, prof_snap_name(s, rows[j].reason));
            fprintf(f, "</td><td>%llu</td><td><svg width=\"200\" height=\"12\" shape-rendering=\"crispEdges\"><rect width=\"%.1f\" height=\"12\" fill=\"%s\"/></svg></td></tr>\n",
                    (unsigned long long)rows[j].count, 200.0 * (double)rows[j].count / (double)max, C_ROUTE);
        }
        fputs("</table>\n", f);
    }
    tdm_free(rows);
    /* Predicted against measured, for the decisions that carry both (the cost-model router reports them):
     * the prediction of the backend that was chosen against the time the op then took. */
    key_idx *dec = tdm_malloc((s->n ? s->n : 1) * sizeof *dec);
    double *px = tdm_malloc((s->n ? s->n : 1) * 3 * sizeof *px); /* predicted, measured, op id */
    size_t nd = 0, pts = 0;
    double lo = INFINITY, hi = 0;
    if (dec && px) {
        for (size_t i = 0; i < s->n; i++)
            if (s->r[i].kind == PREC_ROUTE) dec[nd++] = (key_idx){(uint64_t)s->r[i].route, i};
        qsort(dec, nd, sizeof *dec, cmp_key);
        for (size_t i = 0; i < s->n; i++) {
            const prof_rec *r = &s->r[i];
            if (r->kind != PREC_MEASURED || !r->work || r->route < 0) continue;
            key_idx want = {(uint64_t)r->route, 0}, *hit = bsearch(&want, dec, nd, sizeof *dec, cmp_key);
            if (!hit) continue;
            const prof_rec *d = &s->r[hit->idx];
            uint64_t pred = strcmp(prof_snap_name(s, d->backend), "cpu") ? d->h2d : d->work;
            if (!pred) continue;
            px[3 * pts] = (double)pred, px[3 * pts + 1] = (double)r->work, px[3 * pts + 2] = (double)d->name;
            lo = fmin(lo, fmin(px[3 * pts], px[3 * pts + 1])), hi = fmax(hi, fmax(px[3 * pts], px[3 * pts + 1]));
            pts++;
        }
    }
    if (!pts) {
        fputs("<p class=\"none\" id=\"chart-scatter\">no decision carried both a prediction and a measurement "
              "(placement has no cost model yet)</p>\n", f);
    } else {
        int size = 320, pad = 50;
        double llo = log10(lo) - 0.1, lhi = log10(hi) + 0.1;
#define P(v) (pad + (log10(v) - llo) / (lhi - llo) * size)
        fprintf(f, "<svg class=\"chart\" id=\"chart-scatter\" width=\"%d\" height=\"%d\">", size + 2 * pad, size + 2 * pad);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>", pad, pad, size, size);
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ccc\"/>", pad, pad + size, pad + size, pad);
        fprintf(f, "<text x=\"%d\" y=\"%d\">predicted ns (log)</text><text x=\"4\" y=\"%d\">measured ns</text>", pad,
                size + 2 * pad - 10, pad - 6);
        for (size_t i = 0; i < pts; i++)
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>", P(px[3 * i]), 2 * pad + size - P(px[3 * i + 1]),
                    C_SCATTER);
#undef P
        fputs("</svg>\n", f);
        prediction_errors(f, s, px, pts);
    }
    tdm_free(dec);
    tdm_free(px);
}

/* ---- timeline ----------------------------------------------------------------------------------------- */

static const prof_snap *sort_snap;
static int longer(const void *a, const void *b) {
    uint64_t x = sort_snap->r[*(const size_t *)a].dur, y = sort_snap->r[*(const size_t *)b].dur;
    return x > y ? -1 : x < y;
}
static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static void timeline(FILE *f, const prof_snap *s, uint64_t t0, uint64_t t1) {
    size_t *idx = tdm_malloc((s->n ? s->n : 1) * sizeof *idx);
    uint32_t *lanes = tdm_malloc((s->n ? s->n : 1) * sizeof *lanes);
    key_idx *ids = tdm_malloc((s->n ? s->n : 1) * sizeof *ids);
    size_t n = 0, nl = 0, nids = 0;
    if (!idx || !lanes || !ids) goto out;
    for (size_t i = 0; i < s->n; i++)
        if (s->r[i].kind == PREC_SPAN) {
            idx[n++] = i;
            if (s->r[i].id) ids[nids++] = (key_idx){s->r[i].id, i};
        }
    qsort(ids, nids, sizeof *ids, cmp_key);
    if (!n) {
        fputs("<p class=\"none\" id=\"chart-timeline\">no spans recorded</p>\n", f);
        goto out;
    }
    size_t shown = n;
    if (n > TIMELINE_MAX) {
        sort_snap = s;
        qsort(idx, n, sizeof *idx, longer);
        shown = TIMELINE_MAX;
    }
    for (size_t i = 0; i < shown; i++) {
        const prof_rec *r = &s->r[idx[i]];
        lanes[nl++] = r->stream >= 0 ? 1000000u + (uint32_t)r->stream : r->tid;
    }
    qsort(lanes, nl, sizeof *lanes, cmp_u32);
    size_t u = 0;
    for (size_t i = 0; i < nl; i++)
        if (!u || lanes[i] != lanes[u - 1]) lanes[u++] = lanes[i];
    nl = u;
    fprintf(f, "<p class=\"meta\">%zu of %zu spans drawn%s; one lane per thread and per CUDA stream, nested spans stacked by depth.</p>\n",
            shown, n, shown < n ? " (the longest)" : "");
    static const char *names[] = {"op", "user", "gpu", "h2d", "d2h", "init", "sync"};
    key(f, names, (const char *const *)CAT_COLOR, TDM_PROF_CAT_COUNT);
    int left = 130, lane_h = 44, depth_h = 10;
    double span = t1 > t0 ? (double)(t1 - t0) : 1.0, plot = W - left - 10;
    fprintf(f, "<svg class=\"chart\" id=\"chart-timeline\" width=\"%d\" height=\"%d\" shape-rendering=\"crispEdges\">\n", W,
            (int)nl * lane_h + 24);
    for (size_t l = 0; l < nl; l++) {
        fprintf(f, "<text x=\"4\" y=\"%d\">%s %u</text><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#eee\"/>\n",
                (int)l * lane_h + 16, lanes[l] >= 1000000u ? "stream" : "thread",
                lanes[l] >= 1000000u ? lanes[l] - 1000000u : lanes[l], left, (int)(l + 1) * lane_h, W, (int)(l + 1) * lane_h);
    }
    for (size_t i = 0; i < shown; i++) {
        const prof_rec *r = &s->r[idx[i]];
        uint32_t lane_id = r->stream >= 0 ? 1000000u + (uint32_t)r->stream : r->tid;
        size_t l = 0;
        while (lanes[l] != lane_id) l++;
        /* Depth: how many ancestors this span has among the snapshot's spans (up to 3 drawn). */
        int depth = 0;
        for (uint64_t p = r->parent; p && depth < 3; depth++) {
            key_idx k = {p, 0}, *hit = bsearch(&k, ids, nids, sizeof *ids, cmp_key);
            if (!hit) break;
            p = s->r[hit->idx].parent;
        }
        if (r->stream >= 0) depth = 0;
        double x = left + (double)(r->ts - t0) / span * plot, w = (double)r->dur / span * plot;
        fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>", x,
                (int)l * lane_h + 4 + depth * depth_h, w < 1 ? 1 : w, depth_h - 1, CAT_COLOR[r->cat % TDM_PROF_CAT_COUNT]);
        prof_html_text(f, prof_snap_name(s, r->name));
        fputs(" ", f);
        fmt_ms(f, r->dur);
        fputs(" ms</title></rect>\n", f);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\">0 ms</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.3f ms</text>\n", left,
            (int)nl * lane_h + 18, W - 10, (int)nl * lane_h + 18, span / 1e6);
    fputs("</svg>\n", f);
out:
    tdm_free(idx);
    tdm_free(lanes);
    tdm_free(ids);
}

/* ---- the page ----------------------------------------------------------------------------------------- */

int tdm_prof_export_html(const char *path) {
    if (!path) return tdm_error(TDM_E_INVAL, "tdm_prof_export_html: path is NULL");
    prof_snap s;
    int rc = prof_snapshot(&s);
    if (rc) return rc;
    tdm_prof_summary *rows = NULL;
    size_t nrows = 0;
    op_row *ops = NULL;
    rc = prof_summarize_snap(&s, &rows, &nrows);
    if (!rc && !(ops = tdm_calloc(nrows ? nrows : 1, sizeof *ops))) rc = tdm_error(TDM_E_NOMEM, "tdm_prof_export_html: no memory");
    FILE *f = NULL;
    if (!rc && !(f = strcmp(path, "-") ? fopen(path, "w") : stdout))
        rc = tdm_error(TDM_E_IO, "tdm_prof_export_html: cannot write %s: %s", path, strerror(errno));
    if (rc) {
        tdm_free(ops);
        tdm_free(rows);
        prof_snap_free(&s);
        return rc;
    }
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (size_t i = 0; i < s.n; i++) {
        if (s.r[i].ts < t0) t0 = s.r[i].ts;
        if (s.r[i].ts + s.r[i].dur > t1) t1 = s.r[i].ts + s.r[i].dur;
    }
    if (t0 > t1) t0 = t1 = 0;
    char device[256], driver[64], cpu[128];
    prof_device_info(device, sizeof device, driver, sizeof driver);
    tdm_cpu_model(cpu, sizeof cpu);
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tandem profile</title><style>%s</style></head><body>\n", CSS);
    fprintf(f, "<h1>tandem profile</h1>\n<p class=\"meta\">tandem %s &middot; CPU: ", tdm_version());
    prof_html_text(f, cpu);
    fputs(" &middot; device: ", f);
    prof_html_text(f, device);
    if (driver[0]) fputs(" (driver ", f), prof_html_text(f, driver), fputs(")", f);
    fprintf(f, "<br>records: <span id=\"recorded\">%llu</span> made, %zu kept, <span id=\"dropped\">%llu</span> dropped "
               "(the oldest, when the rings were full) &middot; %u threads &middot; %.3f ms from the first record to the last</p>\n",
            (unsigned long long)s.recorded, s.n, (unsigned long long)s.dropped, s.threads, (double)(t1 - t0) / 1e6);
    fputs("<h2>Operations per backend</h2>\n<p class=\"meta\">Sorted by total time; share = total / the summed time of "
          "top-level spans. Device spans (gpu, h2d, d2h) come from CUDA event pairs.</p>\n", f);
    summary_table(f, rows, nrows, 0, "summary-table");
    fputs("<h2>Initialisation</h2>\n", f);
    summary_table(f, rows, nrows, 1, "init-table");
    size_t nops = op_rows(rows, nrows, ops);
    fputs("<h2>Time per op: CPU, GPU compute, H2D, D2H</h2>\n", f);
    split_chart(f, ops, nops);
    fputs("<h2>p50 and p95 per op (CPU spans)</h2>\n", f);
    pct_chart(f, ops, nops);
    fputs("<h2>Memory over time</h2>\n", f);
    memory_chart(f, &s, t0, t1);
    fputs("<h2>Routing and fallbacks</h2>\n", f);
    routing(f, &s);
    fputs("<h2>Timeline</h2>\n", f);
    timeline(f, &s, t0, t1);
    fputs("</body></html>\n", f);
    int bad = ferror(f);
    if (f != stdout) bad |= fclose(f) != 0;
    else bad |= fflush(f) != 0;
    tdm_free(ops);
    tdm_free(rows);
    prof_snap_free(&s);
    if (bad) return tdm_error(TDM_E_IO, "tdm_prof_export_html: error writing %s", path);
    return TDM_OK;
}
