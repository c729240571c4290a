"""Latency of a VLA package's networks in eager PyTorch at batch 1 (prefix once, one action-expert step), for the
side-by-side comparison with onnxruntime-node in `npm run bench`."""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
import torch

from ..algorithms.vla.model import TinyVla, VlaConfig


def load_vla(package: str) -> TinyVla:
    path = os.path.join(package, "model.pt")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=False)
    except TypeError:  # torch without weights_only
        ckpt = torch.load(path, map_location="cpu")
    model = TinyVla(VlaConfig.from_dict(ckpt["config"]))
    model.load_state_dict(ckpt["state_dict"])
    return model.eval()


def _time(fn, iters: int, warmup: int) -> list[float]:
    out = []
    for i in range(warmup + iters):
        t0 = time.perf_counter()
        fn()
        if i >= warmup:
            out.append((time.perf_counter() - t0) * 1000)
    return out


def bench(package: str, threads: int = 1, iters: int = 200, warmup: int = 20) -> dict:
    torch.set_num_threads(threads)
    model = load_vla(package)
    cfg = model.cfg
    state = torch.randn(1, cfg.state_dim)
    ids = torch.ones(1, cfg.max_tokens, dtype=torch.int64)
    mask = torch.ones(1, cfg.max_tokens, dtype=torch.int64)
    images = [torch.randn(1, 3, c.height, c.width) for c in cfg.cameras]
    x = torch.randn(1, cfg.horizon, cfg.action_dim)
    t = torch.ones(1)
    with torch.inference_mode():
        prefix, pmask = model.prefix(state, ids, mask, *images)
        p = _time(lambda: model.prefix(state, ids, mask, *images), iters, warmup)
        e = _time(lambda: model.expert(x, t, prefix, pmask), iters, warmup)
    pct = lambda xs, q: float(np.percentile(xs, q))  # noqa: E731
    return {"prefix": {"p50_ms": pct(p, 50), "p99_ms": pct(p, 99)}, "expert_step": {"p50_ms": pct(e, 50), "p99_ms": pct(e, 99)},
            "iters": iters, "threads": threads, "torch": torch.__version__}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--package", required=True, help="VLA package directory (needs model.pt)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default: 1)")
    parser.add_argument("--iters", type=int, default=200, help="timed iterations (default: 200)")


def main(args: argparse.Namespace) -> int:
    print(json.dumps(bench(args.package, threads=args.threads, iters=args.iters)))
    return 0
