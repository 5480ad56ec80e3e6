// Decoding the replay object embedded in the page (docs/viewer.md): base64 strings of
// little-endian Float32 / Int32 arrays.

function bytes(b64) {
  // native decoding where the browser has it (Chromium 140+, Firefox 133+, Safari 18.2+)
  if (Uint8Array.fromBase64) return Uint8Array.fromBase64(b64).buffer;
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; ++i) out[i] = s.charCodeAt(i);
  return out.buffer;
}

export const f32 = (b64) => new Float32Array(bytes(b64));
export const i32 = (b64) => new Int32Array(bytes(b64));
export const u32 = (b64) => new Uint32Array(bytes(b64));

// the replay with its arrays decoded
export function decode(text) {
  const d = JSON.parse(text);
  for (const g of d.geoms) {
    if (g.mesh) g.mesh = { vert: f32(g.mesh.vert), face: u32(g.mesh.face) };
    if (g.hfield) g.hfield.h = f32(g.hfield.h);
  }
  for (const r of d.runs) {
    r.frame_t = f32(r.frame_t);
    r.poses = f32(r.poses);
    r.contact_off = i32(r.contact_off);
    r.contacts = f32(r.contacts);
    for (const k of Object.keys(r.stats)) r.stats[k] = f32(r.stats[k]);
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
