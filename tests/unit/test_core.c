/* test_core.c: unit tests of the base module and the runtime's backend registry: status texts and names
 * generated from TDM_STATUS_LIST, the thread-local detail message, allocation accounting (every host
 * allocation of the library is counted, so leaks and overflow handling are checkable), the log sink and
 * its level filter, configuration from TANDEM_* variables (each variable read back, invalid values named
 * in the error, caller fields winning, unknown names warned about or refused under TANDEM_STRICT), the
 * context, the CPU backend and tdm_backend_select's reasons. These are the contracts every engine relies
 * on, so they are pinned here. The tests pass with and without a GPU: where a CUDA backend is registered
 * it is checked instead of assumed absent. */
#define _GNU_SOURCE
#include "unit_common.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sys/mman.h>

#include "tandem/backend.h"
#include "tandem/tandem.h"

extern char **environ;

/* ---- helpers -------------------------------------------------------------------------------------- */

/* Removes every TANDEM_* variable but the test seed, so the tests see only what they set. */
static void clear_tandem_env(void) {
    for (;;) {
        char name[256] = "";
        for (char **e = environ; e && *e; e++) {
            if (strncmp(*e, "TANDEM_", 7) || !strncmp(*e, "TANDEM_TEST_SEED=", 17)) continue;
            const char *eq = strchr(*e, '=');
            size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
            if (len >= sizeof name) len = sizeof name - 1;
            memcpy(name, *e, len);
            name[len] = '\0';
            break;
        }
        if (!name[0]) return;
        unsetenv(name);
    }
}

#define MAX_LOGS 64
typedef struct {
    int n;
    tdm_log_level level[MAX_LOGS];
    char msg[MAX_LOGS][1100];
    void *user_seen;
} log_capture;

static log_capture logs;

static void capture_sink(tdm_log_level level, const char *msg, void *user) {
    logs.user_seen = user;
    if (logs.n >= MAX_LOGS) return;
    logs.level[logs.n] = level;
    snprintf(logs.msg[logs.n], sizeof logs.msg[0], "%s", msg);
    logs.n++;
}

static void capture_start(tdm_log_level level) {
    memset(&logs, 0, sizeof logs);
    tdm_log_set_callback(capture_sink, &logs);
    tdm_log_set_level(level);
}

static void capture_stop(void) {
    tdm_log_set_callback(NULL, NULL);
    tdm_log_set_level(TDM_LOG_WARN);
}

/* Index of the first captured message containing all of the given substrings at this level, or -1. */
static int find_log(tdm_log_level level, const char *s1, const char *s2) {
    for (int i = 0; i < logs.n; i++)
        if (logs.level[i] == level && strstr(logs.msg[i], s1) && (!s2 || strstr(logs.msg[i], s2))) return i;
    return -1;
}

/* ---- status --------------------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    int value;
    const char *text;
} status_row;

static const status_row status_rows[] = {
#define ROW(name, value, text) {#name, value, text},
    TDM_STATUS_LIST(ROW)
#undef ROW
};
#define NSTATUS (sizeof status_rows / sizeof status_rows[0])

static void test_status_texts_and_names(void **state) {
    (void)state;
    assert_true(NSTATUS >= 18);
    for (size_t i = 0; i < NSTATUS; i++) {
        assert_string_equal(tdm_strerror(status_rows[i].value), status_rows[i].text);
        assert_string_equal(tdm_status_name(status_rows[i].value), status_rows[i].name);
        /* OK is 0 and every error is negative, as the conventions promise. */
        if (i == 0) assert_int_equal(status_rows[i].value, 0);
        else assert_true(status_rows[i].value < 0);
        for (size_t j = 0; j < i; j++) {
            assert_int_not_equal(status_rows[i].value, status_rows[j].value);
            assert_string_not_equal(status_rows[i].name, status_rows[j].name);
        }
    }
    /* Codes are stable: a few pinned values that files and the service depend on. */
    assert_int_equal(TDM_E_INVAL, -1);
    assert_int_equal(TDM_E_CONFIG, -9);
    assert_int_equal(TDM_E_CORRUPT, -13);
    assert_int_equal(TDM_E_VERSION, -17);
    const int unknown[] = {1, 2, 100, -18, -19, -1000, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof *unknown; i++) {
        assert_string_equal(tdm_strerror(unknown[i]), "unknown status");
        assert_string_equal(tdm_status_name(unknown[i]), "TDM_E_UNKNOWN");
    }
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", TDM_VERSION_MAJOR, TDM_VERSION_MINOR, TDM_VERSION_PATCH);
    assert_string_equal(tdm_version(), want);
    assert_string_equal(tdm_version(), TDM_VERSION_STRING);
}

static void *other_thread_error(void *arg) {
    char *seen = arg;
    snprintf(seen, 64, "%s", tdm_last_error()); /* a fresh thread has no message */
    tdm_error(TDM_E_IO, "set by the other thread");
    snprintf(seen + 64, 64, "%s", tdm_last_error());
    return NULL;
}

static void test_error_message(void **state) {
    (void)state;
    tdm_clear_error();
    assert_string_equal(tdm_last_error(), "");
    assert_int_equal(tdm_error(TDM_E_RANGE, "value %d of %s", 42, "x"), TDM_E_RANGE);
    assert_string_equal(tdm_last_error(), "value 42 of x");
    assert_int_equal(tdm_error(TDM_E_INVAL, "second"), TDM_E_INVAL);
    assert_string_equal(tdm_last_error(), "second");
    /* A message longer than the buffer is cut, never overflowed. */
    char big[2000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    tdm_error(TDM_E_IO, "%s", big);
    size_t n = strlen(tdm_last_error());
    assert_true(n > 100 && n < sizeof big - 1);
    assert_memory_equal(tdm_last_error(), big, n);
    /* The message is per thread. */
    tdm_error(TDM_E_PARSE, "main thread");
    char seen[128] = "";
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, other_thread_error, seen), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_string_equal(seen, "");
    assert_string_equal(seen + 64, "set by the other thread");
    assert_string_equal(tdm_last_error(), "main thread");
    tdm_clear_error();
    assert_string_equal(tdm_last_error(), "");
    /* Library functions set it on failure. */
    assert_int_equal(tdm_config_resolve(NULL), TDM_E_INVAL);
    assert_non_null(strstr(tdm_last_error(), "tdm_config_resolve"));
}

/* ---- allocation accounting ------------------------------------------------------------------------- */

static void stats(tdm_alloc_stats *s) { tdm_alloc_get_stats(s); }

static void test_alloc_accounting(void **state) {
    (void)state;
    tu_rng r = tu_rng_for(11);
    enum { SLOTS = 48 };
    unsigned char *p[SLOTS] = {0};
    size_t size[SLOTS] = {0};
    unsigned char fill[SLOTS] = {0};
    tdm_alloc_stats base, s;
    stats(&base);
    uint64_t cur = base.current_bytes, allocs = base.allocations, live = base.live, peak = base.peak_bytes;
    for (int step = 0; step < 4000; step++) {
        int k = (int)tu_below(&r, SLOTS);
        int op = (int)tu_below(&r, 4);
        size_t n = (size_t)tu_below(&r, tu_below(&r, 8) ? 300 : 20000);
        if (!p[k] && op == 3) op = 0;
        if (!p[k] && op == 2 && tu_below(&r, 2)) op = 1;
        if (p[k] && op < 2) op = 3;
        switch (op) {
        case 0: /* malloc */
            p[k] = tdm_malloc(n);
            assert_non_null(p[k]);
            size[k] = n, cur += n, allocs++, live++;
            break;
        case 1: /* calloc: zeroed */
            p[k] = tdm_calloc(n / 4 + 1, 4);
            assert_non_null(p[k]);
            n = (n / 4 + 1) * 4;
            for (size_t i = 0; i < n; i++) tu_check(p[k][i] == 0, "calloc byte %zu not zero", i);
            size[k] = n, cur += n, allocs++, live++;
            break;
        case 2: { /* realloc keeps the common prefix; realloc(NULL) is an allocation */
            int was_null = !p[k];
            size_t keep = size[k] < n ? size[k] : n;
            unsigned char *q = tdm_realloc(p[k], n);
            assert_non_null(q);
            for (size_t i = 0; i < keep; i++) tu_check(q[i] == fill[k], "realloc lost byte %zu", i);
            cur = cur - size[k] + n;
            if (was_null) allocs++, live++;
            p[k] = q, size[k] = n;
            break;
        }
        case 3:
            tdm_free(p[k]);
            cur -= size[k], live--;
            p[k] = NULL, size[k] = 0;
            break;
        }
        if (p[k]) {
            fill[k] = (unsigned char)tu_next(&r);
            memset(p[k], fill[k], size[k]);
        }
        if (cur > peak) peak = cur;
        stats(&s);
        tu_check(s.current_bytes == cur, "step %d op %d: current %" PRIu64 " want %" PRIu64, step, op, s.current_bytes, cur);
        tu_check(s.allocations == allocs, "step %d op %d: allocations", step, op);
        tu_check(s.live == live, "step %d op %d: live", step, op);
        tu_check(s.peak_bytes == peak, "step %d op %d: peak %" PRIu64 " want %" PRIu64, step, op, s.peak_bytes, peak);
    }
    for (int k = 0; k < SLOTS; k++) tdm_free(p[k]);
    tdm_free(NULL);
    stats(&s);
    assert_int_equal(s.current_bytes, base.current_bytes);
    assert_int_equal(s.live, base.live);

    /* Sizes that overflow fail without changing anything. */
    stats(&base);
    assert_null(tdm_calloc(SIZE_MAX, 2));
    assert_null(tdm_calloc(2, SIZE_MAX));
    assert_null(tdm_calloc(SIZE_MAX / 3 + 1, 3));
    assert_null(tdm_calloc((SIZE_MAX >> 1) + 1, 2));
    assert_null(tdm_malloc(SIZE_MAX));
    assert_null(tdm_malloc(SIZE_MAX - 8));
    unsigned char *q = tdm_malloc(10);
    assert_non_null(q);
    memset(q, 7, 10);
    assert_null(tdm_realloc(q, SIZE_MAX));
    assert_null(tdm_realloc(q, SIZE_MAX - 4));
    for (int i = 0; i < 10; i++) assert_int_equal(q[i], 7); /* untouched after a failed realloc */
    tdm_free(q);
    stats(&s);
    assert_int_equal(s.current_bytes, base.current_bytes);
    assert_int_equal(s.live, base.live);
    assert_int_equal(s.allocations, base.allocations + 1);

    /* Large blocks are kept when freed and serve the next large request they fit (at most 1.5 times its
     * size), counted as freed meanwhile; calloc and small requests never get one. */
    const size_t big = (size_t)20 << 20;
    stats(&base);
    unsigned char *b1 = tdm_malloc(big);
    assert_non_null(b1);
    memset(b1, 0xA5, big);
    tdm_free(b1);
    stats(&s);
    assert_int_equal(s.current_bytes, base.current_bytes);
    assert_int_equal(s.live, base.live);
    unsigned char *z = tdm_calloc(big, 1); /* zeroed, whatever is kept */
    assert_non_null(z);
    for (size_t i = 0; i < big; i += 4093) tu_check(z[i] == 0, "calloc byte %zu not zero", i);
    unsigned char *b2 = tdm_malloc(big - 4096); /* fits the kept block */
    tu_check(b2 == b1, "a freed 20 MB block did not serve the next 20 MB request");
    unsigned char *b3 = tdm_malloc(big / 2); /* nothing kept fits: fresh */
    assert_non_null(b3);
    memset(b2, 1, big - 4096), memset(b3, 2, big / 2);
    stats(&s);
    assert_int_equal(s.current_bytes, base.current_bytes + big + (big - 4096) + big / 2);
    assert_int_equal(s.live, base.live + 3);
    unsigned char *b4 = tdm_realloc(b2, big + 100); /* a kept block grows like any other */
    assert_non_null(b4);
    for (size_t i = 0; i < big - 4096; i += 4093) tu_check(b4[i] == 1, "realloc lost byte %zu", i);
    tdm_free(b4), tdm_free(b3), tdm_free(z);
    unsigned char *c10 = tdm_malloc(big / 2 - 4096); /* blocks from 4 MB up are kept: b3's serves it */
    tu_check(c10 == b3, "a freed 10 MB block did not serve the next 10 MB request");
    tdm_free(c10);
    unsigned char *c40 = tdm_malloc(2 * big); /* now kept: 40 MB (and b4's 20 MB, b3's 10 MB; z came from calloc) */
    assert_non_null(c40);
    uintptr_t at40 = (uintptr_t)c40;
    tdm_free(c40);
    unsigned char *c17 = tdm_malloc(big - (big >> 3)), *c30 = tdm_malloc(big + big / 2);
    assert_non_null(c17), assert_non_null(c30);
    tu_check((uintptr_t)c17 != at40, "a 40 MB block served a 17.5 MB request (more than 1.5 times its size)");
    tu_check((uintptr_t)c30 == at40, "the kept 40 MB block did not serve a 30 MB request");
    tdm_free(c17), tdm_free(c30);
    stats(&s);
    assert_int_equal(s.current_bytes, base.current_bytes);
    assert_int_equal(s.live, base.live);

    /* The four blocks freed last are the ones kept (older ones, and blocks from calloc, make way): six
     * blocks of 50-70 MB (none of those kept above fits them; 4 MB apart, blocks being whole 2 MB pages)
     * freed in turn, then the four last sizes asked for again, largest first. */
    unsigned char *six[6];
    for (int i = 0; i < 6; i++) assert_non_null(six[i] = tdm_malloc((size_t)(50 + 4 * i) << 20));
    unsigned char *zc = tdm_calloc((size_t)11 << 20, 1);
    assert_non_null(zc);
    for (int i = 0; i < 6; i++) tdm_free(six[i]);
    tdm_free(zc); /* from calloc: not kept, so it takes no slot from six[2..5] */
    for (int i = 5; i >= 2; i--) {
        unsigned char *again = tdm_malloc(((size_t)(50 + 4 * i) << 20) - 1024);
        tu_check(again == six[i], "the %d MB block freed among the last four was not kept", 50 + 4 * i);
        tdm_free(again);
    }

    /* strndup copies len bytes (NULs included) and terminates. */
    char *d = tdm_strndup("ab\0cdef", 5);
    assert_non_null(d);
    assert_memory_equal(d, "ab\0cd", 5);
    assert_int_equal(d[5], '\0');
    stats(&s);
    assert_int_equal(s.current_bytes, base.current_bytes + 6);
    tdm_free(d);
}

/* Blocks of 4 MB and more are mappings of their own, 2 MB-aligned (the caller's pointer just past the
 * block's header), so that transparent huge pages back them whole; realloc keeps their bytes whether
 * it grows them in place, moves them, shrinks them or brings them down from or up to glibc's sizes, and
 * the accounting is exact throughout. (A build with AddressSanitizer keeps glibc's blocks: no alignment
 * to check there.) */
static void test_alloc_mapped(void **state) {
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    const int aligned = 0;
#else
    const int aligned = 1;
#endif
    const size_t mb = (size_t)1 << 20, huge = 2 * mb;
    tu_rng r = tu_rng_for(12);
    enum { SLOTS = 6 };
    unsigned char *p[SLOTS] = {0};
    size_t size[SLOTS] = {0};
    tdm_alloc_stats base, s;
    stats(&base);
    uint64_t cur = base.current_bytes;
    for (int step = 0; step < 300; step++) {
        int k = (int)tu_below(&r, SLOTS);
        /* sizes around the 4 MB line and the 2 MB pages: a few bytes either side of them too */
        size_t n = (size_t)tu_below(&r, 12) * mb + (tu_below(&r, 2) ? (size_t)tu_below(&r, 64) : (size_t)tu_below(&r, mb));
        if (tu_below(&r, 4) == 0) n = 4 * mb - 16 + (size_t)tu_below(&r, 32);
        if (p[k] && tu_below(&r, 3) == 0) {
            tdm_free(p[k]);
            cur -= size[k], p[k] = NULL, size[k] = 0;
        } else {
            size_t keep = size[k] < n ? size[k] : n;
            unsigned char *q = p[k] ? tdm_realloc(p[k], n) : tdm_malloc(n);
            assert_non_null(q);
            /* every byte kept: each slot holds its slot number plus the byte's position, mod 251 */
            for (size_t i = 0; i < keep; i += 509) tu_check(q[i] == (unsigned char)((k + i) % 251), "step %d: byte %zu lost", step, i);
            if (keep) tu_check(q[keep - 1] == (unsigned char)((k + keep - 1) % 251), "step %d: last byte lost", step);
            if (aligned && n >= 4 * mb && n < 16 * mb)
                tu_check((uintptr_t)q % huge <= 64, "step %d: a %zu-byte block is not a 2 MB-aligned mapping", step, n);
            for (size_t i = keep; i < n; i++) q[i] = (unsigned char)((k + i) % 251);
            cur = cur - size[k] + n, p[k] = q, size[k] = n;
        }
        stats(&s);
        tu_check(s.current_bytes == cur, "step %d: current %" PRIu64 " want %" PRIu64, step, s.current_bytes, cur);
    }
    for (int k = 0; k < SLOTS; k++) tdm_free(p[k]);
    /* Growing a mapped block a page at a time, as an append loop might, keeps every byte. */
    unsigned char *g = tdm_malloc(4 * mb);
    assert_non_null(g);
    memset(g, 3, 4 * mb);
    size_t gn = 4 * mb;
    for (int i = 0; i < 2000; i++) {
        g = tdm_realloc(g, gn + 4096);
        assert_non_null(g);
        if (aligned) tu_check((uintptr_t)g % huge <= 64, "grown to %zu bytes: not 2 MB-aligned", gn + 4096);
        memset(g + gn, 3, 4096), gn += 4096;
    }
    for (size_t i = 0; i < gn; i += 4093) tu_check(g[i] == 3, "grown block: byte %zu lost", i);
    tdm_free(g);
    /* A block that cannot grow where it lies (a page taken just past its mapping) moves, bytes and
     * alignment intact. */
    unsigned char *m = tdm_malloc(4 * mb);
    assert_non_null(m);
    memset(m, 5, 4 * mb);
    void *guard = MAP_FAILED;
    if (aligned) {
        uintptr_t end = ((uintptr_t)m & ~(uintptr_t)(huge - 1)) + 3 * huge; /* 4 MB + the header: three pages */
        guard = mmap((void *)end, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (guard != MAP_FAILED && guard != (void *)end) munmap(guard, 4096), guard = MAP_FAILED;
    }
    unsigned char *m2 = tdm_realloc(m, 9 * mb);
    assert_non_null(m2);
    if (guard != MAP_FAILED) tu_check(m2 != m, "grew over a page that was taken");
    if (aligned) tu_check((uintptr_t)m2 % huge <= 64, "moved block not 2 MB-aligned");
    for (size_t i = 0; i < 4 * mb; i += 4093) tu_check(m2[i] == 5, "moved block: byte %zu lost", i);
    memset(m2 + 4 * mb, 6, 5 * mb); /* the new part is writable */
    tdm_free(m2);
    if (guard != MAP_FAILED) munmap(guard, 4096);
    stats(&s);
    assert_int_equal(s.current_bytes, base.current_bytes);
    assert_int_equal(s.live, base.live);
}

/* ---- logging -------------------------------------------------------------------------------------- */

static void test_log_levels(void **state) {
    (void)state;
    static const char *names[] = {"error", "warn", "info", "debug"};
    for (int l = 0; l < 4; l++) assert_string_equal(tdm_log_level_name((tdm_log_level)l), names[l]);
    assert_string_equal(tdm_log_level_name((tdm_log_level)9), "?");
    int marker;
    for (int set = TDM_LOG_ERROR; set <= TDM_LOG_DEBUG; set++) {
        memset(&logs, 0, sizeof logs);
        tdm_log_set_callback(capture_sink, &marker);
        tdm_log_set_level((tdm_log_level)set);
        assert_int_equal(tdm_log_get_level(), set);
        for (int m = TDM_LOG_ERROR; m <= TDM_LOG_DEBUG; m++) tdm_log((tdm_log_level)m, "message %d at %s", m, names[set]);
        assert_int_equal(logs.n, set + 1);
        for (int m = 0; m <= set; m++) {
            char want[64];
            snprintf(want, sizeof want, "message %d at %s", m, names[set]);
            assert_int_equal(logs.level[m], m);
            assert_string_equal(logs.msg[m], want);
        }
        assert_ptr_equal(logs.user_seen, &marker);
    }
    /* A long message arrives cut to a complete line, not overflowed. */
    capture_start(TDM_LOG_DEBUG);
    char big[3000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    tdm_log(TDM_LOG_ERROR, "%s", big);
    assert_int_equal(logs.n, 1);
    assert_true(strlen(logs.msg[0]) >= 512 && strlen(logs.msg[0]) < sizeof big - 1);
    /* NULL restores the default sink: the capture sees nothing more. */
    tdm_log_set_callback(NULL, NULL);
    tdm_log_set_level(TDM_LOG_ERROR);
    tdm_log(TDM_LOG_DEBUG, "dropped by the level");
    assert_int_equal(logs.n, 1);
    capture_stop();
}

/* ---- configuration -------------------------------------------------------------------------------- */

enum { V_LOG, V_THREADS, V_DEVICE, V_STRICT, V_SEQ, V_ROUTER, V_MODULE, NV };
static const char *const var_names[NV] = {"TANDEM_LOG_LEVEL", "TANDEM_THREADS", "TANDEM_DEVICE", "TANDEM_STRICT",
                                          "TANDEM_SEQ_BACKEND", "TANDEM_DEBUG_ROUTER", "TANDEM_CUDA_MODULE"};

typedef struct {
    int var;
    const char *text;
    int want;       /* the int field's value */
    int want_index; /* device_index for TANDEM_DEVICE */
} env_case;

static const env_case valid_cases[] = {
    {V_LOG, "error", TDM_LOG_ERROR, 0}, {V_LOG, "warn", TDM_LOG_WARN, 0}, {V_LOG, "info", TDM_LOG_INFO, 0},
    {V_LOG, "debug", TDM_LOG_DEBUG, 0}, {V_LOG, "DEBUG", TDM_LOG_DEBUG, 0}, {V_THREADS, "0", 0, 0},
    {V_THREADS, "1", 1, 0}, {V_THREADS, "17", 17, 0}, {V_THREADS, "1024", 1024, 0},
    {V_DEVICE, "auto", TDM_DEVICE_AUTO, 0}, {V_DEVICE, "cpu", TDM_DEVICE_CPU, 0},
    {V_DEVICE, "cuda", TDM_DEVICE_CUDA, 0}, {V_DEVICE, "cuda:3", TDM_DEVICE_CUDA, 3},
    {V_DEVICE, "CUDA:0", TDM_DEVICE_CUDA, 0}, {V_DEVICE, "CPU", TDM_DEVICE_CPU, 0},
    {V_STRICT, "1", 1, 0}, {V_STRICT, "0", 0, 0}, {V_STRICT, "true", 1, 0}, {V_STRICT, "false", 0, 0},
    {V_STRICT, "yes", 1, 0}, {V_STRICT, "no", 0, 0}, {V_STRICT, "on", 1, 0}, {V_STRICT, "OFF", 0, 0},
    {V_SEQ, "auto", TDM_DEVICE_AUTO, 0}, {V_SEQ, "cpu", TDM_DEVICE_CPU, 0}, {V_SEQ, "cuda", TDM_DEVICE_CUDA, 0},
    {V_ROUTER, "1", 1, 0}, {V_ROUTER, "false", 0, 0}, {V_ROUTER, "Yes", 1, 0},
};

static const env_case invalid_cases[] = {
    {V_LOG, "verbose", 0, 0},  {V_LOG, "", 0, 0},         {V_LOG, "3", 0, 0},         {V_THREADS, "abc", 0, 0},
    {V_THREADS, "-1", 0, 0},   {V_THREADS, "1025", 0, 0}, {V_THREADS, "12x", 0, 0},   {V_THREADS, "", 0, 0},
    {V_THREADS, "99999999999999999999", 0, 0},            {V_THREADS, "4.5", 0, 0},   {V_DEVICE, "gpu", 0, 0},
    {V_DEVICE, "cuda:", 0, 0}, {V_DEVICE, "cuda:-1", 0, 0}, {V_DEVICE, "cuda:1024", 0, 0},
    {V_DEVICE, "cuda:x", 0, 0}, {V_DEVICE, "", 0, 0},     {V_STRICT, "2", 0, 0},      {V_STRICT, "maybe", 0, 0},
    {V_STRICT, "", 0, 0},      {V_SEQ, "gpu", 0, 0},      {V_SEQ, "cuda:0", 0, 0},    {V_ROUTER, "enable", 0, 0},
};

static int int_field(const tdm_config *c, int var) {
    switch (var) {
    case V_LOG: return c->log_level;
    case V_THREADS: return c->threads;
    case V_DEVICE: return c->device;
    case V_STRICT: return c->strict;
    case V_SEQ: return c->seq_backend;
    case V_ROUTER: return c->debug_router;
    }
    return -999;
}

static char *dump(const tdm_config *c) {
    FILE *f = tmpfile();
    assert_non_null(f);
    tdm_config_dump(c, f);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_config_defaults(void **state) {
    (void)state;
    clear_tandem_env();
    tdm_config c;
    tdm_config_init(&c);
    assert_int_equal(c.threads, TDM_CONFIG_UNSET);
    assert_int_equal(c.log_level, TDM_CONFIG_UNSET);
    assert_null(c.cuda_module);
    assert_int_equal(tdm_config_resolve(&c), TDM_OK);
    assert_int_equal(c.log_level, TDM_LOG_WARN);
    assert_int_equal(c.threads, 0);
    assert_int_equal(c.device, TDM_DEVICE_AUTO);
    assert_int_equal(c.device_index, 0);
    assert_int_equal(c.strict, 0);
    assert_int_equal(c.seq_backend, TDM_DEVICE_AUTO);
    assert_int_equal(c.debug_router, 0);
    assert_non_null(c.cuda_module);
    assert_string_equal(c.cuda_module, "");
    for (int v = 0; v < NV; v++) assert_int_equal(c.sources[v], 0);
    char *d = dump(&c);
    assert_non_null(strstr(d, "TANDEM_THREADS=0 (default)"));
    assert_non_null(strstr(d, "TANDEM_LOG_LEVEL=warn (default)"));
    assert_non_null(strstr(d, "TANDEM_DEVICE=auto (default)"));
    free(d);
}

static void test_config_env_each(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof valid_cases / sizeof *valid_cases; i++) {
        const env_case *k = &valid_cases[i];
        clear_tandem_env();
        setenv(var_names[k->var], k->text, 1);
        tdm_config c;
        tdm_config_init(&c);
        int rc = tdm_config_resolve(&c);
        tu_check(rc == TDM_OK, "%s=%s: rc %d (%s)", var_names[k->var], k->text, rc, tdm_last_error());
        tu_check(int_field(&c, k->var) == k->want, "%s=%s read back as %d", var_names[k->var], k->text,
                 int_field(&c, k->var));
        if (k->var == V_DEVICE) assert_int_equal(c.device_index, k->want_index);
        for (int v = 0; v < NV; v++) tu_check(c.sources[v] == (v == k->var), "%s=%s: source of %s", var_names[k->var], k->text, var_names[v]);
    }
    clear_tandem_env();
    setenv("TANDEM_CUDA_MODULE", "/opt/x/libtandem_cuda.so", 1);
    tdm_config c;
    tdm_config_init(&c);
    assert_int_equal(tdm_config_resolve(&c), TDM_OK);
    assert_string_equal(c.cuda_module, "/opt/x/libtandem_cuda.so");
    assert_int_equal(c.sources[V_MODULE], 1);

    /* Random combinations of every variable at once, read back and dumped. */
    tu_rng r = tu_rng_for(22);
    for (int round = 0; round < 200; round++) {
        clear_tandem_env();
        int set[NV] = {0}, pick[NV];
        for (int v = 0; v < NV - 1; v++) {
            if (!tu_below(&r, 3)) continue;
            size_t n = 0, idx[32];
            for (size_t i = 0; i < sizeof valid_cases / sizeof *valid_cases; i++)
                if (valid_cases[i].var == v) idx[n++] = i;
            pick[v] = (int)idx[tu_below(&r, n)];
            set[v] = 1;
            setenv(var_names[v], valid_cases[pick[v]].text, 1);
        }
        char threads_text[16];
        if (!set[V_THREADS] && tu_below(&r, 2)) { /* any value of the range, not just the listed ones */
            set[V_THREADS] = 2;
            pick[V_THREADS] = (int)tu_below(&r, 1025);
            snprintf(threads_text, sizeof threads_text, "%d", pick[V_THREADS]);
            setenv("TANDEM_THREADS", threads_text, 1);
        }
        tdm_config_init(&c);
        assert_int_equal(tdm_config_resolve(&c), TDM_OK);
        char *d = dump(&c);
        for (int v = 0; v < NV - 1; v++) {
            int want;
            if (set[v] == 2) want = pick[v];
            else if (set[v]) want = valid_cases[pick[v]].want;
            else want = v == V_LOG ? TDM_LOG_WARN : 0;
            tu_check(int_field(&c, v) == want, "round %d: %s = %d, want %d", round, var_names[v], int_field(&c, v), want);
            tu_check(c.sources[v] == (set[v] != 0), "round %d: source of %s", round, var_names[v]);
            char key[64], line[256];
            snprintf(key, sizeof key, "%s=", var_names[v]);
            const char *at = strstr(d, key);
            tu_check(at != NULL, "dump lacks %s", var_names[v]);
            snprintf(line, sizeof line, "%.*s", (int)strcspn(at, "\n"), at);
            tu_check(strstr(line, set[v] ? "(env)" : "(default)") != NULL, "round %d: dump line \"%s\"", round, line);
        }
        if (set[V_THREADS] == 2) {
            char line[64];
            snprintf(line, sizeof line, "TANDEM_THREADS=%d (env)\n", pick[V_THREADS]);
            tu_check(strstr(d, line) != NULL, "dump: %s", d);
        }
        free(d);
    }
    clear_tandem_env();
}

static void test_config_invalid(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof invalid_cases / sizeof *invalid_cases; i++) {
        const env_case *k = &invalid_cases[i];
        clear_tandem_env();
        setenv(var_names[k->var], k->text, 1);
        tdm_config c;
        tdm_config_init(&c);
        tdm_clear_error();
        int rc = tdm_config_resolve(&c);
        tu_check(rc == TDM_E_CONFIG, "%s=\"%s\" accepted (rc %d)", var_names[k->var], k->text, rc);
        char want[128];
        snprintf(want, sizeof want, "%s=\"%s\"", var_names[k->var], k->text);
        tu_check(strstr(tdm_last_error(), want) != NULL, "message \"%s\" does not name %s", tdm_last_error(), want);
        /* tdm_init refuses the same environment. */
        tdm_ctx *ctx = (tdm_ctx *)&c; /* sentinel: must stay untouched */
        assert_int_equal(tdm_init(&ctx, NULL), TDM_E_CONFIG);
        assert_ptr_equal(ctx, (tdm_ctx *)&c);
        assert_non_null(strstr(tdm_last_error(), var_names[k->var]));
    }
    clear_tandem_env();
    /* A caller-set value out of range is refused too, naming the variable and the value. */
    tdm_config c;
    tdm_config_init(&c);
    c.threads = 2000;
    assert_int_equal(tdm_config_resolve(&c), TDM_E_CONFIG);
    assert_non_null(strstr(tdm_last_error(), "TANDEM_THREADS=2000"));
    tdm_config_init(&c);
    c.threads = -3;
    assert_int_equal(tdm_config_resolve(&c), TDM_E_CONFIG);
    assert_non_null(strstr(tdm_last_error(), "TANDEM_THREADS=-3"));
}

static void test_config_caller_wins(void **state) {
    (void)state;
    clear_tandem_env();
    setenv("TANDEM_LOG_LEVEL", "debug", 1);
    setenv("TANDEM_THREADS", "abc", 1); /* invalid, but the caller's value means it is never read */
    setenv("TANDEM_DEVICE", "cuda:2", 1);
    setenv("TANDEM_STRICT", "0", 1);
    setenv("TANDEM_SEQ_BACKEND", "cuda", 1);
    setenv("TANDEM_DEBUG_ROUTER", "1", 1);
    setenv("TANDEM_CUDA_MODULE", "/env/path.so", 1);
    tdm_config c;
    tdm_config_init(&c);
    c.log_level = TDM_LOG_ERROR;
    c.threads = 5;
    c.device = TDM_DEVICE_CPU;
    c.strict = 0;
    c.seq_backend = TDM_DEVICE_CPU;
    c.debug_router = 0;
    const char *mine = "/caller/path.so";
    c.cuda_module = mine;
    assert_int_equal(tdm_config_resolve(&c), TDM_OK);
    assert_int_equal(c.log_level, TDM_LOG_ERROR);
    assert_int_equal(c.threads, 5);
    assert_int_equal(c.device, TDM_DEVICE_CPU);
    assert_int_equal(c.seq_backend, TDM_DEVICE_CPU);
    assert_int_equal(c.debug_router, 0);
    assert_ptr_equal(c.cuda_module, mine);
    for (int v = 0; v < NV; v++) assert_int_equal(c.sources[v], 2);
    char *d = dump(&c);
    assert_non_null(strstr(d, "TANDEM_THREADS=5 (caller)"));
    assert_non_null(strstr(d, "TANDEM_CUDA_MODULE=/caller/path.so (caller)"));
    free(d);

    /* Only the fields the caller set win; the others come from the environment. */
    tdm_config_init(&c);
    c.threads = 7;
    assert_int_equal(tdm_config_resolve(&c), TDM_OK);
    assert_int_equal(c.threads, 7);
    assert_int_equal(c.log_level, TDM_LOG_DEBUG);
    assert_int_equal(c.device, TDM_DEVICE_CUDA);
    assert_int_equal(c.device_index, 2);
    assert_int_equal(c.seq_backend, TDM_DEVICE_CUDA);
    assert_int_equal(c.debug_router, 1);
    assert_string_equal(c.cuda_module, "/env/path.so");
    assert_int_equal(c.sources[V_THREADS], 2);
    assert_int_equal(c.sources[V_LOG], 1);
    assert_int_equal(c.sources[V_STRICT], 1);
    clear_tandem_env();
}

static void test_config_unknown_variable(void **state) {
    (void)state;
    clear_tandem_env();
    setenv("TANDEM_THREDS", "4", 1);
    capture_start(TDM_LOG_WARN);
    tdm_config c;
    tdm_config_init(&c);
    assert_int_equal(tdm_config_resolve(&c), TDM_OK);
    int at = find_log(TDM_LOG_WARN, "TANDEM_THREDS", "TANDEM_THREADS");
    tu_check(at >= 0, "no warning naming TANDEM_THREDS and the closest name (%d messages)", logs.n);
    assert_int_equal(c.threads, 0); /* the misspelt variable is not read */

    /* Names the project reads elsewhere are not unknown. */
    const char *old_seed = getenv("TANDEM_TEST_SEED");
    char saved[64] = "";
    if (old_seed) snprintf(saved, sizeof saved, "%s", old_seed);
    unsetenv("TANDEM_THREDS");
    setenv("TANDEM_TEST_SEED", "5", 1);
    setenv("TANDEM_BENCH_QUICK", "1", 1);
    logs.n = 0;
    tdm_config_init(&c);
    assert_int_equal(tdm_config_resolve(&c), TDM_OK);
    assert_int_equal(logs.n, 0);
    unsetenv("TANDEM_BENCH_QUICK");
    if (old_seed) setenv("TANDEM_TEST_SEED", saved, 1);
    else unsetenv("TANDEM_TEST_SEED");

    /* Under TANDEM_STRICT=1 (environment or caller) an unknown name is an error naming it. */
    setenv("TANDEM_FOO", "1", 1);
    setenv("TANDEM_STRICT", "1", 1);
    tdm_config_init(&c);
    assert_int_equal(tdm_config_resolve(&c), TDM_E_CONFIG);
    assert_non_null(strstr(tdm_last_error(), "TANDEM_FOO"));
    tdm_ctx *ctx = NULL;
    assert_int_equal(tdm_init(&ctx, NULL), TDM_E_CONFIG);
    assert_null(ctx);
    unsetenv("TANDEM_STRICT");
    tdm_config_init(&c);
    c.strict = 1;
    assert_int_equal(tdm_config_resolve(&c), TDM_E_CONFIG);
    assert_non_null(strstr(tdm_last_error(), "TANDEM_FOO"));
    /* Without strict it is only a warning. */
    logs.n = 0;
    tdm_config_init(&c);
    assert_int_equal(tdm_config_resolve(&c), TDM_OK);
    assert_true(find_log(TDM_LOG_WARN, "TANDEM_FOO", NULL) >= 0);
    /* An empty-valued and a value-less unknown still count. */
    logs.n = 0;
    setenv("TANDEM_FOO", "", 1);
    tdm_config_init(&c);
    assert_int_equal(tdm_config_resolve(&c), TDM_OK);
    assert_true(find_log(TDM_LOG_WARN, "TANDEM_FOO", NULL) >= 0);
    capture_stop();
    clear_tandem_env();
}

/* ---- context and backends ------------------------------------------------------------------------- */

static tdm_ctx *new_ctx(int device, int strict, int router) {
    tdm_config c;
    tdm_config_init(&c);
    if (device != TDM_CONFIG_UNSET) c.device = device;
    if (strict != TDM_CONFIG_UNSET) c.strict = strict;
    if (router != TDM_CONFIG_UNSET) c.debug_router = router;
    tdm_ctx *ctx = NULL;
    int rc = tdm_init(&ctx, &c);
    tu_check(rc == TDM_OK, "tdm_init: %d %s", rc, tdm_last_error());
    return ctx;
}

static void test_init_destroy(void **state) {
    (void)state;
    clear_tandem_env();
    assert_int_equal(tdm_init(NULL, NULL), TDM_E_INVAL);
    tdm_alloc_stats before, after;
    stats(&before);
    tdm_ctx *ctx = NULL;
    assert_int_equal(tdm_init(&ctx, NULL), TDM_OK);
    assert_non_null(ctx);
    assert_true(tdm_ctx_threads(ctx) >= 1);
    assert_int_equal(tdm_ctx_config(ctx)->threads, 0);
    assert_int_equal(tdm_log_get_level(), TDM_LOG_WARN);
    tdm_destroy(ctx);
    tdm_destroy(NULL);
    stats(&after);
    assert_int_equal(after.live, before.live); /* the context leaves nothing behind */
    assert_int_equal(after.current_bytes, before.current_bytes);

    tdm_config c;
    tdm_config_init(&c);
    c.threads = 3;
    c.log_level = TDM_LOG_INFO;
    capture_start(TDM_LOG_WARN);
    assert_int_equal(tdm_init(&ctx, &c), TDM_OK);
    assert_int_equal(tdm_ctx_threads(ctx), 3);
    assert_int_equal(tdm_ctx_config(ctx)->threads, 3);
    assert_int_equal(tdm_ctx_config(ctx)->sources[V_THREADS], 2);
    assert_int_equal(tdm_log_get_level(), TDM_LOG_INFO); /* tdm_init applies the level */
    assert_int_equal(c.threads, 3);                       /* cfg is borrowed, not written */
    tdm_destroy(ctx);

    setenv("TANDEM_THREADS", "6", 1);
    assert_int_equal(tdm_init(&ctx, NULL), TDM_OK);
    assert_int_equal(tdm_ctx_threads(ctx), 6);
    tdm_destroy(ctx);

    /* A module path that does not exist: still a working context, CPU only, and the reason at info. */
    clear_tandem_env();
    tdm_config_init(&c);
    c.cuda_module = "/nonexistent/dir/libtandem_cuda.so";
    c.log_level = TDM_LOG_INFO;
    logs.n = 0;
    tdm_log_set_callback(capture_sink, &logs);
    assert_int_equal(tdm_init(&ctx, &c), TDM_OK);
    assert_int_equal(tdm_backend_count(ctx), 1);
    tu_check(find_log(TDM_LOG_INFO, "no CUDA backend", NULL) >= 0, "no info message about the missing module");
    tdm_destroy(ctx);
    capture_stop();
}

static void check_backend_memory(const tdm_backend *b, tu_rng *r) {
    size_t fb = 0, tb = 0;
    assert_int_equal(b->mem_info(b, &fb, &tb), TDM_OK);
    assert_true(tb > 0);
    assert_true(fb <= tb);
    assert_int_equal(b->release(b, NULL), TDM_OK);
    for (int round = 0; round < 20; round++) {
        size_t n = (size_t)tu_below(r, round < 2 ? 1 : 100000);
        if (round == 0) n = 0;
        unsigned char *host = malloc(n + 1), *back = malloc(n + 1);
        for (size_t i = 0; i < n; i++) host[i] = (unsigned char)tu_next(r);
        void *d1 = NULL, *d2 = NULL;
        tdm_alloc_stats s0, s1;
        stats(&s0);
        assert_int_equal(b->alloc(b, n, &d1), TDM_OK);
        assert_int_equal(b->alloc(b, n, &d2), TDM_OK);
        assert_non_null(d1);
        assert_non_null(d2);
        if (b->kind == TDM_BACKEND_CPU) { /* CPU memory is accounted host memory */
            stats(&s1);
            assert_int_equal(s1.live, s0.live + 2);
        }
        assert_int_equal(b->copy(b, d1, host, n, TDM_COPY_H2D), TDM_OK);
        assert_int_equal(b->copy(b, d2, d1, n, TDM_COPY_D2D), TDM_OK);
        memset(back, 0xA5, n + 1);
        assert_int_equal(b->copy(b, back, d2, n, TDM_COPY_D2H), TDM_OK);
        assert_int_equal(b->sync(b), TDM_OK);
        if (n) assert_memory_equal(back, host, n);
        assert_int_equal(back[n], 0xA5); /* nothing past the end */
        assert_int_equal(b->release(b, d1), TDM_OK);
        assert_int_equal(b->release(b, d2), TDM_OK);
        if (b->kind == TDM_BACKEND_CPU) {
            stats(&s1);
            assert_int_equal(s1.live, s0.live);
            assert_int_equal(s1.current_bytes, s0.current_bytes);
        }
        free(host);
        free(back);
    }
}

static void test_backends(void **state) {
    (void)state;
    clear_tandem_env();
    tu_rng r = tu_rng_for(33);
    tdm_ctx *ctx = new_ctx(TDM_CONFIG_UNSET, TDM_CONFIG_UNSET, TDM_CONFIG_UNSET);
    int n = tdm_backend_count(ctx);
    assert_true(n >= 1);
    const tdm_backend *cpu = tdm_backend_get(ctx, 0);
    assert_non_null(cpu);
    assert_int_equal(cpu->kind, TDM_BACKEND_CPU);
    assert_string_equal(cpu->name, "cpu");
    assert_int_equal(cpu->device, -1);
    assert_true(strlen(cpu->description) > 0);
    assert_ptr_equal(tdm_backend_find(ctx, TDM_BACKEND_CPU), cpu);
    assert_null(tdm_backend_get(ctx, -1));
    assert_null(tdm_backend_get(ctx, n));
    static const char *op_names[] = {
#define OPN(name, text) text,
        TDM_OP_LIST(OPN)
#undef OPN
    };
    assert_int_equal(sizeof op_names / sizeof *op_names, TDM_OP_COUNT);
    for (int op = 0; op < TDM_OP_COUNT; op++) {
        assert_string_equal(tdm_op_name((tdm_op)op), op_names[op]);
        assert_int_equal(cpu->supports(cpu, (tdm_op)op), 1); /* the CPU is the reference for every op */
    }
    assert_string_equal(tdm_op_name(TDM_OP_COUNT), "unknown");
    assert_int_equal(cpu->supports(cpu, TDM_OP_COUNT), 0);
    check_backend_memory(cpu, &r);
    const tdm_backend *cuda = tdm_backend_find(ctx, TDM_BACKEND_CUDA);
    if (cuda) { /* a GPU machine: check the registered device(s) the same way */
        print_message("CUDA backend registered: %s (%s)\n", cuda->name, cuda->description);
        for (int i = 1; i < n; i++) {
            const tdm_backend *b = tdm_backend_get(ctx, i);
            assert_int_equal(b->kind, TDM_BACKEND_CUDA);
            assert_true(b->device >= 0);
            assert_non_null(b->name);
            for (int op = 0; op < TDM_OP_COUNT; op++) {
                int s = b->supports(b, (tdm_op)op);
                assert_true(s == 0 || s == 1);
            }
            check_backend_memory(b, &r);
        }
    } else {
        assert_int_equal(n, 1);
    }
    tdm_destroy(ctx);
}

static void test_backend_select(void **state) {
    (void)state;
    clear_tandem_env();
    static const char *reason_names[] = {
#define RN(name, text) text,
        TDM_ROUTE_REASON_LIST(RN)
#undef RN
    };
    for (int i = 0; i < (int)(sizeof reason_names / sizeof *reason_names); i++)
        assert_string_equal(tdm_route_reason_name((tdm_route_reason)i), reason_names[i]);
    assert_string_equal(tdm_route_reason_name(TDM_ROUTE_ONLY_CPU), "NO_GPU");
    assert_string_equal(tdm_route_reason_name((tdm_route_reason)99), "UNKNOWN");

    tdm_ctx *ctx = new_ctx(TDM_CONFIG_UNSET, TDM_CONFIG_UNSET, TDM_CONFIG_UNSET);
    const tdm_backend *cpu = tdm_backend_get(ctx, 0);
    int any_cuda = tdm_backend_find(ctx, TDM_BACKEND_CUDA) != NULL;
    for (int op = 0; op < TDM_OP_COUNT; op++) {
        const tdm_backend *gpu = NULL;
        for (int i = 1; i < tdm_backend_count(ctx) && !gpu; i++) {
            const tdm_backend *b = tdm_backend_get(ctx, i);
            if (b->kind == TDM_BACKEND_CUDA && b->supports(b, (tdm_op)op)) gpu = b;
        }
        const tdm_backend *out = NULL;
        tdm_route_reason why = (tdm_route_reason)-1;
        assert_int_equal(tdm_backend_select(ctx, (tdm_op)op, TDM_DEVICE_AUTO, &out, &why), TDM_OK);
        if (gpu) {
            assert_ptr_equal(out, gpu);
            assert_int_equal(why, TDM_ROUTE_PREFER_GPU);
        } else {
            assert_ptr_equal(out, cpu);
            assert_int_equal(why, any_cuda ? TDM_ROUTE_NO_GPU_IMPL : TDM_ROUTE_ONLY_CPU);
        }
        assert_int_equal(tdm_backend_select(ctx, (tdm_op)op, TDM_DEVICE_CPU, &out, &why), TDM_OK);
        assert_ptr_equal(out, cpu);
        assert_int_equal(why, TDM_ROUTE_FORCED_CPU);
        assert_int_equal(tdm_backend_select(ctx, (tdm_op)op, TDM_DEVICE_CUDA, &out, &why), TDM_OK);
        assert_ptr_equal(out, gpu ? gpu : cpu);
        assert_int_equal(why, gpu ? TDM_ROUTE_FORCED_GPU : TDM_ROUTE_FORCED_GPU_UNAVAILABLE);
        out = NULL;
        assert_int_equal(tdm_backend_select(ctx, (tdm_op)op, TDM_DEVICE_AUTO, &out, NULL), TDM_OK); /* reason optional */
        assert_non_null(out);
    }
    const tdm_backend *out = cpu;
    assert_int_equal(tdm_backend_select(ctx, TDM_OP_COUNT, TDM_DEVICE_AUTO, &out, NULL), TDM_E_INVAL);
    assert_int_equal(tdm_backend_select(ctx, (tdm_op)-1, TDM_DEVICE_AUTO, &out, NULL), TDM_E_INVAL);
    assert_int_equal(tdm_backend_select(ctx, TDM_OP_SEQ_LCS, TDM_DEVICE_AUTO, NULL, NULL), TDM_E_INVAL);
    assert_int_equal(tdm_backend_select(NULL, TDM_OP_SEQ_LCS, TDM_DEVICE_AUTO, &out, NULL), TDM_E_INVAL);
    tdm_destroy(ctx);

    /* TANDEM_DEVICE=cpu registers no GPU at all, so auto answers ONLY_CPU on any machine. */
    ctx = new_ctx(TDM_DEVICE_CPU, TDM_CONFIG_UNSET, TDM_CONFIG_UNSET);
    assert_int_equal(tdm_backend_count(ctx), 1);
    tdm_route_reason why;
    assert_int_equal(tdm_backend_select(ctx, TDM_OP_SEQ_DIFFLIB, TDM_DEVICE_AUTO, &out, &why), TDM_OK);
    assert_ptr_equal(out, tdm_backend_get(ctx, 0));
    assert_int_equal(why, TDM_ROUTE_ONLY_CPU);
    assert_int_equal(tdm_backend_select(ctx, TDM_OP_SEQ_DIFFLIB, TDM_DEVICE_CUDA, &out, &why), TDM_OK);
    assert_int_equal(why, TDM_ROUTE_FORCED_GPU_UNAVAILABLE);
    tdm_destroy(ctx);

    /* Strict: forcing CUDA where no device implements the op is an error, and *out is left alone. */
    ctx = new_ctx(TDM_CONFIG_UNSET, 1, TDM_CONFIG_UNSET);
    for (int op = 0; op < TDM_OP_COUNT; op++) {
        const tdm_backend *gpu = NULL;
        for (int i = 1; i < tdm_backend_count(ctx) && !gpu; i++) {
            const tdm_backend *b = tdm_backend_get(ctx, i);
            if (b->kind == TDM_BACKEND_CUDA && b->supports(b, (tdm_op)op)) gpu = b;
        }
        out = NULL;
        why = (tdm_route_reason)-1;
        int rc = tdm_backend_select(ctx, (tdm_op)op, TDM_DEVICE_CUDA, &out, &why);
        if (gpu) {
            assert_int_equal(rc, TDM_OK);
            assert_ptr_equal(out, gpu);
            assert_int_equal(why, TDM_ROUTE_FORCED_GPU);
        } else {
            assert_int_equal(rc, TDM_E_UNSUPPORTED);
            assert_null(out);
            assert_int_equal(why, (tdm_route_reason)-1);
            assert_non_null(strstr(tdm_last_error(), tdm_op_name((tdm_op)op)));
        }
        assert_int_equal(tdm_backend_select(ctx, (tdm_op)op, TDM_DEVICE_CPU, &out, &why), TDM_OK);
        assert_int_equal(why, TDM_ROUTE_FORCED_CPU);
    }
    int have_gpu = tdm_backend_find(ctx, TDM_BACKEND_CUDA) != NULL;
    tdm_destroy(ctx);

    /* Strict with TANDEM_DEVICE=cuda and no device: tdm_init itself refuses. */
    tdm_config c;
    tdm_config_init(&c);
    c.device = TDM_DEVICE_CUDA;
    c.strict = 1;
    ctx = NULL;
    int rc = tdm_init(&ctx, &c);
    if (have_gpu) {
        assert_int_equal(rc, TDM_OK);
        tdm_destroy(ctx);
    } else {
        assert_int_equal(rc, TDM_E_CONFIG);
        assert_null(ctx);
    }

    /* TANDEM_DEBUG_ROUTER=1: each decision is logged with the op and the reason. */
    ctx = new_ctx(TDM_DEVICE_CPU, TDM_CONFIG_UNSET, 1);
    capture_start(TDM_LOG_DEBUG);
    assert_int_equal(tdm_backend_select(ctx, TDM_OP_SEQ_CHAR, TDM_DEVICE_CPU, &out, &why), TDM_OK);
    tu_check(logs.n == 1 && strstr(logs.msg[0], "seq.char") && strstr(logs.msg[0], "FORCED_CPU"),
             "router log: %d messages, first \"%s\"", logs.n, logs.msg[0]);
    capture_stop();
    tdm_destroy(ctx);
}

int main(void) {
    tu_init_seed("test_core");
    clear_tandem_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_texts_and_names),
        cmocka_unit_test(test_error_message),
        cmocka_unit_test(test_alloc_accounting),
        cmocka_unit_test(test_alloc_mapped),
        cmocka_unit_test(test_log_levels),
        cmocka_unit_test(test_config_defaults),
        cmocka_unit_test(test_config_env_each),
        cmocka_unit_test(test_config_invalid),
        cmocka_unit_test(test_config_caller_wins),
        cmocka_unit_test(test_config_unknown_variable),
        cmocka_unit_test(test_init_destroy),
        cmocka_unit_test(test_backends),
        cmocka_unit_test(test_backend_select),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
