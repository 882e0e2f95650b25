/* cmd_serve.c: `tandem serve`, the KATO-compatible HTTP service on the durable store (src/server,
 * src/store). Parses the options, starts the server, prints where it listens and how to talk to it, and
 * runs until SIGINT or SIGTERM. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#ifdef TANDEM_HAVE_SERVER
#include "tandem/server.h"

static const char *usage =
    "usage: tandem serve [options]\n"
    "\n"
    "Serves KATO's session API over HTTP (spec/kato.md section 6: /sessions, observe, learn, predictions, ...)\n"
    "with every node's patterns in an LMDB store under --data. A learn is answered after it is on disk; at\n"
    "start every stored pattern is loaded. Stops on SIGINT or SIGTERM. TANDEM_API_TOKEN, when set, is\n"
    "required as 'Authorization: Bearer <token>' on every request but GET /health.\n"
    "Options:\n"
    "  --listen HOST:PORT   IPv4 address and port (default 127.0.0.1:8000; port 0 = any free port)\n"
    "  --data DIR           data directory (default ./tandem-data)\n"
    "  --threads N          request threads, 1..64 (default: TANDEM_THREADS, else the cores)\n"
    "  --max-body BYTES     largest request body (default 1048576)\n"
    "  --session-ttl S      TTL of sessions created without ttl_seconds (default 3600)\n"
    "  --max-sessions N     live sessions at most (default 100000)\n"
    "  --max-nodes N        nodes at most (default 4096)\n"
    "  --map-size MIB       largest size of the store (default 65536 MiB, address space only)\n"
    "  --quiet              print only the listening line\n";

static int parse_listen(const char *v, char *host, size_t cap, int *port) {
    const char *colon = strrchr(v, ':');
    unsigned long long p;
    if (!colon || (size_t)(colon - v) >= cap || colon == v) return cli_usage("--listen \"%s\": expected HOST:PORT, e.g. 127.0.0.1:8000", v), -1;
    memcpy(host, v, (size_t)(colon - v));
    host[colon - v] = '\0';
    if (cli_parse_u64("--listen port", colon + 1, 0, 65535, &p)) return -1;
    *port = (int)p;
    return 0;
}

int cmd_serve(int argc, char **argv) {
    tdm_server_opts o;
    tdm_server_opts_init(&o);
    char host[64];
    const char *v;
    unsigned long long x;
    for (int i = 1; i < argc; i++) {
        int r;
        if (cli_is_help(argv[i])) return fputs(usage, stdout), 0;
        if ((r = cli_opt(argc, argv, &i, "--listen", &v))) {
            if (r < 0 || parse_listen(v, host, sizeof host, &o.port)) return 2;
            o.host = host;
        } else if ((r = cli_opt(argc, argv, &i, "--data", &v))) {
            if (r < 0) return 2;
            o.data_dir = v;
        } else if ((r = cli_opt(argc, argv, &i, "--threads", &v))) {
            if (r < 0 || cli_parse_u64("--threads", v, 1, 64, &x)) return 2;
            o.threads = (unsigned)x;
        } else if ((r = cli_opt(argc, argv, &i, "--max-body", &v))) {
            if (r < 0 || cli_parse_u64("--max-body", v, 1, 1ull << 30, &x)) return 2;
            o.max_body = (size_t)x;
        } else if ((r = cli_opt(argc, argv, &i, "--session-ttl", &v))) {
            if (r < 0 || cli_parse_u64("--session-ttl", v, 1, 31536000, &x)) return 2;
            o.default_ttl = (uint32_t)x;
        } else if ((r = cli_opt(argc, argv, &i, "--max-sessions", &v))) {
            if (r < 0 || cli_parse_u64("--max-sessions", v, 1, 100000000, &x)) return 2;
            o.max_sessions = (uint32_t)x;
        } else if ((r = cli_opt(argc, argv, &i, "--max-nodes", &v))) {
            if (r < 0 || cli_parse_u64("--max-nodes", v, 1, 1000000, &x)) return 2;
            o.max_nodes = (uint32_t)x;
        } else if ((r = cli_opt(argc, argv, &i, "--map-size", &v))) {
            if (r < 0 || cli_parse_u64("--map-size", v, 16, 1ull << 24, &x)) return 2;
            o.map_bytes = x << 20;
        } else if (!strcmp(argv[i], "--quiet")) o.quiet = 1;
        else return cli_usage("serve: unknown argument %s (see --help)", argv[i]);
    }
    tdm_ctx *ctx = cli_ctx();
    if (!ctx) return 1;
    /* block the stop signals before any thread starts, so that only sigwait below receives them */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT), sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    tdm_server *s;
    int st = tdm_server_start(ctx, &o, &s);
    if (st) return cli_fail_status(st, "serve");
    uint64_t nodes, pats;
    double secs;
    tdm_server_loaded(s, &nodes, &pats, &secs);
    int port = tdm_server_port(s);
    printf("tandem serve: listening on http://%s:%d (data %s: %llu patterns in %llu nodes, loaded in %.2f s)\n", o.host, port,
           o.data_dir, (unsigned long long)pats, (unsigned long long)nodes, secs);
    if (!o.quiet) {
        char base[128];
        snprintf(base, sizeof base, "http://%s:%d", o.host, port);
        printf("Talk to it (KATO's session API, spec/kato.md section 6; README.md has more):\n"
               "  S=$(curl -s -X POST %s/sessions -d '{\"node_id\": \"demo\"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"session_id\"])')\n"
               "  curl -s -X POST %s/sessions/$S/observe -d '{\"strings\": [\"hello\"]}'\n"
               "  curl -s -X POST %s/sessions/$S/observe -d '{\"strings\": [\"world\"]}'\n"
               "  curl -s -X POST %s/sessions/$S/learn\n"
               "  curl -s -X POST %s/sessions/$S/observe -d '{\"strings\": [\"hello\"]}'\n"
               "  curl -s %s/sessions/$S/predictions\n"
               "  curl -s %s/status\n"
               "Ctrl-C stops the service; learned patterns stay in %s.\n",
               base, base, base, base, base, base, base, o.data_dir);
    }
    fflush(stdout);
    int sig = 0;
    sigwait(&set, &sig);
    fprintf(stderr, "tandem serve: %s, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    tdm_server_stop(s);
    return 0;
}
#else
int cmd_serve(int argc, char **argv) {
    return cli_fail("serve: this build has no HTTP service (install libmicrohttpd-dev and liblmdb-dev: scripts/install-deps.sh, "
                    "then configure again)");
}
#endif
