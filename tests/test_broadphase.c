/* Tests of the broadphases: the dynamic AABB tree (src/collision/bvh.c) against brute force and
 * sweep and prune on random scenes over many moving frames (jitter, teleports, growth), with every
 * filter (group/mask, include/exclude, same body, parent/child); the fixed (first, second) order
 * of the candidate pairs; determinism; the tree's invariants; capacity handling. Brute force
 * tests every pair's AABBs directly, so it is the independent reference: the pair lists and the
 * contacts must be identical (same pairs, same order, bitwise equal contacts), no tolerance. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "collision/bvh.h"
#include "moreau/collision.h"
#include "test_util.h"

enum { NB = 3 }; /* brute, SAP, tree */
static const mr_broadphase_kind kinds[NB] = {MR_BROADPHASE_BRUTE, MR_BROADPHASE_SAP,
                                             MR_BROADPHASE_TREE};

static mr_se3 random_pose(uint64_t *s, double span) {
  mr_mat3 R = mr_m3_rpy(test_rand(s, -3, 3), test_rand(s, -1.5, 1.5), test_rand(s, -3, 3));
  return mr_se3_make(
      R, mr_v3(test_rand(s, -span, span), test_rand(s, -span, span), test_rand(s, 0, span)));
}

/* n geometries on chains of bodies (parent/child pairs), some bodies with two geometries, random
 * groups and masks, and a ground plane; geometry placements in Xg */
static mr_model *scene(int n, uint64_t *s, mr_se3 *Xg, double span) {
  mr_model *m = mr_model_create("scene");
  mr_error err;
  mr_inertia I = {1.0, mr_v3_zero(), mr_m3_diag(0.01, 0.01, 0.01)};
  mr_geom ground = mr_geom_default(MR_GEOM_HALFSPACE, 0);
  assert_true(mr_model_add_geom(m, &ground, &err) >= 0);
  Xg[0] = mr_se3_identity();
  int body = 0;
  for (int i = 1; i < n; ++i) {
    /* a new body every geometry but every fifth; chains of four bodies */
    if (i % 5 != 0 || body == 0) {
      int parent = body % 4 == 0 ? 0 : body;
      body = mr_model_add_body(m, parent, "j", MR_JOINT_REVOLUTE, mr_se3_identity(), mr_v3(0, 0, 1),
                               "b", I, &err);
      assert_true(body > 0);
    }
    mr_geom_type t = i % 4 == 0   ? MR_GEOM_SPHERE
                     : i % 4 == 1 ? MR_GEOM_BOX
                     : i % 4 == 2 ? MR_GEOM_CAPSULE
                                  : MR_GEOM_CYLINDER;
    mr_geom g = mr_geom_default(t, body);
    for (int k = 0; k < 3; ++k)
      g.size[k] = test_rand(s, 0.05, 0.2);
    /* three group bits; most masks see everything */
    g.group = 1u << (test_rand_u64(s) % 3);
    g.mask = test_rand_u64(s) % 4 == 0 ? ~g.group : ~0u;
    assert_true(mr_model_add_geom(m, &g, &err) >= 0);
    Xg[i] = random_pose(s, span);
  }
  return m;
}

/* contexts for the three broadphases with the same settings */
static void create_all(const mr_model *m, mr_collision_settings cs, int max_contacts,
                       mr_collision **c) {
  mr_error err;
  for (int b = 0; b < NB; ++b) {
    cs.broadphase = kinds[b];
    c[b] = mr_collision_create(m, &cs, max_contacts, &err);
    assert_non_null(c[b]);
  }
}

/* identical pair lists and contacts (bitwise) between two contexts */
static void assert_same(const mr_collision *a, const mr_collision *b) {
  const mr_geom_pair *pa, *pb;
  int na = mr_collision_pairs(a, &pa), nb = mr_collision_pairs(b, &pb);
  assert_int_equal(na, nb);
  assert_int_equal(mr_collision_get_stats(a).npairs, mr_collision_get_stats(b).npairs);
  for (int i = 0; i < na; ++i) {
    assert_int_equal(pa[i].a, pb[i].a);
    assert_int_equal(pa[i].b, pb[i].b);
  }
  int nc = mr_collision_ncontacts(a);
  assert_int_equal(nc, mr_collision_ncontacts(b));
  const mr_contact *ca = mr_collision_contacts(a), *cb = mr_collision_contacts(b);
  for (int i = 0; i < nc; ++i) {
    assert_true(ca[i].key == cb[i].key);
    assert_true(memcmp(&ca[i].phi, &cb[i].phi, sizeof(double)) == 0);
    assert_true(memcmp(&ca[i].point, &cb[i].point, sizeof ca[i].point) == 0);
  }
}

/* the bounded pairs come first, strictly increasing in (first, second) */
static void assert_sorted(const mr_collision *c, int nground) {
  const mr_geom_pair *p;
  int n = mr_collision_pairs(c, &p), nb = 0;
  while (nb < n && p[nb].b >= nground)
    nb++;
  for (int i = 1; i < nb; ++i)
    assert_true(p[i - 1].a < p[i].a || (p[i - 1].a == p[i].a && p[i - 1].b < p[i].b));
}

/* one frame of motion: jitter everything, teleport a few, grow or shrink a few */
static void move(mr_model *m, mr_se3 *Xg, int n, uint64_t *s, double span, int frame) {
  for (int i = 1; i < n; ++i) {
    for (int k = 0; k < 3; ++k)
      Xg[i].p.v[k] += test_rand(s, -0.03, 0.03);
    uint64_t r = test_rand_u64(s) % 50;
    if (r == 0) Xg[i] = random_pose(s, span);
    if (r == 1) m->geoms[i].size[0] *= frame % 2 ? 2.5 : 0.4;
  }
}

/* the tree's pairs and contacts equal brute force's and SAP's over 60 frames */
static void test_tree_equals_brute(void **state) {
  uint64_t s = 23;
  enum { n = 400 };
  static mr_se3 Xg[n];
  mr_model *m = scene(n, &s, Xg, 2.0);
  mr_collision_settings cs = mr_collision_settings_default();
  /* include pairs on one body and parent/child, exclude some overlapping ones */
  mr_geom_pair inc[] = {{4, 5}, {1, 2}, {7, 8}, {30, 31}}, exc[] = {{10, 11}, {3, 12}};
  cs.include = inc, cs.ninclude = 4, cs.exclude = exc, cs.nexclude = 2;
  mr_collision *c[NB];
  create_all(m, cs, 40000, c);
  long total = 0;
  mr_error err;
  for (int frame = 0; frame < 60; ++frame) {
    move(m, Xg, n, &s, 2.0, frame);
    /* frame 30: everything teleports at once; frame 40: the scene stretches along y */
    if (frame == 30)
      for (int i = 1; i < n; ++i)
        Xg[i] = random_pose(&s, 2.0);
    if (frame == 40)
      for (int i = 1; i < n; ++i)
        Xg[i].p.v[1] *= 5;
    for (int b = 0; b < NB; ++b)
      assert_int_equal(mr_collision_detect_geoms(c[b], Xg, &err), MR_OK);
    assert_same(c[0], c[1]);
    assert_same(c[0], c[2]);
    assert_sorted(c[2], 1);
    total += mr_collision_get_stats(c[0]).npairs;
  }
  /* the scene is dense enough to exercise the comparison: ~100+ pairs a frame */
  assert_true(total > 60 * 50);
  for (int b = 0; b < NB; ++b)
    mr_collision_free(c[b]);
  mr_model_free(m);
}

/* the same sequence gives the same pairs in the same order, and a fresh tree at any frame gives
 * the pairs of the one carrying the history */
static void test_determinism(void **state) {
  enum { n = 200 };
  static mr_se3 X1[n], X2[n];
  uint64_t s1 = 5, s2 = 5;
  mr_model *m1 = scene(n, &s1, X1, 1.5), *m2 = scene(n, &s2, X2, 1.5);
  mr_collision_settings cs = mr_collision_settings_default();
  cs.broadphase = MR_BROADPHASE_TREE;
  mr_error err;
  mr_collision *a = mr_collision_create(m1, &cs, 20000, &err);
  mr_collision *b = mr_collision_create(m2, &cs, 20000, &err);
  assert_non_null(a);
  assert_non_null(b);
  for (int frame = 0; frame < 30; ++frame) {
    move(m1, X1, n, &s1, 1.5, frame);
    move(m2, X2, n, &s2, 1.5, frame);
    assert_int_equal(mr_collision_detect_geoms(a, X1, &err), MR_OK);
    assert_int_equal(mr_collision_detect_geoms(b, X2, &err), MR_OK);
    assert_same(a, b);
    if (frame % 10 == 9) {
      mr_collision *fresh = mr_collision_create(m1, &cs, 20000, &err);
      assert_int_equal(mr_collision_detect_geoms(fresh, X1, &err), MR_OK);
      assert_same(a, fresh);
      mr_collision_free(fresh);
    }
  }
  mr_collision_free(a);
  mr_collision_free(b);
  mr_model_free(m1);
  mr_model_free(m2);
}

/* tight boxes of n random items */
static void random_box(uint64_t *s, double span, double size, double *lo, double *hi) {
  for (int k = 0; k < 3; ++k) {
    double c = test_rand(s, -span, span), e = test_rand(s, 0.1, 1.0) * size;
    lo[k] = c - e, hi[k] = c + e;
  }
}

static int box_overlap(const double *alo, const double *ahi, const double *blo, const double *bhi) {
  for (int k = 0; k < 3; ++k)
    if (alo[k] > bhi[k] || blo[k] > ahi[k]) return 0;
  return 1;
}

/* the tree's invariants (links, containment, heights, skew ≤ 2) hold through insertions, moves,
 * teleports and growth; every query returns a superset of the truly overlapping items */
static void test_tree_invariants(void **state) {
  enum { n = 300 };
  static double lo[n][3], hi[n][3];
  static int out[n];
  uint64_t s = 11;
  bvh_tree *t = bvh_create(n, n);
  assert_non_null(t);
  assert_int_equal(bvh_get_stats(t).height, -1);
  for (int i = 0; i < n; ++i) {
    random_box(&s, 5, 0.3, lo[i], hi[i]);
    bvh_update(t, i, lo[i], hi[i]);
    assert_int_equal(bvh_validate(t), 0);
  }
  for (int frame = 0; frame < 40; ++frame) {
    for (int i = 0; i < n; ++i) {
      uint64_t r = test_rand_u64(&s) % 20;
      double d = r == 0 ? 0 : test_rand(&s, -0.05, 0.05);
      if (r == 0) random_box(&s, 5, r == 0 && frame % 2 ? 1.0 : 0.3, lo[i], hi[i]);
      for (int k = 0; k < 3; ++k)
        lo[i][k] += d, hi[i][k] += d;
      bvh_update(t, i, lo[i], hi[i]);
    }
    assert_int_equal(bvh_validate(t), 0);
    /* every other frame a top-down rebuild when enough leaves were reinserted */
    if (frame % 2) bvh_refresh(t);
    assert_int_equal(bvh_validate(t), 0);
    bvh_stats st = bvh_get_stats(t);
    assert_int_equal(st.nleaves, n);
    /* children's heights differ by at most 2: the fewest leaves under height h obey
     * N(h) = N(h-1) + N(h-3), N(h) ~ 1.4656^h, so h <= log2(n) / log2(1.4656) = 1.81 log2(n) */
    assert_true(st.height <= 1.81 * log2((double)n));
    for (int i = 0; i < n; i += 7) {
      static char hit[n];
      memset(hit, 0, sizeof hit);
      int nh = bvh_query(t, lo[i], hi[i], out);
      for (int h = 0; h < nh; ++h) {
        assert_false(hit[out[h]]); /* each item once */
        hit[out[h]] = 1;
      }
      for (int j = 0; j < n; ++j)
        if (box_overlap(lo[i], hi[i], lo[j], hi[j])) assert_true(hit[j]);
    }
  }
  /* small motions are absorbed by the fat boxes: fewer reinsertions than updates */
  assert_true(bvh_get_stats(t).reinserts < 40L * n);
  bvh_free(t);
  /* boxes inserted in order along a line (the worst case of incremental insertion), then each
   * removed and reinserted at the far end: balance holds without any rebuild */
  t = bvh_create(n, n);
  for (int i = 0; i < n; ++i) {
    double l[3] = {i, 0, 0}, h[3] = {i + 0.5, 0.5, 0.5};
    bvh_update(t, i, l, h);
  }
  for (int i = 0; i < n; ++i) {
    double l[3] = {n + i, 0, 0}, h[3] = {n + i + 0.5, 0.5, 0.5};
    bvh_update(t, i, l, h);
  }
  assert_int_equal(bvh_validate(t), 0);
  assert_true(bvh_get_stats(t).height <= 1.81 * log2((double)n));
  bvh_free(t);
}

/* more pairs than the pair buffer (every geometry overlaps every other): the sweep processes
 * its pairs in chunks and all three broadphases still agree; a contact overflow is reported
 * identically; more items than the tree's capacity are refused; unknown kinds rejected */
static void test_capacity(void **state) {
  enum { n = 120 };
  static mr_se3 Xg[n];
  uint64_t s = 3;
  mr_model *m = scene(n, &s, Xg, 0.02);
  for (int i = 1; i < n; ++i)
    m->geoms[i].mask = m->geoms[i].group = 1;
  mr_collision_settings cs = mr_collision_settings_default();
  cs.skip_parent_child = 0;
  mr_collision *c[NB];
  create_all(m, cs, 100, c);
  mr_error err;
  for (int frame = 0; frame < 3; ++frame) {
    move(m, Xg, n, &s, 0.02, frame);
    for (int b = 0; b < NB; ++b)
      assert_int_equal(mr_collision_detect_geoms(c[b], Xg, &err), MR_ERR_NOMEM);
    assert_same(c[0], c[1]);
    assert_same(c[0], c[2]);
    mr_collision_stats st = mr_collision_get_stats(c[1]);
    /* all pairs of bounded geometries not on one body, plus the ground pairs: more than the
     * 16 n + 1024 listed */
    const mr_geom_pair *p;
    assert_true(st.npairs > 16 * n + 1024);
    assert_int_equal(mr_collision_pairs(c[1], &p), 16 * n + 1024);
    assert_true(st.overflow > 0);
    assert_int_equal(st.ncontacts, 100);
  }
  for (int b = 0; b < NB; ++b)
    mr_collision_free(c[b]);
  cs.broadphase = (mr_broadphase_kind)7;
  assert_null(mr_collision_create(m, &cs, 10, &err));
  assert_int_equal(err.status, MR_ERR_INVALID);
  mr_model_free(m);
  /* a tree for 4 items: a fifth is refused, ids out of range ignored */
  bvh_tree *t = bvh_create(4, 10);
  double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
  for (int i = 0; i < 6; ++i)
    bvh_update(t, i, lo, hi);
  bvh_update(t, 99, lo, hi);
  bvh_update(t, -1, lo, hi);
  assert_int_equal(bvh_get_stats(t).nleaves, 4);
  assert_int_equal(bvh_validate(t), 0);
  int out[4];
  assert_int_equal(bvh_query(t, lo, hi, out), 4);
  bvh_free(t);
}

/* whether pair (i, j) is in the list of n pairs (either order) */
static int listed(const mr_geom_pair *p, int n, int i, int j) {
  for (int k = 0; k < n; ++k)
    if ((p[k].a == i && p[k].b == j) || (p[k].a == j && p[k].b == i)) return 1;
  return 0;
}

/* the filters, applied here pair by pair: an include, an exclude, one body, parent and child,
 * then the group of each against the mask of the other */
static int may_collide(const mr_model *m, const mr_geom_pair *inc, int ninc,
                       const mr_geom_pair *exc, int nexc, int i, int j) {
  if (listed(inc, ninc, i, j)) return 1;
  if (listed(exc, nexc, i, j)) return 0;
  const mr_geom *a = &m->geoms[i], *b = &m->geoms[j];
  if (a->body == b->body) return 0;
  if (a->body && b->body &&
      (m->bodies[a->body].parent == b->body || m->bodies[b->body].parent == a->body))
    return 0;
  return (a->group & b->mask) && (b->group & a->mask);
}

/* every box overlapping every other: each broadphase's pairs are exactly the pairs the filters
 * allow, as may_collide decides them, before and after a mask is changed in the model (the
 * group and mask are read on every query; the other rules are tabulated at creation) */
static void test_filters(void **state) {
  enum { n = 60 };
  static mr_se3 Xg[n];
  uint64_t s = 17;
  mr_model *m = scene(n, &s, Xg, 0.02);
  mr_collision_settings cs = mr_collision_settings_default();
  mr_geom_pair inc[] = {{4, 5}, {1, 2}, {7, 8}, {31, 30}, {58, 59}};
  mr_geom_pair exc[] = {{10, 11}, {3, 12}, {40, 20}, {1, 59}};
  cs.include = inc, cs.ninclude = 5, cs.exclude = exc, cs.nexclude = 4;
  mr_collision *c[NB];
  create_all(m, cs, 20000, c);
  mr_error err;
  for (int round = 0; round < 2; ++round) {
    if (round == 1) m->geoms[13].mask = 0, m->geoms[5].mask = 0; /* 5 keeps its include */
    for (int b = 0; b < NB; ++b) {
      assert_int_equal(mr_collision_detect_geoms(c[b], Xg, &err), MR_OK);
      const mr_geom_pair *p;
      int np = mr_collision_pairs(c[b], &p), allowed = 0;
      assert_int_equal(np, mr_collision_get_stats(c[b]).npairs);
      for (int j = 2; j < n; ++j)
        for (int i = 1; i < j; ++i) {
          int want = may_collide(m, inc, 5, exc, 4, i, j);
          assert_int_equal(listed(p, np, i, j), want);
          allowed += want;
        }
      /* the scene exercises every rule: most pairs allowed, some refused */
      assert_true(allowed > 1000 && allowed < n * (n - 1) / 2 - 100);
    }
  }
  for (int b = 0; b < NB; ++b)
    mr_collision_free(c[b]);
  mr_model_free(m);
}

/* the default (AUTO) on a scene past MR_BROADPHASE_AUTO_TREE_MIN geometries (the tree) and on a
 * small one (the sweep) gives brute force's pairs and contacts */
static void test_auto(void **state) {
  enum { n = MR_BROADPHASE_AUTO_TREE_MIN + 100 };
  static mr_se3 Xg[n];
  uint64_t s = 41;
  for (int size = 0; size < 2; ++size) {
    int ng = size ? n : 60;
    mr_model *m = scene(ng, &s, Xg, size ? 6.0 : 1.0);
    mr_collision_settings cs = mr_collision_settings_default();
    assert_int_equal(cs.broadphase, MR_BROADPHASE_AUTO);
    mr_error err;
    mr_collision *a = mr_collision_create(m, &cs, 40000, &err);
    cs.broadphase = MR_BROADPHASE_BRUTE;
    mr_collision *b = mr_collision_create(m, &cs, 40000, &err);
    for (int frame = 0; frame < 4; ++frame) {
      move(m, Xg, ng, &s, size ? 6.0 : 1.0, frame);
      assert_int_equal(mr_collision_detect_geoms(a, Xg, &err), MR_OK);
      assert_int_equal(mr_collision_detect_geoms(b, Xg, &err), MR_OK);
      assert_same(a, b);
      assert_true(mr_collision_get_stats(a).npairs > 20);
    }
    mr_collision_free(a);
    mr_collision_free(b);
    mr_model_free(m);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tree_equals_brute),
      cmocka_unit_test(test_determinism),
      cmocka_unit_test(test_tree_invariants),
      cmocka_unit_test(test_capacity),
      cmocka_unit_test(test_auto),
      cmocka_unit_test(test_filters),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
