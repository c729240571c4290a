"""Diagnosis of bench:pixels: is the denoiser or the image encoder the bottleneck?

Takes a pixel BC package, freezes its camera encoders, precomputes their features on every demo frame (DIR, written by
bench/pixdiag/dump.ts), and continues training only the noise-prediction MLP on [joints history, features] with batch
256 for STEPS steps (cheap: no convolution per step). Then reports the open-loop error and chunk jitter on the demo
windows of EVAL_DIR, as bench/pixdiag/openloop.py does, before and after. If the error falls far below the package's,
the encoder's features already carry what the task needs and the denoiser was undertrained.

Usage: python bench/pixdiag/denoiser_only.py PACKAGE DIR EVAL_DIR [steps]
"""
import copy
import json
import sys

import numpy as np
import torch
import torch.nn.functional as F

from rlft_learner.algorithms.bc.diffusion import DDIMSampler, ModelConfig, NoisePredictionNet, add_noise
from rlft_learner.vision import CameraEncoders

pkg, d, ed = sys.argv[1:4]
steps = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
torch.manual_seed(0)
torch.set_num_threads(1)
pj = json.load(open(f"{pkg}/policy.json"))
ck = torch.load(f"{pkg}/model.pt", weights_only=True)
net = NoisePredictionNet(ModelConfig(**ck["config"])).eval()
net.load_state_dict(ck["state_dict"])
enc = CameraEncoders.from_spec(ck).eval()
enc.load_state_dict(ck["encoders_state_dict"])
mean, std = np.array(pj["observation"]["mean"], np.float32), np.array(pj["observation"]["std"], np.float32)
amin, amax = np.array(pj["action"]["min"], np.float32), np.array(pj["action"]["max"], np.float32)
H, E, hist = pj["action"]["horizon"], pj["action"]["execute_steps"], pj["observation"]["history"]
ac = ck["alphas_cumprod"]


def load(dd):
    obs, act, L = np.load(f"{dd}/obs.npy"), np.load(f"{dd}/action.npy"), np.load(f"{dd}/lengths.npy")
    s = np.concatenate([[0], np.cumsum(L)[:-1]])
    ep = np.repeat(np.arange(len(L)), L)
    t = np.concatenate([np.arange(n) for n in L])
    oi = s[ep][:, None] + np.clip(t[:, None] + np.arange(-hist + 1, 1)[None], 0, L[ep][:, None] - 1)
    ai = s[ep][:, None] + np.clip(t[:, None] + np.arange(H)[None], 0, L[ep][:, None] - 1)
    o = torch.from_numpy(((obs[oi] - mean) / std).reshape(len(t), -1).astype(np.float32))
    a = torch.from_numpy((2 * (act[ai] - amin) / (amax - amin) - 1).astype(np.float32))
    with torch.no_grad():
        feats = torch.cat([enc(*[torch.from_numpy(np.load(f"{dd}/image.{c}.npy")[i:i + 256]) for c in ck["cameras"]])
                           for i in range(0, len(t), 256)])
    return torch.cat([o, feats], 1), a, act[ai]


cond, a_norm, _ = load(d)
econd, _, eact = load(ed)


def report(name, model):
    with torch.no_grad():
        g = torch.Generator().manual_seed(0)
        idx = torch.randperm(len(econd), generator=g)[:400]
        x = DDIMSampler(model, ac.numpy(), ck["timesteps"])(econd[idx], torch.randn(len(idx), H, len(amin), generator=g)).numpy()
    x = amin + (x + 1) / 2 * (amax - amin)
    tgt = eact[idx.numpy()][:, :E]
    print(f"  {name}: open-loop |a - demo| {np.abs(x[:, :E] - tgt).mean():.4f} rad, chunk jitter {np.abs(np.diff(x[:, :E], axis=1)).max(-1).mean():.3f} rad "
          f"(demo {np.abs(np.diff(tgt, axis=1)).max(-1).mean():.3f})", flush=True)


print(f"{pkg}: frozen encoder, denoiser-only training on {len(cond)} windows; eval on {ed}")
report("package as trained", net)
model = copy.deepcopy(net).train()
ema = copy.deepcopy(net)
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=1e-6)
for s in range(steps):
    i = torch.randint(0, len(cond), (256,))
    noise = torch.randn(256, H, len(amin))
    t = torch.randint(0, len(ac), (256,))
    loss = F.mse_loss(model(cond[i], add_noise(a_norm[i], noise, t, ac), t), noise)
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        for pe, p in zip(ema.parameters(), model.parameters()):
            pe.mul_(0.995).add_(p, alpha=0.005)
    if (s + 1) % 1000 == 0:
        print(f"  step {s + 1}: loss {loss.item():.4f}", flush=True)
        report(f"after {s + 1} denoiser-only steps (EMA)", ema.eval())
        ema.train()
