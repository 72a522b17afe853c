/* closed_loop: a C program driving ssdkit's step-by-step device through its C API.
 *
 * It keeps QD (8) random 4 KiB reads and writes outstanding on a shrunken mqsim-paper device:
 * it advances the simulated clock in steps of POLL_NS, takes the requests completed meanwhile
 * and submits one new request for each, so a slot is refilled within POLL_NS of the completion
 * that freed it. It prints the requests completed, IOPS and mean latency, and shows how a
 * refused request (a misaligned offset) is reported. Every call's status is checked; a failure
 * prints ssdkit_last_error() and exits with status 1.
 *
 * Build and run against an installed ssdkit (`pip install .`; docs/c-api.md):
 *   cc -std=c11 examples/c/closed_loop.c $(ssdkit c-flags) -o closed_loop
 *   ./closed_loop
 *
 * or against a checkout's build (what `make test-c` does):
 *   cargo build -p ssdkit-c --profile test
 *   cc -std=c11 -Icrates/ssdkit-c/include examples/c/closed_loop.c \
 *      -Ltarget/debug -lssdkit -Wl,-rpath,$PWD/target/debug -o closed_loop
 *   ./closed_loop [requests (default 20000)] [read percent (default 70)] [seed (default 1)]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "ssdkit.h"

#define QD 8
#define IO_BYTES 4096u
#define POLL_NS 1000u

/* Prints the failure of `what` with ssdkit's message; returns whether `status` is success. */
static int ok(int status, const char *what) {
    if (status != SSDKIT_OK) {
        fprintf(stderr, "closed_loop: %s failed (status %d): %s\n", what, status,
                ssdkit_last_error());
    }
    return status == SSDKIT_OK;
}

#define CHECK(call)              \
    do {                         \
        if (!ok((call), #call)) { \
            goto fail;           \
        }                        \
    } while (0)

static uint64_t rng = 1;

/* xorshift64*: a small reproducible random stream. */
static uint64_t next_random(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

/* Submits one random 4 KiB read or write at `t_ns`. */
static int submit_random(SsdkitDevice *dev, uint64_t t_ns, uint64_t slots, unsigned read_pct) {
    int op = next_random() % 100 < read_pct ? SSDKIT_OP_READ : SSDKIT_OP_WRITE;
    uint64_t offset = (next_random() % slots) * IO_BYTES;
    uint64_t id;
    return ok(ssdkit_submit(dev, t_ns, op, offset, IO_BYTES, 0, &id), "ssdkit_submit");
}

static long arg(int argc, char **argv, int i, long dflt, long lo, long hi) {
    if (argc <= i) {
        return dflt;
    }
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*argv[i] == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "closed_loop: argument %d (%s) must be an integer in %ld..%ld\n", i,
                argv[i], lo, hi);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv) {
    uint64_t requests = (uint64_t)arg(argc, argv, 1, 20000, 1, 100000000);
    unsigned read_pct = (unsigned)arg(argc, argv, 2, 70, 0, 100);
    rng = (uint64_t)arg(argc, argv, 3, 1, 1, 1000000000);

    const char *overrides[] = {"flash.blocks_per_plane=128"};
    SsdkitDevice *dev = NULL;
    char *json = NULL;
    int status = 1;
    CHECK(ssdkit_device_new("mqsim-paper", NULL, overrides, sizeof overrides / sizeof *overrides,
                            NULL, &dev));
    uint64_t capacity;
    CHECK(ssdkit_capacity_bytes(dev, &capacity));
    uint64_t slots = capacity / IO_BYTES;
    printf("device: mqsim-paper, %s, %" PRIu64 " MiB logical\n", overrides[0], capacity >> 20);

    /* A refused request: the offset is not a multiple of the 512-byte sector. It changes
     * nothing; the status says what kind of error, the message what is wrong. */
    int refused = ssdkit_submit(dev, 0, SSDKIT_OP_READ, 100, IO_BYTES, 0, NULL);
    if (refused != SSDKIT_ERR_REQUEST) {
        fprintf(stderr, "closed_loop: a misaligned read gave status %d, not SSDKIT_ERR_REQUEST\n",
                refused);
        goto fail;
    }
    printf("refused as expected (SSDKIT_ERR_REQUEST): %s\n", ssdkit_last_error());

    uint64_t submitted = 0, completed = 0, latency_ps = 0, last_complete_ps = 0, now = 0;
    for (; submitted < QD && submitted < requests; submitted++) {
        if (!submit_random(dev, now, slots, read_pct)) {
            goto fail;
        }
    }
    SsdkitCompletion done[QD];
    while (completed < requests) {
        now += POLL_NS;
        CHECK(ssdkit_run_until(dev, now));
        size_t n;
        do {
            CHECK(ssdkit_drain(dev, done, QD, &n));
            for (size_t i = 0; i < n; i++) {
                completed++;
                latency_ps += done[i].complete_ps - done[i].submit_ps;
                last_complete_ps = done[i].complete_ps;
                if (submitted < requests) {
                    if (!submit_random(dev, now, slots, read_pct)) {
                        goto fail;
                    }
                    submitted++;
                }
            }
        } while (n == QD);
        uint64_t outstanding;
        CHECK(ssdkit_outstanding(dev, &outstanding));
        if (outstanding != submitted - completed || outstanding > QD) {
            fprintf(stderr, "closed_loop: %" PRIu64 " outstanding, expected %" PRIu64 "\n",
                    outstanding, submitted - completed);
            goto fail;
        }
    }

    CHECK(ssdkit_result_json(dev, &json));
    size_t json_len = 0;
    while (json[json_len] != '\0') {
        json_len++;
    }
    double seconds = (double)last_complete_ps * 1e-12; /* the first requests started at 0 */
    printf("requests completed: %" PRIu64 " (%u%% reads, queue depth %d)\n", completed, read_pct,
           QD);
    printf("simulated time: %.3f ms\n", seconds * 1e3);
    printf("IOPS: %.0f\n", (double)completed / seconds);
    printf("mean latency: %.2f us\n", (double)latency_ps / (double)completed * 1e-6);
    printf("result document: %zu bytes of JSON\n", json_len);
    status = 0;
fail:
    ssdkit_string_free(json);
    ssdkit_device_free(dev);
    return status;
}
