// three.js objects for moreau's geometries, in the geometry frame (z up, as in moreau):
// boxes by half extents, spheres, capsules and cylinders along z, ellipsoids as scaled spheres,
// meshes as their triangles, a halfspace {z <= 0} as a grid on a plane, a heightfield as its
// triangulated grid of heights.
import * as THREE from 'three';

function meshGeometry(m) {
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(m.vert, 3));
  g.setIndex(new THREE.BufferAttribute(m.face, 1));
  // flat shading: every triangle its own normal
  const flat = g.toNonIndexed();
  flat.computeVertexNormals();
  return flat;
}

function hfieldGeometry(h) {
  const pos = new Float32Array(h.nx * h.ny * 3);
  for (let iy = 0; iy < h.ny; ++iy)
    for (let ix = 0; ix < h.nx; ++ix) {
      const k = iy * h.nx + ix;
      pos[3 * k] = h.x0 + ix * h.dx;
      pos[3 * k + 1] = h.y0 + iy * h.dy;
      pos[3 * k + 2] = h.h[k];
    }
  const idx = [];
  for (let iy = 0; iy + 1 < h.ny; ++iy)
    for (let ix = 0; ix + 1 < h.nx; ++ix) {
      const a = iy * h.nx + ix, b = a + 1, c = a + h.nx, d = c + 1;
      idx.push(a, b, d, a, d, c);
    }
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(pos, 3));
  g.setIndex(idx);
  g.computeVertexNormals();
  return g;
}

// the geometry of a shape, or null for a halfspace (drawn by ground())
function geometry(s) {
  const [a, b, c] = s.size;
  switch (s.type) {
    case 'box': return new THREE.BoxGeometry(2 * a, 2 * b, 2 * c);
    case 'sphere': return new THREE.SphereGeometry(a, 32, 16);
    case 'capsule': return new THREE.CapsuleGeometry(a, 2 * b, 8, 24).rotateX(Math.PI / 2);
    case 'cylinder': return new THREE.CylinderGeometry(a, a, 2 * b, 32).rotateX(Math.PI / 2);
    case 'ellipsoid': return new THREE.SphereGeometry(1, 32, 16).scale(a, b, c);
    case 'mesh': return s.mesh ? meshGeometry(s.mesh) : null;
    case 'heightfield': return s.hfield ? hfieldGeometry(s.hfield) : null;
    default: return null;
  }
}

// a ground grid of half width 1 (scaled by the page to the scene's size) on the plane z = 0 of
// the halfspace's frame
function ground() {
  const g = new THREE.Group();
  const plane = new THREE.Mesh(new THREE.PlaneGeometry(2, 2),
    new THREE.MeshLambertMaterial({ color: 0xd8dde3, side: THREE.DoubleSide }));
  const grid = new THREE.GridHelper(2, 40, 0x8a949e, 0xaeb6be);
  grid.rotateX(Math.PI / 2);
  grid.position.z = 1e-4;
  g.add(plane, grid);
  return g;
}

// the object of shape s with material mat, placed in its body frame; null if not drawable
export function shapeObject(s, mat) {
  let o;
  if (s.type === 'halfspace') {
    o = ground();
  } else {
    const g = geometry(s);
    if (!g) return null;
    o = new THREE.Mesh(g, mat);
  }
  o.position.fromArray(s.pos);
  o.quaternion.fromArray(s.quat);
  return o;
}
