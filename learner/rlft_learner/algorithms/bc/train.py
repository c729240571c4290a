"""Behaviour cloning of a Diffusion Policy (Chi et al. 2023, arXiv 2303.04137) from demonstrations.

Receives the dataset over `rlft-exp/1` (or reads an .npz), trains the noise-prediction MLP with the epsilon
objective of DDPM (Ho et al. 2020), and exports a policy package the robot runs with onnxruntime.

    python3 -m rlft_learner train-bc --bind tcp://127.0.0.1:5555 --out runs/bc --json-progress
    python3 -m rlft_learner train-bc --dataset demos.npz --steps 2000
"""

from __future__ import annotations

import json
import logging
import math
import os
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from ...options import allow, help_meta as _h
from ...data import Dataset, Episode, Normalizer, frame_index, load_npz, make_windows, save_npz
from .diffusion import ModelConfig, NoisePredictionNet, add_noise, ddim_timesteps, squared_cosine_alphas_cumprod
from ...vision import CameraEncoders, EncoderConfig, random_shift
from ...export.package import PackageMeta, export_package
from ...finite import StepGuard, finite_values
from ...transport.server import DoorConfig, ExperienceServer

log = logging.getLogger("rlft_learner.train_bc")

#: An episode's `source` that marks it as frames for the position head only (aux_targets), never imitated.
AUX_ONLY = "aux_only"


@dataclass
class Config(DoorConfig):
    bind: str = field(default="tcp://127.0.0.1:5555", metadata=_h("ROUTER address the robot side uploads demos to"))
    dataset: str = field(default="", metadata=_h("read demos from this .npz instead of the server"))
    save_dataset: str = field(default="", metadata=_h("also write the received episodes to this .npz (the format --dataset and serve's demo_dataset read)"))
    timeout: float = field(default=300.0, metadata=_h("seconds to wait for the next message before giving up"))
    out: str = field(default="runs/bc", metadata=_h("run directory; the package goes to OUT/package"))
    steps: int = field(default=20000, metadata=_h("gradient steps of the noise-prediction network"))
    batch_size: int = field(default=0, metadata=_h("windows per gradient step; 0 = 256 for state-only data, 64 when the data has camera frames"))
    lr: float = field(default=1e-3, metadata=_h("peak AdamW learning rate (short CPU budget, so higher than the paper's 1e-4)"))
    weight_decay: float = field(default=1e-6, metadata=_h("AdamW weight decay (Diffusion Policy)"))
    warmup_steps: int = field(default=200, metadata=_h("linear LR warm-up before the cosine decay"))
    ema_decay: float = field(default=0.999, metadata=_h("max EMA decay of the exported weights"))
    horizon: int = field(default=16, metadata=_h("predicted action chunk length (Diffusion Policy: 16)"))
    execute_steps: int = field(default=8, metadata=_h("actions executed per chunk on the robot (Diffusion Policy: 8)"))
    history: int = field(default=2, metadata=_h("observation history length (Diffusion Policy: 2)"))
    hidden: int = field(default=256, metadata=_h("MLP width"))
    blocks: int = field(default=3, metadata=_h("residual blocks"))
    train_timesteps: int = field(default=100, metadata=_h("DDPM training timesteps"))
    ddim_steps: int = field(default=10, metadata=_h("DDIM sampling steps in the exported sampler"))
    obs_std_floor: float = field(default=1e-2, metadata=_h("lower bound on per-dimension obs std"))
    image_shift: int = field(default=4, metadata=_h("camera data: random-shift augmentation, pixels of replicate padding (DrQ); 0 = off"))
    encoder_channels: int = field(default=32, metadata=_h("camera data: conv width of each camera's encoder"))
    encoder_features: int = field(default=64, metadata=_h("camera data: features per camera after the spatial softmax"))
    keypoints: int = field(default=32, metadata=_h("camera data: spatial-softmax keypoints per camera"))
    freeze_encoders: bool = field(default=False, metadata=_h("camera data: keep the camera encoders at their random initialisation and train only the denoiser (a random conv + spatial-softmax encoder already locates objects; see docs/results.md, bench:pixels)"))
    aux_targets: str = field(default="", metadata=_h("camera data: comma-separated observation names (e.g. cube.x,cube.y,target.x,target.y) a position head on the camera features learns to predict, an auxiliary loss at training time only: the names are taken out of what the policy sees, the package never asks for them, and the head's estimates join the features the denoiser reads"))
    aux_weight: float = field(default=1.0, metadata=_h("camera data: weight of the aux_targets loss (MSE on normalised targets) beside the diffusion loss"))
    aux_only: bool = field(default=False, metadata=_h("camera data: the denoiser reads the joints and the position head's estimates only, not the other camera features (a perception bottleneck; needs aux_targets)"))
    aux_hidden: int = field(default=128, metadata=_h("camera data: hidden width of the aux_targets position head"))
    noise_samples: int = field(default=1, metadata=_h("noise draws (and timesteps) per window and step: the denoiser sees batch_size x this many samples while the camera encoders run once per window (they cost ~30x the denoiser)"))
    seed: int = field(default=1, metadata=_h("random seed"))
    device: str = field(default="auto", metadata=_h("auto = cuda if available, else cpu"))
    threads: int = field(default=1, metadata=_h("torch CPU threads (default 1: extra OpenMP threads spin-wait for cores the simulator or robot stack also uses)"))
    log_every: int = field(default=100, metadata=_h("steps between progress lines"))
    json_progress: bool = field(default=False, metadata=_h("print machine-readable JSON lines on stdout"))


allow(Config, {  # options.allow: what each key accepts, checked wherever the value is read
    "timeout": "> 0", "steps": ">= 1", "batch_size": ">= 0", "lr": "> 0", "weight_decay": ">= 0",
    "warmup_steps": ">= 0", "ema_decay": "[0, 1)", "horizon": ">= 1", "execute_steps": ">= 1", "history": ">= 1",
    "hidden": ">= 1", "blocks": ">= 1", "train_timesteps": "[2, 10000]", "ddim_steps": ">= 1",
    "obs_std_floor": "> 0", "seed": ">= 0", "threads": ">= 1", "log_every": ">= 1",
    "image_shift": "[0, 32]", "aux_weight": ">= 0", "aux_hidden": ">= 1", "noise_samples": "[1, 64]", "encoder_channels": ">= 8", "encoder_features": ">= 1", "keypoints": ">= 1",
})


def cosine_lr(step: int, total: int, warmup: int) -> float:
    """LR multiplier: linear warm-up, then cosine decay to 0 (Loshchilov & Hutter 2017)."""
    if step < warmup:
        return (step + 1) / warmup
    return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))


@torch.no_grad()
def ema_update(pairs: list[tuple[torch.nn.Module | None, torch.nn.Module | None]], step: int, max_decay: float) -> None:
    """EMA of each (ema, live) module pair's weights (pairs with None are skipped), the decay warming up as in
    Diffusion Policy's EMAModel so early steps are not frozen in."""
    decay = min(max_decay, (1 + step) / (10 + step))
    for ema, live in pairs:
        if ema is not None and live is not None:
            for pe, p in zip(ema.parameters(), live.parameters()):
                pe.mul_(decay).add_(p.detach(), alpha=1 - decay)


@dataclass
class TrainedPolicy:
    """What BC training returns: the EMA noise network, the camera encoders (None for state-only data) and the
    normaliser, in eval mode, plus the loss of every step."""

    net: NoisePredictionNet
    encoders: CameraEncoders | None
    norm: Normalizer
    losses: list[float]
    obs_names: list[str] = field(default_factory=list)  # what the policy sees (the data's, less any aux_targets)
    aux_names: list[str] = field(default_factory=list)  # what the encoders' position head estimates (aux_targets)


def split_aux(data: Dataset, spec: str) -> tuple[Dataset, list[np.ndarray], list[str]]:
    """Takes the aux_targets columns named in `spec` out of every episode's obs: the policy's dataset without them,
    the targets per episode ((T, k) float32 each) and their names. Raises naming the columns there are."""
    names = [n.strip() for n in spec.split(",") if n.strip()]
    if not names:
        return data, [], []
    if len(set(names)) != len(names):
        raise ValueError(f"aux_targets names a column twice: {spec}")
    missing = [n for n in names if n not in data.obs_names]
    if missing:
        raise ValueError(f"aux_targets: the demos have no observation {', '.join(missing)} (they have {', '.join(data.obs_names)}); "
                         f"send those columns with the demos (rlft train-bc --aux) or name others")
    if not data.cameras:
        raise ValueError("aux_targets trains a position head on the camera features: it needs demos with camera frames (--cameras)")
    idx = [data.obs_names.index(n) for n in names]
    keep = [i for i in range(len(data.obs_names)) if i not in idx]
    if not keep:
        raise ValueError("aux_targets would leave the policy no observation columns; keep at least the joints")
    episodes = [Episode(obs=ep.obs[:, keep], action=ep.action, reward=ep.reward, success=ep.success, episode_id=ep.episode_id,
                        seed=ep.seed, task=ep.task, intervention=ep.intervention, source=ep.source, images=ep.images)
                for ep in data.episodes]
    out = replace(data, episodes=episodes, obs_names=[data.obs_names[i] for i in keep])
    return out, [ep.obs[:, idx].astype(np.float32) for ep in data.episodes], names


def train(cfg: Config, data: Dataset, emit: Callable[[dict], None] = lambda e: None) -> TrainedPolicy:
    """Train on `data` (state, and camera frames when the episodes have them)."""
    torch.manual_seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    device = torch.device("cuda" if cfg.device == "auto" and torch.cuda.is_available() else ("cpu" if cfg.device == "auto" else cfg.device))
    data, aux_eps, aux_names = split_aux(data, cfg.aux_targets)
    # Episodes sent as aux-only (rlft train-bc --aux-data: noisy demos, the policy's own rollouts) train the position
    # head on frames off the expert's path; the denoiser never imitates them.
    extra = [ep for ep in data.episodes if ep.source == AUX_ONLY]
    if extra and not aux_names:
        raise ValueError(f"{len(extra)} episodes came as aux-only ({AUX_ONLY}: frames for the position head) but aux_targets "
                         f"is empty; name the targets (rlft train-bc --aux ...) or leave out --aux-data")
    extra_aux: list[np.ndarray] = []
    if extra:
        keep = [i for i, ep in enumerate(data.episodes) if ep.source != AUX_ONLY]
        if not keep:
            raise ValueError("every episode came as aux-only; the policy needs demonstrations to imitate (--data)")
        extra_aux = [aux_eps[i] for i, ep in enumerate(data.episodes) if ep.source == AUX_ONLY]
        aux_eps = [aux_eps[i] for i in keep]
        data = replace(data, episodes=[data.episodes[i] for i in keep])
    cameras = data.cameras
    batch_size = cfg.batch_size or (64 if cameras else 256)

    norm = Normalizer.fit(data.episodes, std_floor=cfg.obs_std_floor)
    obs_w, act_w = make_windows(data.episodes, cfg.history, cfg.horizon)  # (N, history, obs_dim), (N, H, A)
    obs_all = torch.from_numpy(norm.obs(obs_w).reshape(len(obs_w), -1)).to(device)  # (N, history*obs_dim)
    act_all = torch.from_numpy(norm.action(act_w)).to(device)  # (N, H, A) in [-1, 1]
    n = len(obs_all)

    encoders = ema_enc = None
    frames: list[torch.Tensor] = []
    cond_dim = obs_w.shape[2]
    if cameras:
        # The frames stay uint8, one copy per camera, gathered per batch by the window's frame index (the current
        # tick's frame: image history 1, state history `cfg.history`).
        fidx = torch.from_numpy(frame_index(data.episodes)).to(device)  # (N,)
        # aux-only episodes' frames follow the demos' (indices n_demo_frames..), for the position head alone
        frames = [torch.from_numpy(np.concatenate([ep.images[c] for ep in data.episodes + extra])).to(device) for c in cameras]  # (N', H, W, 3)
        n_demo_frames = sum(len(ep.obs) for ep in data.episodes)
        n_extra_frames = sum(len(ep.obs) for ep in extra)
        ecfgs = [EncoderConfig(height=f.shape[1], width=f.shape[2], channels=cfg.encoder_channels, keypoints=cfg.keypoints,
                               features=cfg.encoder_features) for f in frames]
        encoders = CameraEncoders(cameras, ecfgs, aux_dim=len(aux_names), aux_hidden=cfg.aux_hidden, aux_only=cfg.aux_only).to(device)
        ema_enc = CameraEncoders(cameras, ecfgs, aux_dim=len(aux_names), aux_hidden=cfg.aux_hidden, aux_only=cfg.aux_only).to(device)
        ema_enc.load_state_dict(encoders.state_dict())
        ema_enc.requires_grad_(False)
    mcfg = ModelConfig(obs_dim=obs_w.shape[2], action_dim=act_w.shape[2], history=cfg.history, horizon=cfg.horizon,
                       hidden=cfg.hidden, blocks=cfg.blocks)
    if encoders is not None:  # the noise network's obs is [state history, features]: one "step" of that width
        mcfg = ModelConfig(obs_dim=cfg.history * cond_dim + encoders.out_dim, action_dim=act_w.shape[2], history=1,
                           horizon=cfg.horizon, hidden=cfg.hidden, blocks=cfg.blocks)
    net = NoisePredictionNet(mcfg).to(device)
    ema = NoisePredictionNet(mcfg).to(device)
    ema.load_state_dict(net.state_dict())
    ema.requires_grad_(False)
    if encoders is not None and cfg.freeze_encoders:
        encoders.requires_grad_(False)
    params = list(net.parameters()) + (list(encoders.parameters()) if encoders is not None and not cfg.freeze_encoders else [])
    if aux_names:  # the targets of the frame each window encodes (frame_index order = make_windows order), normalised
        aux_raw = np.concatenate(aux_eps + extra_aux)  # (N', k): demos' frames, then aux-only episodes'
        log.info("position head: %s on %d demo frames%s", ", ".join(aux_names), n_demo_frames,
                 f" + {n_extra_frames} aux-only frames ({len(extra)} episodes)" if extra else "")
        aux_mean, aux_std = aux_raw.mean(0), np.maximum(aux_raw.std(0), cfg.obs_std_floor)
        aux_all = torch.from_numpy((aux_raw - aux_mean) / aux_std).to(device)  # (N, k)
        if cfg.freeze_encoders:  # the frozen convolutions stay random; the position head still learns
            params += list(encoders.aux_head.parameters())
            encoders.aux_head.requires_grad_(True)
    alphas_cumprod = torch.from_numpy(squared_cosine_alphas_cumprod(cfg.train_timesteps)).to(device)  # (T_train,)
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: cosine_lr(s, cfg.steps, cfg.warmup_steps))
    gen = torch.Generator(device=device).manual_seed(cfg.seed)
    guard = StepGuard("train-bc")
    log.info("training on %d windows from %d episodes (obs %d x %d, action %d x %d%s) on %s, %d params", n,
             len(data.episodes), cfg.history, obs_w.shape[2], cfg.horizon, mcfg.action_dim,
             f", cameras {', '.join(cameras)} at {frames[0].shape[2]}x{frames[0].shape[1]}" if cameras else "", device,
             sum(p.numel() for p in params))

    losses: list[float] = []
    aux_losses: list[float] = []
    t0 = time.perf_counter()
    for step in range(cfg.steps):
        idx = torch.randint(0, n, (batch_size,), device=device, generator=gen)  # (B,)
        obs, x0 = obs_all[idx], act_all[idx]  # (B, history*obs_dim), (B, H, A)
        if encoders is not None:
            fi = fidx[idx]  # (B,) the windows' frames
            if extra:  # plus half a batch of aux-only frames, encoded in the same pass, for the position head's loss
                fi = torch.cat([fi, torch.randint(n_demo_frames, n_demo_frames + n_extra_frames, (max(1, batch_size // 2),),
                                                  device=device, generator=gen)])
            imgs = [random_shift(f[fi], cfg.image_shift, gen) for f in frames]  # (B [+ B/2], 3, H, W) each
            with torch.set_grad_enabled(not cfg.freeze_encoders or bool(aux_names)):
                feats_all = encoders(*imgs)  # (B [+ B/2], features [+ k position estimates])
            feats = feats_all[:batch_size]
            obs = torch.cat([obs, feats], dim=-1)  # (B, cond_dim)
            if aux_names:
                aux_loss = F.mse_loss(feats_all[:, -len(aux_names):], aux_all[fi])
        if cfg.noise_samples > 1:  # the same (encoded) windows, several noise draws each
            obs, x0 = obs.repeat_interleave(cfg.noise_samples, 0), x0.repeat_interleave(cfg.noise_samples, 0)  # (B*K, ...)
        noise = torch.randn(x0.shape, device=device, generator=gen)  # (B*K, H, A)
        t = torch.randint(0, cfg.train_timesteps, (len(x0),), device=device, generator=gen)  # (B*K,)
        loss = F.mse_loss(net(obs, add_noise(x0, noise, t, alphas_cumprod), t), noise)  # epsilon objective (DDPM)
        total = loss + cfg.aux_weight * aux_loss if aux_names else loss
        guard.step("diffusion", total, opt, params, 1.0)
        sched.step()
        ema_update([(ema, net), (None if cfg.freeze_encoders else ema_enc, encoders)], step, cfg.ema_decay)
        if cfg.freeze_encoders and aux_names:
            ema_update([(ema_enc.aux_head, encoders.aux_head)], step, cfg.ema_decay)
        losses.append(loss.item())
        if aux_names:
            aux_losses.append(aux_loss.item())
        if (step + 1) % cfg.log_every == 0 or step + 1 == cfg.steps:
            window = finite_values(losses[-cfg.log_every:])
            emit({"step": step + 1, "total": cfg.steps, "losses/diffusion": float(np.mean(window)),
                  **({"losses/aux": float(np.mean(finite_values(aux_losses[-cfg.log_every:])))} if aux_names else {}),
                  "charts/SPS": (step + 1) / (time.perf_counter() - t0), "charts/learning_rate": sched.get_last_lr()[0]})
    return TrainedPolicy(net=ema.eval(), encoders=None if ema_enc is None else ema_enc.eval(), norm=norm, losses=losses,
                         obs_names=list(data.obs_names), aux_names=aux_names)


def run(cfg: Config) -> dict:
    """Collect or load the dataset, train, export; returns the `done` event."""
    started = time.perf_counter()
    out = sys.stdout

    def say(event: dict) -> None:
        if cfg.json_progress:
            out.write(json.dumps(event) + "\n")
            out.flush()

    if cfg.dataset:
        data = load_npz(cfg.dataset)
    else:
        with ExperienceServer(cfg.bind, timeout_s=cfg.timeout, **cfg.door()) as server:
            say({"event": "ready", "endpoint": server.endpoint})  # bound: whoever started us may connect now
            log.info("waiting for demos on %s (timeout %g s)", server.endpoint, cfg.timeout)
            data = server.collect()
            if server.stats.malformed:
                log.warning("%d malformed messages were rejected", server.stats.malformed)
    if not data.episodes:
        raise ValueError("the dataset has no episodes; record demos first")
    if cfg.save_dataset:
        os.makedirs(os.path.dirname(os.path.abspath(cfg.save_dataset)), exist_ok=True)
        demos = replace(data, episodes=[ep for ep in data.episodes if ep.source != AUX_ONLY])
        save_npz(cfg.save_dataset, demos)  # the demonstrations; aux-only episodes were never demos
        log.info("wrote %d episodes to %s", len(demos.episodes), cfg.save_dataset)
    os.makedirs(cfg.out, exist_ok=True)
    metrics = open(os.path.join(cfg.out, "metrics.jsonl"), "w")

    def emit(m: dict) -> None:
        metrics.write(json.dumps(m) + "\n")
        metrics.flush()
        if cfg.json_progress:
            say({"event": "progress", "step": m["step"], "total": m["total"], "loss": m["losses/diffusion"]})
        else:
            print(f"step {m['step']:>6}/{m['total']}  losses/diffusion {m['losses/diffusion']:.4f}  "
                  f"charts/SPS {m['charts/SPS']:.0f}", file=out, flush=True)

    with metrics:
        trained = train(cfg, data, emit)
    net, norm, losses = trained.net, trained.norm, trained.losses
    n_demos = sum(ep.source != AUX_ONLY for ep in data.episodes)  # the episodes imitated (aux-only ones trained the head)
    package = os.path.join(cfg.out, "package")
    meta = PackageMeta(task=data.task, obs_names=trained.obs_names, action_names=data.action_names,
                       episodes=n_demos, execute_steps=cfg.execute_steps, steps=cfg.ddim_steps,
                       train_timesteps=cfg.train_timesteps)
    export_package(net, squared_cosine_alphas_cumprod(cfg.train_timesteps), ddim_timesteps(cfg.train_timesteps, cfg.ddim_steps),
                   norm, meta, package, seed=cfg.seed, encoders=trained.encoders)
    with open(os.path.join(cfg.out, "config.json"), "w") as f:
        json.dump(asdict(cfg), f, indent=2)
    final = float(np.mean(finite_values(losses[-cfg.log_every:])))
    done = {"event": "done", "package": os.path.abspath(package), "final_loss": final, "steps": cfg.steps,
            "episodes": n_demos, "seconds": round(time.perf_counter() - started, 2),
            "cpu_seconds": round(time.process_time(), 2)}  # this process's CPU time: the cost on an idle machine
    if cfg.json_progress:
        say(done)
    else:
        print(f"done: package {done['package']}  final loss {final:.4f}  ({done['seconds']} s)", file=out, flush=True)
    return done
