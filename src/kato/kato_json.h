/* kato_json.h: Python's str() of a JSON scalar, as KATO stores metadata values, for the two places that
 * read KATO's JSON (the `tandem kato` commands and the service). Header-only so that the library itself
 * needs no JSON type in its API; both users link jansson. */
#ifndef TANDEM_KATO_JSON_H
#define TANDEM_KATO_JSON_H

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tandem/kato.h"

/* Returns a malloc'd string (caller frees with free), or NULL for lists and objects (and on no memory). */
static inline char *tdm_kato_json_py_str(const json_t *v) {
    char buf[64];
    switch (json_typeof(v)) {
    case JSON_STRING: return strndup(json_string_value(v), json_string_length(v));
    case JSON_INTEGER: snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v)); break;
    case JSON_REAL: tdm_kato_py_float(json_real_value(v), buf, sizeof buf); break;
    case JSON_TRUE: return strdup("True");
    case JSON_FALSE: return strdup("False");
    case JSON_NULL: return strdup("None");
    default: return NULL;
    }
    return strdup(buf);
}

#endif
