/** The MuJoCo arm as a registered driver (`driver: {kind: sim}`): the launch file's robot and task pick the world. */
import { z } from "zod";
import { defineDriver } from "../driverEntry.ts";
import { SimArmDriver } from "./SimArmDriver.ts";
import { SIM_ROBOT_MODELS } from "../../sim/ArmSim.ts";
import { taskSpec, type SimRobotName, type TaskName } from "../../sim/tasks.ts";

export const simDriver = defineDriver({
  kind: "sim",
  configSchema: z
    .object({
      kind: z.literal("sim"),
      /** Jitter friction and mass from the seed (domain randomisation). */
      randomize_physics: z.boolean().default(false),
    })
    .strict(),
  create: async (cfg, ctx) =>
    SimArmDriver.create({ robot: ctx.robot as SimRobotName | undefined, task: ctx.task as TaskName, controlHz: ctx.controlHz, randomizePhysics: cfg.randomize_physics, instruction: ctx.instruction }),
  joints: (_cfg, ctx) => {
    const m = SIM_ROBOT_MODELS[taskSpec(ctx.robot, ctx.task).robot];
    return m.jointNames.map((name, i) => ({ name, unit: m.units[i], lower: m.jointLower[i], upper: m.jointUpper[i] }));
  },
  fromParams: () => ({}),
  contract: async () => (await import("./contractFixture.ts")).simFixture,
  example: {},
});
