"""The VLA dataset directory (`rlft-vla-dataset/1`, docs/policy-package.md) and a synthetic one for tests.

    meta.json          {format, format_version, task, obs_names, action_names,
                        cameras: [{name, height, width}], episodes: [{episode, seed, length, success, instruction}]}
    obs.npy            float32 (N, obs_dim)     every tick of every episode, episodes back to back
    action.npy         float32 (N, action_dim)  the command of the same tick
    image_<camera>.npy uint8 (N, H, W, 3)       the camera's frame of the same tick (rgb8)
    intervention.npy   uint8 (N,)               1 where the operator commanded the tick (optional: absent = 0)

Plain .npy files, so numpy memory-maps the images instead of reading them into RAM twice. `rlft train-vla` writes it
from recorded MCAP episodes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import numpy as np

FORMAT = "rlft-vla-dataset"


@dataclass
class VlaDataset:
    obs: np.ndarray  # (N, obs_dim) float32
    action: np.ndarray  # (N, action_dim) float32
    images: dict[str, np.ndarray]  # camera -> (N, H, W, 3) uint8
    lengths: np.ndarray  # (E,) int64
    instructions: list[str]  # (E,)
    obs_names: list[str]
    action_names: list[str]
    task: str
    success: list[bool] = field(default_factory=list)  # (E,) per episode; empty = all successful (demos)
    sources: list[str] = field(default_factory=list)  # (E,) recording metadata `source`, "" when absent
    intervention: np.ndarray | None = None  # (N,) uint8, 1 where the operator acted; None = never

    @property
    def starts(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.lengths)[:-1]]).astype(np.int64)


def load_vla_dataset(path: str) -> VlaDataset:
    """Reads and checks a dataset directory; errors name the file and what was expected."""
    meta_path = os.path.join(path, "meta.json")
    try:
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
    except OSError as exc:
        raise ValueError(f"cannot read {meta_path}: {exc.strerror} — write the dataset with `rlft train-vla --data <mcap dir>`") from None
    if meta.get("format") != FORMAT or meta.get("format_version") != 1:
        raise ValueError(f"{meta_path}: expected format {FORMAT!r} version 1, found {meta.get('format')!r} {meta.get('format_version')!r}")
    obs = np.load(os.path.join(path, "obs.npy")).astype(np.float32)
    action = np.load(os.path.join(path, "action.npy")).astype(np.float32)
    eps = meta["episodes"]
    lengths = np.array([e["length"] for e in eps], dtype=np.int64)
    n = int(lengths.sum())
    images = {c["name"]: np.load(os.path.join(path, f"image_{c['name']}.npy"), mmap_mode="r") for c in meta["cameras"]}
    for name, arr in [("obs.npy", obs), ("action.npy", action)] + [(f"image_{k}.npy", v) for k, v in images.items()]:
        if arr.shape[0] != n:
            raise ValueError(f"{os.path.join(path, name)}: {arr.shape[0]} rows, but the episodes in meta.json add up to {n} ticks")
    if obs.shape[1] != len(meta["obs_names"]) or action.shape[1] != len(meta["action_names"]):
        raise ValueError(f"{path}: obs/action widths {obs.shape[1]}/{action.shape[1]} do not match meta.json's "
                         f"{len(meta['obs_names'])} obs_names / {len(meta['action_names'])} action_names")
    intervention = None
    ipath = os.path.join(path, "intervention.npy")
    if os.path.exists(ipath):
        intervention = np.load(ipath).astype(np.uint8).reshape(-1)
        if intervention.shape[0] != n:
            raise ValueError(f"{ipath}: {intervention.shape[0]} rows, but the episodes in meta.json add up to {n} ticks")
    return VlaDataset(obs=obs, action=action, images=images, lengths=lengths, instructions=[e["instruction"] for e in eps],
                      obs_names=list(meta["obs_names"]), action_names=list(meta["action_names"]), task=meta["task"],
                      success=[bool(e.get("success", True)) for e in eps], sources=[str(e.get("source", "")) for e in eps],
                      intervention=intervention)


def save_vla_dataset(path: str, data: VlaDataset) -> None:
    os.makedirs(path, exist_ok=True)
    np.save(os.path.join(path, "obs.npy"), data.obs)
    np.save(os.path.join(path, "action.npy"), data.action)
    for name, arr in data.images.items():
        np.save(os.path.join(path, f"image_{name}.npy"), np.ascontiguousarray(arr))
    if data.intervention is not None:
        np.save(os.path.join(path, "intervention.npy"), np.asarray(data.intervention, np.uint8))
    success = data.success or [True] * len(data.lengths)
    sources = data.sources or [""] * len(data.lengths)
    meta = {"format": FORMAT, "format_version": 1, "task": data.task, "obs_names": data.obs_names,
            "action_names": data.action_names,
            "cameras": [{"name": k, "height": int(v.shape[1]), "width": int(v.shape[2])} for k, v in data.images.items()],
            "episodes": [{"episode": i, "seed": i, "length": int(n), "success": bool(ok), "instruction": s, "source": src}
                         for i, (n, s, ok, src) in enumerate(zip(data.lengths, data.instructions, success, sources))]}
    with open(os.path.join(path, "meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)


def synthetic_vla_dataset(episodes: int = 8, steps: int = 20, seed: int = 0) -> VlaDataset:
    """Random frames with a coloured square whose position and the instruction decide the action. For tests only."""
    rng = np.random.default_rng(seed)
    words = [("red", (220, 30, 30)), ("blue", (30, 60, 220))]
    obs, act, imgs, instr = [], [], [], []
    for e in range(episodes):
        name, rgb = words[e % 2]
        side = "left" if (e // 2) % 2 == 0 else "right"
        instr.append(f"push the {name} cube to the {side} target")
        for t in range(steps):
            img = np.full((64, 64, 3), 150, np.uint8)
            r, c = rng.integers(16, 56), rng.integers(4, 56)
            img[r:r + 6, c:c + 6] = rgb
            q = rng.normal(size=5).astype(np.float32)
            obs.append(np.concatenate([q, rng.normal(size=3)]).astype(np.float32))
            act.append(q + (0.1 if side == "left" else -0.1) + 0.01 * c)
            imgs.append(img)
    return VlaDataset(obs=np.array(obs, np.float32), action=np.array(act, np.float32), images={"front": np.array(imgs)},
                      lengths=np.full(episodes, steps, np.int64), instructions=instr,
                      obs_names=[f"q.j{i}" for i in range(5)] + ["ee.x", "ee.y", "ee.z"],
                      action_names=[f"j{i}" for i in range(5)], task="synthetic")
