"""`python -m rlft_learner export-smolvla <LeRobot checkpoint dir> --out <package>`: a LeRobot SmolVLA checkpoint
(config.json + model.safetensors + the normaliser's stats, as LeRobot 0.4 saves them) -> an rlft VLA package
(docs/policy-package.md): prefix.onnx (images, masks, instruction, padded state -> every layer's keys/values and the
prefix mask), action_expert.onnx (one Euler step from the cached keys/values), the tokenizer, the stats.

What the robot does around the graphs is LeRobot's preprocessing, declared in policy.json: aspect-preserving resize
into 512² padded on the left and top with black (`letterbox`), x·2 − 1, a per-camera mask input (LeRobot's
`empty_cameras` become optional cameras fed as masked black frames), the instruction + "\\n" tokenised to 48 ids,
mean/std state padded with zeros to 32, the first `len(action.names)` of the 32 predicted dims unnormalised.
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import json
import logging
import os
import time

import numpy as np
import onnx
import torch

from ... import __version__
from ...export.package import OPSET, _git_commit, sha256_file
from ...finite import require_finite
from .smolvla import CheckpointError, SmolVla, SmolVlaShapes, read_safetensors, resize_with_pad, shapes_from_checkpoint

log = logging.getLogger("rlft.smolvla")


def read_checkpoint(ckpt: str, vlm_config: dict | None = None) -> tuple[dict, SmolVlaShapes, dict, dict]:
    """(config, shapes, weights, stats) of a LeRobot SmolVLA checkpoint directory; CheckpointError names what is missing."""
    cfg_path, w_path = os.path.join(ckpt, "config.json"), os.path.join(ckpt, "model.safetensors")
    for p in (cfg_path, w_path):
        if not os.path.isfile(p):
            raise CheckpointError(f"{p} does not exist — pass the directory LeRobot saved (pretrained_model/ with config.json and model.safetensors)")
    with open(cfg_path) as f:
        config = json.load(f)
    weights = read_safetensors(w_path)
    side = os.path.join(ckpt, "vlm_config.json")
    if vlm_config is None and os.path.isfile(side):
        with open(side) as f:
            vlm_config = json.load(f)
    shapes = shapes_from_checkpoint(config, weights, vlm_config)
    stats: dict = {}
    for p in sorted(glob.glob(os.path.join(ckpt, "*normalizer_processor.safetensors"))):
        stats.update({k: v.double().numpy() for k, v in read_safetensors(p).items()})
    for key in ("observation.state.mean", "observation.state.std", "action.mean", "action.std"):
        if key not in stats:
            raise CheckpointError(f"{ckpt}: no {key} in a *normalizer_processor.safetensors file — the checkpoint lacks LeRobot's "
                                  f"normalisation stats (policy_preprocessor_step_*_normalizer_processor.safetensors)")
    return config, shapes, weights, stats


class _Prefix(torch.nn.Module):
    def __init__(self, m: SmolVla, cameras: int):
        super().__init__()
        self.m, self.n = m, cameras

    def forward(self, state, input_ids, attention_mask, *images_and_masks):
        images, masks = list(images_and_masks[: self.n]), list(images_and_masks[self.n:])
        keys, values, pad = self.m.prefix(images, masks, input_ids, attention_mask.bool(), state)
        return (*keys, *values, pad)


class _Expert(torch.nn.Module):
    def __init__(self, m: SmolVla):
        super().__init__()
        self.m, self.n = m, m.shapes.layers

    def forward(self, x, t, *cache):
        keys, values, pad = list(cache[: self.n]), list(cache[self.n: 2 * self.n]), cache[2 * self.n]
        return self.m.denoise_step(x, t, keys, values, pad)


def _export(module, args, path: str, inputs: list[str], outputs: list[str], external_data: bool) -> None:
    torch.onnx.export(module, args, path, input_names=inputs, output_names=outputs,
                      dynamic_axes={n: {0: "batch"} for n in inputs + outputs}, opset_version=OPSET,
                      do_constant_folding=True, dynamo=False)
    if external_data:
        # Weights in `<graph>.data` beside the graph (what a graph over protobuf's 2 GB limit needs); the package
        # hashes that file like any other.
        model = onnx.load(path)
        for f in glob.glob(path + ".data"):
            os.remove(f)
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=os.path.basename(path) + ".data", size_threshold=1024)
    onnx.checker.check_model(path, full_check=False)


def _tokenizer_for_package(src: str, dst: str, max_length: int, pad_token: str | None) -> dict:
    """Copies tokenizer.json with fixed right padding and right truncation to `max_length` (the graph's input length;
    the mask makes padding to it equal to LeRobot's pad-to-longest). Returns {pad_id, vocab_size}."""
    with open(src) as f:
        tj = json.load(f)
    model = tj.get("model") or {}
    vocab = model.get("vocab")
    ids = dict(vocab) if isinstance(vocab, dict) else {p[0]: i for i, p in enumerate(vocab or [])}
    ids.update({t["content"]: t["id"] for t in tj.get("added_tokens") or []})
    if pad_token is None:
        pad_token = ((tj.get("padding") or {}).get("pad_token")
                     or next((t for t in ("<|im_end|>", "<pad>", "[PAD]", "<|endoftext|>") if t in ids), None))
    if pad_token not in ids:
        raise CheckpointError(f"{src}: pad token {pad_token!r} is not in the vocabulary — pass --pad-token")
    tj["padding"] = {"strategy": {"Fixed": max_length}, "direction": "Right", "pad_to_multiple_of": None,
                     "pad_id": ids[pad_token], "pad_type_id": 0, "pad_token": pad_token}
    tj["truncation"] = {"direction": "Right", "max_length": max_length, "strategy": "LongestFirst", "stride": 0}
    with open(dst, "w") as f:
        json.dump(tj, f, ensure_ascii=False)
    return {"pad_id": ids[pad_token], "max_id": max(ids.values())}


def export_smolvla(ckpt: str, out_dir: str, tokenizer: str, *, vlm_config: dict | None = None,
                   state_names: list[str] | None = None, action_names: list[str] | None = None,
                   optional_cameras: tuple[str, ...] = (), pad_token: str | None = None, execute_steps: int | None = None,
                   external_data: bool = False, vectors: int = 2, seed: int = 0) -> str:
    """Writes the package; returns the path of its policy.json."""
    config, s, weights, stats = read_checkpoint(ckpt, vlm_config)
    model = SmolVla(s, lm_head=False)
    weights = {k: v.float() for k, v in weights.items() if not k.startswith("model.vlm_with_expert.vlm.lm_head.")}
    missing, unexpected = model.load_state_dict(weights, strict=False)
    if missing or unexpected:
        raise CheckpointError(f"{ckpt}/model.safetensors does not fit SmolVLA's shapes: missing {missing[:5]}, unexpected {unexpected[:5]}")
    del weights
    model.eval()
    require_finite(f"SmolVLA checkpoint {ckpt}", model=model)
    feats = config["input_features"]
    cams = [k[len("observation.images."):] for k, v in feats.items() if v.get("type") == "VISUAL"]
    src_hw = {c: tuple(feats[f"observation.images.{c}"]["shape"][1:]) for c in cams}
    for i in range(int(config.get("empty_cameras", 0))):
        cams.append(f"empty_camera_{i}")
        src_hw[cams[-1]] = (480, 640)
    optional = set(optional_cameras) | {c for c in cams if c.startswith("empty_camera_")}
    unknown = optional - set(cams)
    if unknown:
        raise CheckpointError(f"--optional-camera {sorted(unknown)}: the checkpoint's cameras are {cams}")
    S = feats["observation.state"]["shape"][0]
    A = config["output_features"]["action"]["shape"][0]
    state_names = state_names or [f"state.{i}" for i in range(S)]
    action_names = action_names or [f"action.{i}" for i in range(A)]
    if len(state_names) != S or len(action_names) != A:
        raise CheckpointError(f"--state-names has {len(state_names)} names, --action-names {len(action_names)}; the checkpoint's state has {S} dims and its action {A}")
    if S > s.max_state_dim or A > s.max_action_dim:
        raise CheckpointError(f"state {S} / action {A} dims exceed the model's max_state_dim {s.max_state_dim} / max_action_dim {s.max_action_dim}")

    os.makedirs(out_dir, exist_ok=True)
    tok = _tokenizer_for_package(tokenizer, os.path.join(out_dir, "tokenizer.json"), s.tokenizer_max_length, pad_token)
    if tok["max_id"] >= s.vocab_size:
        raise CheckpointError(f"{tokenizer}: ids go up to {tok['max_id']}, the checkpoint's embedding table has {s.vocab_size} rows — not this model's tokenizer")

    L, n = s.tokenizer_max_length, len(cams)
    g = torch.Generator().manual_seed(seed)
    ex_images = [torch.rand(1, 3, s.image_size, s.image_size, generator=g) * 2 - 1 for _ in cams]
    ex_masks = [torch.ones(1, dtype=torch.bool) for _ in cams]
    ex_ids = torch.randint(0, s.vocab_size, (1, L), generator=g)
    ex_mask = torch.ones(1, L, dtype=torch.int64)
    ex_state = torch.randn(1, s.max_state_dim, generator=g)
    names_kv = [f"key_{i}" for i in range(s.layers)] + [f"value_{i}" for i in range(s.layers)] + ["prefix_mask"]
    prefix_in = ["state", "input_ids", "attention_mask"] + [f"image_{c}" for c in cams] + [f"image_{c}_mask" for c in cams]
    t0 = time.time()
    with torch.no_grad():
        _export(_Prefix(model, n), (ex_state, ex_ids, ex_mask, *ex_images, *ex_masks), os.path.join(out_dir, "prefix.onnx"),
                prefix_in, names_kv, external_data)
        keys, values, pad = model.prefix(ex_images, ex_masks, ex_ids, ex_mask.bool(), ex_state)
        x = torch.randn(1, s.chunk_size, s.max_action_dim, generator=g)
        _export(_Expert(model), (x, torch.ones(1), *keys, *values, pad), os.path.join(out_dir, "action_expert.onnx"),
                ["x", "t"] + names_kv, ["velocity"], external_data)
    log.info("exported the graphs in %.1f s", time.time() - t0)

    state_mean, state_std = stats["observation.state.mean"], stats["observation.state.std"]
    act_mean, act_std = stats["action.mean"], stats["action.std"]
    with open(os.path.join(out_dir, "norm_stats.json"), "w") as f:
        json.dump({"norm_stats": {"state": {"mean": state_mean.tolist(), "std": state_std.tolist()},
                                  "actions": {"mean": act_mean.tolist(), "std": act_std.tolist()}}}, f, indent=2)
    if vectors > 0:
        _test_vectors(model, s, cams, src_hw, optional, os.path.join(out_dir, "tokenizer.json"), stats, vectors, seed,
                      os.path.join(out_dir, "test_vectors.json"))
    files = sorted(f for f in os.listdir(out_dir) if f not in ("policy.json", "policy.sig"))
    policy = {
        "format": "rlft-policy", "format_version": 1, "kind": "vla",
        "version": f"smolvla-{os.path.basename(os.path.normpath(ckpt))}-{dt.datetime.now(dt.timezone.utc):%Y%m%dT%H%M%SZ}",
        "created": dt.datetime.now(dt.timezone.utc).isoformat(),
        "provenance": {"learner": f"rlft_learner {__version__}", "git_commit": _git_commit(), "source": "lerobot smolvla",
                       "vlm_model_name": config.get("vlm_model_name"), "shapes": s.to_dict(),
                       "checkpoint_sha256": sha256_file(os.path.join(ckpt, "model.safetensors"))},
        "cameras": [{"name": c, "input": f"image_{c}", "layout": "NCHW", "encoding": "rgb8",
                     "crop": [0, 0, *src_hw[c]], "height": s.image_size, "width": s.image_size,
                     "resize": "letterbox", "pad_align": "bottom_right", "pad_value": 0,
                     "mean": [0.5] * 3, "std": [0.5] * 3, "mask_input": f"image_{c}_mask",
                     **({"optional": True} if c in optional else {})} for c in cams],
        "language": {"tokenizer": "tokenizer.json", "input_ids": "input_ids", "attention_mask": "attention_mask",
                     "max_length": L, "vocab_size": s.vocab_size, "pad_id": tok["pad_id"], "template": "{instruction}\n"},
        "state": {"names": state_names, "input": "state", "normalization": "mean_std", "pad_to": s.max_state_dim},
        "action": {"names": action_names, "horizon": s.chunk_size, "execute_steps": execute_steps or s.chunk_size,
                   "normalization": "mean_std", "pad_to": s.max_action_dim},
        "norm_stats": "norm_stats.json",
        "flow": {"steps": s.num_steps, "method": "euler", "t_start": 1.0, "t_end": 0.0, "time_input": "t", "x_input": "x",
                 "velocity_output": "velocity", "clip": False},
        "files": {"prefix": "prefix.onnx", "action_expert": "action_expert.onnx"},
        "sha256": {f: sha256_file(os.path.join(out_dir, f)) for f in files},
    }
    path = os.path.join(out_dir, "policy.json")
    with open(path, "w") as f:
        json.dump(policy, f, indent=2)
    return path


def _test_vectors(model: SmolVla, s: SmolVlaShapes, cams: list[str], src_hw: dict, optional: set, tok_path: str,
                  stats: dict, n: int, seed: int, path: str) -> None:
    """Raw robot inputs and the PyTorch chunk (robot units) for the TS agreement test; a camera left out is fed as a
    masked black frame (LeRobot's empty camera: −1 everywhere, mask 0)."""
    from tokenizers import Tokenizer  # the Rust library: the reference tokenisation
    tk = Tokenizer.from_file(tok_path)
    g = torch.Generator().manual_seed(seed + 7)
    S, A = len(stats["observation.state.mean"]), len(stats["action.mean"])
    out: dict = {"instructions": [], "input_ids": [], "state": [], "frames": {c: [] for c in cams}, "present": [],
                 "images": {c: [] for c in cams}, "noise": [], "actions": []}
    texts = ["pick up the red cube", "put the blue block on the plate"]
    for v in range(n):
        text = texts[v % len(texts)]
        enc = tk.encode(text + "\n")
        ids = torch.tensor([enc.ids])
        lang = torch.tensor([enc.attention_mask]).bool()
        state = torch.randn(S, generator=g, dtype=torch.float64) * torch.from_numpy(stats["observation.state.std"]) \
            + torch.from_numpy(stats["observation.state.mean"])
        st = (state - torch.from_numpy(stats["observation.state.mean"])) / torch.from_numpy(stats["observation.state.std"])
        st = torch.nn.functional.pad(st.float()[None], (0, s.max_state_dim - S))
        images, masks, present = [], [], []
        # LeRobot's empty cameras never send frames; the optional real cameras are left out of every second vector.
        drop = [c for c in cams if c.startswith("empty_camera_") or (v % 2 == 1 and c in optional)]
        for c in cams:
            h, w = src_hw[c]
            frame = torch.randint(0, 256, (h, w, 3), generator=g, dtype=torch.uint8)
            if c in drop:
                img, m = -torch.ones(1, 3, s.image_size, s.image_size), torch.zeros(1, dtype=torch.bool)
                out["frames"][c].append(None)
            else:
                x = frame.permute(2, 0, 1)[None].float() / 255.0
                img = resize_with_pad(x, s.image_size, s.image_size, pad_value=0) * 2.0 - 1.0
                m = torch.ones(1, dtype=torch.bool)
                out["frames"][c].append(frame.flatten().tolist())
            out["images"][c].append(img.flatten().tolist() if v == 0 else None)
            present.append(c not in drop)
            images.append(img)
            masks.append(m)
        noise = torch.randn(1, s.chunk_size, s.max_action_dim, generator=g)
        x = model.sample(images, masks, ids, lang.long(), st, noise)[0, :, :A].double()
        actions = x * torch.from_numpy(stats["action.std"]) + torch.from_numpy(stats["action.mean"])
        out["instructions"].append(text)
        out["input_ids"].append(enc.ids)
        out["state"].append(state.tolist())
        out["present"].append(present)
        out["noise"].append(noise.flatten().tolist())
        out["actions"].append(actions.tolist())
    with open(path, "w") as f:
        json.dump(out, f)


def write_byte_level_bpe(path: str, vocab_size: int) -> None:
    """A byte-level BPE tokenizer.json in SmolLM2's layout (ByteLevel pre-tokenizer and decoder, <|im_end|> special),
    trained on a few robot instructions with Hugging Face `tokenizers`: the random checkpoints' stand-in for the VLM's."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    words = ["pick up the red cube", "put the blue block on the plate", "push the green cube to the left target",
             "open the drawer", "stack the cubes", "move the arm to the right"] * 20
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tk.train_from_iterator(words, trainer)
    tk.save(path)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("checkpoint", help="LeRobot SmolVLA checkpoint directory (config.json, model.safetensors, normaliser stats)")
    p.add_argument("--out", required=True, help="package directory to write")
    p.add_argument("--tokenizer", help="the VLM's tokenizer.json (default: <checkpoint>/tokenizer.json)")
    p.add_argument("--vlm-config", help="the VLM's own config.json (head counts); default: built in for SmolVLM2-500M")
    p.add_argument("--state-names", help="comma-separated robot observation names of the state dims, in order")
    p.add_argument("--action-names", help="comma-separated robot action names, in order")
    p.add_argument("--optional-camera", action="append", default=[], help="a camera the robot may lack (fed masked)")
    p.add_argument("--pad-token", help="tokenizer pad token (default: the file's, else <|im_end|>)")
    p.add_argument("--execute-steps", type=int, help="actions executed per chunk (default: the whole chunk)")
    p.add_argument("--external-data", action="store_true", help="store the weights in <graph>.onnx.data files")
    p.add_argument("--vectors", type=int, default=2, help="test vectors to write (0: none)")
    p.add_argument("--make-random", metavar="SHAPES", choices=["real", "tiny"],
                   help="first write a randomly initialised checkpoint of these shapes into CHECKPOINT (no download): "
                        "real = SmolVLA on SmolVLM2-500M (cameras front and wrist), tiny = test size (plus one empty camera)")
    p.add_argument("--depth", type=int, help="with --make-random: text and expert layers (and at most as many vision layers)")


def main(args: argparse.Namespace) -> int:
    from .smolvla import save_random_checkpoint, tiny_shapes
    split = (lambda v: [x.strip() for x in v.split(",")] if v else None)
    if args.make_random:
        shapes = SmolVlaShapes() if args.make_random == "real" else tiny_shapes()
        if args.depth:
            shapes.layers = shapes.expert_layers = args.depth
            shapes.vision_layers = min(shapes.vision_layers, args.depth)
        save_random_checkpoint(args.checkpoint, shapes, len(split(args.state_names) or [0] * 6),
                               len(split(args.action_names) or [0] * 6), ["front", "wrist"],
                               empty_cameras=0 if args.make_random == "real" else 1,
                               # tiny: one camera upsampled into the square, one downsampled (both letterboxed)
                               source_hw=(480, 640) if args.make_random == "real" else {"front": (40, 56), "wrist": (96, 72)})
        if not args.tokenizer:
            write_byte_level_bpe(os.path.join(args.checkpoint, "tokenizer.json"), min(shapes.vocab_size, 1000))
    vlm = None
    if args.vlm_config:
        with open(args.vlm_config) as f:
            vlm = json.load(f)
    tok = args.tokenizer or os.path.join(args.checkpoint, "tokenizer.json")
    if not os.path.isfile(tok):
        raise SystemExit(f"export-smolvla: no tokenizer at {tok} — LeRobot checkpoints do not include the VLM's tokenizer; pass --tokenizer <tokenizer.json of {args.checkpoint}'s vlm_model_name>")
    try:
        path = export_smolvla(args.checkpoint, args.out, tok, vlm_config=vlm, state_names=split(args.state_names),
                              action_names=split(args.action_names), optional_cameras=tuple(args.optional_camera),
                              pad_token=args.pad_token, execute_steps=args.execute_steps,
                              external_data=args.external_data, vectors=args.vectors)
    except CheckpointError as e:
        raise SystemExit(f"export-smolvla: {e}") from None
    print(path)
    return 0




class BenchCommand:
    """`bench-smolvla`: eager PyTorch latency of a SmolVLA checkpoint at batch 1 (prefix; whole chunk = prefix +
    num_steps denoising steps, LeRobot's sample_actions), for `npm run bench -- --only smolvla`; prints JSON."""

    @staticmethod
    def add_arguments(p: argparse.ArgumentParser) -> None:
        p.add_argument("--checkpoint", required=True, help="LeRobot SmolVLA checkpoint directory")
        p.add_argument("--threads", type=int, default=2, help="torch CPU threads (default: 2)")
        p.add_argument("--iters", type=int, default=5, help="timed chunks (default: 5)")
        p.add_argument("--vlm-config", help="the VLM's config.json (default: built in / vlm_config.json beside it)")

    @staticmethod
    def main(args: argparse.Namespace) -> int:
        torch.set_num_threads(args.threads)
        vlm = None
        if args.vlm_config:
            with open(args.vlm_config) as f:
                vlm = json.load(f)
        config, s, weights, _ = read_checkpoint(args.checkpoint, vlm)
        model = SmolVla(s, lm_head=False)
        model.load_state_dict({k: v.float() for k, v in weights.items() if ".lm_head." not in k})
        del weights
        model.eval()
        cams = [k for k, v in config["input_features"].items() if v.get("type") == "VISUAL"]
        n_cams = len(cams) + int(config.get("empty_cameras", 0))
        g = torch.Generator().manual_seed(0)
        images = [torch.rand(1, 3, s.image_size, s.image_size, generator=g) * 2 - 1 for _ in range(n_cams)]
        masks = [torch.ones(1, dtype=torch.bool) for _ in range(n_cams)]
        ids = torch.randint(0, s.vocab_size, (1, s.tokenizer_max_length), generator=g)
        lang = torch.ones(1, s.tokenizer_max_length, dtype=torch.int64)
        state = torch.randn(1, s.max_state_dim, generator=g)
        noise = torch.randn(1, s.chunk_size, s.max_action_dim, generator=g)
        prefix_ms, chunk_ms = [], []
        with torch.inference_mode():
            model.sample(images, masks, ids, lang, state, noise)  # warm-up
            for _ in range(args.iters):
                t0 = time.perf_counter()
                model.prefix(images, masks, ids, lang.bool(), state)
                prefix_ms.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                model.sample(images, masks, ids, lang, state, noise)
                chunk_ms.append((time.perf_counter() - t0) * 1000)
        pct = lambda xs, q: float(np.percentile(xs, q))  # noqa: E731
        params = sum(p.numel() for p in model.parameters())
        print(json.dumps({"prefix": {"p50_ms": pct(prefix_ms, 50), "p99_ms": pct(prefix_ms, 99)},
                          "chunk": {"p50_ms": pct(chunk_ms, 50), "p99_ms": pct(chunk_ms, 99)},
                          "iters": args.iters, "threads": args.threads, "torch": torch.__version__, "params": params,
                          "cameras": n_cams, "layers": s.layers, "steps": s.num_steps}))
        return 0


__all__ = ["export_smolvla", "read_checkpoint", "write_byte_level_bpe", "add_arguments", "main", "BenchCommand"]
