/**
 * A policy package's Hugging Face `tokenizer.json`, run by Hugging Face's own tokenizers.js (`@huggingface/tokenizers`,
 * pure JS, no network): it does normalizer → pre-tokenizer → model → post-processor. This file is the glue the
 * robot needs around it: load errors that name the file, truncation and padding to the length the package's graph
 * takes (the Rust library applies the file's `truncation`/`padding` sections itself; tokenizers.js leaves them to its
 * caller), unknown words for the logs, and the vocabulary the package loader checks against the model.
 */
import { readFile } from "node:fs/promises";
import { Tokenizer as HfTokenizer } from "@huggingface/tokenizers";
import { PolicyPackageError } from "../PolicyPackageError.ts";

/** One encoded instruction. */
export interface Encoding {
  ids: number[];
  attentionMask: number[];
  tokens: string[];
  /** Words of the input that mapped to the unk token (for logs: the instruction used words the model never saw). */
  unknown: string[];
  /** Tokens truncation cut off the end (or start) to fit max_length: the model never sees them. */
  dropped: string[];
}

type Json = Record<string, unknown>;

const MODEL_TYPES = ["WordLevel", "WordPiece", "BPE", "Unigram"];

/** tokenizers.js's components are callables at run time; its .d.ts types them as classes. */
type TextFn = (s: string) => string;
type WordsFn = (s: string) => string[];
type ModelFn = (words: string[]) => string[];
type PostFn = (tokens: string[], pair: null, addSpecial: boolean) => { tokens: string[] };

/** tokenizers.js's Tokenizer over `doc`; its load errors become a {@link PolicyPackageError} naming the file. */
function loadHf(doc: Json, unkToken: string | null, path: string): HfTokenizer {
  try {
    // unk_token is what transformers.js passes from tokenizer_config.json; tokenizers.js's WordLevel needs it to map
    // unknown words to the unk id (the Rust library reads it from model.unk_token).
    return new HfTokenizer({ added_tokens: [], normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null, ...doc }, { unk_token: unkToken ?? undefined });
  } catch (cause) {
    throw new PolicyPackageError("tokenizer", `${path}: Hugging Face tokenizers.js cannot load it: ${(cause as Error).message} — export the tokenizer with components tokenizers.js supports`, { path, cause });
  }
}

/** A loaded tokenizer.json. */
export class Tokenizer {
  /** Token → id over the model vocabulary and the added tokens. */
  readonly vocab: ReadonlyMap<string, number>;
  readonly modelType: string;
  /** Fixed length every encoding is padded to (padding.strategy.Fixed), or null. */
  readonly fixedLength: number | null;
  readonly padId: number | null;
  readonly path: string;
  #hf: HfTokenizer;
  #unkToken: string | null;
  #unkId: number | undefined;
  /** Truncation from the file: at most `max` tokens including the post-processor's special tokens. */
  #truncation: { max: number; left: boolean } | null;
  #padding: { fixed: number | null; left: boolean; multiple: number | null } | null;
  /** How many special tokens the post-processor adds to one sequence (what truncation leaves room for). */
  #specials: number;

  private constructor(doc: Json, path: string) {
    this.path = path;
    const fail = (msg: string): never => {
      throw new PolicyPackageError("tokenizer", `${path}: ${msg}`, { path });
    };
    const m = doc.model;
    if (!m || typeof m !== "object") throw new PolicyPackageError("tokenizer", `${path}: no "model" section — is this a Hugging Face tokenizer.json?`, { path });
    const model = m as Json;
    this.modelType = String(model.type);
    // tokenizers.js treats a model type it does not name as a pass-through "legacy" vocabulary, which is right for
    // WordLevel only; any other unnamed type would tokenise silently wrong.
    if (!MODEL_TYPES.includes(this.modelType)) fail(`model type ${JSON.stringify(model.type)} is not one of ${MODEL_TYPES.join(", ")} (what Hugging Face tokenizers.js runs)`);
    this.#unkToken = model.unk_token === null || model.unk_token === undefined ? null : String(model.unk_token);
    this.#hf = loadHf(doc, this.#unkToken, path);
    const vocab = new Map<string, number>();
    for (const [tok, id] of this.#hf.get_vocab(true)) if (tok !== undefined) vocab.set(tok, id);
    this.vocab = vocab;
    // The unk id as tokenizers.js resolved it (model.unk_token, or a Unigram model's unk_id).
    this.#unkId = this.#hf.model?.unk_token_id;
    // The Rust library looks the unk token up in the model's own vocabulary (added tokens do not count), and fails at
    // encode time when it is not there: refuse such a file at load instead.
    const rawVocab = model.vocab;
    const inModel = (t: string): boolean => (Array.isArray(rawVocab) ? rawVocab.some((e) => Array.isArray(e) && e[0] === t) : typeof rawVocab === "object" && rawVocab !== null && Object.hasOwn(rawVocab, t));
    if (this.#unkToken !== null && !inModel(this.#unkToken)) fail(`model.unk_token ${JSON.stringify(this.#unkToken)} is not in model.vocab — the tokenizer could not map unknown words`);
    if (this.modelType === "WordLevel" && this.#unkId === undefined) fail(`a WordLevel model needs an unk_token in its vocab, so unknown words have an id`);
    const tr = doc.truncation as Json | null | undefined;
    this.#truncation = tr ? { max: Number(tr.max_length), left: tr.direction === "Left" } : null;
    const pad = doc.padding as Json | null | undefined;
    const fixed = pad && typeof pad.strategy === "object" && pad.strategy !== null ? Number((pad.strategy as Json).Fixed) : null;
    this.#padding = pad ? { fixed, left: pad.direction === "Left", multiple: pad.pad_to_multiple_of ? Number(pad.pad_to_multiple_of) : null } : null;
    this.fixedLength = fixed;
    this.padId = pad ? Number(pad.pad_id ?? 0) : null;
    this.#specials = this.#postProcess([]).length;
  }

  /** Parses a tokenizer.json document; throws {@link PolicyPackageError} `tokenizer` naming what it cannot run. */
  static fromJson(doc: unknown, path = "tokenizer.json"): Tokenizer {
    if (doc === null || typeof doc !== "object" || Array.isArray(doc)) throw new PolicyPackageError("tokenizer", `${path}: expected a JSON object`, { path });
    return new Tokenizer(doc as Json, path);
  }

  /** Reads and parses `path`. */
  static async load(path: string): Promise<Tokenizer> {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (cause) {
      throw new PolicyPackageError("missing_file", `Cannot read ${path}: ${(cause as Error).message}`, { cause, path });
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch (cause) {
      throw new PolicyPackageError("invalid_json", `${path} is not valid JSON: ${(cause as Error).message}`, { cause, path });
    }
    return Tokenizer.fromJson(doc, path);
  }

  /** Encodes one text as the Rust `tokenizers` library does with this file's truncation and padding. */
  encode(text: string): Encoding {
    const all = this.#hf.tokenize(text, { add_special_tokens: false });
    let seq = all;
    let dropped: string[] = [];
    // Truncation of a single sequence (any strategy) keeps max_length minus the special tokens the template adds.
    if (this.#truncation && seq.length + this.#specials > this.#truncation.max) {
      const keep = Math.max(0, this.#truncation.max - this.#specials);
      dropped = this.#truncation.left ? seq.slice(0, seq.length - keep) : seq.slice(keep);
      seq = this.#truncation.left ? seq.slice(seq.length - keep) : seq.slice(0, keep);
    }
    const tokens = this.#postProcess(seq);
    let ids = tokens.map((t) => this.vocab.get(t) ?? this.#unkId ?? -1);
    if (ids.includes(-1)) throw new PolicyPackageError("tokenizer", `${this.path}: tokens [${tokens.filter((t) => !this.vocab.has(t)).join(", ")}] have no id and the model has no unk_token`, { path: this.path });
    let mask = ids.map(() => 1);
    const pad = this.#padding;
    if (pad) {
      let target = pad.fixed ?? ids.length;
      if (pad.multiple) target = Math.ceil(target / pad.multiple) * pad.multiple;
      const n = Math.max(0, target - ids.length);
      const fill = new Array<number>(n).fill(this.padId ?? 0);
      const zeros = new Array<number>(n).fill(0);
      ids = pad.left ? [...fill, ...ids] : [...ids, ...fill];
      mask = pad.left ? [...zeros, ...mask] : [...mask, ...zeros];
    }
    return { ids, attentionMask: mask, tokens: ids.map((i) => this.#hf.id_to_token(i) ?? ""), unknown: this.#unknownWords(text, all), dropped };
  }

  /** Back to text, skipping special tokens (the file's decoder, through tokenizers.js). */
  decode(ids: readonly number[]): string {
    return ids.length === 0 ? "" : this.#hf.decode([...ids], { skip_special_tokens: true });
  }

  #postProcess(tokens: string[]): string[] {
    const post = this.#hf.post_processor as unknown as PostFn | null;
    return post ? post(tokens, null, true).tokens : tokens;
  }

  /**
   * Words that became the unk token, for the logs. WordLevel and Unigram models keep an unknown piece's text (which
   * is not in the vocabulary; tokenizers.js maps it to the unk id afterwards); WordPiece and BPE replace it with the
   * unk token, so there each pre-tokenised word is run through the model alone to find the ones with unknown pieces.
   */
  #unknownWords(text: string, seq: readonly string[]): string[] {
    const isUnk = (t: string): boolean => !this.vocab.has(t) || (this.#unkId !== undefined && this.vocab.get(t) === this.#unkId);
    if (!seq.some(isUnk)) return [];
    if (!seq.some((t) => this.vocab.has(t) && this.vocab.get(t) === this.#unkId)) return seq.filter(isUnk);
    const hf = this.#hf;
    const normalize = hf.normalizer as unknown as TextFn | null;
    const preTokenize = hf.pre_tokenizer as unknown as WordsFn | null;
    const model = hf.model as unknown as ModelFn;
    const normalized = normalize ? normalize(text) : text;
    const words = preTokenize ? preTokenize(normalized) : [normalized];
    return words.filter((w) => model([w]).some(isUnk));
  }
}
