// SPDX-License-Identifier: Apache-2.0
//
// sleeptap-bench-baseline: the floor sleeptap-bench measures SleepTap against, in plain C on
// libzmq and POSIX file calls, doing exactly what each of the bench's Swift cases does.
//
//   sleeptap-bench-baseline rtt ENDPOINT COUNT SIZE [curve]
//       DEALER -> ROUTER echo, one message at a time: prints COUNT lines, each one round trip in
//       nanoseconds. The echo server (a ROUTER on its own thread, one context for both sockets)
//       receives with zmq_msg_recv and replies with zmq_send (a copy), the client sends with
//       zmq_send and receives with zmq_msg_recv.
//   sleeptap-bench-baseline throughput ENDPOINT COUNT SIZE WINDOW [curve]
//       The same echo with WINDOW messages in flight: prints one line per 5,000 messages
//       received (and one for the rest), each that stretch's messages per second.
//   sleeptap-bench-baseline durable ENDPOINT DIR REQUEST REPLY SERVER_SIZE CLIENT_SIZE
//       The durable round trip's physical limit, one sample per line read on stdin (so that the
//       bench can interleave it sample by sample with the real phone and watch): the client sends
//       REQUEST bytes, the server stores SERVER_SIZE bytes atomically and replies with REPLY
//       bytes, the client stores CLIENT_SIZE bytes atomically. Server and client are two
//       processes with a ZeroMQ context each, as the watch and the phone are. Prints one JSON
//       line per sample, once the client's write is done:
//       {"event":"baseline.sample","total":NS,"serverWrite":NS,"clientWrite":NS,
//       "startRealtime":NS}, the last the sample's start on CLOCK_REALTIME (nanoseconds since
//       the epoch), so that a reader can time the sample to the moment it reads the line.
//   sleeptap-bench-baseline fsync DIR COUNT SIZE
//       The atomic write of a state file as SleepTap's StateFile does it (keep the current file
//       as FILE.prev by a hard link, write a temp file, fsync it, rename it over the file, fsync
//       the directory; rename(2) is atomic within one file system): prints COUNT lines,
//       nanoseconds each.
//
// ENDPOINT may end in '*' for a tcp port (tcp://127.0.0.1:*). With `curve` the server is a CURVE
// server and the client a CURVE client, with fresh keys (zmq_curve_keypair). Exit 64 on bad
// arguments, 70 when libzmq or the file system fails (the message names the call).

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

// Messages per throughput sample.
#define CHUNK 5000

static void die(const char *what) {
    fprintf(stderr, "sleeptap-bench-baseline: %s: %s\n", what, zmq_strerror(zmq_errno()));
    exit(70);
}

static void die_errno(const char *what, const char *path) {
    fprintf(stderr, "sleeptap-bench-baseline: %s %s: %s\n", what, path, strerror(errno));
    exit(70);
}

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static long parse_count(const char *text, const char *name) {
    char *end = NULL;
    long value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < 0 || value > 100000000L) {
        fprintf(stderr, "sleeptap-bench-baseline: %s must be a whole number from 0 to 100000000, not '%s'\n", name,
                text);
        exit(64);
    }
    return value;
}

struct server {
    void *context;
    const char *endpoint;
    int curve;
    char secret[41];
    char bound[256];
    int ready;
    pthread_mutex_t lock;
    pthread_cond_t changed;
};

// The echo server: replies to each [routing id, payload] with the same frames; an empty payload
// is the last message (echoed, then the thread ends).
static void *serve(void *argument) {
    struct server *s = argument;
    void *router = zmq_socket(s->context, ZMQ_ROUTER);
    if (!router) die("zmq_socket ROUTER");
    int zero = 0;
    zmq_setsockopt(router, ZMQ_LINGER, &zero, sizeof zero);
    if (s->curve) {
        int one = 1;
        if (zmq_setsockopt(router, ZMQ_CURVE_SERVER, &one, sizeof one) != 0) die("ZMQ_CURVE_SERVER");
        if (zmq_setsockopt(router, ZMQ_CURVE_SECRETKEY, s->secret, 40) != 0) die("ZMQ_CURVE_SECRETKEY");
    }
    if (zmq_bind(router, s->endpoint) != 0) die("zmq_bind");
    size_t length = sizeof s->bound;
    if (zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, s->bound, &length) != 0) die("ZMQ_LAST_ENDPOINT");
    pthread_mutex_lock(&s->lock);
    s->ready = 1;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);

    zmq_msg_t id, payload;
    for (;;) {
        zmq_msg_init(&id);
        zmq_msg_init(&payload);
        if (zmq_msg_recv(&id, router, 0) < 0) {
            if (zmq_errno() == EINTR) continue;
            die("zmq_msg_recv id");
        }
        if (zmq_msg_recv(&payload, router, 0) < 0) die("zmq_msg_recv payload");
        size_t size = zmq_msg_size(&payload);
        if (zmq_send(router, zmq_msg_data(&id), zmq_msg_size(&id), ZMQ_SNDMORE) < 0) die("zmq_send id");
        if (zmq_send(router, zmq_msg_data(&payload), size, 0) < 0) die("zmq_send payload");
        zmq_msg_close(&id);
        zmq_msg_close(&payload);
        if (size == 0) break;
    }
    zmq_close(router);
    return NULL;
}

static void receive_one(void *dealer) {
    zmq_msg_t reply;
    zmq_msg_init(&reply);
    while (zmq_msg_recv(&reply, dealer, 0) < 0) {
        if (zmq_errno() != EINTR) die("zmq_msg_recv reply");
    }
    zmq_msg_close(&reply);
}

static void echo(const char *endpoint, long count, long size, long window, int curve, int throughput) {
    void *context = zmq_ctx_new();
    if (!context) die("zmq_ctx_new");
    struct server s;
    memset(&s, 0, sizeof s);
    s.context = context;
    s.endpoint = endpoint;
    s.curve = curve;
    pthread_mutex_init(&s.lock, NULL);
    pthread_cond_init(&s.changed, NULL);
    char serverPublic[41], clientPublic[41], clientSecret[41];
    if (curve) {
        if (zmq_curve_keypair(serverPublic, s.secret) != 0) die("zmq_curve_keypair");
        if (zmq_curve_keypair(clientPublic, clientSecret) != 0) die("zmq_curve_keypair");
    }
    pthread_t thread;
    pthread_create(&thread, NULL, serve, &s);
    pthread_mutex_lock(&s.lock);
    while (!s.ready) pthread_cond_wait(&s.changed, &s.lock);
    pthread_mutex_unlock(&s.lock);

    void *dealer = zmq_socket(context, ZMQ_DEALER);
    if (!dealer) die("zmq_socket DEALER");
    int zero = 0;
    zmq_setsockopt(dealer, ZMQ_LINGER, &zero, sizeof zero);
    // A server that died would leave the client waiting forever: 10 s and the run fails.
    int timeout = 10000;
    zmq_setsockopt(dealer, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    if (curve) {
        if (zmq_setsockopt(dealer, ZMQ_CURVE_PUBLICKEY, clientPublic, 40) != 0) die("ZMQ_CURVE_PUBLICKEY");
        if (zmq_setsockopt(dealer, ZMQ_CURVE_SECRETKEY, clientSecret, 40) != 0) die("ZMQ_CURVE_SECRETKEY");
        if (zmq_setsockopt(dealer, ZMQ_CURVE_SERVERKEY, serverPublic, 40) != 0) die("ZMQ_CURVE_SERVERKEY");
    }
    if (zmq_connect(dealer, s.bound) != 0) die("zmq_connect");

    char *buffer = malloc(size > 0 ? (size_t)size : 1);
    memset(buffer, 'x', (size_t)size);
    // Warm up: the connection (and handshake) is made, caches and the I/O thread are warm.
    for (int i = 0; i < 200; i++) {
        if (zmq_send(dealer, buffer, (size_t)size, 0) < 0) die("zmq_send");
        receive_one(dealer);
    }
    if (!throughput) {
        long long *samples = malloc(sizeof(long long) * (size_t)(count > 0 ? count : 1));
        for (long i = 0; i < count; i++) {
            long long start = now_ns();
            if (zmq_send(dealer, buffer, (size_t)size, 0) < 0) die("zmq_send");
            receive_one(dealer);
            samples[i] = now_ns() - start;
        }
        for (long i = 0; i < count; i++) printf("%lld\n", samples[i]);
        free(samples);
    } else {
        // One rate per CHUNK messages received, so that one run gives a distribution.
        long sent = 0, received = 0;
        long long chunkStart = now_ns();
        while (sent < window && sent < count) {
            if (zmq_send(dealer, buffer, (size_t)size, 0) < 0) die("zmq_send");
            sent++;
        }
        while (received < count) {
            receive_one(dealer);
            received++;
            if (sent < count) {
                if (zmq_send(dealer, buffer, (size_t)size, 0) < 0) die("zmq_send");
                sent++;
            }
            if (received % CHUNK == 0 || received == count) {
                long long now = now_ns();
                long inChunk = received % CHUNK == 0 ? CHUNK : received % CHUNK;
                double seconds = (double)(now - chunkStart) / 1e9;
                printf("%.1f\n", seconds > 0 ? (double)inChunk / seconds : 0.0);
                chunkStart = now;
            }
        }
    }
    // The empty message ends the server.
    if (zmq_send(dealer, buffer, 0, 0) < 0) die("zmq_send");
    receive_one(dealer);
    pthread_join(thread, NULL);
    free(buffer);
    zmq_close(dealer);
    zmq_ctx_term(context);
}

// One atomic, durable replacement of `path` by `size` bytes, as SleepTap's StateFile does it:
// keep the current file as `path.prev` (a hard link under a temporary name, renamed over the old
// copy), then write a temp file beside it, fsync it, rename it over `path`, fsync the directory.
// Keeping the old inode linked also matters for speed: on ext4 without a journal, a rename that
// frees the replaced file's last link made the rename and the directory's fsync several times
// slower than this order. Returns the nanoseconds it took.
static long long atomic_write(const char *directory, const char *path, const char *buffer, long size) {
    char temp[4200], previous[4200], staging[4300];
    snprintf(temp, sizeof temp, "%s.tmp-%d", path, (int)getpid());
    snprintf(previous, sizeof previous, "%s.prev", path);
    snprintf(staging, sizeof staging, "%s.tmp-%d", previous, (int)getpid());
    long long start = now_ns();
    if (access(path, F_OK) == 0) {
        unlink(staging);
        if (link(path, staging) == 0 && rename(staging, previous) != 0) unlink(staging);
    }
    int fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) die_errno("open", temp);
    long offset = 0;
    while (offset < size) {
        ssize_t n = write(fd, buffer + offset, (size_t)(size - offset));
        if (n < 0) {
            if (errno == EINTR) continue;
            die_errno("write", temp);
        }
        offset += n;
    }
    if (fsync(fd) != 0) die_errno("fsync", temp);
    close(fd);
    if (rename(temp, path) != 0) die_errno("rename", path);
    int directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (directoryFD < 0) die_errno("open", directory);
    if (fsync(directoryFD) != 0) die_errno("fsync", directory);
    close(directoryFD);
    return now_ns() - start;
}

static void atomic_writes(const char *directory, long count, long size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/baseline.json", directory);
    char *buffer = malloc(size > 0 ? (size_t)size : 1);
    memset(buffer, ' ', (size_t)size);
    long long *samples = malloc(sizeof(long long) * (size_t)(count > 0 ? count : 1));
    for (long i = 0; i < count; i++) samples[i] = atomic_write(directory, path, buffer, size);
    unlink(path);
    char previous[4200];
    snprintf(previous, sizeof previous, "%s.prev", path);
    unlink(previous);
    for (long i = 0; i < count; i++) printf("%lld\n", samples[i]);
    free(samples);
    free(buffer);
}

// The durable round trip's physical limit, one sample per line read on stdin: the client sends
// REQUEST bytes; the server stores SERVER_SIZE bytes atomically (DIR/server.json) and replies with
// REPLY bytes; the client stores CLIENT_SIZE bytes atomically (DIR/client.json). Each sample is
// printed as a JSON line at once: {"event":"baseline.sample","total":NS,"serverWrite":NS,
// "clientWrite":NS,"startRealtime":NS}. End of input ends it.
//
// Server and client are two processes, each with its own ZeroMQ context (and so its own I/O
// thread), as the watch and the phone are: the server is a child (fork(2) before either context
// exists, as zmq_ctx_new requires) that dies with its parent (PR_SET_PDEATHSIG). The server's
// write time travels back in the first 8 bytes of its reply.
static void serve_durable_process(const char *endpoint, const char *directory, long serverSize, long replySize,
                                  int ready) {
    void *context = zmq_ctx_new();
    if (!context) die("zmq_ctx_new");
    void *router = zmq_socket(context, ZMQ_ROUTER);
    if (!router) die("zmq_socket ROUTER");
    int zero = 0;
    zmq_setsockopt(router, ZMQ_LINGER, &zero, sizeof zero);
    if (zmq_bind(router, endpoint) != 0) die("zmq_bind");
    char bound[256];
    size_t length = sizeof bound;
    if (zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, bound, &length) != 0) die("ZMQ_LAST_ENDPOINT");
    if (write(ready, bound, sizeof bound) != (ssize_t)sizeof bound) die_errno("write", "the ready pipe");
    close(ready);

    char path[4096];
    snprintf(path, sizeof path, "%s/server.json", directory);
    char *state = malloc((size_t)serverSize + 1);
    memset(state, ' ', (size_t)serverSize);
    size_t replyBytes = replySize < 8 ? 8 : (size_t)replySize;
    char *reply = malloc(replyBytes);
    memset(reply, 'a', replyBytes);
    zmq_msg_t id, payload;
    for (;;) {
        zmq_msg_init(&id);
        zmq_msg_init(&payload);
        if (zmq_msg_recv(&id, router, 0) < 0) {
            if (zmq_errno() == EINTR) continue;
            die("zmq_msg_recv id");
        }
        if (zmq_msg_recv(&payload, router, 0) < 0) die("zmq_msg_recv payload");
        size_t size = zmq_msg_size(&payload);
        // An empty message ends the server; a one-byte one is a warm-up (no write).
        long long lastWrite = 0;
        if (size > 1) lastWrite = atomic_write(directory, path, state, serverSize);
        memcpy(reply, &lastWrite, sizeof lastWrite);
        if (zmq_send(router, zmq_msg_data(&id), zmq_msg_size(&id), ZMQ_SNDMORE) < 0) die("zmq_send id");
        if (zmq_send(router, reply, size == 0 ? 0 : replyBytes, 0) < 0) die("zmq_send reply");
        zmq_msg_close(&id);
        zmq_msg_close(&payload);
        if (size == 0) break;
    }
    unlink(path);
    strncat(path, ".prev", sizeof path - strlen(path) - 1);
    unlink(path);
    free(state);
    free(reply);
    zmq_close(router);
    zmq_ctx_term(context);
}

// Receives one reply and returns the server's write time from its first 8 bytes (0 if shorter).
static long long receive_write_time(void *dealer) {
    zmq_msg_t reply;
    zmq_msg_init(&reply);
    while (zmq_msg_recv(&reply, dealer, 0) < 0) {
        if (zmq_errno() != EINTR) die("zmq_msg_recv reply");
    }
    long long value = 0;
    if (zmq_msg_size(&reply) >= sizeof value) memcpy(&value, zmq_msg_data(&reply), sizeof value);
    zmq_msg_close(&reply);
    return value;
}

// The durable mode's server child, for the signal handler: it is killed and reaped before the
// parent exits, so no zombie outlives the bench (kill, waitpid and _exit are async-signal-safe).
static volatile pid_t durable_server_pid = 0;

static void durable_stop(int signal_number) {
    if (durable_server_pid > 0) {
        kill(durable_server_pid, SIGKILL);
        waitpid(durable_server_pid, NULL, 0);
    }
    _exit(128 + signal_number);
}

static void durable(const char *endpoint, const char *directory, long request, long reply, long serverSize,
                    long clientSize) {
    int ready[2];
    if (pipe(ready) != 0) die_errno("pipe", "for the server's endpoint");
    fflush(stdout);
    pid_t parent = getpid();
    pid_t server = fork();
    if (server < 0) die_errno("fork", "of the server");
    if (server == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(0);
        close(ready[0]);
        serve_durable_process(endpoint, directory, serverSize, reply, ready[1]);
        _exit(0);
    }
    close(ready[1]);
    durable_server_pid = server;
    struct sigaction stop;
    memset(&stop, 0, sizeof stop);
    stop.sa_handler = durable_stop;
    sigemptyset(&stop.sa_mask);
    sigaction(SIGTERM, &stop, NULL);
    sigaction(SIGINT, &stop, NULL);
    sigaction(SIGHUP, &stop, NULL);
    char bound[256];
    if (read(ready[0], bound, sizeof bound) != (ssize_t)sizeof bound) {
        fprintf(stderr, "sleeptap-bench-baseline: the server process did not start\n");
        exit(70);
    }
    close(ready[0]);
    bound[sizeof bound - 1] = '\0';

    void *context = zmq_ctx_new();
    if (!context) die("zmq_ctx_new");
    void *dealer = zmq_socket(context, ZMQ_DEALER);
    if (!dealer) die("zmq_socket DEALER");
    int zero = 0, timeout = 10000;
    zmq_setsockopt(dealer, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(dealer, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    if (zmq_connect(dealer, bound) != 0) die("zmq_connect");
    char path[4096];
    snprintf(path, sizeof path, "%s/client.json", directory);
    char *buffer = malloc((size_t)request + 1);
    memset(buffer, 'x', (size_t)request);
    char *state = malloc((size_t)clientSize + 1);
    memset(state, ' ', (size_t)clientSize);
    for (int i = 0; i < 20; i++) {
        if (zmq_send(dealer, buffer, 1, 0) < 0) die("zmq_send");
        receive_one(dealer);
    }
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        struct timespec wall;
        clock_gettime(CLOCK_REALTIME, &wall);
        long long start = now_ns();
        if (zmq_send(dealer, buffer, (size_t)request, 0) < 0) die("zmq_send");
        long long serverWrite = receive_write_time(dealer);
        long long clientWrite = atomic_write(directory, path, state, clientSize);
        long long total = now_ns() - start;
        printf("{\"event\":\"baseline.sample\",\"total\":%lld,\"serverWrite\":%lld,\"clientWrite\":%lld,"
               "\"startRealtime\":%lld}\n",
               total, serverWrite, clientWrite, (long long)wall.tv_sec * 1000000000LL + wall.tv_nsec);
        fflush(stdout);
    }
    if (zmq_send(dealer, buffer, 0, 0) < 0) die("zmq_send");
    receive_one(dealer);
    int status = 0;
    while (waitpid(server, &status, 0) < 0 && errno == EINTR) {
    }
    unlink(path);
    strncat(path, ".prev", sizeof path - strlen(path) - 1);
    unlink(path);
    free(buffer);
    free(state);
    zmq_close(dealer);
    zmq_ctx_term(context);
}

static const char usage_text[] =
    "usage: sleeptap-bench-baseline rtt ENDPOINT COUNT SIZE [curve]\n"
    "       sleeptap-bench-baseline throughput ENDPOINT COUNT SIZE WINDOW [curve]\n"
    "       sleeptap-bench-baseline fsync DIR COUNT SIZE\n"
    "       sleeptap-bench-baseline durable ENDPOINT DIR REQUEST REPLY SERVER_SIZE CLIENT_SIZE\n";

/* A bad command line: the usage on stderr, exit 64 (EX_USAGE). */
static void usage(void) {
    fputs(usage_text, stderr);
    exit(64);
}

int main(int argc, char **argv) {
    if (argc < 2) usage();
    /* --help and --version as every SleepTap tool takes them, exit 0. This helper has no version
       of its own: it is built and shipped with sleeptap-bench, which runs it. */
    int help = argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
    if (help || (argc == 2 && strcmp(argv[1], "--version") == 0)) {
        if (fcntl(1, F_GETFD) == -1) {
            fputs("sleeptap-bench-baseline: stdout (file descriptor 1) is closed\n", stderr);
            return 74;
        }
        signal(SIGPIPE, SIG_IGN); /* a reader gone is no failure: `--help | true` exits 0 */
        if (help) {
            fputs("sleeptap-bench-baseline: the C baselines sleeptap-bench measures against "
                  "(libzmq and fsync(2) with nothing of SleepTap's)\n",
                  stdout);
            fputs(usage_text, stdout);
        } else {
            puts("sleeptap-bench-baseline: built with sleeptap-bench; see sleeptap-bench --version");
        }
        if ((fflush(stdout) != 0 || ferror(stdout)) && errno != EPIPE) {
            fprintf(stderr, "sleeptap-bench-baseline: cannot write to stdout: %s\n", strerror(errno));
            return 74;
        }
        return 0;
    }
    if (strcmp(argv[1], "rtt") == 0 && (argc == 5 || argc == 6)) {
        int curve = argc == 6 && strcmp(argv[5], "curve") == 0;
        if (argc == 6 && !curve) usage();
        long size = parse_count(argv[4], "SIZE");
        if (size < 1) usage();
        echo(argv[2], parse_count(argv[3], "COUNT"), size, 1, curve, 0);
    } else if (strcmp(argv[1], "throughput") == 0 && (argc == 6 || argc == 7)) {
        int curve = argc == 7 && strcmp(argv[6], "curve") == 0;
        if (argc == 7 && !curve) usage();
        long window = parse_count(argv[5], "WINDOW");
        if (window < 1) usage();
        long size = parse_count(argv[4], "SIZE");
        if (size < 1) usage();
        echo(argv[2], parse_count(argv[3], "COUNT"), size, window, curve, 1);
    } else if (strcmp(argv[1], "durable") == 0 && argc == 8) {
        long request = parse_count(argv[4], "REQUEST"), reply = parse_count(argv[5], "REPLY");
        if (request < 2 || reply < 1) usage();
        durable(argv[2], argv[3], request, reply, parse_count(argv[6], "SERVER_SIZE"),
                parse_count(argv[7], "CLIENT_SIZE"));
    } else if (strcmp(argv[1], "fsync") == 0 && argc == 5) {
        atomic_writes(argv[2], parse_count(argv[3], "COUNT"), parse_count(argv[4], "SIZE"));
    } else {
        usage();
    }
    return 0;
}
