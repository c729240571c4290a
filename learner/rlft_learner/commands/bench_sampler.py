"""Latency of the eager PyTorch DDIM sampler at batch 1, for comparison with onnxruntime-node (TS bench)."""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
import torch

from ..algorithms.bc.diffusion import DDIMSampler, ModelConfig, NoisePredictionNet


def load_sampler(package: str) -> DDIMSampler:
    """Rebuild the sampler from the package's model.pt (weights, config, schedule, timesteps)."""
    path = os.path.join(package, "model.pt")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except TypeError:  # torch without weights_only
        ckpt = torch.load(path, map_location="cpu")
    net = NoisePredictionNet(ModelConfig(**ckpt["config"]))
    net.load_state_dict(ckpt["state_dict"])
    return DDIMSampler(net.eval(), ckpt["alphas_cumprod"].numpy(), list(ckpt["timesteps"])).eval()


def bench(package: str, threads: int = 1, iters: int = 200, warmup: int = 20) -> dict:
    torch.set_num_threads(threads)
    sampler = load_sampler(package)
    cfg = sampler.net.cfg
    obs = torch.randn(1, cfg.history * cfg.obs_dim)  # (1, history*obs_dim)
    noise = torch.randn(1, cfg.horizon, cfg.action_dim)  # (1, H, A)
    times = []
    with torch.inference_mode():
        for i in range(warmup + iters):
            t0 = time.perf_counter()
            sampler(obs, noise)
            if i >= warmup:
                times.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": float(np.percentile(times, 50)), "p99_ms": float(np.percentile(times, 99)),
            "mean_ms": float(np.mean(times)), "iters": iters, "threads": threads, "steps": len(sampler.steps),
            "torch": torch.__version__}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--package", required=True, help="policy package directory (needs model.pt)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default: 1)")
    parser.add_argument("--iters", type=int, default=200, help="timed iterations (default: 200)")


def main(args: argparse.Namespace) -> int:
    print(json.dumps(bench(args.package, threads=args.threads, iters=args.iters)))
    return 0
