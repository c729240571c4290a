"""Train a tiny Diffusion Policy on synthetic demos (seconds) and export a full package, for the TS tests."""

from __future__ import annotations

import argparse
import json
import logging

from dataclasses import asdict

import torch

from ..data import synthetic_dataset, synthetic_pixel_dataset
from ..algorithms.bc.diffusion import ModelConfig, NoisePredictionNet, ddim_timesteps, squared_cosine_alphas_cumprod
from ..export.package import PackageMeta, export_package
from ..algorithms.recap.value import ValueNet, ValueOverImages
from ..algorithms.bc.train import Config, train


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="package directory to write")
    parser.add_argument("--obs-dim", type=int, default=12, help="observation width (default: 12, push_cube)")
    parser.add_argument("--action-dim", type=int, default=5, help="action width (default: 5, rlft_arm5)")
    parser.add_argument("--steps", type=int, default=300, help="gradient steps (default: 300)")
    parser.add_argument("--hidden", type=int, default=64, help="MLP width (default: 64)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument("--indicator", action="store_true", help="a RECAP package: indicator input, value.onnx, advantage block")
    parser.add_argument("--cfg-beta", type=float, default=1.0, help="classifier-free guidance weight of a --indicator package (default: 1)")
    parser.add_argument("--cameras", default="", help="comma-separated camera names: a policy that sees them (synthetic frames of "
                                                      "--image-size pixels; observation q.j0, q.j1, actions j0, j1)")
    parser.add_argument("--image-size", type=int, default=40, help="frame height and width of a --cameras package (default: 40)")


def main(args: argparse.Namespace) -> int:
    logging.getLogger("rlft_learner").setLevel(logging.WARNING)
    cameras = [c for c in args.cameras.split(",") if c]
    if cameras:
        data = synthetic_pixel_dataset(episodes=6, steps=30, size=args.image_size, seed=args.seed)
        for ep in data.episodes:  # the same synthetic scene seen by every camera
            ep.images = {c: ep.images["front"] for c in cameras}
    else:
        data = synthetic_dataset(episodes=8, steps=60, obs_dim=args.obs_dim, action_dim=args.action_dim, seed=args.seed)
    cfg = Config(steps=args.steps, batch_size=64, hidden=args.hidden, blocks=2, seed=args.seed, warmup_steps=20, threads=1,
                 log_every=max(1, args.steps), device="cpu", encoder_channels=16, keypoints=8, encoder_features=16)
    trained = train(cfg, data)
    net, norm, losses = trained.net, trained.norm, trained.losses
    advantage, value_net = None, None
    if args.indicator:
        # Untrained indicator embedding and value head with random weights: the fixture tests plumbing, not learning.
        torch.manual_seed(args.seed)
        conditioned = NoisePredictionNet(ModelConfig(**{**asdict(net.cfg), "indicator": 1}))
        conditioned.load_state_dict(net.state_dict(), strict=False)
        torch.nn.init.normal_(conditioned.indicator_emb.weight, std=0.5)
        net = conditioned.eval()
        state_dim = len(data.obs_names)
        if trained.encoders is not None:  # a value over [state, the encoders' features of the frames] (RECAP from pixels)
            value_net = ValueOverImages(trained.encoders, ValueNet(state_dim + trained.encoders.out_dim, bins=21, hidden=32, layers=1),
                                        state_dim).eval()
        else:
            value_net = ValueNet(state_dim, bins=21, hidden=32, layers=1).eval()
        advantage = {"n_step": 10, "positive_fraction": 0.3, "dropout": 0.3, "thresholds": {data.task: 0.0}, "positive_fraction_measured": 0.3,
                     "value": {"input": "obs+images" if cameras else "obs", "history": 1, "bins": 21, "v_min": -1.0, "v_max": 0.0,
                               "max_episode_steps": {data.task: 60}, "c_fail": {data.task: 60.0}}}
    meta = PackageMeta(task=data.task, obs_names=data.obs_names, action_names=data.action_names,
                       episodes=len(data.episodes), execute_steps=cfg.execute_steps, steps=cfg.ddim_steps,
                       train_timesteps=cfg.train_timesteps, advantage=advantage, cfg_beta=args.cfg_beta)
    path = export_package(net, squared_cosine_alphas_cumprod(cfg.train_timesteps),
                          ddim_timesteps(cfg.train_timesteps, cfg.ddim_steps), norm, meta, args.out, seed=args.seed, value_net=value_net,
                          encoders=trained.encoders)
    print(json.dumps({"event": "done", "package": path.rsplit("/", 1)[0], "final_loss": losses[-1]}))
    return 0
