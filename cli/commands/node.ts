/** `rlft node <executable>`: one node executable in its own process, on ROS 2 (default) or the embedded runtime. */
import type { Command } from "commander";
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { createRuntime } from "../../runtime/index.ts";
import { NODE_EXECUTABLES, checkParams, parseParamArgs } from "../../launch/nodeExecutables.ts";
import { paramValue } from "../../launch/ros2LaunchXml.ts";

/** Reads a parameters file: flat YAML, or ROS 2 style `<node>: {ros__parameters: {...}}`. */
function paramsFile(path: string, exe: string): Record<string, unknown> {
  const doc = (parseYaml(readFileSync(path, "utf8")) ?? {}) as Record<string, unknown>;
  const ros = (doc[exe] ?? doc["/**"]) as { ros__parameters?: Record<string, unknown> } | undefined;
  return ros?.ros__parameters ?? doc;
}

/** Registers `node` on `program`. */
export function registerNodeCommand(program: Command): void {
  program
    .command("node")
    .description("Run one node executable (what launch/ros2/*.launch.xml starts), on ROS 2 through rclnodejs or on the embedded runtime")
    .argument("[executable]", `one of: ${Object.keys(NODE_EXECUTABLES).join(", ")}`)
    .option("--runtime <kind>", "ros2 | embedded", "ros2")
    .option("--clock <kind>", "wall | sim (ROS 2: use_sim_time, /clock from elsewhere)", "wall")
    .option("--param <key=value...>", "parameters, e.g. --param task=push_cube --param control_hz=10", (v: string, prev: string[] = []) => [...prev, v])
    .option("--params-file <file>", "YAML parameters (flat, or ROS 2 style with ros__parameters)")
    .option("--list", "list the executables and their parameters")
    .addHelpText("after", "\nExamples:\n  rlft node --list\n  rlft node sim --param task=push_cube --param control_hz=10            # on ROS 2 (source /opt/ros/jazzy/setup.bash)\n  rlft node safety_supervisor --param calibration=runs/calibration/so100.json\n  ros2 launch launch/ros2/sim.launch.xml                                # all of them\n")
    .action(async (executable: string | undefined, o) => {
      if (o.list || !executable) {
        for (const [name, exe] of Object.entries(NODE_EXECUTABLES)) console.log(`${name.padEnd(22)} ${exe.description}\n${"".padEnd(22)} parameters: ${Object.keys(exe.params.shape).join(", ")}`);
        return;
      }
      const raw = { ...(o.paramsFile ? paramsFile(o.paramsFile, executable) : {}), ...parseParamArgs(o.param ?? [], paramValue) };
      const params = checkParams(executable, raw);
      if (o.runtime !== "ros2" && o.runtime !== "embedded") throw new Error(`--runtime ${o.runtime}: expected ros2 or embedded`);
      if (o.runtime === "embedded" && o.clock === "sim") throw new Error("--clock sim with --runtime embedded: nothing would step the clock in a lone process; use --clock wall");
      const runtime = await createRuntime(o.runtime, { clock: o.clock, logLevel: "info" });
      const started = await NODE_EXECUTABLES[executable].start(runtime, params);
      for (const n of started.nodes) await n.configure();
      for (const n of started.nodes) await n.activate();
      let stopping = false;
      const stop = async () => {
        if (stopping) return;
        stopping = true;
        for (const n of [...started.nodes].reverse()) await n.shutdown();
        await started.close?.();
        await runtime.shutdown();
      };
      const onSignal = () => void stop().then(() => process.exit(0));
      process.once("SIGINT", onSignal);
      process.once("SIGTERM", onSignal);
      if (started.done) {
        await started.done;
        await stop();
        process.exit(0);
      }
      setInterval(() => undefined, 1 << 30); // runs until a signal (ros2 launch sends SIGINT on Ctrl-C)
    });
}
