"""Stacked line plots as PNG, drawn with matplotlib: what `rlft inspect --plot` and `rlft replay --plot` write.

The TypeScript side (data/linePlot.ts) sends a JSON spec; this module draws it at exactly the requested pixel size:

    {"title": "...", "x_label": "episode time (s)", "span_label": "intervention", "width": 900, "height": 700,
     "panels": [{"title": "shoulder_pan", "y_label": "rad",
                 "series": [{"name": "measured", "x": [...], "y": [...], "dashed": false, "color": "#d62728"}],
                 "spans": [{"from": 1.2, "to": 2.0}],
                 "hlines": [{"y": 0.05, "label": "tolerance 0.05"}]}]}

Panels share the x axis; each has its own y range and a legend outside the axes on the right. `null` in a series
(a NaN in TypeScript's JSON) leaves a gap. It imports matplotlib only, never torch (whose import alone takes seconds):

    python3 -m rlft_learner.plots --spec spec.json --out plot.png     # or --spec - to read the spec from stdin
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

DPI = 100
SPAN_COLOR = "tab:orange"
MIN_SIZE, MAX_SIZE = 100, 20000  # pixels per side


class PlotSpecError(ValueError):
    """The spec is not a plot this module can draw; the message names the field."""


def _series(where: str, s: Any) -> tuple[str, list[float], list[float]]:
    if not isinstance(s, dict):
        raise PlotSpecError(f"{where}: expected an object with name, x and y")
    name, x, y = s.get("name", ""), s.get("x"), s.get("y")
    if not isinstance(x, list) or not isinstance(y, list) or len(x) != len(y):
        raise PlotSpecError(f"{where} ({name!r}): x and y must be lists of the same length, got "
                            f"{type(x).__name__} {len(x) if isinstance(x, list) else ''} and {type(y).__name__} {len(y) if isinstance(y, list) else ''}")
    try:
        xs = [math.nan if v is None else float(v) for v in x]
        ys = [math.nan if v is None else float(v) for v in y]
    except (TypeError, ValueError) as e:
        raise PlotSpecError(f"{where} ({name!r}): x and y must hold numbers or null: {e}") from e
    return str(name), xs, ys


def _size(spec: dict) -> tuple[int, int]:
    w, h = spec.get("width", 900), spec.get("height", 600)
    for key, v in (("width", w), ("height", h)):
        if not isinstance(v, int) or isinstance(v, bool) or not MIN_SIZE <= v <= MAX_SIZE:
            raise PlotSpecError(f"{key}: expected an integer number of pixels in [{MIN_SIZE}, {MAX_SIZE}], got {v!r}")
    return w, h


def build_figure(spec: dict):
    """The matplotlib Figure for `spec` (checked first; PlotSpecError names what is wrong)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not isinstance(spec, dict):
        raise PlotSpecError("the spec must be a JSON object")
    panels = spec.get("panels")
    if not isinstance(panels, list) or not panels:
        raise PlotSpecError("panels: expected a non-empty list of panels")
    width, height = _size(spec)
    fig, axes = plt.subplots(len(panels), 1, figsize=(width / DPI, height / DPI), dpi=DPI, sharex=True,
                             squeeze=False, layout="constrained")
    if spec.get("title"):
        fig.suptitle(str(spec["title"]), fontsize=11)
    span_label = spec.get("span_label")
    for i, (ax, panel) in enumerate(zip(axes[:, 0], panels)):
        if not isinstance(panel, dict):
            raise PlotSpecError(f"panels[{i}]: expected an object")
        ax.set_title(str(panel.get("title", "")), fontsize=9, loc="left")
        if panel.get("y_label"):
            ax.set_ylabel(str(panel["y_label"]), fontsize=8)
        for k, span in enumerate(panel.get("spans") or []):
            try:
                a, b = float(span["from"]), float(span["to"])
            except (KeyError, TypeError, ValueError) as e:
                raise PlotSpecError(f"panels[{i}].spans[{k}]: expected numbers from and to") from e
            ax.axvspan(a, b, color=SPAN_COLOR, alpha=0.25, lw=0, label=span_label if k == 0 and span_label else None)
        for k, s in enumerate(panel.get("series") or []):
            name, xs, ys = _series(f"panels[{i}].series[{k}]", s)
            style = {"color": s.get("color") or f"C{k % 10}", "ls": "--" if s.get("dashed") else "-", "lw": 1.4}
            ax.plot(xs, ys, label=name, marker="o" if len(xs) == 1 else None, ms=3, **style)
        for k, line in enumerate(panel.get("hlines") or []):
            try:
                y = float(line["y"])
            except (KeyError, TypeError, ValueError) as e:
                raise PlotSpecError(f"panels[{i}].hlines[{k}]: expected a number y") from e
            ax.axhline(y, color=line.get("color") or "tab:red", ls=":", lw=1.2, label=line.get("label"))
        ax.grid(True, color="0.9", lw=0.6)
        ax.tick_params(labelsize=8)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    if spec.get("x_label"):
        axes[-1, 0].set_xlabel(str(spec["x_label"]), fontsize=9)
    return fig


def render(spec: dict, out: str) -> tuple[int, int]:
    """Writes `spec` as a PNG of exactly width × height pixels to `out`; returns (width, height)."""
    import matplotlib.pyplot as plt

    fig = build_figure(spec)
    try:
        fig.savefig(out, dpi=DPI, format="png")
    finally:
        plt.close(fig)
    return _size(spec)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--spec", required=True, help="JSON plot spec (see the module docstring), or - for stdin")
    parser.add_argument("--out", required=True, help="PNG file to write")


def main(args: argparse.Namespace) -> int:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("plot: matplotlib is not installed in this Python — run `node scripts/setup-python.mjs` "
              "(or `pip install -e learner`, which depends on it)", file=sys.stderr)
        return 3
    try:
        spec = json.load(sys.stdin) if args.spec == "-" else json.load(open(args.spec, encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        print(f"plot: cannot read the spec {args.spec}: {e}", file=sys.stderr)
        return 2
    try:
        w, h = render(spec, args.out)
    except PlotSpecError as e:
        print(f"plot: bad spec: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"plot: cannot write {args.out}: {e}", file=sys.stderr)
        return 1
    print(json.dumps({"out": args.out, "width": w, "height": h}))
    return 0


if __name__ == "__main__":
    p = argparse.ArgumentParser(prog="python3 -m rlft_learner.plots", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    sys.exit(main(p.parse_args()))
