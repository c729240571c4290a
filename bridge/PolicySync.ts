/**
 * Follows the learner's policy packages (docs/protocol.md § Sockets, ARCHITECTURE.md §5): a SUB on the policy
 * endpoint (topic `policy`), plus `get_policy` over the experience link after a welcome that names a package this
 * robot does not have (late joiners). Each package is written to `<cacheDir>/<version>/` through a temp directory
 * that becomes visible (rename) only after every file matched its sha256 in the header and policy.json validated.
 * A package that fails is rejected with a logged reason and never emitted.
 *
 * A directory that already exists under the version's name is not trusted for its name (issue 24: anyone who can
 * write the cache could have put it there): the received package is verified as a new one would be (hashes,
 * policy.json, signature), and the cached directory is used only when it holds exactly those files, byte for byte;
 * otherwise it is replaced by the verified package (and the replacement logged).
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Observable } from "rxjs";
import { Subscriber } from "zeromq";
import { readPolicyJson, verifyHashes } from "../policies/PolicyPackage.ts";
import { verifyPackageSignature, type PackageTrust } from "../policies/PackageSignature.ts";
import { curveClientOptions, type CurveClientKeys } from "./CurveCertificate.ts";
import { decodePolicyPublication, POLICY_TOPIC, type PolicyMessage, type Welcome } from "./messages.ts";

/** A verified package in the cache. */
export interface ReceivedPackage {
  version: string;
  kind: string;
  baseVersion: string | null;
  /** `<cacheDir>/<version>`, complete and verified. */
  dir: string;
  source: "pub" | "get_policy";
}

/** A package that was refused. */
export interface RejectedPackage {
  version: string;
  reason: string;
}

/** The part of {@link ExperienceBridge} PolicySync uses. */
export interface PolicySource {
  onWelcome(cb: (w: Welcome) => void): () => void;
  getPolicy(version?: string): Promise<PolicyMessage>;
}

/** Options of {@link PolicySync.start}. */
export interface PolicySyncOptions {
  /** The learner's policy PUB, e.g. `tcp://learner:5556`. */
  endpoint: string;
  cacheDir: string;
  /** The experience link; after each welcome a missing latest package is fetched with get_policy. */
  experience?: PolicySource;
  /** Version the robot runs now: a welcome naming it fetches nothing. */
  currentVersion?: string;
  /** CURVE keys: the SUB only completes a handshake with the holder of the learner's secret key. */
  curve?: CurveClientKeys;
  /** Accept only packages signed by one of these keys (policy.sig); without it signatures are not checked. */
  trust?: PackageTrust;
  logger?: { warn(msg: string): void; info(msg: string): void };
}

type ResolvedOptions = PolicySyncOptions & { logger: NonNullable<PolicySyncOptions["logger"]> };

const VERSION_RE = /^[A-Za-z0-9_.-]+$/;

/** A running policy follower. */
export class PolicySync {
  #o: ResolvedOptions;
  #sub: Subscriber;
  #known = new Set<string>();
  #queue: Promise<unknown> = Promise.resolve();
  #listeners = new Set<(p: ReceivedPackage) => void>();
  #rejectListeners = new Set<(r: RejectedPackage) => void>();
  #offWelcome: (() => void) | undefined;
  #closed = false;
  readonly counters = { received: 0, accepted: 0, rejected: 0 };
  /** The last refusals (newest last, at most 20), for status displays and the fault table. */
  readonly rejections: RejectedPackage[] = [];

  private constructor(o: ResolvedOptions, sub: Subscriber) {
    this.#o = o;
    this.#sub = sub;
    if (o.currentVersion !== undefined) this.#known.add(o.currentVersion);
  }

  /** Creates the cache directory, connects the SUB and listens for welcomes on the experience link. */
  static async start(options: PolicySyncOptions): Promise<PolicySync> {
    await mkdir(options.cacheDir, { recursive: true });
    const sub = new Subscriber({ linger: 0, ...curveClientOptions(options.curve) });
    sub.connect(options.endpoint);
    sub.subscribe(POLICY_TOPIC);
    const sync = new PolicySync({ logger: console, ...options }, sub);
    void sync.#receive();
    sync.#offWelcome = options.experience?.onWelcome((w) => sync.#onWelcome(w));
    return sync;
  }

  /** Calls `cb` with every verified package; returns the unsubscribe function. */
  onPackage(cb: (p: ReceivedPackage) => void): () => void {
    this.#listeners.add(cb);
    return () => this.#listeners.delete(cb);
  }

  /** Calls `cb` with every rejected package; returns the unsubscribe function. */
  onRejected(cb: (r: RejectedPackage) => void): () => void {
    this.#rejectListeners.add(cb);
    return () => this.#rejectListeners.delete(cb);
  }

  /** Verified packages as an Observable (for RxJS code at the edge). */
  packages$(): Observable<ReceivedPackage> {
    return new Observable((subscriber) => this.onPackage((p) => subscriber.next(p)));
  }

  /** Verifies and caches one package (from the PUB, get_policy, or a test); resolves with it, or undefined when refused or already known. */
  ingest(msg: PolicyMessage, source: ReceivedPackage["source"]): Promise<ReceivedPackage | undefined> {
    const run = this.#queue.then(() => this.#ingest(msg, source));
    this.#queue = run.catch(() => undefined);
    return run;
  }

  /** Stops listening. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#offWelcome?.();
    this.#sub.close();
    await this.#queue;
  }

  async #ingest(msg: PolicyMessage, source: ReceivedPackage["source"]): Promise<ReceivedPackage | undefined> {
    this.counters.received++;
    const { version } = msg;
    if (this.#known.has(version)) return undefined;
    if (!VERSION_RE.test(version) || version.startsWith(".")) return this.#reject(version, `version ${JSON.stringify(version)} is not a plain directory name`);
    const dir = join(this.#o.cacheDir, version);
    const pkg: ReceivedPackage = { version, kind: msg.kind, baseVersion: msg.baseVersion, dir, source };
    const tag = randomBytes(4).toString("hex");
    const tmp = join(this.#o.cacheDir, `.tmp-${version}-${tag}`);
    const stale = join(this.#o.cacheDir, `.stale-${version}-${tag}`);
    try {
      const problem = await this.#writeVerified(msg, tmp);
      if (problem !== undefined) return this.#reject(version, problem);
      if (await exists(dir)) {
        const differs = await sameFiles(dir, msg);
        if (differs === null) return this.#accept(pkg); // the cached copy is exactly the verified package
        this.#o.logger.warn(`PolicySync: cached ${dir} is not the package the learner sent (${differs}); replacing it with the verified one`);
        await rename(dir, stale);
      }
      await rename(tmp, dir);
    } catch (e) {
      return this.#reject(version, `cannot write ${dir}: ${(e as Error).message}`);
    } finally {
      await rm(tmp, { recursive: true, force: true });
      await rm(stale, { recursive: true, force: true });
    }
    return this.#accept(pkg);
  }

  /** Writes the files into `tmp` and checks them; returns why they are refused, or undefined. */
  async #writeVerified(msg: PolicyMessage, tmp: string): Promise<string | undefined> {
    if (!msg.files.some((f) => f.name === "policy.json")) return "the package has no policy.json";
    await mkdir(tmp);
    for (const f of msg.files) {
      const found = createHash("sha256").update(f.data).digest("hex");
      if (found !== f.sha256) return `file ${f.name}: the header says sha256 ${f.sha256}, the bytes hash to ${found}`;
      await writeFile(join(tmp, f.name), f.data);
    }
    try {
      const { json } = await readPolicyJson(tmp);
      if (json.version !== msg.version || json.kind !== msg.kind) return `policy.json says ${json.kind} ${json.version}; the header says ${msg.kind} ${msg.version}`;
      await verifyHashes(tmp, json);
      for (const name of Object.values(json.files)) if (!(name in json.sha256)) return `policy.json lists ${name} without a sha256`;
      if (this.#o.trust !== undefined) await verifyPackageSignature(tmp, this.#o.trust);
    } catch (e) {
      return (e as Error).message.replaceAll(tmp, `<${msg.version}>`);
    }
    return undefined;
  }

  #accept(pkg: ReceivedPackage): ReceivedPackage {
    this.#known.add(pkg.version);
    this.counters.accepted++;
    this.#o.logger.info(`PolicySync: ${pkg.kind} package ${pkg.version} verified in ${pkg.dir} (via ${pkg.source})`);
    for (const cb of this.#listeners) cb(pkg);
    return pkg;
  }

  #reject(version: string, reason: string): undefined {
    this.counters.rejected++;
    this.rejections.push({ version, reason });
    if (this.rejections.length > 20) this.rejections.shift();
    this.#o.logger.warn(`PolicySync: rejected package ${version}: ${reason}`);
    for (const cb of this.#rejectListeners) cb({ version, reason });
    return undefined;
  }

  #onWelcome(w: Welcome): void {
    const latest = w.latestPolicy;
    if (latest === null || this.#known.has(latest.version) || this.#o.experience === undefined) return;
    this.#o.experience.getPolicy(latest.version).then(
      (msg) => this.ingest(msg, "get_policy"),
      (e: Error) => this.#o.logger.warn(`PolicySync: get_policy ${latest.version} failed: ${e.message}`),
    );
  }

  async #receive(): Promise<void> {
    try {
      for await (const frames of this.#sub) {
        let msg: PolicyMessage;
        try {
          msg = decodePolicyPublication(frames);
        } catch (e) {
          this.counters.received++;
          this.#reject("(unreadable)", `malformed publication: ${(e as Error).message}`);
          continue;
        }
        await this.ingest(msg, "pub");
      }
    } catch (e) {
      if (!this.#closed) this.#o.logger.warn(`PolicySync: SUB loop ended: ${(e as Error).message}`);
    }
  }
}

/** Null when `dir` holds exactly the files of `msg` with the same bytes (sha256), else what differs. */
async function sameFiles(dir: string, msg: PolicyMessage): Promise<string | null> {
  const want = new Map(msg.files.map((f) => [f.name, f.sha256]));
  const names = await readdir(dir);
  const extra = names.filter((n) => !want.has(n));
  if (extra.length > 0) return `files the package does not have: ${extra.join(", ")}`;
  for (const [name, sha] of want) {
    if (!names.includes(name)) return `${name} is missing`;
    const found = createHash("sha256").update(await readFile(join(dir, name))).digest("hex");
    if (found !== sha) return `${name} hashes to ${found.slice(0, 12)}…, the package's to ${sha.slice(0, 12)}…`;
  }
  return null;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
