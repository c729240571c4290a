/** `rlft calibrate intrinsics | hand-eye | arm | render-board`. */
import type { Command } from "commander";
import { decimal, integer, integerList } from "../numberOption.ts";
import { boardOption, handEyeCommand, intrinsicsCommand, renderBoardCommand } from "../../app/calibrate.ts";
import { armCommand } from "../../app/calibrateArm.ts";

const INTRINSICS_GUIDE = `
How to take the pictures (10–20 of them):
  - print the board flat (check one square with a ruler: that is --square), mount it on something rigid;
  - keep the whole board, with its white margin, in every picture, sharp (no motion blur);
  - cover the image: the board near each corner and edge, near and far, tilted up to ±45° in both directions.

Examples:
  rlft calibrate intrinsics --images runs/calib/wrist --board 9x6 --square 0.025 --out runs/calibration/wrist_camera.json
  rlft calibrate render-board --out /tmp/board --views 15 && rlft calibrate intrinsics --images /tmp/board --out /tmp/cam.json
`;

const HAND_EYE_GUIDE = `
Stations file (JSON): {"format": "rlft-hand-eye-stations", "version": 1, "stations": [
  {"robot": {"translation": [x, y, z], "quaternion_xyzw": [x, y, z, w]}, "image": "station_000.png"}, ...]}
robot = base←gripper from the controller's forward kinematics (UR: the TCP pose with the TCP offset set to zero).

How to choose stations (15 or more):
  - eye-in-hand: the board fixed on the table, the camera on the gripper; eye-to-hand: the camera fixed, the board on the gripper;
  - rotate the gripper 20–40° about different axes between stations (pure translations carry no information),
    and spread the board over the image and over 0.3–0.7 m of depth;
  - wait for the arm to settle before each picture.

Examples:
  rlft calibrate hand-eye --mode eye-in-hand --stations runs/handeye/stations.json --intrinsics runs/calibration/wrist_camera.json --out runs/calibration/hand_eye.json
  rlft calibrate render-board --out /tmp/he --views 15 --hand-eye eye-in-hand
`;

const ARM_GUIDE = `
The routine (LeRobot's): torque goes off; you move the arm to the middle of its range and press Enter; then you
move every joint through its whole range and press Enter. The file holds homing offsets and ranges per joint.

Examples:
  rlft calibrate arm --robot so100_follower --source feetech --port /dev/ttyACM0 --out runs/calibration/so100_follower.json
  rlft calibrate arm --robot sim_arm --source sim --yes --out /tmp/sim_arm.json     # try the flow without hardware
`;

const mode = (s: string) => {
  const m = s.replaceAll("-", "_");
  if (m !== "eye_in_hand" && m !== "eye_to_hand") throw new Error(`--mode ${s}: expected eye-in-hand (camera on the gripper) or eye-to-hand (camera fixed)`);
  return m as "eye_in_hand" | "eye_to_hand";
};

/** Registers `calibrate` and its subcommands on `program`. */
export function registerCalibrateCommand(program: Command): void {
  const cal = program
    .command("calibrate")
    .description("Calibrate a camera (intrinsics), a camera against the arm (hand-eye), or a servo arm (homing offsets and ranges)")
    .addHelpText("after", "\nExamples:\n  rlft calibrate intrinsics --images runs/calib --board 9x6 --square 0.025 --out cam.json\n  rlft calibrate hand-eye --mode eye-in-hand --stations stations.json --intrinsics cam.json --out hand_eye.json\n  rlft calibrate arm --robot so100_follower --source feetech --port /dev/ttyACM0 --out so100.json\n");

  cal
    .command("intrinsics")
    .description("Camera intrinsics (Zhang's method, k1 k2 p1 p2) from chessboard images; reports the reprojection error")
    .requiredOption("--images <paths...>", "image files or a folder of them")
    .option("--board <COLSxROWS>", "inner corners of the chessboard", "9x6")
    .option("--square <m>", "side of one square, metres", decimal({ min: 1e-4, max: 1 }), 0.025)
    .option("--camera <name>", "camera name stored in the file", "camera")
    .option("--no-distortion", "fit a distortion-free pinhole")
    .requiredOption("--out <file>", "intrinsics JSON to write")
    .addHelpText("after", INTRINSICS_GUIDE)
    .action((o) => {
      intrinsicsCommand({ images: o.images, board: boardOption(o.board, o.square), out: o.out, camera: o.camera, distortion: o.distortion });
    });

  cal
    .command("hand-eye")
    .description("Camera pose relative to the gripper (eye-in-hand) or the base (eye-to-hand): Tsai–Lenz or Park–Martin, refined on reprojection")
    .requiredOption("--mode <mode>", "eye-in-hand | eye-to-hand", mode)
    .requiredOption("--stations <file>", "stations JSON: robot pose + image per station")
    .requiredOption("--intrinsics <file>", "the camera's intrinsics (rlft calibrate intrinsics)")
    .option("--board <COLSxROWS>", "inner corners of the chessboard", "9x6")
    .option("--square <m>", "side of one square, metres", decimal({ min: 1e-4, max: 1 }), 0.025)
    .option("--method <m>", "tsai | park (closed form before refinement)", "park")
    .requiredOption("--out <file>", "hand-eye JSON to write")
    .addHelpText("after", HAND_EYE_GUIDE)
    .action((o) => {
      if (o.method !== "tsai" && o.method !== "park") throw new Error(`--method ${o.method}: expected tsai or park`);
      handEyeCommand({ stations: o.stations, intrinsics: o.intrinsics, board: boardOption(o.board, o.square), mode: o.mode, method: o.method, out: o.out });
    });

  cal
    .command("arm")
    .description("Servo arm homing offsets and ranges: move to the middle, then through the full range (guided)")
    .requiredOption("--robot <name>", "robot name, e.g. so100_follower (recorded into every episode)")
    .option("--source <bus>", "motor bus: sim, feetech, dynamixel", "sim")
    .option("--port <path>", "serial port of the bus, e.g. /dev/ttyACM0")
    .option("--baud <n>", "baud rate", integer({ min: 1 }))
    .option("--ids <ids...>", "servo ids in joint order", integerList({ min: 0, max: 253 }))
    .option("--motors <names...>", "joint names in id order (default: shoulder_pan shoulder_lift elbow_flex wrist_flex wrist_roll gripper)")
    .option("--model <name>", "servo model (feetech: sts3215; dynamixel: xl330, xl430)")
    .option("--full-turn <joints...>", "joints without end stops (default: wrist_roll when present)")
    .option("--yes", "no prompts: confirm the middle pose at once and record the sweep for --sweep-seconds")
    .option("--sweep-seconds <s>", "sweep length with --yes", decimal({ min: 0 }), 10)
    .requiredOption("--out <file>", "calibration JSON to write")
    .addHelpText("after", ARM_GUIDE)
    .action(async (o) => {
      await armCommand({ robot: o.robot, source: o.source, port: o.port, baud: o.baud, ids: o.ids, motors: o.motors, model: o.model, out: o.out, fullTurn: o.fullTurn, yes: o.yes, sweepSeconds: o.sweepSeconds });
    });

  cal
    .command("render-board")
    .description("Synthetic chessboard images with known ground truth (and hand-eye stations), to try the commands")
    .requiredOption("--out <dir>", "folder for the images, truth.json (and stations.json)")
    .option("--views <n>", "number of images", integer({ min: 1 }), 15)
    .option("--seed <n>", "random seed", integer({ min: 0 }), 0)
    .option("--hand-eye <mode>", "also write stations.json for eye-in-hand | eye-to-hand", mode)
    .addHelpText("after", "\nExample:\n  rlft calibrate render-board --out /tmp/he --views 15 --hand-eye eye-in-hand\n")
    .action((o) => renderBoardCommand({ out: o.out, views: o.views, seed: o.seed, handEye: o.handEye }));
}
