"""Train a success classifier (image -> P(success)) from frames the operator labelled with `rlft label`.

The learned reward of HIL-SERL (Luo et al. 2024, arXiv 2410.21845, Sec. III-B): a small CNN on the wrist/front
camera, trained on a few hundred positive and about a thousand negative frames, used with a high threshold so a
false success is rare. Here the CNN is deliberately tiny (three strided convs, global pooling, one linear layer):
the frames are small and the robot runs it on the CPU at the camera rate. Random shifts (DrQ, Kostrikov et al.
2020) are the only augmentation. The ONNX graph takes uint8 NHWC frames, so the robot feeds camera bytes as-is.

Input: DATA/frames.npy (uint8, N x H x W x 3) and DATA/labels.npy (uint8, N; 1 = success) as `rlft label` writes.
Output: OUT/classifier.onnx and OUT/classifier.json (shape, sha256, counts, validation accuracy).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from ...options import allow, help_meta as _h
from ...export.package import onnx_export
from ...finite import StepGuard, require_finite

log = logging.getLogger("rlft_learner.train_classifier")


@dataclass
class Config:
    data: str = field(default="runs/labels", metadata=_h("directory with frames.npy and labels.npy (rlft label --out)"))
    out: str = field(default="runs/classifier", metadata=_h("directory for classifier.onnx and classifier.json"))
    steps: int = field(default=1500, metadata=_h("gradient steps"))
    batch_size: int = field(default=64, metadata=_h("frames per step, half positive when possible (balanced batches)"))
    lr: float = field(default=3e-4, metadata=_h("Adam learning rate"))
    channels: int = field(default=32, metadata=_h("conv width"))
    shift: int = field(default=4, metadata=_h("random-shift augmentation in pixels (DrQ); 0 = off"))
    val_fraction: float = field(default=0.2, metadata=_h("frames held out for the validation accuracy"))
    seed: int = field(default=0, metadata=_h("random seed"))
    threads: int = field(default=1, metadata=_h("torch CPU threads"))
    json_progress: bool = field(default=False, metadata=_h("print machine-readable JSON lines on stdout"))


allow(Config, {  # options.allow: what each key accepts, checked wherever the value is read
    "steps": ">= 1", "batch_size": ">= 2", "lr": "> 0", "channels": ">= 1", "shift": ">= 0",
    "val_fraction": "(0, 1)", "seed": ">= 0", "threads": ">= 1",
})


class SuccessCnn(nn.Module):
    """uint8 frames (B, H, W, 3) -> success probability (B, 1)."""

    def __init__(self, channels: int = 32) -> None:
        super().__init__()
        c = channels
        self.conv1 = nn.Conv2d(3, c // 2, 5, stride=2, padding=2)
        self.conv2 = nn.Conv2d(c // 2, c, 3, stride=2, padding=1)
        self.conv3 = nn.Conv2d(c, c, 3, stride=2, padding=1)
        self.head = nn.Linear(c, 1)

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        x = x.permute(0, 3, 1, 2).float() / 255.0  # (B, 3, H, W)
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.relu(self.conv3(x))  # (B, C, H/8, W/8)
        x = x.mean(dim=(2, 3))  # (B, C)
        return self.head(x)  # (B, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.logits(x))


def random_shift(x: torch.Tensor, pad: int, gen: torch.Generator) -> torch.Tensor:
    """DrQ random shift on uint8 (B, H, W, 3): replicate-pad by `pad`, crop back at a random offset per frame."""
    if pad <= 0:
        return x
    b, h, w, _ = x.shape
    xp = F.pad(x.permute(0, 3, 1, 2).float(), (pad, pad, pad, pad), mode="replicate")  # (B, 3, H+2p, W+2p)
    dx = torch.randint(0, 2 * pad + 1, (b,), generator=gen)
    dy = torch.randint(0, 2 * pad + 1, (b,), generator=gen)
    out = torch.stack([xp[i, :, dy[i]:dy[i] + h, dx[i]:dx[i] + w] for i in range(b)])
    return out.permute(0, 2, 3, 1).to(torch.uint8)


def load(data: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        frames = np.load(os.path.join(data, "frames.npy"))
        labels = np.load(os.path.join(data, "labels.npy"))
    except OSError as exc:
        raise ValueError(f"cannot read {data}/frames.npy and labels.npy ({exc}); write them with: rlft label <episodes> --out {data}") from exc
    if frames.dtype != np.uint8 or frames.ndim != 4 or frames.shape[3] != 3:
        raise ValueError(f"{data}/frames.npy: expected uint8 (N, H, W, 3), found {frames.dtype} {frames.shape}")
    if labels.shape != (frames.shape[0],):
        raise ValueError(f"{data}/labels.npy: expected {frames.shape[0]} labels, found shape {labels.shape}")
    pos = int(labels.sum())
    if pos == 0 or pos == len(labels):
        raise ValueError(f"{data}: {pos} positive and {len(labels) - pos} negative frames; both kinds are needed")
    return frames, labels.astype(np.float32)


def train(cfg: Config) -> dict:
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    frames, labels = load(cfg.data)
    rng = np.random.default_rng(cfg.seed)
    order = rng.permutation(len(labels))
    n_val = max(1, int(cfg.val_fraction * len(labels)))
    val, tr = order[:n_val], order[n_val:]
    pos_idx, neg_idx = tr[labels[tr] == 1], tr[labels[tr] == 0]
    if len(pos_idx) == 0 or len(neg_idx) == 0:
        pos_idx, neg_idx = order[labels[order] == 1], order[labels[order] == 0]
    x = torch.from_numpy(frames)  # (N, H, W, 3) uint8
    y = torch.from_numpy(labels)
    net = SuccessCnn(cfg.channels)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    gen = torch.Generator().manual_seed(cfg.seed)
    guard = StepGuard("train-classifier")
    t0 = time.time()
    loss = torch.tensor(0.0)
    half = cfg.batch_size // 2
    for step in range(1, cfg.steps + 1):
        # Balanced batches: positives are rare (a few per episode), so sample half from each class.
        b = np.concatenate([rng.choice(pos_idx, half), rng.choice(neg_idx, cfg.batch_size - half)])
        xb = random_shift(x[b], cfg.shift, gen)
        loss = F.binary_cross_entropy_with_logits(net.logits(xb).squeeze(1), y[b])
        guard.step("classifier", loss, opt)
        if cfg.json_progress and (step % 100 == 0 or step == cfg.steps):
            print(json.dumps({"event": "progress", "step": step, "loss": float(loss)}), flush=True)
    net.eval()
    with torch.no_grad():
        p = net(x[val]).squeeze(1)
        acc = float(((p >= 0.5).float() == y[val]).float().mean())
    os.makedirs(cfg.out, exist_ok=True)
    onnx_path = os.path.join(cfg.out, "classifier.onnx")
    h, w = frames.shape[1], frames.shape[2]
    require_finite(f"classifier {onnx_path}", net=net)
    onnx_export(net, (torch.zeros(1, h, w, 3, dtype=torch.uint8),), onnx_path, ["image"], ["prob"])
    with open(onnx_path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    meta = {
        "format": "rlft-success-classifier", "version": 1, "onnx": "classifier.onnx", "sha256": sha,
        "input": {"name": "image", "height": int(h), "width": int(w), "channels": 3}, "output": "prob",
        "trained_on": {"positives": int(labels.sum()), "negatives": int(len(labels) - labels.sum())},
        "val_accuracy": round(acc, 4),
    }
    with open(os.path.join(cfg.out, "classifier.json"), "w") as f:
        json.dump(meta, f, indent=2)
    done = {"event": "done", "out": cfg.out, "val_accuracy": acc, "final_loss": float(loss), "seconds": round(time.time() - t0, 1)}
    print(json.dumps(done) if cfg.json_progress else f"done: {onnx_path}  validation accuracy {acc:.1%}  ({done['seconds']} s)", flush=True)
    return done
