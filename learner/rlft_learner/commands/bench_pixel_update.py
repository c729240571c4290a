"""Learner updates/s of residual TD3 from pixels, both encoder paths side by side in one run (docs/results.md).

Each round times, for `seconds` each and alternating so all see the same machine load: `image_encoder: base` (frozen
BC encoder) encoding every batch's frames, the same with each frame's features computed once when it arrives
(`base_cached`: the batch carries features; one frame per camera encoded per env step, timed with the updates), serve's
own path (`base_replay`: agent.update() sampling the agent's replay, which stores frames once and caches each frame's
features when first drawn; sampling timed) and `image_encoder: own` (DrQ encoders trained by the critic). Batches of
the other paths are built before timing from random frames of the base package's camera sizes.
Without --base-package a pixel base is made once: two 84x84 cameras (front, wrist, as launch/sim_so101.yaml renders),
train-bc's default encoder sizes, 2 joints (the state is a few numbers beside 128 camera features; its width
does not move the timing); its weights do not matter either.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time

import numpy as np
import torch

from ..algorithms.pixels.agent import PixelResidualTD3, pixel_config_problems
from ..algorithms.residual_td3.agent import BasePackage
from .serve_config import ServeConfig

#: Config keys of a state preset that a pixel learner refuses (algorithms/pixels/agent.py pixel_config_problems); cleared here.
STATE_ONLY = {"her_goal": "", "her_achieved": "", "mirror_obs": "", "mirror_action": "", "obs_features": "", "chunk_critic": False}


def synthetic_base(out: str, size: int = 84) -> str:
    """A pixel BC package with two `size` x `size` cameras and 2 joints, trained for 2 steps (for timing only)."""
    from ..algorithms.bc.train import Config as BcConfig, run
    from ..data import save_npz, synthetic_pixel_dataset

    data = synthetic_pixel_dataset(episodes=2, steps=8, size=size, seed=0)
    for ep in data.episodes:
        ep.images["wrist"] = ep.images["front"][:, ::-1].copy()
    npz = os.path.join(out, "pix.npz")
    save_npz(npz, data)
    run(BcConfig(dataset=npz, out=os.path.join(out, "bc"), steps=2, batch_size=4, log_every=1, device="cpu", seed=0))
    return os.path.join(out, "bc", "package")


def batches(base: BasePackage, batch_size: int, count: int, seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    n, m = len(base.obs_names), len(base.action_names)
    out = []
    for _ in range(count):
        a = rng.uniform(-1, 1, (batch_size, m)).astype(np.float32)
        b = {"obs": rng.normal(size=(batch_size, n)).astype(np.float32), "base_action": a, "action": a.copy(),
             "ret": rng.random(batch_size).astype(np.float32), "discount": np.full(batch_size, 0.97, np.float32),
             "next_obs": rng.normal(size=(batch_size, n)).astype(np.float32), "next_base_action": a}
        for cam in base.policy["observation"]["images"]:
            shape = (batch_size, 3, cam["height"], cam["width"])
            b[f"image.{cam['camera']}"] = rng.integers(0, 256, shape, dtype=np.uint8)
            b[f"next_image.{cam['camera']}"] = rng.integers(0, 256, shape, dtype=np.uint8)
        out.append(b)
    return out


def replay_rows(base: BasePackage, seq0: int, n: int, rng: np.random.Generator) -> dict:
    """`n` consecutive steps of one robot with random frames of the base's cameras (the replay's row format)."""
    k, m = len(base.obs_names), len(base.action_names)
    a = rng.uniform(-1, 1, (n, m)).astype(np.float32)
    rows = {"obs": rng.normal(size=(n, k)).astype(np.float32), "next_obs": rng.normal(size=(n, k)).astype(np.float32),
            "base_action": a, "action": a.copy(), "next_base_action": a.copy(), "reward": np.zeros(n, np.float32),
            "terminated": np.zeros(n, np.float32), "truncated": np.zeros(n, np.float32),
            "intervention": np.zeros(n, np.float32), "robot": np.zeros(n, np.int64),
            "seq": np.arange(seq0, seq0 + n, dtype=np.int64), "step": np.arange(seq0, seq0 + n, dtype=np.int64)}
    for cam in base.policy["observation"]["images"]:
        f = rng.integers(0, 256, (n + 1, cam["height"], cam["width"], 3), dtype=np.uint8)
        rows[f"image.{cam['camera']}"], rows[f"next_image.{cam['camera']}"] = f[:-1], f[1:]
    return rows


def bench(cfg: ServeConfig, base_package: str = "", seconds: float = 10.0, rounds: int = 2) -> dict:
    torch.set_num_threads(cfg.threads)
    with tempfile.TemporaryDirectory() as tmp:
        base = BasePackage.load(base_package or synthetic_base(tmp))
        cleared = sorted(k for k, v in STATE_ONLY.items() if getattr(cfg, k) != v)
        cfg = dataclasses.replace(cfg, critic_warmup_updates=0, algorithm="residual_td3", **STATE_ONLY)  # times residual TD3
        assert not pixel_config_problems(cfg)
        agents = {enc: PixelResidualTD3(dataclasses.replace(cfg, image_encoder=enc).agent_config(), len(base.obs_names),
                                        len(base.action_names), base) for enc in ("base", "own")}
        cached_agent = PixelResidualTD3(dataclasses.replace(cfg, image_encoder="base").agent_config(), len(base.obs_names),
                                        len(base.action_names), base)
        data = batches(base, cfg.batch_size, 4)
        cached = [{**{k: v for k, v in b.items() if "image" not in k}, **{
            name: cached_agent.encode_frames({c.split(".", 1)[1]: v for c, v in b.items() if c.startswith(f"{prefix}.")})
            for name, prefix in (("features", "image"), ("next_features", "next_image"))}} for b in data]
        one_frame = {c.split(".", 1)[1]: v[:1] for c, v in data[0].items() if c.startswith("image.")}
        state = {"encoded": 0}

        def cached_step(k: int) -> None:
            # A replay that keeps features encodes each frame once, when its step arrives: one frame per camera per
            # env step, i.e. per `utd` updates; that cost is timed with the updates.
            while state["encoded"] < (k + 1) / cfg.utd:
                cached_agent.encode_frames(one_frame)
                state["encoded"] += 1
            cached_agent.update_batch(cached[k % len(cached)])

        # Serve's own path: agent.update() samples its replay (frames zlib6 once per step, features cached per frame
        # when first drawn); a step with new frames arrives every `utd` updates, as in a paced session.
        replay_agent = PixelResidualTD3(dataclasses.replace(cfg, image_encoder="base").agent_config(), len(base.obs_names),
                                        len(base.action_names), base)
        rng = np.random.default_rng(1)
        arrivals = {"seq": 0}

        def arrive(n: int) -> None:
            replay_agent.add(replay_rows(base, arrivals["seq"], n, rng))
            arrivals["seq"] += n

        arrive(max(cfg.batch_size, 512))

        def replay_step(k: int) -> None:
            while arrivals["seq"] < max(cfg.batch_size, 512) + (k + 1) / cfg.utd:
                arrive(1)
            replay_agent.update()

        modes = {"base": lambda k: agents["base"].update_batch(data[k % len(data)]), "base_cached": cached_step,
                 "base_replay": replay_step, "own": lambda k: agents["own"].update_batch(data[k % len(data)])}
        for step in modes.values():
            for k in range(len(data)):  # warm-up: allocator, first-call overheads
                step(k)
        timed = {name: [0, 0.0] for name in modes}
        for _ in range(rounds):
            for name, step in modes.items():
                state["encoded"] = 0
                t0, k = time.perf_counter(), 0
                while time.perf_counter() - t0 < seconds:
                    step(k)
                    k += 1
                timed[name][0] += k
                timed[name][1] += time.perf_counter() - t0
        cams = [f"{c['camera']} {c['width']}x{c['height']}" for c in base.policy["observation"]["images"]]
        ups = {enc: k / s for enc, (k, s) in timed.items()}
        return {"event": "bench-pixel-update", "cameras": cams, "batch_size": cfg.batch_size, "utd": cfg.utd,
                "threads": cfg.threads, "device": cfg.device, "torch": torch.__version__,
                "critic_heads": cfg.critic_heads, "critic_hidden": cfg.critic_hidden, "actor_hidden": cfg.actor_hidden,
                "policy_delay": cfg.policy_delay, "encoder_features": agents["base"].encoders.out_dim,
                "updates_per_s": {enc: round(u, 2) for enc, u in ups.items()},
                "env_steps_per_s_at_utd": {enc: round(u / cfg.utd, 2) for enc, u in ups.items()},
                "base_over_own": round(ups["base"] / ups["own"], 2), "base_cached_over_own": round(ups["base_cached"] / ups["own"], 2),
                "base_replay_over_own": round(ups["base_replay"] / ups["own"], 2),
                "modes": {"base": "frozen base encoder, current and next frames encoded in every batch",
                          "base_cached": "frozen base encoder, each frame encoded once on arrival (features in the batch)",
                          "base_replay": "serve's path: agent.update() sampling its replay (frames stored once, zlib6; "
                                         "features cached per frame when first drawn), a new step every utd updates",
                          "own": "own encoders (DrQ random shift) trained by the critic"},
                "cleared_state_only_keys": cleared,
                "seconds_per_mode": seconds * rounds}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from .serve_config import add_config_flags

    add_config_flags(parser)
    parser.add_argument("--seconds", type=float, default=10.0, help="timed seconds per encoder path per round (default: 10)")
    parser.add_argument("--rounds", type=int, default=2, help="alternating rounds of both paths (default: 2)")


def main(args: argparse.Namespace) -> int:
    from .serve_config import config_from_args

    try:
        cfg = config_from_args(args)
    except (ValueError, OSError) as exc:
        print(f"bench-pixel-update: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(bench(cfg, cfg.base_package, args.seconds, args.rounds)), flush=True)
    return 0
