// FCL (Flexible Collision Library, Debian libfcl-dev) as a second opinion for
// tests/test_collision_fcl.c: the signed distance of two primitive shapes from fcl::distance
// (GJK through libccd, GST_LIBCCD), exposed to C; used on separated shapes only.
#include <fcl/fcl.h>

#include <memory>

extern "C" {
#include "fcl_ref.h"
}

namespace {

// a primitive from moreau's type code (1 sphere, 2 box, 3 capsule, 4 cylinder, 5 ellipsoid) and size
std::shared_ptr<fcl::CollisionGeometryd> make_shape(int type, const double *s) {
  switch (type) {
  case 1:
    return std::make_shared<fcl::Sphered>(s[0]);
  case 2:
    return std::make_shared<fcl::Boxd>(2 * s[0], 2 * s[1], 2 * s[2]);
  case 3:
    return std::make_shared<fcl::Capsuled>(s[0], 2 * s[1]);
  case 4:
    return std::make_shared<fcl::Cylinderd>(s[0], 2 * s[1]);
  case 5:
    return std::make_shared<fcl::Ellipsoidd>(s[0], s[1], s[2]);
  default:
    return nullptr;
  }
}

// R row-major, then p
fcl::Transform3d make_pose(const double *X) {
  fcl::Matrix3d R;
  R << X[0], X[1], X[2], X[3], X[4], X[5], X[6], X[7], X[8];
  fcl::Transform3d T = fcl::Transform3d::Identity();
  T.linear() = R;
  T.translation() = fcl::Vector3d(X[9], X[10], X[11]);
  return T;
}

}  // namespace

extern "C" int fcl_ref_signed_distance(int ta, const double *sa, const double *Xa, int tb,
                                       const double *sb, const double *Xb, double *dist) {
  auto ga = make_shape(ta, sa), gb = make_shape(tb, sb);
  if (!ga || !gb) return 0;
  fcl::CollisionObjectd a(ga, make_pose(Xa)), b(gb, make_pose(Xb));
  fcl::DistanceRequestd req(true, false);
  req.gjk_solver_type = fcl::GST_LIBCCD;
  fcl::DistanceResultd res;
  fcl::distance(&a, &b, req, res);
  *dist = res.min_distance;
  return 1;
}
