import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { Tokenizer } from "./Tokenizer.ts";
import { PolicyPackageError } from "../PolicyPackageError.ts";
import { findPython, learnerEnv } from "../../app/python.ts";

const dir = new URL("./testdata/", import.meta.url);
const learnerJson = JSON.parse(readFileSync(new URL("tokenizer.json", dir), "utf8")) as Record<string, unknown>;
const golden = JSON.parse(readFileSync(new URL("tokenizer_golden.json", dir), "utf8")) as { text: string; ids: number[]; attention_mask: number[] }[];

test("the learner's tokenizer.json: ids equal the learner's golden ids (known, unknown, accented, over-long input)", () => {
  const tok = Tokenizer.fromJson(learnerJson);
  for (const g of golden) {
    const e = tok.encode(g.text);
    assert.deepEqual(e.ids, g.ids, `ids of ${JSON.stringify(g.text)}`);
    assert.deepEqual(e.attentionMask, g.attention_mask, `mask of ${JSON.stringify(g.text)}`);
  }
  const unk = tok.encode("shove the azure block leftwards please");
  assert.deepEqual(unk.unknown, ["shove", "azure", "leftwards", "please"]);
  assert.deepEqual(tok.encode("push the red cube").unknown, []);
  assert.equal(tok.encode("x".repeat(10_000)).ids.length, 16, "fixed length, never longer");
  assert.equal(tok.fixedLength, 16);
  assert.equal(tok.padId, 0);
  assert.equal(tok.vocab.get("[UNK]"), 1);
});

test("round trip: decode(encode(x)) gives back the normalised words of an in-vocabulary instruction", () => {
  const tok = Tokenizer.fromJson(learnerJson);
  assert.equal(tok.decode(tok.encode("Push the BLUE cube to the left target").ids), "push the blue cube to the left target");
});

// Small tokenizers in the other model types, with the truncation/padding variants the glue implements.
const wordPiece = {
  version: "1.0",
  truncation: { direction: "Left", max_length: 8, strategy: "LongestFirst", stride: 0 },
  padding: { strategy: { Fixed: 8 }, direction: "Left", pad_to_multiple_of: null, pad_id: 0, pad_type_id: 0, pad_token: "[PAD]" },
  added_tokens: [
    { id: 0, content: "[PAD]", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
    { id: 1, content: "[UNK]", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
    { id: 2, content: "[CLS]", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
    { id: 3, content: "[SEP]", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
  ],
  normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
  pre_tokenizer: { type: "BertPreTokenizer" },
  post_processor: { type: "BertProcessing", sep: ["[SEP]", 3], cls: ["[CLS]", 2] },
  decoder: { type: "WordPiece", prefix: "##", cleanup: true },
  model: {
    type: "WordPiece",
    unk_token: "[UNK]",
    continuing_subword_prefix: "##",
    max_input_chars_per_word: 100,
    vocab: { "[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, push: 4, the: 5, red: 6, cube: 7, to: 8, left: 9, target: 10, "##s": 11, "##ward": 12, un: 13, "##known": 14, ",": 15, "!": 16, blue: 17 },
  },
};

const bpe = {
  version: "1.0",
  truncation: null,
  padding: { strategy: "BatchLongest", direction: "Right", pad_to_multiple_of: 4, pad_id: 0, pad_type_id: 0, pad_token: "<unk>" },
  added_tokens: [{ id: 0, content: "<unk>", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
  normalizer: { type: "Sequence", normalizers: [{ type: "NFKC" }, { type: "Lowercase" }] },
  pre_tokenizer: { type: "Whitespace" },
  post_processor: null,
  decoder: null,
  model: {
    type: "BPE",
    dropout: null,
    unk_token: "<unk>",
    continuing_subword_prefix: null,
    end_of_word_suffix: null,
    fuse_unk: false,
    byte_fallback: false,
    vocab: { "<unk>": 0, p: 1, u: 2, s: 3, h: 4, t: 5, e: 6, r: 7, d: 8, c: 9, b: 10, pu: 11, sh: 12, push: 13, th: 14, the: 15, re: 16, red: 17, cu: 18, be: 19, cube: 20, l: 21, o: 22, to: 23 },
    merges: ["p u", "s h", "pu sh", "t h", "th e", "r e", "re d", "c u", "b e", "cu be", "t o"],
  },
};

// SentencePiece-style: Metaspace pre-tokenizer, Unigram model (unk_id instead of unk_token), Metaspace decoder.
const unigram = {
  version: "1.0",
  truncation: { direction: "Right", max_length: 6, strategy: "LongestFirst", stride: 0 },
  padding: null,
  added_tokens: [{ id: 0, content: "<unk>", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
  normalizer: { type: "Lowercase" },
  pre_tokenizer: { type: "Metaspace", replacement: "▁", prepend_scheme: "always", split: true },
  post_processor: null,
  decoder: { type: "Metaspace", replacement: "▁", prepend_scheme: "always", split: true },
  model: {
    type: "Unigram",
    unk_id: 0,
    byte_fallback: false,
    vocab: [["<unk>", 0], ["▁push", -2], ["▁the", -2], ["▁red", -3], ["▁cube", -3], ["▁", -5], ["p", -6], ["u", -6], ["s", -6], ["h", -6], ["e", -6], ["▁pu", -4], ["sh", -4], ["es", -4], ["cube", -4], ["r", -6], ["d", -6]],
  },
};

// Gemma-style (PaliGemma's, what openpi's π0 tokenises with): SentencePiece BPE converted to tokenizer.json — spaces
// replaced by ▁ in the normalizer, no pre-tokenizer, byte fallback (<0xNN> tokens for what the vocabulary lacks), <bos>
// added by the post-processor, fixed right padding with <pad>.
const byteTokens = Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`);
const gemmaPieces = ["▁", "p", "u", "s", "h", "t", "e", "r", "d", "c", "b", "l", "f", "a", "g", "o", "▁p", "▁t", "▁r", "▁c", "▁pu", "▁pus", "▁push", "▁th", "▁the", "▁re", "▁red", "▁cu", "▁cub", "▁cube", "▁to", "\n"];
const gemmaVocab: Record<string, number> = { "<pad>": 0, "<eos>": 1, "<bos>": 2, "<unk>": 3 };
for (const t of [...byteTokens, ...gemmaPieces]) gemmaVocab[t] = Object.keys(gemmaVocab).length;
const gemma = {
  version: "1.0",
  truncation: { direction: "Right", max_length: 12, strategy: "LongestFirst", stride: 0 },
  padding: { strategy: { Fixed: 12 }, direction: "Right", pad_to_multiple_of: null, pad_id: 0, pad_type_id: 0, pad_token: "<pad>" },
  added_tokens: ["<pad>", "<eos>", "<bos>", "<unk>"].map((content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
  normalizer: { type: "Replace", pattern: { String: " " }, content: "▁" },
  pre_tokenizer: null,
  post_processor: { type: "TemplateProcessing", single: [{ SpecialToken: { id: "<bos>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }], pair: [{ SpecialToken: { id: "<bos>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }], special_tokens: { "<bos>": { id: "<bos>", ids: [2], tokens: ["<bos>"] } } },
  decoder: { type: "Sequence", decoders: [{ type: "Replace", pattern: { String: "▁" }, content: " " }, { type: "ByteFallback" }, { type: "Fuse" }] },
  model: { type: "BPE", dropout: null, unk_token: "<unk>", continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: true, byte_fallback: true, ignore_merges: false, vocab: gemmaVocab, merges: ["▁ p", "▁ t", "▁ r", "▁ c", "▁p u", "▁pu s", "▁pus h", "▁t h", "▁th e", "▁r e", "▁re d", "▁c u", "▁cu b", "▁cub e", "▁t o"] },
};

const probes = ["push the red cube\n", "Pousse le cube rouge é ✓", "push  the   cube", "Push the red cube to the left target!", "pushes the cubes leftward, unknown", "PUSH   the  Red  CUBE", "xyz qq push", "", "blue-red,cube", "push the red cube to the left target to the left target"];

/** Encodings from Hugging Face's Rust `tokenizers` (the .venv's peers extra): the library users check their files with. */
function rustEncode(doc: unknown, texts: string[]): { ids: number[]; attention_mask: number[] }[] {
  const code = [
    "import json, sys",
    "from tokenizers import Tokenizer",
    "req = json.load(sys.stdin)",
    "tok = Tokenizer.from_str(json.dumps(req['doc']))",
    "print(json.dumps([{'ids': e.ids, 'attention_mask': e.attention_mask} for e in (tok.encode(t) for t in req['texts'])]))",
  ].join("\n");
  const r = spawnSync(findPython(), ["-c", code], { input: JSON.stringify({ doc, texts }), env: learnerEnv(), encoding: "utf8" });
  assert.equal(r.status, 0, `python tokenizers failed (run node scripts/setup-python.mjs for the peers extra): ${r.stderr}`);
  return JSON.parse(r.stdout) as { ids: number[]; attention_mask: number[] }[];
}

for (const [name, doc] of [["the learner's WordLevel", learnerJson], ["WordPiece (BERT-style, left truncation and padding)", wordPiece], ["BPE (pad to a multiple of 4)", bpe], ["Unigram (SentencePiece-style)", unigram], ["Gemma-style SentencePiece BPE with byte fallback (π0's PaliGemma)", gemma]] as const) {
  test(`${name} tokenizer.json: same ids and attention mask as Hugging Face's Rust tokenizers`, () => {
    const texts = [...probes, ...golden.map((g) => g.text)];
    const theirs = rustEncode(doc, texts);
    const ours = Tokenizer.fromJson(doc);
    texts.forEach((t, i) => {
      const e = ours.encode(t);
      assert.deepEqual(e.ids, theirs[i].ids, `ids of ${JSON.stringify(t)}`);
      assert.deepEqual(e.attentionMask, theirs[i].attention_mask, `mask of ${JSON.stringify(t)}`);
    });
  });
}

test("unknown words of subword models are named (for the log), known ones are not", () => {
  const wp = Tokenizer.fromJson(wordPiece);
  assert.deepEqual(wp.encode("push the xyz cubes").unknown, ["xyz"]);
  assert.deepEqual(wp.encode("push the red cubes").unknown, []);
  assert.equal(wp.decode(wp.encode("push the red cubes").ids), "push the red cubes");
  const b = Tokenizer.fromJson(bpe);
  assert.deepEqual(b.encode("push the red cube").ids, [13, 15, 17, 20]);
  assert.deepEqual(b.encode("zebra push").unknown, ["zebra"]);
  const u = Tokenizer.fromJson(unigram);
  assert.deepEqual(u.encode("xyz push").unknown, ["xyz"]);
  assert.equal(u.decode(u.encode("push the red cube").ids), "push the red cube");
});

test("files the loader cannot run are refused at load, naming the file and the component", () => {
  const bad = { ...learnerJson, pre_tokenizer: { type: "UnicodeScripts" } };
  assert.throws(() => Tokenizer.fromJson(bad, "pkg/tokenizer.json"), (e: unknown) => e instanceof PolicyPackageError && e.code === "tokenizer" && /^pkg\/tokenizer\.json: .*UnicodeScripts/.test(e.message));
  const noUnk = { ...learnerJson, model: { type: "WordLevel", vocab: { a: 0 }, unk_token: "[UNK]" } };
  assert.throws(() => Tokenizer.fromJson(noUnk, "pkg/tokenizer.json"), /unk_token "\[UNK\]" is not in model.vocab/);
  assert.throws(() => Tokenizer.fromJson({ ...learnerJson, model: { type: "CharLevel", vocab: { a: 0 } } }, "pkg/tokenizer.json"), /model type "CharLevel" is not one of WordLevel/);
  assert.throws(() => Tokenizer.fromJson({ version: "1.0" }, "pkg/tokenizer.json"), /no "model" section/);
  assert.throws(() => Tokenizer.fromJson([1, 2], "pkg/tokenizer.json"), /expected a JSON object/);
});
