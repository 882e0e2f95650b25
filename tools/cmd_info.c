/* cmd_info.c: `tandem info`, what this build and machine offer: version, effective configuration and
 * the registered backends, so a user can see at once whether a GPU is used and why not. */
#include "cli.h"

#include "tandem/backend.h"

#include <string.h>

int cmd_info(int argc, char **argv) {
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i]))
            return fputs("usage: tandem info [--json]\n\nPrints the version, the effective TANDEM_* configuration "
                         "and the backends found on this machine\n(run with TANDEM_LOG_LEVEL=info to see why a GPU "
                         "was not used).\n", stdout), 0;
        if (!strcmp(argv[i], "--json")) json = 1;
        else return cli_usage("info: unknown option '%s'", argv[i]);
    }
    tdm_ctx *ctx = cli_ctx();
    if (!ctx) return 1;
    int n = tdm_backend_count(ctx);
    if (json) {
        printf("{\"version\": \"%s\", \"threads\": %d, \"backends\": [", tdm_version(), tdm_ctx_threads(ctx));
        for (int i = 0; i < n; i++) {
            const tdm_backend *b = tdm_backend_get(ctx, i);
            printf("%s{\"name\": \"%s\", \"description\": ", i ? ", " : "", b->name);
            cli_put_json_string(stdout, b->description, strlen(b->description));
            putchar('}');
        }
        puts("]}");
        return 0;
    }
    printf("tandem %s, %d worker threads\n\nbackends:\n", tdm_version(), tdm_ctx_threads(ctx));
    for (int i = 0; i < n; i++) {
        const tdm_backend *b = tdm_backend_get(ctx, i);
        size_t fr = 0, tot = 0;
        b->mem_info(b, &fr, &tot);
        printf("  %-8s %s (%.1f of %.1f GiB free)\n", b->name, b->description, fr / 1073741824.0, tot / 1073741824.0);
    }
    if (n == 1) printf("  (no CUDA backend: run with TANDEM_LOG_LEVEL=info to see why)\n");
    printf("\nconfiguration:\n");
    tdm_config_dump(tdm_ctx_config(ctx), stdout);
    return 0;
}
