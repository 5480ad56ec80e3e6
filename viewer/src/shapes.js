// three.js objects for moreau's geometries, in the geometry frame (z up, as in moreau):
// boxes by half extents, spheres, capsules and cylinders along z, ellipsoids as scaled spheres,
// meshes as their triangles (one geometry per stored mesh, shared by every object using it), a
// halfspace {z <= 0} as a grid on a plane, a heightfield as its triangulated grid of heights,
// coloured by height and smooth-shaded so that its slopes read in the light.
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

// height colour map: low blue-green, middle sand, high brown-grey
const HCOLORS = [[0.25, 0.55, 0.55], [0.55, 0.72, 0.45], [0.86, 0.80, 0.55], [0.62, 0.50, 0.40]];
function heightColor(x, out, k) {
  const s = Math.min(0.9999, Math.max(0, x)) * (HCOLORS.length - 1), i = Math.floor(s), f = s - i;
  for (let c = 0; c < 3; ++c) out[3 * k + c] = HCOLORS[i][c] * (1 - f) + HCOLORS[i + 1][c] * f;
}

function hfieldGeometry(h) {
  const n = h.nx * h.ny, pos = new Float32Array(n * 3), col = new Float32Array(n * 3);
  let lo = Infinity, hi = -Infinity;
  for (let k = 0; k < n; ++k) { lo = Math.min(lo, h.h[k]); hi = Math.max(hi, h.h[k]); }
  for (let iy = 0; iy < h.ny; ++iy)
    for (let ix = 0; ix < h.nx; ++ix) {
      const k = iy * h.nx + ix;
      pos[3 * k] = h.x0 + ix * h.dx;
      pos[3 * k + 1] = h.y0 + iy * h.dy;
      pos[3 * k + 2] = h.h[k];
      heightColor(hi > lo ? (h.h[k] - lo) / (hi - lo) : 0.5, col, k);
    }
  const idx = new Uint32Array(6 * (h.nx - 1) * (h.ny - 1));
  let j = 0;
  for (let iy = 0; iy + 1 < h.ny; ++iy)
    for (let ix = 0; ix + 1 < h.nx; ++ix) {
      const a = iy * h.nx + ix, b = a + 1, c = a + h.nx, d = c + 1;
      idx.set([a, b, d, a, d, c], j);
      j += 6;
    }
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(pos, 3));
  g.setAttribute('color', new THREE.BufferAttribute(col, 3));
  g.setIndex(new THREE.BufferAttribute(idx, 1));
  g.computeVertexNormals();
  g.userData.range = [lo, hi];
  return g;
}

// the geometry of a shape, or null for a halfspace (drawn by ground())
function geometry(s, meshes) {
  const [a, b, c] = s.size;
  switch (s.type) {
    case 'box': return new THREE.BoxGeometry(2 * a, 2 * b, 2 * c);
    case 'sphere': return new THREE.SphereGeometry(a, 32, 16);
    case 'capsule': return new THREE.CapsuleGeometry(a, 2 * b, 8, 24).rotateX(Math.PI / 2);
    case 'cylinder': return new THREE.CylinderGeometry(a, a, 2 * b, 32).rotateX(Math.PI / 2);
    case 'ellipsoid': return new THREE.SphereGeometry(1, 32, 16).scale(a, b, c);
    case 'mesh': {
      const m = meshes[s.mesh];
      if (!m) return null;
      if (!m.geometry) m.geometry = meshGeometry(m);
      return m.geometry;
    }
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
  plane.receiveShadow = true;
  const grid = new THREE.GridHelper(2, 40, 0x8a949e, 0xaeb6be);
  grid.rotateX(Math.PI / 2);
  grid.position.z = 1e-4;
  g.add(plane, grid);
  return g;
}

// the object of shape s with material mat, placed in its body frame; null if not drawable
export function shapeObject(s, mat, meshes) {
  let o;
  if (s.type === 'halfspace') {
    o = ground();
  } else {
    const g = geometry(s, meshes);
    if (!g) return null;
    if (s.type === 'heightfield') {
      mat = new THREE.MeshLambertMaterial({ vertexColors: true });
      o = new THREE.Mesh(g, mat);
      o.receiveShadow = true;
    } else {
      o = new THREE.Mesh(g, mat);
      o.castShadow = true;
      o.receiveShadow = true;
    }
  }
  o.position.fromArray(s.pos);
  o.quaternion.fromArray(s.quat);
  return o;
}
