"""Diagnosis of pixel BC with a position head (train-bc aux_targets): how well does the head estimate the sim-only
positions on frames it was trained on, on held-out demos, and on the policy's own rollouts (where the arm goes where
no demo went)?

The head's outputs are normalised estimates; an affine map fitted on TRAIN_DIR's frames turns them back into metres
(the same map for every other set), so the error is the head's, in centimetres. Dirs from bench/pixdiag/dump.ts.

Usage: python bench/pixdiag/estimates.py PACKAGE TRAIN_DIR OTHER_DIR [OTHER_DIR ...]
Prints, per set: RMSE (cm) of each target over all frames and over the first 8 ticks of each episode (the approach,
when the policy must find the cube), and R^2.
"""
import json
import sys

import numpy as np
import torch

from rlft_learner.algorithms.pixels.nets import load_base_encoders

if len(sys.argv) < 4:
    sys.exit("usage: estimates.py PACKAGE TRAIN_DIR OTHER_DIR [OTHER_DIR ...] (dirs from bench/pixdiag/dump.ts)")
enc = load_base_encoders(sys.argv[1])
if enc.aux_head is None:
    sys.exit(f"{sys.argv[1]}: this package has no position head (train it with rlft train-bc --aux ...)")
cfg = json.load(open(f"{sys.argv[1]}/../config.json"))
names = [n.strip() for n in cfg["aux_targets"].split(",")]


def load(d):
    full = json.load(open(f"{d}/names_full.json"))
    lengths = np.load(f"{d}/lengths.npy")
    tick = np.concatenate([np.arange(n) for n in lengths])
    y = np.load(f"{d}/obsfull.npy")[:, [full.index(n) for n in names]]
    imgs = [np.load(f"{d}/image.{c}.npy") for c in enc.cameras]
    with torch.no_grad():
        est = torch.cat([enc(*(torch.from_numpy(im[i:i + 256]) for im in imgs))[:, -enc.aux_dim:]
                         for i in range(0, len(y), 256)]).numpy()
    return est, y, tick


est, y, _ = load(sys.argv[2])
a = np.c_[est, np.ones(len(est))]
w = np.linalg.lstsq(a, y, rcond=None)[0]  # (k+1, k): normalised estimates -> metres
print(f"position head of {sys.argv[1]}: {', '.join(names)}; RMSE in cm (all frames | first 8 ticks), R^2 all frames")
for d in sys.argv[2:]:
    est, y, tick = load(d)
    pred = np.c_[est, np.ones(len(est))] @ w
    err = pred - y
    rmse = np.sqrt((err ** 2).mean(0)) * 100
    early = np.sqrt((err[tick < 8] ** 2).mean(0)) * 100
    r2 = 1 - (err ** 2).sum(0) / ((y - y.mean(0)) ** 2).sum(0)
    cells = ", ".join(f"{n} {r:.1f} | {e:.1f} (R² {q:.2f})" for n, r, e, q in zip(names, rmse, early, r2))
    print(f"  {d} ({len(y)} frames): {cells}")
