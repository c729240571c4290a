/** Opens a servo bus on a serial port: the transport, the protocol of the family and the model table. */
import { SerialTransport } from "../transport/SerialTransport.ts";
import { ServoBus, type ServoBusOptions } from "./ServoBus.ts";
import { SERVO_PROTOCOLS, servoModel, type SERVO_MODELS } from "./servoModels.ts";

/** What to open. */
export interface OpenServoBusOptions extends ServoBusOptions {
  bus: keyof typeof SERVO_MODELS;
  port: string;
  baudRate: number;
  /** Model name of the servos (the bus's default model). */
  model: string;
}

/** Opens the port and returns the bus plus the function that closes both. */
export async function openServoBus(opts: OpenServoBusOptions): Promise<{ bus: ServoBus; close: () => Promise<void> }> {
  const model = servoModel(opts.bus, opts.model);
  const t = await SerialTransport.open(opts.port, { baudRate: opts.baudRate });
  const bus = new ServoBus(t, SERVO_PROTOCOLS[opts.bus], model, { timeoutMs: opts.timeoutMs, retries: opts.retries });
  return {
    bus,
    close: async () => {
      bus.dispose();
      await t.close();
    },
  };
}
