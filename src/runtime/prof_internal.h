/* prof_internal.h: what the profiler's sources share (prof.c records, prof_summary.c summarises,
 * prof_trace.c and prof_html.c export) and the macro library code uses to instrument its operations; not
 * installed. */
#ifndef TANDEM_PROF_INTERNAL_H
#define TANDEM_PROF_INTERNAL_H

#include "tandem/prof.h"

#include <stddef.h>
#include <stdio.h>

/* What a ring slot holds. */
typedef enum {
    PREC_SPAN = 0,     /* host span (stream < 0) or device span */
    PREC_ROUTE = 1,    /* name: op, backend: chosen, status: reason id, work/h2d: predicted cpu/gpu ns, route: id */
    PREC_MEASURED = 2, /* route: decision id, work: measured ns */
    PREC_FALLBACK = 3, /* name: op, work: from id, backend: to id, status: reason id */
    PREC_MEM = 4,      /* work: used, h2d: reserved, status: pressure (-1 none) */
} prec_kind;

/* One record, 112 bytes; the same layout serves every kind (fields as listed above). */
typedef struct {
    uint64_t id, parent;
    uint64_t ts, dur;
    uint64_t work, h2d, d2h;
    uint64_t mem_used, mem_reserved;
    uint64_t host_mem; /* the library's host bytes when a host span ended */
    int64_t route;
    uint32_t name, backend;
    int32_t stream, status;
    uint32_t tid;
    uint8_t kind, cat;
} prof_rec;

/* Every record of the session in start-time order, plus the name table. */
typedef struct {
    prof_rec *r;
    size_t n;
    const char **names; /* names[id]; names[0] = "?" */
    uint32_t nnames;
    uint64_t recorded, dropped;
    uint32_t threads;
    int pid;
} prof_snap;

/* Flushes device sources, then copies every ring. Errors: TDM_E_NOMEM. */
int prof_snapshot(prof_snap *s);
void prof_snap_free(prof_snap *s);
const char *prof_snap_name(const prof_snap *s, uint32_t id);
/* otherData's device and driver texts ("none" / "" when unknown). */
void prof_device_info(char *device, size_t dcap, char *driver, size_t vcap);

/* Summaries over a snapshot (prof_summary.c). */
int prof_summarize_snap(const prof_snap *s, tdm_prof_summary **rows, size_t *n);

/* JSON string literal of s (escaped; control characters as \u00XX; invalid UTF-8 bytes as U+FFFD). */
void prof_json_string(FILE *f, const char *s);
/* HTML text with <, >, &, " escaped. */
void prof_html_text(FILE *f, const char *s);
/* ns as µs with three decimals ("12.345"): exact, no floating point. */
void prof_put_us(FILE *f, uint64_t ns);

/* Library operations: TANDEM_PROF_BEGIN with a category (prof.h). */
#define TDM_PROF_OP_BEGIN(var, name, cat) TANDEM_PROF_BEGIN_CAT(var, name, cat)
#define TDM_PROF_OP_END(var, status)                                                                        \
    do {                                                                                                   \
        if ((var).id) tdm_prof_end((var), (status));                                                       \
    } while (0)

#endif
