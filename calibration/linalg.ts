/**
 * The small dense linear algebra calibration needs, as plain functions on number[][] (row-major).
 * Sizes here are tiny (≤ ~100 unknowns), so clarity wins over speed: Jacobi for symmetric
 * eigenproblems, Gaussian elimination with partial pivoting for linear systems.
 */

/** A dense matrix, row-major. */
export type Mat = number[][];
/** A vector. */
export type Vec = number[];

/** n×m zeros. */
export function zeros(n: number, m: number): Mat {
  return Array.from({ length: n }, () => new Array<number>(m).fill(0));
}

/** n×n identity. */
export function identity(n: number): Mat {
  const I = zeros(n, n);
  for (let i = 0; i < n; i++) I[i][i] = 1;
  return I;
}

/** Aᵀ. */
export function transpose(A: Mat): Mat {
  return A[0].map((_, j) => A.map((row) => row[j]));
}

/** A·B. */
export function matMul(A: Mat, B: Mat): Mat {
  const n = A.length;
  const k = B.length;
  const m = B[0].length;
  const C = zeros(n, m);
  for (let i = 0; i < n; i++) {
    for (let p = 0; p < k; p++) {
      const a = A[i][p];
      if (a === 0) continue;
      for (let j = 0; j < m; j++) C[i][j] += a * B[p][j];
    }
  }
  return C;
}

/** A·v. */
export function matVec(A: Mat, v: Vec): Vec {
  return A.map((row) => row.reduce((s, a, j) => s + a * v[j], 0));
}

/** a·b. */
export function dot(a: Vec, b: Vec): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** ‖v‖₂. */
export function norm(v: Vec): number {
  return Math.sqrt(dot(v, v));
}

/** a × b (3-vectors). */
export function cross(a: Vec, b: Vec): Vec {
  return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
}

/** AᵀA, computed directly (the normal matrix of least squares). */
export function gram(A: Mat): Mat {
  const m = A[0].length;
  const G = zeros(m, m);
  for (const row of A) {
    for (let i = 0; i < m; i++) {
      const ri = row[i];
      if (ri === 0) continue;
      for (let j = i; j < m; j++) G[i][j] += ri * row[j];
    }
  }
  for (let i = 0; i < m; i++) for (let j = 0; j < i; j++) G[i][j] = G[j][i];
  return G;
}

/** Aᵀb. */
export function gramVec(A: Mat, b: Vec): Vec {
  const m = A[0].length;
  const out = new Array<number>(m).fill(0);
  A.forEach((row, r) => {
    for (let i = 0; i < m; i++) out[i] += row[i] * b[r];
  });
  return out;
}

/** Solves A·x = b by Gaussian elimination with partial pivoting; throws on a singular matrix. */
export function solve(A: Mat, b: Vec): Vec {
  const n = A.length;
  const M = A.map((row, i) => [...row, b[i]]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r][c]) > Math.abs(M[p][c])) p = r;
    if (Math.abs(M[p][c]) < 1e-300) throw new Error(`Singular ${n}×${n} system: column ${c} has no pivot (the data do not constrain every unknown)`);
    [M[c], M[p]] = [M[p], M[c]];
    for (let r = c + 1; r < n; r++) {
      const f = M[r][c] / M[c][c];
      if (f === 0) continue;
      for (let k = c; k <= n; k++) M[r][k] -= f * M[c][k];
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    let s = M[r][n];
    for (let k = r + 1; k < n; k++) s -= M[r][k] * x[k];
    x[r] = s / M[r][r];
  }
  return x;
}

/** Least squares min ‖A·x − b‖ through the normal equations (fine for the well-posed small systems here). */
export function lstsq(A: Mat, b: Vec): Vec {
  return solve(gram(A), gramVec(A, b));
}

/**
 * Eigen-decomposition of a symmetric matrix by cyclic Jacobi rotations.
 * Returns eigenvalues ascending and the matching unit eigenvectors as the columns of `vectors`.
 */
export function symmetricEigen(S: Mat): { values: Vec; vectors: Mat } {
  const n = S.length;
  const A = S.map((r) => [...r]);
  const V = identity(n);
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) off += A[i][j] * A[i][j];
    if (off < 1e-30) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        if (Math.abs(A[p][q]) < 1e-300) continue;
        const theta = (A[q][q] - A[p][p]) / (2 * A[p][q]);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = A[k][p];
          const akq = A[k][q];
          A[k][p] = c * akp - s * akq;
          A[k][q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = A[p][k];
          const aqk = A[q][k];
          A[p][k] = c * apk - s * aqk;
          A[q][k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = V[k][p];
          const vkq = V[k][q];
          V[k][p] = c * vkp - s * vkq;
          V[k][q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const order = A.map((_, i) => i).sort((a, b) => A[a][a] - A[b][b]);
  return { values: order.map((i) => A[i][i]), vectors: V.map((row) => order.map((i) => row[i])) };
}

/** Unit x minimising ‖A·x‖ (the right null vector of a DLT system): eigenvector of AᵀA with the smallest eigenvalue. */
export function nullVector(A: Mat): Vec {
  const { vectors } = symmetricEigen(gram(A));
  return vectors.map((row) => row[0]);
}

/** The inverse square root of a symmetric positive-definite matrix. */
export function inverseSqrtSym(S: Mat): Mat {
  const { values, vectors } = symmetricEigen(S);
  const n = S.length;
  const out = zeros(n, n);
  for (let k = 0; k < n; k++) {
    if (values[k] <= 0) throw new Error(`inverseSqrtSym: matrix is not positive definite (eigenvalue ${values[k]})`);
    const w = 1 / Math.sqrt(values[k]);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) out[i][j] += w * vectors[i][k] * vectors[j][k];
  }
  return out;
}

/** Inverse of a 3×3 matrix. */
export function inv3(M: Mat): Mat {
  const [a, b, c] = M[0];
  const [d, e, f] = M[1];
  const [g, h, i] = M[2];
  const A = e * i - f * h;
  const B = -(d * i - f * g);
  const C = d * h - e * g;
  const det = a * A + b * B + c * C;
  if (Math.abs(det) < 1e-300) throw new Error("inv3: singular 3×3 matrix");
  return [
    [A / det, -(b * i - c * h) / det, (b * f - c * e) / det],
    [B / det, (a * i - c * g) / det, -(a * f - c * d) / det],
    [C / det, -(a * h - b * g) / det, (a * e - b * d) / det],
  ];
}

/** Determinant of a 3×3 matrix. */
export function det3(M: Mat): number {
  return M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) - M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) + M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0]);
}
