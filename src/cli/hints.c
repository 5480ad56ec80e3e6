/* Messages that name what was meant (hints.h). */
#include "cli/hints.h"

#include <stdio.h>
#include <string.h>

#include "moreau/contact.h"

/* the keys of run --set besides solver.FIELD (solver.retry is no mr_solver_settings field) */
static const char *const contact_keys[] = {"solver.retry", "contact.baumgarte", "contact.margin",
                                           "contact.restitution_threshold", NULL};
/* and those sweep --grid adds */
static const char *const sweep_keys[] = {"timestep", "duration", NULL};

#define MAX_KEYS 64

const char *mr_cli_nearest(const char *s, const char *const *names) {
  const char *best = NULL;
  int bd = 1 << 30, len = (int)strlen(s), limit = len / 3 > 2 ? len / 3 : 2;
  for (int i = 0; names[i]; ++i) {
    int d = mr_edit_distance(s, names[i]);
    if (d < bd) bd = d, best = names[i];
  }
  return bd <= limit ? best : NULL;
}

/* "a, b, c" of the names into out */
static void join(const char *const *names, char *out, size_t len) {
  out[0] = '\0';
  for (int i = 0; names[i]; ++i) {
    size_t used = strlen(out);
    snprintf(out + used, len - used, "%s%s", i ? ", " : "", names[i]);
  }
}

int mr_cli_check_solver(const char *cmd, const char *name) {
  if (mr_solver_find(name)) return 0;
  const char *names[MAX_KEYS + 1];
  int n = 0;
  for (int i = 0; i < mr_solver_count() && n < MAX_KEYS; ++i)
    names[n++] = mr_solver_at(i)->name;
  names[n] = NULL;
  char list[1024];
  join(names, list, sizeof list);
  const char *near = mr_cli_nearest(name, names);
  if (near)
    fprintf(stderr, "moreau %s: unknown solver '%s': did you mean '%s'? (known: %s)\n", cmd, name,
            near, list);
  else
    fprintf(stderr, "moreau %s: unknown solver '%s' (known: %s)\n", cmd, name, list);
  return 2;
}

/* every key, solver.FIELD spelled out, into keys (storage for the solver ones in buf) */
static int all_keys(int sweep, const char **keys, char (*buf)[48]) {
  int n = 0;
  for (int f = 0; mr_scene_settings_field(f) && n < MAX_KEYS - 6; ++f, ++n)
    snprintf(buf[n], sizeof buf[n], "solver.%s", mr_scene_settings_field(f)), keys[n] = buf[n];
  for (int k = 0; contact_keys[k]; ++k)
    keys[n++] = contact_keys[k];
  for (int k = 0; sweep && sweep_keys[k]; ++k)
    keys[n++] = sweep_keys[k];
  keys[n] = NULL;
  return n;
}

mr_status mr_cli_check_key(const char *key, int sweep, mr_error *err) {
  const char *keys[MAX_KEYS + 1];
  char buf[MAX_KEYS][48];
  all_keys(sweep, keys, buf);
  for (int i = 0; keys[i]; ++i)
    if (!strcmp(key, keys[i])) return MR_OK;
  const char *near = mr_cli_nearest(key, keys);
  /* the list with the solver fields in braces: solver.{max_iter, ...}, contact.baumgarte, ... */
  char fields[1024], others[256];
  const char *names[MAX_KEYS + 1];
  int n = 0;
  for (; mr_scene_settings_field(n) && n < MAX_KEYS; ++n)
    names[n] = mr_scene_settings_field(n);
  names[n] = NULL;
  join(names, fields, sizeof fields);
  join(keys + n, others, sizeof others);
  if (near)
    return mr_error_set(err, MR_ERR_INVALID,
                        "unknown key '%s': did you mean '%s'? (keys: solver.{%s}, %s)", key, near,
                        fields, others);
  return mr_error_set(err, MR_ERR_INVALID, "unknown key '%s' (keys: solver.{%s}, %s)", key, fields,
                      others);
}

void mr_cli_scene_note(const char *cmd, const mr_scene *scene) {
  if (scene->default_scene[0]) fprintf(stderr, "moreau %s: %s\n", cmd, scene->default_scene);
}
