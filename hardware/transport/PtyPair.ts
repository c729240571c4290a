/**
 * Two connected pseudo-terminals made by `socat -d -d pty,raw,echo=0 pty,raw,echo=0` (Debian's socat),
 * so a servo-bus simulator on one end and a driver on the other talk through the real serial stack.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";

/** A running socat with its two pty paths. */
export interface PtyPair {
  a: string;
  b: string;
  close(): Promise<void>;
}

/** Path of socat, or undefined when it is not installed. */
export function socatBin(): string | undefined {
  return ["/usr/bin/socat", "/bin/socat", "/usr/local/bin/socat"].find((p) => existsSync(p));
}

/** Starts socat and resolves once both pty paths are known. */
export async function openPtyPair(opts: { timeoutMs?: number } = {}): Promise<PtyPair> {
  const bin = socatBin();
  if (!bin) throw new Error("socat not found — install it (sudo apt-get install socat) to create a pseudo-terminal pair");
  const child: ChildProcess = spawn(bin, ["-d", "-d", "pty,raw,echo=0", "pty,raw,echo=0"], { stdio: ["ignore", "ignore", "pipe"] });
  const paths = await new Promise<string[]>((resolve, reject) => {
    let err = "";
    const found: string[] = [];
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`socat did not report two ptys in ${opts.timeoutMs ?? 5000} ms: ${err.slice(-500)}`));
    }, opts.timeoutMs ?? 5000);
    child.stderr!.on("data", (d: Buffer) => {
      err += d.toString();
      for (const m of d.toString().matchAll(/PTY is (\S+)/g)) found.push(m[1]);
      if (found.length >= 2 && /starting data transfer loop/.test(err)) {
        clearTimeout(timer);
        resolve(found.slice(0, 2));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`socat exited with ${code}: ${err.slice(-500)}`));
    });
  });
  return {
    a: paths[0],
    b: paths[1],
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}
