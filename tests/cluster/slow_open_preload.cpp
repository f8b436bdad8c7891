// LD_PRELOAD for tests: a rank whose setup is slow (issue 34, item 6). open() and openat() of
// a path that contains $GDSB_SLOW_OPEN_MATCH sleep $GDSB_SLOW_OPEN_MS (default 300) first, then
// open as libc does; every other open is untouched.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdlib>
#include <cstring>

namespace {

void maybe_sleep(const char* path) {
  const char* match = std::getenv("GDSB_SLOW_OPEN_MATCH");
  if (match == nullptr || *match == '\0' || path == nullptr || std::strstr(path, match) == nullptr) return;
  const char* ms = std::getenv("GDSB_SLOW_OPEN_MS");
  ::usleep(static_cast<useconds_t>((ms != nullptr ? std::atoi(ms) : 300) * 1000));
}

mode_t mode_of(int flags, va_list ap) {
  return (flags & (O_CREAT | O_TMPFILE)) != 0 ? static_cast<mode_t>(va_arg(ap, int)) : 0;
}

template <class F>
F next(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_of(flags, ap);
  va_end(ap);
  maybe_sleep(path);
  static const auto real = next<int (*)(const char*, int, ...)>("open");
  return real(path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_of(flags, ap);
  va_end(ap);
  maybe_sleep(path);
  static const auto real = next<int (*)(const char*, int, ...)>("open64");
  return real(path, flags, mode);
}

int openat(int dir, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_of(flags, ap);
  va_end(ap);
  maybe_sleep(path);
  static const auto real = next<int (*)(int, const char*, int, ...)>("openat");
  return real(dir, path, flags, mode);
}

int openat64(int dir, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_of(flags, ap);
  va_end(ap);
  maybe_sleep(path);
  static const auto real = next<int (*)(int, const char*, int, ...)>("openat64");
  return real(dir, path, flags, mode);
}

}  // extern "C"
