/* Files given where a scene is expected, by format (one branch each): a YAML scene
 * (docs/scene-format.md), a bare URDF robot, run in its default scene (scene_default.c), or an
 * MJCF model (mjcf.h: the model as one robot with its own options, docs/mjcf.md). The format
 * comes from the content, an XML document whose root element is <robot> being URDF and one whose
 * root is <mujoco> MJCF, then
 * from the extension for a file that does not start like XML (a damaged .urdf gets the URDF
 * reader's message, not the YAML parser's). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "io/scene_internal.h"
#include "moreau/mjcf.h"

typedef enum { FILE_YAML, FILE_URDF, FILE_MJCF, FILE_XML } file_format;

/* past "<?...?>", "<!--...-->" or "<!...>" at s; NULL when unterminated */
static const char *skip_markup(const char *s) {
  const char *end = !strncmp(s, "<?", 2)     ? strstr(s, "?>")
                    : !strncmp(s, "<!--", 4) ? strstr(s, "-->")
                                             : strchr(s, '>');
  if (!end) return NULL;
  return end + (!strncmp(s, "<?", 2) ? 2 : !strncmp(s, "<!--", 4) ? 3 : 1);
}

/* the name of the root element of an XML text (after a byte-order mark, the prolog, comments
 * and a doctype) into out; -1 when the text does not start like XML */
static int xml_root(const char *s, char *out, size_t len) {
  if (!strncmp(s, "\xEF\xBB\xBF", 3)) s += 3;
  for (;;) {
    while (isspace((unsigned char)*s))
      s++;
    if (*s != '<') return -1;
    if (s[1] != '?' && s[1] != '!') break;
    if (!(s = skip_markup(s))) return -1;
  }
  size_t n = strcspn(++s, " \t\r\n/>");
  snprintf(out, len, "%.*s", (int)n, s);
  return n ? 0 : -1;
}

static int has_ext(const char *path, const char *ext) {
  size_t n = strlen(path), m = strlen(ext);
  return n >= m && !strcasecmp(path + n - m, ext);
}

/* the format of a file's text; root gets the XML root element's name */
static file_format file_format_of(const char *path, const char *text, char *root, size_t len) {
  if (!xml_root(text, root, len))
    return !strcmp(root, "robot") ? FILE_URDF : !strcmp(root, "mujoco") ? FILE_MJCF : FILE_XML;
  return has_ext(path, ".urdf") ? FILE_URDF : FILE_YAML;
}

mr_status scene_load_file(const char *path, const char *text, const char *dir, mr_scene *s,
                          mr_error *err) {
  char root[64] = "";
  switch (file_format_of(path, text, root, sizeof root)) {
  case FILE_URDF:
    return scene_default_for_urdf(path, dir, s, err);
  case FILE_MJCF:
    return mr_mjcf_load(path, NULL, s, err);
  case FILE_XML:
    mr_scene_free(s);
    return mr_error_set(
        err, MR_ERR_UNSUPPORTED,
        "%s: an XML file whose root element is <%s>: moreau reads a scene (YAML, "
        "docs/scene-format.md), a URDF robot (<robot>) or an MJCF model (<mujoco>) here",
        path, root);
  case FILE_YAML:
    break;
  }
  return mr_scene_parse(text, path, dir, s, err);
}
