/** Universal Robots e-Series over RTDE as a registered driver: `driver: {kind: ur_rtde}`. */
import { z } from "zod";
import { defineDriver } from "../driverEntry.ts";
import { bounded } from "../../contracts/physicalBounds.ts";
import { UrRtdeDriver } from "./UrRtdeDriver.ts";

export const urRtdeDriver = defineDriver({
  kind: "ur_rtde",
  configSchema: z
    .object({
      kind: z.literal("ur_rtde"),
      /** Controller IP address. */
      host: z.string().default("192.168.1.10"),
      /** RTDE port (fixed by UR). */
      port: z.number().int().default(30004),
      /** Output rate: 500 Hz on e-Series, 125 Hz on CB3. */
      frequency: z.union([z.literal(125), z.literal(500)]).default(500),
      /** Send hardware/ur/rlft_servoj.script to the primary interface at activate (else load it as a program on the pendant). */
      upload_script: z.boolean().default(true),
      /** Primary client interface port: the script goes there and the controller's messages (refusals, stops) come back. */
      script_port: z.number().int().default(30001),
      /** servoj lookahead time (s, 0.03–0.2): smoother but later. */
      lookahead_time: z.number().min(0.03).max(0.2).default(0.1),
      /** servoj gain (100–2000): stiffer tracking. */
      gain: z.number().min(100).max(2000).default(300),
      /** The script stops the arm when no fresh target arrives for this long. */
      watchdog_sec: bounded("controller_watchdog").default(0.1),
      /** UR joint names; the order of actual_q. */
      joints: z.array(z.string()).length(6).default(["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"]),
      /** Joint limits (rad); default ±2π, narrow them to the cell. */
      lower: z.array(bounded("joint_range")).length(6).default(Array(6).fill(-2 * Math.PI)),
      upper: z.array(bounded("joint_range")).length(6).default(Array(6).fill(2 * Math.PI)),
      /** Socket connect deadline. */
      timeout_ms: z.number().int().positive().default(3000),
    })
    .strict(),
  create: async (cfg, ctx) =>
    new UrRtdeDriver({
      host: cfg.host,
      port: cfg.port,
      frequency: cfg.frequency,
      joints: cfg.joints,
      lower: cfg.lower,
      upper: cfg.upper,
      uploadScript: cfg.upload_script,
      scriptPort: cfg.script_port,
      lookaheadTime: cfg.lookahead_time,
      gain: cfg.gain,
      watchdogSec: cfg.watchdog_sec,
      timeoutMs: cfg.timeout_ms,
      logger: ctx.logger,
    }),
  joints: (cfg) => cfg.joints.map((name, i) => ({ name, unit: "rad", lower: cfg.lower[i], upper: cfg.upper[i] })),
  fromParams: (p) => ({ host: p.host, ...(p.port !== undefined ? { port: Number(p.port) } : {}), joints: p.joint_names, ...(p.joint_lower ? { lower: p.joint_lower } : {}), ...(p.joint_upper ? { upper: p.joint_upper } : {}) }),
  // The RTDE port is a number; `port=` arrives as a string.
  launchOverrides: (p) => ({ ...(p.port !== undefined ? { port: Number(p.port) } : {}), ...(p.host !== undefined ? { host: p.host } : {}) }),
  contract: async () => (await import("./contractFixture.ts")).urFixture,
  example: { host: "192.168.1.10" },
});
