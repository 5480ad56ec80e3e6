/* JSON reader and writer (see json.h). Recursive descent over RFC 8259, depth-limited. */
#include "core/json.h"

#include "core/file.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define JSON_MAX_DEPTH 64

typedef struct {
  const char *s;    /* text */
  size_t i;         /* cursor */
  int line, col;    /* cursor position */
  const char *name; /* for messages */
  mr_error *err;
} parser;

static mr_status fail(parser *p, const char *what) {
  return mr_error_set(p->err, MR_ERR_PARSE, "%s:%d:%d: %s", p->name, p->line, p->col, what);
}

static void advance(parser *p) {
  if (p->s[p->i] == '\n') {
    p->line++;
    p->col = 1;
  } else {
    p->col++;
  }
  p->i++;
}

static void skip_ws(parser *p) {
  while (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r')
    advance(p);
}

static mr_json *new_value(parser *p, mr_json_type t) {
  mr_json *v = calloc(1, sizeof *v);
  if (!v) return NULL;
  v->type = t;
  v->line = p->line;
  v->col = p->col;
  return v;
}

static mr_status parse_value(parser *p, mr_json **out, int depth);

/* a string literal at the cursor; *out is malloc'ed */
static mr_status parse_string_raw(parser *p, char **out) {
  size_t cap = 16, n = 0;
  char *buf = malloc(cap);
  if (!buf) return mr_error_set(p->err, MR_ERR_NOMEM, "%s: out of memory", p->name);
  advance(p); /* opening quote */
  for (;;) {
    unsigned char ch = (unsigned char)p->s[p->i];
    if (ch == '\0' || ch == '\n') {
      free(buf);
      return fail(p, "unterminated string");
    }
    if (ch == '"') {
      advance(p);
      break;
    }
    if (ch == '\\') {
      advance(p);
      char e = p->s[p->i];
      const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
      const char *k = e ? strchr(from, e) : NULL;
      if (k) {
        ch = (unsigned char)to[k - from];
      } else if (e == 'u') {
        unsigned code = 0;
        for (int d = 0; d < 4; ++d) {
          advance(p);
          char h = p->s[p->i];
          if (!isxdigit((unsigned char)h)) {
            free(buf);
            return fail(p, "bad \\u escape in string");
          }
          code =
              code * 16 + (unsigned)(isdigit((unsigned char)h) ? h - '0' : (tolower(h) - 'a' + 10));
        }
        ch = code < 128 ? (unsigned char)code : '?';
      } else {
        free(buf);
        return fail(p, "bad escape in string");
      }
    }
    if (n + 2 > cap) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) {
        free(buf);
        return mr_error_set(p->err, MR_ERR_NOMEM, "%s: out of memory", p->name);
      }
      buf = nb;
    }
    buf[n++] = (char)ch;
    advance(p);
  }
  buf[n] = '\0';
  *out = buf;
  return MR_OK;
}

static mr_status parse_number(parser *p, mr_json *v) {
  const char *start = p->s + p->i;
  char *end = NULL;
  errno = 0;
  v->number = strtod(start, &end);
  if (end == start || (!isdigit((unsigned char)*start) && *start != '-'))
    return fail(p, "expected a value");
  if (!isfinite(v->number) || errno == ERANGE) return fail(p, "number out of range");
  while (p->s + p->i < end)
    advance(p);
  return MR_OK;
}

static mr_status parse_literal(parser *p, mr_json *v) {
  static const struct {
    const char *word;
    mr_json_type type;
    double number;
  } words[] = {{"true", MR_JSON_BOOL, 1}, {"false", MR_JSON_BOOL, 0}, {"null", MR_JSON_NULL, 0}};
  for (size_t k = 0; k < sizeof words / sizeof words[0]; ++k) {
    size_t n = strlen(words[k].word);
    if (strncmp(p->s + p->i, words[k].word, n) == 0) {
      v->type = words[k].type;
      v->number = words[k].number;
      for (size_t j = 0; j < n; ++j)
        advance(p);
      return MR_OK;
    }
  }
  if (strncasecmp(p->s + p->i, "nan", 3) == 0 || strncasecmp(p->s + p->i, "inf", 3) == 0 ||
      strncasecmp(p->s + p->i, "-inf", 4) == 0)
    return fail(p, "NaN and infinity are not valid numbers");
  return parse_number(p, v);
}

/* elements of an array or members of an object, after the opening bracket */
static mr_status parse_children(parser *p, mr_json *v, char close, int depth) {
  mr_json **tail = &v->child;
  advance(p);
  skip_ws(p);
  if (p->s[p->i] == close) {
    advance(p);
    return MR_OK;
  }
  for (;;) {
    char *key = NULL;
    skip_ws(p);
    if (close == '}') {
      if (p->s[p->i] != '"') return fail(p, "expected a member name in quotes");
      mr_status st = parse_string_raw(p, &key);
      if (st) return st;
      skip_ws(p);
      if (p->s[p->i] != ':') {
        free(key);
        return fail(p, "expected ':' after member name");
      }
      advance(p);
    }
    mr_json *child = NULL;
    mr_status st = parse_value(p, &child, depth + 1);
    if (st) {
      free(key);
      mr_json_free(child);
      return st;
    }
    child->key = key;
    *tail = child;
    tail = &child->next;
    v->count++;
    skip_ws(p);
    if (p->s[p->i] == ',') {
      advance(p);
      continue;
    }
    if (p->s[p->i] == close) {
      advance(p);
      return MR_OK;
    }
    return fail(p, close == ']' ? "expected ',' or ']'" : "expected ',' or '}'");
  }
}

static mr_status parse_value(parser *p, mr_json **out, int depth) {
  if (depth > JSON_MAX_DEPTH) return fail(p, "nesting too deep");
  skip_ws(p);
  mr_json *v = new_value(p, MR_JSON_NUMBER);
  if (!v) return mr_error_set(p->err, MR_ERR_NOMEM, "%s: out of memory", p->name);
  *out = v;
  char ch = p->s[p->i];
  if (ch == '\0') return fail(p, "unexpected end of input");
  if (ch == '{') return v->type = MR_JSON_OBJECT, parse_children(p, v, '}', depth);
  if (ch == '[') return v->type = MR_JSON_ARRAY, parse_children(p, v, ']', depth);
  if (ch == '"') return v->type = MR_JSON_STRING, parse_string_raw(p, &v->string);
  return parse_literal(p, v);
}

mr_status mr_json_parse(const char *text, const char *name, mr_json **out, mr_error *err) {
  parser p = {text, 0, 1, 1, name ? name : "<json>", err};
  *out = NULL;
  mr_json *root = NULL;
  mr_status st = parse_value(&p, &root, 0);
  if (st == MR_OK) {
    skip_ws(&p);
    if (p.s[p.i] != '\0') st = fail(&p, "unexpected text after the value");
  }
  if (st) {
    mr_json_free(root);
    return st;
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
