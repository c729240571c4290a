"""Diagnosis of bench:pixels: do the camera features know where the cube and the target are?

Fits a ridge-regression probe from a pixel package's camera features (its frozen encoders on the frames of TRAIN_DIR)
to the privileged cube.x, cube.y, target.x, target.y the simulator recorded, and reports R^2 on the frames of
EVAL_DIR (held-out seeds), for the trained encoders and for the same architecture with random weights. Per camera and
both together. Dirs from bench/pixdiag/dump.ts.

Usage: python bench/pixdiag/probe.py PACKAGE TRAIN_DIR EVAL_DIR [FIRST]
       FIRST: only the first FIRST ticks of each episode (the approach, before the gripper reaches the cube)
       python bench/pixdiag/probe.py - TRAIN_DIR EVAL_DIR   (random encoders only, shaped like the default pixel BC's
       for the frames' sizes: compares cameras without training a policy)
"""
import json
import sys

import numpy as np
import torch

from rlft_learner.vision import CameraEncoders, EncoderConfig

if len(sys.argv) not in (4, 5):
    sys.exit("usage: probe.py PACKAGE|- TRAIN_DIR EVAL_DIR [FIRST] (dirs from bench/pixdiag/dump.ts)")
pkg, td, ed = sys.argv[1:4]
first = int(sys.argv[4]) if len(sys.argv) == 5 else None
if pkg == "-":
    cams = ["front", "wrist"]
    cfgs = [EncoderConfig(height=s[1], width=s[2]) for s in (np.load(f"{td}/image.{c}.npy", mmap_mode="r").shape for c in cams)]
    trained = None
else:
    ck = torch.load(f"{pkg}/model.pt", weights_only=True)
    cams = ck["cameras"]
    cfgs = [EncoderConfig(**c) for c in ck["encoder_configs"]]
    trained = CameraEncoders.from_spec(ck).eval()
    trained.load_state_dict(ck["encoders_state_dict"])
torch.manual_seed(0)
random = CameraEncoders(cams, cfgs).eval()
WANT = ["cube.x", "cube.y", "target.x", "target.y"]


def load(d, enc):
    names = json.load(open(f"{d}/names_full.json"))
    lengths = np.load(f"{d}/lengths.npy")
    tick = np.concatenate([np.arange(n) for n in lengths])  # (N,) tick within its episode
    keep = tick < first if first is not None else np.ones(len(tick), bool)
    y = np.load(f"{d}/obsfull.npy")[keep][:, [names.index(n) for n in WANT]]
    imgs = [np.load(f"{d}/image.{c}.npy")[keep] for c in cams]
    with torch.no_grad():
        per = [torch.cat([e(torch.from_numpy(im[i:i + 256])) for i in range(0, len(im), 256)]).numpy()
               for e, im in zip(enc.encoders, imgs)]
        if enc.aux_head is not None:  # the position head's estimates (train-bc aux_targets), read by the probe too
            per.append(enc.aux_head(torch.from_numpy(np.concatenate(per, 1))).numpy())
    return per, y


def r2(xtr, ytr, xte, yte, lam=1e-2):
    mu, sd = xtr.mean(0), xtr.std(0) + 1e-6
    a, b = (xtr - mu) / sd, (xte - mu) / sd
    a, b = np.c_[a, np.ones(len(a))], np.c_[b, np.ones(len(b))]
    w = np.linalg.solve(a.T @ a + lam * len(a) * np.eye(a.shape[1]), a.T @ ytr)
    return 1 - ((b @ w - yte) ** 2).sum(0) / ((yte - yte.mean(0)) ** 2).sum(0)


print(f"R^2 of a linear probe on held-out frames{f' (first {first} ticks of each episode)' if first else ''}, columns {WANT}")
for label, enc in (("trained encoders", trained), ("random encoders", random)):
    if enc is None:
        continue
    (ftr, ytr), (fte, yte) = load(td, enc), load(ed, enc)
    names = [*cams, *(["aux head"] if len(ftr) > len(cams) else [])]
    for name, a, b in [*((c, ftr[i], fte[i]) for i, c in enumerate(names)), ("both", np.concatenate(ftr, 1), np.concatenate(fte, 1))]:
        print(f"  {label:16s} {name:6s}: {np.round(r2(a, ytr, b, yte), 2).tolist()}")
