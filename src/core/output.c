/* Output files that appear whole or not at all (see output.h).
 *
 * The temporary file is "<dir>/.<name>.<pid>-<k>.tmp", created with O_CREAT | O_EXCL (so it never
 * replaces anything) and mode 0666 filtered by the umask, or the mode of the file it will
 * replace. rename(2) within one directory is atomic: a reader sees the old file or the new one.
 * The data are not fsync'ed: this guards against failed and interrupted runs, not power loss. */
#include "core/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* the file the path designates: a symbolic link resolved to its target */
static mr_status resolve(const char *path, char *target, mr_error *err) {
  struct stat st;
  if (strlen(path) >= MR_OUTPUT_PATH_MAX)
    return mr_error_set(err, MR_ERR_IO, "%s: path too long", path);
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
    char buf[PATH_MAX];
    if (!realpath(path, buf))
      return mr_error_set(err, MR_ERR_IO, "%s: cannot resolve the link: %s", path, strerror(errno));
    if (strlen(buf) >= MR_OUTPUT_PATH_MAX)
      return mr_error_set(err, MR_ERR_IO, "%s: path too long", path);
    memcpy(target, buf, strlen(buf) + 1);
    return MR_OK;
  }
  memcpy(target, path, strlen(path) + 1);
  return MR_OK;
}

/* create the temporary file beside o->target with the given mode */
static int create_temp(mr_output *o, mode_t mode, int keep_mode) {
  const char *slash = strrchr(o->target, '/');
  int dirlen = slash ? (int)(slash - o->target + 1) : 0;
  const char *name = o->target + dirlen;
  for (int k = 0; k < 100; ++k) {
    int n = snprintf(o->tmp, sizeof o->tmp, "%.*s.%s.%ld-%d.tmp", dirlen, o->target, name,
                     (long)getpid(), k);
    if (n < 0 || n >= (int)sizeof o->tmp) return errno = ENAMETOOLONG, -1;
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL, mode);
    if (fd >= 0) {
      if (keep_mode) (void)fchmod(fd, mode);
      return fd;
    }
    if (errno != EEXIST) return -1;
  }
  return errno = EEXIST, -1;
}

mr_status mr_output_open(mr_output *o, const char *path, mr_error *err) {
  memset(o, 0, sizeof *o);
  o->path = path;
  if (resolve(path, o->target, err)) return MR_ERR_IO;
  struct stat st;
  int exists = stat(o->target, &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    return mr_error_set(err, MR_ERR_IO, "%s: is a directory", path);
  /* a device, FIFO or socket: written in place */
  if (exists && !S_ISREG(st.st_mode)) {
    if (!(o->f = fopen(o->target, "w")))
      return mr_error_set(err, MR_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    return MR_OK;
  }
  /* a file the user may not write stays protected, although its directory would allow the
   * rename */
  if (exists && access(o->target, W_OK) != 0)
    return mr_error_set(err, MR_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  int fd = create_temp(o, exists ? st.st_mode & 07777 : 0666, exists);
  if (fd < 0) {
    o->tmp[0] = '\0';
    return mr_error_set(err, MR_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
  }
  if (!(o->f = fdopen(fd, "w"))) {
    int e = errno;
    close(fd), unlink(o->tmp), o->tmp[0] = '\0';
    return mr_error_set(err, MR_ERR_IO, "%s: cannot write: %s", path, strerror(e));
  }
  return MR_OK;
}

/* flush and close, keeping the first error's errno (EIO when the stream only says "error") */
static int close_checked(FILE *f) {
  errno = 0;
  int e = fflush(f) ? errno : 0;
  if (!e && ferror(f)) e = EIO;
  if (fclose(f) && !e) e = errno ? errno : EIO;
  return e;
}

mr_status mr_output_close(mr_output *o, mr_error *err) {
  int e = o->f ? close_checked(o->f) : 0;
  o->f = NULL;
  if (!e) return MR_OK;
  mr_output_discard(o);
  return mr_error_set(err, MR_ERR_IO, "%s: cannot write: %s", o->path, strerror(e));
}

mr_status mr_output_commit(mr_output *o, mr_error *err) {
  if (mr_output_close(o, err)) return MR_ERR_IO;
  if (o->tmp[0] && rename(o->tmp, o->target)) {
    int e = errno;
    mr_output_discard(o);
    return mr_error_set(err, MR_ERR_IO, "%s: cannot write: %s", o->path, strerror(e));
  }
  o->tmp[0] = '\0';
  return MR_OK;
}

void mr_output_discard(mr_output *o) {
  if (o->f) fclose(o->f);
  o->f = NULL;
  if (o->tmp[0]) unlink(o->tmp);
  o->tmp[0] = '\0';
}

/* the canonical form of a path that may not exist yet: its directory resolved */
static int canonical(const char *path, char *out, size_t size) {
  const char *slash = strrchr(path, '/');
  char dir[PATH_MAX], res[PATH_MAX];
  snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path + 1) : 1, slash ? path : ".");
  if (!realpath(dir, res)) return -1;
  int n = snprintf(out, size, "%s/%s", res, slash ? slash + 1 : path);
  return n < 0 || (size_t)n >= size ? -1 : 0;
}

int mr_output_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
  if (ea && eb) return !S_ISCHR(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea || eb) return 0;
  char ca[PATH_MAX + 256], cb[PATH_MAX + 256];
  if (canonical(a, ca, sizeof ca) || canonical(b, cb, sizeof cb)) return !strcmp(a, b);
  return !strcmp(ca, cb);
}

void mr_csv_write_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\r\n")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; ++s) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}
