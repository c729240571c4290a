/** Feetech STS/SCS bus arms (SO-100, SO-101) as a registered driver: `driver: {kind: feetech}`. */
import { z } from "zod";
import { defineDriver } from "../driverEntry.ts";
import { servoCommon, servoEntryParts } from "../servo/servoDriver.ts";

export const feetechDriver = defineDriver({
  kind: "feetech",
  configSchema: z
    .object({
      kind: z.literal("feetech"),
      ...servoCommon,
      /** STS3215 factory default: 1 Mbps. */
      baud: z.number().int().positive().default(1_000_000),
      model: z.enum(["sts3215"]).default("sts3215"),
    })
    .strict(),
  ...servoEntryParts,
  contract: async () => (await import("../servo/contractFixture.ts")).servoFixture("feetech"),
});
