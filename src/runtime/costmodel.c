/* costmodel.c: the cost model's arithmetic and its file. Fitting T = t0 + W*a + levels*lambda to measured
 * medians by least squares with relative weights (a fit that is 10 % off at 10 us matters as much as one
 * 10 % off at 10 ms), the trust rule, predictions (log-log interpolation between measured medians, the
 * fit outside them), the machine key, and JSON persistence written atomically so that a crash or a
 * concurrent writer never leaves half a model behind. A model made under another key is refused
 * (TDM_E_STALE): another machine's numbers would route wrongly with full confidence. */
#define _GNU_SOURCE
#include "runtime/router_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MIN_RUNS 10
#define MAX_RESIDUAL 0.25

/* Solves the k x k system a x = b (k <= 3) by Gaussian elimination with partial pivoting; -1 if singular. */
static int solve(double a[3][3], double b[3], int k, double x[3]) {
    for (int c = 0; c < k; c++) {
        int p = c;
        for (int r = c + 1; r < k; r++)
            if (fabs(a[r][c]) > fabs(a[p][c])) p = r;
        if (!(fabs(a[p][c]) > 1e-300)) return -1;
        if (p != c) {
            for (int j = 0; j < k; j++) {
                double t = a[c][j];
                a[c][j] = a[p][j], a[p][j] = t;
            }
            double t = b[c];
            b[c] = b[p], b[p] = t;
        }
        for (int r = c + 1; r < k; r++) {
            double f = a[r][c] / a[c][c];
            for (int j = c; j < k; j++) a[r][j] -= f * a[c][j];
            b[r] -= f * b[c];
        }
    }
    for (int c = k - 1; c >= 0; c--) {
        double s = b[c];
        for (int j = c + 1; j < k; j++) s -= a[c][j] * x[j];
        x[c] = s / a[c][c];
    }
    return 0;
}

/* Weighted least squares over the parameters in `use` (bit 0 t0, 1 slope, 2 lambda); the others are 0.
 * Columns are scaled to their largest value so that W in the millions does not swamp t0. */
static int lsq(const double *w, const double *l, const double *t, size_t n, unsigned use, double p[3]) {
    int idx[3], k = 0;
    for (int j = 0; j < 3; j++)
        if (use & (1u << j)) idx[k++] = j;
    double scale[3] = {1, 1, 1};
    for (size_t i = 0; i < n; i++) {
        double col[3] = {1.0, w[i], l[i]};
        for (int j = 0; j < 3; j++)
            if (fabs(col[j]) > scale[j]) scale[j] = fabs(col[j]);
    }
    double a[3][3] = {{0}}, b[3] = {0}, x[3] = {0};
    for (size_t i = 0; i < n; i++) {
        double col[3] = {1.0 / scale[0], w[i] / scale[1], l[i] / scale[2]}, inv = 1.0 / t[i];
        for (int r = 0; r < k; r++) {
            for (int c = 0; c < k; c++) a[r][c] += col[idx[r]] * col[idx[c]] * inv * inv;
            b[r] += col[idx[r]] * inv; /* target t_i / t_i = 1 */
        }
    }
    if (solve(a, b, k, x)) return -1;
    p[0] = p[1] = p[2] = 0.0;
    for (int r = 0; r < k; r++) p[idx[r]] = x[r] / scale[idx[r]];
    return 0;
}

static int cmp_double(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* How well the buckets predict each other: each interior bucket from its two neighbours by the log-log
 * interpolation tdm_costmodel_predict uses, median relative error; -1 below 3 buckets. A CPU class whose
 * time bends where threads start or caches overflow fits no line, yet its buckets still predict the
 * sizes between them. */
static double interp_residual(const tdm_cost_class *c) {
    if (c->nbuckets < 3) return -1.0;
    double rel[TDM_COST_BUCKETS];
    size_t k = 0;
    for (uint32_t i = 1; i + 1 < c->nbuckets; i++) {
        double x0 = log(c->bucket_work[i - 1]), x1 = log(c->bucket_work[i + 1]), x = log(c->bucket_work[i]);
        if (!(c->bucket_work[i - 1] > 0.0) || !(x1 > x0)) continue;
        double y = exp(log(c->bucket_us[i - 1]) + (x - x0) / (x1 - x0) * (log(c->bucket_us[i + 1]) - log(c->bucket_us[i - 1])));
        rel[k++] = fabs(y - c->bucket_us[i]) / c->bucket_us[i];
    }
    if (!k) return -1.0;
    qsort(rel, k, sizeof *rel, cmp_double);
    return k % 2 ? rel[k / 2] : 0.5 * (rel[k / 2 - 1] + rel[k / 2]);
}

int tdm_costmodel_fit(tdm_cost_class *c, const double *work, const double *levels, const double *us, size_t n,
                      uint32_t runs) {
    if (!c || !work || !us || !n || n > 64) return tdm_error(TDM_E_INVAL, "tdm_costmodel_fit: %zu points", n);
    double lv[64];
    int any_levels = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(us[i] > 0.0) || !(work[i] >= 0.0) || !isfinite(us[i]) || !isfinite(work[i]))
            return tdm_error(TDM_E_INVAL, "tdm_costmodel_fit: point %zu has work %g, time %g", i, work[i], us[i]);
        lv[i] = levels ? levels[i] : 0.0;
        if (!(lv[i] >= 0.0)) return tdm_error(TDM_E_INVAL, "tdm_costmodel_fit: point %zu has levels %g", i, lv[i]);
        any_levels |= lv[i] > 0.0;
    }
    /* Non-negative parameters by elimination: fit all, drop the most negative, refit. */
    unsigned use = any_levels ? 7u : 3u;
    double p[3] = {0, 0, 0};
    if (n == 1) use = 1u;
    for (int iter = 0; iter < 3; iter++) {
        if (!use || lsq(work, lv, us, n, use, p)) {
            p[0] = p[1] = p[2] = 0.0;
            break;
        }
        int worst = -1;
        for (int j = 0; j < 3; j++)
            if ((use & (1u << j)) && p[j] < 0.0 && (worst < 0 || p[j] < p[worst])) worst = j;
        if (worst < 0) break;
        use &= ~(1u << worst);
        p[0] = p[1] = p[2] = 0.0;
    }
    memset(c, 0, sizeof *c);
    c->t0_us = p[0], c->us_per_work = p[1], c->lambda_us = p[2];
    double rel[64];
    for (size_t i = 0; i < n; i++) {
        double pred = p[0] + p[1] * work[i] + p[2] * lv[i];
        rel[i] = fabs(pred - us[i]) / us[i];
    }
    qsort(rel, n, sizeof *rel, cmp_double);
    c->residual = n % 2 ? rel[n / 2] : 0.5 * (rel[n / 2 - 1] + rel[n / 2]);
    /* Buckets: the level-free medians in ascending work (duplicates of one work keep the first). */
    size_t order[64], m = 0;
    for (size_t i = 0; i < n; i++)
        if (lv[i] == 0.0) order[m++] = i;
    for (size_t i = 1; i < m; i++)
        for (size_t j = i; j > 0 && work[order[j]] < work[order[j - 1]]; j--) {
            size_t t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    for (size_t i = 0; i < m && c->nbuckets < TDM_COST_BUCKETS; i++) {
        if (c->nbuckets && work[order[i]] == c->bucket_work[c->nbuckets - 1]) continue;
        c->bucket_work[c->nbuckets] = work[order[i]];
        c->bucket_us[c->nbuckets++] = us[order[i]];
    }
    c->samples = runs;
    c->interp_residual = interp_residual(c);
    c->trusted = runs >= MIN_RUNS && n >= 2 &&
                 (c->residual <= MAX_RESIDUAL || (c->nbuckets >= 4 && c->interp_residual <= MAX_RESIDUAL));
    return TDM_OK;
}

double tdm_costmodel_predict(const tdm_costmodel *m, tdm_op op, int gpu, double work, double levels) {
    if (!m || op < 0 || op >= TDM_OP_COUNT) return -1.0;
    const tdm_cost_class *c = &m->cls[op][gpu ? 1 : 0];
    if (!c->trusted) return -1.0;
    uint32_t nb = c->nbuckets;
    if (levels == 0.0 && c->lambda_us == 0.0 && nb >= 2 && work >= c->bucket_work[0] && work <= c->bucket_work[nb - 1] &&
        c->bucket_work[0] > 0.0) {
        uint32_t i = 1;
        while (i < nb - 1 && work > c->bucket_work[i]) i++;
        double x0 = log(c->bucket_work[i - 1]), x1 = log(c->bucket_work[i]);
        double y0 = log(c->bucket_us[i - 1]), y1 = log(c->bucket_us[i]);
        double f = x1 > x0 ? (log(work) - x0) / (x1 - x0) : 0.0;
        return exp(y0 + f * (y1 - y0));
    }
    return c->t0_us + c->us_per_work * work + c->lambda_us * levels;
}

void tdm_costmodel_machine_key(const tdm_ctx *ctx, char *buf, size_t cap) {
    size_t at = 0;
    const tdm_backend *cpu = ctx->backends[0];
    at += (size_t)snprintf(buf + at, cap - at, "tandem %s; cpu %s; cores %ld; TANDEM_THREADS %d; blas none",
                           tdm_version(), cpu->description, sysconf(_SC_NPROCESSORS_ONLN), ctx->cfg.threads);
    for (int i = 1; i < ctx->nbackends && at < cap; i++) {
        const tdm_backend *b = ctx->backends[i];
        at += (size_t)snprintf(buf + at, cap - at, "; %s %s %s", b->name, b->description, b->identity);
    }
}

/* ---- JSON ------------------------------------------------------------------------------------------------ */

static json_t *class_json(const tdm_cost_class *c) {
    json_t *b = json_array();
    for (uint32_t i = 0; i < c->nbuckets; i++)
        json_array_append_new(b, json_pack("[f,f]", c->bucket_work[i], c->bucket_us[i]));
    return json_pack("{s:b,s:I,s:f,s:f,s:f,s:f,s:o}", "trusted", c->trusted, "samples", (json_int_t)c->samples,
                     "t0_us", c->t0_us, "us_per_work", c->us_per_work, "lambda_us", c->lambda_us, "residual",
                     c->residual, "buckets", b);
}

int tdm_costmodel_save(const tdm_costmodel *m, const char *path) {
    if (!m || !path || !*path) return tdm_error(TDM_E_INVAL, "tdm_costmodel_save: no path");
    json_t *classes = json_array();
    for (int op = 0; op < TDM_OP_COUNT; op++)
        for (int g = 0; g < 2; g++) {
            const tdm_cost_class *c = &m->cls[op][g];
            if (!c->samples && !c->trusted) continue;
            json_t *j = class_json(c);
            json_object_set_new(j, "op", json_string(tdm_op_name((tdm_op)op)));
            json_object_set_new(j, "backend", json_string(g ? "gpu" : "cpu"));
            json_array_append_new(classes, j);
        }
    json_t *root = json_pack("{s:s,s:i,s:s,s:s,s:{s:b,s:[f,f],s:[f,f]},s:o}", "format", "tandem-costmodel", "version", 1,
                             "key", m->key, "date", m->date, "link", "trusted", m->link_trusted, "h2d", m->h2d.lat_us,
                             m->h2d.us_per_byte, "d2h", m->d2h.lat_us, m->d2h.us_per_byte, "classes", classes);
    if (!root) return tdm_error(TDM_E_NOMEM, "tdm_costmodel_save: cannot build the JSON");
    /* Make the directory (one level is what the default path needs: ~/.cache/tandem). */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        mkdir(dir, 0755);
    }
    char lockp[4200], tmp[4200];
    snprintf(lockp, sizeof lockp, "%s.lock", path);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    int lfd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lfd >= 0) flock(lfd, LOCK_EX);
    int rc = TDM_OK;
    if (json_dump_file(root, tmp, JSON_INDENT(1) | JSON_REAL_PRECISION(17)) != 0)
        rc = tdm_error(TDM_E_IO, "cost model: cannot write %s", tmp);
    else if (rename(tmp, path) != 0)
        rc = tdm_error(TDM_E_IO, "cost model: cannot rename %s to %s: %s", tmp, path, strerror(errno));
    if (rc) unlink(tmp);
    if (lfd >= 0) {
        flock(lfd, LOCK_UN);
        close(lfd);
    }
    json_decref(root);
    return rc;
}

static int read_class(json_t *j, tdm_cost_class *c) {
    int trusted = 0;
    json_int_t samples = 0;
    json_t *b = NULL;
    if (json_unpack(j, "{s:b,s:I,s:F,s:F,s:F,s:F,s:o}", "trusted", &trusted, "samples", &samples, "t0_us", &c->t0_us,
                    "us_per_work", &c->us_per_work, "lambda_us", &c->lambda_us, "residual", &c->residual, "buckets",
                    &b) ||
        !json_is_array(b) || json_array_size(b) > TDM_COST_BUCKETS || samples < 0)
        return -1;
    c->trusted = trusted, c->samples = (uint32_t)samples;
    c->nbuckets = (uint32_t)json_array_size(b);
    for (uint32_t i = 0; i < c->nbuckets; i++)
        if (json_unpack(json_array_get(b, i), "[F,F]", &c->bucket_work[i], &c->bucket_us[i]) || !(c->bucket_us[i] > 0.0))
            return -1;
    if (!(c->t0_us >= 0.0) || !(c->us_per_work >= 0.0) || !(c->lambda_us >= 0.0)) return -1;
    c->interp_residual = interp_residual(c); /* not stored: the buckets determine it */
    return 0;
}

int tdm_costmodel_load(const char *path, const char *key, tdm_costmodel *out) {
    if (!path || !*path || !out) return tdm_error(TDM_E_INVAL, "tdm_costmodel_load: no path");
    if (access(path, F_OK) != 0) return tdm_error(TDM_E_NOTFOUND, "cost model %s: no such file", path);
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    if (!root) return tdm_error(TDM_E_PARSE, "cost model %s: line %d: %s", path, err.line, err.text);
    const char *fmt = NULL, *k = NULL, *date = NULL;
    int version = 0, lt = 0;
    json_t *classes = NULL;
    tdm_costmodel m;
    memset(&m, 0, sizeof m);
    int rc = TDM_OK;
    if (json_unpack(root, "{s:s,s:i,s:s,s:s,s:{s:b,s:[F,F],s:[F,F]},s:o}", "format", &fmt, "version", &version, "key", &k,
                    "date", &date, "link", "trusted", &lt, "h2d", &m.h2d.lat_us, &m.h2d.us_per_byte, "d2h", &m.d2h.lat_us,
                    &m.d2h.us_per_byte, "classes", &classes) ||
        strcmp(fmt, "tandem-costmodel") || !json_is_array(classes))
        rc = tdm_error(TDM_E_CORRUPT, "cost model %s: not a tandem cost model", path);
    else if (version != 1)
        rc = tdm_error(TDM_E_VERSION, "cost model %s: version %d, expected 1", path, version);
    else if (key && strcmp(k, key))
        rc = tdm_error(TDM_E_STALE, "cost model %s was made under another key (%s), not this machine's (%s)", path, k, key);
    for (size_t i = 0; !rc && i < json_array_size(classes); i++) {
        json_t *j = json_array_get(classes, i);
        const char *op = json_string_value(json_object_get(j, "op"));
        const char *be = json_string_value(json_object_get(j, "backend"));
        int found = -1;
        for (int o = 0; op && o < TDM_OP_COUNT && found < 0; o++)
            if (!strcmp(op, tdm_op_name((tdm_op)o))) found = o;
        if (found < 0 || !be || (strcmp(be, "cpu") && strcmp(be, "gpu"))) continue; /* an op this build lacks */
        if (read_class(j, &m.cls[found][!strcmp(be, "gpu")]))
            rc = tdm_error(TDM_E_CORRUPT, "cost model %s: class %s/%s is malformed", path, op, be);
    }
    if (!rc) {
        snprintf(m.key, sizeof m.key, "%s", k);
        snprintf(m.date, sizeof m.date, "%s", date);
        m.link_trusted = lt;
        *out = m;
    }
    json_decref(root);
    return rc;
}

void tdm_costmodel_stamp(tdm_costmodel *m) {
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
