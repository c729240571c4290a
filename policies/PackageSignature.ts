/**
 * Policy package signatures (docs/security.md): the learner signs the exact bytes of `policy.json` with ed25519 and
 * writes `policy.sig` = {"alg": "ed25519", "key_id", "signature" (base64)}. policy.json lists the sha256 of every other
 * file, so one signature covers the whole package once the hashes are checked too. The robot accepts a package only
 * when a key it trusts (PEM public keys from `rlft keys`) verifies it; a missing, malformed or untrusted signature is a
 * {@link PolicyPackageError} with code `signature`.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { PolicyPackageError } from "./PolicyPackageError.ts";

/** File name of the signature inside a package directory. */
export const SIGNATURE_FILE = "policy.sig";

const SignatureSchema = z.strictObject({ alg: z.literal("ed25519"), key_id: z.string().regex(/^[0-9a-f]{16}$/), signature: z.string().min(1) });

/** Keys whose signatures the robot accepts, by key id. */
export interface PackageTrust {
  keys: ReadonlyMap<string, KeyObject>;
}

/** First 16 hex digits of the sha256 of the raw 32-byte ed25519 public key (the learner computes the same). */
export function keyId(publicKey: KeyObject): string {
  const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
  return createHash("sha256").update(raw).digest("hex").slice(0, 16);
}

/** Reads trusted ed25519 public keys (SPKI PEM files); errors name the file. */
export async function loadPackageTrust(paths: readonly string[]): Promise<PackageTrust> {
  const keys = new Map<string, KeyObject>();
  for (const path of paths) {
    let key: KeyObject;
    try {
      key = createPublicKey(await readFile(path));
    } catch (e) {
      throw new Error(`trusted signer ${path}: ${(e as Error).message} — expected an ed25519 public key PEM (keys/learner.sign.pub.pem from \`rlft keys\`)`, { cause: e });
    }
    if (key.asymmetricKeyType !== "ed25519") throw new Error(`trusted signer ${path} is a ${key.asymmetricKeyType} key; expected ed25519`);
    keys.set(keyId(key), key);
  }
  return { keys };
}

/** A fresh ed25519 key pair as PEM (private PKCS#8, public SPKI), readable by python3-cryptography. */
export function generateSigningKey(): { privatePem: string; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return { privatePem: privateKey.export({ format: "pem", type: "pkcs8" }).toString(), publicPem: publicKey.export({ format: "pem", type: "spki" }).toString() };
}

/** Signs the package in `dir` (writes policy.sig); the learner does this in Python, tests and tools here. */
export async function signPackage(dir: string, privatePem: string): Promise<void> {
  const payload = await readFile(join(dir, "policy.json"));
  const priv = createPrivateKey(privatePem);
  const sig = { alg: "ed25519", key_id: keyId(createPublicKey(priv)), signature: sign(null, payload, priv).toString("base64") };
  await writeFile(join(dir, SIGNATURE_FILE), JSON.stringify(sig));
}

/** Verifies `dir/policy.sig` over `dir/policy.json` against the trusted keys; resolves with the signer's key id. */
export async function verifyPackageSignature(dir: string, trust: PackageTrust): Promise<string> {
  const sigPath = join(dir, SIGNATURE_FILE);
  let text: string;
  try {
    text = await readFile(sigPath, "utf8");
  } catch {
    throw new PolicyPackageError("signature", `${dir} is not signed (no ${SIGNATURE_FILE}) and this robot accepts only signed packages — set sign_key on the learner (keys/learner.sign.pem)`, { path: sigPath });
  }
  let sig: z.infer<typeof SignatureSchema>;
  try {
    sig = SignatureSchema.parse(JSON.parse(text));
  } catch (e) {
    throw new PolicyPackageError("signature", `${sigPath} is malformed: expected {"alg":"ed25519","key_id":16 hex,"signature":base64}: ${(e as Error).message.slice(0, 200)}`, { path: sigPath, cause: e });
  }
  const key = trust.keys.get(sig.key_id);
  if (key === undefined) {
    throw new PolicyPackageError("signature", `${dir} is signed by key ${sig.key_id}, which this robot does not trust (trusted: ${[...trust.keys.keys()].join(", ") || "none"}) — add the learner's .sign.pub.pem to learner.security.trusted_signers`, { path: sigPath });
  }
  const payload = await readFile(join(dir, "policy.json"));
  if (!verify(null, payload, key, Buffer.from(sig.signature, "base64"))) {
    throw new PolicyPackageError("signature", `${dir}: the ed25519 signature of key ${sig.key_id} does not match policy.json — the package was modified after signing, or forged`, { path: sigPath });
  }
  return sig.key_id;
}
