/* FCL as a reference for tests (tests/fcl_ref.cpp, C++): the signed distance of two primitives
 * (moreau type codes 2 box, 3 capsule, 4 cylinder, 5 ellipsoid; sizes as mr_geom.size; placements as 9
 * row-major rotation entries then 3 translation entries). Returns 0 for other types. */
#ifndef MOREAU_TESTS_FCL_REF_H
#define MOREAU_TESTS_FCL_REF_H

int fcl_ref_signed_distance(int ta, const double *sa, const double *Xa, int tb, const double *sb,
                            const double *Xb, double *dist);

#endif
