/* Helpers of the viewer tests (test_viewer.c, test_viewer_live.c): PNG screenshots decoded by
 * libspng, pixel counts, files, child processes. */
#ifndef MOREAU_TEST_VIEWER_UTIL_H
#define MOREAU_TEST_VIEWER_UTIL_H

#include <fcntl.h>
#include <signal.h>
#include <spng.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli_util.h"

typedef struct {
  int w, h;
  unsigned char *rgb; /* w * h * 3 */
} image;

static inline unsigned char *read_all(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 20, len = 0;
  unsigned char *d = malloc(cap);
  for (size_t k; d && (k = fread(d + len, 1, cap - len, f)) > 0;)
    if ((len += k) == cap) d = realloc(d, cap *= 2);
  fclose(f);
  *n = len;
  return d;
}

/* a PNG file as 8-bit RGB (libspng converts any colour type and depth) */
static inline image read_png(const char *path) {
  image im = {0};
  size_t n = 0, size = 0;
  unsigned char *d = read_all(path, &n);
  if (!d) fail_msg("cannot read the screenshot %s", path);
  spng_ctx *ctx = spng_ctx_new(0);
  assert_non_null(ctx);
  assert_int_equal(spng_set_png_buffer(ctx, d, n), 0);
  struct spng_ihdr ihdr;
  assert_int_equal(spng_get_ihdr(ctx, &ihdr), 0);
  assert_int_equal(spng_decoded_image_size(ctx, SPNG_FMT_RGB8, &size), 0);
  im.w = (int)ihdr.width, im.h = (int)ihdr.height;
  assert_int_equal(size, (size_t)im.w * (size_t)im.h * 3);
  im.rgb = malloc(size);
  assert_int_equal(spng_decode_image(ctx, im.rgb, size, SPNG_FMT_RGB8, 0), 0);
  spng_ctx_free(ctx);
  free(d);
  return im;
}

static inline int is_background(const image *im, long k) {
  return !memcmp(im->rgb + 3 * k, "\xff\xff\xff", 3);
}

/* pixels other than the white background */
static inline long count_foreground(const image *im) {
  long n = 0;
  for (long k = 0; k < (long)im->w * im->h; ++k)
    n += !is_background(im, k);
  return n;
}

/* foreground pixels on the image's outermost rows and columns */
static inline long count_border(const image *im) {
  long n = 0;
  for (int y = 0; y < im->h; ++y)
    for (int x = 0; x < im->w; ++x)
      if ((x == 0 || y == 0 || x == im->w - 1 || y == im->h - 1) &&
          !is_background(im, (long)y * im->w + x))
        ++n;
  return n;
}

static inline long count_different(const image *a, const image *b) {
  assert_int_equal(a->w, b->w);
  assert_int_equal(a->h, b->h);
  long n = 0;
  for (long k = 0; k < (long)a->w * a->h; ++k)
    n += memcmp(a->rgb + 3 * k, b->rgb + 3 * k, 3) != 0;
  return n;
}

/* the text of a file, NUL-terminated (NULL when it cannot be read) */
static inline char *read_text(const char *path) {
  size_t n = 0;
  char *s = (char *)read_all(path, &n);
  if (!s) return NULL;
  s = realloc(s, n + 1);
  s[n] = '\0';
  return s;
}

static inline int count_substr(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
    ++n;
  return n;
}

static inline double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* start argv[0] with stdout and stderr into out_path; its pid */
static inline pid_t spawn(char *const argv[], const char *out_path) {
  fflush(stdout);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) _exit(127);
    dup2(fd, 1), dup2(fd, 2), close(fd);
    execvp(argv[0], argv);
    _exit(127);
  }
  return pid;
}

/* wait up to timeout s for the child; its exit code, or -1 (still running, then killed) */
static inline int wait_child(pid_t pid, double timeout) {
  double end = wall_seconds() + timeout;
  int status = 0;
  while (wall_seconds() < end) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    usleep(20000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

/* wait up to timeout s for needle in the file; a copy of the file's text from it, or NULL */
static inline char *wait_text(const char *path, const char *needle, double timeout) {
  double end = wall_seconds() + timeout;
  while (wall_seconds() < end) {
    char *s = read_text(path);
    const char *p = s ? strstr(s, needle) : NULL;
    if (p) {
      char *copy = strdup(p);
      free(s);
      return copy;
    }
    free(s);
    usleep(50000);
  }
  return NULL;
}

/* the number after "key": inside the JSON object named obj ("" for the first occurrence) */
static inline double json_number(const char *json, const char *obj, const char *key) {
  char pat[128];
  const char *p = json;
  if (obj[0]) {
    snprintf(pat, sizeof pat, "\"%s\":", obj);
    p = strstr(json, pat);
    if (!p) fail_msg("no object '%s' in %s", obj, json);
  }
  snprintf(pat, sizeof pat, "\"%s\":", key);
  p = strstr(p, pat);
  if (!p) fail_msg("no key '%s' in object '%s' of %s", key, obj, json);
  return strtod(p + strlen(pat), NULL);
}

/* the string value after "key": inside the object obj (static buffer) */
static inline const char *json_string(const char *json, const char *obj, const char *key) {
  static char out[256];
  char pat[128];
  snprintf(pat, sizeof pat, "\"%s\":", obj);
  const char *p = strstr(json, pat);
  if (!p) fail_msg("no object '%s' in %s", obj, json);
  snprintf(pat, sizeof pat, "\"%s\":\"", key);
  p = strstr(p, pat);
  if (!p) fail_msg("no key '%s' in object '%s'", key, obj);
  p += strlen(pat);
  size_t n = strcspn(p, "\"");
  snprintf(out, sizeof out, "%.*s", (int)n, p);
  return out;
}

#endif
