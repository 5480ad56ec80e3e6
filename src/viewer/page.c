/* The viewer's page (viewer.h): the template viewer/page.html with the page's data and the
 * bundled script (viewer/src bundled by esbuild) in place of @DATA@ and @SCRIPT@; both files
 * are linked into the library as data (the Makefile; CMake with MOREAU_VIEWER on). */
#include <string.h>

#include "viewer/viewer.h"

/* the page template and the bundled script, linked in from viewer/ */
extern const char mr_viewer_page[], mr_viewer_page_end[];
extern const char mr_viewer_js[], mr_viewer_js_end[];

/* the script, with "</script" written "<\/script" (the same text in a JS string or regex) */
static void write_script(FILE *f) {
  const char *p = mr_viewer_js, *end = mr_viewer_js_end;
  while (p < end) {
    const char *hit = NULL;
    for (const char *s = p; s + 8 <= end && !hit; ++s)
      if (s[0] == '<' && s[1] == '/' && !strncmp(s + 2, "script", 6)) hit = s;
    size_t n = (size_t)((hit ? hit : end) - p);
    fwrite(p, 1, n, f);
    if (!hit) break;
    fputs("<\\/", f);
    p = hit + 2;
  }
}

int mr_viewer_available(mr_error *err) {
  (void)err;
  return 1;
}

int mr_viewer_page_write(FILE *f, int (*write_data)(FILE *f, void *ctx), void *ctx) {
  const char *p = mr_viewer_page, *end = mr_viewer_page_end;
  int bad = 0;
  while (p < end) {
    const char *at = memchr(p, '@', (size_t)(end - p));
    if (!at) at = end;
    fwrite(p, 1, (size_t)(at - p), f);
    if (at == end) break;
    if ((size_t)(end - at) >= 6 && !strncmp(at, "@DATA@", 6)) {
      bad |= write_data(f, ctx);
      p = at + 6;
    } else if ((size_t)(end - at) >= 8 && !strncmp(at, "@SCRIPT@", 8)) {
      write_script(f);
      p = at + 8;
    } else {
      fputc('@', f);
      p = at + 1;
    }
  }
  return bad ? -1 : 0;
}
