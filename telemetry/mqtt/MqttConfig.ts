/** The `mqtt` section of a launch file: operator commands and robot status over an MQTT broker. */
import { z } from "zod";

/** Schema of the `mqtt` section. */
export const MqttSchema = z
  .object({
    /** Publish status and take commands over MQTT (rlft session turns it on for human operators). */
    enabled: z.boolean().default(false),
    /** Broker URL (mqtt://host:1883, mqtts://…). Absent: an in-process broker (aedes) serves the laptop case. */
    url: z.string().url().optional(),
    /** Port of the in-process broker when `url` is absent (0 = a free port, printed at start); loopback only. */
    embedded_port: z.number().int().min(0).max(65535).default(1883),
    /** Credentials for the broker (and required by the in-process broker when set). */
    username: z.string().optional(),
    password: z.string().optional(),
    /** Or read the password from this file. */
    password_file: z.string().optional(),
    /** Topics are <topic_prefix>/<robot_id>/status and <topic_prefix>/<robot_id>/cmd. */
    topic_prefix: z
      .string()
      .regex(/^[^#+]+$/, "topic_prefix: no MQTT wildcards (# or +)")
      .default("rlft"),
    /** Retained status updates per second (plus one on every episode event). */
    status_hz: z.number().positive().max(10).default(1),
    /** MQTT client id (default rlft-<robot_id>). */
    client_id: z.string().optional(),
  })
  .strict();

/** The parsed `mqtt` section. */
export type MqttConfig = z.infer<typeof MqttSchema>;

/** Defaults of the section. */
export const MQTT_DEFAULTS: MqttConfig = MqttSchema.parse({});
