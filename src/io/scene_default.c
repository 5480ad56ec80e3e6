/* The default scene of a bare URDF (docs/scene-format.md, "A URDF as a scene"): a ground
 * halfspace at z = 0, the robot on a floating base unless its root link is the world, in the
 * first posture (group_state) of its SRDF when one is found where a scene would look for it, no
 * controller, the default solver, time step and duration. The scene is written as YAML and read
 * by the scene loader, so that it is exactly the scene a user would write; a floating robot is
 * then raised or lowered so that its lowest collision point touches the ground. mr_scene's
 * default_scene says all of this in one line. */
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/scene_internal.h"
#include "moreau/collision.h"
#include "moreau/dynamics.h"
#include "moreau/urdf.h"

/* what the default scene needs to know of the robot: a scene name (the URDF's robot name, with
 * what a scene name may not hold replaced by '_') and whether its root is free; read without
 * meshes and with the repairs, so that a file a scene must repair still says what it is */
static void robot_facts(const char *path, char *name, size_t len, int *floating) {
  mr_urdf_options o = mr_urdf_options_default();
  o.floating = 1, o.collision = 0, o.inertia_fix = 1, o.lock_massless = 1;
  mr_model *m = NULL;
  mr_error e;
  *floating = 1;
  snprintf(name, len, "robot");
  if (mr_urdf_load(path, &o, &m, &e)) return;
  *floating = mr_model_joint_index(m, "root_joint") > 0;
  if (m->name[0] && strcmp(m->name, "ground")) snprintf(name, len, "%.40s", m->name);
  for (char *c = name; *c; ++c)
    if (*c == '/' || *c == '"' || *c == '\\' || (unsigned char)*c < 0x20) *c = '_';
  mr_model_free(m);
}

/* the first group_state of the URDF's default SRDF into posture ("" when there is none) */
static void first_posture(const char *urdf, char *srdf, char *posture, size_t len) {
  posture[0] = '\0';
  if (scene_default_srdf(urdf, srdf, MR_SCENE_PATH_MAX)) return;
  xmlDoc *doc = xmlReadFile(srdf, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
  xmlNode *root = doc ? xmlDocGetRootElement(doc) : NULL;
  for (xmlNode *g = root ? root->children : NULL; g && !posture[0]; g = g->next) {
    if (g->type != XML_ELEMENT_NODE || strcmp((const char *)g->name, "group_state")) continue;
    xmlChar *n = xmlGetProp(g, (const xmlChar *)"name");
    if (n && !strpbrk((const char *)n, "\"\\\n")) snprintf(posture, len, "%s", (const char *)n);
    xmlFree(n);
  }
  if (doc) xmlFreeDoc(doc);
}

/* does geometry g belong to robot r: on one of its bodies, or on the world with its name
 * prefix (the links of a fixed base merge into the world) */
static int robot_geom(const mr_scene *s, const mr_scene_robot *r, const mr_geom *g) {
  size_t n = strlen(r->name);
  if (g->type == MR_GEOM_HALFSPACE || g->type == MR_GEOM_HEIGHTFIELD) return 0;
  if (g->body >= r->first_body && g->body < r->first_body + r->nbodies) return 1;
  return g->body == 0 && !strncmp(g->name, r->name, n) && g->name[n] == '/';
}

/* the lowest collision point of the robot at the initial configuration (support points of its
 * geometries along -z); +inf when it has no collision geometry */
static double lowest_point(const mr_scene *s, const mr_scene_robot *r) {
  mr_data *d = mr_data_create(s->model);
  if (!d) return INFINITY;
  mr_forward_kinematics(s->model, d, s->q0, NULL, NULL);
  double zmin = INFINITY;
  for (int g = 0; g < s->model->ngeoms; ++g) {
    const mr_geom *G = &s->model->geoms[g];
    if (!robot_geom(s, r, G)) continue;
    mr_se3 X = mr_se3_mul(&d->oMi[G->body], &G->placement);
    mr_vec3 down = mr_m3_tmulv(&X.R, mr_v3(0, 0, -1));
    zmin = fmin(zmin, mr_se3_act_point(&X, mr_geom_support(G, down)).v[2]);
  }
  mr_data_free(d);
  return zmin;
}

/* the robot and the ground touch: a floating robot moves so that its lowest point is at z = 0; a
 * fixed one stays where its file puts it and the ground goes down to its lowest point (UR arms
 * reach out horizontally at q = 0, below their base) */
static void place(mr_scene *s, double *ground) {
  const mr_scene_robot *r = &s->robots[0];
  const mr_joint *base = &s->model->bodies[r->first_body].joint;
  double zmin = lowest_point(s, r);
  *ground = 0.0;
  if (!isfinite(zmin)) return;
  if (base->type == MR_JOINT_FREE) {
    s->q0[base->idx_q + 2] -= zmin;
    return;
  }
  for (int g = 0; g < s->model->ngeoms && zmin < 0.0; ++g)
    if (!strcmp(s->model->geoms[g].name, "ground/0"))
      s->model->geoms[g].placement.p.v[2] = *ground = zmin;
}

/* a YAML double-quoted string of s (no line breaks in paths and names) */
static void yaml_quoted(char *out, size_t len, const char *s) {
  size_t k = 0;
  if (len < 3) return;
  out[k++] = '"';
  for (; *s && k + 3 < len; ++s) {
    if (*s == '"' || *s == '\\') out[k++] = '\\';
    out[k++] = *s;
  }
  out[k++] = '"', out[k] = '\0';
}

/* the YAML text of the default scene (malloc'ed) */
static char *scene_text(const char *urdf_base, const char *name, int floating,
                        const char *posture) {
  char qurdf[2 * MR_SCENE_PATH_MAX + 3], qname[2 * MR_NAME_MAX + 3], qposture[2 * MR_NAME_MAX + 3];
  yaml_quoted(qurdf, sizeof qurdf, urdf_base);
  yaml_quoted(qname, sizeof qname, name);
  yaml_quoted(qposture, sizeof qposture, posture);
  size_t len = strlen(qurdf) + strlen(qname) + strlen(qposture) + 256;
  char *text = malloc(len);
  if (text)
    snprintf(text, len,
             "bodies:\n  - {name: ground, fixed: true, geoms: [{type: halfspace}]}\n"
             "robots:\n  - name: %s\n    urdf: %s\n    floating: %s\n%s%s%s",
             qname, qurdf, floating ? "true" : "false", posture[0] ? "    posture: " : "",
             posture[0] ? qposture : "", posture[0] ? "\n" : "");
  return text;
}

/* the one line saying what the scene holds */
static void describe(mr_scene *s, const char *path, int floating, const char *posture,
                     const char *srdf, double ground) {
  char where[160], line[1024];
  if (posture[0])
    snprintf(where, sizeof where, "posture '%.40s' of %.100s", posture,
             strrchr(srdf, '/') ? strrchr(srdf, '/') + 1 : srdf);
  else
    snprintf(where, sizeof where, "the neutral posture");
  snprintf(line, sizeof line,
           "%.160s is a URDF robot, loaded in a default scene: a ground plane at z = %.4g m, "
           "the robot %s, %s, no controller, solver %.32s, %g s at %g s steps (a scene file "
           "changes any of it: docs/scene-format.md)",
           strrchr(path, '/') ? strrchr(path, '/') + 1 : path, ground,
           floating ? "on a floating base, its lowest point on the ground"
                    : "fixed to the world (its root link is 'world'), the ground at or below its "
                      "lowest point",
           where, s->solver, s->duration, s->timestep);
  /* a line longer than the field is cut (its start says what matters) */
  memcpy(s->default_scene, line, sizeof s->default_scene - 1);
  s->default_scene[sizeof s->default_scene - 1] = '\0';
}

/* a failure of the default scene: the URDF's message, without the position in the generated
 * scene, and where the scene keys it may name go */
static mr_status scene_failure(mr_error *err) {
  if (!err) return MR_ERR_INVALID;
  const char *inner = strstr(err->msg, "'urdf': ");
  char msg[MR_ERROR_MSG_MAX];
  snprintf(msg, sizeof msg, "%s", inner ? inner + 8 : err->msg);
  return mr_error_set(err, err->status, "%s (a bare URDF: such keys go in a scene file naming it)",
                      msg);
}

mr_status scene_default_for_urdf(const char *path, const char *dir, mr_scene *s, mr_error *err) {
  char name[MR_NAME_MAX], posture[MR_NAME_MAX], srdf[MR_SCENE_PATH_MAX] = "";
  int floating;
  robot_facts(path, name, sizeof name, &floating);
  first_posture(path, srdf, posture, sizeof posture);
  const char *file = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  char *text = scene_text(file, name, floating, posture);
  if (!text) return mr_error_set(err, MR_ERR_NOMEM, "%s: out of memory", path);
  char label[MR_SCENE_PATH_MAX + 32];
  snprintf(label, sizeof label, "%s (default scene)", path);
  mr_status st = mr_scene_parse(text, label, dir, s, err);
  free(text);
  if (st) return scene_failure(err);
  snprintf(s->path, sizeof s->path, "%s", path);
  double ground;
  place(s, &ground);
  describe(s, path, floating, posture, srdf, ground);
  return MR_OK;
}
