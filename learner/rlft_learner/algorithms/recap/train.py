"""RECAP: advantage-conditioned policy improvement (pi*0.6, Physical Intelligence 2025, arXiv 2511.14759;
pi.website/blog/pistar06; docs/algorithms.md §3). One iteration of the learner side:

  1. value: a distributional V on ALL data so far (value.py);
  2. advantages: A_t = sum_{k<N} r_{t+k} + V(o_{t+N}) - V(o_t) (N-step; N = 0 means Monte-Carlo: G_t - V(o_t));
  3. indicator: I_t = 1[A_t > eps_task], eps_task the percentile that makes `positive_fraction` of the policy's own
     steps positive; operator (intervention) steps of successful episodes are forced positive (`intervention_positive`:
     pi*0.6 forces all of them; a scripted or tired operator's correction that still failed is better judged by its
     advantage);
  4. policy: the diffusion policy with the indicator as an input, dropped (-> "unconditioned") 30% of the time,
     fine-tuned from the PRE-TRAINED checkpoint every iteration, never from the previous iteration's, with the
     checkpoint's action range widened to the data's and the new indicator embedding at its own lr;
  5. export: a package with `indicator` as an ONNX input, optional classifier-free guidance beta baked into the
     whole-sampler graph and declared in policy.json, the value head as value.onnx, recap.json with the statistics.

`--plain` trains the same fine-tune without the indicator (plain BC on the same data), for the benchmark.

    python3 -m rlft_learner recap --bind tcp://127.0.0.1:5555 --pretrained runs/bc/package --out runs/recap/iter1
    python3 -m rlft_learner recap --dataset all.npz --pretrained runs/bc/package --out runs/recap/iter1 --n-step 0
"""

from __future__ import annotations

import copy
import json
import logging
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np
import torch
import torch.nn.functional as F

from ...options import allow, help_meta as _h
from ...data import Episode, Normalizer, frame_index, load_npz, make_windows
from ...vision import CameraEncoders, random_shift
from ..pixels.nets import load_base_encoders
from ..bc.train import cosine_lr, ema_update
from ..bc.diffusion import POSITIVE, UNCONDITIONED, ModelConfig, NoisePredictionNet, add_noise
from ...export.package import PackageMeta, export_package
from ...finite import StepGuard, finite_values
from .value import ReturnSpec, ValueConfig, ValueOverImages, calibration, frame_features, plot_calibration, predict, train_value
from ...transport.server import DoorConfig, ExperienceServer

log = logging.getLogger("rlft_learner.recap")


@dataclass
class Config(DoorConfig):
    bind: str = field(default="tcp://127.0.0.1:5555", metadata=_h("ROUTER address the robot side uploads episodes to"))
    dataset: str = field(default="", metadata=_h("read episodes from this .npz instead of the server"))
    timeout: float = field(default=300.0, metadata=_h("seconds to wait for the next message before giving up"))
    pretrained: str = field(default="", metadata=_h("pre-trained policy package (BC on demos): every iteration fine-tunes from its model.pt"))
    out: str = field(default="runs/recap", metadata=_h("run directory; the package goes to OUT/package, statistics to OUT/recap.json"))
    plain: bool = field(default=False, metadata=_h("no indicator: plain BC fine-tuning on the same data (the baseline)"))
    n_step: int = field(default=10, metadata=_h("advantage lookahead N in steps (pi*0.6: 50 at 50 Hz = 1 s; 10 is 1 s at 10 Hz); 0 = Monte-Carlo"))
    positive_fraction: float = field(default=0.3, metadata=_h("fraction of the policy's own steps marked positive, per task (pi*0.6: 0.3-0.4)"))
    intervention_positive: str = field(default="success", metadata=_h("which operator steps are forced positive: success (default: those of episodes that end in success; a correction that still failed is labelled by its advantage like any step), always (pi*0.6) or none"))
    positive_sources: str = field(default="", metadata=_h("comma-separated episode sources (recording metadata `source`, e.g. scripted_expert,teleop) whose successful episodes are demonstrations: all their steps forced positive like operator corrections, and kept out of the percentile. Empty = demos are labelled by their advantage (pi*0.6)"))
    indicator_dropout: float = field(default=0.3, metadata=_h("probability a training sample's indicator is replaced by 'unconditioned'"))
    cfg_beta: float = field(default=1.0, metadata=_h("classifier-free guidance weight baked into the sampler (1 = one conditioned pass; pi*0.6: 1.5-2.5)"))
    max_episode_steps: str = field(default="", metadata=_h("T_max per task for return normalisation: 150, or push_cube=150,peg_insert=100; empty = longest episode seen"))
    c_fail: float = field(default=-1.0, metadata=_h("failure cost C_fail in steps; < 0 means T_max"))
    value_bins: int = field(default=101, metadata=_h("return bins of the distributional value function (paper: 201)"))
    value_hidden: int = field(default=256, metadata=_h("value MLP width"))
    value_steps: int = field(default=1500, metadata=_h("value function gradient steps (trained afresh on all data every iteration)"))
    value_lr: float = field(default=1e-3, metadata=_h("value function AdamW learning rate"))
    steps: int = field(default=2000, metadata=_h("policy fine-tuning gradient steps"))
    batch_size: int = field(default=256, metadata=_h("windows per gradient step"))
    image_shift: int = field(default=4, metadata=_h("a pre-trained policy that sees cameras: random-shift augmentation of the fine-tune, pixels of replicate padding (train-bc's default); 0 = off"))
    lr: float = field(default=3e-4, metadata=_h("peak AdamW learning rate of the fine-tune"))
    indicator_lr: float = field(default=1e-2, metadata=_h("peak AdamW learning rate of the new, zero-initialised indicator embedding (its own rate, separate from --lr)"))
    warmup_steps: int = field(default=100, metadata=_h("linear LR warm-up before the cosine decay"))
    ema_decay: float = field(default=0.999, metadata=_h("max EMA decay of the exported weights"))
    seed: int = field(default=1, metadata=_h("random seed"))
    device: str = field(default="auto", metadata=_h("auto = cuda if available, else cpu"))
    threads: int = field(default=1, metadata=_h("torch CPU threads (default 1: extra OpenMP threads spin-wait for cores the simulator or robot stack also uses)"))
    log_every: int = field(default=100, metadata=_h("steps between progress lines"))
    json_progress: bool = field(default=False, metadata=_h("print machine-readable JSON lines on stdout"))


allow(Config, {  # options.allow: what each key accepts, checked wherever the value is read
    "timeout": "> 0", "n_step": ">= 0", "positive_fraction": "(0, 1)",
    "intervention_positive": ('always', 'success', 'none'), "indicator_dropout": "[0, 1)", "cfg_beta": "[0, 10]",
    "value_bins": ">= 2", "value_hidden": ">= 1", "value_steps": ">= 1", "value_lr": "> 0", "steps": ">= 1",
    "batch_size": ">= 1", "lr": "> 0", "indicator_lr": "> 0", "warmup_steps": ">= 0", "ema_decay": "[0, 1)",
    "seed": ">= 0", "threads": ">= 1", "log_every": ">= 1", "image_shift": "[0, 32]",
})


# --- advantages and indicators -------------------------------------------------------------------------------

def nstep_advantages(rewards: np.ndarray, values: np.ndarray, n_step: int, returns: np.ndarray | None = None) -> np.ndarray:
    """(T,) advantages of one episode from normalised rewards r (T,) and values V(o_t) (T,).

    N-step: A_t = sum_{k=t}^{min(t+N,T)-1} r_k + V(o_{t+N}) [only if t+N < T; the episode's end has value 0] - V(o_t).
    n_step = 0: Monte-Carlo, A_t = G_t - V(o_t), with `returns` (the clipped normalised G) when given."""
    T = len(rewards)
    r = np.asarray(rewards, np.float64)
    v = np.asarray(values, np.float64)
    if n_step <= 0:
        g = np.cumsum(r[::-1])[::-1] if returns is None else np.asarray(returns, np.float64)
        return (g - v).astype(np.float32)
    csum = np.concatenate([[0.0], np.cumsum(r)])  # (T+1,)
    t = np.arange(T)
    end = np.minimum(t + n_step, T)
    boot = np.where(t + n_step < T, v[np.minimum(t + n_step, T - 1)], 0.0)
    return (csum[end] - csum[t] + boot - v).astype(np.float32)


def indicators(adv: np.ndarray, intervention: np.ndarray, tasks: np.ndarray, positive_fraction: float,
               forced: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, float]]:
    """I_t = 1[A_t > eps_task] with eps_task the (1 - positive_fraction) quantile of the task's non-intervention
    advantages; `forced` steps (default: every intervention step) are always 1. Returns (I (N,) int64, {task: eps})."""
    if not 0.0 < positive_fraction < 1.0:
        raise ValueError(f"positive_fraction must be in (0, 1); found {positive_fraction}")
    ind = np.zeros(len(adv), np.int64)
    operator = np.asarray(intervention) > 0
    forced = operator if forced is None else np.asarray(forced) > 0
    thresholds: dict[str, float] = {}
    for task in np.unique(tasks):
        m = tasks == task
        free = m & ~operator
        eps = float(np.quantile(adv[free], 1.0 - positive_fraction)) if free.any() else float("inf")
        thresholds[str(task)] = eps
        ind[m] = (adv[m] > eps).astype(np.int64)
    ind[forced] = POSITIVE
    return ind, thresholds


def drop_indicators(ind: torch.Tensor, p: float, gen: torch.Generator) -> torch.Tensor:
    """Replace each indicator by UNCONDITIONED with probability p (pi*0.6 drops it 30% of the time, so one network
    also models the unconditioned policy that classifier-free guidance needs)."""
    drop = torch.rand(ind.shape, generator=gen, device=ind.device) < p
    return torch.where(drop, torch.full_like(ind, UNCONDITIONED), ind)


# --- pre-trained checkpoint -----------------------------------------------------------------------------------

@dataclass
class Pretrained:
    path: str
    policy: dict
    config: ModelConfig
    state_dict: dict
    alphas_cumprod: np.ndarray
    timesteps: list[int]
    norm: Normalizer
    #: The camera encoders of a policy that sees cameras (model.pt encoders_state_dict), else None.
    encoders: CameraEncoders | None = None
    #: Steps of state history the policy reads (policy.json observation.history).
    state_history: int = 1


def load_pretrained(path: str) -> Pretrained:
    """The package's policy.json and model.pt; errors name the file and the fix."""
    pj, mp = os.path.join(path, "policy.json"), os.path.join(path, "model.pt")
    for f in (pj, mp):
        if not os.path.isfile(f):
            raise ValueError(f"pre-trained package {path}: missing {os.path.basename(f)} — pass --pretrained a package written by train-bc")
    policy = json.load(open(pj))
    ckpt = torch.load(mp, map_location="cpu")
    o, a = policy["observation"], policy["action"]
    norm = Normalizer(obs_mean=np.asarray(o["mean"], np.float32), obs_std=np.asarray(o["std"], np.float32),
                      act_min=np.asarray(a["min"], np.float32), act_max=np.asarray(a["max"], np.float32))
    encoders = None
    if "encoders_state_dict" in ckpt:
        encoders = load_base_encoders(path)
        declared = [i["camera"] for i in o.get("images", [])]
        if declared != list(encoders.cameras):
            raise ValueError(f"pre-trained package {path}: policy.json observation.images names {declared} but model.pt's "
                             f"encoders are for {list(encoders.cameras)} — re-export the package with train-bc")
    return Pretrained(path=path, policy=policy, config=ModelConfig(**ckpt["config"]), state_dict=ckpt["state_dict"],
                      alphas_cumprod=ckpt["alphas_cumprod"].numpy(), timesteps=[int(t) for t in ckpt["timesteps"]], norm=norm,
                      encoders=encoders, state_history=int(o.get("history", 1)))


def init_from_pretrained(pre: Pretrained, indicator: bool) -> NoisePredictionNet:
    """The pre-trained network, with a fresh zero indicator embedding when `indicator` (so it starts as BC)."""
    cfg = ModelConfig(**{**asdict(pre.config), "indicator": int(indicator)})
    net = NoisePredictionNet(cfg)
    missing, unexpected = net.load_state_dict(pre.state_dict, strict=False)
    emb = {"indicator_emb.weight"}
    bad_missing, bad_unexpected = set(missing) - (emb if indicator else set()), set(unexpected) - (set() if indicator else emb)
    if bad_missing or bad_unexpected:
        raise ValueError(f"{pre.path}/model.pt does not fit the policy network: missing {sorted(bad_missing)}, unexpected {sorted(bad_unexpected)}")
    return net


# --- training ---------------------------------------------------------------------------------------------------

@dataclass
class Vision:
    """What a policy that sees cameras fine-tunes with: its encoders (trained on, from the pre-trained weights), the
    frames per camera (uint8 (S, H, W, 3), all steps), each window's frame index (N,) and the random shift (DrQ)."""

    encoders: CameraEncoders
    frames: list[np.ndarray]
    fidx: np.ndarray
    shift: int


def finetune_policy(cfg: Config, net: NoisePredictionNet, obs: np.ndarray, act: np.ndarray, ind: np.ndarray | None,
                    alphas_cumprod: np.ndarray, device: torch.device, emit: Callable[[dict], None],
                    vision: Vision | None = None) -> tuple[NoisePredictionNet, list[float], CameraEncoders | None]:
    """Epsilon-objective fine-tune of `net` on windows obs (N, history*obs_dim) and act (N, H, A), both normalised;
    `ind` (N,) indicators (None for plain BC). With `vision` the network's obs is [state history, encoders(frame of
    the window)], and the encoders train with it, as in train-bc. Returns the EMA network (eval), the losses and the
    EMA encoders (eval; None without vision)."""
    torch.manual_seed(cfg.seed)
    net = net.to(device).train()
    ema = NoisePredictionNet(net.cfg).to(device)
    ema.load_state_dict(net.state_dict())
    ema.requires_grad_(False)
    enc = ema_enc = None
    frames: list[torch.Tensor] = []
    fidx = None
    if vision is not None:
        enc = vision.encoders.to(device).train()
        ema_enc = copy.deepcopy(enc).requires_grad_(False)
        frames = [torch.from_numpy(f).to(device) for f in vision.frames]  # uint8 (S, H, W, 3): no per-step copies
        fidx = torch.from_numpy(vision.fidx).to(device)
    obs_all = torch.from_numpy(obs).to(device)
    act_all = torch.from_numpy(act).to(device)
    ind_all = None if ind is None else torch.from_numpy(ind.astype(np.int64)).to(device)
    ac = torch.from_numpy(np.asarray(alphas_cumprod, np.float32)).to(device)
    T_train = len(alphas_cumprod)
    # The indicator embedding is new and starts at zero: at the network's lr it stays an order of magnitude smaller
    # than the timestep embedding it is added to, and the policy barely depends on it. It gets its own, larger lr.
    emb = [p for n, p in net.named_parameters() if n.startswith("indicator_emb.")]
    rest = [p for n, p in net.named_parameters() if not n.startswith("indicator_emb.")] + (list(enc.parameters()) if enc is not None else [])
    groups = [{"params": rest, "lr": cfg.lr}] + ([{"params": emb, "lr": cfg.indicator_lr}] if emb else [])
    opt = torch.optim.AdamW(groups, lr=cfg.lr, weight_decay=1e-6)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: cosine_lr(s, cfg.steps, cfg.warmup_steps))
    gen = torch.Generator(device=device).manual_seed(cfg.seed)
    guard = StepGuard("recap")
    losses: list[float] = []
    t0 = time.perf_counter()
    for step in range(cfg.steps):
        idx = torch.randint(0, len(obs_all), (cfg.batch_size,), device=device, generator=gen)  # (B,)
        x0 = act_all[idx]  # (B, H, A)
        noise = torch.randn(x0.shape, device=device, generator=gen)
        t = torch.randint(0, T_train, (cfg.batch_size,), device=device, generator=gen)  # (B,)
        i_b = None if ind_all is None else drop_indicators(ind_all[idx], cfg.indicator_dropout, gen)  # (B,)
        obs = obs_all[idx]  # (B, history*obs_dim)
        if enc is not None:
            obs = torch.cat([obs, enc(*[random_shift(f[fidx[idx]], vision.shift, gen) for f in frames])], dim=-1)  # (B, cond)
        loss = F.mse_loss(net(obs, add_noise(x0, noise, t, ac), t, i_b), noise)
        guard.step("policy", loss, opt, [p for g in groups for p in g["params"]], 1.0)
        sched.step()
        ema_update([(ema, net), (ema_enc, enc)], step, cfg.ema_decay)
        losses.append(loss.item())
        if (step + 1) % cfg.log_every == 0 or step + 1 == cfg.steps:
            emit({"phase": "policy", "step": step + 1, "total": cfg.steps, "losses/diffusion": float(np.mean(finite_values(losses[-cfg.log_every:]))),
                  "charts/SPS": (step + 1) / (time.perf_counter() - t0)})
    return ema.eval(), losses, (ema_enc.eval() if ema_enc is not None else None)


INTERVENTION_POSITIVE = ("always", "success", "none")


def forced_positive(eps: list[Episode], mode: str) -> np.ndarray:
    """(sum T,) 1 where an operator step is forced positive: every one (`always`, pi*0.6), those of episodes that end
    in success (`success`), or none (`none`: operator steps are labelled by their advantage like the policy's)."""
    if mode not in INTERVENTION_POSITIVE:
        raise ValueError(f"intervention_positive must be one of {', '.join(INTERVENTION_POSITIVE)}; found {mode!r}")
    return np.concatenate([_intervention(e) * (mode == "always" or (mode == "success" and e.success)) for e in eps])


def demo_positive(eps: list[Episode], sources: str) -> np.ndarray:
    """(sum T,) 1 for every step of a successful episode whose `source` is in the comma-separated `sources`."""
    names = {x.strip() for x in sources.split(",") if x.strip()}
    return np.concatenate([np.full(len(e.obs), float(e.success and e.source in names), np.float32) for e in eps])


def widen_action_range(norm: Normalizer, eps: list[Episode]) -> Normalizer:
    """The checkpoint's normaliser with its action range widened to cover every action in `eps`.

    The pre-trained policy's range comes from its demos only; its sampler clips to [-1, 1] in that range, so it cannot
    command past the demos' extremes (a hole further out than any demo's is out of reach). Clipping the operator's
    corrections to that range would teach exactly the failure they correct, so the fine-tune widens it instead; the
    observation statistics stay the checkpoint's."""
    act = np.concatenate([e.action for e in eps]).astype(np.float32)  # (N, action_dim)
    return Normalizer(obs_mean=norm.obs_mean, obs_std=norm.obs_std,
                      act_min=np.minimum(norm.act_min, act.min(0)), act_max=np.maximum(norm.act_max, act.max(0)))


def _intervention(ep: Episode) -> np.ndarray:
    return np.zeros(len(ep.obs), np.float32) if ep.intervention is None else np.asarray(ep.intervention, np.float32)


def run(cfg: Config) -> dict:
    """Receive or load the episodes, train V, label, fine-tune, export; returns the `done` event."""
    started = time.perf_counter()
    out = sys.stdout

    def say(event: dict) -> None:
        if cfg.json_progress:
            out.write(json.dumps(event) + "\n")
            out.flush()

    torch.set_num_threads(cfg.threads)
    device = torch.device("cuda" if cfg.device == "auto" and torch.cuda.is_available() else ("cpu" if cfg.device == "auto" else cfg.device))
    # Bind first (the address check fails fast), then load the package while robots may already connect.
    server = None if cfg.dataset else ExperienceServer(cfg.bind, timeout_s=cfg.timeout, **cfg.door())
    if server is not None:
        say({"event": "ready", "endpoint": server.endpoint})  # bound: whoever started us may connect now
    try:
        if not cfg.pretrained:
            raise ValueError("--pretrained is required: the BC package every RECAP iteration fine-tunes from")
        pre = load_pretrained(cfg.pretrained)
        if server is None:
            data = load_npz(cfg.dataset)
        else:
            log.info("waiting for episodes on %s (timeout %g s)", server.endpoint, cfg.timeout)
            data = server.collect()
    finally:
        if server is not None:
            server.close()
    eps = [e for e in data.episodes if len(e.obs) > 0]
    if not eps:
        raise ValueError("the dataset has no episodes; collect some first")
    if list(data.obs_names) != list(pre.policy["observation"]["names"]):
        raise ValueError(f"the episodes' observation names {data.obs_names} differ from the pre-trained package's "
                         f"{pre.policy['observation']['names']} — use episodes of the task the package was trained on")
    cams = list(pre.encoders.cameras) if pre.encoders is not None else []
    frames: list[np.ndarray] = []
    if cams:  # a policy that sees cameras: every episode must carry their frames, at the package's sizes
        for c, e in zip(cams, pre.encoders.cfgs):
            for ep in eps:
                f = ep.images.get(c)
                if f is None or f.dtype != np.uint8 or f.shape != (len(ep.obs), e.height, e.width, 3):
                    got = "no frames" if f is None else f"{f.dtype} {list(f.shape)}"
                    raise ValueError(f"episode {ep.episode_id}: camera {c!r} has {got}; the pre-trained package {cfg.pretrained} "
                                     f"sees {c} as uint8 [{len(ep.obs)}, {e.height}, {e.width}, 3] — send the episodes with "
                                     f"their frames (rlft recap does, from the package's cameras)")
            frames.append(np.concatenate([ep.images[c] for ep in eps]))  # (S, H, W, 3), steps in episode order
    os.makedirs(cfg.out, exist_ok=True)
    metrics = open(os.path.join(cfg.out, "metrics.jsonl"), "w")

    def emit(m: dict) -> None:
        metrics.write(json.dumps(m) + "\n")
        metrics.flush()
        loss = m.get("losses/diffusion", m.get("losses/value_ce"))
        if cfg.json_progress:
            say({"event": "progress", "phase": m["phase"], "step": m["step"], "total": m["total"], "loss": loss})
        else:
            print(f"{m['phase']:>6} step {m['step']:>6}/{m['total']}  loss {loss:.4f}", file=out, flush=True)

    # 1. Value function on all data.
    spec = ReturnSpec.for_episodes(eps, cfg.max_episode_steps, cfg.c_fail)
    obs_n = [pre.norm.obs(e.obs) for e in eps]  # per episode (T, obs_dim)
    if cams:  # V reads [state, the pre-trained encoders' features of the step's frames] (frozen: computed once)
        feats = frame_features(pre.encoders, frames, device)  # (S, F)
        ends = np.cumsum([len(o) for o in obs_n])[:-1]
        obs_n = [np.concatenate([o, f], axis=1) for o, f in zip(obs_n, np.split(feats, ends))]
    rets = [spec.returns(e) for e in eps]
    with metrics:
        vnet, vlosses = train_value(np.concatenate(obs_n), np.concatenate(rets),
                                    ValueConfig(bins=cfg.value_bins, hidden=cfg.value_hidden, steps=cfg.value_steps,
                                                lr=cfg.value_lr, seed=cfg.seed), device, emit, cfg.log_every)
        values = [predict(vnet, o, device) for o in obs_n]
        # 2. Advantages, 3. indicators.
        adv = [nstep_advantages(spec.rewards(e) / spec.max_steps[e.task], v, cfg.n_step, g) for e, v, g in zip(eps, values, rets)]
        inter = np.concatenate([_intervention(e) for e in eps])
        demo = demo_positive(eps, cfg.positive_sources)  # (sum T,) demonstration steps forced positive
        forced = np.maximum(forced_positive(eps, cfg.intervention_positive), demo)
        tasks = np.concatenate([np.full(len(e.obs), e.task) for e in eps])
        adv_all = np.concatenate(adv)
        ind, thresholds = indicators(adv_all, np.maximum(inter, demo), tasks, cfg.positive_fraction, forced)
        # 4. Policy, from the pre-trained checkpoint.
        obs_w, act_w = make_windows(eps, pre.state_history if cams else pre.config.history, pre.config.horizon)
        obs_w = pre.norm.obs(obs_w).reshape(len(obs_w), -1)
        norm = widen_action_range(pre.norm, eps)
        act_w = norm.action(act_w)  # (N, H, A) in [-1, 1] of the widened range
        net = init_from_pretrained(pre, indicator=not cfg.plain)
        log.info("fine-tuning %s on %d windows from %d episodes (%d intervention steps, %.0f%% positive)", "plain BC" if cfg.plain else "RECAP",
                 len(obs_w), len(eps), int(inter.sum()), 100 * ind.mean())
        vision = None
        if cams:
            vision = Vision(copy.deepcopy(pre.encoders), frames, frame_index(eps), cfg.image_shift)
        net, plosses, encoders = finetune_policy(cfg, net, obs_w, act_w, None if cfg.plain else ind, pre.alphas_cumprod,
                                                 device, emit, vision)

    # 5. Statistics, plot, export.
    v_all, g_all = np.concatenate(values), np.concatenate(rets)
    calib = calibration(v_all, g_all)
    free = (inter == 0) & (demo == 0)
    stats = {
        "episodes": len(eps), "steps": int(len(adv_all)), "successes": int(sum(e.success for e in eps)),
        "intervention_steps": int(inter.sum()), "sources": {s: sum(e.source == s for e in eps) for s in sorted({e.source for e in eps})},
        "n_step": cfg.n_step, "positive_fraction_target": cfg.positive_fraction, "indicator_dropout": cfg.indicator_dropout,
        "thresholds": thresholds, "max_episode_steps": spec.max_steps, "c_fail": spec.c_fail,
        "intervention_positive": cfg.intervention_positive, "forced_positive_steps": int(forced.sum()),
        "positive_sources": cfg.positive_sources, "demo_positive_steps": int(demo.sum()),
        "action_range": {"pretrained": [pre.norm.act_min.tolist(), pre.norm.act_max.tolist()], "fine_tune": [norm.act_min.tolist(), norm.act_max.tolist()],
                         "steps_outside_pretrained": int(((np.concatenate([e.action for e in eps]) < pre.norm.act_min) | (np.concatenate([e.action for e in eps]) > pre.norm.act_max)).any(1).sum())},
        "positive_fraction": float(ind.mean()), "positive_fraction_autonomous": float(ind[free].mean()) if free.any() else 0.0,
        "advantage": {"mean": float(adv_all.mean()), "std": float(adv_all.std()), "p10": float(np.quantile(adv_all, 0.1)),
                      "p50": float(np.quantile(adv_all, 0.5)), "p90": float(np.quantile(adv_all, 0.9))},
        "value": {"final_ce": float(np.mean(finite_values(vlosses[-cfg.log_every:]))), "calibration": calib,
                  "note": "in-sample: V on the episodes it was trained on (all data, as RECAP trains it)"},
        "policy": {"final_loss": float(np.mean(finite_values(plosses[-cfg.log_every:]))), "plain": cfg.plain, "cfg_beta": cfg.cfg_beta,
                   "pretrained": os.path.abspath(cfg.pretrained), "pretrained_version": pre.policy.get("version", "")},
    }
    order = sorted(range(len(eps)), key=lambda i: (not eps[i].success, len(eps[i].obs)))
    picks = ([order[0]] if order else []) + [i for i in order if not eps[i].success][:1] + [i for i in order if _intervention(eps[i]).any()][:1]
    examples = [(f"ep {eps[i].episode_id} ({'success' if eps[i].success else 'failure'}{', interv.' if _intervention(eps[i]).any() else ''})",
                 values[i], rets[i]) for i in dict.fromkeys(picks)]
    why = plot_calibration(os.path.join(cfg.out, "value_calibration.png"), calib, examples,
                           f"RECAP value function: {len(eps)} episodes, {data.task}")
    stats["value"]["plot"] = None if why else "value_calibration.png"
    if why:
        stats["value"]["plot_note"] = why
        log.warning("calibration plot skipped: %s", why)

    package = os.path.join(cfg.out, "package")
    advantage = None if cfg.plain else {
        "n_step": cfg.n_step, "positive_fraction": cfg.positive_fraction, "dropout": cfg.indicator_dropout,
        "thresholds": thresholds, "positive_fraction_measured": float(ind.mean()), "intervention_positive": cfg.intervention_positive,
        "value": {"input": "obs+images" if cams else "obs", "history": 1, "bins": cfg.value_bins, "v_min": -1.0, "v_max": 0.0,
                  "max_episode_steps": spec.max_steps, "c_fail": spec.c_fail},
    }
    meta = PackageMeta(task=data.task, obs_names=data.obs_names, action_names=data.action_names, episodes=len(eps),
                       execute_steps=int(pre.policy["action"]["execute_steps"]), steps=len(pre.timesteps),
                       train_timesteps=len(pre.alphas_cumprod), version_prefix="bc-mixed" if cfg.plain else "recap",
                       advantage=advantage, cfg_beta=1.0 if cfg.plain else cfg.cfg_beta)
    value_head = vnet if not cams else ValueOverImages(pre.encoders, vnet, len(data.obs_names))
    export_package(net, pre.alphas_cumprod, pre.timesteps, norm, meta, package, seed=cfg.seed,
                   value_net=None if cfg.plain else value_head, encoders=encoders)
    with open(os.path.join(cfg.out, "recap.json"), "w") as f:
        json.dump(stats, f, indent=2)
    with open(os.path.join(cfg.out, "config.json"), "w") as f:
        json.dump(asdict(cfg), f, indent=2)
    done = {"event": "done", "package": os.path.abspath(package), "stats": os.path.abspath(os.path.join(cfg.out, "recap.json")),
            "final_loss": stats["policy"]["final_loss"], "value_ce": stats["value"]["final_ce"], "positive_fraction": stats["positive_fraction"],
            "episodes": len(eps), "steps": cfg.steps, "seconds": round(time.perf_counter() - started, 2)}
    if cfg.json_progress:
        say(done)
    else:
        print(f"done: package {done['package']}  positive {100 * done['positive_fraction']:.0f}%  ({done['seconds']} s)", file=out, flush=True)
    return done
