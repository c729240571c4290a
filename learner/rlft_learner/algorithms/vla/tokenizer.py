"""The instruction tokenizer of the tiny VLA, written as a Hugging Face `tokenizer.json` (tokenizers format).

The learner builds a WordLevel tokenizer from the task vocabulary (the words of the instructions it trains on):
normalizer NFD -> Lowercase -> StripAccents, pre-tokenizer Whitespace (`\\w+|[^\\w\\s]+`), post-processor
`[CLS] $A [SEP]`, truncation and fixed padding to `max_length`, unknown words -> `[UNK]`. The same file loads in the
Rust/Python `tokenizers` library and in tokenizers.js (what the robot runs, policies/vla/Tokenizer.ts); this module
encodes exactly like them for the pipeline it writes, so no `tokenizers` install is needed to train.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass

PAD, UNK, CLS, SEP = "[PAD]", "[UNK]", "[CLS]", "[SEP]"
SPECIALS = (PAD, UNK, CLS, SEP)  # ids 0..3, in this order
_WHITESPACE = re.compile(r"\w+|[^\w\s]+")  # tokenizers' Whitespace pre-tokenizer


def normalize(text: str) -> str:
    """NFD, lowercase, strip accents (combining marks), as the Sequence normalizer in the written file."""
    text = unicodedata.normalize("NFD", text).lower()
    return "".join(c for c in text if unicodedata.category(c) != "Mn")


def words(text: str) -> list[str]:
    return _WHITESPACE.findall(normalize(text))


@dataclass
class WordLevelTokenizer:
    """vocab: token -> id (specials first); max_length counts [CLS] and [SEP]."""

    vocab: dict[str, int]
    max_length: int = 16

    @staticmethod
    def build(texts: list[str], max_length: int = 16) -> "WordLevelTokenizer":
        """Specials, then every word of `texts` (normalised, sorted, so the ids do not depend on data order)."""
        found = sorted({w for t in texts for w in words(t)} - set(SPECIALS))
        vocab = {tok: i for i, tok in enumerate(list(SPECIALS) + found)}
        return WordLevelTokenizer(vocab=vocab, max_length=max_length)

    @property
    def pad_id(self) -> int:
        return self.vocab[PAD]

    def encode(self, text: str) -> tuple[list[int], list[int]]:
        """(input_ids, attention_mask), both max_length long: truncate, add [CLS]/[SEP], pad right with [PAD]."""
        ids = []
        # Added (special) tokens are matched in the raw text first, as tokenizers does; the rest is normalised.
        for part in re.split("(" + "|".join(re.escape(t) for t in SPECIALS) + ")", text):
            ids += [self.vocab[part]] if part in SPECIALS else [self.vocab.get(w, self.vocab[UNK]) for w in words(part)]
        ids = ids[: self.max_length - 2]
        ids = [self.vocab[CLS]] + ids + [self.vocab[SEP]]
        mask = [1] * len(ids) + [0] * (self.max_length - len(ids))
        return ids + [self.pad_id] * (self.max_length - len(ids)), mask

    def to_json(self) -> dict:
        """The tokenizer.json document (tokenizers 0.13+ serialisation)."""
        def added(tok: str) -> dict:
            return {"id": self.vocab[tok], "content": tok, "single_word": False, "lstrip": False, "rstrip": False,
                    "normalized": False, "special": True}

        def special(tok: str) -> dict:
            return {"id": tok, "ids": [self.vocab[tok]], "tokens": [tok]}

        seq = lambda i: {"Sequence": {"id": i, "type_id": 0}}  # noqa: E731
        spec = lambda t: {"SpecialToken": {"id": t, "type_id": 0}}  # noqa: E731
        return {
            "version": "1.0",
            "truncation": {"direction": "Right", "max_length": self.max_length, "strategy": "LongestFirst", "stride": 0},
            "padding": {"strategy": {"Fixed": self.max_length}, "direction": "Right", "pad_to_multiple_of": None,
                        "pad_id": self.pad_id, "pad_type_id": 0, "pad_token": PAD},
            "added_tokens": [added(t) for t in SPECIALS],
            "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFD"}, {"type": "Lowercase"}, {"type": "StripAccents"}]},
            "pre_tokenizer": {"type": "Whitespace"},
            "post_processor": {"type": "TemplateProcessing", "single": [spec(CLS), seq("A"), spec(SEP)],
                               "pair": [spec(CLS), seq("A"), spec(SEP), seq("B"), spec(SEP)],
                               "special_tokens": {CLS: special(CLS), SEP: special(SEP)}},
            "decoder": None,
            "model": {"type": "WordLevel", "vocab": dict(self.vocab), "unk_token": UNK},
        }

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, indent=2, ensure_ascii=False)

    @staticmethod
    def load(path: str) -> "WordLevelTokenizer":
        """Reads back a file this module wrote (WordLevel with fixed padding); anything else is refused."""
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        if doc.get("model", {}).get("type") != "WordLevel":
            raise ValueError(f"{path}: expected a WordLevel tokenizer written by rlft_learner, found model type {doc.get('model', {}).get('type')!r}")
        return WordLevelTokenizer(vocab={k: int(v) for k, v in doc["model"]["vocab"].items()},
                                  max_length=int(doc["truncation"]["max_length"]))
