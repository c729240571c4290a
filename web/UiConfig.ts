/** The `ui` section of a launch file: where the operator web UI is served and who may use it. */
import { z } from "zod";

/** Schema of the `ui` section. */
export const UiSchema = z
  .object({
    /** Serve the UI (rlft session turns it on for human operators). */
    enabled: z.boolean().default(false),
    /** Loopback by default: nothing on the network can press buttons. Any other address needs a token. */
    host: z.string().default("127.0.0.1"),
    /** TCP port; 0 picks a free one (printed at start). */
    port: z.number().int().min(0).max(65535).default(8080),
    /** Access token: the UI URL carries it (?token=…), the API takes it as `Authorization: Bearer …`. */
    token: z.string().min(16, "ui.token: use at least 16 characters (e.g. openssl rand -hex 16)").optional(),
    /** Or read the token from this file (keeps it out of launch files in git). */
    token_file: z.string().optional(),
    /** Camera frames per second sent to each browser. */
    camera_fps: z.number().positive().max(30).default(5),
  })
  .strict();

/** The parsed `ui` section. */
export type UiConfig = z.infer<typeof UiSchema>;

/** Defaults of the section. */
export const UI_DEFAULTS: UiConfig = UiSchema.parse({});
