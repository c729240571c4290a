/**
 * `multi_push`: the language-conditioned variant of push_cube — a red and a blue cube, a left and a right target,
 * and an instruction saying which cube goes where ("push the blue cube to the left target"). Left and right are
 * the robot's (+y is its left; the arm faces +x). Everything here is a pure function of the seed or the text, except
 * setUpMultiPush, which writes a layout into a MuJoCo scene's arrays.
 */
import type { Rng } from "./rng.ts";

/** Which cube. */
export type CubeColor = "red" | "blue";
/** Which target, from the robot's point of view (+y = left). */
export type TargetSide = "left" | "right";

/** What an episode of multi_push asks for. */
export interface MultiPushGoal {
  color: CubeColor;
  side: TargetSide;
}

/**
 * Instruction templates. Several phrasings per goal, so the tokenizer and the policy see a vocabulary rather than
 * four fixed strings; `{color}` / `{side}` are filled from the goal.
 */
export const INSTRUCTION_TEMPLATES: readonly string[] = [
  "push the {color} cube to the {side} target",
  "move the {color} block onto the {side} target",
  "slide the {color} cube to the {side}",
  "put the {color} cube on the {side} goal",
  "{color} cube to the {side} target",
];

/** The instruction of `goal` in template `template` (index into INSTRUCTION_TEMPLATES, wrapped). */
export function instructionFor(goal: MultiPushGoal, template = 0): string {
  const n = INSTRUCTION_TEMPLATES.length;
  return INSTRUCTION_TEMPLATES[((template % n) + n) % n].replace("{color}", goal.color).replace("{side}", goal.side);
}

/** Every word the templates can produce: the task vocabulary the learner builds its tokenizer from. */
export function taskVocabulary(): string[] {
  const words = new Set<string>();
  for (const color of ["red", "blue"] as const) {
    for (const side of ["left", "right"] as const) {
      for (let i = 0; i < INSTRUCTION_TEMPLATES.length; i++) for (const w of instructionFor({ color, side }, i).split(" ")) words.add(w);
    }
  }
  return [...words].sort();
}

/**
 * Reads the goal out of free text: the first colour word and the first side word, case-insensitive ("Push the
 * BLUE cube to the left target, please" → blue/left). A part it cannot find is taken from `fallback` and listed
 * in `missing`, so an instruction with unknown words never stops an evaluation; the caller reports it.
 */
export function goalFromInstruction(text: string, fallback: MultiPushGoal): { goal: MultiPushGoal; missing: ("color" | "side")[] } {
  const words = text.toLowerCase().split(/[^a-z]+/).filter(Boolean);
  const color = words.find((w): w is CubeColor => w === "red" || w === "blue");
  const side = words.find((w): w is TargetSide => w === "left" || w === "right");
  const missing: ("color" | "side")[] = [];
  if (!color) missing.push("color");
  if (!side) missing.push("side");
  return { goal: { color: color ?? fallback.color, side: side ?? fallback.side }, missing };
}

/** Start layout of one multi_push episode. */
export interface MultiPushLayout {
  cubes: Record<CubeColor, { x: number; y: number; yaw: number }>;
  targets: Record<TargetSide, [number, number, number]>;
  goal: MultiPushGoal;
  instruction: string;
}

/** Where a multi_push layout's objects are drawn (m, robot frame): cube x near and far, cube |y|, target x and |y|. */
export interface MultiPushRanges {
  nearX: readonly [number, number];
  farX: readonly [number, number];
  cubeY: number;
  targetX: readonly [number, number];
  targetY: readonly [number, number];
}

/**
 * rlft_arm5's layout: one cube near the base (x 14–17 cm) and one far (25.5–27.5 cm), both within ±5 cm of the
 * centre line; the targets 13–16 cm to each side at x 19–24 cm. Pushing either cube sideways then rarely touches the
 * other, and every pusher stand-off stays inside the arm's reach.
 */
export const ARM5_MULTI_PUSH: MultiPushRanges = { nearX: [0.14, 0.17], farX: [0.255, 0.275], cubeY: 0.05, targetX: [0.19, 0.24], targetY: [0.13, 0.16] };

/** Draws a layout inside `r` (which colour is near, the goal and the phrasing at random). */
export function sampleMultiPush(rng: Rng, r: MultiPushRanges = ARM5_MULTI_PUSH): MultiPushLayout {
  const redNear = rng.next() < 0.5;
  const near = { x: rng.uniform(...r.nearX), y: rng.uniform(-r.cubeY, r.cubeY), yaw: rng.uniform(-Math.PI / 4, Math.PI / 4) };
  const far = { x: rng.uniform(...r.farX), y: rng.uniform(-r.cubeY, r.cubeY), yaw: rng.uniform(-Math.PI / 4, Math.PI / 4) };
  const targets: MultiPushLayout["targets"] = {
    left: [rng.uniform(...r.targetX), rng.uniform(...r.targetY), 0],
    right: [rng.uniform(...r.targetX), -rng.uniform(...r.targetY), 0],
  };
  const goal: MultiPushGoal = { color: rng.next() < 0.5 ? "red" : "blue", side: rng.next() < 0.5 ? "left" : "right" };
  const template = Math.floor(rng.next() * INSTRUCTION_TEMPLATES.length);
  return { cubes: { red: redNear ? near : far, blue: redNear ? far : near }, targets, goal, instruction: instructionFor(goal, template) };
}

/**
 * The goal and instruction of an episode laid out as `layout`: a fixed instruction (`rlft eval --instruction`) names
 * the goal, and what it does not name (colour, side) comes from the layout; otherwise the layout's own.
 */
export function episodeGoal(layout: MultiPushLayout, fixed: string | undefined): { goal: MultiPushGoal; instruction: string } {
  return fixed === undefined ? { goal: layout.goal, instruction: layout.instruction } : { goal: goalFromInstruction(fixed, layout.goal).goal, instruction: fixed };
}

/** Where a scene keeps each multi_push object: cube qpos addresses and bodies by colour, target mocap ids by side. */
export interface MultiPushIds {
  cubeQpos: Record<CubeColor, number>;
  cubeBody: Record<CubeColor, number>;
  targetMocap: Record<TargetSide, number>;
}

/**
 * Sets up an episode in a MuJoCo scene: both cubes (via `placeCube`) and both target discs (`mocapPos`) where `layout`
 * has them; returns the goal and instruction ({@link episodeGoal}) and the instructed cube's and target's ids.
 */
export function setUpMultiPush(
  layout: MultiPushLayout,
  fixed: string | undefined,
  ids: MultiPushIds,
  mocapPos: Float64Array,
  placeCube: (c: { x: number; y: number; yaw: number }, qposAdr: number) => void,
): { goal: MultiPushGoal; instruction: string; cubeQpos: number; cubeBody: number; targetMocap: number } {
  const { goal, instruction } = episodeGoal(layout, fixed);
  for (const color of ["red", "blue"] as const) placeCube(layout.cubes[color], ids.cubeQpos[color]);
  for (const side of ["left", "right"] as const) mocapPos.set(layout.targets[side], 3 * ids.targetMocap[side]);
  return { goal, instruction, cubeQpos: ids.cubeQpos[goal.color], cubeBody: ids.cubeBody[goal.color], targetMocap: ids.targetMocap[goal.side] };
}
