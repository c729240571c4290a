import { test } from "node:test";
import assert from "node:assert/strict";
import { createRng } from "../sim/rng.ts";
import { gram, matMul, symmetricEigen, transpose, type Mat } from "./linalg.ts";
import { type Pose, compose, invert, matrixFromQuaternion, quaternionFromMatrix, rodrigues, rotationAngle, rotationVector, transformPoint } from "./rotation.ts";
import { applyHomography, findHomography, type Point2 } from "./homography.ts";
import { distort, project, undistortPixel } from "./CameraModel.ts";
import { boardPoints, renderChessboard } from "./Chessboard.ts";
import { calibrateIntrinsics } from "./calibrateIntrinsics.ts";
import { solvePlanarPose } from "./solvePlanarPose.ts";
import { calibrateHandEye } from "./calibrateHandEye.ts";
import { detectChessboardCorners } from "./detectChessboardCorners.ts";
import { TEST_BOARD, TEST_CAMERA, addPixelNoise, boardCorners, handEyeScene, perturbPose, randomBoardView } from "./synthetic.ts";

const close = (a: number, b: number, tol: number, what: string) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b} (tol ${tol})`);

test("property: rodrigues and rotationVector are inverse, quaternions round-trip (200 random rotations)", () => {
  const rng = createRng(1);
  for (let k = 0; k < 200; k++) {
    const axis = [rng.normal(), rng.normal(), rng.normal()];
    const n = Math.hypot(...axis);
    const th = rng.uniform(0, Math.PI - 1e-3);
    const w = axis.map((x) => (x / n) * th);
    const R = rodrigues(w);
    const back = rotationVector(R);
    for (let i = 0; i < 3; i++) close(back[i], w[i], 1e-9, "rotation vector");
    const RtR = matMul(transpose(R), R);
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) close(RtR[i][j], i === j ? 1 : 0, 1e-12, "orthonormal");
    close(rotationAngle(R, matrixFromQuaternion(quaternionFromMatrix(R))), 0, 1e-7, "quaternion round trip");
  }
  // Near π the axis is still recovered.
  const w = [0, Math.PI - 1e-8, 0];
  close(rotationAngle(rodrigues(rotationVector(rodrigues(w))), rodrigues(w)), 0, 1e-6, "near pi");
});

test("property: poses compose and invert consistently", () => {
  const rng = createRng(2);
  for (let k = 0; k < 50; k++) {
    const a = { R: rodrigues([rng.normal(), rng.normal(), rng.normal()]), t: [rng.normal(), rng.normal(), rng.normal()] };
    const p = [rng.normal(), rng.normal(), rng.normal()];
    const q = transformPoint(compose(invert(a), a), p);
    for (let i = 0; i < 3; i++) close(q[i], p[i], 1e-12, "a⁻¹·a = I");
  }
});

test("property: symmetric eigen-decomposition reconstructs the matrix", () => {
  const rng = createRng(3);
  for (let k = 0; k < 20; k++) {
    const n = 2 + (k % 8);
    const A: Mat = Array.from({ length: n + 3 }, () => Array.from({ length: n }, () => rng.normal()));
    const S = gram(A);
    const { values, vectors } = symmetricEigen(S);
    for (let i = 1; i < n; i++) assert.ok(values[i] >= values[i - 1]);
    const D = values.map((v, i) => values.map((_, j) => (i === j ? v : 0)));
    const back = matMul(matMul(vectors, D), transpose(vectors));
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) close(back[i][j], S[i][j], 1e-9 * (1 + Math.abs(S[i][j])), "V·D·Vᵀ");
  }
});

test("property: normalised DLT recovers an exact homography; undistort inverts distort", () => {
  const rng = createRng(4);
  for (let k = 0; k < 30; k++) {
    const H = [
      [rng.uniform(200, 800), rng.uniform(-50, 50), rng.uniform(100, 500)],
      [rng.uniform(-50, 50), rng.uniform(200, 800), rng.uniform(100, 400)],
      [rng.uniform(-0.3, 0.3), rng.uniform(-0.3, 0.3), 1],
    ];
    const src: Point2[] = Array.from({ length: 12 }, () => [rng.uniform(0, 0.3), rng.uniform(0, 0.2)]);
    const dst = src.map((p) => applyHomography(H, p));
    const Hf = findHomography(src, dst);
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) close(Hf[i][j], H[i][j], 1e-6 * (1 + Math.abs(H[i][j])), "H");
  }
  for (let k = 0; k < 100; k++) {
    const x = rng.uniform(-0.5, 0.5);
    const y = rng.uniform(-0.4, 0.4);
    const [xd, yd] = distort(TEST_CAMERA, x, y);
    const [ux, uy] = undistortPixel(TEST_CAMERA, TEST_CAMERA.fx * xd + TEST_CAMERA.cx, TEST_CAMERA.fy * yd + TEST_CAMERA.cy);
    close(ux, x, 1e-9, "undistort x");
    close(uy, y, 1e-9, "undistort y");
  }
});

test("intrinsics (Zhang + LM): 15 views, 0.5 px noise → focal length within 0.5%, distortion and RMS reported", () => {
  const rng = createRng(6);
  const obj = boardPoints(TEST_BOARD);
  const views = Array.from({ length: 15 }, () => ({ object: obj, image: addPixelNoise(boardCorners(TEST_CAMERA, randomBoardView(TEST_CAMERA, TEST_BOARD, rng, 40, 20, [0.25, 0.45]), TEST_BOARD), 0.5, rng) }));
  const r = calibrateIntrinsics(views, { width: 640, height: 480 });
  const c = r.camera;
  console.log(
    `intrinsics: fx ${c.fx.toFixed(2)} (true 600, ${((100 * (c.fx - 600)) / 600).toFixed(3)}%), fy ${c.fy.toFixed(2)} (605), cx ${c.cx.toFixed(2)} (322.5), cy ${c.cy.toFixed(2)} (238.2), ` +
      `k1 ${c.k1.toFixed(4)} (-0.21), k2 ${c.k2.toFixed(4)} (0.06), rms ${r.rms.toFixed(3)} px, σfx ${r.stdDev.fx.toFixed(2)}, closed form fx ${r.closedForm.fx.toFixed(1)}`,
  );
  assert.ok(Math.abs(c.fx - 600) / 600 < 0.005, `fx ${c.fx}`);
  assert.ok(Math.abs(c.fy - 605) / 605 < 0.005, `fy ${c.fy}`);
  close(c.cx, 322.5, 3 * r.stdDev.cx, "cx within 3σ");
  close(c.cy, 238.2, 3 * r.stdDev.cy, "cy within 3σ");
  close(c.k1, -0.21, 3 * r.stdDev.k1, "k1 within 3σ");
  close(r.rms, 0.5 * Math.SQRT2, 0.15, "RMS ≈ σ·√2 for 2-D noise");
  assert.equal(r.perViewRms.length, 15);
  assert.ok(r.stdDev.fx > 0 && r.stdDev.fx < 3);
});

test("intrinsics: too few views and mismatched points → clear errors", () => {
  const obj = boardPoints(TEST_BOARD);
  const rng = createRng(7);
  const v = () => ({ object: obj, image: boardCorners(TEST_CAMERA, randomBoardView(TEST_CAMERA, TEST_BOARD, rng), TEST_BOARD) });
  assert.throws(() => calibrateIntrinsics([v(), v()], { width: 640, height: 480 }), /at least 3 views/);
  assert.throws(() => calibrateIntrinsics([v(), v(), { object: obj, image: [] }], { width: 640, height: 480 }), /view 2: 54 target points but 0 image points/);
});

for (const mode of ["eye_in_hand", "eye_to_hand"] as const) {
  test(`hand-eye ${mode}: 15 stations, target poses from PnP on 0.5 px corners, robot 1 mm / 0.1° → < 0.2° and < 2 mm (Tsai–Lenz and Park–Martin)`, () => {
    const rng = createRng(mode === "eye_in_hand" ? 11 : 12);
    const scene = handEyeScene(mode, 15, TEST_CAMERA, TEST_BOARD, rng);
    const obj = boardPoints(TEST_BOARD);
    const image = scene.target.map((p) => addPixelNoise(boardCorners(TEST_CAMERA, p, TEST_BOARD), 0.5, rng));
    const target = image.map((im) => solvePlanarPose(TEST_CAMERA, obj, im).pose);
    const robot = scene.robot.map((p) => perturbPose(p, 0.1, 0.001, rng));
    const err = (X: Pose) => ({ deg: (rotationAngle(X.R, scene.X.R) * 180) / Math.PI, mm: 1000 * Math.hypot(...X.t.map((v, i) => v - scene.X.t[i])) });
    for (const method of ["tsai", "park"] as const) {
      const r = calibrateHandEye({ robot, target, mode, method, observations: { camera: TEST_CAMERA, object: obj, image } });
      const cf = err(r.closedForm);
      const { deg, mm } = err(r.X);
      console.log(
        `hand-eye ${mode} ${method}: closed form ${cf.deg.toFixed(3)}° / ${cf.mm.toFixed(2)} mm → refined ${deg.toFixed(3)}° / ${mm.toFixed(2)} mm ` +
          `(reprojection rms ${r.reprojectionRms?.toFixed(3)} px; AX−XB residual mean ${r.pairResiduals.meanDeg.toFixed(3)}° / ${r.pairResiduals.meanMm.toFixed(2)} mm over ${r.pairs} pairs)`,
      );
      assert.ok(deg < 0.2, `${method} rotation error ${deg}°`);
      assert.ok(mm < 2, `${method} translation error ${mm} mm`);
      // The closed form alone is limited by single-image tilt noise; it must still be a good start.
      assert.ok(cf.deg < 0.5 && cf.mm < 5, `${method} closed form ${cf.deg}° ${cf.mm} mm`);
      assert.equal(r.stationResiduals.length, 15);
      const tdeg = (rotationAngle(r.targetPose.R, scene.targetPose.R) * 180) / Math.PI;
      assert.ok(tdeg < 0.5, `implied target pose off by ${tdeg}°`);
    }
  });
}

test("hand-eye: exact data is solved exactly; no rotation → clear error", () => {
  const rng = createRng(13);
  const scene = handEyeScene("eye_in_hand", 6, TEST_CAMERA, TEST_BOARD, rng);
  for (const method of ["tsai", "park"] as const) {
    const r = calibrateHandEye({ robot: scene.robot, target: scene.target, mode: "eye_in_hand", method });
    assert.ok(rotationAngle(r.X.R, scene.X.R) < 1e-8, method);
    assert.ok(Math.hypot(...r.X.t.map((v, i) => v - scene.X.t[i])) < 1e-8, method);
    assert.ok(r.pairResiduals.maxMm < 1e-6);
  }
  const same = scene.robot.slice(0, 4).map((p) => ({ R: scene.robot[0].R, t: p.t }));
  assert.throws(() => calibrateHandEye({ robot: same, target: scene.target.slice(0, 4), mode: "eye_in_hand" }), /barely rotates/);
  assert.throws(() => calibrateHandEye({ robot: scene.robot, target: scene.target.slice(0, 3), mode: "eye_in_hand" }), /6 robot poses but 3 target poses/);
});

test("chessboard detection on rendered images: all corners, sub-pixel, right order; intrinsics from the detections", () => {
  const rng = createRng(21);
  const cam = TEST_CAMERA;
  const obj = boardPoints(TEST_BOARD);
  const views: { object: typeof obj; image: Point2[] }[] = [];
  let sumErr = 0;
  let maxErr = 0;
  let n = 0;
  for (let k = 0; k < 8; k++) {
    const pose = randomBoardView(cam, TEST_BOARD, rng, 35, 60);
    const img = renderChessboard(cam, pose, TEST_BOARD, { noise: 2, rng });
    const det = detectChessboardCorners(img, TEST_BOARD.cols, TEST_BOARD.rows);
    assert.ok(det.ok, `view ${k}: ${det.ok ? "" : det.reason}`);
    const truth = boardCorners(cam, pose, TEST_BOARD);
    det.corners.forEach((c, i) => {
      const e = Math.hypot(c[0] - truth[i][0], c[1] - truth[i][1]);
      sumErr += e;
      maxErr = Math.max(maxErr, e);
      n++;
    });
    views.push({ object: obj, image: det.corners });
  }
  console.log(`corner detection: mean error ${(sumErr / n).toFixed(3)} px, max ${maxErr.toFixed(3)} px over ${n} corners`);
  assert.ok(sumErr / n < 0.15, `mean corner error ${sumErr / n}`);
  assert.ok(maxErr < 0.6, `max corner error ${maxErr}`);
  const r = calibrateIntrinsics(views, { width: cam.width, height: cam.height });
  console.log(`intrinsics from rendered images: fx ${r.camera.fx.toFixed(2)} fy ${r.camera.fy.toFixed(2)} rms ${r.rms.toFixed(3)} px`);
  assert.ok(Math.abs(r.camera.fx - cam.fx) / cam.fx < 0.01);
  // A blank image: a reason, not a throw.
  const blank = { width: 64, height: 48, data: new Uint8Array(64 * 48).fill(128) };
  const d = detectChessboardCorners(blank, 9, 6);
  assert.equal(d.ok, false);
  void project;
});
