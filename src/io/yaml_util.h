/* A small typed access layer over libyaml's document API, for loaders whose error messages must
 * name file:line:column, the key and the offending value. */
#ifndef MOREAU_IO_YAML_UTIL_H
#define MOREAU_IO_YAML_UTIL_H

#include <yaml.h>

#include "moreau/error.h"

typedef struct {
  yaml_document_t doc;
  int loaded;       /* doc holds a document that must be deleted */
  const char *name; /* file name used in messages */
  mr_error *err;
} mr_ydoc;

typedef yaml_node_t mr_ynode;

/* Parse text into d (one document; an empty text gives an empty mapping root). */
mr_status mr_yaml_parse(mr_ydoc *d, const char *text, size_t len, const char *name, mr_error *err);
void mr_yaml_free(mr_ydoc *d);
mr_ynode *mr_yaml_root(mr_ydoc *d);

/* Set d->err to "name:line:col: message" at node n (n may be NULL: no position). */
mr_status mr_yaml_error(mr_ydoc *d, const mr_ynode *n, mr_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

int mr_yaml_is_map(const mr_ynode *n);
int mr_yaml_is_seq(const mr_ynode *n);
int mr_yaml_is_scalar(const mr_ynode *n);
/* the scalar's text ("" for non-scalars) */
const char *mr_yaml_text(const mr_ynode *n);
/* a short description of a node for messages: the scalar in quotes, "a list", "a mapping" */
const char *mr_yaml_describe(const mr_ynode *n, char *buf, size_t len);

/* mapping access: the value of key (NULL if absent) */
mr_ynode *mr_yaml_get(mr_ydoc *d, const mr_ynode *map, const char *key);
int mr_yaml_map_size(const mr_ynode *map);
/* the i-th pair of a mapping */
mr_ynode *mr_yaml_map_key(mr_ydoc *d, const mr_ynode *map, int i);
mr_ynode *mr_yaml_map_value(mr_ydoc *d, const mr_ynode *map, int i);
/* sequence access */
int mr_yaml_seq_size(const mr_ynode *seq);
mr_ynode *mr_yaml_seq_at(mr_ydoc *d, const mr_ynode *seq, int i);

/* Check that n is a mapping whose keys are all in allowed (NULL-terminated) and none repeats;
 * on an unknown key, suggest the nearest allowed key. what names the mapping ("body 'cube'"). */
mr_status mr_yaml_check_map(mr_ydoc *d, const mr_ynode *n, const char *const *allowed,
                            const char *what);
/* Require n to be a mapping / a sequence; key names it in the message. */
mr_status mr_yaml_need_map(mr_ydoc *d, const mr_ynode *n, const char *key);
mr_status mr_yaml_need_seq(mr_ydoc *d, const mr_ynode *n, const char *key);

/* typed scalars; key names the value in messages */
mr_status mr_yaml_double(mr_ydoc *d, const mr_ynode *n, const char *key, double *out);
mr_status mr_yaml_int(mr_ydoc *d, const mr_ynode *n, const char *key, int *out);
mr_status mr_yaml_bool(mr_ydoc *d, const mr_ynode *n, const char *key, int *out);
mr_status mr_yaml_string(mr_ydoc *d, const mr_ynode *n, const char *key, const char **out);
/* a list of exactly n numbers */
mr_status mr_yaml_vec(mr_ydoc *d, const mr_ynode *n, const char *key, double *out, int len);

/* optional members of a mapping: leave *out unchanged when the key is absent */
mr_status mr_yaml_opt_double(mr_ydoc *d, const mr_ynode *map, const char *key, double *out);
mr_status mr_yaml_opt_int(mr_ydoc *d, const mr_ynode *map, const char *key, int *out);
mr_status mr_yaml_opt_bool(mr_ydoc *d, const mr_ynode *map, const char *key, int *out);
mr_status mr_yaml_opt_vec(mr_ydoc *d, const mr_ynode *map, const char *key, double *out, int len);
mr_status mr_yaml_opt_string(mr_ydoc *d, const mr_ynode *map, const char *key, const char **out);

/* the allowed string nearest to s by edit distance, or NULL when none is close */
const char *mr_yaml_nearest(const char *s, const char *const *allowed);

#endif
