/**
 * Levenberg–Marquardt for small dense least-squares problems (Marquardt's diagonal scaling,
 * Nocedal & Wright §10.3). The Jacobian is supplied by the caller or taken by central differences.
 */
import { type Mat, type Vec, gram, gramVec, solve } from "./linalg.ts";

/** Options of levenbergMarquardt. */
export interface LmOptions {
  /** Jacobian of the residuals at x (rows: residuals, columns: parameters); default central differences. */
  jacobian?: (x: Vec) => Mat;
  maxIterations?: number;
  /** Stop when the cost falls by less than this fraction in an accepted step. */
  tolerance?: number;
  /** Initial damping. */
  lambda?: number;
}

/** Result of a fit. */
export interface LmResult {
  x: Vec;
  /** ½‖r‖² at x. */
  cost: number;
  iterations: number;
  residuals: Vec;
}

/** Central-difference Jacobian of f at x. */
export function numericJacobian(f: (x: Vec) => Vec, x: Vec): Mat {
  const m = f(x).length;
  const J: Mat = Array.from({ length: m }, () => new Array<number>(x.length).fill(0));
  for (let j = 0; j < x.length; j++) {
    const h = 1e-6 * Math.max(1, Math.abs(x[j]));
    const xp = [...x];
    const xm = [...x];
    xp[j] += h;
    xm[j] -= h;
    const fp = f(xp);
    const fm = f(xm);
    for (let i = 0; i < m; i++) J[i][j] = (fp[i] - fm[i]) / (2 * h);
  }
  return J;
}

const cost = (r: Vec): number => 0.5 * r.reduce((s, v) => s + v * v, 0);

/** Minimises ½‖f(x)‖² from x0. */
export function levenbergMarquardt(f: (x: Vec) => Vec, x0: Vec, opts: LmOptions = {}): LmResult {
  const jac = opts.jacobian ?? ((x: Vec) => numericJacobian(f, x));
  const maxIt = opts.maxIterations ?? 100;
  const tol = opts.tolerance ?? 1e-12;
  let lambda = opts.lambda ?? 1e-3;
  let x = [...x0];
  let r = f(x);
  let c = cost(r);
  if (!Number.isFinite(c)) throw new Error("Levenberg–Marquardt: the residuals at the initial guess are not finite (check the initial estimate)");
  let it = 0;
  for (; it < maxIt; it++) {
    const J = jac(x);
    const A = gram(J);
    const g = gramVec(J, r);
    let accepted = false;
    for (let tries = 0; tries < 12 && !accepted; tries++) {
      const Ad = A.map((row, i) => row.map((v, j) => (i === j ? v + lambda * Math.max(v, 1e-12) : v)));
      let dx: Vec;
      try {
        dx = solve(Ad, g.map((v) => -v));
      } catch {
        lambda *= 10;
        continue;
      }
      const xn = x.map((v, i) => v + dx[i]);
      const rn = f(xn);
      const cn = cost(rn);
      if (Number.isFinite(cn) && cn < c) {
        const drop = (c - cn) / Math.max(c, 1e-300);
        x = xn;
        r = rn;
        c = cn;
        lambda = Math.max(lambda / 10, 1e-12);
        accepted = true;
        if (drop < tol) return { x, cost: c, iterations: it + 1, residuals: r };
      } else {
        lambda *= 10;
      }
    }
    if (!accepted) break;
  }
  return { x, cost: c, iterations: it, residuals: r };
}
