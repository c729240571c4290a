/**
 * Child process for the crash test: opens an ExperienceBridge towards `endpoint`, pushes `count` transitions of
 * episode 1, prints "spooled <n>" once they are on disk and then waits to be killed (SIGKILL, no close()).
 * argv: spoolDir endpoint count
 */
import { ExperienceBridge } from "../ExperienceBridge.ts";
import { makeTransition } from "./helpers.ts";

const [spoolDir, endpoint, countText] = process.argv.slice(2);
const count = Number(countText);
const bridge = await ExperienceBridge.open({
  endpoint, spoolDir, robotId: "crashy", configHash: "cfg", obsNames: ["a", "b", "c"], actionNames: ["x", "y"], task: "t",
  basePolicyVersion: "bc-1", batchSize: 8, flushIntervalMs: 20, deadlineMs: 200, reconnectDelayMs: 50,
  logger: { warn: () => {}, info: () => {} },
});
for (let i = 0; i < count; i++) bridge.push(makeTransition(1, i));
const timer = setInterval(() => {
  if (bridge.stats().spooled === count) {
    process.stdout.write(`spooled ${bridge.stats().lastSeq}\n`);
    clearInterval(timer);
  }
}, 10);
setInterval(() => {}, 1000); // stay alive until killed
