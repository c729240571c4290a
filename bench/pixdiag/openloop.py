"""Open-loop check of a pixel BC package on recorded demos (diagnosis of bench:pixels).

For windows of the demos in DIR (written by bench/pixdiag/dump.ts), runs the package's PyTorch model (model.pt) with
the recorded joints history + frames and reports the error of the first `execute_steps` actions of the predicted chunk
against the demo's actions (rad, mean over joints and steps), with:
  real      the frames the tick was recorded with
  shuffled  frames from another episode at the same relative time (same state): does the policy use the images?
  blank     mid-grey frames
and for the first windows the max |PyTorch - onnxruntime| of sampler.onnx on the same recorded inputs.

Usage: python bench/pixdiag/openloop.py PACKAGE DIR [windows] [vectors.json: write 16 recorded test vectors]
"""
import json
import sys

import numpy as np
import torch

from rlft_learner.algorithms.bc.diffusion import DDIMSampler, ModelConfig, NoisePredictionNet, PixelSampler
from rlft_learner.vision import CameraEncoders

pkg, d = sys.argv[1], sys.argv[2]
nwin = int(sys.argv[3]) if len(sys.argv) > 3 else 400
pj = json.load(open(f"{pkg}/policy.json"))
ck = torch.load(f"{pkg}/model.pt", weights_only=True)
net = NoisePredictionNet(ModelConfig(**ck["config"])).eval()
net.load_state_dict(ck["state_dict"])
sampler = DDIMSampler(net, ck["alphas_cumprod"].numpy(), ck["timesteps"]).eval()
cams = ck.get("cameras", [])
if cams:
    enc = CameraEncoders.from_spec(ck).eval()
    enc.load_state_dict(ck["encoders_state_dict"])
    pix = PixelSampler(enc, sampler).eval()
else:  # a state policy (the privileged reference): no frames, the whole observation
    def pix(o, *rest):
        return sampler(o, rest[-1])
mean, std = np.array(pj["observation"]["mean"], np.float32), np.array(pj["observation"]["std"], np.float32)
amin, amax = np.array(pj["action"]["min"], np.float32), np.array(pj["action"]["max"], np.float32)
H, E, hist = pj["action"]["horizon"], pj["action"]["execute_steps"], pj["observation"]["history"]

obs, act = np.load(f"{d}/obs.npy" if cams else f"{d}/obsfull.npy"), np.load(f"{d}/action.npy")
if not cams:
    assert json.load(open(f"{d}/names_full.json")) == pj["observation"]["names"], "the state package's observation names differ from the dump's"
L = np.load(f"{d}/lengths.npy")
starts = np.concatenate([[0], np.cumsum(L)[:-1]])
imgs = {c: np.load(f"{d}/image.{c}.npy") for c in cams}
rng = np.random.default_rng(0)
ep = rng.integers(0, len(L), nwin)
rel = rng.random(nwin)
t = (rel * L[ep]).astype(int)
other = (ep + rng.integers(1, len(L), nwin)) % len(L)
t_other = np.minimum((rel * L[other]).astype(int), L[other] - 1)


def window_obs():
    idx = starts[ep][:, None] + np.clip(t[:, None] + np.arange(-hist + 1, 1)[None], 0, L[ep][:, None] - 1)  # (N, hist)
    return torch.from_numpy(((obs[idx] - mean) / std).reshape(nwin, -1).astype(np.float32))


def target():
    idx = starts[ep][:, None] + np.clip(t[:, None] + np.arange(E)[None], 0, L[ep][:, None] - 1)  # (N, E)
    return act[idx]  # (N, E, A)


o = window_obs()
noise = torch.from_numpy(rng.standard_normal((nwin, H, len(amin))).astype(np.float32))
real = [torch.from_numpy(imgs[c][starts[ep] + t]) for c in cams]
variants = {} if not cams else {
    "real": real,
    "shuffled": [torch.from_numpy(imgs[c][starts[other] + t_other]) for c in cams],
    "blank": [torch.full_like(r, 128) for r in real],
}
tgt = target()
# What a policy that never moves would score (hold the current joints), for scale.
hold = np.abs(obs[starts[ep] + t][:, None, :6] - tgt).mean()
print(f"{d}: {nwin} windows from {len(L)} episodes; 'hold still' baseline error {hold:.4f} rad")
res = {}
if not cams:
    variants = {"none (state)": []}
with torch.no_grad():
    for name, im in variants.items():
        a = pix(o, *im, noise).numpy()  # (N, H, A) normalised
        a = amin + (a + 1) / 2 * (amax - amin)
        err = np.abs(a[:, :E] - tgt)  # (N, E, A)
        res[name] = err.mean()
        first = np.abs(a[:, 0] - tgt[:, 0]).mean()
        jit = np.abs(np.diff(a[:, :E], axis=1)).max(-1).mean()
        print(f"  frames {name:9s}: mean |a - demo| over {E} steps {err.mean():.4f} rad (first step {first:.4f}; per-joint {np.round(err.mean((0, 1)), 3).tolist()}); mean max step-to-step change in the chunk {jit:.3f} rad")
    demo_jit = np.abs(np.diff(tgt, axis=1)).max(-1).mean()
    print(f"  demo chunks: mean max step-to-step change {demo_jit:.3f} rad")
    try:
        if not cams:
            raise SystemExit(0)  # the state reference: nothing more to compare
        import onnxruntime as ort
        s = ort.InferenceSession(f"{pkg}/sampler.onnx", providers=["CPUExecutionProvider"])
        k = min(16, nwin)
        if len(sys.argv) > 4:  # recorded test vectors for the onnxruntime-node side (bench/pixdiag/tsfeed.ts)
            with torch.no_grad():
                ref = pix(o[:k], *[r[:k] for r in real], noise[:k]).numpy()
            json.dump({"obs": o[:k].tolist(), "noise": noise[:k].tolist(), "action": ref.tolist(),
                       "images": {c: r[:k].numpy().tolist() for c, r in zip(cams, real)}}, open(sys.argv[4], "w"))
        feeds = {"obs": o[:k].numpy(), "noise": noise[:k].numpy(), **{f"image.{c}": r[:k].numpy() for c, r in zip(ck["cameras"], real)}}
        onnx_a = s.run(None, feeds)[0]
        torch_a = pix(o[:k], *[r[:k] for r in real], noise[:k]).numpy()
        print(f"  onnxruntime vs PyTorch on {k} recorded windows: max |diff| {np.abs(onnx_a - torch_a).max():.2e} (normalised actions)")
    except ImportError:
        print("  (no onnxruntime in this Python: skipped the ONNX comparison)")
