/* JSON reading (jansson underneath: values with the line/column where each starts, for error
 * messages that name the place) and small writer helpers. Used for standalone contact problems,
 * QPCC problems and summaries; never inside a step. */
#ifndef MOREAU_CORE_JSON_H
#define MOREAU_CORE_JSON_H

#include <stdio.h>

#include "moreau/error.h"

typedef enum {
  MR_JSON_NULL,
  MR_JSON_BOOL,
  MR_JSON_NUMBER,
  MR_JSON_STRING,
  MR_JSON_ARRAY,
  MR_JSON_OBJECT
} mr_json_type;

typedef struct mr_json {
  mr_json_type type;
  int line, col;         /* where the value starts (1-based) */
  double number;         /* NUMBER; BOOL as 0/1 */
  char *string;          /* STRING */
  char *key;             /* the member name when the value belongs to an object */
  int count;             /* ARRAY/OBJECT: number of children */
  struct mr_json *child; /* ARRAY/OBJECT: first child */
  struct mr_json *next;  /* next sibling */
} mr_json;

/* Parse text; name is used in messages ("name:line:col: ..."). Any JSON value may be the top
 * level; integers are read as doubles; a duplicate key, a NaN or infinity, a number beyond the
 * double range and nesting deeper than 64 levels are errors (MR_ERR_PARSE). *out is freed with
 * mr_json_free. */
mr_status mr_json_parse(const char *text, const char *name, mr_json **out, mr_error *err);
/* Read and parse a file. */
mr_status mr_json_load(const char *path, mr_json **out, mr_error *err);
void mr_json_free(mr_json *v);

/* the member of an object, or NULL */
const mr_json *mr_json_get(const mr_json *obj, const char *key);
/* the i-th element of an array, or NULL */
const mr_json *mr_json_at(const mr_json *arr, int i);
const char *mr_json_type_name(mr_json_type t);

/* Read an array of exactly n finite numbers into out; what names the field in messages. */
mr_status mr_json_read_vector(const mr_json *v, const char *name, const char *what, double *out,
                              int n, mr_error *err);
/* Read an array of rows (rows x cols numbers) into a row-major out. */
mr_status mr_json_read_matrix(const mr_json *v, const char *name, const char *what, double *out,
                              int rows, int cols, mr_error *err);

/* Writers: numbers with 17 significant digits (round-trip exact); NaN/Inf as null. */
void mr_json_write_number(FILE *f, double x);
void mr_json_write_vector(FILE *f, const double *x, int n);
void mr_json_write_matrix(FILE *f, const double *A, int rows, int cols);
void mr_json_write_string(FILE *f, const char *s);

#endif
