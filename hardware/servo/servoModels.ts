/** The servo models rlft knows, by the name launch files use. */
import type { ServoModel } from "./ServoModel.ts";
import type { ServoProtocol } from "./ServoProtocol.ts";
import { STS3215 } from "../feetech/STS3215.ts";
import { XL330 } from "../dynamixel/XL330.ts";
import { XL430 } from "../dynamixel/XL430.ts";
import { feetechProtocol } from "../feetech/feetechProtocol.ts";
import { dynamixelProtocol } from "../dynamixel/dynamixelProtocol.ts";

/** Models per bus family. */
export const SERVO_MODELS = {
  feetech: { sts3215: STS3215 },
  dynamixel: { xl330: XL330, xl430: XL430 },
} as const satisfies Record<string, Record<string, ServoModel>>;

/** The protocol of each bus family. */
export const SERVO_PROTOCOLS: Record<keyof typeof SERVO_MODELS, ServoProtocol> = { feetech: feetechProtocol, dynamixel: dynamixelProtocol };

/** A model by family and name, or an error listing the known names. */
export function servoModel(bus: keyof typeof SERVO_MODELS, name: string): ServoModel {
  const table = SERVO_MODELS[bus] as Record<string, ServoModel>;
  const m = table[name];
  if (!m) throw new Error(`unknown ${bus} servo model '${name}' (known: ${Object.keys(table).join(", ")})`);
  return m;
}
