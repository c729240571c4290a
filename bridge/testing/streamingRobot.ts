/**
 * Child process for test/faults.test.ts: an ExperienceBridge that streams `count` transitions (episode 1) to a real
 * learner, `perTick` every 10 ms, printing "spooled <lastSeq>" and "acked <ackedSeq>" as they change, then waits to be
 * killed (SIGKILL, no close()). argv: spoolDir endpoint JSON{robotId, obsNames, actionNames, task, basePolicyVersion,
 * count, perTick}
 */
import { ExperienceBridge } from "../ExperienceBridge.ts";
import { makeTransitionOf } from "./helpers.ts";

const [spoolDir, endpoint, json] = process.argv.slice(2);
const o = JSON.parse(json) as { robotId: string; obsNames: string[]; actionNames: string[]; task: string; basePolicyVersion: string; count: number; perTick: number };
const bridge = await ExperienceBridge.open({
  endpoint, spoolDir, robotId: o.robotId, configHash: "cfg", obsNames: o.obsNames, actionNames: o.actionNames, task: o.task,
  basePolicyVersion: o.basePolicyVersion, batchSize: 8, flushIntervalMs: 20, deadlineMs: 3000, reconnectDelayMs: 100,
  logger: { warn: () => {}, info: () => {} },
});
let step = 0;
let spooled = -2;
let acked = -2;
const push = setInterval(() => {
  for (let i = 0; i < o.perTick && step < o.count; i++) bridge.push(makeTransitionOf(1, step++, o.obsNames.length, o.actionNames.length));
  if (step >= o.count) clearInterval(push);
}, 10);
setInterval(() => {
  const st = bridge.stats();
  if (st.lastSeq !== spooled) process.stdout.write(`spooled ${(spooled = st.lastSeq)}\n`);
  if (st.ackedSeq !== acked) process.stdout.write(`acked ${(acked = st.ackedSeq)}\n`);
}, 5);
