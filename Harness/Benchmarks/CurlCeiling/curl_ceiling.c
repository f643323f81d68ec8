// The ceiling of Convey's small-GET benchmark: libcurl's multi interface driven from one thread,
// as a well-written C client would, with nothing between the application and libcurl.
//
//   curl_ceiling [--cacert FILE] [--http1.1 | --http2] [--close] URL REQUESTS IN_FLIGHT [CONNECTIONS]
//
// Keeps IN_FLIGHT requests outstanding, each on an easy handle made once and reused. At most
// CONNECTIONS (default 6, CurlTransport's default connections per host) run at once; the others
// wait in a first-come-first-served queue, as in CurlTransport (which queues per origin itself
// instead of using CURLMOPT_MAX_HOST_CONNECTIONS). Bodies are written to memory and dropped; a
// request counts only with status 200.
//
// For HTTPS, as CurlTransport is set up by the benchmark: --cacert trusts only that PEM file (the
// CA directory cleared, as TLSConfiguration.TrustRoots.only does); --http1.1 or --http2 asks for
// that version (libcurl's default is HTTP/2 over TLS), with --http2 handles waiting for a
// connection to multiplex on (CURLOPT_PIPEWAIT, as CurlTransport's); --close sends `Connection: close`, so that every
// request needs a new connection and a TLS handshake (TLS sessions are still resumed).
//
// Prints one line of key=value pairs, measured from the first request to the last:
//   requests=N seconds=S cpu_us_per_request=C context_switches_per_request=X p50_us=P p99_us=Q
//   loop_cpu_us_per_request=L
// followed by allocations_per_request=A when the benchmark's allocation counter is preloaded,
// where CPU is getrusage(RUSAGE_SELF) user + system, L the same for the one thread that drives
// libcurl (getrusage(RUSAGE_THREAD); libcurl's resolver threads, if any, are the difference), and
// context switches are voluntary + involuntary. Exits 1 if a request failed, 2 on bad arguments.
//
// Not a SwiftPM target: scripts/bench compiles it with the system C compiler against
// Sources/CCurl/CCurl.h and libcurl.so.4, so no libcurl development headers are needed.
#define _GNU_SOURCE
#include "CCurl.h"

#include <dlfcn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/// One outstanding request: its easy handle, its body buffer, and when it was issued.
struct slot {
    CURL *easy;
    char *body;
    size_t length;
    size_t capacity;
    double issued;
};

static double now_microseconds(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return (double)time.tv_sec * 1e6 + (double)time.tv_nsec / 1e3;
}

static double rusage_microseconds(const struct rusage *usage) {
    return (double)(usage->ru_utime.tv_sec + usage->ru_stime.tv_sec) * 1e6
        + (double)(usage->ru_utime.tv_usec + usage->ru_stime.tv_usec);
}

/// Appends to the slot's buffer, which grows once and is then reused for every response.
static size_t write_body(char *data, size_t size, size_t count, void *context) {
    struct slot *slot = context;
    size_t bytes = size * count;
    if (slot->length + bytes > slot->capacity) {
        size_t capacity = (slot->length + bytes) * 2;
        char *grown = realloc(slot->body, capacity);
        if (grown == NULL) return 0;
        slot->body = grown;
        slot->capacity = capacity;
    }
    memcpy(slot->body + slot->length, data, bytes);
    slot->length += bytes;
    return bytes;
}

static int compare_doubles(const void *left, const void *right) {
    double a = *(const double *)left, b = *(const double *)right;
    return (a > b) - (a < b);
}

static long parse_positive(const char *text, const char *what) {
    char *end = NULL;
    long value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || value <= 0) {
        fprintf(stderr, "curl_ceiling: %s wants a positive number, got %s\n", what, text);
        exit(2);
    }
    return value;
}

static const char usage[] =
    "usage: curl_ceiling [--cacert FILE] [--http1.1 | --http2] [--close] URL REQUESTS IN_FLIGHT [CONNECTIONS]\n";

int main(int argc, char **argv) {
    const char *ca_file = NULL;
    long http_version = 0;
    int closes = 0;
    int first = 1;
    for (; first < argc && strncmp(argv[first], "--", 2) == 0; first++) {
        if (strcmp(argv[first], "--cacert") == 0 && first + 1 < argc) {
            ca_file = argv[++first];
        } else if (strcmp(argv[first], "--http1.1") == 0) {
            http_version = CURL_HTTP_VERSION_1_1;
        } else if (strcmp(argv[first], "--http2") == 0) {
            http_version = CURL_HTTP_VERSION_2TLS;
        } else if (strcmp(argv[first], "--close") == 0) {
            closes = 1;
        } else {
            fprintf(stderr, "curl_ceiling: unknown option %s\n%s", argv[first], usage);
            return 2;
        }
    }
    int positional = argc - first;
    if (positional < 3 || positional > 4) {
        fprintf(stderr, "%s", usage);
        return 2;
    }
    const char *url = argv[first];
    long requests = parse_positive(argv[first + 1], "REQUESTS");
    long in_flight = parse_positive(argv[first + 2], "IN_FLIGHT");
    long connections = positional == 4 ? parse_positive(argv[first + 3], "CONNECTIONS") : 6;
    if (in_flight > requests) in_flight = requests;

    if (curl_global_init(CURL_GLOBAL_ALL) != CURLE_OK) {
        fprintf(stderr, "curl_ceiling: curl_global_init failed\n");
        return 1;
    }
    CURLM *multi = curl_multi_init();
    struct slot *slots = calloc((size_t)in_flight, sizeof *slots);
    // Slots waiting for a connection, in a ring of in_flight entries.
    struct slot **waiting = calloc((size_t)in_flight, sizeof *waiting);
    double *latencies = calloc((size_t)requests, sizeof *latencies);
    struct curl_slist *headers = closes ? curl_slist_append(NULL, "Connection: close") : NULL;
    if (multi == NULL || slots == NULL || waiting == NULL || latencies == NULL || (closes && headers == NULL)) {
        fprintf(stderr, "curl_ceiling: out of memory\n");
        return 1;
    }
    for (long index = 0; index < in_flight; index++) {
        struct slot *slot = &slots[index];
        slot->easy = curl_easy_init();
        if (slot->easy == NULL) {
            fprintf(stderr, "curl_ceiling: curl_easy_init failed\n");
            return 1;
        }
        curl_easy_setopt(slot->easy, CURLOPT_URL, url);
        curl_easy_setopt(slot->easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(slot->easy, CURLOPT_WRITEFUNCTION, write_body);
        curl_easy_setopt(slot->easy, CURLOPT_WRITEDATA, (void *)slot);
        if (ca_file != NULL) {
            curl_easy_setopt(slot->easy, CURLOPT_CAINFO, ca_file);
            curl_easy_setopt(slot->easy, CURLOPT_CAPATH, (char *)NULL);
        }
        if (http_version != 0) curl_easy_setopt(slot->easy, CURLOPT_HTTP_VERSION, http_version);
        if (http_version == CURL_HTTP_VERSION_2TLS) curl_easy_setopt(slot->easy, CURLOPT_PIPEWAIT, 1L);
        if (headers != NULL) curl_easy_setopt(slot->easy, CURLOPT_HTTPHEADER, headers);
    }

    // The benchmark's allocation counter, when it is preloaded (scripts/build-allocation-counter).
    unsigned long long (*allocation_count)(void) = (unsigned long long (*)(void))dlsym(RTLD_DEFAULT, "convey_allocation_count");
    unsigned long long allocations_before = allocation_count != NULL ? allocation_count() : 0;
    struct rusage before, after, thread_before, thread_after;
    getrusage(RUSAGE_SELF, &before);
    getrusage(RUSAGE_THREAD, &thread_before);
    double started = now_microseconds();

    long issued = 0, completed = 0, failed = 0, running = 0;
    long first_waiting = 0, waiting_count = 0;
    for (long index = 0; index < in_flight; index++) {
        struct slot *slot = &slots[index];
        slot->issued = now_microseconds();
        issued++;
        if (running < connections) {
            curl_multi_add_handle(multi, slot->easy);
            running++;
        } else {
            waiting[(first_waiting + waiting_count++) % in_flight] = slot;
        }
    }

    while (completed < requests) {
        int still_running = 0;
        if (curl_multi_perform(multi, &still_running) != CURLM_OK) {
            fprintf(stderr, "curl_ceiling: curl_multi_perform failed\n");
            return 1;
        }
        int queued = 0;
        CURLMsg *message;
        while ((message = curl_multi_info_read(multi, &queued)) != NULL) {
            if (message->msg != CURLMSG_DONE) continue;
            CURL *easy = message->easy_handle;
            CURLcode result = message->data.result;
            // A scan of at most IN_FLIGHT pointers (tens of nanoseconds) instead of CURLINFO_PRIVATE,
            // which Sources/CCurl/CCurl.h does not declare.
            struct slot *slot = NULL;
            for (long index = 0; index < in_flight; index++) {
                if (slots[index].easy == easy) { slot = &slots[index]; break; }
            }
            long status = 0;
            curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
            curl_multi_remove_handle(multi, easy);
            running--;
            if (result != CURLE_OK || status != 200 || slot == NULL) {
                if (failed++ == 0) {
                    fprintf(stderr, "curl_ceiling: %s: %s, status %ld\n", url, curl_easy_strerror(result), status);
                }
            }
            if (slot != NULL) {
                latencies[completed] = now_microseconds() - slot->issued;
                slot->length = 0;
            }
            completed++;
            // The finished slot's next request joins the back of the queue, then the queue's
            // head takes the free connection.
            if (slot != NULL && issued < requests) {
                slot->issued = now_microseconds();
                issued++;
                waiting[(first_waiting + waiting_count++) % in_flight] = slot;
            }
            if (waiting_count > 0 && running < connections) {
                struct slot *next = waiting[first_waiting];
                first_waiting = (first_waiting + 1) % in_flight;
                waiting_count--;
                curl_multi_add_handle(multi, next->easy);
                running++;
            }
        }
        if (completed < requests && curl_multi_poll(multi, NULL, 0, 1000, NULL) != CURLM_OK) {
            fprintf(stderr, "curl_ceiling: curl_multi_poll failed\n");
            return 1;
        }
    }

    double seconds = (now_microseconds() - started) / 1e6;
    getrusage(RUSAGE_SELF, &after);
    getrusage(RUSAGE_THREAD, &thread_after);
    double cpu = rusage_microseconds(&after) - rusage_microseconds(&before);
    double loop_cpu = rusage_microseconds(&thread_after) - rusage_microseconds(&thread_before);
    long switches = (after.ru_nvcsw - before.ru_nvcsw) + (after.ru_nivcsw - before.ru_nivcsw);
    qsort(latencies, (size_t)completed, sizeof *latencies, compare_doubles);
    unsigned long long allocations = allocation_count != NULL ? allocation_count() - allocations_before : 0;
    printf("requests=%ld seconds=%.6f cpu_us_per_request=%.3f context_switches_per_request=%.4f p50_us=%.1f p99_us=%.1f"
           " loop_cpu_us_per_request=%.3f",
           completed, seconds, cpu / (double)completed, (double)switches / (double)completed,
           latencies[completed / 2], latencies[completed * 99 / 100 < completed ? completed * 99 / 100 : completed - 1],
           loop_cpu / (double)completed);
    if (allocation_count != NULL) printf(" allocations_per_request=%.2f", (double)allocations / (double)completed);
    printf("\n");

    for (long index = 0; index < in_flight; index++) {
        curl_easy_cleanup(slots[index].easy);
        free(slots[index].body);
    }
    curl_multi_cleanup(multi);
    curl_slist_free_all(headers);
    free(slots);
    free(waiting);
    free(latencies);
    return failed > 0 ? 1 : 0;
}
