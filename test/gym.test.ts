/**
 * `driver.kind: gym`: a Gymnasium environment (the learner's rlft/PointReach-v0, learner/rlft_learner/gym_testenv.py)
 * as the robot of the whole embedded stack — recorded episodes read back with an independent MCAP reader — and every
 * door of it fed bad input: an unregistered id, no Python or no gymnasium, the process dying mid-episode, hostile
 * clients on its socket, a mapping that does not fit the env's observation.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McapIndexedReader } from "@mcap/core";
import { MessageReader } from "@foxglove/rosmsg2-serialization";
import { parse } from "@foxglove/rosmsg";
import { spawnSync } from "node:child_process";
import { Request } from "zeromq";
import { asidePeer, findPython, learnerEnv, withAsidePeer } from "../app/python.ts";
import { parseLaunch, loadLaunch, gymTaskName, setTask, LaunchConfigError } from "../launch/LaunchConfig.ts";
import { exportLeRobot } from "../data/lerobot/LeRobotExport.ts";
import { runEpisodes } from "../app/runEpisodes.ts";
import { configHash, runSession } from "../app/session.ts";
import { makeLearnerFixture } from "../policies/testing/learnerFixture.ts";
import { GymArmDriver } from "../hardware/gym/GymArmDriver.ts";
import { gymPythonProblem, testGymConfig } from "../hardware/gym/testing.ts";
import { DriverSchema } from "../hardware/registry.ts";

const skip = gymPythonProblem();
const tmp = mkdtempSync(join(tmpdir(), "rlft-gym-"));

// The env's own task name (not one of the simulator's): recorded, sent to the learner and exported as it is.
const LAUNCH = `
clock: sim
control_hz: 10
task: point_reach
driver:
  kind: gym
  env: rlft/PointReach-v0
  modules: [rlft_learner.gym_testenv]
  KWARGS
  expert: rlft_learner.gym_testenv:PointReachExpert
  action: {names: [x, y], lower: [-1, -1], upper: [1, 1]}
  observation:
    - {key: agent_pos, names: [pos_x, pos_y]}
    - {key: goal, names: [goal_x, goal_y]}
  cameras: {front: pixels/front}
  success: {info: is_success}
camera: {rate_hz: 10}
actor: {kind: expert}
safety: {max_step: 0.5}
episodes: {max_steps: 60}
`;
const launch = (kwargs = "") => parseLaunch(LAUNCH.replace("KWARGS", kwargs), "gym.yaml");

async function readMcap(file: string) {
  const bytes = new Uint8Array(readFileSync(file));
  const reader = await McapIndexedReader.Initialize({ readable: { size: async () => BigInt(bytes.byteLength), read: async (o: bigint, n: bigint) => bytes.subarray(Number(o), Number(o + n)) } });
  const decoders = new Map<number, MessageReader>();
  const messages = async (topic: string) => {
    const out: Record<string, unknown>[] = [];
    for await (const m of reader.readMessages({ topics: [topic] })) {
      const ch = reader.channelsById.get(m.channelId)!;
      if (!decoders.has(ch.schemaId)) decoders.set(ch.schemaId, new MessageReader(parse(new TextDecoder().decode(reader.schemasById.get(ch.schemaId)!.data), { ros2: true })));
      out.push(decoders.get(ch.schemaId)!.readMessage(m.data));
    }
    return out;
  };
  const meta = [];
  for await (const m of reader.readMetadata({ name: "rlft.episode" })) meta.push(m.metadata);
  return { topics: new Set([...reader.channelsById.values()].map((c) => c.topic)), messages, meta: meta[0] };
}

test("a Gymnasium env runs the whole stack: the expert succeeds, episodes record to MCAP with observation, camera and reward", { skip }, async () => {
  const out = join(tmp, "ok");
  const { results } = await runEpisodes(launch(), { count: 2, seed: 5, label: "gym", recordTo: out });
  assert.deepEqual(results.map((r) => r.outcome), ["success", "success"], JSON.stringify(results));
  assert.match(results[0].detail, /gym_success/);
  const files = readdirSync(out).filter((f) => f.endsWith(".mcap")).sort();
  assert.equal(files.length, 2);
  const m = await readMcap(join(out, files[0]));
  for (const t of ["/joint_states", "/joint_command", "/observation", "/camera/front/image", "/reward", "/episode/event"]) assert.ok(m.topics.has(t), `missing ${t}`);
  const obs = await m.messages("/observation");
  assert.deepEqual(obs[0].names, ["pos_x", "pos_y", "goal_x", "goal_y"]);
  // The point walks to the goal: the last observation's position is within 0.05 of its goal.
  const last = Array.from(obs.at(-1)!.values as Float64Array);
  assert.ok(Math.hypot(last[0] - last[2], last[1] - last[3]) < 0.05, `ended at ${last}`);
  const img = (await m.messages("/camera/front/image"))[0] as { width: number; height: number; encoding: string; data: Uint8Array };
  assert.deepEqual([img.width, img.height, img.encoding, img.data.length], [8, 8, "rgb8", 8 * 8 * 3]);
  const rewards = await m.messages("/reward");
  assert.deepEqual(rewards.map((r) => [r.reward, r.terminal, r.source]), [[1, true, "gym_success"]]);
  assert.equal(m.meta.get("gym_env"), "rlft/PointReach-v0");
  assert.equal(m.meta.get("driver"), "gym");
  assert.equal(m.meta.get("task"), "point_reach");
  // The LeRobot export names the env's task as it is (no sim task's description stands in for it).
  const ds = join(tmp, "ok-lerobot");
  const exported = await exportLeRobot(files.map((f) => join(out, f)), ds, { version: "2.1", noVideo: true });
  assert.equal(exported.episodes, 2);
  assert.deepEqual(readFileSync(join(ds, "meta", "tasks.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)), [{ task_index: 0, task: "point_reach" }]);
  assert.ok(readFileSync(join(ds, "meta", "rlft_episodes.jsonl"), "utf8").split("\n").filter(Boolean).every((l) => JSON.parse(l).task === "point_reach"));
});

test("driver.operator: the scripted operator's takeovers reach the arbiter and the arm, and are recorded", { skip }, async () => {
  const cfg = parseLaunch(LAUNCH.replace("KWARGS", "operator: rlft_learner.gym_testenv:PointReachOperator\n  operator_kwargs: {steps: [2, 3]}") + "operator: {enabled: true, kind: scripted}\n", "op.yaml");
  const out = join(tmp, "operator");
  const { results } = await runEpisodes(cfg, { count: 1, seed: 2, label: "gym", recordTo: out });
  assert.equal(results[0].outcome, "success");
  const m = await readMcap(join(out, readdirSync(out).find((f) => f.endsWith(".mcap"))!));
  const iv = (await m.messages("/operator/intervention")) as { active: boolean; source: string; action: Float64Array }[];
  assert.deepEqual(iv.slice(0, 5).map((x) => x.active), [false, false, true, true, false]);
  assert.equal(iv[2].source, "scripted_operator");
  assert.deepEqual(Array.from(iv[2].action), [-0.5, -0.5]);
  // What the arm did on those ticks is the operator's action, not the expert's (the goal).
  const cmds = (await m.messages("/joint_command")).map((c) => Array.from(c.position as Float64Array));
  assert.ok(cmds.some((c) => c[0] === -0.5 && c[1] === -0.5), `no command was the operator's: ${JSON.stringify(cmds.slice(0, 6))}`);
});

const torchProblem = skip || (spawnSync(findPython(), ["-c", "import torch"], { env: learnerEnv() }).status === 0 ? false : "the learner's Python has no torch (node scripts/setup-python.mjs)");

test("a policy and the experience link run unchanged over a Gymnasium env: a session streams every transition to the real learner", { skip: torchProblem }, async (t) => {
  const fx = await makeLearnerFixture({ obsDim: 4, actionDim: 2 });
  t.after(() => fx.cleanup());
  const file = join(fx.dir, "policy.json");
  const pj = JSON.parse(readFileSync(file, "utf8"));
  pj.observation.names = ["pos_x", "pos_y", "goal_x", "goal_y"];
  pj.action.names = ["x", "y"];
  writeFileSync(file, JSON.stringify(pj, null, 2));
  const cfg = parseLaunch(
    LAUNCH.replace("KWARGS", "operator: rlft_learner.gym_testenv:PointReachOperator").replace("actor: {kind: expert}", `actor: {kind: policy, package: ${JSON.stringify(fx.dir)}}`) +
      "operator: {enabled: true, kind: scripted}\n",
    "session.yaml",
  );
  const out = join(tmp, "session");
  const res = await runSession({
    config: { ...cfg, episodes: { ...cfg.episodes, max_steps: 20 } },
    learner: true,
    episodes: 3,
    seed: 4,
    out,
    pace: true,
    learnerConfig: { critic_heads: 2, critic_hidden: 32, actor_hidden: 32, learning_starts: 20, critic_warmup_updates: 10, publish_every: 20, batch_size: 16, utd: 1 },
  });
  assert.equal(res.episodes.length, 3);
  assert.ok(res.transitions.pushed >= 30, `only ${res.transitions.pushed} transitions`);
  assert.equal(res.transitions.acked, res.transitions.pushed, "every transition reached the learner");
  assert.ok(res.learnerUpdates > 0, "the learner trained on them");
  // The operator takes over on 2 observations of each episode; the transitions flagged as intervention are exactly the
  // ticks the arbiter reports active (the operator's and its hand-back blend), as recorded.
  const files = readdirSync(join(out, "episodes")).filter((f) => f.endsWith(".mcap")).sort();
  const recorded = [];
  for (const f of files) {
    const m = await readMcap(join(out, "episodes", f));
    const op = (await m.messages("/operator/intervention")).filter((x) => x.active).length;
    assert.equal(op, 2, `${f}: the operator had 2 ticks`);
    recorded.push((await m.messages("/arbiter/intervention")).filter((x) => x.active).length);
  }
  assert.deepEqual(res.episodes.map((e) => e.interventionSteps), recorded);
  assert.ok(recorded.every((n) => n >= 2), `${recorded}`);
  // The learner took the hello of a task the simulator does not have; the session's episodes record it.
  assert.equal((await readMcap(join(out, "episodes", files[0]))).meta.get("task"), "point_reach");
  assert.notEqual(configHash(cfg), configHash({ ...cfg, task: "push_cube" }), "the config hash keys on the task");
});

test("the env's process dying mid-episode: the arm faults, the episode ends aborted and is recorded up to there", { skip }, async () => {
  const out = join(tmp, "dies");
  const { results } = await runEpisodes(launch("kwargs: {exit_at_step: 4}"), { count: 3, seed: 1, label: "gym", recordTo: out });
  assert.equal(results.length, 1, "a faulted arm runs no further episode");
  assert.equal(results[0].outcome, "abort");
  assert.match(results[0].detail, /arm fault: gym environment 'rlft\/PointReach-v0' process exited/);
  const files = readdirSync(out).filter((f) => f.endsWith(".mcap"));
  assert.equal(files.length, 1);
  const m = await readMcap(join(out, files[0]));
  const states = await m.messages("/joint_states");
  assert.ok(states.length >= 3, `recorded ${states.length} joint states`);
  const events = (await m.messages("/episode/event")).map((e) => e.event);
  assert.ok(events.includes("abort"), `events: ${events}`);
});

test("the env answering an observation the mapping does not describe mid-episode: a fault naming the sizes, the episode aborted", { skip }, async () => {
  const { results } = await runEpisodes(launch("kwargs: {bad_obs_at_step: 3}"), { count: 1, seed: 1, label: "gym", recordTo: join(tmp, "badobs") });
  assert.equal(results[0].outcome, "abort");
  assert.match(results[0].detail, /observation key 'agent_pos' has 3 values but driver\.observation lists 2 names/);
});

/** gym-hil as learner/peers-aside.txt installs it (.venv/peers/gym-hil-<v>, on PYTHONPATH), or a user's own install. */
const GYM_HIL = asidePeer("gym-hil");
const gymHilEnv = (): NodeJS.ProcessEnv => withAsidePeer("gym-hil", { ...process.env, MUJOCO_GL: process.env.MUJOCO_GL ?? "osmesa" });
const gymHil = skip || ((): string | false => {
  const r = spawnSync(findPython(), ["-c", "import gym_hil"], { env: learnerEnv(gymHilEnv()), encoding: "utf8" });
  return r.status === 0 ? false : `gym-hil is not installed in the learner's Python (node scripts/setup-python.mjs installs gym-hil==${GYM_HIL.version} aside)`;
})();

test("gym-hil PandaPickCube (launch/gym_hil.yaml): the scripted expert picks the cube through the stack", { skip: gymHil }, async () => {
  const cfg = loadLaunch(join(import.meta.dirname, "..", "launch", "gym_hil.yaml"));
  const env = gymHilEnv();
  const saved = { MUJOCO_GL: process.env.MUJOCO_GL, PYTHONPATH: process.env.PYTHONPATH };
  process.env.MUJOCO_GL = env.MUJOCO_GL;
  if (env.PYTHONPATH !== undefined) process.env.PYTHONPATH = env.PYTHONPATH;
  try {
    const { results } = await runEpisodes(cfg, { count: 3, seed: 0, label: "gym_hil", recordTo: join(tmp, "gym_hil") });
    assert.deepEqual(results.map((r) => r.outcome), ["success", "success", "success"], JSON.stringify(results));
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
});

test("an environment id that is not registered: one sentence naming the id and how to install or register it", { skip }, async () => {
  const d = new GymArmDriver(testGymConfig({ env: "NoSuchEnv-v9" }));
  await assert.rejects(d.configure(), (e: Error) => {
    assert.match(e.message, /Gymnasium environment 'NoSuchEnv-v9' is not registered/);
    assert.match(e.message, /pip install the package that provides it and list its module under driver\.modules/);
    assert.doesNotMatch(e.message, /\n/);
    return true;
  });
  await d.close();
});

test("no Python, or a Python without gymnasium: the error names it and the fix", { skip }, async () => {
  const none = new GymArmDriver(testGymConfig(), { python: join(tmp, "no-such-python") });
  await assert.rejects(none.configure(), /cannot run .*no-such-python.*set RLFT_PYTHON or run node scripts\/setup-python\.mjs/);
  // A Python where `import gymnasium` fails: a stub module that raises ImportError shadows the real one.
  const stubDir = mkdtempSync(join(tmp, "nogym-"));
  writeFileSync(join(stubDir, "gymnasium.py"), "raise ImportError('no gymnasium here')\n");
  const bare = new GymArmDriver(testGymConfig(), { env: { ...process.env, PYTHONPATH: stubDir } });
  await assert.rejects(bare.configure(), /gymnasium is not installed in .* — pip install 'rlft-learner\[gym\]'/);
});

test("a mapping that does not fit the env's spaces is refused at configure, naming the key, the shapes and the fix", { skip }, async () => {
  const cases: [Parameters<typeof testGymConfig>[0], RegExp][] = [
    [{ observation: [{ key: "agent_pos", names: ["a", "b", "c"] }] }, /driver\.observation key 'agent_pos' has shape \[2\] \(2 values\).*lists 3 names/],
    [{ observation: [{ key: "velocity", names: ["v"] }] }, /driver\.observation key 'velocity' is not in 'rlft\/PointReach-v0''s observation \(it has: agent_pos, goal, pixels\/front\)/],
    [{ cameras: { front: "goal" } }, /camera front: 'goal' .* not an rgb8 image/],
    [{ action: { names: ["x", "y", "z"], lower: [-1, -1, -1], upper: [1, 1, 1], unit: "" } }, /takes 2 action values but driver\.action\.names lists 3/],
    [{ action: { names: ["x", "y"], lower: [-2, -1], upper: [1, 1], unit: "" } }, /driver\.action limits of x lie outside/],
  ];
  for (const [over, want] of cases) {
    const d = new GymArmDriver(testGymConfig(over));
    await assert.rejects(d.configure(), want);
    await d.close();
  }
});

test("hostile clients on the env's socket: no token, a wrong token, garbage, oversize — refused, and the stack's driver carries on", { skip }, async () => {
  const d = new GymArmDriver(testGymConfig({ expert: "rlft_learner.gym_testenv:PointReachExpert" }));
  await d.configure();
  await d.activate();
  assert.match(d.endpoint!, /^tcp:\/\/127\.0\.0\.1:\d+$/);
  const before = d.read(0).reading!.position;
  const steps = d.stats.steps;
  const ask = async (frames: (string | Buffer)[]) => {
    const s = new Request({ linger: 0, receiveTimeout: 3000 });
    s.connect(d.endpoint!);
    try {
      await s.send(frames);
      const [h] = await s.receive();
      return JSON.parse(h.toString()) as { ok: boolean; error?: string };
    } catch (e) {
      return { ok: false, error: `no reply (${(e as Error).message})` };
    } finally {
      s.close();
    }
  };
  const step = Buffer.from(new Float64Array([0.9, 0.9]).buffer);
  assert.match((await ask([JSON.stringify({ op: "step" }), step])).error!, /unauthorized/);
  assert.match((await ask([JSON.stringify({ op: "step", token: "0".repeat(48) }), step])).error!, /unauthorized/);
  assert.match((await ask([JSON.stringify({ op: "close", token: "x" })])).error!, /unauthorized/);
  assert.match((await ask(["\u0000\u00ff garbage"])).error!, /malformed/);
  assert.match((await ask([JSON.stringify([1, 2, 3])])).error!, /unauthorized/);
  // Over the server's message limit: the connection is dropped, no reply, nothing done.
  assert.equal((await ask([JSON.stringify({ op: "step" }), Buffer.alloc(2 << 20)])).ok, false);
  // Nothing moved the env, and the stack's own requests still work.
  assert.equal(d.stats.steps, steps);
  assert.deepEqual(d.read(0).reading!.position, before);
  assert.ok(d.write([0.5, 0.5]).ok);
  await d.advance();
  assert.equal(d.fault, "", d.fault);
  assert.deepEqual(d.read(0).reading!.position, [0.5, 0.5]);
  await d.close();
});

test("a gym launch file's task: any plain name (default the env id's last part); hostile names refused in one line; sim robots keep their lists", () => {
  const gym = (task: string) => `${task}driver: {kind: gym, env: my_pkg/CartStack-v3, action: {names: [a], lower: [-1], upper: [1]}, observation: [{names: [o]}]}\n`;
  assert.equal(parseLaunch(gym(""), "g.yaml").task, "CartStack-v3");
  assert.equal(parseLaunch(gym("task: stack_two.v2\n"), "g.yaml").task, "stack_two.v2");
  assert.equal(parseLaunch(gym("task: push_cube\n"), "g.yaml").task, "push_cube", "a sim task's name is a plain name too");
  assert.equal(gymTaskName("gym_hil/PandaPickCube-v0"), "PandaPickCube-v0");
  assert.equal(gymTaskName("ns/3d env"), "env_3d_env");
  assert.equal(loadLaunch(join(import.meta.dirname, "..", "launch", "gym_hil.yaml")).task, "PandaPickCube-v0");
  const hostile: [string, RegExp][] = [
    ["task: ../../etc/passwd\n", /g\.yaml:1: task: task name "\.\.\/\.\.\/etc\/passwd" is not a plain name: use 1-64 letters, digits, _ \. or -, starting with a letter .*\(driver\.kind gym\)/],
    ["task: a/b\n", /task name "a\/b" is not a plain name/],
    ["task: a\\b\n", /task name "a\\\\b" is not a plain name/],
    ['task: "two\\nlines"\n', /task name "two\\nlines" is not a plain name/],
    [`task: ${"x".repeat(65)}\n`, /task name "x{40}\.\.\." \(65 characters\) is not a plain name/],
    ["task: ''\n", /task name "" is not a plain name/],
    ["task: -rf\n", /task name "-rf" is not a plain name/],
    ["task: 5\n", /task: .*string/],
  ];
  for (const [t, want] of hostile) {
    assert.throws(() => parseLaunch(gym(t), "g.yaml"), (e: Error) => {
      assert.ok(e instanceof LaunchConfigError, e.message);
      assert.match(e.message, want);
      assert.doesNotMatch(e.message, /\n/, "one line");
      return true;
    });
  }
  // The simulator's robots: only their tasks, the error names them (a plain but unknown name, a hostile one, an own key of Object).
  assert.throws(() => parseLaunch("robot: so101\ntask: peg_insert\n", "s.yaml"), /s\.yaml:2: task: robot so101 has no task "peg_insert"; its tasks are reach, push_cube, pick_place, multi_push \(driver\.kind sim\)/);
  assert.throws(() => parseLaunch("task: stack_two\n", "s.yaml"), /task: robot rlft_arm5 has no task "stack_two"; its tasks are reach, push_cube, peg_insert, multi_push/);
  assert.throws(() => parseLaunch("task: constructor\n", "s.yaml"), /robot rlft_arm5 has no task "constructor"/);
  assert.throws(() => parseLaunch('task: "a\\nb"\n', "s.yaml"), (e: Error) => /has no task "a\\nb"/.test(e.message) && !e.message.includes("\n"));
  // A real arm records one of the simulator's names.
  const real = readFileSync(join(import.meta.dirname, "..", "launch", "so100.yaml"), "utf8").replace(/^task: reach/m, "task: stack_two");
  assert.throws(() => parseLaunch(real, "r.yaml"), /task: task "stack_two" is not one of reach, push_cube, peg_insert, multi_push, pick_place \(driver\.kind feetech records one of the simulator's task names; driver\.kind gym takes the env's own\)/);
  // A command line's --task under the same rules, against the launch file's driver.
  const cfg = parseLaunch(gym(""), "g.yaml");
  setTask(cfg, "my_task");
  assert.equal(cfg.task, "my_task");
  assert.throws(() => setTask(cfg, "x/../y"), /^Error: --task: task name "x\/\.\.\/y" is not a plain name/);
  assert.throws(() => setTask(parseLaunch("task: reach\n", "s.yaml"), "stack_two"), /--task: robot rlft_arm5 has no task "stack_two"; its tasks are/);
});

test("driver.kind gym: the block is strict (unknown keys refused), and launch/gym_hil.yaml parses", () => {
  const ok = DriverSchema.safeParse({ kind: "gym", env: "X-v0", action: { names: ["a"], lower: [-1], upper: [1] }, observation: [{ key: "", names: ["o"] }] });
  assert.ok(ok.success, JSON.stringify(ok.error?.issues));
  const bad = DriverSchema.safeParse({ kind: "gym", env: "X-v0", action: { names: ["a"], lower: [-1], upper: [1] }, observation: [{ key: "", names: ["o"] }], port: 5 });
  assert.equal(bad.success, false);
  assert.throws(() => parseLaunch("driver: {kind: gym, env: X-v0, action: {names: [a], lower: [-1], upper: [1]}, observation: [{names: [o]}], pyhton: x}\n", "t.yaml"), /unknown key 'driver\.pyhton'/);
  const cfg = loadLaunch(join(import.meta.dirname, "..", "launch", "gym_hil.yaml"));
  assert.equal(cfg.driver.kind, "gym");
});
