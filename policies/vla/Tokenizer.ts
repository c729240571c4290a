/**
 * A Hugging Face `tokenizer.json` (the `tokenizers` library's serialisation) run in TS: added tokens → normalizer →
 * pre-tokenizer → model (WordLevel, WordPiece, BPE) → post-processor → truncation → padding, the order
 * `tokenizers` applies them (https://huggingface.co/docs/tokenizers/pipeline). Components it does not implement are
 * refused at load with their name, never guessed at run time; an unknown word becomes the model's unk token, as the
 * library does. Cross-checked against tokenizers.js and the learner's Python encoder in Tokenizer.test.ts.
 */
import { readFile } from "node:fs/promises";
import { PolicyPackageError } from "../PolicyPackageError.ts";

/** One encoded instruction. */
export interface Encoding {
  ids: number[];
  attentionMask: number[];
  tokens: string[];
  /** Pieces of the input that mapped to the unk token (for logs: the instruction used words the model never saw). */
  unknown: string[];
}

type Json = Record<string, unknown>;
type Normalizer = (s: string) => string;
type PreTokenizer = (pieces: string[]) => string[];

/** Rust regex's Unicode \w (tokenizers compiles with Oniguruma/regex in Unicode mode). */
const W = String.raw`\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\u200c\u200d`;
const isBertPunct = (c: string): boolean => {
  const cp = c.codePointAt(0)!;
  return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126) || /^\p{P}$/u.test(c);
};

/** GPT-2's byte → printable unicode map (tokenizers' ByteLevel). */
const BYTE_TO_CHAR: string[] = (() => {
  const keep: number[] = [];
  for (let b = 33; b <= 126; b++) keep.push(b);
  for (let b = 161; b <= 172; b++) keep.push(b);
  for (let b = 174; b <= 255; b++) keep.push(b);
  const out = new Array<string>(256);
  let n = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCodePoint(keep.includes(b) ? b : 256 + n++);
  return out;
})();
const CHAR_TO_BYTE = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));
const GPT2_SPLIT = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

function unsupported(what: string, type: unknown, path: string): never {
  throw new PolicyPackageError("tokenizer", `${path}: ${what} type ${JSON.stringify(type)} is not supported by rlft's tokenizer loader (policies/vla/Tokenizer.ts) — export the tokenizer with a supported component or add it there`, { path });
}

function regexOf(pattern: unknown, path: string): RegExp | string {
  const p = pattern as { String?: string; Regex?: string };
  if (typeof p?.String === "string") return p.String;
  if (typeof p?.Regex === "string") {
    try {
      return new RegExp(p.Regex, "gu");
    } catch (e) {
      throw new PolicyPackageError("tokenizer", `${path}: regex ${JSON.stringify(p.Regex)} does not compile in JavaScript: ${(e as Error).message}`, { path });
    }
  }
  return unsupported("pattern", pattern, path);
}

function normalizer(n: Json | null | undefined, path: string): Normalizer {
  if (!n) return (s) => s;
  switch (n.type) {
    case "NFD":
    case "NFC":
    case "NFKD":
    case "NFKC":
      return (s) => s.normalize(n.type as string);
    case "Lowercase":
      return (s) => s.toLowerCase();
    case "StripAccents":
      return (s) => s.replace(/\p{Mn}/gu, "");
    case "Strip":
      return (s) => (n.strip_left !== false ? s.replace(/^\s+/u, "") : s).replace(n.strip_right !== false ? /\s+$/u : /$^/, "");
    case "Prepend":
      return (s) => (s.length ? String(n.prepend) + s : s);
    case "Replace": {
      const re = regexOf(n.pattern, path);
      return (s) => (typeof re === "string" ? s.split(re).join(String(n.content)) : s.replace(re, String(n.content)));
    }
    case "Sequence": {
      const parts = (n.normalizers as Json[]).map((x) => normalizer(x, path));
      return (s) => parts.reduce((acc, f) => f(acc), s);
    }
    case "BertNormalizer": {
      const lower = n.lowercase !== false;
      const strip = n.strip_accents === null || n.strip_accents === undefined ? lower : Boolean(n.strip_accents);
      return (s) => {
        // Control characters (\p{Cc}, which includes NUL) and U+FFFD go, whitespace becomes a plain space.
        if (n.clean_text !== false) s = s.replace(/[\ufffd\p{Cc}]/gu, (c) => (/\s/u.test(c) ? " " : "")).replace(/\s/gu, " ");
        if (n.handle_chinese_chars !== false) s = s.replace(/[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff]/gu, (c) => ` ${c} `);
        if (strip) s = s.normalize("NFD").replace(/\p{Mn}/gu, "");
        return lower ? s.toLowerCase() : s;
      };
    }
    default:
      return unsupported("normalizer", n.type, path);
  }
}

/** Splits `s` by `re`, keeping matches per `behavior` (tokenizers' SplitDelimiterBehavior). */
function splitBy(s: string, re: RegExp | string, behavior: string, invert = false): string[] {
  const spans: [number, number, boolean][] = [];
  let last = 0;
  const matches: [number, number][] = [];
  if (typeof re === "string") {
    for (let i = s.indexOf(re); re.length > 0 && i >= 0; i = s.indexOf(re, i + re.length)) matches.push([i, i + re.length]);
  } else {
    for (const m of s.matchAll(re)) if (m[0].length > 0) matches.push([m.index!, m.index! + m[0].length]);
  }
  for (const [a, b] of matches) {
    if (a > last) spans.push([last, a, invert]);
    spans.push([a, b, !invert]);
    last = b;
  }
  if (last < s.length) spans.push([last, s.length, invert]);
  const out: string[] = [];
  for (let i = 0; i < spans.length; i++) {
    const [a, b, isDelim] = spans[i];
    const text = s.slice(a, b);
    if (!isDelim) out.push(text);
    else if (behavior === "Removed") continue;
    else if (behavior === "MergedWithPrevious" && out.length > 0 && !spans[i - 1]?.[2]) out[out.length - 1] += text;
    else if (behavior === "MergedWithNext" && i + 1 < spans.length && !spans[i + 1][2]) {
      out.push(text + s.slice(spans[i + 1][0], spans[i + 1][1]));
      i++;
    } else out.push(text);
  }
  return out.filter((p) => p.length > 0);
}

function preTokenizer(p: Json | null | undefined, path: string): PreTokenizer {
  if (!p) return (x) => x;
  const each = (f: (s: string) => string[]): PreTokenizer => (xs) => xs.flatMap(f);
  switch (p.type) {
    case "Whitespace":
      return each((s) => s.match(new RegExp(`[${W}]+|[^${W}\\s]+`, "gu")) ?? []);
    case "WhitespaceSplit":
      return each((s) => s.split(/\s+/u).filter(Boolean));
    case "BertPreTokenizer":
      return each((s) => s.split(/\s+/u).filter(Boolean).flatMap((w) => splitBy(w, /./gsu, "Isolated").reduce<string[]>((acc, c) => {
        if (isBertPunct(c) || acc.length === 0 || isBertPunct(acc[acc.length - 1])) acc.push(c);
        else acc[acc.length - 1] += c;
        return acc;
      }, [])));
    case "Punctuation":
      return each((s) => splitBy(s, /[\p{P}\p{S}]/gu, String(p.behavior ?? "Isolated")));
    case "Digits":
      return each((s) => splitBy(s, p.individual_digits ? /\p{Nd}/gu : /\p{Nd}+/gu, "Isolated"));
    case "Split": {
      const re = regexOf(p.pattern, path);
      return each((s) => splitBy(s, re, String(p.behavior ?? "Isolated"), Boolean(p.invert)));
    }
    case "Metaspace": {
      const rep = String(p.replacement ?? "▁");
      const scheme = String(p.prepend_scheme ?? (p.add_prefix_space === false ? "never" : "always"));
      return (xs) =>
        xs.flatMap((s, i) => {
          let t = s.replaceAll(" ", rep);
          if ((scheme === "always" || (scheme === "first" && i === 0)) && !t.startsWith(rep)) t = rep + t;
          return p.split === false ? [t] : splitBy(t, rep, "MergedWithNext");
        });
    }
    case "ByteLevel":
      return each((s) => {
        const t = p.add_prefix_space && !s.startsWith(" ") ? ` ${s}` : s;
        const parts = p.use_regex === false ? [t] : (t.match(GPT2_SPLIT) ?? []);
        return parts.map((w) => Array.from(new TextEncoder().encode(w), (b) => BYTE_TO_CHAR[b]).join(""));
      });
    case "Sequence": {
      const parts = (p.pretokenizers as Json[]).map((x) => preTokenizer(x, path));
      return (xs) => parts.reduce((acc, f) => f(acc), xs);
    }
    default:
      return unsupported("pre_tokenizer", p.type, path);
  }
}

interface Model {
  vocab: Map<string, number>;
  /** word → ids; pieces that became unk are pushed to `unknown`. */
  tokenize(word: string, unknown: string[]): number[];
}

function model(m: Json, path: string): Model {
  const rawVocab = m.vocab as Record<string, number> | [string, number][];
  const vocab = new Map<string, number>(Array.isArray(rawVocab) ? rawVocab : Object.entries(rawVocab));
  const unkToken = m.unk_token === null || m.unk_token === undefined ? null : String(m.unk_token);
  const unkId = unkToken === null ? undefined : vocab.get(unkToken);
  if (unkToken !== null && unkId === undefined) {
    throw new PolicyPackageError("tokenizer", `${path}: model.unk_token ${JSON.stringify(unkToken)} is not in model.vocab — the tokenizer could not map unknown words`, { path });
  }
  switch (m.type) {
    case "WordLevel":
      if (unkId === undefined) throw new PolicyPackageError("tokenizer", `${path}: a WordLevel model needs an unk_token in its vocab, so unknown words have an id`, { path });
      return {
        vocab,
        tokenize: (w, unknown) => {
          const id = vocab.get(w);
          if (id !== undefined) return [id];
          unknown.push(w);
          return [unkId];
        },
      };
    case "WordPiece": {
      const prefix = String(m.continuing_subword_prefix ?? "##");
      const maxChars = Number(m.max_input_chars_per_word ?? 100);
      if (unkId === undefined) throw new PolicyPackageError("tokenizer", `${path}: a WordPiece model needs an unk_token in its vocab`, { path });
      return {
        vocab,
        tokenize: (w, unknown) => {
          const chars = Array.from(w);
          if (chars.length > maxChars) return unknown.push(w), [unkId];
          const ids: number[] = [];
          for (let start = 0; start < chars.length; ) {
            let end = chars.length;
            let found: number | undefined;
            for (; end > start; end--) {
              const piece = (start > 0 ? prefix : "") + chars.slice(start, end).join("");
              found = vocab.get(piece);
              if (found !== undefined) break;
            }
            if (found === undefined) return unknown.push(w), [unkId];
            ids.push(found);
            start = end;
          }
          return ids;
        },
      };
    }
    case "BPE": {
      const merges = new Map<string, number>();
      (m.merges as (string | [string, string])[]).forEach((x, i) => merges.set(Array.isArray(x) ? `${x[0]} ${x[1]}` : x, i));
      const prefix = m.continuing_subword_prefix ? String(m.continuing_subword_prefix) : "";
      const suffix = m.end_of_word_suffix ? String(m.end_of_word_suffix) : "";
      return {
        vocab,
        tokenize: (w, unknown) => {
          if (m.ignore_merges && vocab.has(w)) return [vocab.get(w)!];
          const chars = Array.from(w);
          let parts = chars.map((c, i) => (i > 0 ? prefix : "") + c + (i === chars.length - 1 ? suffix : ""));
          for (;;) {
            let best = -1;
            let rank = Infinity;
            for (let i = 0; i + 1 < parts.length; i++) {
              const r = merges.get(`${parts[i]} ${parts[i + 1]}`);
              if (r !== undefined && r < rank) [rank, best] = [r, i];
            }
            if (best < 0) break;
            const right = parts[best + 1].startsWith(prefix) && prefix ? parts[best + 1].slice(prefix.length) : parts[best + 1];
            parts = [...parts.slice(0, best), parts[best] + right, ...parts.slice(best + 2)];
          }
          const ids: number[] = [];
          let prevUnk = false;
          for (const p of parts) {
            const id = vocab.get(p);
            if (id !== undefined) {
              ids.push(id);
              prevUnk = false;
              continue;
            }
            if (m.byte_fallback) {
              const bytes = Array.from(new TextEncoder().encode(p), (b) => vocab.get(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`));
              if (bytes.every((b) => b !== undefined)) {
                ids.push(...(bytes as number[]));
                prevUnk = false;
                continue;
              }
            }
            unknown.push(p);
            if (unkId === undefined) continue; // tokenizers drops pieces it has no id for when the model has no unk token
            if (!(m.fuse_unk && prevUnk)) ids.push(unkId);
            prevUnk = true;
          }
          return ids;
        },
      };
    }
    default:
      return unsupported("model", m.type, path);
  }
}

type Piece = { special: number } | { sequence: true };

function postProcessor(p: Json | null | undefined, vocab: Map<string, number>, path: string): Piece[] {
  if (!p || p.type === "ByteLevel") return [{ sequence: true }];
  const idOf = (tok: string): number => {
    const id = vocab.get(tok);
    if (id === undefined) throw new PolicyPackageError("tokenizer", `${path}: post_processor special token ${JSON.stringify(tok)} has no id`, { path });
    return id;
  };
  switch (p.type) {
    case "TemplateProcessing": {
      const specials = (p.special_tokens ?? {}) as Record<string, { ids: number[] }>;
      return (p.single as Json[]).flatMap((x): Piece[] => {
        if ("Sequence" in x) return [{ sequence: true }];
        const id = String((x.SpecialToken as Json).id);
        const ids = specials[id]?.ids ?? [idOf(id)];
        return ids.map((i) => ({ special: i }));
      });
    }
    case "BertProcessing":
    case "RobertaProcessing": {
      const [, cls] = p.cls as [string, number];
      const [, sep] = p.sep as [string, number];
      return [{ special: cls }, { sequence: true }, { special: sep }];
    }
    case "Sequence": {
      const parts = (p.processors as Json[]).filter((x) => x.type !== "ByteLevel");
      if (parts.length > 1) return unsupported("post_processor (Sequence of more than one)", parts.map((x) => x.type), path);
      return postProcessor(parts[0] ?? null, vocab, path);
    }
    default:
      return unsupported("post_processor", p.type, path);
  }
}

/** A loaded tokenizer.json. */
export class Tokenizer {
  /** Token → id over the model vocabulary and the added tokens. */
  readonly vocab: ReadonlyMap<string, number>;
  readonly modelType: string;
  /** Fixed length every encoding is padded/truncated to (padding.strategy.Fixed), or null. */
  readonly fixedLength: number | null;
  readonly padId: number | null;
  readonly path: string;
  #normalize: Normalizer;
  #preTokenize: PreTokenizer;
  #model: Model;
  #template: Piece[];
  #added: { content: string; id: number; special: boolean; lstrip: boolean; rstrip: boolean }[];
  #truncation: { max: number; left: boolean } | null;
  #padding: { fixed: number | null; left: boolean; multiple: number | null } | null;
  #idToToken: Map<number, string>;
  #decoder: Json | null;

  private constructor(doc: Json, path: string) {
    this.path = path;
    const m = doc.model as Json | undefined;
    if (!m || typeof m !== "object") throw new PolicyPackageError("tokenizer", `${path}: no "model" section — is this a Hugging Face tokenizer.json?`, { path });
    this.modelType = String(m.type);
    this.#model = model(m, path);
    const vocab = new Map(this.#model.vocab);
    this.#added = ((doc.added_tokens ?? []) as Json[]).map((t) => ({ content: String(t.content), id: Number(t.id), special: Boolean(t.special), lstrip: Boolean(t.lstrip), rstrip: Boolean(t.rstrip) }));
    for (const t of this.#added) vocab.set(t.content, t.id);
    this.#added.sort((a, b) => b.content.length - a.content.length);
    this.vocab = vocab;
    this.#idToToken = new Map([...vocab].map(([k, v]) => [v, k]));
    this.#normalize = normalizer(doc.normalizer as Json | null, path);
    this.#preTokenize = preTokenizer(doc.pre_tokenizer as Json | null, path);
    this.#template = postProcessor(doc.post_processor as Json | null, vocab, path);
    this.#decoder = (doc.decoder as Json | null) ?? null;
    const tr = doc.truncation as Json | null | undefined;
    this.#truncation = tr ? { max: Number(tr.max_length), left: tr.direction === "Left" } : null;
    const pad = doc.padding as Json | null | undefined;
    const fixed = pad && typeof pad.strategy === "object" && pad.strategy !== null ? Number((pad.strategy as Json).Fixed) : null;
    this.#padding = pad ? { fixed, left: pad.direction === "Left", multiple: pad.pad_to_multiple_of ? Number(pad.pad_to_multiple_of) : null } : null;
    this.fixedLength = fixed;
    this.padId = pad ? Number(pad.pad_id ?? 0) : null;
  }

  /** Parses a tokenizer.json document; throws {@link PolicyPackageError} `tokenizer` naming what it cannot run. */
  static fromJson(doc: unknown, path = "tokenizer.json"): Tokenizer {
    if (doc === null || typeof doc !== "object") throw new PolicyPackageError("tokenizer", `${path}: expected a JSON object`, { path });
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

  /** Encodes one text the way `tokenizers` does with this file's settings. */
  encode(text: string): Encoding {
    const unknown: string[] = [];
    const ids: number[] = [];
    for (const seg of this.#splitAdded(text)) {
      if (typeof seg === "number") {
        ids.push(seg);
        continue;
      }
      for (const word of this.#preTokenize([this.#normalize(seg)])) ids.push(...this.#model.tokenize(word, unknown));
    }
    const added = this.#template.filter((p) => "special" in p).length;
    let seq = ids;
    if (this.#truncation && seq.length + added > this.#truncation.max) {
      const keep = Math.max(0, this.#truncation.max - added);
      seq = this.#truncation.left ? seq.slice(seq.length - keep) : seq.slice(0, keep);
    }
    let out = this.#template.flatMap((p) => ("special" in p ? [p.special] : seq));
    let mask = out.map(() => 1);
    const pad = this.#padding;
    if (pad) {
      let target = pad.fixed ?? out.length;
      if (pad.multiple) target = Math.ceil(target / pad.multiple) * pad.multiple;
      const n = Math.max(0, target - out.length);
      const fill = new Array<number>(n).fill(this.padId ?? 0);
      const zeros = new Array<number>(n).fill(0);
      out = pad.left ? [...fill, ...out] : [...out, ...fill];
      mask = pad.left ? [...zeros, ...mask] : [...mask, ...zeros];
    }
    return { ids: out, attentionMask: mask, tokens: out.map((i) => this.#idToToken.get(i) ?? ""), unknown };
  }

  /** Back to text, skipping special tokens (decoders: WordPiece, ByteLevel, Metaspace; otherwise tokens joined by spaces). */
  decode(ids: readonly number[]): string {
    const special = new Set(this.#added.filter((a) => a.special).map((a) => a.id));
    const toks = ids.filter((i) => !special.has(i)).map((i) => this.#idToToken.get(i) ?? "");
    const d = this.#decoder;
    switch (d?.type) {
      case "WordPiece": {
        const prefix = String(d.prefix ?? "##");
        return toks.map((t, i) => (i > 0 && t.startsWith(prefix) ? t.slice(prefix.length) : i > 0 ? ` ${t}` : t)).join("");
      }
      case "ByteLevel":
        return new TextDecoder().decode(Uint8Array.from(Array.from(toks.join(""), (c) => CHAR_TO_BYTE.get(c) ?? 63)));
      case "Metaspace":
        return toks.join("").replaceAll(String(d.replacement ?? "▁"), " ").replace(/^ /, "");
      default:
        return toks.join(" ");
    }
  }

  /** Raw text split around added tokens (ids) and the text between them. */
  #splitAdded(text: string): (string | number)[] {
    if (this.#added.length === 0) return [text];
    const out: (string | number)[] = [];
    let rest = text;
    outer: while (rest.length > 0) {
      let best: { at: number; tok: { content: string; id: number; lstrip: boolean; rstrip: boolean } } | null = null;
      for (const t of this.#added) {
        const at = rest.indexOf(t.content);
        if (at >= 0 && (best === null || at < best.at)) best = { at, tok: t };
      }
      if (best === null) break outer;
      let before = rest.slice(0, best.at);
      let after = rest.slice(best.at + best.tok.content.length);
      if (best.tok.lstrip) before = before.replace(/\s+$/u, "");
      if (best.tok.rstrip) after = after.replace(/^\s+/u, "");
      if (before) out.push(before);
      out.push(best.tok.id);
      rest = after;
    }
    if (rest) out.push(rest);
    return out;
  }
}
