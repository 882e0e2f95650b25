/* log.c: process-wide logging with a replaceable sink, so an embedding program (or the service) decides
 * where messages go; the default writes one line per message to stderr. */
#include "tandem/tandem.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

static void default_sink(tdm_log_level level, const char *msg, void *user) {
    (void)user;
    fprintf(stderr, "tandem: %s: %s\n", tdm_log_level_name(level), msg);
}

/* The sink and its argument change together; a reader may see a brief mix only if a program swaps sinks
 * while logging from other threads, which the header rules out. */
static tdm_log_fn sink = default_sink;
static void *sink_user;
static atomic_int max_level = TDM_LOG_WARN;

void tdm_log_set_callback(tdm_log_fn fn, void *user) {
    sink_user = fn ? user : NULL;
    sink = fn ? fn : default_sink;
}

void tdm_log_set_level(tdm_log_level level) { atomic_store(&max_level, (int)level); }

tdm_log_level tdm_log_get_level(void) { return (tdm_log_level)atomic_load(&max_level); }

const char *tdm_log_level_name(tdm_log_level level) {
    switch (level) {
    case TDM_LOG_ERROR: return "error";
    case TDM_LOG_WARN: return "warn";
    case TDM_LOG_INFO: return "info";
    case TDM_LOG_DEBUG: return "debug";
    }
    return "?";
}

void tdm_log(tdm_log_level level, const char *fmt, ...) {
    if ((int)level > atomic_load(&max_level))
        return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    sink(level, buf, sink_user);
}
