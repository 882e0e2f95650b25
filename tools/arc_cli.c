/* arc_cli.c: loading for the `tandem arc` subcommands: solver files through the library's parser, and
 * ARC task JSON (spec §6: "train" and "test" arrays of {"input", "output"} grids, unknown keys ignored)
 * through jansson, checked so that a malformed file is reported by name, split and pair. */
#include "arc_cli.h"

#include "cli.h"

#include <stdlib.h>
#include <string.h>

tdm_arc_programs *arc_cli_load_programs(const char *path) {
    FILE *f = cli_open_in(path);
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    cli_close(f);
    if (!buf) return cli_fail("%s: out of memory", path), NULL;
    tdm_arc_programs *p = NULL;
    int rc = tdm_arc_programs_parse(buf, len, path, &p);
    free(buf);
    if (rc) {
        cli_fail("%s", tdm_last_error());
        return NULL;
    }
    return p;
}

static int read_grid(const json_t *j, arc_cli_grid *g, const char *path, const char *split, size_t k, const char *field) {
    g->c = NULL;
    if (!json_is_array(j) || !json_array_size(j))
        return cli_fail("%s: %s pair %zu: \"%s\" is not a non-empty list of rows", path, split, k, field), -1;
    size_t h = json_array_size(j), w = 0;
    for (size_t i = 0; i < h; i++) {
        const json_t *row = json_array_get(j, i);
        if (!json_is_array(row) || (i && json_array_size(row) != w) || !json_array_size(row))
            return cli_fail("%s: %s pair %zu: \"%s\" row %zu is not a list as long as row 0", path, split, k, field, i), -1;
        w = json_array_size(row);
    }
    if (h > 1000 || w > 1000) return cli_fail("%s: %s pair %zu: \"%s\" is larger than 1000x1000", path, split, k, field), -1;
    g->h = (int)h, g->w = (int)w;
    g->c = malloc(h * w * sizeof *g->c);
    if (!g->c) return cli_fail("out of memory"), -1;
    for (size_t i = 0; i < h; i++)
        for (size_t jj = 0; jj < w; jj++) {
            const json_t *v = json_array_get(json_array_get(j, i), jj);
            if (!json_is_integer(v) || json_integer_value(v) < -1000000 || json_integer_value(v) > 1000000)
                return cli_fail("%s: %s pair %zu: \"%s\" cell (%zu, %zu) is not a small integer", path, split, k, field, i, jj), -1;
            g->c[i * w + jj] = (int)json_integer_value(v);
        }
    return 0;
}

void arc_cli_task_free(arc_cli_task *t) {
    for (int k = 0; k < t->n; k++) free(t->pairs[k].in.c), free(t->pairs[k].out.c);
    free(t->pairs);
    t->pairs = NULL, t->n = 0;
}

int arc_cli_load_task(const char *path, arc_cli_task *out) {
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    out->pairs = NULL, out->n = 0;
    if (!root) return cli_fail("%s:%d: %s", path, err.line, err.text), -1;
    int rc = 0;
    const char *splits[2] = {"train", "test"};
    size_t total = 0;
    for (int s = 0; s < 2; s++) {
        const json_t *a = json_object_get(root, splits[s]);
        if (!json_is_array(a)) {
            rc = cli_fail("%s: \"%s\" is missing or not a list", path, splits[s]);
            goto done;
        }
        total += json_array_size(a);
    }
    out->pairs = calloc(total ? total : 1, sizeof *out->pairs);
    if (!out->pairs) {
        rc = cli_fail("out of memory");
        goto done;
    }
    for (int s = 0; s < 2 && !rc; s++) {
        const json_t *a = json_object_get(root, splits[s]);
        for (size_t k = 0; k < json_array_size(a) && !rc; k++) {
            const json_t *pr = json_array_get(a, k);
            arc_cli_pair *p = &out->pairs[out->n++];
            p->test = s, p->index = (int)k;
            if (read_grid(json_object_get(pr, "input"), &p->in, path, splits[s], k, "input") ||
                read_grid(json_object_get(pr, "output"), &p->out, path, splits[s], k, "output"))
                rc = 1;
        }
    }
done:
    json_decref(root);
    if (rc) arc_cli_task_free(out);
    return rc ? -1 : 0;
}
