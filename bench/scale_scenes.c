/* The scenes of bench/scale.c (scale_scenes.h): moreau YAML (and the chain's URDF) and MuJoCo
 * MJCF written from one description of each body. */
#include "scale_scenes.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const scale_kind_name[SCALE_KINDS] = {"spheres", "stacks",  "bin",   "mixed",
                                                  "tower",   "pyramid", "chain", "robots"};

/* the chain's links: count, radius, length between joints, mass */
#define CHAIN_R 0.01
#define CHAIN_L 0.03
#define CHAIN_MASS 0.05
/* the robots' spacing (m) and PD gains (scenes/solo_stand.yaml) */
#define ROBOT_SPACING 0.8
#define ROBOT_KP 20.0
#define ROBOT_KD 0.5

int scale_fixed_size(scale_kind kind) {
  switch (kind) {
  case SCALE_MIXED:
    return 200;
  case SCALE_TOWER:
    return 10;
  case SCALE_PYRAMID:
    return 55;
  case SCALE_CHAIN:
    return 50;
  case SCALE_ROBOTS:
    return 10;
  default:
    return 0;
  }
}

void scale_put(scale_text *t, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->s ? t->s + t->n : NULL, t->s ? t->cap - t->n : 0, fmt, ap);
    va_end(ap);
    if (t->s && t->n + (size_t)k < t->cap) {
      t->n += (size_t)k;
      return;
    }
    t->cap = 2 * (t->cap + (size_t)k + 64);
    t->s = realloc(t->s, t->cap);
    if (!t->s) abort();
  }
}

static int grid_side(int n) {
  int s = (int)ceil(sqrt((double)n));
  return s < 1 ? 1 : s;
}

/* the horizontal spacing of the bin's layers */
static double bin_spacing(scale_kind kind) {
  return kind == SCALE_MIXED ? 0.2 : 0.15;
}

double scale_bin_half(scale_kind kind, int n) {
  int side = grid_side((n + 3) / 4);
  return 0.5 * bin_spacing(kind) * side + 0.1;
}

/* a deterministic number in [0, 1) for body k and channel c (splitmix64) */
static double hash01(int k, int c) {
  uint64_t z = (uint64_t)k * 0x9e3779b97f4a7c15ull + (uint64_t)c * 0xbf58476d1ce4e5b9ull + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (double)(z >> 11) * 0x1.0p-53;
}

scale_pos scale_body_pos(scale_kind kind, int n, int k) {
  if (kind == SCALE_SPHERES) {
    int side = grid_side(n);
    return (scale_pos){0.15 * (k % side), 0.15 * (k / side), 0.05};
  }
  if (kind == SCALE_STACKS) {
    int col = k / 4, level = k % 4, side = grid_side((n + 3) / 4);
    return (scale_pos){0.3 * (col % side), 0.3 * (col / side), 0.05 + 0.1 * level};
  }
  if (kind == SCALE_TOWER) return (scale_pos){0.0, 0.0, 0.05 + 0.1 * k};
  if (kind == SCALE_PYRAMID) {
    /* layer l holds (5 − l)² cubes, 0.101 m apart, centred over the layer below */
    int l = 0, first = 0;
    while (k >= first + (5 - l) * (5 - l))
      first += (5 - l) * (5 - l), ++l;
    int side = 5 - l, r = k - first;
    double off = -0.5 * 0.101 * (side - 1);
    return (scale_pos){off + 0.101 * (r % side), off + 0.101 * (r / side), 0.05 + 0.1 * l};
  }
  /* bin, mixed: layers of side × side bodies, the first 0.25 (mixed 0.3) m above the floor */
  double sp = bin_spacing(kind), h = scale_bin_half(kind, n) - 0.1;
  int side = grid_side((n + 3) / 4), layer = k / (side * side), r = k % (side * side);
  double z0 = kind == SCALE_MIXED ? 0.3 : 0.25, off = kind == SCALE_MIXED ? 0.1 : 0.05;
  return (scale_pos){-h + off + sp * (r % side), -h + off + sp * (r / side), z0 + sp * layer};
}

scale_body scale_body_at(scale_kind kind, int n, int k) {
  scale_body b = {SCALE_SHAPE_BOX, 0, 0, {0.1, 0.1, 0.1}, scale_body_pos(kind, n, k), {0, 0, 0, 1}};
  if (kind == SCALE_SPHERES) b.shape = SCALE_SHAPE_SPHERE, b.radius = 0.05;
  if (kind != SCALE_MIXED) return b;
  /* a third each: spheres, capsules, cylinders; capsules and cylinders tilted by an angle in
   * [0, π) about a horizontal axis of random direction */
  static const scale_shape shapes[3] = {SCALE_SHAPE_SPHERE, SCALE_SHAPE_CAPSULE,
                                        SCALE_SHAPE_CYLINDER};
  b.shape = shapes[k % 3];
  b.radius = b.shape == SCALE_SHAPE_CAPSULE ? 0.04 : 0.05;
  b.half = b.shape == SCALE_SHAPE_CAPSULE ? 0.06 : 0.05;
  if (b.shape != SCALE_SHAPE_SPHERE) {
    double phi = 2 * M_PI * hash01(k, 0), tilt = M_PI * hash01(k, 1), s = sin(0.5 * tilt);
    b.quat[0] = s * cos(phi), b.quat[1] = s * sin(phi), b.quat[2] = 0, b.quat[3] = cos(0.5 * tilt);
  }
  return b;
}

/* ---- moreau ---- */

/* one wall of the bin: a 1 m high box of the given horizontal size and centre */
static void wall(scale_text *t, double sx, double sy, double px, double py) {
  scale_put(t, ",\n      {type: box, size: [%g, %g, 1.0], position: [%g, %g, 0.5], friction: 0.5}",
            sx, sy, px, py);
}

static void moreau_geom(scale_text *t, const scale_body *b) {
  switch (b->shape) {
  case SCALE_SHAPE_SPHERE:
    scale_put(t, "{type: sphere, radius: %g, friction: 0.5}", b->radius);
    return;
  case SCALE_SHAPE_CAPSULE:
  case SCALE_SHAPE_CYLINDER:
    scale_put(t, "{type: %s, radius: %g, length: %g, friction: 0.5}",
              b->shape == SCALE_SHAPE_CAPSULE ? "capsule" : "cylinder", b->radius, 2 * b->half);
    return;
  default:
    scale_put(t, "{type: box, size: [%g, %g, %g], friction: 0.5}", b->box[0], b->box[1], b->box[2]);
  }
}

/* the chain as URDF: link k a capsule along x from its joint, joints alternately about y and z */
static int write_chain_urdf(const char *path, int n) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  double izz = CHAIN_MASS * (CHAIN_L * CHAIN_L / 12 + CHAIN_R * CHAIN_R / 4);
  fprintf(f, "<robot name=\"chain\">\n  <link name=\"anchor\"/>\n");
  for (int k = 0; k < n; ++k) {
    fprintf(f,
            "  <link name=\"l%d\"><inertial><origin xyz=\"%g 0 0\"/><mass value=\"%g\"/>"
            "<inertia ixx=\"%g\" iyy=\"%g\" izz=\"%g\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>"
            "<collision><origin xyz=\"%g 0 0\" rpy=\"0 1.5707963267948966 0\"/><geometry>"
            "<capsule radius=\"%g\" length=\"%g\"/></geometry></collision></link>\n",
            k, 0.5 * CHAIN_L, CHAIN_MASS, CHAIN_MASS * CHAIN_R * CHAIN_R / 2, izz, izz,
            0.5 * CHAIN_L, CHAIN_R, CHAIN_L - 2 * CHAIN_R);
    char parent[16] = "anchor";
    if (k) snprintf(parent, sizeof parent, "l%d", k - 1);
    fprintf(f,
            "  <joint name=\"j%d\" type=\"continuous\"><parent link=\"%s\"/><child "
            "link=\"l%d\"/><origin xyz=\"%g 0 0\"/><axis xyz=\"0 %d %d\"/><dynamics "
            "damping=\"0.001\"/></joint>\n",
            k, parent, k, k ? CHAIN_L : 0.0, k % 2 ? 0 : 1, k % 2);
  }
  fprintf(f, "</robot>\n");
  return fclose(f);
}

static char *moreau_chain(int n, const char *urdf_path, scale_text *t) {
  if (!urdf_path || write_chain_urdf(urdf_path, n)) return NULL;
  scale_put(t,
            "robots:\n  - {name: chain, urdf: %s, floating: false, position: [0, 0, 1.0], "
            "self_collision: true, friction: 0.5}\n",
            urdf_path);
  return t->s;
}

static char *moreau_robots(int n, scale_text *t) {
  scale_put(t, "robots:\n");
  for (int r = 0; r < n; ++r)
    scale_put(t,
              "  - {name: r%d, urdf: robots/solo12/solo12.urdf, floating: true, posture: "
              "standing, position: [%g, 0, 0.235], friction: 0.9, pd: {kp: %g, kd: %g}}\n",
              r, ROBOT_SPACING * r, ROBOT_KP, ROBOT_KD);
  return t->s;
}

char *scale_moreau_scene(scale_kind kind, int n, const char *urdf_path) {
  scale_text t = {0};
  scale_put(&t, "timestep: 0.001\nduration: 10\ncontact: {margin: 0.0");
  double mu = kind == SCALE_ROBOTS ? 0.9 : 0.5;
  scale_put(&t,
            "}\nbodies:\n  - {name: ground, fixed: true, geoms: [{type: halfspace, friction: "
            "%g}",
            mu);
  if (kind == SCALE_BIN || kind == SCALE_MIXED) {
    double h = scale_bin_half(kind, n), w = 2 * h + 0.2;
    wall(&t, 0.1, w, h + 0.05, 0.0);
    wall(&t, 0.1, w, -h - 0.05, 0.0);
    wall(&t, w, 0.1, 0.0, h + 0.05);
    wall(&t, w, 0.1, 0.0, -h - 0.05);
  }
  scale_put(&t, "]}\n");
  if (kind == SCALE_CHAIN) {
    if (moreau_chain(n, urdf_path, &t)) return t.s;
    free(t.s);
    return NULL;
  }
  if (kind == SCALE_ROBOTS) return moreau_robots(n, &t);
  for (int k = 0; k < n; ++k) {
    scale_body b = scale_body_at(kind, n, k);
    scale_put(&t, "  - {name: b%d, mass: 1, position: [%.6f, %.6f, %.6f], ", k, b.p.x, b.p.y,
              b.p.z);
    if (b.quat[3] != 1)
      scale_put(&t, "orientation: [%.17g, %.17g, %.17g, %.17g], ", b.quat[0], b.quat[1], b.quat[2],
                b.quat[3]);
    scale_put(&t, "geoms: [");
    moreau_geom(&t, &b);
    scale_put(&t, "]}\n");
  }
  return t.s;
}

/* ---- MuJoCo ---- */

static void mujoco_geom(scale_text *t, const scale_body *b) {
  static const char *const names[4] = {"sphere", "box", "capsule", "cylinder"};
  scale_put(t, "<geom type=\"%s\" size=\"", names[b->shape]);
  if (b->shape == SCALE_SHAPE_SPHERE)
    scale_put(t, "%g", b->radius);
  else if (b->shape == SCALE_SHAPE_BOX)
    scale_put(t, "%g %g %g", 0.5 * b->box[0], 0.5 * b->box[1], 0.5 * b->box[2]);
  else
    scale_put(t, "%g %g", b->radius, b->half);
  scale_put(t, "\" mass=\"1\"/>");
}

/* the chain: nested bodies, the first joint at the anchor */
static void mujoco_chain(scale_text *t, int n) {
  double izz = CHAIN_MASS * (CHAIN_L * CHAIN_L / 12 + CHAIN_R * CHAIN_R / 4);
  scale_put(t, "<body name=\"anchor\" pos=\"0 0 1\">\n");
  for (int k = 0; k < n; ++k)
    scale_put(t,
              "<body name=\"chain/l%d\" pos=\"%g 0 0\"><inertial pos=\"%g 0 0\" mass=\"%g\" "
              "diaginertia=\"%g %g %g\"/><joint name=\"chain/j%d\" type=\"hinge\" axis=\"0 %d "
              "%d\" damping=\"0.001\"/><geom type=\"capsule\" size=\"%g\" fromto=\"%g 0 0 %g 0 "
              "0\"/>\n",
              k, k ? CHAIN_L : 0.0, 0.5 * CHAIN_L, CHAIN_MASS, CHAIN_MASS * CHAIN_R * CHAIN_R / 2,
              izz, izz, k, k % 2 ? 0 : 1, k % 2, CHAIN_R, CHAIN_R, CHAIN_L - CHAIN_R);
  for (int k = 0; k <= n; ++k)
    scale_put(t, "</body>");
  scale_put(t, "\n");
}

/* the text of solo_xml's base body with every name="X" turned to name="rK/X" */
static int mujoco_robot(scale_text *t, const char *solo_xml, int k) {
  const char *a = solo_xml ? strstr(solo_xml, "<body name=\"base_link\"") : NULL;
  const char *e = solo_xml ? strstr(solo_xml, "</worldbody>") : NULL;
  if (!a || !e) return -1;
  /* the base body ends at the last </body> before </worldbody> */
  const char *end = NULL;
  for (const char *p = a; (p = strstr(p, "</body>")) && p < e; p += 7)
    end = p + 7;
  if (!end) return -1;
  for (const char *p = a; p < end;) {
    const char *q = strstr(p, "name=\"");
    const char *body = strstr(p, "<body name=\"base_link\"");
    if (!q || q >= end) q = end;
    scale_put(t, "%.*s", (int)(q - p), p);
    if (q == end) break;
    if (body == q - 6) {
      /* the base: placed beside the others */
      scale_put(t, "name=\"r%d/base_link\" pos=\"%g 0 0.235\"", k, ROBOT_SPACING * k);
      p = q + strlen("name=\"base_link\"");
    } else {
      scale_put(t, "name=\"r%d/", k);
      p = q + 6;
    }
  }
  scale_put(t, "\n");
  return 0;
}

/* position actuators with kp on every joint of every robot, kd added to the joint damping */
static void mujoco_robot_actuators(scale_text *t, int n) {
  static const char *const legs[4] = {"FL", "FR", "HL", "HR"}, *const j[3] = {"HAA", "HFE", "KFE"};
  scale_put(t, "<actuator>\n");
  for (int r = 0; r < n; ++r)
    for (int l = 0; l < 4; ++l)
      for (int q = 0; q < 3; ++q)
        scale_put(t,
                  "<position joint=\"r%d/%s_%s\" kp=\"%g\" ctrllimited=\"false\" "
                  "forcelimited=\"false\"/>\n",
                  r, legs[l], j[q], ROBOT_KP);
  scale_put(t, "</actuator>\n");
}

char *scale_mujoco_scene(scale_kind kind, int n, const char *solo_xml) {
  scale_text t = {0};
  /* contact capacity: up to 8 per body with room for the walls (the pyramid's cubes rest on 4
   * cubes each, 16 contacts; a robot's bodies touch the ground and each other); three constraint
   * rows per elliptic contact */
  int ncon = kind == SCALE_SPHERES ? n + 10 : 8 * n + 50;
  if (kind == SCALE_ROBOTS || kind == SCALE_PYRAMID) ncon = 20 * n;
  scale_put(&t,
            "<mujoco><compiler angle=\"radian\" inertiafromgeom=\"auto\" balanceinertia=\"true\"/>"
            "<option timestep=\"0.001\" cone=\"elliptic\" solver=\"Newton\" integrator=\"Euler\" "
            "jacobian=\"sparse\" iterations=\"100\" tolerance=\"1e-8\"/>\n"
            "<size nconmax=\"%d\" njmax=\"%d\"/>\n",
            ncon, 3 * ncon + 100);
  double mu = kind == SCALE_ROBOTS ? 0.9 : 0.5;
  scale_put(&t, "<default><geom friction=\"%g 0 0\" condim=\"3\"/></default><worldbody>\n", mu);
  scale_put(&t, "<geom type=\"plane\" size=\"0 0 1\"/>\n");
  if (kind == SCALE_BIN || kind == SCALE_MIXED) {
    double h = scale_bin_half(kind, n), w = h + 0.1;
    scale_put(&t, "<geom type=\"box\" size=\"0.05 %g 0.5\" pos=\"%g 0 0.5\"/>\n", w, h + 0.05);
    scale_put(&t, "<geom type=\"box\" size=\"0.05 %g 0.5\" pos=\"%g 0 0.5\"/>\n", w, -h - 0.05);
    scale_put(&t, "<geom type=\"box\" size=\"%g 0.05 0.5\" pos=\"0 %g 0.5\"/>\n", w, h + 0.05);
    scale_put(&t, "<geom type=\"box\" size=\"%g 0.05 0.5\" pos=\"0 %g 0.5\"/>\n", w, -h - 0.05);
  }
  if (kind == SCALE_CHAIN) mujoco_chain(&t, n);
  for (int k = 0; kind == SCALE_ROBOTS && k < n; ++k)
    if (mujoco_robot(&t, solo_xml, k)) {
      free(t.s);
      return NULL;
    }
  for (int k = 0; kind != SCALE_CHAIN && kind != SCALE_ROBOTS && k < n; ++k) {
    scale_body b = scale_body_at(kind, n, k);
    /* MuJoCo quaternions are w x y z */
    scale_put(&t, "<body pos=\"%.6f %.6f %.6f\" quat=\"%.17g %.17g %.17g %.17g\"><freejoint/>",
              b.p.x, b.p.y, b.p.z, b.quat[3], b.quat[0], b.quat[1], b.quat[2]);
    mujoco_geom(&t, &b);
    scale_put(&t, "</body>\n");
  }
  scale_put(&t, "</worldbody>\n");
  if (kind == SCALE_ROBOTS) mujoco_robot_actuators(&t, n);
  scale_put(&t, "</mujoco>\n");
  return t.s;
}
