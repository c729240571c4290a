"""Plot of `npm run bench:recap`: per task, success rate (Wilson 95%), failure rate and throughput of BC on demos,
plain BC on the mixed data and RECAP.

    python3 bench/plot_recap.py bench/results/recap-latest.json out.png

Exits with status 3 when matplotlib is missing (the bench then prints the install line).
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return 3
    data = json.load(open(argv[1]))
    tasks = data["tasks"]
    fig, axes = plt.subplots(len(tasks), 3, figsize=(12, 3.6 * len(tasks)), squeeze=False)
    colors = ["0.6", "C1", "C0"]
    for row, t in zip(axes, tasks):
        names = [m["name"] for m in t["methods"]]
        s = [m["stats"] for m in t["methods"]]
        x = range(len(names))
        succ = [100 * v["successRate"] for v in s]
        err = [[100 * (v["successRate"] - v["ci95"][0]) for v in s], [100 * (v["ci95"][1] - v["successRate"]) for v in s]]
        row[0].bar(x, succ, yerr=err, color=colors, capsize=4)
        row[0].set(ylabel="success %", ylim=(0, 100), title=f"{t['task']}: success (Wilson 95%)")
        row[1].bar(x, [100 * v["failureRate"] for v in s], color=colors)
        row[1].set(ylabel="failure rate %", ylim=(0, 100), title=f"failure rate (RECAP/plain {t['ratios']['failure']:.2f}x)")
        row[2].bar(x, [v["throughputPerHour"] for v in s], color=colors)
        row[2].set(ylabel="successes / hour", title=f"throughput (RECAP/plain {t['ratios']['throughput']:.2f}x)")
        for ax in row:
            ax.set_xticks(list(x))
            ax.set_xticklabels([n.replace(" (", "\n(") for n in names], fontsize=8)
    fig.suptitle(f"bench:recap {data['date']} (git {data['git']})", fontsize=10)
    fig.tight_layout()
    fig.savefig(argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
