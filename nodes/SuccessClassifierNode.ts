/**
 * success_classifier: a learned reward (HIL-SERL, Luo et al. 2024, arXiv 2410.21845 §III-B): a small image
 * classifier trained on frames the operator labelled (`rlft label` → `python3 -m rlft_learner
 * train-classifier`) scores every camera frame; `consecutive` frames at or above `threshold` end the episode
 * as a success through a terminal /reward with source "classifier". The model is tiny (a few conv layers on
 * a 64×64 frame, well under a millisecond), so it runs on the node's thread at the camera rate.
 */
import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { z } from "zod";
import type { NodeHandle, Publisher } from "../runtime/Runtime.ts";
import { NodeBase } from "./NodeBase.ts";
import { TOPICS } from "../contracts/topics.ts";
import { header, type EpisodeEventMsg } from "../contracts/msgs.ts";

/** classifier.json, written by the learner next to the ONNX file. */
export const ClassifierJson = z
  .object({
    format: z.literal("rlft-success-classifier"),
    version: z.literal(1),
    onnx: z.string(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    input: z.object({ name: z.string(), height: z.number().int().positive(), width: z.number().int().positive(), channels: z.literal(3) }).strict(),
    output: z.string(),
    trained_on: z.object({ positives: z.number().int(), negatives: z.number().int() }).strict(),
    val_accuracy: z.number().optional(),
  })
  .strict();

/** Options of the node. */
export interface SuccessClassifierOptions {
  modelDir: string;
  threshold: number;
  consecutive: number;
}

/** A loaded classifier: image (rgb8, H×W×3) → success probability. */
export class SuccessClassifier {
  readonly meta: z.infer<typeof ClassifierJson>;
  readonly #session: ort.InferenceSession;

  private constructor(meta: z.infer<typeof ClassifierJson>, session: ort.InferenceSession) {
    this.meta = meta;
    this.#session = session;
  }

  /** Loads and verifies (schema, sha256) a classifier directory. */
  static async load(dir: string): Promise<SuccessClassifier> {
    let meta: z.infer<typeof ClassifierJson>;
    try {
      meta = ClassifierJson.parse(JSON.parse(readFileSync(join(dir, "classifier.json"), "utf8")));
    } catch (e) {
      throw new Error(`reward.classifier.model ${dir}: not a success classifier (${(e as Error).message.split("\n")[0]}); train one with python3 -m rlft_learner train-classifier --data <labels dir> --out ${dir}`);
    }
    const bytes = readFileSync(join(dir, meta.onnx));
    const sha = createHash("sha256").update(bytes).digest("hex");
    if (sha !== meta.sha256) throw new Error(`reward.classifier.model ${dir}: ${meta.onnx} has sha256 ${sha.slice(0, 12)}…, classifier.json says ${meta.sha256.slice(0, 12)}…; the file is corrupt or was replaced — retrain or copy it again`);
    const session = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1 });
    return new SuccessClassifier(meta, session);
  }

  /** Success probability of one rgb8 frame. */
  async score(frame: { width: number; height: number; data: Uint8Array }): Promise<number> {
    const { height: h, width: w } = this.meta.input;
    if (frame.width !== w || frame.height !== h) throw new Error(`classifier expects ${w}×${h} frames, the camera sends ${frame.width}×${frame.height}: set camera.width/height to match or retrain`);
    const t = new ort.Tensor("uint8", new Uint8Array(frame.data), [1, h, w, 3]);
    const out = await this.#session.run({ [this.meta.input.name]: t });
    return Number((out[this.meta.output].data as Float32Array)[0]);
  }

  async close(): Promise<void> {
    await this.#session.release();
  }
}

/** The node. */
export class SuccessClassifierNode extends NodeBase {
  readonly classifier: SuccessClassifier;
  #o: SuccessClassifierOptions;
  #pub?: Publisher<unknown>;
  #running = false;
  #streak = 0;
  #busy = false;
  /** Last probability, for status and tests. */
  lastProbability = Number.NaN;

  private constructor(node: NodeHandle, classifier: SuccessClassifier, o: SuccessClassifierOptions) {
    super(node);
    this.classifier = classifier;
    this.#o = o;
  }

  /** Loads the model, then builds the node. */
  static async create(node: NodeHandle, o: SuccessClassifierOptions): Promise<SuccessClassifierNode> {
    return new SuccessClassifierNode(node, await SuccessClassifier.load(o.modelDir), o);
  }

  override async configure(): Promise<void> {
    this.#pub = this.node.createPublisher(TOPICS.reward.type, TOPICS.reward.topic);
    this.subscribe<EpisodeEventMsg>(TOPICS.episodeEvent, (e) => {
      if (e.event === "start") {
        this.#running = true;
        this.#streak = 0;
      } else if (e.event !== "pause" && e.event !== "resume") this.#running = false;
    });
    this.subscribe<{ header: { stamp: { sec: number; nanosec: number } }; width: number; height: number; encoding: string; data: Uint8Array }>(TOPICS.image, (m) => {
      if (!this.#running || this.#busy || m.encoding !== "rgb8") return;
      this.#busy = true;
      void this.classifier
        .score(m)
        .then((p) => {
          this.lastProbability = p;
          this.#streak = p >= this.#o.threshold ? this.#streak + 1 : 0;
          if (this.#running && this.#streak >= this.#o.consecutive) {
            this.#running = false;
            this.#pub?.publish({ header: header(m.header.stamp), reward: 1, terminal: true, source: "classifier" });
          }
        })
        .catch((e: Error) => this.node.logger.error(`success classifier failed: ${e.message}`))
        .finally(() => (this.#busy = false));
    });
  }

  override async shutdown(): Promise<void> {
    await super.shutdown();
    await this.classifier.close();
  }
}
