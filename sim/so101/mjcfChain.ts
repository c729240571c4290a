/**
 * The kinematic tree of an MJCF file (bodies with pos/quat, hinge joints, sites), read straight from the XML so
 * rlft's kinematics and the simulated model share one source of numbers. Only what a serial arm description
 * uses is understood; anything that would change a frame and is not (euler, axisangle, xyaxes, zaxis, a joint
 * with its own pos, a non-hinge joint on the chain, compiler angle="degree") is refused by name rather than
 * silently misread. Frames follow MuJoCo's conventions (XML reference, "body", "joint"): a body's frame is its
 * parent's moved by pos and turned by quat (w, x, y, z; normalised by the compiler); a hinge turns the body
 * frame about `axis` through the body origin.
 */

/** A hinge joint of a body. */
export interface MjcfJoint {
  name: string;
  axis: [number, number, number];
  range?: [number, number];
}

/** A body: its frame relative to its parent's, and the hinges that turn it. */
export interface MjcfBody {
  name: string;
  parent: string | null;
  pos: [number, number, number];
  /** Unit quaternion w, x, y, z. */
  quat: [number, number, number, number];
  joints: MjcfJoint[];
}

/** A site: a frame fixed in a body. */
export interface MjcfSite {
  name: string;
  body: string;
  pos: [number, number, number];
  quat: [number, number, number, number];
}

/** Bodies and sites by name. */
export interface MjcfTree {
  bodies: Map<string, MjcfBody>;
  sites: Map<string, MjcfSite>;
}

const FRAME_ALTERNATIVES = ["euler", "axisangle", "xyaxes", "zaxis", "fromto"];

function attributes(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([\w:-]+)\s*=\s*"([^"]*)"/g)) out[m[1]] = m[2];
  return out;
}

function numbers(v: string | undefined, n: number, what: string, fallback: number[]): number[] {
  if (v === undefined) return fallback;
  const a = v.trim().split(/\s+/).map(Number);
  if (a.length !== n || a.some((x) => !Number.isFinite(x))) throw new Error(`MJCF ${what}: expected ${n} numbers, got "${v}"`);
  return a;
}

function unitQuat(q: number[], what: string): [number, number, number, number] {
  const n = Math.hypot(q[0], q[1], q[2], q[3]);
  if (!(n > 0)) throw new Error(`MJCF ${what}: zero quaternion`);
  return [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
}

/** Parses the worldbody tree of an MJCF document (comments ignored; <include> is not followed). */
export function parseMjcfTree(xml: string): MjcfTree {
  const text = xml.replace(/<!--[\s\S]*?-->/g, "");
  const compiler = /<compiler\b([^>]*)>/.exec(text);
  if (compiler && attributes(compiler[1]).angle !== "radian") {
    throw new Error(`MJCF: <compiler angle="${attributes(compiler[1]).angle ?? "degree"}">; only angle="radian" models are read`);
  }
  const bodies = new Map<string, MjcfBody>();
  const sites = new Map<string, MjcfSite>();
  const stack: string[] = [];
  let inWorld = false;
  for (const m of text.matchAll(/<(\/?)(\w+)\b([^>]*?)(\/?)>/g)) {
    const [, close, tag, rest, selfClose] = m;
    if (tag === "worldbody") {
      inWorld = !close;
      continue;
    }
    if (!inWorld) continue;
    if (tag === "body" && close) {
      stack.pop();
      continue;
    }
    const a = attributes(rest);
    const where = `${tag} "${a.name ?? "(unnamed)"}"`;
    if (tag === "body" || tag === "site") {
      const alt = FRAME_ALTERNATIVES.find((k) => k in a);
      if (alt) throw new Error(`MJCF ${where}: orientation by ${alt} is not supported here; use pos/quat`);
      const pos = numbers(a.pos, 3, `${where} pos`, [0, 0, 0]) as [number, number, number];
      const quat = unitQuat(numbers(a.quat, 4, `${where} quat`, [1, 0, 0, 0]), `${where} quat`);
      if (tag === "body") {
        const name = a.name ?? `body${bodies.size}`;
        bodies.set(name, { name, parent: stack.at(-1) ?? null, pos, quat, joints: [] });
        if (!selfClose) stack.push(name);
      } else if (a.name && stack.length) {
        sites.set(a.name, { name: a.name, body: stack[stack.length - 1], pos, quat });
      }
    } else if (tag === "joint" && stack.length) {
      const body = bodies.get(stack[stack.length - 1])!;
      if ((a.type ?? "hinge") !== "hinge") throw new Error(`MJCF ${where}: type ${a.type}; only hinge joints are read`);
      if (a.pos && numbers(a.pos, 3, `${where} pos`, []).some((v) => v !== 0)) throw new Error(`MJCF ${where}: a joint off its body origin is not supported`);
      const ax = numbers(a.axis, 3, `${where} axis`, [0, 0, 1]);
      const n = Math.hypot(ax[0], ax[1], ax[2]);
      const range = a.range ? (numbers(a.range, 2, `${where} range`, []) as [number, number]) : undefined;
      body.joints.push({ name: a.name ?? `${body.name}_joint`, axis: [ax[0] / n, ax[1] / n, ax[2] / n], range });
    }
  }
  return { bodies, sites };
}

/** The bodies from the root down to `body`, root first. */
export function chainTo(tree: MjcfTree, body: string): MjcfBody[] {
  const out: MjcfBody[] = [];
  for (let b = tree.bodies.get(body); b; b = b.parent ? tree.bodies.get(b.parent) : undefined) out.unshift(b);
  if (!out.length) throw new Error(`MJCF: no body "${body}" (bodies: ${[...tree.bodies.keys()].join(", ")})`);
  return out;
}
