/**
 * Triangle meshes of MuJoCo's primitive geoms in the geom's own frame, built once per model: box, sphere,
 * ellipsoid, capsule, cylinder and plane, sized by `geom_size` as MuJoCo defines it (MJCF reference, geom/size:
 * half-sizes for box, radius (+ half-length along z) for sphere/capsule/cylinder, radii for ellipsoid, half-extents
 * for plane). Normals are per vertex (smooth surfaces) or per face (box, plane, cylinder caps), as MuJoCo's own
 * renderer draws them.
 */

/** An indexed triangle mesh in a geom frame: 3 floats per vertex in `pos` and `nrm`, 3 indices per triangle. */
export interface TriMesh {
  pos: Float32Array;
  nrm: Float32Array;
  idx: Uint32Array;
}

/** Grows a mesh vertex by vertex and triangle by triangle. */
class MeshBuilder {
  readonly #pos: number[] = [];
  readonly #nrm: number[] = [];
  readonly #idx: number[] = [];

  vertex(p: readonly number[], n: readonly number[]): number {
    this.#pos.push(p[0], p[1], p[2]);
    const l = Math.hypot(n[0], n[1], n[2]) || 1;
    this.#nrm.push(n[0] / l, n[1] / l, n[2] / l);
    return this.#pos.length / 3 - 1;
  }

  tri(a: number, b: number, c: number): void {
    this.#idx.push(a, b, c);
  }

  /** Two triangles a-b-c, a-c-d (counter-clockwise seen from outside). */
  quad(a: number, b: number, c: number, d: number): void {
    this.tri(a, b, c);
    this.tri(a, c, d);
  }

  build(): TriMesh {
    return { pos: Float32Array.from(this.#pos), nrm: Float32Array.from(this.#nrm), idx: Uint32Array.from(this.#idx) };
  }
}

/** Tessellation density of curved primitives; MuJoCo's own defaults are 28 slices and 16 stacks (visual/quality). */
export interface Tessellation {
  slices: number;
  stacks: number;
}

export const DEFAULT_TESSELLATION: Tessellation = { slices: 20, stacks: 10 };

/** Box with half-sizes (a, b, c): 6 flat faces. */
export function boxMesh(a: number, b: number, c: number): TriMesh {
  const m = new MeshBuilder();
  const h = [a, b, c];
  for (let axis = 0; axis < 3; axis++) {
    for (const sign of [1, -1]) {
      const u = (axis + 1) % 3;
      const v = (axis + 2) % 3;
      const n = [0, 0, 0];
      n[axis] = sign;
      const corner = (su: number, sv: number): number => {
        const p = [0, 0, 0];
        p[axis] = sign * h[axis];
        p[u] = su * h[u];
        p[v] = sv * h[v];
        return m.vertex(p, n);
      };
      const q = [corner(-1, -1), corner(1, -1), corner(1, 1), corner(-1, 1)];
      // u×v points along +axis: keep that winding on the + face, reverse it on the − face.
      if (sign > 0) m.quad(q[0], q[1], q[2], q[3]);
      else m.quad(q[0], q[3], q[2], q[1]);
    }
  }
  return m.build();
}

/** Ellipsoid with radii (rx, ry, rz); a sphere is rx = ry = rz. Normals of an ellipsoid are ∇(x²/rx² + …). */
export function ellipsoidMesh(rx: number, ry: number, rz: number, t: Tessellation = DEFAULT_TESSELLATION): TriMesh {
  const m = new MeshBuilder();
  addSphereBand(m, [rx, ry, rz], 0, 0, t.stacks, t);
  return m.build();
}

/** Capsule: cylinder of radius r and half-length h along z, with hemispherical ends. */
export function capsuleMesh(r: number, h: number, t: Tessellation = DEFAULT_TESSELLATION): TriMesh {
  const m = new MeshBuilder();
  const half = Math.max(2, Math.round(t.stacks / 2));
  // Top cap (north pole to equator) shifted up by h, then the bottom cap shifted down, joined by the side.
  const top = addSphereBand(m, [r, r, r], h, 0, half, { slices: t.slices, stacks: 2 * half });
  const bottom = addSphereBand(m, [r, r, r], -h, half, 2 * half, { slices: t.slices, stacks: 2 * half });
  // The top band's last ring is z = +h, the bottom band's first ring z = −h: stitch them with side quads.
  for (let i = 0; i < t.slices; i++) m.quad(top.lastRing + i, bottom.firstRing + i, bottom.firstRing + i + 1, top.lastRing + i + 1);
  return m.build();
}

/** Cylinder of radius r and half-length h along z, with flat caps. */
export function cylinderMesh(r: number, h: number, t: Tessellation = DEFAULT_TESSELLATION): TriMesh {
  const m = new MeshBuilder();
  const S = t.slices;
  const ring = (z: number, n: (c: number, s: number) => number[]): number => {
    const first = m.vertex([r, 0, z], n(1, 0));
    for (let i = 1; i <= S; i++) {
      const a = (2 * Math.PI * i) / S;
      m.vertex([r * Math.cos(a), r * Math.sin(a), z], n(Math.cos(a), Math.sin(a)));
    }
    return first;
  };
  const sideTop = ring(h, (c, s) => [c, s, 0]);
  const sideBot = ring(-h, (c, s) => [c, s, 0]);
  for (let i = 0; i < S; i++) m.quad(sideBot + i, sideBot + i + 1, sideTop + i + 1, sideTop + i);
  for (const sign of [1, -1]) {
    const centre = m.vertex([0, 0, sign * h], [0, 0, sign]);
    const rim = ring(sign * h, () => [0, 0, sign]);
    for (let i = 0; i < S; i++) {
      if (sign > 0) m.tri(centre, rim + i, rim + i + 1);
      else m.tri(centre, rim + i + 1, rim + i);
    }
  }
  return m.build();
}

/** Plane: the rectangle [−a, a] × [−b, b] at z = 0, facing +z (MuJoCo draws planes one-sided). */
export function planeMesh(a: number, b: number): TriMesh {
  const m = new MeshBuilder();
  const n = [0, 0, 1];
  const q = [m.vertex([-a, -b, 0], n), m.vertex([a, -b, 0], n), m.vertex([a, b, 0], n), m.vertex([-a, b, 0], n)];
  m.quad(q[0], q[1], q[2], q[3]);
  return m.build();
}

/**
 * Rings of a (scaled) sphere from stack `from` to stack `to` (0 = north pole, t.stacks = south pole), offset by `dz`
 * along z; poles become single vertices. Returns the first vertex of the first and of the last ring written.
 */
function addSphereBand(m: MeshBuilder, r: readonly number[], dz: number, from: number, to: number, t: Tessellation): { firstRing: number; lastRing: number } {
  const S = t.slices;
  let prev = -1;
  let prevIsPole = false;
  let firstRing = -1;
  let lastRing = -1;
  for (let k = from; k <= to; k++) {
    const phi = (Math.PI * k) / t.stacks;
    const z = Math.cos(phi);
    const rho = Math.sin(phi);
    const isPole = k === 0 || k === t.stacks;
    let cur: number;
    if (isPole) {
      cur = m.vertex([0, 0, r[2] * z + dz], [0, 0, z]);
    } else {
      cur = -1;
      for (let i = 0; i <= S; i++) {
        const a = (2 * Math.PI * i) / S;
        const x = rho * Math.cos(a);
        const y = rho * Math.sin(a);
        const v = m.vertex([r[0] * x, r[1] * y, r[2] * z + dz], [x / r[0], y / r[1], z / r[2]]);
        if (i === 0) cur = v;
      }
    }
    if (firstRing < 0) firstRing = cur;
    lastRing = cur;
    if (prev >= 0) {
      for (let i = 0; i < S; i++) {
        if (prevIsPole) m.tri(prev, cur + i, cur + i + 1);
        else if (isPole) m.tri(prev + i, cur, prev + i + 1);
        else m.quad(prev + i, cur + i, cur + i + 1, prev + i + 1);
      }
    }
    prev = cur;
    prevIsPole = isPole;
  }
  return { firstRing, lastRing };
}
