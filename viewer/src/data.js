// Decoding a page's data (docs/viewer.md, "Data format"): packed arrays are the little-endian
// bytes of typed arrays, optionally shuffled into byte planes, deflate-compressed (zlib stream),
// in base64; meshes are stored once, their vertices quantised to 16 bits over their bounding box.
// Inflating is synchronous (fflate), so that a page is drawn by the time its load event fires.
import { unzlibSync } from 'fflate';

function bytes(b64) {
  // native decoding where the browser has it (Chromium 140+, Firefox 133+, Safari 18.2+)
  if (Uint8Array.fromBase64) return Uint8Array.fromBase64(b64);
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; ++i) out[i] = s.charCodeAt(i);
  return out;
}


const TYPES = { f32: [Float32Array, 4], i32: [Int32Array, 4], u16: [Uint16Array, 2], u32: [Uint32Array, 4] };

// a packed array {t, n, s, z} as its typed array
export function unpack(p) {
  const [Type, w] = TYPES[p.t];
  // the output's size is known: fflate fills it without growing a buffer
  let b = p.n ? unzlibSync(bytes(p.z), { out: new Uint8Array(p.n * w) }) : new Uint8Array(0);
  if (b.length !== p.n * w) throw new Error(`packed array: ${b.length} bytes, expected ${p.n * w}`);
  if (p.s) {
    const u = new Uint8Array(b.length);
    for (let k = 0; k < w; ++k)
      for (let i = 0, o = k * p.n; i < p.n; ++i) u[i * w + k] = b[o + i];
    b = u;
  }
  return new Type(b.buffer, b.byteOffset, p.n);
}

// a stored mesh: Float32 vertices from their 16-bit quantisation, Uint16/Uint32 faces
function mesh(m) {
  const u = unpack(m.vert), face = unpack(m.face);
  const vert = new Float32Array(u.length);
  const s = [0, 1, 2].map((k) => (m.hi[k] - m.lo[k]) / 65535);
  for (let i = 0; i < u.length; ++i) vert[i] = m.lo[i % 3] + s[i % 3] * u[i];
  return { vert, face };
}

// the page's data with every packed array decoded
export function decode(text) {
  const d = JSON.parse(text);
  d.meshes = (d.meshes || []).map(mesh);
  for (const g of d.geoms) if (g.hfield) g.hfield.h = unpack(g.hfield.h);
  for (const r of d.runs || []) {
    for (const k of ['frame_t', 'poses', 'contact_off', 'contacts']) r[k] = unpack(r[k]);
    for (const k of Object.keys(r.stats)) r.stats[k] = unpack(r.stats[k]);
    r.nstats = r.stats.t.length;
  }
  return d;
}

// the last frame of run whose time is <= t (0 when t is before the first)
export function frameAt(run, t) {
  const ft = run.frame_t;
  let lo = 0, hi = ft.length - 1;
  if (hi < 0) return -1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (ft[mid] <= t + 1e-9) lo = mid; else hi = mid - 1;
  }
  return lo;
}
