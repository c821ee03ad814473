/* The flock(2) contender where fs-ext cannot be built: bench/cross_process/baselines.js compiles
   it at run time (cc -O2). It has no Node in its loop, so its rows are flock's own cost, a floor
   rather than a like-for-like comparison with a Node process. It speaks the Node children's
   protocol over stdio: JSON lines on stdout ({"type":"ready"}, then {"type":"done",...} or
   {"type":"failed",...}), and it starts at a line "go" on stdin.

   It cannot map the parklock region (its layout is the addon's), so its throughput counter lives
   in a file of its own, and it times its window itself. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void die(const char *what) {
  printf("{\"type\":\"failed\",\"reason\":\"%s: %s\"}\n", what, strerror(errno));
  exit(2);
}

static int open_rw(const char *path) {
  int fd = open(path, O_RDWR);
  if (fd < 0) die("open");
  return fd;
}

static void lock_op(int fd, int op) {
  while (flock(fd, op) != 0)
    if (errno != EINTR) die("flock");
}

static void ready_then_wait_for_go(void) {
  char line[64];
  printf("{\"type\":\"ready\"}\n");
  fflush(stdout);
  if (fgets(line, sizeof line, stdin) == NULL) exit(3);
}

/* count <lockfile> <counterfile> <counter byte offset> <ms> */
static int count(char **argv) {
  int lock = open_rw(argv[0]);
  int file = open_rw(argv[1]);
  long offset = atol(argv[2]);
  long long ms = atoll(argv[3]);
  char *base = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
  if (base == MAP_FAILED) die("mmap");
  /* Unsigned: it wraps modulo 2^32 as the parent's Int32 reading of it expects (a signed int
     would be undefined behaviour past INT_MAX). */
  volatile unsigned *counter = (volatile unsigned *)(base + offset);
  ready_then_wait_for_go();
  long long ops = 0, start = now_ns(), end, deadline = start + ms * 1000000LL;
  do {
    lock_op(lock, LOCK_EX);
    *counter = *counter + 1;
    lock_op(lock, LOCK_UN);
    ops++;
  } while ((end = now_ns()) < deadline);
  printf("{\"type\":\"done\",\"ops\":%lld,\"start\":%lld,\"end\":%lld}\n", ops, start, end);
  return 0;
}

/* pingpong <a|b> <lock0> <lock1> <lock2> <warmup> <rounds>: the protocol of child/ping_pong.js,
   where it is explained */
static int ping_pong(char **argv) {
  int lead = strcmp(argv[0], "a") == 0;
  int fd[3];
  for (int i = 0; i < 3; i++) fd[i] = open_rw(argv[1 + i]);
  long warmup = atol(argv[4]), rounds = atol(argv[5]), total = warmup + rounds;
  long long *samples = malloc(sizeof *samples * (size_t)(rounds > 0 ? rounds : 1));
  if (samples == NULL) die("malloc");
  if (lead) {
    lock_op(fd[0], LOCK_EX);
    lock_op(fd[1], LOCK_EX);
  } else {
    lock_op(fd[2], LOCK_EX);
  }
  ready_then_wait_for_go();
  if (lead) {
    for (long j = 0; j < total; j++) {
      long long t0 = now_ns();
      lock_op(fd[j % 3], LOCK_UN);
      lock_op(fd[(j + 2) % 3], LOCK_EX);
      if (j >= warmup) samples[j - warmup] = now_ns() - t0;
    }
    lock_op(fd[total % 3], LOCK_UN);
    lock_op(fd[(total + 1) % 3], LOCK_UN);
  } else {
    lock_op(fd[0], LOCK_EX);
    for (long j = 0; j < total; j++) {
      lock_op(fd[(j + 2) % 3], LOCK_UN);
      lock_op(fd[(j + 1) % 3], LOCK_EX);
    }
    lock_op(fd[(total + 2) % 3], LOCK_UN);
    lock_op(fd[total % 3], LOCK_UN);
  }
  printf("{\"type\":\"done\",\"samples\":[");
  for (long i = 0; lead && i < rounds; i++) printf(i ? ",%lld" : "%lld", samples[i]);
  printf("]}\n");
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 6 && strcmp(argv[1], "count") == 0) return count(argv + 2);
  if (argc == 8 && strcmp(argv[1], "pingpong") == 0) return ping_pong(argv + 2);
  fprintf(stderr, "usage: count LOCK COUNTER OFFSET MS | pingpong a|b L0 L1 L2 WARMUP ROUNDS\n");
  return 64;
}
