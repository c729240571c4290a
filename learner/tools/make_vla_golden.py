"""Writes policies/vla/testdata/{tokenizer.json,tokenizer_golden.json}: the learner's multi_push tokenizer and the ids
it gives a set of instructions (known words, casing, accents, punctuation, unknown words, over-long input). The TS
loader must reproduce them exactly (policies/vla/Tokenizer.test.ts). Run from the repo root:

    PYTHONPATH=learner python3 learner/tools/make_vla_golden.py
"""

import json
import os

from rlft_learner.algorithms.vla.tokenizer import WordLevelTokenizer

TEMPLATES = ["push the {c} cube to the {s} target", "move the {c} block onto the {s} target", "slide the {c} cube to the {s}",
             "put the {c} cube on the {s} goal", "{c} cube to the {s} target"]
TRAIN = [t.format(c=c, s=s) for t in TEMPLATES for c in ("red", "blue") for s in ("left", "right")]
PROBES = TRAIN[:4] + [
    "Push the BLUE cube to the LEFT target.",
    "push the blüe cube, to the left target!!",
    "shove the azure block leftwards please",
    "put the red cube on the right goal " * 6,
    "",
    "   red   cube\tto\nthe right   ",
    "[CLS] red cube [SEP]",
    "red-cube to left_target (2x)",
]

out = os.path.join("policies", "vla", "testdata")
tok = WordLevelTokenizer.build(TRAIN, max_length=16)
tok.save(os.path.join(out, "tokenizer.json"))
golden = [{"text": t, "ids": tok.encode(t)[0], "attention_mask": tok.encode(t)[1]} for t in PROBES]
with open(os.path.join(out, "tokenizer_golden.json"), "w", encoding="utf-8") as f:
    json.dump(golden, f, indent=1, ensure_ascii=False)
print(f"wrote {len(golden)} golden encodings to {out}")
