/* config.c: the one place where TANDEM_* environment variables are read and validated. A table lists each
 * variable with its type, range and default; an invalid value is an error naming the variable and the
 * value (never a silent default), and an unknown TANDEM_* name is reported with the closest valid name. */
#include "tandem/backend.h"
#include "tandem/tandem.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ;

/* V_ROUTE: auto|cpu|gpu; V_CALIB: auto|off|force; V_FRAC: a double in [dlo, dhi]; V_FRAC3: three
 * increasing fractions in (0,1); V_SIZE: bytes with K/M/G/T or max (uint64_t field). */
typedef enum { V_INT, V_BOOL, V_LEVEL, V_DEVICE, V_PREF, V_STR, V_ROUTE, V_CALIB, V_FRAC, V_FRAC3, V_SIZE } vkind;

typedef struct {
    const char *name;
    vkind kind;
    size_t offset;
    const char *def;
    int lo, hi; /* V_INT range */
    const char *valid; /* for messages */
} var;

/* Pointers to a field of each kind. V_FRAC ranges are lo/1000 .. hi/1000. */
#define INTP(v, c) ((int *)((char *)(c) + (v)->offset))
#define DBLP(v, c) ((double *)((char *)(c) + (v)->offset))
#define SIZEP(v, c) ((uint64_t *)((char *)(c) + (v)->offset))
#define FRAC_LO(v) ((v)->lo / 1000.0)
#define FRAC_HI(v) ((v)->hi / 1000.0)

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
    {"TANDEM_ROUTE", V_ROUTE, F(route), "auto", 0, 0, "one of auto, cpu, gpu"},
    {"TANDEM_ROUTE_MARGIN", V_FRAC, F(route_margin), "0.10", 0, 900, "a number in [0, 0.9]"},
    {"TANDEM_ROUTE_LOG", V_INT, F(route_log), "4096", 0, 1 << 24, "an integer in 0..16777216 (0 = off)"},
    {"TANDEM_CALIBRATE", V_CALIB, F(calibrate), "auto", 0, 0, "one of auto, off, force"},
    {"TANDEM_CALIBRATION_BUDGET_MS", V_INT, F(calibration_budget_ms), "2000", 100, 600000,
     "an integer in 100..600000 (milliseconds)"},
    {"TANDEM_COSTMODEL_PATH", V_STR, F(costmodel_path), NULL, 0, 0, "a path (empty = do not persist)"},
    {"TANDEM_MEM_PRESSURE", V_FRAC3, F(mem_pressure), "0.60,0.80,0.90", 0, 0,
     "three comma-separated fractions strictly increasing in (0,1)"},
    {"TANDEM_MEM_LIMIT", V_SIZE, F(mem_limit), "0", 0, 0, "a size: an integer with optional K/M/G/T, or max (0 = none)"},
    {"TANDEM_MEM_RELEASE_THRESHOLD", V_SIZE, F(mem_release_threshold), "max", 0, 0,
     "a size: an integer with optional K/M/G/T, or max"},
    {"TANDEM_MEM_SAFETY", V_FRAC, F(mem_safety), "0.20", 0, 900, "a number in [0, 0.9]"},
    {"TANDEM_BATCH_MAX", V_INT, F(batch_max), "4096", 1, 1 << 20, "an integer in 1..1048576"},
    {"TANDEM_API_TOKEN", V_STR, F(api_token), "", 0, 0, "a token (any text; empty = no authentication)"},
    {"TANDEM_LATTICE_MAX_BYTES", V_SIZE, F(lattice_max_bytes), "4G", 0, 0,
     "a size (integer with optional K/M/G/T, powers of 1024, or max)"},
    {"TANDEM_AUX_BYTES", V_SIZE, F(aux_bytes), "64M", 0, 0, "a size (integer with optional K/M/G/T, powers of 1024, or max)"},
    {"TANDEM_ANALYZE_MAX_BFS", V_INT, F(analyze_max_bfs), "256", 1, 1 << 20, "an integer in 1..1048576"},
    {"TANDEM_SP_CACHE", V_INT, F(sp_cache), "1024", 0, 1 << 20, "an integer in 0..1048576 (0 = no path cache)"},
    {"TANDEM_TEST_FAIL_AT_STEP", V_INT, F(test_fail_at_step), "0", 0, INT_MAX,
     "an integer in 0..2147483647 (0 = no fault injection)"},
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
        else if (vars[i].kind == V_SIZE)
            *(int64_t *)((char *)cfg + vars[i].offset) = TDM_CONFIG_UNSET;
        else
            *(int *)((char *)cfg + vars[i].offset) = TDM_CONFIG_UNSET;
    }
    cfg->device_index = TDM_CONFIG_UNSET;
    for (size_t i = 0; i < NVARS; i++) {
        const var *v = &vars[i];
        if (v->kind == V_FRAC) *DBLP(v, cfg) = NAN;
        if (v->kind == V_FRAC3) DBLP(v, cfg)[0] = DBLP(v, cfg)[1] = DBLP(v, cfg)[2] = NAN;
        if (v->kind == V_SIZE) *SIZEP(v, cfg) = TDM_CONFIG_UNSET_SIZE;
    }
    memset(cfg->route_op, TDM_CONFIG_UNSET_OP, sizeof cfg->route_op);
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

static int parse_double(const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !(x >= lo && x <= hi)) return -1;
    *out = x;
    return 0;
}

/* Sizes: an integer with an optional K/M/G/T suffix (powers of 1024, B optional), or "max". */
static int parse_size(const char *s, uint64_t *out) {
    if (!strcasecmp(s, "max")) return *out = UINT64_MAX, 0;
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)*s)) return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) return -1;
    int shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    case 'T': shift = 40; end++; break;
    }
    if (shift && toupper((unsigned char)*end) == 'B') end++;
    if (*end || (shift && v > (UINT64_MAX >> shift)) || (v << shift) >= TDM_CONFIG_UNSET_SIZE) return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

static int parse_route(const char *text, int *ip) {
    if (!strcasecmp(text, "auto")) return *ip = TDM_DEVICE_AUTO, 0;
    if (!strcasecmp(text, "cpu")) return *ip = TDM_DEVICE_CPU, 0;
    if (!strcasecmp(text, "gpu") || !strcasecmp(text, "cuda")) return *ip = TDM_DEVICE_CUDA, 0;
    return -1;
}

static int valid_frac3(const double *t) {
    return t[0] > 0.0 && t[0] < t[1] && t[1] < t[2] && t[2] < 1.0;
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
    case V_ROUTE: return parse_route(text, ip);
    case V_CALIB:
        if (!strcasecmp(text, "auto")) return *ip = TDM_CALIBRATE_AUTO, 0;
        if (!strcasecmp(text, "off")) return *ip = TDM_CALIBRATE_OFF, 0;
        if (!strcasecmp(text, "force")) return *ip = TDM_CALIBRATE_FORCE, 0;
        return -1;
    case V_FRAC: return parse_double(text, FRAC_LO(v), FRAC_HI(v), DBLP(v, cfg));
    case V_FRAC3: {
        double t[3];
        char *end;
        const char *p = text;
        for (int k = 0; k < 3; k++) {
            errno = 0;
            t[k] = strtod(p, &end);
            if (errno || end == p || *end != (k < 2 ? ',' : '\0')) return -1;
            p = end + 1;
        }
        if (!valid_frac3(t)) return -1;
        memcpy(DBLP(v, cfg), t, sizeof t);
        return 0;
    }
    case V_SIZE: return parse_size(text, SIZEP(v, cfg));
    }
    return -1;
}

/* The override name of op: its name after the engine, upper case, dots as underscores ("seq.lcs" ->
 * "LCS"; the spec's XOR, BFS, GEMM... for the lattice ops). */
static void op_suffix(int op, char *buf, size_t cap) {
    const char *n = tdm_op_name((tdm_op)op), *dot = strchr(n, '.');
    if (dot) n = dot + 1;
    size_t i = 0;
    for (; n[i] && i + 1 < cap; i++) buf[i] = n[i] == '.' ? '_' : (char)toupper((unsigned char)n[i]);
    buf[i] = '\0';
}

_Static_assert(TDM_OP_COUNT <= sizeof(((tdm_config *)0)->route_op), "tdm_config.route_op too small");

/* TANDEM_ROUTE_<OP> for every op the caller did not set. */
static int resolve_route_ops(tdm_config *cfg) {
    for (int op = 0; op < TDM_OP_COUNT; op++) {
        char name[96], sfx[64];
        op_suffix(op, sfx, sizeof sfx);
        snprintf(name, sizeof name, "TANDEM_ROUTE_%s", sfx);
        if (cfg->route_op[op] != TDM_CONFIG_UNSET_OP) {
            if (cfg->route_op[op] < TDM_DEVICE_AUTO || cfg->route_op[op] > TDM_DEVICE_CUDA)
                return tdm_error(TDM_E_CONFIG, "%s=%d (set by the caller): expected auto, cpu or gpu", name,
                                 cfg->route_op[op]);
            continue;
        }
        const char *env = getenv(name);
        int x;
        if (!env) continue;
        if (parse_route(env, &x)) return tdm_error(TDM_E_CONFIG, "%s=\"%s\": expected one of auto, cpu, gpu", name, env);
        cfg->route_op[op] = (signed char)x;
    }
    return TDM_OK;
}

static int is_unset(const var *v, const tdm_config *cfg) {
    if (v->kind == V_FRAC || v->kind == V_FRAC3) return isnan(*DBLP(v, cfg));
    if (v->kind == V_SIZE) return *SIZEP(v, cfg) == TDM_CONFIG_UNSET_SIZE;
    if (v->kind == V_STR)
        return *(const char *const *)((const char *)cfg + v->offset) == NULL;
    if (v->kind == V_SIZE)
        return *(const int64_t *)((const char *)cfg + v->offset) == TDM_CONFIG_UNSET;
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
static const char *const other_names[] = {"TANDEM_TEST_SEED",      "TANDEM_TEST_CASES",     "TANDEM_TEST_REQUIRE_GPU", "TANDEM_TEST_BFS_PERSISTENT",
                                          "TANDEM_BENCH_QUICK",    "TANDEM_BENCH_SEED",     "TANDEM_BENCH_SIZES",
                                          "TANDEM_BENCH_ARGS",     "TANDEM_BENCH_PEER_ARGS", "TANDEM_BENCH_BUILD",
                                          "TANDEM_BENCH_RAPIDFUZZ"}; /* the last six: bench/run-seq.sh */

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
        for (int op = 0; op < TDM_OP_COUNT && !known && len > 13 && !strncmp(*e, "TANDEM_ROUTE_", 13); op++) {
            char sfx[64];
            op_suffix(op, sfx, sizeof sfx);
            known = strlen(sfx) == len - 13 && !strncmp(sfx, *e + 13, len - 13);
        }
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
            if (v->kind == V_FRAC && !(*DBLP(v, cfg) >= FRAC_LO(v) && *DBLP(v, cfg) <= FRAC_HI(v)))
                return tdm_error(TDM_E_CONFIG, "%s=%g (set by the caller): expected %s", v->name, *DBLP(v, cfg), v->valid);
            if (v->kind == V_FRAC3 && !valid_frac3(DBLP(v, cfg)))
                return tdm_error(TDM_E_CONFIG, "%s=%g,%g,%g (set by the caller): thresholds must be strictly increasing in (0,1)",
                                 v->name, DBLP(v, cfg)[0], DBLP(v, cfg)[1], DBLP(v, cfg)[2]);
            if (v->kind != V_STR && v->kind != V_FRAC && v->kind != V_FRAC3 && v->kind != V_SIZE) {
                int x = *(int *)((char *)cfg + v->offset), lo = v->lo, hi = v->hi;
                if (v->kind == V_BOOL) lo = 0, hi = 1;
                else if (v->kind == V_LEVEL) lo = TDM_LOG_ERROR, hi = TDM_LOG_DEBUG;
                else if (v->kind == V_PREF || v->kind == V_DEVICE || v->kind == V_ROUTE) lo = TDM_DEVICE_AUTO, hi = TDM_DEVICE_CUDA;
                else if (v->kind == V_CALIB) lo = TDM_CALIBRATE_AUTO, hi = TDM_CALIBRATE_FORCE;
                if (x < lo || x > hi)
                    return tdm_error(TDM_E_CONFIG, "%s=%d (set by the caller): expected %s", v->name, x, v->valid);
            }
            continue;
        }
        const char *env = getenv(v->name);
        cfg->sources[i] = env ? 1 : 0;
        if (!env && !v->def) continue; /* a string left NULL: the consumer's computed default */
        if (parse_value(v, env ? env : v->def, cfg))
            return tdm_error(TDM_E_CONFIG, "%s=\"%s\": expected %s", v->name, env ? env : v->def, v->valid);
    }
    if (cfg->device_index == TDM_CONFIG_UNSET) cfg->device_index = 0;
    int rc = resolve_route_ops(cfg);
    return rc ? rc : check_unknown(cfg->strict);
}

void tdm_config_dump(const tdm_config *cfg, FILE *out) {
    static const char *src[] = {"default", "env", "caller"};
    for (size_t i = 0; i < NVARS; i++) {
        const var *v = &vars[i];
        const char *from = src[cfg->sources[i] < 3 ? cfg->sources[i] : 0];
        if (v->kind == V_STR) {
            const char *s = *(const char *const *)((const char *)cfg + v->offset);
            if (v->offset == offsetof(tdm_config, api_token) && s && *s) s = "<set, not shown>"; /* a secret */
            fprintf(out, "%s=%s (%s)\n", v->name, s ? s : "(computed default)", from);
            continue;
        }
        if (v->kind == V_FRAC) {
            fprintf(out, "%s=%g (%s)\n", v->name, *(const double *)((const char *)cfg + v->offset), from);
            continue;
        }
        if (v->kind == V_FRAC3) {
            const double *t = (const double *)((const char *)cfg + v->offset);
            fprintf(out, "%s=%g,%g,%g (%s)\n", v->name, t[0], t[1], t[2], from);
            continue;
        }
        if (v->kind == V_SIZE) {
            uint64_t z = *(const uint64_t *)((const char *)cfg + v->offset);
            if (z == UINT64_MAX) fprintf(out, "%s=max (%s)\n", v->name, from);
            else fprintf(out, "%s=%llu (%s)\n", v->name, (unsigned long long)z, from);
            continue;
        }
        if (v->kind == V_SIZE) {
            int64_t x = *(const int64_t *)((const char *)cfg + v->offset);
            if (x == INT64_MAX) fprintf(out, "%s=max (%s)\n", v->name, from);
            else fprintf(out, "%s=%lld (%s)\n", v->name, (long long)x, from);
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
        case V_ROUTE:
            fprintf(out, "%s=%s (%s)\n", v->name, x == TDM_DEVICE_CPU ? "cpu" : x == TDM_DEVICE_CUDA ? "gpu" : "auto", from);
            break;
        case V_CALIB:
            fprintf(out, "%s=%s (%s)\n", v->name,
                    x == TDM_CALIBRATE_OFF ? "off" : x == TDM_CALIBRATE_FORCE ? "force" : "auto", from);
            break;
        default: fprintf(out, "%s=%d (%s)\n", v->name, x, from); break;
        }
    }
    for (int op = 0; op < TDM_OP_COUNT; op++) {
        int x = cfg->route_op[op];
        if (x == TDM_CONFIG_UNSET_OP) continue;
        char sfx[64];
        op_suffix(op, sfx, sizeof sfx);
        fprintf(out, "TANDEM_ROUTE_%s=%s (set)\n", sfx, x == TDM_DEVICE_CPU ? "cpu" : x == TDM_DEVICE_CUDA ? "gpu" : "auto");
    }
}
