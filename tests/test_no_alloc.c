/* No allocation inside the step: this program is linked with --wrap=malloc, calloc and realloc
 * (Makefile), so every allocation made by moreau's own code goes through the counters below.
 * Scenes and simulators are created first (allocation allowed), then the counters must stay at
 * zero while stepping, with every solver, on scenes that exercise every stage: boxes and spheres
 * on a plane, a robot on its feet, a heightfield, constraints and joint limits, a hand holding a
 * ball. libccd's own allocations during EPA (a documented exception) happen inside the shared
 * library and are not counted here. */
#include <stddef.h>

#include "sim_util.h"

static long allocations; /* calls to malloc, calloc and realloc from moreau's code */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);

void *__wrap_malloc(size_t n) {
  ++allocations;
  return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t size) {
  ++allocations;
  return __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t n) {
  ++allocations;
  return __real_realloc(p, n);
}

static void steps_allocate_nothing(const char *path, long warmup, long n) {
  mr_scene sc = tsim_load(path);
  for (int i = 0; i < mr_solver_count(); ++i) {
    const char *name = mr_solver_at(i)->name;
    long created = allocations;
    mr_sim *s = tsim_create(&sc, name);
    /* the library's own allocations are counted: creating a simulator makes some */
    assert_true(allocations > created);
    tsim_steps(s, warmup);
    long before = allocations;
    tsim_steps(s, n);
    if (allocations != before)
      fail_msg("%s with %s: %ld allocations in %ld steps", path, name, allocations - before, n);
    mr_sim_free(s);
  }
  mr_scene_free(&sc);
}

/* the counters work: an allocation made here is seen */
static void test_counter_sees_allocations(void **state) {
  long before = allocations;
  void *p = malloc(16);
  assert_non_null(p);
  free(p);
  assert_int_equal(allocations - before, 1);
}

static void test_demo(void **state) {
  steps_allocate_nothing("scenes/demo.yaml", 5, 50);
}
static void test_bumpy_trot(void **state) {
  steps_allocate_nothing("scenes/b10_solo_trot_bumpy.yaml", 300, 20);
}
static void test_constraints(void **state) {
  steps_allocate_nothing("scenes/four_bar.yaml", 5, 50);
  steps_allocate_nothing("scenes/joint_limits.yaml", 5, 200);
}
static void test_hand(void **state) {
  steps_allocate_nothing("scenes/b8_allegro_hold.yaml", 5, 20);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_counter_sees_allocations),
      cmocka_unit_test(test_demo),
      cmocka_unit_test(test_bumpy_trot),
      cmocka_unit_test(test_constraints),
      cmocka_unit_test(test_hand),
  };
  return cmocka_run_group_tests_name("no_alloc", tests, NULL, NULL);
}
