/* The viewer layer of a library built without it (CMake option MOREAU_VIEWER=OFF: no npm, no
 * libwebsockets, no zlib): in place of the sources of src/viewer, the same functions, each
 * refusing with MR_VIEWER_ABSENT_MSG where it can fail. Nothing here is reached once
 * mr_viewer_available has refused, except through the public live API (include/moreau/live.h),
 * whose mr_live_create refuses with the same message. */
#include <string.h>

#include "moreau/live.h"
#include "viewer/viewer.h"

int mr_viewer_available(mr_error *err) {
  mr_error_set(err, MR_ERR_UNSUPPORTED, "%s", MR_VIEWER_ABSENT_MSG);
  return 0;
}

/* ---- the internal layer (viewer.h) ---- */

mr_status mr_viewer_visuals_load(const mr_world *w, mr_viewer_visuals *out, mr_error *err) {
  memset(out, 0, sizeof *out);
  return mr_error_set(err, MR_ERR_UNSUPPORTED, "%s", MR_VIEWER_ABSENT_MSG);
}

void mr_viewer_visuals_free(mr_viewer_visuals *v) {}

void mr_viewer_visuals_message(const mr_viewer_visuals *v, char *buf, size_t size) {
  if (size) buf[0] = '\0';
}

int mr_pack_write(FILE *f, const void *x, size_t n, mr_pack_type t, int shuffle) {
  return -1;
}

void mr_json_string(FILE *f, const char *s) {}

void mr_json_numbers(FILE *f, const double *x, int n) {}

void mr_base64_write(FILE *f, const unsigned char *d, size_t n) {}

int mr_viewer_describe(FILE *f, const mr_world *w, const mr_viewer_visuals *vis) {
  return -1;
}

int mr_viewer_follow_body(const mr_world *w) {
  return -1;
}

int mr_viewer_page_write(FILE *f, int (*write_data)(FILE *f, void *ctx), void *ctx) {
  return -1;
}

/* ---- the live API (live.h) ---- */

mr_live_options mr_live_options_default(void) {
  mr_live_options o = {
      .fps = 60.0, .realtime = 1, .speed = 1.0, .perturb_frequency = 2.0, .perturb_damping = 1.0};
  return o;
}

mr_live *mr_live_create(mr_sim *s, const mr_live_options *opt, mr_error *err) {
  mr_error_set(err, MR_ERR_UNSUPPORTED, "%s", MR_VIEWER_ABSENT_MSG);
  return NULL;
}

const char *mr_live_url(const mr_live *l) {
  return "";
}

int mr_live_port(const mr_live *l) {
  return 0;
}

void mr_live_publish(mr_live *l) {}

mr_live_action mr_live_poll(mr_live *l, double timeout) {
  return MR_LIVE_STEP;
}

void mr_live_end(mr_live *l, const char *status) {}

void mr_live_get_stats(mr_live *l, mr_live_stats *out) {
  memset(out, 0, sizeof *out);
}

void mr_live_free(mr_live *l) {}
