/**
 * Any Gymnasium environment as the robot: `driver: {kind: gym, env: <id>, ...}` (GymArmDriver.ts). The launch file maps
 * the env's action vector to joints (names and limits), the observation keys to /observation names, image keys to
 * cameras, and what counts as success. docs/hardware.md, "A Gymnasium environment as the robot".
 */
import { z } from "zod";
import { defineDriver } from "../driverEntry.ts";
import { GymArmDriver } from "./GymArmDriver.ts";

const name = z.string().regex(/^[A-Za-z_][A-Za-z0-9_.]*$/, "letters, digits, _ and . (it becomes a joint or observation name)");

export const gymDriver = defineDriver({
  kind: "gym",
  configSchema: z
    .object({
      kind: z.literal("gym"),
      /** The registered environment id, made with gymnasium.make(env, **kwargs). */
      env: z.string().min(1),
      /** Keyword arguments of gymnasium.make (JSON values). */
      kwargs: z.record(z.string(), z.unknown()).default({}),
      /** Python modules imported first so that they register their ids (e.g. gym_hil). */
      modules: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/, "a Python module name")).default([]),
      /** The action vector: one joint per value, with the command limits the safety supervisor enforces. */
      action: z
        .object({
          names: z.array(name).min(1),
          lower: z.array(z.number()),
          upper: z.array(z.number()),
          /** Recorded unit of every joint (e.g. "m/s", "rad"; "" for a normalised action). */
          unit: z.string().default(""),
          /** The action held until the first command (default 0, clamped into the limits). */
          initial: z.array(z.number()).optional(),
          /**
           * true: the action is a step (a delta or a velocity), and `initial` is the one that stands still. The joints
           * then read as `initial`, so that what the safety supervisor does with the measured position — hold it
           * (watchdog, e-stop, pause), bound each command to max_step from it — stands the robot still and bounds the
           * step. false (default): the action is a position target, and the joints read as the last action applied.
           */
          delta: z.boolean().default(false),
        })
        .strict(),
      /** /observation: each observation key (`a/b` inside nested dicts, "" for a Box observation) with one name per value. */
      observation: z.array(z.object({ key: z.string().default(""), names: z.array(name).min(1) }).strict()).min(1),
      /** Camera name → image key (height × width × 3 uint8); published on /camera/<name>/image. */
      cameras: z.record(z.string().regex(/^[a-z][a-z0-9_]*$/, "lower-case letters, digits and _"), z.string()).default({}),
      /** Success: the info key that says so (e.g. is_success); absent: `terminated` is success. */
      success: z.object({ info: z.string().min(1).optional() }).strict().default({}),
      /**
       * A scripted expert in Python, `module:factory`: factory(env.unwrapped) returns an object with act(obs) -> action
       * (it may read the env's privileged state) and optionally reset(seed). `actor.kind: expert` then runs it.
       */
      expert: z.string().regex(/^[A-Za-z_][\w.]*:[A-Za-z_]\w*$/, "module:attribute").optional(),
      /** Keyword arguments of the expert's factory. */
      expert_kwargs: z.record(z.string(), z.unknown()).default({}),
      /**
       * A scripted operator in Python, `module:factory`: factory(env.unwrapped) returns an object with observe(obs) ->
       * the action while it has taken over, else None (and optionally reset(seed)). `operator: {enabled: true, kind:
       * scripted}` then runs it: its interventions reach the arbiter as the sim's scripted operator's do.
       */
      operator: z.string().regex(/^[A-Za-z_][\w.]*:[A-Za-z_]\w*$/, "module:attribute").optional(),
      /** Keyword arguments of the operator's factory (e.g. patience_steps). */
      operator_kwargs: z.record(z.string(), z.unknown()).default({}),
      /** A step (or reset) not answered within this many seconds is a fault. */
      step_timeout_sec: z.number().positive().max(600).default(30),
      /** How long making the environment may take. */
      start_timeout_sec: z.number().positive().max(3600).default(120),
    })
    .strict(),
  create: async (cfg) => new GymArmDriver(cfg),
  joints: (cfg) => cfg.action.names.map((n, i) => ({ name: n, unit: cfg.action.unit, lower: cfg.action.lower[i], upper: cfg.action.upper[i] })),
  contract: async () => (await import("./contractFixture.ts")).gymFixture,
  example: { env: "rlft/PointReach-v0", modules: ["rlft_learner.gym_testenv"], action: { names: ["x", "y"], lower: [-1, -1], upper: [1, 1] }, observation: [{ key: "agent_pos", names: ["pos_x", "pos_y"] }] },
});
