"""Behaviour cloning of a tiny language-conditioned VLA (vla.py) with pi0's flow-matching objective.

Reads an `rlft-vla-dataset` directory (data.py; `rlft train-vla` writes it from recorded MCAP episodes), builds
the instruction tokenizer from the task vocabulary, trains, and exports a VLA package (export.py).

    python3 -m rlft_learner train-vla --dataset runs/vla/dataset --out runs/vla --steps 3000
    python3 -m rlft_learner train-vla --synthetic --steps 20 --width 32 --out /tmp/vla   # a tiny real package, for tests

RECAP (recap.py): fine-tune a VLA package on the demos plus the policy's own supervised episodes, each tick's
instruction carrying its advantage indicator; `--recap-plain` is the same fine-tune without it (the baseline).

    python3 -m rlft_learner train-vla --dataset runs/vla/dataset --recap-dataset runs/mixed/dataset \
        --pretrained runs/vla/package --out runs/vla-recap --steps 1500
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from ...options import allow, help_meta as _h
from ...finite import StepGuard, finite_values
from .tokenizer import WordLevelTokenizer, words
from .model import ImageSpec, TinyVla, VlaConfig, preprocess_images
from .data import VlaDataset, load_vla_dataset, synthetic_vla_dataset
from .export import export_vla_package
from .recap import SUFFIX, TEMPLATE, BaseVla, concat_datasets, extend_vocabulary, label, load_vla_package
from ..recap.value import ValueConfig

log = logging.getLogger("rlft_learner.train_vla")


@dataclass
class Config:
    dataset: str = field(default="", metadata=_h("rlft-vla-dataset directory (meta.json + .npy files)"))
    synthetic: bool = field(default=False, metadata=_h("train on a small synthetic dataset instead (tests, fixtures)"))
    out: str = field(default="runs/vla", metadata=_h("run directory; the package goes to OUT/package"))
    steps: int = field(default=3000, metadata=_h("gradient steps"))
    batch_size: int = field(default=64, metadata=_h("samples per gradient step"))
    lr: float = field(default=1e-3, metadata=_h("peak AdamW learning rate"))
    weight_decay: float = field(default=1e-4, metadata=_h("AdamW weight decay"))
    warmup_steps: int = field(default=200, metadata=_h("linear LR warm-up before the cosine decay"))
    ema_decay: float = field(default=0.999, metadata=_h("max EMA decay of the exported weights"))
    horizon: int = field(default=16, metadata=_h("predicted action chunk length"))
    execute_steps: int = field(default=8, metadata=_h("actions executed per chunk on the robot"))
    flow_steps: int = field(default=10, metadata=_h("Euler steps at inference (pi0: 10)"))
    width: int = field(default=64, metadata=_h("token width of prefix and action expert"))
    heads: int = field(default=4, metadata=_h("attention heads"))
    prefix_layers: int = field(default=2, metadata=_h("transformer blocks in the prefix encoder"))
    film: bool = field(default=True, metadata=_h("FiLM-condition the image encoder on the instruction (RT-1 style)"))
    keypoints: int = field(default=16, metadata=_h("spatial-softmax keypoint tokens per camera (0 = patch tokens only)"))
    expert_layers: int = field(default=2, metadata=_h("transformer blocks in the action expert"))
    max_tokens: int = field(default=16, metadata=_h("instruction length incl. [CLS]/[SEP] (truncate / pad)"))
    state_prefix: str = field(default="q.", metadata=_h("observation names starting with this are the state input (proprioception only)"))
    image_height: int = field(default=32, metadata=_h("model input height after crop + resize"))
    image_width: int = field(default=40, metadata=_h("model input width after crop + resize"))
    crop: str = field(default="14,2,48,60", metadata=_h("top,left,height,width crop of every camera's source frame; per camera: 'front:14,0,48,84;wrist:full' (a camera not listed, or 'full': the whole frame)"))
    shift: int = field(default=2, metadata=_h("random-shift augmentation in pixels (DrQ); 0 = off"))
    state_std_floor: float = field(default=1e-2, metadata=_h("lower bound on per-dimension state std"))
    delta_actions: bool = field(default=True, metadata=_h("predict joint chunks relative to the measured joint positions (openpi DeltaActions)"))
    absolute_actions: str = field(default="gripper", metadata=_h("comma-separated action names kept absolute with --delta-actions"))
    aux_weight: float = field(default=1.0, metadata=_h("weight of the auxiliary object-position loss (training only; 0 = off)"))
    aux_names: str = field(default="cube.x,cube.y,target.x,target.y,red.x,red.y,blue.x,blue.y,left.x,left.y,right.x,right.y",
                           metadata=_h("observation names the prefix must predict in training (those the data has)"))
    aux_token: bool = field(default=True, metadata=_h("a position head over the camera tokens estimates the aux names and its estimates join the prefix as a token (the pixel BC recipe); off: a linear probe on the pooled prefix, never exported"))
    aux_only: bool = field(default=False, metadata=_h("the prefix holds the position token instead of the camera tokens: the policy sees the cameras only through the head's estimates"))
    aux_noise: float = field(default=0.0, metadata=_h("std of Gaussian noise added to the position token's estimates in training (normalised units), so the policy learns to live with the head's error on its own rollouts"))
    aux_hidden: int = field(default=128, metadata=_h("hidden width of the position head (--aux-token)"))
    aux_dataset: str = field(default="", metadata=_h("comma-separated rlft-vla-dataset dirs whose frames train only the position head (noisy demos, the policy's own rollouts: never imitated)"))
    aux_batch: int = field(default=32, metadata=_h("--aux-dataset frames per step beside the imitation batch"))
    pretrained: str = field(default="", metadata=_h("a VLA package to fine-tune from (its network, tokenizer and normalisation; the model options above are its own): needed by --recap-dataset"))
    recap_dataset: str = field(default="", metadata=_h("comma-separated rlft-vla-dataset dirs of the policy's own supervised episodes (failures and operator takeovers included): imitated with RECAP's advantage indicator in the instruction, together with --dataset"))
    recap_plain: bool = field(default=False, metadata=_h("the same fine-tune on the same data without the indicator (plain BC: the baseline)"))
    n_step: int = field(default=10, metadata=_h("RECAP advantage lookahead in ticks (1 s at 10 Hz); 0 = Monte-Carlo"))
    positive_fraction: float = field(default=0.3, metadata=_h("RECAP: fraction of the policy's own ticks marked positive (pi*0.6: 0.3-0.4)"))
    indicator_dropout: float = field(default=0.3, metadata=_h("RECAP: probability a training tick's indicator is left out of its instruction"))
    value_steps: int = field(default=1500, metadata=_h("RECAP value function gradient steps"))
    widen_actions: bool = field(default=True, metadata=_h("fine-tuning --pretrained: widen its action range to the data's (the operator may command past the demos); off: keep the package's range and clip the targets to it"))
    seed: int = field(default=1, metadata=_h("random seed"))
    threads: int = field(default=1, metadata=_h("torch CPU threads"))
    log_every: int = field(default=100, metadata=_h("steps between progress lines"))
    json_progress: bool = field(default=False, metadata=_h("print machine-readable JSON lines on stdout"))


allow(Config, {  # options.allow: what each key accepts, checked wherever the value is read
    "steps": ">= 1", "batch_size": ">= 1", "lr": "> 0", "weight_decay": ">= 0", "warmup_steps": ">= 0",
    "ema_decay": "[0, 1)", "horizon": ">= 1", "execute_steps": ">= 1", "flow_steps": ">= 1", "width": ">= 1",
    "heads": ">= 1", "prefix_layers": ">= 1", "keypoints": ">= 0", "expert_layers": ">= 1", "max_tokens": ">= 3",
    "image_height": ">= 1", "image_width": ">= 1", "shift": ">= 0", "state_std_floor": "> 0", "aux_weight": ">= 0",
    "aux_hidden": ">= 1", "aux_batch": ">= 1", "aux_noise": ">= 0", "n_step": ">= 0", "positive_fraction": "(0, 1)",
    "indicator_dropout": "[0, 1)", "value_steps": ">= 1",
    "seed": ">= 0", "threads": ">= 1", "log_every": ">= 1",
})


def cosine_lr(step: int, total: int, warmup: int) -> float:
    if step < warmup:
        return (step + 1) / warmup
    return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, total - warmup)))


def random_shift(x: torch.Tensor, pad: int, gen: torch.Generator) -> torch.Tensor:
    """DrQ (Kostrikov et al. 2020) random translation by up to `pad` pixels, per sample, via integer crops."""
    if pad <= 0:
        return x
    B, C, H, W = x.shape
    padded = F.pad(x, (pad, pad, pad, pad), mode="replicate")  # (B, C, H+2p, W+2p)
    dy = torch.randint(0, 2 * pad + 1, (B,), generator=gen)
    dx = torch.randint(0, 2 * pad + 1, (B,), generator=gen)
    return torch.stack([padded[i, :, dy[i]:dy[i] + H, dx[i]:dx[i] + W] for i in range(B)])


def camera_crop(spec: str, camera: str, height: int, width: int) -> list[int]:
    """The crop [top, left, height, width] of `camera` (height x width frames) that --crop asks for: one
    'top,left,height,width' for every camera, or 'name:top,left,height,width;name:full' per camera (a camera not
    listed, or 'full', is the whole frame). A crop outside the frame is refused, naming the camera and its size."""
    text = spec.strip()
    if ":" in text:
        parts = [p.split(":", 1) for p in text.split(";") if p.strip()]
        if any(len(p) != 2 for p in parts):
            raise ValueError(f"--crop {spec!r}: give each camera as name:top,left,height,width (or name:full), separated by ';'")
        text = dict((k.strip(), v) for k, v in parts).get(camera, "full").strip()
    if text in ("", "full"):
        return [0, 0, height, width]
    try:
        crop = [int(v) for v in text.split(",")]
    except ValueError:
        crop = []
    if len(crop) != 4:
        raise ValueError(f"--crop {spec!r}: camera {camera!r} needs top,left,height,width (four integers) or 'full'")
    top, left, h, w = crop
    if top < 0 or left < 0 or h < 1 or w < 1 or top + h > height or left + w > width:
        raise ValueError(f"--crop {spec!r}: {top},{left},{h},{w} does not fit camera {camera!r}'s {width}x{height} frames; "
                         f"give a per-camera crop inside them (e.g. --crop '{camera}:full')")
    return crop


def _aux_names(cfg: Config, data: VlaDataset) -> list[str]:
    """The aux names the data has (in --aux-names order); none when the aux loss is off."""
    return [n for n in cfg.aux_names.split(",") if n and n in data.obs_names] if cfg.aux_weight > 0 else []


def _frames(data: VlaDataset, cams: list[ImageSpec]) -> list[torch.Tensor]:
    """Each camera's frames preprocessed as the model reads them, (N, 3, h, w) per camera."""
    out = []
    for spec in cams:
        if spec.name not in data.images:
            raise ValueError(f"the dataset has no camera {spec.name!r} (it has {', '.join(data.images) or 'none'}); "
                             f"record every dataset with the same cameras")
        src = data.images[spec.name]
        if tuple(src.shape[1:3]) != (spec.source_height, spec.source_width):
            raise ValueError(f"camera {spec.name!r} frames are {src.shape[2]}x{src.shape[1]}; the model reads "
                             f"{spec.source_width}x{spec.source_height} (the training data's, or the pre-trained package's): record every dataset at one size")
        out.append(torch.cat([preprocess_images(torch.from_numpy(np.array(src[i:i + 2048])), spec) for i in range(0, len(src), 2048)]))
    return out


def prepare(cfg: Config, data: VlaDataset, vocabulary: list[str], aux_data: list[VlaDataset] | None = None,
            base: BaseVla | None = None, indicator: np.ndarray | None = None):
    """Tokenizer, model config, normalisation and the training tensors (`aux_frames`: the --aux-dataset frames,
    their instructions and position targets, or None). With `base` (a package to fine-tune from) its tokenizer
    (extended with new words), network shape, state/aux normalisation and delta-action layout are kept, the action
    range is widened to cover the data, and `tensors["init"]` holds the network to start from. `indicator` (N,) int:
    RECAP's per-tick label; `tensors["ids_by_indicator"]` then holds each tick's instruction ids without a suffix,
    with the negative one and with the positive one (3, N, L)."""
    suffixes = list(SUFFIX.values()) if indicator is not None else []
    init = None
    if base is not None:
        tok, init = extend_vocabulary(base, data.instructions + vocabulary + suffixes, seed=cfg.seed)
        missing = [n for n in base.state_names if n not in data.obs_names]
        if missing:
            raise ValueError(f"the data lacks the pre-trained package's state {', '.join(missing)}: record it with the same robot and task")
        state_idx = [data.obs_names.index(n) for n in base.state_names]
        cams = list(init.cfg.cameras)
    else:
        tok = WordLevelTokenizer.build(data.instructions + vocabulary + suffixes, max_length=cfg.max_tokens)
        state_idx = [i for i, n in enumerate(data.obs_names) if n.startswith(cfg.state_prefix)]
        cams = [ImageSpec(name=name, source_height=int(arr.shape[1]), source_width=int(arr.shape[2]),
                          crop=camera_crop(cfg.crop, name, int(arr.shape[1]), int(arr.shape[2])),
                          height=cfg.image_height, width=cfg.image_width) for name, arr in data.images.items()]
    if not state_idx:
        raise ValueError(f"no observation name starts with {cfg.state_prefix!r} (names: {', '.join(data.obs_names)})")
    if indicator is not None:
        longest = max(len(words(f"{s} {SUFFIX[1]}")) + 2 for s in set(data.instructions))  # + [CLS], [SEP]
        if longest > tok.max_length:
            raise ValueError(f"an instruction with the indicator suffix {SUFFIX[1]!r} fills all {tok.max_length} tokens and would be "
                             f"truncated: train the base with a larger --max-tokens")
    # Privileged auxiliary targets (training only): where the instructed cube / target and every object are. The
    # prefix must encode them from camera + instruction, which keeps the image pathway from being ignored.
    if base is None:
        aux_names = _aux_names(cfg, data)
    else:
        if base.model.cfg.aux_dim and cfg.aux_weight <= 0:
            raise ValueError(f"{base.path} has a position token: fine-tuning it needs its targets (--aux-weight > 0), or its head would drift untrained")
        aux_names = list(base.norm["aux"]["names"]) if "aux" in base.norm and cfg.aux_weight > 0 else []
        lacking = [n for n in aux_names if n not in data.obs_names]
        if lacking:
            raise ValueError(f"the data lacks the position token's targets {', '.join(lacking)}: record it with the same task")
    if aux_data and not aux_names:
        raise ValueError("--aux-dataset trains the position head, but no --aux-names are in the training data "
                         f"(its names: {', '.join(data.obs_names)}) or --aux-weight is 0")
    mcfg = VlaConfig(state_dim=len(state_idx), action_dim=data.action.shape[1], horizon=cfg.horizon,
                     vocab_size=len(tok.vocab), max_tokens=cfg.max_tokens, cameras=cams, width=cfg.width, heads=cfg.heads,
                     prefix_layers=cfg.prefix_layers, expert_layers=cfg.expert_layers, keypoints=cfg.keypoints, film=cfg.film,
                     aux_dim=len(aux_names) if cfg.aux_token else 0, aux_hidden=cfg.aux_hidden,
                     aux_only=cfg.aux_only)
    if init is not None:
        mcfg = init.cfg
    if cfg.aux_only and not mcfg.aux_dim:
        raise ValueError("--aux-only feeds the policy the position token alone: it needs --aux-token and --aux-names the data has")
    if aux_data and not mcfg.aux_dim:
        raise ValueError("--aux-dataset frames train the position token's head: drop --no-aux-token (the linear probe trains on imitated frames only)")
    state = data.obs[:, state_idx].astype(np.float64)
    act = data.action.astype(np.float64)
    names = [data.obs_names[i] for i in state_idx]
    # openpi's DeltaActions: a joint's chunk is predicted relative to the joint's measured position at the chunk's
    # first tick (the runtime adds it back: policy.json action.relative_to_state).
    absolute = {a.strip() for a in cfg.absolute_actions.split(",") if a.strip()}
    relative_to = [f"q.{a}" if cfg.delta_actions and a not in absolute and f"q.{a}" in names else None for a in data.action_names]
    ep_of_tick = np.repeat(np.arange(len(data.lengths)), data.lengths)  # (N,)
    starts = data.starts
    t_in_ep = np.arange(len(ep_of_tick)) - starts[ep_of_tick]
    # Action chunk of tick i: the commands of ticks i..i+H-1, the episode's last one repeated past its end.
    horizon = init.cfg.horizon if init is not None else cfg.horizon
    idx = starts[ep_of_tick][:, None] + np.minimum(t_in_ep[:, None] + np.arange(horizon)[None, :],
                                                   (data.lengths[ep_of_tick] - 1)[:, None])  # (N, H)
    chunks = act[idx]  # (N, H, A)
    for a, ref in enumerate(relative_to):
        if ref is not None:
            chunks[:, :, a] -= state[:, names.index(ref)][:, None]
    flat = chunks.reshape(-1, chunks.shape[-1])
    lo, hi = flat.min(0), flat.max(0)
    pad = np.maximum(1e-3 - (hi - lo), 0) / 2
    # A dimension the demos never vary (the expert's gripper command is always 0) is exported with min == max, so the
    # runtime replays the constant instead of +-pad around it (a negative gripper target would hit its joint limit).
    const = (hi - lo) < 1e-9
    norm = {"state": {"mean": state.mean(0), "std": np.maximum(state.std(0), cfg.state_std_floor)},
            "actions": {"min": np.where(const, lo, lo - pad), "max": np.where(const, hi, hi + pad)},
            "relative_to_state": relative_to}
    if base is not None:  # the package's normalisation; its action range widened to the data's (as RECAP does)
        if list(base.norm["relative_to_state"]) != relative_to:
            raise ValueError(f"the pre-trained package's delta actions {base.norm['relative_to_state']} differ from these options' "
                             f"{relative_to}: pass the --delta-actions / --absolute-actions it was trained with")
        b_lo, b_hi = base.norm["actions"]["min"], base.norm["actions"]["max"]
        norm = {"state": dict(base.norm["state"]), "relative_to_state": relative_to,
                "actions": {"min": np.minimum(b_lo, lo), "max": np.maximum(b_hi, hi)} if cfg.widen_actions else {"min": b_lo, "max": b_hi}}
    a_lo, a_hi = norm["actions"]["min"], norm["actions"]["max"]
    state_n = torch.from_numpy(((state - norm["state"]["mean"]) / norm["state"]["std"]).astype(np.float32))  # (N, S)
    # A constant dimension (min == max: the runtime replays it) is 0, the middle of [-1, 1], as the pad above makes it.
    span = a_hi - a_lo
    chunks_n = torch.from_numpy(np.where(span > 1e-9, np.clip(2 * (chunks - a_lo) / np.maximum(span, 1e-9) - 1, -1, 1), 0.0).astype(np.float32))
    images = _frames(data, cams)
    ep_ids, ep_mask = zip(*(tok.encode(s) for s in data.instructions))
    aux_n = aux_frames = None
    if aux_names:
        aux = data.obs[:, [data.obs_names.index(n) for n in aux_names]].astype(np.float64)
        mean, std = aux.mean(0), np.maximum(aux.std(0), 1e-3)
        if base is not None:
            mean, std = base.norm["aux"]["mean"], base.norm["aux"]["std"]
        aux_n = torch.from_numpy(((aux - mean) / std).astype(np.float32))
        norm["aux"] = {"names": aux_names, "mean": mean, "std": std}
        if aux_data:
            parts = []
            for extra in aux_data:
                missing = [n for n in aux_names if n not in extra.obs_names]
                if missing:
                    raise ValueError(f"an --aux-dataset lacks {', '.join(missing)}: record it with the same task")
                ids, mask = zip(*(tok.encode(s) for s in extra.instructions))
                ep = torch.from_numpy(np.repeat(np.arange(len(extra.lengths)), extra.lengths))
                target = extra.obs[:, [extra.obs_names.index(n) for n in aux_names]].astype(np.float64)
                parts.append({"images": _frames(extra, cams), "aux": torch.from_numpy(((target - mean) / std).astype(np.float32)),
                              "ids": torch.tensor(ids, dtype=torch.int64)[ep], "mask": torch.tensor(mask, dtype=torch.int64)[ep]})
            aux_frames = {"images": [torch.cat([p["images"][c] for p in parts]) for c in range(len(cams))],
                          **{k: torch.cat([p[k] for p in parts]) for k in ("aux", "ids", "mask")}}
    tensors = {"state": state_n, "images": images, "chunks": chunks_n, "aux": aux_n, "aux_frames": aux_frames,  # (N, H, A)
               "ids": torch.tensor(ep_ids, dtype=torch.int64)[torch.from_numpy(ep_of_tick)],  # (N, L)
               "mask": torch.tensor(ep_mask, dtype=torch.int64)[torch.from_numpy(ep_of_tick)], "init": init}
    if indicator is not None:
        variants = [[tok.encode(s if k < 0 else f"{s} {SUFFIX[k]}")[0] for s in data.instructions] for k in (-1, 0, 1)]
        tensors["ids_by_indicator"] = torch.tensor(variants, dtype=torch.int64)[:, torch.from_numpy(ep_of_tick)]  # (3, N, L)
        tensors["mask_by_indicator"] = (tensors["ids_by_indicator"] != tok.pad_id).long()  # (3, N, L)
        tensors["indicator"] = torch.from_numpy(np.asarray(indicator, np.int64))  # (N,)
    return tok, mcfg, norm, tensors, names


def train(cfg: Config, mcfg: VlaConfig, tensors: dict, emit) -> tuple[TinyVla, list[float]]:
    torch.manual_seed(cfg.seed)
    model = TinyVla(mcfg)
    if tensors.get("init") is not None:
        model.load_state_dict(tensors["init"].state_dict())
    ema = TinyVla(mcfg)
    ema.load_state_dict(model.state_dict())
    ema.requires_grad_(False)
    aux, extra = tensors.get("aux"), tensors.get("aux_frames")
    # Without the position token: a linear probe on the pooled prefix; trained with the model, never exported.
    aux_head = torch.nn.Linear(mcfg.width, aux.shape[1]) if aux is not None and mcfg.aux_dim == 0 else None
    params = list(model.parameters()) + (list(aux_head.parameters()) if aux_head is not None else [])
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: cosine_lr(s, cfg.steps, cfg.warmup_steps))
    gen = torch.Generator().manual_seed(cfg.seed)
    beta = torch.distributions.Beta(torch.tensor(1.5), torch.tensor(1.0))
    n = len(tensors["state"])
    log.info("training on %d ticks, %d params", n, sum(p.numel() for p in model.parameters()))
    losses, t0 = [], time.perf_counter()
    guard = StepGuard("train-vla")
    for step in range(cfg.steps):
        idx = torch.randint(0, n, (cfg.batch_size,), generator=gen)
        imgs = [random_shift(x[idx], cfg.shift, gen) for x in tensors["images"]]
        a = tensors["chunks"][idx]  # (B, H, A)
        noise = torch.randn(a.shape, generator=gen)
        # pi0: t ~ Beta(1.5, 1) on (0.001, 1], more weight on the noisy end.
        t = 0.001 + 0.999 * beta.sample((cfg.batch_size,))  # (B,)
        x_t = t[:, None, None] * noise + (1 - t[:, None, None]) * a
        token_noise = (cfg.aux_noise * torch.randn((cfg.batch_size, mcfg.aux_dim), generator=gen)) if mcfg.aux_dim and cfg.aux_noise > 0 else None
        ids, mask = tensors["ids"][idx], tensors["mask"][idx]
        if "indicator" in tensors:  # RECAP: the tick's indicator as an instruction suffix, left out cfg.indicator_dropout of the time
            dropped = torch.rand(cfg.batch_size, generator=gen) < cfg.indicator_dropout
            k = torch.where(dropped, torch.zeros_like(idx), 1 + tensors["indicator"][idx])  # 0 none, 1 negative, 2 positive
            ids, mask = tensors["ids_by_indicator"][k, idx], tensors["mask_by_indicator"][k, idx]
        prefix, pmask, est = model.prefix.with_estimates(tensors["state"][idx], ids, mask, *imgs, token_noise=token_noise)
        loss = F.mse_loss(model.expert(x_t, t, prefix, pmask), noise - a)
        total = loss
        if est is not None:  # the position token's head
            aux_loss = F.mse_loss(est, aux[idx])
            if extra is not None:  # frames that are never imitated train the head too
                j = torch.randint(0, len(extra["aux"]), (cfg.aux_batch,), generator=gen)
                e_imgs = [random_shift(x[j], cfg.shift, gen) for x in extra["images"]]
                aux_loss = 0.5 * (aux_loss + F.mse_loss(model.prefix.estimates(extra["ids"][j], extra["mask"][j], *e_imgs), extra["aux"][j]))
            total = loss + cfg.aux_weight * aux_loss
        elif aux_head is not None:
            pooled = (prefix * pmask[:, :, None]).sum(1) / pmask.sum(1, keepdim=True)  # (B, D)
            aux_loss = F.mse_loss(aux_head(pooled), aux[idx])
            total = loss + cfg.aux_weight * aux_loss
        guard.step("flow", total, opt, params, 1.0)
        sched.step()
        decay = min(cfg.ema_decay, (1 + step) / (10 + step))
        with torch.no_grad():
            for pe, p in zip(ema.parameters(), model.parameters()):
                pe.mul_(decay).add_(p.detach(), alpha=1 - decay)
        losses.append(loss.item())
        if (step + 1) % cfg.log_every == 0 or step + 1 == cfg.steps:
            emit({"step": step + 1, "total": cfg.steps, "losses/flow": float(np.mean(finite_values(losses[-cfg.log_every:]))),
                  **({"losses/aux": float(aux_loss.item())} if aux is not None else {}),
                  "charts/SPS": (step + 1) / (time.perf_counter() - t0)})
    return ema.eval(), losses


def run(cfg: Config) -> dict:
    started = time.perf_counter()
    torch.set_num_threads(cfg.threads)
    if cfg.synthetic:
        data, vocabulary = synthetic_vla_dataset(seed=cfg.seed), []
    elif cfg.dataset:
        data = load_vla_dataset(cfg.dataset)
        with open(os.path.join(cfg.dataset, "meta.json"), encoding="utf-8") as f:
            vocabulary = list(json.load(f).get("vocabulary", []))
    else:
        raise ValueError("pass --dataset DIR (written by `rlft train-vla`) or --synthetic")
    aux_data = [load_vla_dataset(d) for d in cfg.aux_dataset.split(",") if d] if cfg.aux_dataset else []
    if cfg.recap_dataset and not cfg.pretrained:
        raise ValueError("--recap-dataset fine-tunes a VLA on its own episodes: pass the package it ran as --pretrained")
    if cfg.recap_plain and not cfg.recap_dataset:
        raise ValueError("--recap-plain is the baseline of a RECAP fine-tune: pass --recap-dataset (and --pretrained) too")
    base = load_vla_package(cfg.pretrained) if cfg.pretrained else None
    device = torch.device("cpu")
    indicator, recap_stats = None, None
    if cfg.recap_dataset:
        data = concat_datasets([data] + [load_vla_dataset(d) for d in cfg.recap_dataset.split(",") if d])
        if not cfg.recap_plain:
            indicator, recap_stats = label(data, cfg.n_step, cfg.positive_fraction,
                                           ValueConfig(steps=cfg.value_steps, seed=cfg.seed), device,
                                           lambda m: log.info("value step %d/%d  cross-entropy %.4f", m["step"], m["total"], m["losses/value_ce"])
                                           if m["step"] % (5 * cfg.log_every) == 0 else None, cfg.log_every)
            log.info("RECAP labels: %d episodes (%d successful), %d operator ticks, %.0f%% of ticks positive (%.0f%% of those the operator did not command)",
                     recap_stats["episodes"], recap_stats["successes"], recap_stats["operator_ticks"],
                     100 * recap_stats["positive_fraction"], 100 * recap_stats["positive_fraction_not_operator"])
    if base is not None:
        log.info("fine-tuning %s: its network shape, tokenizer, cameras, normalisation, flow steps (%d) and execute steps (%d) are "
                 "kept; --width, --heads, --*-layers, --crop, --image-*, --max-tokens, --aux-names, --flow-steps and --execute-steps are not read",
                 base.path, base.flow_steps, base.execute_steps)
    tok, mcfg, norm, tensors, state_names = prepare(cfg, data, vocabulary, aux_data, base, indicator)
    data.images = {}  # prepare() holds the frames it trains on; a concatenated copy (RECAP) would stay in RAM otherwise
    if mcfg.aux_dim:
        extra = tensors["aux_frames"]
        log.info("position token: %s estimated from the cameras on %d imitated frames%s", ", ".join(norm["aux"]["names"]),
                 len(tensors["aux"]), f" and {len(extra['aux'])} --aux-dataset frames" if extra is not None else "")
    os.makedirs(cfg.out, exist_ok=True)

    def emit(m: dict) -> None:
        metrics.write(json.dumps(m) + "\n")
        metrics.flush()
        if cfg.json_progress:
            print(json.dumps({"event": "progress", "step": m["step"], "total": m["total"], "loss": m["losses/flow"]}), flush=True)
        else:
            aux_txt = f"  losses/aux {m['losses/aux']:.4f}" if "losses/aux" in m else ""
            print(f"step {m['step']:>6}/{m['total']}  losses/flow {m['losses/flow']:.4f}{aux_txt}  charts/SPS {m['charts/SPS']:.1f}", flush=True)

    with open(os.path.join(cfg.out, "metrics.jsonl"), "w") as metrics:
        model, losses = train(cfg, mcfg, tensors, emit)
    package = os.path.join(cfg.out, "package")
    meta = {"task": data.task, "state_names": state_names, "action_names": data.action_names,
            "episodes": len(data.lengths), "instructions": data.instructions[:2]}
    if base is not None:
        meta["pretrained"] = os.path.abspath(base.path)
    if recap_stats is not None:
        meta["recap"] = recap_stats
    flow_steps, execute_steps = (base.flow_steps, base.execute_steps) if base is not None else (cfg.flow_steps, cfg.execute_steps)
    export_vla_package(model, tok, norm, meta, package, flow_steps=flow_steps, execute_steps=execute_steps, seed=cfg.seed,
                       template=TEMPLATE if indicator is not None else None)
    with open(os.path.join(cfg.out, "config.json"), "w") as f:
        json.dump(asdict(cfg), f, indent=2)
    if recap_stats is not None:
        with open(os.path.join(cfg.out, "recap.json"), "w") as f:
            json.dump(recap_stats, f, indent=2)
    done = {"event": "done", "package": os.path.abspath(package), "final_loss": float(np.mean(finite_values(losses[-cfg.log_every:]))),
            "steps": cfg.steps, "episodes": int(len(data.lengths)), "seconds": round(time.perf_counter() - started, 2)}
    print(json.dumps(done) if cfg.json_progress else f"done: package {done['package']}  final loss {done['final_loss']:.4f}  ({done['seconds']} s)", flush=True)
    return done
