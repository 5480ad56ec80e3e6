/* Typed access to a libyaml document with positions in every message (see yaml_util.h).
 * Marks from libyaml are 0-based; messages print them 1-based as file:line:column. */
#include "io/yaml_util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "moreau/scene.h"

/* Nesting deeper than this is refused before the document is built: libyaml's scanner spends
 * time quadratic in the flow nesting depth (10⁵ levels of '[' took 31 s), and no scene needs more
 * than a handful of levels. */
#define YAML_DEPTH_MAX 64

static mr_status syntax_error(const yaml_parser_t *p, const char *name, mr_error *err) {
  return mr_error_set(err, MR_ERR_PARSE, "%s:%zu:%zu: YAML syntax error: %s%s%s", name,
                      p->problem_mark.line + 1, p->problem_mark.column + 1,
                      p->problem ? p->problem : "malformed input", p->context ? " " : "",
                      p->context ? p->context : "");
}

/* walk the events and stop at the first collection nested deeper than YAML_DEPTH_MAX; the walk
 * ends there, so its cost stays bounded whatever the input's depth */
static mr_status check_depth(const char *text, size_t len, const char *name, mr_error *err) {
  yaml_parser_t p;
  if (!yaml_parser_initialize(&p))
    return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", name);
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  mr_status st = MR_OK;
  for (int depth = 0, done = 0; !done && !st;) {
    yaml_event_t e;
    if (!yaml_parser_parse(&p, &e)) {
      st = syntax_error(&p, name, err);
      break;
    }
    int open = e.type == YAML_SEQUENCE_START_EVENT || e.type == YAML_MAPPING_START_EVENT;
    int close = e.type == YAML_SEQUENCE_END_EVENT || e.type == YAML_MAPPING_END_EVENT;
    depth += open - close;
    if (depth > YAML_DEPTH_MAX)
      st = mr_error_set(err, MR_ERR_PARSE, "%s:%zu:%zu: nesting deeper than %d levels", name,
                        e.start_mark.line + 1, e.start_mark.column + 1, YAML_DEPTH_MAX);
    done = e.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&e);
  }
  yaml_parser_delete(&p);
  return st;
}

mr_status mr_yaml_parse(mr_ydoc *d, const char *text, size_t len, const char *name, mr_error *err) {
  memset(d, 0, sizeof *d);
  mr_status depth = check_depth(text, len, name, err);
  if (depth) return depth;
  d->name = name;
  d->err = err;
  yaml_parser_t p;
  if (!yaml_parser_initialize(&p))
    return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", name);
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  mr_status st = MR_OK;
  if (!yaml_parser_load(&p, &d->doc)) {
    st = syntax_error(&p, name, err);
  } else {
    d->loaded = 1;
  }
  yaml_parser_delete(&p);
  return st;
}

void mr_yaml_free(mr_ydoc *d) {
  if (d->loaded) yaml_document_delete(&d->doc);
  d->loaded = 0;
}

mr_ynode *mr_yaml_root(mr_ydoc *d) {
  return d->loaded ? yaml_document_get_root_node(&d->doc) : NULL;
}

mr_status mr_yaml_error(mr_ydoc *d, const mr_ynode *n, mr_status st, const char *fmt, ...) {
  char msg[MR_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (n)
    return mr_error_set(d->err, st, "%s:%zu:%zu: %s", d->name, n->start_mark.line + 1,
                        n->start_mark.column + 1, msg);
  return mr_error_set(d->err, st, "%s: %s", d->name, msg);
}

int mr_yaml_is_map(const mr_ynode *n) {
  return n && n->type == YAML_MAPPING_NODE;
}
int mr_yaml_is_seq(const mr_ynode *n) {
  return n && n->type == YAML_SEQUENCE_NODE;
}
int mr_yaml_is_scalar(const mr_ynode *n) {
  return n && n->type == YAML_SCALAR_NODE;
}

const char *mr_yaml_text(const mr_ynode *n) {
  return mr_yaml_is_scalar(n) ? (const char *)n->data.scalar.value : "";
}

const char *mr_yaml_describe(const mr_ynode *n, char *buf, size_t len) {
  if (mr_yaml_is_map(n))
    snprintf(buf, len, "a mapping");
  else if (mr_yaml_is_seq(n))
    snprintf(buf, len, "a list of %d", mr_yaml_seq_size(n));
  else if (mr_yaml_is_scalar(n))
    snprintf(buf, len, "'%.60s'", mr_yaml_text(n));
  else
    snprintf(buf, len, "nothing");
  return buf;
}

int mr_yaml_map_size(const mr_ynode *map) {
  if (!mr_yaml_is_map(map)) return 0;
  return (int)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
}

mr_ynode *mr_yaml_map_key(mr_ydoc *d, const mr_ynode *map, int i) {
  return yaml_document_get_node(&d->doc, map->data.mapping.pairs.start[i].key);
}

mr_ynode *mr_yaml_map_value(mr_ydoc *d, const mr_ynode *map, int i) {
  return yaml_document_get_node(&d->doc, map->data.mapping.pairs.start[i].value);
}

mr_ynode *mr_yaml_get(mr_ydoc *d, const mr_ynode *map, const char *key) {
  for (int i = 0; i < mr_yaml_map_size(map); ++i)
    if (strcmp(mr_yaml_text(mr_yaml_map_key(d, map, i)), key) == 0)
      return mr_yaml_map_value(d, map, i);
  return NULL;
}

int mr_yaml_seq_size(const mr_ynode *seq) {
  if (!mr_yaml_is_seq(seq)) return 0;
  return (int)(seq->data.sequence.items.top - seq->data.sequence.items.start);
}

mr_ynode *mr_yaml_seq_at(mr_ydoc *d, const mr_ynode *seq, int i) {
  return yaml_document_get_node(&d->doc, seq->data.sequence.items.start[i]);
}

int mr_edit_distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64) return (int)(la > lb ? la : lb);
  int row[65];
  for (size_t j = 0; j <= lb; ++j)
    row[j] = (int)j;
  /* one-row dynamic programme over the Levenshtein table */
  for (size_t i = 1; i <= la; ++i) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; ++j) {
      int up = row[j];
      int cost = tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 1]) ? 0 : 1;
      int best = diag + cost;
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

const char *mr_yaml_nearest(const char *s, const char *const *allowed) {
  const char *best = NULL;
  int bd = 1 << 30;
  for (int i = 0; allowed && allowed[i]; ++i) {
    int dist = mr_edit_distance(s, allowed[i]);
    if (dist < bd) bd = dist, best = allowed[i];
  }
  int len = (int)strlen(s);
  int limit = len / 3 > 2 ? len / 3 : 2;
  return bd <= limit ? best : NULL;
}

/* "; valid keys: a, b, c" into buf */
static void list_keys(const char *const *allowed, char *buf, size_t len) {
  size_t used = (size_t)snprintf(buf, len, "valid keys:");
  for (int i = 0; allowed[i] && used < len; ++i)
    used += (size_t)snprintf(buf + used, len - used, "%s %s", i ? "," : "", allowed[i]);
}

mr_status mr_yaml_need_map(mr_ydoc *d, const mr_ynode *n, const char *key) {
  char b[80];
  if (mr_yaml_is_map(n)) return MR_OK;
  return mr_yaml_error(d, n, MR_ERR_INVALID, "'%s': expected a mapping, got %s", key,
                       mr_yaml_describe(n, b, sizeof b));
}

mr_status mr_yaml_need_seq(mr_ydoc *d, const mr_ynode *n, const char *key) {
  char b[80];
  if (mr_yaml_is_seq(n)) return MR_OK;
  return mr_yaml_error(d, n, MR_ERR_INVALID, "'%s': expected a list, got %s", key,
                       mr_yaml_describe(n, b, sizeof b));
}

mr_status mr_yaml_check_map(mr_ydoc *d, const mr_ynode *n, const char *const *allowed,
                            const char *what) {
  if (mr_yaml_need_map(d, n, what)) return d->err ? d->err->status : MR_ERR_INVALID;
  for (int i = 0; i < mr_yaml_map_size(n); ++i) {
    mr_ynode *k = mr_yaml_map_key(d, n, i);
    const char *ks = mr_yaml_text(k);
    int known = 0;
    for (int a = 0; allowed[a] && !known; ++a)
      known = strcmp(ks, allowed[a]) == 0;
    if (!known) {
      const char *near = mr_yaml_nearest(ks, allowed);
      char keys[320];
      list_keys(allowed, keys, sizeof keys);
      if (near)
        return mr_yaml_error(d, k, MR_ERR_INVALID, "unknown key '%s' in %s: did you mean '%s'?", ks,
                             what, near);
      return mr_yaml_error(d, k, MR_ERR_INVALID, "unknown key '%s' in %s (%s)", ks, what, keys);
    }
    for (int j = 0; j < i; ++j)
      if (strcmp(ks, mr_yaml_text(mr_yaml_map_key(d, n, j))) == 0)
        return mr_yaml_error(d, k, MR_ERR_INVALID, "key '%s' appears twice in %s", ks, what);
  }
  return MR_OK;
}

mr_status mr_yaml_double(mr_ydoc *d, const mr_ynode *n, const char *key, double *out) {
  char b[80];
  const char *s = mr_yaml_text(n);
  char *end = NULL;
  errno = 0;
  double x = mr_yaml_is_scalar(n) && *s ? strtod(s, &end) : NAN;
  if (end && *end == '\0' && isfinite(x) && errno == 0) {
    *out = x;
    return MR_OK;
  }
  return mr_yaml_error(d, n, MR_ERR_INVALID, "'%s': expected a number, got %s", key,
                       mr_yaml_describe(n, b, sizeof b));
}

mr_status mr_yaml_int(mr_ydoc *d, const mr_ynode *n, const char *key, int *out) {
  char b[80];
  double x = 0.0;
  mr_error *saved = d->err;
  mr_error scratch;
  d->err = &scratch;
  mr_status st = mr_yaml_double(d, n, key, &x);
  d->err = saved;
  if (!st && x == floor(x) && fabs(x) <= 2147483647.0) {
    *out = (int)x;
    return MR_OK;
  }
  return mr_yaml_error(d, n, MR_ERR_INVALID, "'%s': expected an integer, got %s", key,
                       mr_yaml_describe(n, b, sizeof b));
}

mr_status mr_yaml_bool(mr_ydoc *d, const mr_ynode *n, const char *key, int *out) {
  static const char *const yes[] = {"true", "yes", "on", "1"};
  static const char *const no[] = {"false", "no", "off", "0"};
  char b[80];
  const char *s = mr_yaml_text(n);
  for (int i = 0; mr_yaml_is_scalar(n) && i < 4; ++i) {
    if (strcasecmp(s, yes[i]) == 0) return *out = 1, MR_OK;
    if (strcasecmp(s, no[i]) == 0) return *out = 0, MR_OK;
  }
  return mr_yaml_error(d, n, MR_ERR_INVALID, "'%s': expected true or false, got %s", key,
                       mr_yaml_describe(n, b, sizeof b));
}

mr_status mr_yaml_string(mr_ydoc *d, const mr_ynode *n, const char *key, const char **out) {
  char b[80];
  if (mr_yaml_is_scalar(n) && mr_yaml_text(n)[0]) {
    *out = mr_yaml_text(n);
    return MR_OK;
  }
  return mr_yaml_error(d, n, MR_ERR_INVALID, "'%s': expected a non-empty string, got %s", key,
                       mr_yaml_describe(n, b, sizeof b));
}

mr_status mr_yaml_vec(mr_ydoc *d, const mr_ynode *n, const char *key, double *out, int len) {
  char b[80];
  if (!mr_yaml_is_seq(n) || mr_yaml_seq_size(n) != len)
    return mr_yaml_error(d, n, MR_ERR_INVALID, "'%s': expected a list of %d numbers, got %s", key,
                         len, mr_yaml_describe(n, b, sizeof b));
  for (int i = 0; i < len; ++i) {
    mr_status st = mr_yaml_double(d, mr_yaml_seq_at(d, n, i), key, &out[i]);
    if (st) return st;
  }
  return MR_OK;
}

mr_status mr_yaml_opt_double(mr_ydoc *d, const mr_ynode *map, const char *key, double *out) {
  mr_ynode *n = mr_yaml_get(d, map, key);
  return n ? mr_yaml_double(d, n, key, out) : MR_OK;
}

mr_status mr_yaml_opt_int(mr_ydoc *d, const mr_ynode *map, const char *key, int *out) {
  mr_ynode *n = mr_yaml_get(d, map, key);
  return n ? mr_yaml_int(d, n, key, out) : MR_OK;
}

mr_status mr_yaml_opt_bool(mr_ydoc *d, const mr_ynode *map, const char *key, int *out) {
  mr_ynode *n = mr_yaml_get(d, map, key);
  return n ? mr_yaml_bool(d, n, key, out) : MR_OK;
}

mr_status mr_yaml_opt_vec(mr_ydoc *d, const mr_ynode *map, const char *key, double *out, int len) {
  mr_ynode *n = mr_yaml_get(d, map, key);
  return n ? mr_yaml_vec(d, n, key, out, len) : MR_OK;
}

mr_status mr_yaml_opt_string(mr_ydoc *d, const mr_ynode *map, const char *key, const char **out) {
  mr_ynode *n = mr_yaml_get(d, map, key);
  return n ? mr_yaml_string(d, n, key, out) : MR_OK;
}
