"""Diagnosis of bench:pixels: what the policy sees. Writes OUT.png with the front (top) and wrist (bottom) frames of
the given episodes at t = 0, 1/3, 2/3 and the end, and prints how many pixels the cube (red) and target (green) cover.

Usage: python bench/pixdiag/frames.py DIR OUT.png EPISODES (comma-separated indices; DIR from bench/pixdiag/dump.ts)
"""
import sys

import numpy as np
from PIL import Image
d, out, eps = sys.argv[1], sys.argv[2], [int(x) for x in sys.argv[3].split(",")]
L = np.load(f"{d}/lengths.npy"); starts = np.concatenate([[0], np.cumsum(L)[:-1]])
F = np.load(f"{d}/image.front.npy"); W = np.load(f"{d}/image.wrist.npy")


def pad_to(a, w):
    """Pads frames (..., H, W, 3) with black columns to width w (cameras of different sizes side by side)."""
    return np.pad(a, [(0, 0)] * (a.ndim - 2) + [(0, w - a.shape[-2]), (0, 0)])


width = max(F.shape[2], W.shape[2])
F, W = pad_to(F, width), pad_to(W, width)
rows = []
for e in eps:
    s, n = starts[e], L[e]
    ts = [0, n // 3, 2 * n // 3, n - 1]
    row = np.concatenate([np.concatenate([F[s + t], W[s + t]], 0) for t in ts], 1)  # front over wrist, 4 times
    rows.append(row)
img = np.concatenate(rows, 0)
Image.fromarray(img).resize((img.shape[1] * 3, img.shape[0] * 3), Image.NEAREST).save(out)

for cam in ("front", "wrist"):
    F = np.load(f"{d}/image.{cam}.npy").astype(int)
    R, G, B = F[..., 0], F[..., 1], F[..., 2]
    red = ((R > 120) & (G < 70) & (B < 70)).reshape(len(F), -1).sum(1)
    green = ((G > 150) & (R < 130) & (B < 130)).reshape(len(F), -1).sum(1)
    r0 = red[starts]; g0 = green[starts]
    print(f"{cam}: red (cube) px at t=0: median {np.median(r0):.0f} [min {r0.min()}, max {r0.max()}], eps with 0 at t=0: {(r0==0).sum()}/{len(r0)}; "
          f"green (target) px t=0 median {np.median(g0):.0f}, 0 in {(g0==0).sum()}/{len(g0)}; all frames: cube visible in {(red>0).mean()*100:.0f}%, target in {(green>0).mean()*100:.0f}%")
    if cam == "front":
        # where in the image is the cube: row extent
        ys = np.nonzero(((R > 120) & (G < 70) & (B < 70))[starts])[1]
        xs = np.nonzero(((R > 120) & (G < 70) & (B < 70))[starts])[2]
        print(f"  front cube rows {ys.min()}..{ys.max()} of {F.shape[1]}, cols {xs.min()}..{xs.max()} of {F.shape[2]}")
