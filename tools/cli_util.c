/* cli_util.c: helpers shared by the tandem subcommands: dispatch, option scanning with messages that
 * name the option and value at fault, JSON-lines input with line numbers in every error, and output of
 * JSON strings and round-trippable doubles. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int vmsg(int code, const char *fmt, va_list ap) {
    fputs("tandem: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    return code;
}

int cli_usage(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = vmsg(2, fmt, ap);
    va_end(ap);
    return rc;
}

int cli_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = vmsg(1, fmt, ap);
    va_end(ap);
    return rc;
}

int cli_fail_status(int status, const char *what) {
    const char *detail = tdm_last_error();
    return cli_fail("%s: %s%s%s", what, tdm_strerror(status), *detail ? ": " : "", detail);
}

int cli_is_help(const char *arg) { return !strcmp(arg, "-h") || !strcmp(arg, "--help"); }

int cli_dispatch(const char *prog, const cli_command *table, size_t n, int argc, char **argv) {
    if (argc < 1 || cli_is_help(argv[0]) || !strcmp(argv[0], "help")) {
        printf("usage: %s <command> [options]\n\ncommands:\n", prog);
        for (size_t i = 0; i < n; i++) printf("  %-8s %s\n", table[i].name, table[i].summary);
        printf("\nRun '%s <command> --help' for a command's options.\n", prog);
        printf("Every command also takes --profile FILE (Chrome trace JSON) and --profile-html FILE (report).\n");
        return argc < 1 ? 2 : 0;
    }
    for (size_t i = 0; i < n; i++)
        if (!strcmp(argv[0], table[i].name)) return table[i].run(argc, argv);
    return cli_usage("unknown command '%s' (try '%s --help')", argv[0], prog);
}

int cli_opt(int argc, char **argv, int *i, const char *name, const char **value) {
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n)) return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (a[n] != '\0') return 0;
    if (*i + 1 >= argc) {
        cli_usage("option %s needs a value", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

int cli_parse_u64(const char *opt, const char *text, unsigned long long lo, unsigned long long hi, unsigned long long *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-' || v < lo || v > hi) {
        cli_usage("%s \"%s\": expected an integer in %llu..%llu", opt, text, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_double(const char *opt, const char *text, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end || !(v >= lo && v <= hi)) {
        cli_usage("%s \"%s\": expected a number in [%g, %g]", opt, text, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

FILE *cli_open_in(const char *path) {
    if (!strcmp(path, "-")) return stdin;
    FILE *f = fopen(path, "rb");
    if (!f) cli_fail("%s: cannot open: %s", path, strerror(errno));
    return f;
}

FILE *cli_open_out(const char *path) {
    if (!strcmp(path, "-")) return stdout;
    FILE *f = fopen(path, "wb");
    if (!f) cli_fail("%s: cannot create: %s", path, strerror(errno));
    return f;
}

void cli_close(FILE *f) {
    if (f && f != stdin && f != stdout) fclose(f);
}

long cli_read_line(FILE *f, char **buf, size_t *cap) {
    ssize_t n = getline(buf, cap, f);
    if (n < 0) return -1;
    while (n > 0 && ((*buf)[n - 1] == '\n' || (*buf)[n - 1] == '\r')) (*buf)[--n] = '\0';
    return (long)n;
}

json_t *cli_parse_json_line(const char *src, unsigned long lineno, const char *text, size_t len) {
    json_error_t err;
    json_t *v = json_loadb(text, len, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &err);
    if (!v) cli_fail("%s: line %lu, column %d: invalid JSON: %s", src, lineno, err.column, err.text);
    return v;
}

void cli_symbols_free(cli_symbols *s) {
    free(s->syms);
    free(s->lens);
    memset(s, 0, sizeof *s);
}

static int push_symbol(cli_symbols *s, const json_t *str) {
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        const char **a = realloc(s->syms, cap * sizeof *a);
        if (a) s->syms = a;
        size_t *l = realloc(s->lens, cap * sizeof *l);
        if (l) s->lens = l;
        if (!a || !l) return -1;
        s->cap = cap;
    }
    s->syms[s->n] = json_string_value(str);
    s->lens[s->n] = json_string_length(str);
    s->n++;
    return 0;
}

int cli_symbols_from_json(const json_t *arr, const char *src, unsigned long lineno, const char *field, cli_symbols *out) {
    out->n = 0;
    if (!json_is_array(arr)) {
        cli_fail("%s: line %lu: %s must be a list of symbols (strings) or of events (lists of strings)", src, lineno, field);
        return -1;
    }
    size_t n = json_array_size(arr);
    int events = n > 0 && json_is_array(json_array_get(arr, 0));
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(arr, i);
        if (events != json_is_array(e)) {
            cli_fail("%s: line %lu: %s[%zu] is %s, but %s[0] is %s (mix of symbols and events)", src, lineno, field, i,
                     json_is_array(e) ? "an event" : "not an event", field, events ? "an event" : "a symbol");
            return -1;
        }
        if (!events) {
            if (!json_is_string(e)) {
                cli_fail("%s: line %lu: %s[%zu] is not a string", src, lineno, field, i);
                return -1;
            }
            if (push_symbol(out, e)) return cli_fail("out of memory"), -1;
            continue;
        }
        for (size_t k = 0; k < json_array_size(e); k++) {
            const json_t *sym = json_array_get(e, k);
            if (!json_is_string(sym)) {
                cli_fail("%s: line %lu: %s[%zu][%zu] is not a string", src, lineno, field, i, k);
                return -1;
            }
            if (push_symbol(out, sym)) return cli_fail("out of memory"), -1;
        }
    }
    return 0;
}

void cli_put_json_string(FILE *out, const char *s, size_t len) {
    json_t *j = json_stringn_nocheck(s, len);
    char *text = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    fputs(text ? text : "\"\"", out);
    free(text);
    json_decref(j);
}

/* Results repeat a few similarity values many times, and "%.17g" is slow: a small direct-mapped cache of
 * formatted values (per thread) makes large outputs cheap without changing a digit. */
void cli_put_double(FILE *out, double x) {
    if (!isfinite(x)) {
        fputs("null", out);
        return;
    }
    static _Thread_local struct {
        uint64_t bits;
        char text[32];
    } cache[256];
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    unsigned slot = (unsigned)((bits * 0x9E3779B97F4A7C15ull) >> 56);
    if (cache[slot].bits != bits || !cache[slot].text[0]) {
        snprintf(cache[slot].text, sizeof cache[slot].text, "%.17g", x);
        cache[slot].bits = bits;
    }
    fputs(cache[slot].text, out);
}

double cli_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void cli_progress_start(cli_progress *p, const char *label, unsigned long long total, int quiet) {
    p->label = label;
    p->total = total;
    p->next = total / 10;
    p->enabled = !quiet && total >= 100000;
}

void cli_progress_step(cli_progress *p, unsigned long long done) {
    if (!p->enabled || done < p->next) return;
    fprintf(stderr, "%s: %llu/%llu (%llu%%)\n", p->label, done, p->total, done * 100 / p->total);
    p->next += p->total / 10;
}
