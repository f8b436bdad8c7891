// The plain loader loop bench/dataset-vs-loop.sh compares the dataset preset with: T
// threads, thread t taking files t, t + T, t + 2T ... of the list (as gdsb-io's file
// lists), each file opened with O_DIRECT, read whole with pread(2) in -i pieces into an
// aligned buffer, and closed. No cuFile, no GPU, no statistics: the floor of what a loader
// pays per file on this disk.
//   dataset_loop LIST THREADS IO_BYTES   (names in LIST are relative to LIST's directory)
// Prints one line: "files N seconds S files_per_s F". Exit 1 on any I/O error.
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char** names;
static size_t count;
static size_t io_bytes;
static int threads;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void* reader(void* arg) {
  const size_t t = (size_t)arg;
  void* buf = NULL;
  if (posix_memalign(&buf, 4096, io_bytes) != 0) return (void*)1;
  for (size_t f = t; f < count; f += (size_t)threads) {
    const int fd = open(names[f], O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd < 0) { perror(names[f]); return (void*)1; }
    for (off_t at = 0;; at += (off_t)io_bytes) {
      const ssize_t n = pread(fd, buf, io_bytes, at);
      if (n < 0) { perror(names[f]); return (void*)1; }
      if ((size_t)n < io_bytes) break;
    }
    close(fd);
  }
  free(buf);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 4) { fprintf(stderr, "usage: dataset_loop LIST THREADS IO_BYTES\n"); return 2; }
  threads = atoi(argv[2]);
  io_bytes = (size_t)strtoull(argv[3], NULL, 10);
  if (threads < 1 || io_bytes == 0 || io_bytes % 4096 != 0) { fprintf(stderr, "dataset_loop: bad THREADS or IO_BYTES\n"); return 2; }
  FILE* in = fopen(argv[1], "r");
  if (!in) { perror(argv[1]); return 1; }
  const char* slash = strrchr(argv[1], '/');
  const size_t dir_len = slash ? (size_t)(slash - argv[1]) + 1 : 0;
  char line[4096];
  size_t cap = 0;
  while (fgets(line, sizeof line, in)) {
    line[strcspn(line, "\n")] = 0;
    if (!line[0]) continue;
    if (count == cap) names = realloc(names, (cap = cap ? cap * 2 : 1024) * sizeof *names);
    names[count] = malloc(dir_len + strlen(line) + 1);
    memcpy(names[count], argv[1], dir_len);
    strcpy(names[count] + dir_len, line);
    ++count;
  }
  fclose(in);
  pthread_t* ids = calloc((size_t)threads, sizeof *ids);
  const double t0 = now_s();
  for (int t = 0; t < threads; ++t) pthread_create(&ids[t], NULL, reader, (void*)(size_t)t);
  int failed = 0;
  for (int t = 0; t < threads; ++t) {
    void* rc = NULL;
    pthread_join(ids[t], &rc);
    failed |= rc != NULL;
  }
  const double s = now_s() - t0;
  if (failed) return 1;
  printf("files %zu seconds %.3f files_per_s %.0f\n", count, s, (double)count / s);
  return 0;
}
