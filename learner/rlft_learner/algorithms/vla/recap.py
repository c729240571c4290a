"""RECAP for the tiny VLA: advantage-conditioned fine-tuning on the policy's own supervised episodes (pi*0.6,
Physical Intelligence 2025, arXiv 2511.14759; docs/algorithms.md §6 "RECAP on the tiny VLA").

pi*0.6 conditions its VLA on the advantage indicator as text in the prompt ("Advantage: positive"). The tiny VLA does
the same: every training tick's instruction gets the suffix `advantage positive` or `advantage negative` (its
indicator), or none (dropped, 30%: the unconditioned policy), and the exported package's prompt template appends
`advantage positive` to every instruction (policy.json `language.template`), so the robot's runtime, `rlft eval` and
`rlft session` run it unchanged. No classifier-free guidance: it would need two action-expert passes per Euler step.

The labels come from the diffusion-policy RECAP (algorithms/recap): a distributional value function over normalised
Monte-Carlo returns (-1 per step, failure = C_fail), N-step advantages, the per-task percentile that makes
`positive_fraction` of the policy's own steps positive, and the operator's steps of successful episodes forced
positive. The value is a training-time critic: it reads the simulator's observation (object positions included) and
the instruction, never the robot (an asymmetric critic, Pinto et al. 2018, arXiv 1710.06542); the policy keeps
reading cameras, instruction and joints only.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass

import numpy as np
import torch

from ..recap.train import indicators, nstep_advantages
from ..recap.value import ValueConfig, episode_rewards, normalised_returns, predict, train_value
from .data import VlaDataset
from .model import TinyVla, VlaConfig
from .tokenizer import WordLevelTokenizer, words

log = logging.getLogger("rlft_learner.vla_recap")

#: Instruction suffix per indicator (0 = negative, 1 = positive); the package's template appends the positive one.
SUFFIX = {0: "advantage negative", 1: "advantage positive"}
TEMPLATE = "{instruction} " + SUFFIX[1]


@dataclass
class BaseVla:
    """A VLA package to fine-tune from: its network, tokenizer and normalisation (norm as train.prepare builds it)."""

    path: str
    model: TinyVla
    tok: WordLevelTokenizer
    norm: dict
    state_names: list[str]
    flow_steps: int = 10
    execute_steps: int = 8


def load_vla_package(path: str) -> BaseVla:
    """model.pt + tokenizer.json + norm_stats.json + policy.json of a package `train-vla` wrote; errors name the fix."""
    files = {f: os.path.join(path, f) for f in ("policy.json", "model.pt", "tokenizer.json", "norm_stats.json")}
    for name, f in files.items():
        if not os.path.isfile(f):
            raise ValueError(f"pre-trained VLA package {path}: missing {name} — pass --pretrained a package written by train-vla")
    policy = json.load(open(files["policy.json"], encoding="utf-8"))
    if policy.get("kind") != "vla":
        raise ValueError(f"pre-trained package {path} is kind {policy.get('kind')!r}, not a VLA — pass a package written by train-vla")
    if policy.get("language", {}).get("template"):
        raise ValueError(f"pre-trained package {path} already has a prompt template ({policy['language']['template']!r}): "
                         f"fine-tune from the BC package it came from (a RECAP package conditions on its template)")
    ckpt = torch.load(files["model.pt"], map_location="cpu")
    model = TinyVla(VlaConfig.from_dict(ckpt["config"]))
    model.load_state_dict(ckpt["state_dict"])
    stats = json.load(open(files["norm_stats.json"], encoding="utf-8"))["norm_stats"]
    arr = lambda v: np.asarray(v, np.float64)  # noqa: E731
    norm = {"state": {"mean": arr(stats["state"]["mean"]), "std": arr(stats["state"]["std"])},
            "actions": {"min": arr(stats["actions"]["min"]), "max": arr(stats["actions"]["max"])},
            "relative_to_state": list(policy["action"].get("relative_to_state") or [None] * len(policy["action"]["names"]))}
    if "aux" in ckpt:
        norm["aux"] = {"names": list(ckpt["aux"]["names"]), "mean": arr(ckpt["aux"]["mean"]), "std": arr(ckpt["aux"]["std"])}
    return BaseVla(path=path, model=model, tok=WordLevelTokenizer.load(files["tokenizer.json"]), norm=norm,
                   state_names=list(policy["state"]["names"]), flow_steps=int(policy["flow"]["steps"]),
                   execute_steps=int(policy["action"]["execute_steps"]))


def extend_vocabulary(base: BaseVla, texts: list[str], seed: int = 0) -> tuple[WordLevelTokenizer, TinyVla]:
    """The base tokenizer with the words of `texts` it lacks appended (existing ids unchanged), and a copy of the
    network whose word embedding has a row for each, drawn like the existing rows (zero rows would make
    `positive` and `negative` the same token)."""
    vocab = dict(base.tok.vocab)
    for w in sorted({w for t in texts for w in words(t)} - set(vocab)):
        vocab[w] = len(vocab)
    tok = WordLevelTokenizer(vocab=vocab, max_length=base.tok.max_length)
    cfg = VlaConfig.from_dict({**base.model.cfg.to_dict(), "vocab_size": len(vocab)})
    model = TinyVla(cfg)
    state = {k: v.clone() for k, v in base.model.state_dict().items()}
    old = state["prefix.embed.weight"]  # (V_old, D)
    gen = torch.Generator().manual_seed(seed)
    new = torch.randn(len(vocab) - old.shape[0], old.shape[1], generator=gen) * old.std()
    state["prefix.embed.weight"] = torch.cat([old, new])
    model.load_state_dict(state)
    return tok, model


def concat_datasets(parts: list[VlaDataset]) -> VlaDataset:
    """Episodes of several datasets back to back (same names, cameras and frame sizes; checked)."""
    first = parts[0]
    for p in parts[1:]:
        if p.obs_names != first.obs_names or p.action_names != first.action_names:
            raise ValueError("the demos and the RECAP episodes have different observation or action names: record them with the same task and robot")
        if sorted(p.images) != sorted(first.images) or any(p.images[c].shape[1:] != first.images[c].shape[1:] for c in first.images):
            raise ValueError("the demos and the RECAP episodes have different cameras or frame sizes: record them with the same launch file")
    ok = lambda d: d.success or [True] * len(d.lengths)  # noqa: E731
    return VlaDataset(obs=np.concatenate([p.obs for p in parts]), action=np.concatenate([p.action for p in parts]),
                      images={c: np.concatenate([np.asarray(p.images[c]) for p in parts]) for c in first.images},
                      lengths=np.concatenate([p.lengths for p in parts]), instructions=sum((p.instructions for p in parts), []),
                      obs_names=first.obs_names, action_names=first.action_names, task=first.task,
                      success=sum((ok(p) for p in parts), []), sources=sum((p.sources or [""] * len(p.lengths) for p in parts), []),
                      intervention=np.concatenate([p.intervention if p.intervention is not None else np.zeros(int(p.lengths.sum()), np.uint8)
                                                   for p in parts]))


def label(data: VlaDataset, n_step: int, positive_fraction: float, value: ValueConfig, device: torch.device,
          emit=lambda m: None, log_every: int = 100) -> tuple[np.ndarray, dict]:
    """Per tick indicator (N,) int64 (1 positive, 0 negative) and statistics, RECAP's way (module docstring)."""
    lengths = data.lengths.astype(int)
    success = data.success or [True] * len(lengths)
    t_max = int(lengths.max())
    rets = [normalised_returns(episode_rewards(n, s, t_max), t_max) for n, s in zip(lengths, success)]
    rewards = [episode_rewards(n, s, t_max) / t_max for n, s in zip(lengths, success)]
    # The critic's input: the whole simulator observation (normalised) and the instruction (one-hot).
    mean, std = data.obs.mean(0), np.maximum(data.obs.std(0), 1e-3)
    texts = sorted(set(data.instructions))
    onehot = np.zeros((len(data.obs), len(texts)), np.float32)
    ep = np.repeat(np.arange(len(lengths)), lengths)
    onehot[np.arange(len(ep)), [texts.index(data.instructions[e]) for e in ep]] = 1.0
    x = np.concatenate([((data.obs - mean) / std).astype(np.float32), onehot], 1)
    vnet, vlosses = train_value(x, np.concatenate(rets), value, device, emit, log_every)
    v = predict(vnet, x, device)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    adv = np.concatenate([nstep_advantages(r, v[s:s + n], n_step, g) for r, s, n, g in zip(rewards, starts, lengths, rets)])
    operator = data.intervention if data.intervention is not None else np.zeros(len(ep), np.uint8)
    forced = operator.astype(bool) & np.asarray(success)[ep]  # the operator's steps of successful episodes
    ind, thresholds = indicators(adv, operator, np.full(len(ep), data.task), positive_fraction, forced)
    g = np.concatenate(rets)
    stats = {"episodes": int(len(lengths)), "successes": int(sum(success)), "ticks": int(len(ep)),
             "operator_ticks": int(operator.sum()), "forced_positive_ticks": int(forced.sum()), "t_max": t_max,
             "n_step": n_step, "positive_fraction_target": positive_fraction, "thresholds": thresholds,
             "positive_fraction": float(ind.mean()),
             # Over the ticks the operator did not command (the demos' and the policy's own): where the percentile is set.
             "positive_fraction_not_operator": float(ind[operator == 0].mean()) if (operator == 0).any() else 0.0,
             "value": {"final_ce": float(np.mean(vlosses[-log_every:])), "mae": float(np.abs(v - g).mean()),
                       "input": "simulator observation + instruction (training-time critic)"}}
    return ind, stats
