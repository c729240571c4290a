/**
 * What `rlft calibrate ...` does, as functions the command and the tests call: camera intrinsics from
 * chessboard images, hand-eye from robot poses + images, the servo-arm routine, and synthetic scenes.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { z } from "zod";
import { boardPoints, parseBoardSize, renderChessboard, type Chessboard } from "../calibration/Chessboard.ts";
import { calibrateIntrinsics, type CalibrationView } from "../calibration/calibrateIntrinsics.ts";
import { calibrateHandEye, type HandEyeMethod, type HandEyeMode } from "../calibration/calibrateHandEye.ts";
import { cameraFromFile, loadIntrinsics, poseToJson, type HandEyeFile, type IntrinsicsFile } from "../calibration/CalibrationFiles.ts";
import { detectChessboardCorners } from "../calibration/detectChessboardCorners.ts";
import { readGrayImage, writePgm } from "../calibration/GrayImage.ts";
import type { Point2 } from "../calibration/homography.ts";
import { matrixFromQuaternion, type Pose } from "../calibration/rotation.ts";
import { solvePlanarPose } from "../calibration/solvePlanarPose.ts";
import { TEST_BOARD, TEST_CAMERA, handEyeScene, perturbPose, randomBoardView } from "../calibration/synthetic.ts";
import { createRng } from "../sim/rng.ts";

const IMAGE_EXT = /\.(png|jpe?g|bmp|pgm|ppm|tiff?)$/i;

/** Image files of a directory (sorted) or the given files. */
export function listImages(paths: string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    if (!existsSync(p)) throw new Error(`No such image or directory: ${p}`);
    if (statSync(p).isDirectory()) out.push(...readdirSync(p).filter((f) => IMAGE_EXT.test(f)).sort().map((f) => join(p, f)));
    else out.push(p);
  }
  if (out.length === 0) throw new Error(`No images (png, jpg, bmp, pgm, tiff) in ${paths.join(", ")}`);
  return out;
}

/** Log sink of the commands (tests capture it). */
export type Say = (line: string) => void;

/** Options of intrinsicsCommand. */
export interface IntrinsicsCommandOptions {
  images: string[];
  board: Chessboard;
  out: string;
  camera?: string;
  distortion?: boolean;
  say?: Say;
}

/** Detects the board in every image, calibrates, writes the intrinsics file, and reports what to redo. */
export function intrinsicsCommand(o: IntrinsicsCommandOptions): IntrinsicsFile {
  const say = o.say ?? console.log;
  const files = listImages(o.images);
  const views: CalibrationView[] = [];
  const used: string[] = [];
  let size: { width: number; height: number } | null = null;
  const obj = boardPoints(o.board);
  files.forEach((f, i) => {
    const img = readGrayImage(f);
    if (size && (img.width !== size.width || img.height !== size.height)) throw new Error(`${f} is ${img.width}×${img.height} but the first image is ${size.width}×${size.height}: use one camera mode for all views`);
    size = { width: img.width, height: img.height };
    const det = detectChessboardCorners(img, o.board.cols, o.board.rows);
    say(`[${i + 1}/${files.length}] ${f}: ${det.ok ? `${det.corners.length} corners` : `skipped — ${det.reason}`}`);
    if (det.ok) {
      views.push({ object: obj, image: det.corners });
      used.push(f);
    }
  });
  if (views.length < 3) throw new Error(`The board was found in ${views.length} of ${files.length} images; at least 3 are needed (10–20 recommended). Check --board (inner corners, e.g. 9x6) and that the whole board is visible`);
  const { width, height } = size!;
  const r = calibrateIntrinsics(views, { width, height, distortion: o.distortion ?? true });
  const c = r.camera;
  say(`fx ${c.fx.toFixed(2)} ± ${r.stdDev.fx.toFixed(2)}  fy ${c.fy.toFixed(2)} ± ${r.stdDev.fy.toFixed(2)}  cx ${c.cx.toFixed(2)}  cy ${c.cy.toFixed(2)}`);
  say(`k1 ${c.k1.toFixed(4)}  k2 ${c.k2.toFixed(4)}  p1 ${c.p1.toFixed(5)}  p2 ${c.p2.toFixed(5)}`);
  say(`reprojection error: RMS ${r.rms.toFixed(3)} px over ${views.length} views`);
  const med = [...r.perViewRms].sort((a, b) => a - b)[Math.floor(r.perViewRms.length / 2)];
  r.perViewRms.forEach((e, i) => {
    if (e > Math.max(2 * med, 1)) say(`  view ${used[i]} has RMS ${e.toFixed(2)} px (median ${med.toFixed(2)}): a blurred or mis-detected image; remove it and run again`);
  });
  if (views.length < 10) say(`only ${views.length} views: 10–20 views covering the image corners and tilted up to ±45° give steadier results`);
  const file: IntrinsicsFile = {
    format: "rlft-camera-intrinsics",
    version: 1,
    camera: o.camera ?? "camera",
    created_at: new Date().toISOString(),
    model: { ...c },
    rms_px: r.rms,
    per_view_rms_px: r.perViewRms,
    std_dev: r.stdDev,
    views: views.length,
    board: { cols: o.board.cols, rows: o.board.rows, square_m: o.board.square },
  };
  writeJson(o.out, file);
  say(`wrote ${o.out}`);
  return file;
}

const poseIn = z.object({ translation: z.array(z.number()).length(3), quaternion_xyzw: z.array(z.number()).length(4) }).strict();

/** The stations file `rlft calibrate hand-eye` reads: per station the robot pose and the image (or corners). */
export const StationsFileSchema = z
  .object({
    format: z.literal("rlft-hand-eye-stations"),
    version: z.literal(1),
    /** base←gripper from the robot's forward kinematics (metres, quaternion x y z w). */
    stations: z
      .array(
        z
          .object({
            robot: poseIn,
            /** Image file, relative to this file's folder. */
            image: z.string().optional(),
            /** Or the corners already detected (pixels, row-major). */
            corners: z.array(z.tuple([z.number(), z.number()])).optional(),
          })
          .strict(),
      )
      .min(3),
  })
  .strict();

/** Options of handEyeCommand. */
export interface HandEyeCommandOptions {
  stations: string;
  intrinsics: string;
  board: Chessboard;
  mode: HandEyeMode;
  method: HandEyeMethod;
  out: string;
  say?: Say;
}

/** Hand-eye from a stations file and the camera's intrinsics; writes the transform with residuals. */
export function handEyeCommand(o: HandEyeCommandOptions): HandEyeFile {
  const say = o.say ?? console.log;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(o.stations, "utf8"));
  } catch (e) {
    throw new Error(`Cannot read stations file ${o.stations}: ${(e as Error).message}`);
  }
  const parsed = StationsFileSchema.safeParse(raw);
  if (!parsed.success) throw new Error(`${o.stations}: not a valid stations file (${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")})`);
  const cam = cameraFromFile(loadIntrinsics(o.intrinsics));
  const obj = boardPoints(o.board);
  const robot: Pose[] = [];
  const target: Pose[] = [];
  const image: Point2[][] = [];
  parsed.data.stations.forEach((s, i) => {
    let corners: Point2[] | null = s.corners ?? null;
    if (!corners) {
      if (!s.image) throw new Error(`${o.stations}: station ${i} has neither "image" nor "corners"`);
      const det = detectChessboardCorners(readGrayImage(resolve(dirname(o.stations), s.image)), o.board.cols, o.board.rows);
      if (!det.ok) {
        say(`station ${i}: skipped — ${det.reason}`);
        return;
      }
      corners = det.corners;
    }
    if (corners.length !== obj.length) throw new Error(`${o.stations}: station ${i} has ${corners.length} corners, the ${o.board.cols}x${o.board.rows} board has ${obj.length}`);
    const pnp = solvePlanarPose(cam, obj, corners);
    say(`station ${i}: target at ${pnp.pose.t.map((v) => v.toFixed(3)).join(", ")} m, PnP RMS ${pnp.rms.toFixed(2)} px`);
    robot.push({ R: matrixFromQuaternion(s.robot.quaternion_xyzw), t: s.robot.translation });
    target.push(pnp.pose);
    image.push(corners);
  });
  const r = calibrateHandEye({ robot, target, mode: o.mode, method: o.method, observations: { camera: cam, object: obj, image } });
  const worst = r.stationResiduals.map((s, i) => ({ ...s, i })).sort((a, b) => b.mm - a.mm)[0];
  say(`${o.mode} (${o.method}, refined on reprojection): t = [${r.X.t.map((v) => v.toFixed(4)).join(", ")}] m`);
  say(`residuals: AX−XB mean ${r.pairResiduals.meanDeg.toFixed(3)}° / ${r.pairResiduals.meanMm.toFixed(2)} mm (max ${r.pairResiduals.maxDeg.toFixed(3)}° / ${r.pairResiduals.maxMm.toFixed(2)} mm), reprojection RMS ${r.reprojectionRms?.toFixed(3)} px`);
  say(`worst station: ${worst.i} (${worst.deg.toFixed(3)}°, ${worst.mm.toFixed(2)} mm from the consensus target pose)`);
  const file: HandEyeFile = {
    format: "rlft-hand-eye",
    version: 1,
    created_at: new Date().toISOString(),
    mode: o.mode,
    method: o.method,
    parent_frame: o.mode === "eye_in_hand" ? "tool0" : "base_link",
    child_frame: "camera_optical_frame",
    transform: poseToJson(r.X),
    closed_form: poseToJson(r.closedForm),
    residuals: { mean_deg: r.pairResiduals.meanDeg, max_deg: r.pairResiduals.maxDeg, mean_mm: r.pairResiduals.meanMm, max_mm: r.pairResiduals.maxMm, reprojection_rms_px: r.reprojectionRms },
    stations: robot.length,
  };
  writeJson(o.out, file);
  say(`wrote ${o.out}`);
  return file;
}

/** Options of renderBoardCommand. */
export interface RenderBoardOptions {
  out: string;
  views: number;
  seed: number;
  handEye?: HandEyeMode;
  say?: Say;
}

/**
 * Renders a synthetic data set with known ground truth (TEST_CAMERA, 9×6 board, 25 mm): PGM images, truth.json,
 * and with handEye a stations.json whose robot poses carry 1 mm / 0.1° noise.
 */
export function renderBoardCommand(o: RenderBoardOptions): void {
  const say = o.say ?? console.log;
  mkdirSync(o.out, { recursive: true });
  const rng = createRng(o.seed);
  const scene = o.handEye ? handEyeScene(o.handEye, o.views, TEST_CAMERA, TEST_BOARD, rng) : null;
  const poses = scene ? scene.target : Array.from({ length: o.views }, () => randomBoardView(TEST_CAMERA, TEST_BOARD, rng, 40, 40, [0.25, 0.5]));
  const names = poses.map((p, i) => {
    const name = `view_${String(i).padStart(3, "0")}.pgm`;
    writePgm(join(o.out, name), renderChessboard(TEST_CAMERA, p, TEST_BOARD, { noise: 2, rng }));
    return name;
  });
  writeJson(join(o.out, "truth.json"), { camera: TEST_CAMERA, board: TEST_BOARD, ...(scene ? { mode: o.handEye, X: poseToJson(scene.X), target: poseToJson(scene.targetPose) } : {}) });
  if (scene) {
    const stations = scene.robot.map((p, i) => ({ robot: poseToJson(perturbPose(p, 0.1, 0.001, rng)), image: names[i] }));
    writeJson(join(o.out, "stations.json"), { format: "rlft-hand-eye-stations", version: 1, stations });
  }
  say(`wrote ${names.length} images${scene ? " and stations.json" : ""} to ${o.out} (9x6 board, 25 mm squares; ground truth in truth.json)`);
}

function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Parses --board and --square into a Chessboard. */
export function boardOption(size: string, square: number): Chessboard {
  if (!(square > 0 && square < 1)) throw new Error(`--square ${square}: expected the side of one square in metres, e.g. 0.025`);
  return { ...parseBoardSize(size), square };
}
