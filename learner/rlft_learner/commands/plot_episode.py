"""Plot V(t), the actual return and A(t) along one episode (the JSON `rlft inspect-episode --json` writes).

    python3 -m rlft_learner plot-episode --data ep.json --out ep.png
"""

from __future__ import annotations

import argparse
import json
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data", required=True, help="JSON from rlft inspect-episode --json")
    parser.add_argument("--out", required=True, help="PNG to write")


def main(args: argparse.Namespace) -> int:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot-episode: matplotlib is not installed in this Python — run node scripts/setup-python.mjs (or use --json)", file=sys.stderr)
        return 1
    d = json.load(open(args.data))
    t = list(range(d["steps"]))
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
    for s, e in _runs(d["intervention"]):
        for ax in (ax1, ax2):
            ax.axvspan(s - 0.5, e - 0.5, color="orange", alpha=0.2, lw=0)
    ax1.plot(t, d["value"], label="V(t)", color="C0")
    ax1.plot(t, d["ret"], label="actual return", color="C1", ls=":")
    ax1.set(ylabel="normalised value", ylim=(-1.05, 0.05), title=f"{d['task']}: {d['outcome']} after {d['steps']} steps (orange: operator)")
    ax1.legend(fontsize=8)
    ax2.plot(t, d["advantage"], color="C2", label=f"A(t), N = {d['nStep'] or 'MC'}")
    if d.get("threshold") is not None:
        ax2.axhline(d["threshold"], color="0.4", ls="--", lw=1, label="threshold ε")
    pos = [i for i in t if d["indicator"][i]]
    ax2.scatter(pos, [d["advantage"][i] for i in pos], s=6, color="C2", label="indicator positive")
    ax2.set(xlabel="step", ylabel="advantage")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    return 0


def _runs(flags: list[int]) -> list[tuple[int, int]]:
    out, start = [], None
    for i, f in enumerate(list(flags) + [0]):
        if f and start is None:
            start = i
        elif not f and start is not None:
            out.append((start, i))
            start = None
    return out
