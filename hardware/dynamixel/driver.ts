/** Dynamixel Protocol 2.0 bus arms (Koch) as a registered driver: `driver: {kind: dynamixel}`. */
import { z } from "zod";
import { defineDriver } from "../driverEntry.ts";
import { servoCommon, servoEntryParts } from "../servo/servoDriver.ts";

export const dynamixelDriver = defineDriver({
  kind: "dynamixel",
  configSchema: z
    .object({
      kind: z.literal("dynamixel"),
      ...servoCommon,
      /** X-series factory default is 57600; Koch setups usually switch to 1 Mbps. */
      baud: z.number().int().positive().default(1_000_000),
      model: z.enum(["xl330", "xl430"]).default("xl330"),
      /** Bus Watchdog (ms, multiple of 20; 0 = off): the servos stop by themselves if rlft goes silent. */
      bus_watchdog_ms: z.number().int().min(0).max(2540).default(100),
    })
    .strict(),
  ...servoEntryParts,
  contract: async () => (await import("../servo/contractFixture.ts")).servoFixture("dynamixel"),
});
