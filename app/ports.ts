/** Free TCP ports on loopback, for learner endpoints and tests. */
import { createServer } from "node:net";

/** Asks the OS for a free port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const addr = s.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** `n` distinct free ports on 127.0.0.1 (each freePort() alone may hand back one it gave before). */
export async function freePorts(n: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < n) {
    const p = await freePort();
    if (!ports.includes(p)) ports.push(p);
  }
  return ports;
}
