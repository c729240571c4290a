/**
 * One line that names a servo fault the way an operator needs it: the joint, the servo (family, id, model), what
 * the servo reported in the vendor's terms, what the servo did about it and the fix.
 *
 * Dynamixel (e-Manual Protocol 2.0 §Status Packet "Error", X-series "Shutdown(63)" / "Hardware Error Status(70)"):
 * the status error byte has an error number (bits 0–6) and the Alert bit 7; Alert means Hardware Error Status is
 * not 0, read here to name the bits. A shutdown error switches torque off until a Reboot.
 * Feetech STS/SMS (SCServo protocol manual, status packet; memory table "Status" 65): the error byte is fault bits
 * (input voltage, angle sensor, overheat, overcurrent, angle, overload); torque is released for the bits set in
 * Unloading_Condition (19).
 */
import type { ServoBus } from "./ServoBus.ts";
import { hardwareErrorText } from "../dynamixel/dynamixelProtocol.ts";

/** What a fault line needs of a joint. */
export interface FaultJoint {
  name: string;
  id: number;
  model?: { name: string };
}

/** Describes the fault in status error byte `error` of `joint`'s servo (reads Hardware Error Status on Dynamixel). */
export async function describeServoFault(bus: ServoBus, joint: FaultJoint, error: number): Promise<string> {
  const who = `${joint.name} (${bus.protocol.name} id ${joint.id}, ${(joint.model ?? bus.model).name})`;
  if (bus.protocol.name === "dynamixel") {
    const parts: string[] = [];
    if (error & 0x7f) parts.push(bus.protocol.errorText(error & 0x7f));
    if (error & 0x80) {
      let hw = "Alert (hardware error)";
      try {
        const { value } = await bus.readStatus(joint.id, "Hardware_Error_Status");
        hw = hardwareErrorText(value);
      } catch {
        // the servo went silent: the Alert bit is all we know
      }
      parts.push(`${hw}: the servo shut down and switched its torque off`);
    }
    return `${who} reports ${parts.join("; ")} — find the cause (load, obstruction, supply voltage, temperature); rlft reboots the servo (Dynamixel Reboot instruction) when the arm is activated again, or power-cycle it`;
  }
  const text = bus.protocol.errorText(error) || `status error 0x${error.toString(16)}`;
  return `${who} reports ${text} (Feetech status bits 0x${error.toString(16).padStart(2, "0")}) — check ${/voltage/.test(text) ? "the supply voltage, " : ""}${/overheat/.test(text) ? "the temperature and duty cycle, " : ""}${/load|current/.test(text) ? "what the joint pushes against, " : ""}${/angle sensor/.test(text) ? "the servo's magnet/encoder, " : ""}${/angle error/.test(text) ? "the servo's angle limits against the joint's range, " : ""}then activate again (the servo releases its torque for the faults in Unloading_Condition)`;
}
