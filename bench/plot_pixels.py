"""Plot of `npm run bench:pixels`: per task, held-out success (Wilson 95%) of pixel BC and state BC, with the target.

    python3 bench/plot_pixels.py bench/results/pixels-latest.json out.png

Exits with status 3 when matplotlib is missing.
"""

from __future__ import annotations

import sys

from plot_common import run


def draw(plt, data: dict):
    tasks = data["tasks"]
    fig, ax = plt.subplots(figsize=(3.2 * len(tasks) + 1, 3.6))
    for i, t in enumerate(tasks):
        for j, (key, label, color) in enumerate([("pixels", "pixel BC (joints + 2 cameras)", "C0"), ("state", "state BC (privileged)", "0.6")]):
            if key not in t:
                continue
            e = t[key]["eval"]
            x = i + (j - 0.5) * 0.38
            err = [[100 * (e["rate"] - e["ci95"][0])], [100 * (e["ci95"][1] - e["rate"])]]
            ax.bar([x], [100 * e["rate"]], 0.38, yerr=err, color=color, capsize=4, label=label if i == 0 else None)
        ax.hlines(100 * t["target"], i - 0.45, i + 0.45, colors="C3", linestyles="--", label="pixel target" if i == 0 else None)
    ax.set_xticks(range(len(tasks)), [t["task"] for t in tasks])
    ax.set_ylabel("held-out success (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"SO-101 BC from pixels vs privileged state (n = {next(tasks[0][k] for k in ('pixels', 'state') if k in tasks[0])['eval']['episodes']} each)")
    ax.legend(fontsize=8, loc="upper right")
    return fig


if __name__ == "__main__":
    sys.exit(run(__doc__, sys.argv, draw))
