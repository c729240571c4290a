"""rlft_learner.commands.plots: the PNG is the requested size, and what it shows is read back (matplotlib's own figure and the
PNG through Pillow, matplotlib's image reader), not compared pixel by pixel."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from rlft_learner.commands import plots

SPEC = {
    "title": "episode_000001.mcap: push_cube seed 5, timeout",
    "x_label": "episode time (s)",
    "span_label": "intervention",
    "width": 640,
    "height": 420,
    "panels": [
        {"title": "shoulder (rad)", "series": [
            {"name": "measured", "x": [0, 1, 2, 3], "y": [0.0, 0.5, None, 0.2]},
            {"name": "command", "x": [0, 1, 2, 3], "y": [0.1, 0.4, 0.3, 0.2], "dashed": True}],
         "spans": [{"from": 1.0, "to": 2.0}]},
        {"title": "max |dq|", "series": [{"name": "max |dq|", "x": [0, 1, 2, 3], "y": [0, 1e-4, 3e-4, 2e-4], "color": "tab:red"}],
         "hlines": [{"y": 5e-4, "label": "tolerance 0.0005"}]},
    ],
}


def test_png_has_the_requested_size_and_shows_curves_and_spans(tmp_path):
    out = tmp_path / "p.png"
    assert plots.render(SPEC, str(out)) == (640, 420)
    with Image.open(out) as im:
        im.verify()
    im = Image.open(out).convert("RGB")
    assert im.size == (640, 420)
    px = np.asarray(im, dtype=np.int32).reshape(-1, 3)

    def count(ref: tuple[int, int, int], tol: int = 40) -> int:
        return int((np.abs(px - np.array(ref)).sum(axis=1) < tol).sum())

    assert count((31, 119, 180)) > 50, "the first series is drawn in C0 blue"
    assert count((214, 39, 40)) > 50, "the divergence curve is drawn in red"
    assert count((255, 223, 193), 30) > 500, "the intervention span is shaded (tab:orange at alpha 0.25 over white)"
    assert int((px < 80).all(axis=1).sum()) > 500, "text and axes are drawn in dark ink"


def test_figure_has_titles_axis_labels_ticks_and_legends():
    fig = plots.build_figure(SPEC)
    a0, a1 = fig.axes[:2]
    assert fig._suptitle.get_text() == SPEC["title"]
    assert a0.get_title(loc="left") == "shoulder (rad)"
    assert a1.get_xlabel() == "episode time (s)"
    fig.canvas.draw()
    assert [t.get_text() for t in a0.get_legend().get_texts()] == ["intervention", "measured", "command"]
    assert [t.get_text() for t in a1.get_legend().get_texts()] == ["max |dq|", "tolerance 0.0005"]
    assert sum(1 for t in a1.get_xticklabels() if t.get_text()) >= 3, "x ticks are labelled on the bottom panel"
    assert a0.lines[0].get_linestyle() == "-" and a0.lines[1].get_linestyle() == "--"
    assert math.isnan(a0.lines[0].get_ydata()[2]), "null leaves a gap"


@pytest.mark.parametrize("bad, message", [
    ({"panels": []}, "panels: expected a non-empty list"),
    ({**SPEC, "width": 10}, "width: expected an integer number of pixels"),
    ({**SPEC, "height": "big"}, "height: expected an integer number of pixels"),
    ({**SPEC, "panels": [{"title": "x", "series": [{"name": "a", "x": [0, 1], "y": [0]}]}]}, "x and y must be lists of the same length"),
    ({**SPEC, "panels": [{"title": "x", "series": [{"name": "a", "x": [0], "y": ["oops"]}]}]}, "must hold numbers or null"),
    ({**SPEC, "panels": [{"title": "x", "series": [], "spans": [{"from": 0}]}]}, "spans[0]: expected numbers from and to"),
])
def test_bad_specs_are_refused_naming_the_field(bad, message):
    with pytest.raises(plots.PlotSpecError, match=message.replace("[", r"\[").replace("|", r"\|")):
        plots.build_figure(bad)


def test_command_line_reads_stdin_and_reports_errors(tmp_path):
    out = tmp_path / "cli.png"
    r = subprocess.run([sys.executable, "-m", "rlft_learner.commands.plots", "--spec", "-", "--out", str(out)],
                       input=json.dumps(SPEC), capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"out": str(out), "width": 640, "height": 420}
    assert Image.open(out).size == (640, 420)
    r = subprocess.run([sys.executable, "-m", "rlft_learner.commands.plots", "--spec", "-", "--out", str(out)],
                       input="{not json", capture_output=True, text=True, check=False)
    assert r.returncode == 2 and "cannot read the spec" in r.stderr
    r = subprocess.run([sys.executable, "-m", "rlft_learner.commands.plots", "--spec", "-", "--out", str(out)],
                       input=json.dumps({"panels": "x"}), capture_output=True, text=True, check=False)
    assert r.returncode == 2 and "bad spec: panels" in r.stderr
