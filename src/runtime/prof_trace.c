/* prof_trace.c: the Chrome trace event export (§6.5), which the Perfetto UI and chrome://tracing load:
 * M events naming the process, each host thread and one pseudo-thread per CUDA stream (tid 1,000,000 +
 * stream), X events for host and device spans, C counters for device and host memory and pressure, and i
 * events for routing decisions and fallbacks. Times are µs with exactly three decimals, printed from
 * integer ns so that nothing is rounded twice and the file is strictly valid JSON. */
#include "runtime/prof_internal.h"
#include "core/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define STREAM_TID_BASE 1000000u

static uint32_t tid_of(const prof_rec *r) { return r->stream >= 0 ? STREAM_TID_BASE + (uint32_t)r->stream : r->tid; }

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    int64_t route;
    uint64_t ns;
} measured;
static int cmp_route(const void *a, const void *b) {
    int64_t x = ((const measured *)a)->route, y = ((const measured *)b)->route;
    return x < y ? -1 : x > y;
}

/* Measured time of route decision id (from the sorted table m), 0 when none was reported. */
static uint64_t measured_of(const measured *m, size_t n, int64_t id) {
    measured k = {id, 0}, *hit = m ? bsearch(&k, m, n, sizeof *m, cmp_route) : NULL;
    return hit ? hit->ns : 0;
}

static void metadata(FILE *f, const prof_snap *s, int *first) {
    uint32_t *tids = tdm_malloc((s->n ? s->n : 1) * sizeof *tids);
    size_t nt = 0;
    if (tids)
        for (size_t i = 0; i < s->n; i++)
            if (s->r[i].kind == PREC_SPAN || s->r[i].kind == PREC_ROUTE || s->r[i].kind == PREC_FALLBACK)
                tids[nt++] = tid_of(&s->r[i]);
    fprintf(f, "\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"tandem\"}}", s->pid);
    *first = 0;
    if (!tids) return;
    qsort(tids, nt, sizeof *tids, cmp_u32);
    for (size_t i = 0; i < nt; i++) {
        if (i && tids[i] == tids[i - 1]) continue;
        if (tids[i] >= STREAM_TID_BASE)
            fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"args\":{\"name\":\"CUDA stream %u\"}}",
                    s->pid, tids[i], tids[i] - STREAM_TID_BASE);
        else
            fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%u,\"args\":{\"name\":\"thread %u\"}}",
                    s->pid, tids[i], tids[i]);
    }
    tdm_free(tids);
}

static void span(FILE *f, const prof_snap *s, const prof_rec *r) {
    fputs(",\n{\"name\":", f);
    prof_json_string(f, prof_snap_name(s, r->name));
    fprintf(f, ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":", tdm_prof_cat_name((tdm_prof_cat)r->cat));
    prof_put_us(f, r->ts);
    fputs(",\"dur\":", f);
    prof_put_us(f, r->dur);
    fprintf(f, ",\"pid\":%d,\"tid\":%u,\"args\":{\"backend\":", s->pid, tid_of(r));
    prof_json_string(f, r->backend ? prof_snap_name(s, r->backend) : "");
    fprintf(f, ",\"work\":%llu,\"h2d_bytes\":%llu,\"d2h_bytes\":%llu,\"mem_used\":%llu,\"route\":%lld,\"id\":%llu,"
               "\"parent\":%llu,\"status\":%d",
            (unsigned long long)r->work, (unsigned long long)r->h2d, (unsigned long long)r->d2h,
            (unsigned long long)r->mem_used, (long long)r->route, (unsigned long long)r->id,
            (unsigned long long)r->parent, r->status);
    if (r->stream >= 0) fprintf(f, ",\"stream\":%d", r->stream);
    fputs("}}", f);
}

static void counter(FILE *f, const prof_snap *s, const char *name, uint64_t ts, const char *k1, uint64_t v1,
                    const char *k2, uint64_t v2) {
    fprintf(f, ",\n{\"name\":\"%s\",\"ph\":\"C\",\"ts\":", name);
    prof_put_us(f, ts);
    fprintf(f, ",\"pid\":%d,\"args\":{\"%s\":%llu", s->pid, k1, (unsigned long long)v1);
    if (k2) fprintf(f, ",\"%s\":%llu", k2, (unsigned long long)v2);
    fputs("}}", f);
}

static void instant(FILE *f, const prof_snap *s, const prof_rec *r, const measured *m, size_t nm) {
    fputs(",\n{\"name\":", f);
    fputs(r->kind == PREC_ROUTE ? "\"route\"" : "\"fallback\"", f);
    fprintf(f, ",\"cat\":\"%s\",\"ph\":\"i\",\"s\":\"t\",\"ts\":", r->kind == PREC_ROUTE ? "route" : "fallback");
    prof_put_us(f, r->ts);
    fprintf(f, ",\"pid\":%d,\"tid\":%u,\"args\":{\"op\":", s->pid, tid_of(r));
    prof_json_string(f, prof_snap_name(s, r->name));
    if (r->kind == PREC_ROUTE) {
        fputs(",\"backend\":", f);
        prof_json_string(f, prof_snap_name(s, r->backend));
        fputs(",\"reason\":", f);
        prof_json_string(f, prof_snap_name(s, (uint32_t)r->status));
        fprintf(f, ",\"route\":%lld,\"predicted_cpu_ns\":%llu,\"predicted_gpu_ns\":%llu,\"measured_ns\":%llu",
                (long long)r->route, (unsigned long long)r->work, (unsigned long long)r->h2d,
                (unsigned long long)measured_of(m, nm, r->route));
    } else {
        fputs(",\"from\":", f);
        prof_json_string(f, prof_snap_name(s, (uint32_t)r->work));
        fputs(",\"to\":", f);
        prof_json_string(f, prof_snap_name(s, r->backend));
        fputs(",\"reason\":", f);
        prof_json_string(f, prof_snap_name(s, (uint32_t)r->status));
    }
    fprintf(f, ",\"parent\":%llu}}", (unsigned long long)r->parent);
}

int tdm_prof_export_trace(const char *path) {
    if (!path) return tdm_error(TDM_E_INVAL, "tdm_prof_export_trace: path is NULL");
    prof_snap s;
    int rc = prof_snapshot(&s);
    if (rc) return rc;
    FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
    if (!f) {
        prof_snap_free(&s);
        return tdm_error(TDM_E_IO, "tdm_prof_export_trace: cannot write %s: %s", path, strerror(errno));
    }
    char device[256], driver[64], cpu[128];
    prof_device_info(device, sizeof device, driver, sizeof driver);
    tdm_cpu_model(cpu, sizeof cpu);
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"version\":", f);
    prof_json_string(f, tdm_version());
    fputs(",\"device\":", f);
    prof_json_string(f, device);
    fputs(",\"driver\":", f);
    prof_json_string(f, driver);
    fputs(",\"cpu\":", f);
    prof_json_string(f, cpu);
    fprintf(f, ",\"dropped\":%llu,\"recorded\":%llu,\"kept\":%zu,\"threads\":%u},\"traceEvents\":[",
            (unsigned long long)s.dropped, (unsigned long long)s.recorded, s.n, s.threads);
    int first;
    metadata(f, &s, &first);
    measured *m = tdm_malloc((s.n ? s.n : 1) * sizeof *m);
    size_t nm = 0;
    for (size_t i = 0; m && i < s.n; i++)
        if (s.r[i].kind == PREC_MEASURED) m[nm++] = (measured){s.r[i].route, s.r[i].work};
    if (m) qsort(m, nm, sizeof *m, cmp_route);
    for (size_t i = 0; i < s.n; i++) {
        const prof_rec *r = &s.r[i];
        switch ((prec_kind)r->kind) {
        case PREC_SPAN:
            span(f, &s, r);
            if (r->stream < 0 && r->host_mem) counter(f, &s, "host memory", r->ts + r->dur, "bytes", r->host_mem, NULL, 0);
            break;
        case PREC_MEM:
            counter(f, &s, "device memory", r->ts, "used", r->work, "reserved", r->h2d);
            if (r->status >= 0) counter(f, &s, "pressure", r->ts, "level", (uint64_t)r->status, NULL, 0);
            break;
        case PREC_ROUTE:
        case PREC_FALLBACK: instant(f, &s, r, m, nm); break;
        case PREC_MEASURED: break; /* joined into its decision */
        }
    }
    fputs("\n]}\n", f);
    tdm_free(m);
    int bad = ferror(f);
    if (f != stdout) bad |= fclose(f) != 0;
    else bad |= fflush(f) != 0;
    prof_snap_free(&s);
    if (bad) return tdm_error(TDM_E_IO, "tdm_prof_export_trace: error writing %s", path);
    return TDM_OK;
}
