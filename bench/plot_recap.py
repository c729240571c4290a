"""Plot of `npm run bench:recap`: per task, success rate (Wilson 95%), failure rate and throughput of BC on demos,
plain BC on the mixed data and RECAP.

    python3 bench/plot_recap.py bench/results/recap-latest.json out.png

Exits with status 3 when matplotlib is missing (the bench then prints the install line).
"""

from __future__ import annotations

import sys

from plot_common import run


def draw(plt, data: dict):
    tasks = data["tasks"]
    fig, axes = plt.subplots(len(tasks), 3, figsize=(12, 3.6 * len(tasks)), squeeze=False)
    colors = ["0.6", "C1", "C0"]
    for row, t in zip(axes, tasks):
        names = [m["name"] for m in t["methods"]]
        s = [m["stats"] for m in t["methods"]]
        u = [m["stats"] for m in t.get("untuned", [])]
        x = list(range(len(names)))
        w = 0.38 if u else 0.8
        xs = [i - w / 2 for i in x] if u else x
        xu = [i + w / 2 for i in x]
        succ = [100 * v["successRate"] for v in s]
        err = [[100 * (v["successRate"] - v["ci95"][0]) for v in s], [100 * (v["ci95"][1] - v["successRate"]) for v in s]]
        row[0].bar(xs, succ, w, yerr=err, color=colors, capsize=4, label="sampler chosen on validation")
        row[1].bar(xs, [100 * v["failureRate"] for v in s], w, color=colors)
        row[2].bar(xs, [v["throughputPerHour"] for v in s], w, color=colors)
        if u:
            erru = [[100 * (v["successRate"] - v["ci95"][0]) for v in u], [100 * (v["ci95"][1] - v["successRate"]) for v in u]]
            row[0].bar(xu, [100 * v["successRate"] for v in u], w, yerr=erru, color=colors, alpha=0.35, hatch="//", capsize=3, label="temperature 1 (untuned)")
            row[1].bar(xu, [100 * v["failureRate"] for v in u], w, color=colors, alpha=0.35, hatch="//")
            row[2].bar(xu, [v["throughputPerHour"] for v in u], w, color=colors, alpha=0.35, hatch="//")
            row[0].legend(fontsize=7, loc="lower right")
        row[0].set(ylabel="success %", ylim=(0, 100), title=f"{t['task']}: success (Wilson 95%)")
        row[1].set(ylabel="failure rate %", ylim=(0, 100), title=f"failure rate (RECAP/plain {t['ratios']['failure']:.2f}x)")
        row[2].set(ylabel="successes / hour", title=f"throughput (RECAP/plain {t['ratios']['throughput']:.2f}x)")
        for ax in row:
            ax.set_xticks(x)
            ax.set_xticklabels([n.replace(" (", "\n(") for n in names], fontsize=8)
    fig.suptitle(f"bench:recap {data['date']} (git {data['git']})", fontsize=10)
    return fig


if __name__ == "__main__":
    sys.exit(run(__doc__, sys.argv, draw))
