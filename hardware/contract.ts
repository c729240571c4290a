/**
 * The behavioural contract every ArmDriver meets (as runtime/contract.ts is for runtimes). contract.test.ts runs
 * it against each driver over its simulator: sim (MuJoCo), feetech and dynamixel (ServoBusSim behind a pty pair),
 * ur_rtde (RtdeControllerSim over loopback TCP) and ros2_control (a controller_manager double on the embedded
 * runtime). Each harness names the faults its simulator can inject; the contract checks what the driver does:
 *
 * - lifecycle: configure → INACTIVE (state readable, commands refused); activate → commands move the arm;
 *   deactivate → refused again; close.
 * - limits: a target beyond the joint limits ends within them; NaN and wrong-length targets are refused, naming
 *   the joint or the expected count.
 * - each fault: one line (no newline) naming the joint or servo and what the device reported, as the latched
 *   `fault` (or read()'s status for drivers without latched faults); commands refused; the arm held or limp as
 *   configured; after the cause is cleared, activating again works (the driver's recovery).
 * - watchdog: when the host goes silent, the device stops the arm by itself.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ArmDriver } from "./ArmDriver.ts";

/** A fault a simulator can inject. */
export interface ContractFault {
  /** What happens on the device ("overload on servo 2"). */
  name: string;
  inject(): void | Promise<void>;
  /** What the driver's line must say (joint or servo name, the device's words). */
  expect: RegExp;
  /** After the fault, as the harness configured the driver: torque off ("limp") or the arm holding ("held"). */
  after?: "limp" | "held";
  /** Removes the cause (load gone, stop released), so the recovery on the next activate can be checked. */
  clear?(): void | Promise<void>;
}

/** One driver over its simulator. */
export interface DriverHarness {
  driver: ArmDriver;
  /** A reachable target inside the limits, away from the start pose. */
  target: number[];
  /** How close "reached" is (rad). */
  tolerance: number;
  /** Steps a simulated world while the contract waits (the sim driver). */
  advance?(): void;
  /** Device side: whether the arm is powered/holding (torque on). */
  holding?(): boolean | Promise<boolean>;
  faults: ContractFault[];
  /** The host goes silent without a goodbye; then `stopped()` says whether the device stopped the arm itself. */
  watchdog?: { silence(): Promise<void>; stopped(): boolean | Promise<boolean> };
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the control loop (write + read, stepping a simulated world) until `cond` holds; fails after `ms`. */
async function drive(h: DriverHarness, target: readonly number[] | null, cond: () => boolean | Promise<boolean>, what: string | (() => string), ms = 8000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (target) h.driver.write(target);
    h.advance?.();
    if (await cond()) return;
    if (Date.now() > end) {
      const fault = h.driver.fault ? ` (driver fault: ${h.driver.fault})` : "";
      throw new Error(`timed out waiting for ${typeof what === "function" ? what() : what}${fault}`);
    }
    await sleep(h.advance ? 0 : 10);
  }
}

const near = (a: readonly number[], b: readonly number[], tol: number) => a.every((x, i) => Math.abs(x - b[i]) <= tol);
const errorOf = (s: { ok: boolean }) => (s as { error?: string }).error ?? "";

/** Registers the contract tests for one driver; `make` returns a fresh harness (simulator + driver, unconfigured). */
export function armDriverContract(name: string, make: () => Promise<DriverHarness>, opts: { skip?: string | false; faults?: string[] } = {}): void {
  const withHarness = (title: string, fn: (h: DriverHarness) => Promise<void>) =>
    test(`ArmDriver contract, ${name}: ${title}`, { skip: opts.skip }, async () => {
      const h = await make();
      try {
        await fn(h);
      } finally {
        await h.driver.close?.().catch(() => undefined);
        await h.close();
      }
    });

  withHarness("configure → inactive reads and refuses; activate → commands move the arm; deactivate refuses again", async (h) => {
    const d = h.driver;
    assert.equal(d.state, "unconfigured");
    assert.equal(d.read(0).status.ok, false, "an unconfigured driver has no reading");
    await d.configure();
    assert.equal(d.state, "inactive");
    const r0 = d.read(0);
    assert.ok(r0.status.ok, errorOf(r0.status));
    assert.equal(r0.reading!.position.length, d.jointNames.length);
    const refused = d.write(h.target);
    assert.equal(refused.ok, false);
    assert.match(errorOf(refused), /inactive/);
    await d.activate();
    assert.equal(d.state, "active");
    assert.ok(!d.fault, `no fault after activate: ${d.fault}`);
    await drive(h, h.target, () => near(d.read(0).reading!.position, h.target, h.tolerance), `${name} to reach ${h.target}`);
    await d.deactivate();
    assert.equal(d.state, "inactive");
    assert.equal(d.write(h.target).ok, false);
    assert.ok(d.read(0).reading, "still readable while inactive");
  });

  withHarness("limits: a target beyond the joint limits ends within them; NaN and wrong lengths are refused by name", async (h) => {
    const d = h.driver;
    await d.configure();
    await d.activate();
    const beyond = d.jointUpper.map((u) => u + 1);
    const wb = d.write(beyond);
    assert.ok(wb.ok, `a target beyond the limits is clamped, not refused: ${errorOf(wb)}`);
    await drive(h, beyond, () => d.read(0).reading!.position.every((q, i) => q >= d.jointUpper[i] - 0.05 - h.tolerance), "the arm at its upper limits", 10000);
    for (let k = 0; k < 5; k++) {
      h.advance?.();
      await sleep(h.advance ? 0 : 20);
    }
    d.read(0).reading!.position.forEach((q, i) => assert.ok(q <= d.jointUpper[i] + h.tolerance, `${d.jointNames[i]} at ${q} beyond its upper limit ${d.jointUpper[i]}`));
    const nan = [...h.target];
    nan[1] = NaN;
    const rn = d.write(nan);
    assert.equal(rn.ok, false);
    assert.match(errorOf(rn), new RegExp(d.jointNames[1]));
    const rl = d.write(h.target.slice(1));
    assert.equal(rl.ok, false);
    assert.match(errorOf(rl), new RegExp(`${d.jointNames.length}`));
  });

  test(`ArmDriver contract, ${name}: device faults`, { skip: opts.skip }, async (t) => {
    if (!opts.faults?.length) return t.skip(`${name}: its simulator models no device faults`);
    for (const fname of opts.faults) {
      await t.test(`fault: ${fname} → one line naming the joint/servo, commands refused, arm as configured, recovery`, async () => {
        const h = await make();
        const f = h.faults.find((x) => x.name === fname);
        if (!f) throw new Error(`${name} harness has no fault '${fname}' (has ${h.faults.map((x) => x.name).join(", ")})`);
        const d = h.driver;
        try {
          await d.configure();
          await d.activate();
          await drive(h, h.target, () => near(d.read(0).reading!.position, h.target, h.tolerance), "the target before the fault");
          await f.inject();
          let line = "";
          await drive(
            h,
            h.target,
            () => {
              const r = d.read(0);
              line = d.fault || (r.status.ok ? "" : errorOf(r.status));
              return f.expect.test(line);
            },
            () => `${name} to report ${fname} (last: ${line || "nothing"})`,
          );
          assert.doesNotMatch(line, /\n/, "one line");
          if (d.fault !== undefined && d.fault) {
            const w = d.write(h.target);
            assert.equal(w.ok, false, "commands are refused while faulted");
            assert.match(errorOf(w), f.expect);
          }
          if (f.after && h.holding) {
            const want = f.after === "held";
            await drive(h, null, async () => (await h.holding!()) === want, `the arm ${f.after} after ${fname}`);
          }
          if (f.clear) {
            await f.clear();
            await d.deactivate();
            await d.activate();
            assert.ok(!d.fault, `recovered: no fault after re-activating (${d.fault})`);
            await drive(h, h.target, () => !!d.read(0).status.ok && d.write(h.target).ok, "commands accepted again after recovery");
          }
        } finally {
          await d.close?.().catch(() => undefined);
          await h.close();
        }
      });
    }
  });

  test(`ArmDriver contract, ${name}: watchdog — the device stops the arm when the host goes silent`, { skip: opts.skip }, async (t) => {
    const h = await make();
    try {
      if (!h.watchdog) return t.skip(`${name}: no device-side watchdog (see docs/hardware.md)`);
      await h.driver.configure();
      await h.driver.activate();
      await drive(h, h.target, () => near(h.driver.read(0).reading!.position, h.target, h.tolerance), "the target");
      await h.watchdog.silence();
      const end = Date.now() + 5000;
      while (!(await h.watchdog.stopped())) {
        if (Date.now() > end) throw new Error(`${name}: the device did not stop the arm after the host went silent`);
        await sleep(10);
      }
    } finally {
      await h.driver.close?.().catch(() => undefined);
      await h.close();
    }
  });
}
