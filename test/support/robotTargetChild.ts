/**
 * A robot process to attack (issue 24): the sim stack on the wall clock with the scripted expert moving the arm, the
 * operator UI and the MQTT link on, the driver audited (test/faults/rig.ts auditDriver) and every operator command that
 * acts counted. Runs as a child of the attacker (RobotTarget.ts), so "the process stays up" is observed from outside.
 * Parent → child (IPC): {type: "stats"} → a {@link TargetStats} reply; {type: "stop"} → aborts, shuts down, exits 0.
 */
import { parseLaunch } from "../../launch/LaunchConfig.ts";
import { Stack } from "../../launch/Stack.ts";
import { auditDriver } from "../faults/rig.ts";
import type { CommandRequest, CommandResult } from "../../contracts/operator.ts";

/** What the parent passes (JSON, argv[2]). */
export interface TargetConfig {
  robot: string;
  /** Operator UI with this token (absent: no UI). */
  uiToken?: string;
  /** MQTT: a broker URL, or absent for the in-process broker; credentials for either. */
  mqtt?: { url?: string; username?: string; password?: string; clientId?: string };
}

/** What the child reports. */
export interface TargetStats {
  pid: number;
  rss: number;
  heapUsed: number;
  uiUrl: string | null;
  brokerUrl: string | null;
  running: boolean;
  paused: boolean;
  estopped: boolean;
  /** Operator commands that acted (ok: true), by source and command. */
  acted: { from: string; cmd: string }[];
  uiRefused: Record<string, number> | null;
  consoleRejected: Record<string, number>;
  link: Record<string, number> | null;
  linkDrops: number;
  brokerRefused: Record<string, number> | null;
  driverWrites: number;
  unsafe: number;
  safety: Record<string, number>;
}

const cfg = JSON.parse(process.argv[2]) as TargetConfig;
const m = cfg.mqtt;
const stack = await Stack.create(
  parseLaunch(
    [
      "task: push_cube",
      "clock: wall",
      "control_hz: 20",
      "actor: {kind: expert}",
      "camera: {enabled: false}",
      "recorder: {enabled: false}",
      "operator: {enabled: true, kind: ui}",
      "episodes: {max_steps: 1000000}",
      "reward: {sim_ground_truth: false}",
      `learner: {robot_id: ${JSON.stringify(cfg.robot)}}`,
      `ui: {enabled: ${cfg.uiToken !== undefined}, port: 0${cfg.uiToken ? `, token: ${JSON.stringify(cfg.uiToken)}` : ""}}`,
      m
        ? `mqtt: {enabled: true, embedded_port: 0, status_hz: 2${m.url ? `, url: ${JSON.stringify(m.url)}` : ""}${m.username ? `, username: ${JSON.stringify(m.username)}` : ""}${m.password ? `, password: ${JSON.stringify(m.password)}` : ""}${m.clientId ? `, client_id: ${JSON.stringify(m.clientId)}` : ""}}`
        : "mqtt: {enabled: false}",
    ].join("\n"),
    "robot-target.yaml",
  ),
  { quiet: true, operatorGate: false },
);
const audit = auditDriver(stack);
const station = stack.station!;
const acted: TargetStats["acted"] = [];
const command = station.console.command.bind(station.console);
station.console.command = (req: CommandRequest): CommandResult => {
  const r = command(req);
  if (r.ok) acted.push({ from: req.from, cmd: req.cmd });
  return r;
};
let linkDrops = 0;
station.mqtt?.client.on("close", () => linkDrops++);
const run = stack.runEpisodes({ count: 1, seed: 3 });
run.catch((e: Error) => console.error(`robot target: ${e.message}`));

const stats = (): TargetStats => ({
  pid: process.pid,
  rss: process.memoryUsage().rss,
  heapUsed: process.memoryUsage().heapUsed,
  uiUrl: station.ui?.url ?? null,
  brokerUrl: station.broker?.url ?? m?.url ?? null,
  running: stack.manager.running,
  paused: stack.manager.paused,
  estopped: stack.safety.estopped,
  acted: [...acted],
  uiRefused: station.ui ? { ...station.ui.refused } : null,
  consoleRejected: { ...station.console.rejected },
  link: station.mqtt ? { ...station.mqtt.stats } : null,
  linkDrops,
  brokerRefused: station.broker ? { ...station.broker.refused } : null,
  driverWrites: audit.writes,
  unsafe: audit.unsafe,
  safety: { ...stack.safety.counts },
});

process.on("message", (msg: { type: string }) => {
  if (msg.type === "stats") process.send!({ type: "stats", stats: stats() });
  else if (msg.type === "stop") {
    void (async () => {
      station.console.command({ cmd: "abort", from: "test" });
      await run.catch(() => undefined);
      await stack.shutdown();
      process.exit(0);
    })();
  }
});
// Ready once the episode runs and the arm moves.
const t0 = Date.now();
while (!(stack.manager.running && audit.writes > 5) && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 20));
process.send!({ type: "ready", stats: stats() });
