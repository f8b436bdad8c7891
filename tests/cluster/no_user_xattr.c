/* A file system that keeps no user xattrs, as NFSv3, VAST and BeeGFS (by default) are:
 * LD_PRELOAD=libgdsb_no_user_xattr.so makes every xattr call on a "user.*" name fail with
 * EOPNOTSUPP, as those clients answer; other names (security.*, trusted.*, system.*) go to
 * the C library. Used by storage_no_xattr_test.sh (issue 34). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <sys/types.h>
#include <sys/xattr.h>

static int refused(const char* name) {
  if (name == NULL || strncmp(name, "user.", 5) != 0) return 0;
  errno = EOPNOTSUPP;
  return 1;
}

#define NEXT(fn) ((__typeof__(&fn))dlsym(RTLD_NEXT, #fn))

int setxattr(const char* path, const char* name, const void* value, size_t size, int flags) {
  return refused(name) ? -1 : NEXT(setxattr)(path, name, value, size, flags);
}
int lsetxattr(const char* path, const char* name, const void* value, size_t size, int flags) {
  return refused(name) ? -1 : NEXT(lsetxattr)(path, name, value, size, flags);
}
int fsetxattr(int fd, const char* name, const void* value, size_t size, int flags) {
  return refused(name) ? -1 : NEXT(fsetxattr)(fd, name, value, size, flags);
}
ssize_t getxattr(const char* path, const char* name, void* value, size_t size) {
  return refused(name) ? -1 : NEXT(getxattr)(path, name, value, size);
}
ssize_t lgetxattr(const char* path, const char* name, void* value, size_t size) {
  return refused(name) ? -1 : NEXT(lgetxattr)(path, name, value, size);
}
ssize_t fgetxattr(int fd, const char* name, void* value, size_t size) {
  return refused(name) ? -1 : NEXT(fgetxattr)(fd, name, value, size);
}
int removexattr(const char* path, const char* name) {
  return refused(name) ? -1 : NEXT(removexattr)(path, name);
}
int lremovexattr(const char* path, const char* name) {
  return refused(name) ? -1 : NEXT(lremovexattr)(path, name);
}
int fremovexattr(int fd, const char* name) {
  return refused(name) ? -1 : NEXT(fremovexattr)(fd, name);
}
