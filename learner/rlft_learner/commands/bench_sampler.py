"""Latency of the eager PyTorch DDIM sampler at batch 1, for comparison with onnxruntime-node (TS bench).

A package that sees cameras (model.pt holds its encoders) is timed as the robot runs it: one uint8 frame per camera
through the encoders, then the DDIM loop (diffusion.PixelSampler, the module sampler.onnx was exported from)."""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
import torch

from ..algorithms.bc.diffusion import DDIMSampler, ModelConfig, NoisePredictionNet, PixelSampler
from ..vision import CameraEncoders


def _checkpoint(package: str) -> dict:
    path = os.path.join(package, "model.pt")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except TypeError:  # torch without weights_only
        return torch.load(path, map_location="cpu")


def load_sampler(package: str, ckpt: dict | None = None) -> DDIMSampler:
    """Rebuild the sampler from the package's model.pt (weights, config, schedule, timesteps)."""
    ckpt = ckpt if ckpt is not None else _checkpoint(package)
    net = NoisePredictionNet(ModelConfig(**ckpt["config"]))
    net.load_state_dict(ckpt["state_dict"])
    return DDIMSampler(net.eval(), ckpt["alphas_cumprod"].numpy(), list(ckpt["timesteps"])).eval()


def load_pixel_sampler(package: str) -> PixelSampler | None:
    """The camera encoders + sampler of a package that sees cameras (as sampler.onnx), or None for a state policy."""
    ckpt = _checkpoint(package)
    if "encoders_state_dict" not in ckpt:
        return None
    enc = CameraEncoders.from_spec(ckpt)
    enc.load_state_dict(ckpt["encoders_state_dict"])
    return PixelSampler(enc.eval(), load_sampler(package, ckpt)).eval()


def bench(package: str, threads: int = 1, iters: int = 200, warmup: int = 20) -> dict:
    torch.set_num_threads(threads)
    pixel = load_pixel_sampler(package)
    sampler = pixel.sampler if pixel is not None else load_sampler(package)
    cfg = sampler.net.cfg
    inputs: list[torch.Tensor] = []
    if pixel is not None:  # state history, then one uint8 (1, H, W, 3) frame per camera
        cams = pixel.encoders.cfgs
        inputs = [torch.randn(1, cfg.history * cfg.obs_dim - pixel.encoders.out_dim)]
        inputs += [torch.randint(0, 256, (1, c.height, c.width, 3), dtype=torch.uint8) for c in cams]
    else:
        inputs = [torch.randn(1, cfg.history * cfg.obs_dim)]  # (1, history*obs_dim)
    noise = torch.randn(1, cfg.horizon, cfg.action_dim)  # (1, H, A)
    run = pixel if pixel is not None else sampler
    times = []
    with torch.inference_mode():
        for i in range(warmup + iters):
            t0 = time.perf_counter()
            run(*inputs, noise)
            if i >= warmup:
                times.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": float(np.percentile(times, 50)), "p99_ms": float(np.percentile(times, 99)),
            "mean_ms": float(np.mean(times)), "iters": iters, "threads": threads, "steps": len(sampler.steps),
            "cameras": list(pixel.encoders.cameras) if pixel is not None else [],
            "torch": torch.__version__}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--package", required=True, help="policy package directory (needs model.pt)")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default: 1)")
    parser.add_argument("--iters", type=int, default=200, help="timed iterations (default: 200)")


def main(args: argparse.Namespace) -> int:
    print(json.dumps(bench(args.package, threads=args.threads, iters=args.iters)))
    return 0
