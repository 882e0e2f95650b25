/* status.c: tdm_strerror() and the status names, generated from the one TDM_STATUS_LIST, and the
 * thread-local detail message that tells which function and which value caused the last error. */
#include "tandem/tandem.h"

#include <stdarg.h>
#include <stdio.h>

const char *tdm_version(void) { return TDM_VERSION_STRING; }

const char *tdm_strerror(int status) {
    switch (status) {
#define TDM_X_TEXT(name, value, text)                                                                      \
    case value:                                                                                            \
        return text;
        TDM_STATUS_LIST(TDM_X_TEXT)
#undef TDM_X_TEXT
    }
    return "unknown status";
}

const char *tdm_status_name(int status) {
    switch (status) {
#define TDM_X_NAME(name, value, text)                                                                      \
    case value:                                                                                            \
        return #name;
        TDM_STATUS_LIST(TDM_X_NAME)
#undef TDM_X_NAME
    }
    return "TDM_E_UNKNOWN";
}

static _Thread_local char last_error[512];

const char *tdm_last_error(void) { return last_error; }

void tdm_clear_error(void) { last_error[0] = '\0'; }

int tdm_error(int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}
