/* The cheapest evaluator or model there is, for the bench scripts: read all of stdin, wait
 * MILLISECONDS, print TEXT. Its start-up costs a fraction of a millisecond, so a run measures
 * evalctl's dispatch rather than an interpreter's start.
 * Usage: bench-answerer MILLISECONDS TEXT   (build: cc -O2 -o bench-answerer bench-answerer.c) */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) return 2;
    char buffer[4096];
    while (read(0, buffer, sizeof buffer) > 0) {}
    long ms = atol(argv[1]);
    struct timespec wait = {ms / 1000, (ms % 1000) * 1000000L};
    if (ms > 0) nanosleep(&wait, 0);
    size_t n = strlen(argv[2]);
    return write(1, argv[2], n) == (ssize_t)n ? 0 : 1;
}
