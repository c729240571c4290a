"""Write a VLA policy package (docs/policy-package.md): prefix.onnx + action_expert.onnx + tokenizer.json +
norm_stats.json + policy.json (kind "vla"), with model.pt and test_vectors.json for equivalence tests."""

from __future__ import annotations

import datetime as dt
import json
import os

import numpy as np
import torch

from ... import __version__
from ...export.package import _git_commit, onnx_export, sha256_file
from ...finite import require_finite
from .tokenizer import WordLevelTokenizer
from .model import TinyVla, preprocess_images


class _Prefix(torch.nn.Module):
    """ONNX entry point: named inputs state, input_ids, attention_mask, image_<camera>..."""

    def __init__(self, model: TinyVla):
        super().__init__()
        self.p = model.prefix

    def forward(self, state, input_ids, attention_mask, *images):
        return self.p(state, input_ids, attention_mask, *images)


def export_vla_package(model: TinyVla, tok: WordLevelTokenizer, norm: dict, meta: dict, out_dir: str,
                       flow_steps: int = 10, execute_steps: int = 8, seed: int = 0, vectors: int = 2,
                       template: str | None = None) -> str:
    """`norm`: {state: {mean, std}, actions: {min, max}} (numpy) and optionally relative_to_state (per action: the
    state name the runtime adds to it, or None for an absolute action); `meta`: task, state_names, action_names,
    observation_names, episodes, instructions (examples), optionally pretrained and recap (provenance). `template`:
    the prompt template the runtime applies to every instruction (policy.json language.template; RECAP's
    "{instruction} advantage positive"); the test vectors are tokenised through it. Returns the path of policy.json."""
    require_finite(f"VLA package {out_dir}", model=model)
    cfg = model.cfg
    os.makedirs(out_dir, exist_ok=True)
    model = model.to("cpu").eval()
    gen = torch.Generator().manual_seed(seed)
    examples = (list(meta.get("instructions") or []) + ["push the blue cube to the left target"])[:vectors]
    examples += ["push the red cube to the right target"] * (vectors - len(examples))
    prompt = (lambda s: template.replace("{instruction}", s)) if template else (lambda s: s)  # noqa: E731
    ids, mask = zip(*(tok.encode(prompt(s)) for s in examples))
    input_ids = torch.tensor(ids, dtype=torch.int64)  # (V, L)
    attention_mask = torch.tensor(mask, dtype=torch.int64)  # (V, L)
    state_raw = torch.randn(vectors, cfg.state_dim, generator=gen)  # (V, S), normalised units
    frames = {c.name: torch.randint(0, 256, (vectors, c.source_height, c.source_width, 3), generator=gen, dtype=torch.uint8)
              for c in cfg.cameras}
    images = [preprocess_images(frames[c.name], c) for c in cfg.cameras]  # each (V, 3, h, w)
    noise = torch.randn(vectors, cfg.horizon, cfg.action_dim, generator=gen)  # (V, H, A)
    img_names = [f"image_{c.name}" for c in cfg.cameras]
    with torch.no_grad():
        onnx_export(_Prefix(model), (state_raw, input_ids, attention_mask, *images), os.path.join(out_dir, "prefix.onnx"),
                    ["state", "input_ids", "attention_mask", *img_names], ["prefix", "prefix_mask"])
        prefix, pmask = model.prefix(state_raw, input_ids, attention_mask, *images)
        t1 = torch.ones(vectors)
        onnx_export(model.expert, (noise, t1, prefix, pmask), os.path.join(out_dir, "action_expert.onnx"),
                    ["x", "t", "prefix", "prefix_mask"], ["velocity"])
        velocity = model.expert(noise, t1, prefix, pmask)
        actions = model.sample(state_raw, input_ids, attention_mask, images, noise, steps=flow_steps)  # (V, H, A)
    vec = {"instructions": examples, "input_ids": input_ids.tolist(), "attention_mask": attention_mask.tolist(),
           "state": state_raw.tolist(), "frames": {k: v.flatten(1).tolist() for k, v in frames.items()},
           "images": {n: x.flatten(1).tolist() for n, x in zip(img_names, images)},
           "prefix": prefix.flatten(1).tolist(), "prefix_mask": pmask.tolist(), "noise": noise.tolist(),
           "velocity_t1": velocity.tolist(), "actions": actions.tolist()}
    with open(os.path.join(out_dir, "test_vectors.json"), "w") as f:
        json.dump(vec, f)
    tok.save(os.path.join(out_dir, "tokenizer.json"))
    f32 = lambda a: [float(x) for x in np.asarray(a, np.float64)]  # noqa: E731
    with open(os.path.join(out_dir, "norm_stats.json"), "w") as f:
        json.dump({"norm_stats": {"state": {"mean": f32(norm["state"]["mean"]), "std": f32(norm["state"]["std"])},
                                  "actions": {"min": f32(norm["actions"]["min"]), "max": f32(norm["actions"]["max"])}}}, f, indent=2)
    aux = norm.get("aux")  # the position token's training targets: what its estimates mean (diagnostics, never an input)
    torch.save({"state_dict": model.state_dict(), "config": cfg.to_dict(),
                **({"aux": {"names": list(aux["names"]), "mean": f32(aux["mean"]), "std": f32(aux["std"])}} if aux and cfg.aux_dim else {})},
               os.path.join(out_dir, "model.pt"))

    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    files = ["prefix.onnx", "action_expert.onnx", "tokenizer.json", "norm_stats.json", "model.pt", "test_vectors.json"]
    policy = {
        "format": "rlft-policy", "format_version": 1, "kind": "vla",
        "version": f"vla-{meta['task']}-{now.strftime('%Y%m%dT%H%M%SZ')}-{os.urandom(3).hex()}",
        "created": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "provenance": {"learner": f"rlft_learner {__version__}", "torch": torch.__version__, "task": meta["task"],
                       "episodes": int(meta["episodes"]), "git": _git_commit(),
                       **({"aux_targets": list(aux["names"])} if aux and cfg.aux_dim else {}),
                       **({"pretrained": meta["pretrained"]} if meta.get("pretrained") else {}),
                       **({"recap": {k: meta["recap"][k] for k in ("episodes", "successes", "operator_ticks", "n_step", "positive_fraction")}}
                          if meta.get("recap") else {})},
        "cameras": [{"name": c.name, "input": f"image_{c.name}", "layout": "NCHW", "encoding": "rgb8",
                     "crop": list(c.crop), "height": c.height, "width": c.width, "mean": list(c.mean), "std": list(c.std)}
                    for c in cfg.cameras],
        "language": {"tokenizer": "tokenizer.json", "input_ids": "input_ids", "attention_mask": "attention_mask",
                     "max_length": tok.max_length, "vocab_size": cfg.vocab_size, "pad_id": tok.pad_id,
                     **({"template": template} if template else {})},
        "state": {"names": list(meta["state_names"]), "input": "state", "normalization": "mean_std"},
        "action": {"names": list(meta["action_names"]), "horizon": cfg.horizon, "execute_steps": execute_steps,
                   "normalization": "min_max", **({"relative_to_state": list(norm["relative_to_state"])}
                                                  if any(r is not None for r in norm.get("relative_to_state") or []) else {})},
        "norm_stats": "norm_stats.json",
        "flow": {"steps": flow_steps, "method": "euler", "t_start": 1.0, "t_end": 0.0, "time_input": "t", "x_input": "x",
                 "velocity_output": "velocity", "clip": True},
        "files": {"prefix": "prefix.onnx", "action_expert": "action_expert.onnx"},
        "sha256": {name: sha256_file(os.path.join(out_dir, name)) for name in files},
    }
    path = os.path.join(out_dir, "policy.json")
    with open(path, "w") as f:
        json.dump(policy, f, indent=2)
    return path
