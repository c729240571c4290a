"""Plot of `npm run bench:learning`: per task, success rate vs online episodes (Wilson 95% bands) and the intervention
rate over the session, for each learner, with BC alone as a reference line; beside the session's rate, the operator's
share on the same held-out seeds before (BC alone, at 0) and after (each final package, at the budget) when the
report has it.

    python3 bench/plot_learning.py bench/results/learning-latest.json out.png

Exits with status 3 when matplotlib is missing (the bench then prints the install line).
"""

from __future__ import annotations

import sys

from plot_common import run


def rolling_intervention(episodes: list[dict], window: int) -> tuple[list[int], list[float]]:
    xs, ys = [], []
    for i in range(len(episodes)):
        chunk = episodes[max(0, i + 1 - window): i + 1]
        steps = sum(e["steps"] for e in chunk)
        xs.append(i + 1)
        ys.append(100.0 * sum(e["interventionSteps"] for e in chunk) / steps if steps else 0.0)
    return xs, ys


def draw(plt, bench: dict):
    tasks = bench["tasks"]
    fig, axes = plt.subplots(2, max(1, len(tasks)), figsize=(6.5 * max(1, len(tasks)), 8), squeeze=False)
    colours = {"residual": "tab:blue", "sac": "tab:orange"}
    for col, t in enumerate(tasks):
        ax, ax2 = axes[0][col], axes[1][col]
        bc = t["bc"]["final"]
        ax.axhline(100 * bc["rate"], color="grey", ls="--", label=f"BC alone {100 * bc['rate']:.0f}%")
        ax.axhspan(100 * bc["lo"], 100 * bc["hi"], color="grey", alpha=0.12)
        ax.axhline(100 * t["target"], color="green", ls=":", lw=1, label=f"target {100 * t['target']:.0f}%")
        window = max(5, bench["episodes"] // 15)
        for name, m in t["methods"].items():
            c = colours.get(name)
            xs = [p["episodes"] for p in m["curve"]]
            ax.plot(xs, [100 * p["rate"] for p in m["curve"]], "o-", color=c, label=f"{m['label']} (final {100 * m['final']['rate']:.0f}%)")
            ax.fill_between(xs, [100 * p["lo"] for p in m["curve"]], [100 * p["hi"] for p in m["curve"]], color=c, alpha=0.15)
            f = m["final"]
            ax.errorbar([xs[-1] + bench["episodes"] * 0.02], [100 * f["rate"]], yerr=[[max(0.0, 100 * (f["rate"] - f["lo"]))], [max(0.0, 100 * (f["hi"] - f["rate"]))]],
                        fmt="s", color=c, capsize=3)
            ix, iy = rolling_intervention(m["session"]["episodes"], window)
            ax2.plot(ix, iy, color=c, label=m["label"])
            if m.get("supervised"):
                ax2.plot([bench["episodes"]], [100 * m["supervised"]["interventionRate"]], "D", color=c, ms=7,
                         label=f"final, held-out seeds: {100 * m['supervised']['interventionRate']:.1f}%")
        if t["bc"].get("supervised"):
            ax2.plot([0], [100 * t["bc"]["supervised"]["interventionRate"]], "D", color="grey", ms=7,
                     label=f"BC alone, held-out seeds: {100 * t['bc']['supervised']['interventionRate']:.1f}%")
        ax.set_title(f"{t['task']}: held-out success ({bench['evalSeeds']} seeds per point, final {bench['finalEval']})")
        ax.set_xlabel("online episodes")
        ax.set_ylabel("success rate (%)")
        ax.set_ylim(-2, 102)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper left")
        ax2.set_title(f"{t['task']}: operator intervention rate (rolling {window} episodes)")
        ax2.set_xlabel("online episodes")
        ax2.set_ylabel("steps under operator control (%)")
        ax2.set_ylim(-2, 102)
        ax2.grid(alpha=0.3)
        ax2.legend(fontsize=8)
    source = f"\nfrom pixels ({bench.get('robot', 'so101')}: joints + cameras)" if bench.get("obs") == "pixels" else ""
    fig.suptitle(f"rlft learning benchmark {bench['date']}" + (" (quick)" if bench.get("quick") else "") + source)
    return fig


if __name__ == "__main__":
    sys.exit(run(__doc__, sys.argv, draw))
