/* config.c: the one place where TANDEM_* environment variables are read and validated. A table lists each
 * variable with its type, range and default; an invalid value is an error naming the variable and the
 * value (never a silent default), and an unknown TANDEM_* name is reported with the closest valid name. */
#include "tandem/tandem.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ;

typedef enum { V_INT, V_BOOL, V_LEVEL, V_DEVICE, V_PREF, V_STR } vkind;

typedef struct {
    const char *name;
    vkind kind;
    size_t offset;
    const char *def;
    int lo, hi; /* V_INT range */
    const char *valid; /* for messages */
} var;

#define F(field) offsetof(tdm_config, field)
static const var vars[] = {
    {"TANDEM_LOG_LEVEL", V_LEVEL, F(log_level), "warn", 0, 0, "one of error, warn, info, debug"},
    {"TANDEM_THREADS", V_INT, F(threads), "0", 0, 1024, "an integer in 0..1024 (0 = every online core)"},
    {"TANDEM_DEVICE", V_DEVICE, F(device), "auto", 0, 0, "one of auto, cpu, cuda, cuda:N"},
    {"TANDEM_STRICT", V_BOOL, F(strict), "0", 0, 0, "a boolean (1/0, true/false, yes/no, on/off)"},
    {"TANDEM_SEQ_BACKEND", V_PREF, F(seq_backend), "auto", 0, 0, "one of auto, cpu, cuda"},
    {"TANDEM_DEBUG_ROUTER", V_BOOL, F(debug_router), "0", 0, 0, "a boolean (1/0, true/false, yes/no, on/off)"},
    {"TANDEM_CUDA_MODULE", V_STR, F(cuda_module), "", 0, 0, "a path"},
    {"TANDEM_SEQ_SYNC_THRESHOLD", V_INT, F(seq_sync_threshold), "1000", 0, INT_MAX,
     "an integer in 0..2147483647 (0 = never sync by count)"},
    {"TANDEM_SEQ_SYNC_INTERVAL", V_INT, F(seq_sync_interval), "300", 0, 86400,
     "an integer in 0..86400 (seconds; 0 = no background sync)"},
    {"TANDEM_SEQ_GPU_MIN", V_INT, F(seq_gpu_min), "100000", 0, INT_MAX, "an integer in 0..2147483647 (patterns)"},
    {"TANDEM_PROFILE", V_BOOL, F(profile), "0", 0, 0, "a boolean (1/0, true/false, yes/no, on/off)"},
    {"TANDEM_PROFILE_OUT", V_STR, F(profile_out), "", 0, 0, "a path prefix"},
    {"TANDEM_PROFILE_CAPACITY", V_INT, F(profile_capacity), "262144", 1024, 1 << 26,
     "an integer in 1024..67108864 (records)"},
    {"TANDEM_NVTX", V_BOOL, F(nvtx), "0", 0, 0, "a boolean (1/0, true/false, yes/no, on/off)"},
};
#undef F
#define NVARS (sizeof vars / sizeof vars[0])
_Static_assert(NVARS <= sizeof(((tdm_config *)0)->sources), "tdm_config.sources too small");

void tdm_config_init(tdm_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < NVARS; i++) {
        if (vars[i].kind == V_STR)
            *(const char **)((char *)cfg + vars[i].offset) = NULL;
        else
            *(int *)((char *)cfg + vars[i].offset) = TDM_CONFIG_UNSET;
    }
    cfg->device_index = TDM_CONFIG_UNSET;
}

static int parse_bool(const char *s, int *out) {
    static const char *yes[] = {"1", "true", "yes", "on"}, *no[] = {"0", "false", "no", "off"};
    for (int i = 0; i < 4; i++) {
        if (!strcasecmp(s, yes[i])) return *out = 1, 0;
        if (!strcasecmp(s, no[i])) return *out = 0, 0;
    }
    return -1;
}

static int parse_int(const char *s, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

/* Parses one value into cfg; 0 on success, -1 if invalid. */
static int parse_value(const var *v, const char *text, tdm_config *cfg) {
    int *ip = (int *)((char *)cfg + v->offset);
    switch (v->kind) {
    case V_INT: return parse_int(text, v->lo, v->hi, ip);
    case V_BOOL: return parse_bool(text, ip);
    case V_LEVEL:
        for (int l = TDM_LOG_ERROR; l <= TDM_LOG_DEBUG; l++)
            if (!strcasecmp(text, tdm_log_level_name((tdm_log_level)l))) return *ip = l, 0;
        return -1;
    case V_PREF:
        if (!strcasecmp(text, "auto")) return *ip = TDM_DEVICE_AUTO, 0;
        if (!strcasecmp(text, "cpu")) return *ip = TDM_DEVICE_CPU, 0;
        if (!strcasecmp(text, "cuda")) return *ip = TDM_DEVICE_CUDA, 0;
        return -1;
    case V_DEVICE:
        if (!strncasecmp(text, "cuda:", 5)) {
            if (parse_int(text + 5, 0, 1023, &cfg->device_index)) return -1;
            return *ip = TDM_DEVICE_CUDA, 0;
        }
        cfg->device_index = 0;
        if (!strcasecmp(text, "auto")) return *ip = TDM_DEVICE_AUTO, 0;
        if (!strcasecmp(text, "cpu")) return *ip = TDM_DEVICE_CPU, 0;
        if (!strcasecmp(text, "cuda")) return *ip = TDM_DEVICE_CUDA, 0;
        return -1;
    case V_STR: *(const char **)((char *)cfg + v->offset) = text; return 0;
    }
    return -1;
}

static int is_unset(const var *v, const tdm_config *cfg) {
    if (v->kind == V_STR)
        return *(const char *const *)((const char *)cfg + v->offset) == NULL;
    return *(const int *)((const char *)cfg + v->offset) == TDM_CONFIG_UNSET;
}

/* Levenshtein distance of two short names, for "did you mean" hints. */
static size_t edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b), row[64];
    if (lb >= 64) return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

/* Names that other parts of the project read outside tdm_config (test and tool knobs). */
static const char *const other_names[] = {"TANDEM_TEST_SEED", "TANDEM_TEST_CASES", "TANDEM_TEST_REQUIRE_GPU", "TANDEM_BENCH_QUICK"};

static int check_unknown(int strict) {
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "TANDEM_", 7)) continue;
        const char *eq = strchr(*e, '=');
        size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
        int known = 0;
        for (size_t i = 0; i < NVARS && !known; i++)
            known = strlen(vars[i].name) == len && !strncmp(vars[i].name, *e, len);
        for (size_t i = 0; i < sizeof other_names / sizeof *other_names && !known; i++)
            known = strlen(other_names[i]) == len && !strncmp(other_names[i], *e, len);
        if (known) continue;
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)len, *e);
        const char *best = vars[0].name;
        size_t bestd = SIZE_MAX;
        for (size_t i = 0; i < NVARS; i++) {
            size_t d = edit_distance(name, vars[i].name);
            if (d < bestd) bestd = d, best = vars[i].name;
        }
        if (strict)
            return tdm_error(TDM_E_CONFIG, "unknown variable %s (did you mean %s?)", name, best);
        tdm_log(TDM_LOG_WARN, "unknown variable %s ignored (did you mean %s?)", name, best);
    }
    return TDM_OK;
}

int tdm_config_resolve(tdm_config *cfg) {
    if (!cfg) return tdm_error(TDM_E_INVAL, "tdm_config_resolve: cfg is NULL");
    for (size_t i = 0; i < NVARS; i++) {
        const var *v = &vars[i];
        if (!is_unset(v, cfg)) {
            cfg->sources[i] = 2;
            if (v->kind != V_STR) {
                int x = *(int *)((char *)cfg + v->offset), lo = v->lo, hi = v->hi;
                if (v->kind == V_BOOL) lo = 0, hi = 1;
                else if (v->kind == V_LEVEL) lo = TDM_LOG_ERROR, hi = TDM_LOG_DEBUG;
                else if (v->kind == V_PREF || v->kind == V_DEVICE) lo = TDM_DEVICE_AUTO, hi = TDM_DEVICE_CUDA;
                if (x < lo || x > hi)
                    return tdm_error(TDM_E_CONFIG, "%s=%d (set by the caller): expected %s", v->name, x, v->valid);
            }
            continue;
        }
        const char *env = getenv(v->name);
        cfg->sources[i] = env ? 1 : 0;
        if (parse_value(v, env ? env : v->def, cfg))
            return tdm_error(TDM_E_CONFIG, "%s=\"%s\": expected %s", v->name, env ? env : v->def, v->valid);
    }
    if (cfg->device_index == TDM_CONFIG_UNSET) cfg->device_index = 0;
    return check_unknown(cfg->strict);
}

void tdm_config_dump(const tdm_config *cfg, FILE *out) {
    static const char *src[] = {"default", "env", "caller"};
    for (size_t i = 0; i < NVARS; i++) {
        const var *v = &vars[i];
        const char *from = src[cfg->sources[i] < 3 ? cfg->sources[i] : 0];
        if (v->kind == V_STR) {
            const char *s = *(const char *const *)((const char *)cfg + v->offset);
            fprintf(out, "%s=%s (%s)\n", v->name, s ? s : "", from);
            continue;
        }
        int x = *(const int *)((const char *)cfg + v->offset);
        switch (v->kind) {
        case V_LEVEL: fprintf(out, "%s=%s (%s)\n", v->name, tdm_log_level_name((tdm_log_level)x), from); break;
        case V_DEVICE:
            if (x == TDM_DEVICE_CUDA) fprintf(out, "%s=cuda:%d (%s)\n", v->name, cfg->device_index, from);
            else fprintf(out, "%s=%s (%s)\n", v->name, x == TDM_DEVICE_CPU ? "cpu" : "auto", from);
            break;
        case V_PREF:
            fprintf(out, "%s=%s (%s)\n", v->name,
                    x == TDM_DEVICE_CPU ? "cpu" : x == TDM_DEVICE_CUDA ? "cuda" : "auto", from);
            break;
        default: fprintf(out, "%s=%d (%s)\n", v->name, x, from); break;
        }
    }
}
