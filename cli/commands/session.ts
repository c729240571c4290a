/** `rlft session`: online fine-tuning with a learner, a supervising operator and live policy swaps. */
import { Option, type Command } from "commander";
import { integer, tcpPort } from "../numberOption.ts";
import { resolve } from "node:path";
import { loadLaunch, setTask } from "../../launch/LaunchConfig.ts";
import { runSession, type SessionStatus } from "../../app/session.ts";
import { fitCameraToPolicy } from "../../app/policyCamera.ts";
import { learnerOverrides } from "../../app/learnerOverrides.ts";
import { Telemetry } from "../../telemetry/Telemetry.ts";
import { progress } from "../../app/progress.ts";
import { wilson } from "../../data/stats.ts";
import { openLeaderArm } from "../../hardware/servo/openLeaderArm.ts";

/** One status line: what an operator watches during a session. */
export function statusLine(s: SessionStatus): string {
  return [
    `success(${Math.min(20, s.episode)}) ${(100 * s.rollingSuccess).toFixed(0)}%`,
    `interventions ${(100 * s.interventionRate).toFixed(0)}%`,
    `learner ${s.learnerUpdates} upd (${s.updatesPerSec.toFixed(0)}/s)`,
    `acked ${s.transitionsAcked}/${s.transitionsSent}`,
    `policy ${s.policyVersion}`,
  ].join(" | ");
}

/** Registers session on `program`. */
export function registerSessionCommand(program: Command): void {
  program
    .command("session")
    .description("Online fine-tuning: episodes with a policy + scripted operator, experience to the learner, residual policies swapped in live")
    .argument("<launch>", "launch file (actor.package = the BC base package)")
    .option("--learner [endpoint]", "start a learner (no value) or use the one at this experience endpoint, e.g. tcp://learner:5555")
    .option("--policy-endpoint <endpoint>", "the learner's policy PUB when --learner names a running one (default: learner.policy in the launch file)")
    .option("--policy <dir>", "base policy package (overrides actor.package)")
    .option("--episodes <n>", "online episodes", integer({ min: 1 }), 100)
    .option("--seed <n>", "first seed (episode i of the run directory uses seed+i; a restarted session continues)", integer({ min: 0 }), 2000)
    .option("--out <dir>", "run directory (learner run, spool, policy cache, episodes)", "runs/session")
    .option("--no-operator", "no operator at all (autonomous only)")
    .addOption(new Option("--operator <kind>", "who supervises: a person through the web UI / a teleop device, or the scripted operator (sim)").choices(["ui", "keyboard", "gamepad", "spacemouse", "leader", "scripted"]))
    .option("--leader-port <port>", "--operator leader: the leader arm's serial port (default teleop.leader.port)")
    .addOption(new Option("--leader-bus <kind>", "--operator leader: the leader arm's servo bus (default teleop.leader.protocol)").choices(["feetech", "dynamixel"]))
    .option("--leader-calibration <file>", "--operator leader: the leader's `rlft calibrate arm` file (default: the follower's driver.joints zeros)")
    .option("--offline", "no learner: record episodes (with interventions and operator labels) only; any actor")
    .option("--ui-port <port>", "operator UI port (0 = a free one; default ui.port of the launch file)", tcpPort({ allowZero: true }))
    .option("--no-pace", "do not hold the sim back for the learner (sim clock only)")
    .option("--task <task>", "rlft_arm5: reach | push_cube | peg_insert | multi_push; so101: reach | push_cube | pick_place | multi_push; a gym launch file: the env's task name (overrides the launch file's task)")
    .option("--learner-config <file>", "learner config YAML, e.g. learner/presets/peg_insert.yaml (per-task presets; learner/presets/)")
    .option("--learner-set <key=value...>", "learner config overrides on top of --learner-config, e.g. utd=2 critic_heads=4")
    .option("--telemetry <url>", "write metrics to this InfluxDB v2 write API (InfluxDB 2, victoria-metrics), e.g. http://127.0.0.1:8428 (docs/telemetry.md)")
    .option("--telemetry-token <token>", "InfluxDB token (default $INFLUX_TOKEN)")
    .addHelpText("after", "\nExamples:\n  rlft session launch/sim_push.yaml --learner --policy runs/demo/package --episodes 100\n  rlft session launch/sim_push.yaml --task peg_insert --learner --policy runs/peg/package --learner-config learner/presets/peg_insert.yaml\n  rlft session launch/sim_push.yaml --learner --operator ui        # prints the UI URL; a person supervises\n  rlft session launch/sim_push.yaml --offline --operator gamepad --episodes 20\n  rlft session launch/so100.yaml --offline --operator leader --leader-port /dev/ttyACM1 --leader-bus feetech\n  rlft session launch/sim_push.yaml --learner tcp://gpu-box:5555 --policy-endpoint tcp://gpu-box:5556\n  rlft session launch/sim_push.yaml --learner --policy runs/demo/package --telemetry http://127.0.0.1:8428\n\nCtrl-C ends cleanly: the episode is closed, the spool flushed, the learner checkpointed.\n")
    .action(async (file: string, o) => {
      const cfg = loadLaunch(file);
      // Checked against the launch file's driver: the sim robot's tasks, or a gym env's own task name.
      if (o.task !== undefined) setTask(cfg, o.task);
      if (o.policy) cfg.actor = { ...cfg.actor, kind: "policy", package: o.policy };
      if (await fitCameraToPolicy(cfg)) console.error(`note: ${cfg.actor.package} is a VLA: the camera runs at the control rate (${cfg.control_hz} Hz), as in its training data`);
      cfg.operator.enabled = o.operator !== false;
      if (typeof o.operator === "string") cfg.operator.kind = o.operator as typeof cfg.operator.kind;
      const human = cfg.operator.enabled && cfg.operator.kind !== "scripted";
      if (human) {
        // A person works in real time: the sim clock would run faster than anyone can react.
        if (cfg.clock === "sim") console.error("note: a person operates this session, so the clock is wall time (the launch file says sim)");
        cfg.clock = "wall";
        cfg.ui.enabled = true;
      }
      if (o.uiPort !== undefined) cfg.ui.port = o.uiPort;
      const overrides = learnerOverrides(o.learnerConfig, (o.learnerSet as string[] | undefined) ?? []);
      let stopResolve: () => void = () => undefined;
      const stop = new Promise<void>((r) => (stopResolve = r));
      process.once("SIGINT", () => {
        console.error("\nstopping: closing the episode, flushing the spool, checkpointing the learner ...");
        stopResolve();
      });
      // The leader arm: its bus opens torque-off so the operator moves it by hand; the follower mirrors it on takeover.
      const leaderSource =
        human && cfg.operator.kind === "leader"
          ? await openLeaderArm(cfg, { port: o.leaderPort ?? cfg.teleop.leader.port, bus: o.leaderBus ?? cfg.teleop.leader.protocol, calibration: o.leaderCalibration })
          : undefined;
      if (leaderSource) console.log(`leader arm: ${leaderSource.path} (${leaderSource.jointNames.length} joints, torque off)`);
      const bar = progress("session", o.episodes, { unit: "episodes" });
      const telemetry = o.telemetry ? Telemetry.create({ url: o.telemetry, token: o.telemetryToken ?? process.env.INFLUX_TOKEN, tags: { robot: cfg.learner.robot_id, task: cfg.task } }) : undefined;
      const res = await runSession({
        config: cfg,
        learner: o.offline ? false : o.learner === undefined ? cfg.learner.experience : o.learner,
        policyEndpoint: o.policyEndpoint,
        episodes: o.episodes,
        seed: o.seed,
        out: o.out,
        learnerConfig: overrides,
        pace: o.pace && cfg.clock === "sim",
        onReady: (stack) => {
          const st = stack.station;
          if (st?.ui) console.log(`operator UI: ${st.ui.url}`);
          if (st?.mqtt) console.log(`MQTT: ${st.broker ? `${st.broker.url} (in-process broker)` : cfg.mqtt.url} — status on ${st.mqtt.topics.status}, commands on ${st.mqtt.topics.cmd}`);
          if (human) console.log(`operator: ${cfg.operator.kind}; press Start in the UI (or n) to begin each episode`);
        },
        stop,
        onStatus: (s) => bar.update(s.episode, { "": statusLine(s) }),
        onPause: (why) => console.error(why === null ? "\nresumed" : `\npaused: ${why}`),
        onNote: (line) => console.error(`note: ${line}`),
        telemetry,
        leaderSource,
      });
      bar.stop();
      await telemetry?.close();
      if (telemetry) console.log(`telemetry: ${telemetry.stats().written} points written, ${telemetry.stats().dropped} dropped`);
      if (res.pauses.length) console.log(`paused ${res.pauses.length}×: ${res.pauses.map((p) => p.split(";")[0]).join(" | ")}`);
      const ok = res.episodes.filter((e) => e.outcome === "success").length;
      const w = wilson(ok, res.episodes.length);
      console.log(`episodes ${res.episodes.length}${res.stoppedEarly ? " (stopped early)" : ""}, success ${(100 * w.p).toFixed(1)}% [${(100 * w.lo).toFixed(1)}, ${(100 * w.hi).toFixed(1)}]`);
      console.log(`transitions acked by the learner: ${res.transitions.acked}/${res.transitions.pushed}; learner updates ${res.learnerUpdates}`);
      console.log(`final policy: ${res.finalVersion}${res.finalPolicyDir ? ` (${res.finalPolicyDir})` : ""}`);
      console.log(`run directory: ${resolve(o.out)}`);
    });
}
