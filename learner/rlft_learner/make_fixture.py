"""Train a tiny Diffusion Policy on synthetic demos (seconds) and export a full package, for the TS tests."""

from __future__ import annotations

import argparse
import json
import logging

from .data import synthetic_dataset
from .diffusion import ddim_timesteps, squared_cosine_alphas_cumprod
from .export import PackageMeta, export_package
from .train_bc import Config, train


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="package directory to write")
    parser.add_argument("--obs-dim", type=int, default=12, help="observation width (default: 12, push_cube)")
    parser.add_argument("--action-dim", type=int, default=5, help="action width (default: 5, rlft_arm5)")
    parser.add_argument("--steps", type=int, default=300, help="gradient steps (default: 300)")
    parser.add_argument("--hidden", type=int, default=64, help="MLP width (default: 64)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")


def main(args: argparse.Namespace) -> int:
    logging.getLogger("rlft_learner").setLevel(logging.WARNING)
    data = synthetic_dataset(episodes=8, steps=60, obs_dim=args.obs_dim, action_dim=args.action_dim, seed=args.seed)
    cfg = Config(steps=args.steps, batch_size=64, hidden=args.hidden, blocks=2, seed=args.seed, warmup_steps=20, threads=1,
                 log_every=max(1, args.steps), device="cpu")
    net, norm, losses = train(cfg, data)
    meta = PackageMeta(task=data.task, obs_names=data.obs_names, action_names=data.action_names,
                       episodes=len(data.episodes), execute_steps=cfg.execute_steps, steps=cfg.ddim_steps,
                       train_timesteps=cfg.train_timesteps)
    path = export_package(net, squared_cosine_alphas_cumprod(cfg.train_timesteps),
                          ddim_timesteps(cfg.train_timesteps, cfg.ddim_steps), norm, meta, args.out, seed=args.seed)
    print(json.dumps({"event": "done", "package": path.rsplit("/", 1)[0], "final_loss": losses[-1]}))
    return 0
