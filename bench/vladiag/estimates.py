"""How well the tiny VLA's position token sees (issue 30): the head's estimates of the sim-only positions, in cm, on
datasets the package was not trained on (held-out expert demos, the policy's own rollouts). The package's model.pt
keeps the targets' names and normalisation (train-vla --aux-names), so no fit is needed.

Usage: python bench/vladiag/estimates.py PACKAGE DATASET [DATASET ...]
DATASET: an rlft-vla-dataset dir (rlft train-vla writes one under --out; bench/vladiag/dataset.ts turns any recorded
episodes, e.g. `rlft eval --record-to`, into one). Prints per dataset the RMSE (cm) of each estimate over all ticks and
over each episode's first 8 ticks (where the policy must find the cube).
"""
import os
import sys

import numpy as np
import torch

from rlft_learner.algorithms.vla.data import load_vla_dataset
from rlft_learner.algorithms.vla.model import TinyVla, VlaConfig, preprocess_images
from rlft_learner.algorithms.vla.tokenizer import WordLevelTokenizer

if len(sys.argv) < 3:
    sys.exit(__doc__)
pkg = sys.argv[1]
ckpt = torch.load(os.path.join(pkg, "model.pt"), weights_only=False)
if "aux" not in ckpt:
    sys.exit(f"{pkg}: this package has no position token (train it with train-vla --aux-names ... --aux-token)")
model = TinyVla(VlaConfig.from_dict(ckpt["config"])).eval()
model.load_state_dict(ckpt["state_dict"])
tok = WordLevelTokenizer.load(os.path.join(pkg, "tokenizer.json"))
names, mean, std = ckpt["aux"]["names"], np.array(ckpt["aux"]["mean"]), np.array(ckpt["aux"]["std"])
print(f"{pkg}: position token estimates {', '.join(names)}")
for d in sys.argv[2:]:
    data = load_vla_dataset(d)
    ep = np.repeat(np.arange(len(data.lengths)), data.lengths)
    t_in = np.arange(len(ep)) - data.starts[ep]
    ids, mask = zip(*(tok.encode(s) for s in data.instructions))
    ids, mask = torch.tensor(ids)[torch.from_numpy(ep)], torch.tensor(mask)[torch.from_numpy(ep)]
    est = []
    with torch.no_grad():
        for i in range(0, len(ep), 1024):
            imgs = [preprocess_images(torch.from_numpy(np.array(data.images[c.name][i:i + 1024])), c) for c in model.cfg.cameras]
            est.append(model.prefix.estimates(ids[i:i + 1024], mask[i:i + 1024], *imgs).numpy())
    got = np.concatenate(est) * std + mean
    true = data.obs[:, [data.obs_names.index(n) for n in names]]
    err = (got - true) * 100
    first = t_in < 8
    print(f"\n{d}: {len(data.lengths)} episodes, {len(ep)} ticks")
    print(f"  {'name':<10} {'rmse cm':>8} {'first 8':>8}")
    for j, n in enumerate(names):
        print(f"  {n:<10} {np.sqrt((err[:, j] ** 2).mean()):8.2f} {np.sqrt((err[first, j] ** 2).mean()):8.2f}")
