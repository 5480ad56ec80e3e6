/* JSON reader and writer (see json.h). jansson parses the text: RFC 8259 numbers, escapes and
 * UTF-8, duplicate keys refused, and the line and column of a syntax error. Its tree is copied
 * into mr_json values (object members in document order), and one pass over the text, valid by
 * then, records where each value starts, so that messages about a value that parses but is wrong
 * (a missing key, a count, a type) name its line and column too. Columns count characters, as
 * jansson's do. */
#include "core/json.h"

#include "core/file.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the deepest nesting accepted (the tree is freed and converted recursively) */
#define JSON_MAX_DEPTH 64

/* ---- the value tree from jansson's ---- */

static mr_json *convert(const json_t *j);

/* the children of an array or object, in order; 0, or -1 when out of memory */
static int convert_children(const json_t *j, mr_json *v) {
  mr_json **tail = &v->child;
  size_t i;
  const char *key;
  json_t *c;
  if (json_is_array(j)) {
    json_array_foreach(j, i, c) {
      if (!(*tail = convert(c))) return -1;
      tail = &(*tail)->next, v->count++;
    }
    return 0;
  }
  json_object_foreach((json_t *)j, key, c) {
    if (!(*tail = convert(c)) || !((*tail)->key = strdup(key))) return -1;
    tail = &(*tail)->next, v->count++;
  }
  return 0;
}

/* one value and everything under it, malloc'ed; NULL when out of memory */
static mr_json *convert(const json_t *j) {
  mr_json *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  int ok = 1;
  switch (json_typeof(j)) {
  case JSON_OBJECT:
  case JSON_ARRAY:
    v->type = json_is_object(j) ? MR_JSON_OBJECT : MR_JSON_ARRAY;
    ok = convert_children(j, v) == 0;
    break;
  case JSON_STRING:
    v->type = MR_JSON_STRING;
    ok = (v->string = strdup(json_string_value(j))) != NULL;
    break;
  case JSON_INTEGER:
  case JSON_REAL:
    v->type = MR_JSON_NUMBER, v->number = json_number_value(j);
    break;
  case JSON_TRUE:
  case JSON_FALSE:
    v->type = MR_JSON_BOOL, v->number = json_is_true(j);
    break;
  case JSON_NULL:
    v->type = MR_JSON_NULL;
    break;
  }
  if (!ok) mr_json_free(v), v = NULL;
  return v;
}

/* ---- where each value starts ---- */

typedef struct {
  const char *s; /* the text, valid JSON */
  int line, col; /* of the character at s (1-based; col counts UTF-8 characters) */
} cursor;

static void step(cursor *c) {
  if (*c->s == '\n')
    c->line++, c->col = 1;
  else if (((unsigned char)c->s[1] & 0xC0) != 0x80) /* the next character starts here */
    c->col++;
  c->s++;
}

static void skip_ws(cursor *c) {
  while (*c->s == ' ' || *c->s == '\t' || *c->s == '\n' || *c->s == '\r')
    step(c);
}

/* past a string literal (at its opening quote) */
static void skip_string(cursor *c) {
  step(c);
  while (*c->s != '"') {
    if (*c->s == '\\') step(c);
    step(c);
  }
  step(c);
}

/* record v's position and its children's, moving past v; -1 when nested deeper than allowed */
static int place(cursor *c, mr_json *v, int depth, const char *name, mr_error *err) {
  skip_ws(c);
  v->line = c->line, v->col = c->col;
  if (v->type == MR_JSON_STRING) return skip_string(c), 0;
  if (v->type != MR_JSON_ARRAY && v->type != MR_JSON_OBJECT) {
    while (*c->s && !strchr(",]} \t\r\n", *c->s))
      step(c);
    return 0;
  }
  if (depth == JSON_MAX_DEPTH)
    return mr_error_set(err, MR_ERR_PARSE, "%s:%d:%d: nesting deeper than %d levels", name, v->line,
                        v->col, JSON_MAX_DEPTH),
           -1;
  step(c); /* the opening bracket */
  for (mr_json *k = v->child; k; k = k->next) {
    if (v->type == MR_JSON_OBJECT) {
      skip_ws(c), skip_string(c), skip_ws(c), step(c); /* the key and its ':' */
    }
    if (place(c, k, depth + 1, name, err)) return -1;
    skip_ws(c), step(c); /* ',' or the closing bracket */
  }
  if (!v->child) skip_ws(c), step(c);
  return 0;
}

/* ---- reading ---- */

/* jansson's syntax error as "name:line:col: what", a few of its texts said in moreau's words */
static mr_status syntax_error(const json_error_t *je, const char *name, mr_error *err) {
  enum json_error_code code = json_error_code(je);
  if (code == json_error_out_of_memory)
    return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", name);
  const char *near = strstr(je->text, " near ");
  const char *what = code == json_error_numeric_overflow ? "number out of range"
                     : code == json_error_null_character ? "a \\u0000 (NUL) in a string"
                                                         : NULL;
  /* the column of the offending character; 0 when it is the end of an empty last line */
  int col = je->column > 0 ? je->column : 1;
  if (what)
    return mr_error_set(err, MR_ERR_PARSE, "%s:%d:%d: %s%s", name, je->line, col, what,
                        near ? near : "");
  return mr_error_set(err, MR_ERR_PARSE, "%s:%d:%d: %s", name, je->line, col, je->text);
}

mr_status mr_json_parse(const char *text, const char *name, mr_json **out, mr_error *err) {
  *out = NULL;
  name = name ? name : "<json>";
  json_error_t je;
  json_t *j =
      json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &je);
  if (!j) return syntax_error(&je, name, err);
  mr_json *root = convert(j);
  json_decref(j);
  if (!root) return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", name);
  cursor c = {text, 1, 1};
  if (place(&c, root, 0, name, err)) {
    mr_json_free(root);
    return MR_ERR_PARSE;
  }
  *out = root;
  return MR_OK;
}

mr_status mr_json_load(const char *path, mr_json **out, mr_error *err) {
  *out = NULL;
  char *buf = NULL;
  size_t n = 0;
  mr_status st = mr_read_file(path, &buf, &n, err);
  if (st) return st;
  if (strlen(buf) != n) {
    free(buf);
    return mr_error_set(err, MR_ERR_PARSE, "%s: contains a NUL byte (not a JSON text)", path);
  }
  st = mr_json_parse(buf, path, out, err);
  free(buf);
  return st;
}

void mr_json_free(mr_json *v) {
  while (v) {
    mr_json *next = v->next;
    mr_json_free(v->child);
    free(v->string);
    free(v->key);
    free(v);
    v = next;
  }
}

const mr_json *mr_json_get(const mr_json *obj, const char *key) {
  if (!obj || obj->type != MR_JSON_OBJECT) return NULL;
  for (const mr_json *c = obj->child; c; c = c->next)
    if (c->key && strcmp(c->key, key) == 0) return c;
  return NULL;
}

const mr_json *mr_json_at(const mr_json *arr, int i) {
  if (!arr || arr->type != MR_JSON_ARRAY || i < 0) return NULL;
  const mr_json *c = arr->child;
  while (c && i-- > 0)
    c = c->next;
  return c;
}

const char *mr_json_type_name(mr_json_type t) {
  static const char *const names[] = {"null", "boolean", "number", "string", "array", "object"};
  return names[t];
}

mr_status mr_json_read_vector(const mr_json *v, const char *name, const char *what, double *out,
                              int n, mr_error *err) {
  if (!v || v->type != MR_JSON_ARRAY)
    return mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: '%s' must be an array of %d numbers", name,
                        v ? v->line : 0, v ? v->col : 0, what, n);
  if (v->count != n)
    return mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: '%s' has %d entries, expected %d", name,
                        v->line, v->col, what, v->count, n);
  int i = 0;
  for (const mr_json *c = v->child; c; c = c->next, ++i) {
    if (c->type != MR_JSON_NUMBER)
      return mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: '%s'[%d] is a %s, expected a number",
                          name, c->line, c->col, what, i, mr_json_type_name(c->type));
    out[i] = c->number;
  }
  return MR_OK;
}

mr_status mr_json_read_matrix(const mr_json *v, const char *name, const char *what, double *out,
                              int rows, int cols, mr_error *err) {
  if (!v || v->type != MR_JSON_ARRAY)
    return mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: '%s' must be an array of %d rows", name,
                        v ? v->line : 0, v ? v->col : 0, what, rows);
  if (v->count != rows)
    return mr_error_set(err, MR_ERR_INVALID, "%s:%d:%d: '%s' has %d rows, expected %d", name,
                        v->line, v->col, what, v->count, rows);
  int i = 0;
  char row_name[96];
  for (const mr_json *c = v->child; c; c = c->next, ++i) {
    snprintf(row_name, sizeof row_name, "%s[%d]", what, i);
    mr_status st = mr_json_read_vector(c, name, row_name, out + (size_t)i * cols, cols, err);
    if (st) return st;
  }
  return MR_OK;
}

void mr_json_write_number(FILE *f, double x) {
  if (isfinite(x))
    fprintf(f, "%.17g", x);
  else
    fputs("null", f);
}

void mr_json_write_vector(FILE *f, const double *x, int n) {
  fputc('[', f);
  for (int i = 0; i < n; ++i) {
    if (i) fputs(", ", f);
    mr_json_write_number(f, x[i]);
  }
  fputc(']', f);
}

void mr_json_write_matrix(FILE *f, const double *A, int rows, int cols) {
  fputc('[', f);
  for (int i = 0; i < rows; ++i) {
    if (i) fputs(", ", f);
    mr_json_write_vector(f, A + (size_t)i * cols, cols);
  }
  fputc(']', f);
}

void mr_json_write_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; ++s) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}
