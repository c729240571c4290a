/**
 * CURVE certificates for the learner and each robot, and the learner's ed25519 package-signing key, laid out so
 * each side reads only what it needs (docs/security.md):
 *
 *   keys/learner.key, learner.key_secret        learner CURVE pair (robots get learner.key)
 *   keys/learner.sign.pem, learner.sign.pub.pem  package signing (robots get the .pub.pem)
 *   keys/<robot>.key, <robot>.key_secret         one CURVE pair per robot
 *   keys/authorized/<robot>.key                  the public certificates the learner admits (curve_authorized)
 *
 * Existing files are never overwritten; adding a robot later writes only its files.
 */
import { existsSync } from "node:fs";
import { createPublicKey } from "node:crypto";
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { generateCurveCertificate, writeCurveCertificate } from "../bridge/CurveCertificate.ts";
import { generateSigningKey, keyId } from "../policies/PackageSignature.ts";

/** What {@link generateKeys} wrote (or found). */
export interface KeysResult {
  dir: string;
  written: string[];
  kept: string[];
  signingKeyId: string;
}

const NAME = /^[A-Za-z0-9_.-]+$/;

/** Creates the learner's and the robots' keys in `dir`; files that exist are kept. */
export async function generateKeys(dir: string, opts: { learner?: string; robots: readonly string[] }): Promise<KeysResult> {
  const learner = opts.learner ?? "learner";
  for (const n of [learner, ...opts.robots]) if (!NAME.test(n)) throw new Error(`key name ${JSON.stringify(n)}: use letters, digits, _ . - (it names files)`);
  const out: KeysResult = { dir: resolve(dir), written: [], kept: [], signingKeyId: "" };
  await mkdir(join(dir, "authorized"), { recursive: true, mode: 0o700 });
  const pair = async (name: string) => {
    const pub = join(dir, `${name}.key`);
    const sec = join(dir, `${name}.key_secret`);
    if (existsSync(sec)) {
      out.kept.push(sec);
      return pub;
    }
    const cert = generateCurveCertificate();
    await writeCurveCertificate(pub, { publicKey: cert.publicKey, secretKey: null }, { name });
    await writeCurveCertificate(sec, cert, { name });
    out.written.push(pub, sec);
    return pub;
  };
  await pair(learner);
  for (const robot of opts.robots) {
    const pub = await pair(robot);
    const auth = join(dir, "authorized", `${robot}.key`);
    if (!existsSync(auth)) {
      await copyFile(pub, auth);
      out.written.push(auth);
    }
  }
  const signPriv = join(dir, `${learner}.sign.pem`);
  const signPub = join(dir, `${learner}.sign.pub.pem`);
  if (!existsSync(signPriv)) {
    const k = generateSigningKey();
    await writeFile(signPriv, k.privatePem, { mode: 0o600 });
    await writeFile(signPub, k.publicPem, { mode: 0o644 });
    out.written.push(signPriv, signPub);
  } else out.kept.push(signPriv);
  out.signingKeyId = keyId(createPublicKey(await readFile(signPriv)));
  return out;
}
