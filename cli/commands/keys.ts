/** `rlft keys`: the learner's and robots' CURVE certificates and the package-signing key (app/keys.ts, docs/security.md). */
import type { Command } from "commander";
import { generateKeys } from "../../app/keys.ts";

/** Registers `rlft keys`. */
export function registerKeysCommand(program: Command): void {
  program
    .command("keys")
    .description("Generate CURVE certificates (learner + robots, pyzmq zmq.auth format) and the learner's ed25519 package-signing key")
    .option("--dir <dir>", "where the keys go", "keys")
    .option("--learner <name>", "the learner's key name", "learner")
    .option("--robot <id...>", "robot ids to create keys for (their public keys go to <dir>/authorized/)", ["sim-0"])
    .addHelpText(
      "after",
      `
Example:
  rlft keys --dir keys --robot sim-0 sim-1
  # learner.yaml:  curve_secret: keys/learner.key_secret, curve_authorized: keys/authorized, sign_key: keys/learner.sign.pem
  # launch file:   learner: {security: {curve_secret: keys/sim-0.key_secret, learner_key: keys/learner.key,
  #                                      trusted_signers: [keys/learner.sign.pub.pem]}}
`,
    )
    .action(async (o: { dir: string; learner: string; robot: string[] }) => {
      const r = await generateKeys(o.dir, { learner: o.learner, robots: o.robot });
      for (const f of r.written) console.log(`wrote ${f}`);
      for (const f of r.kept) console.log(`kept  ${f} (exists)`);
      console.log(`package signing key id: ${r.signingKeyId}`);
      console.log(`copy to each robot: <robot>.key_secret, ${o.learner}.key, ${o.learner}.sign.pub.pem; the learner keeps ${o.learner}.key_secret, ${o.learner}.sign.pem and authorized/`);
    });
}
