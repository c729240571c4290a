"""The command line every bench plot shares: `python3 bench/plot_<bench>.py <bench>.json <out>.png`.

`run(doc, argv, draw)` checks the arguments (prints `doc` and returns 2 when they are wrong), loads matplotlib with the
Agg backend (returns 3 when it is missing: the bench then says how to get it), reads the bench's JSON and calls
`draw(plt, data)`, which returns the figure; the figure is written to the PNG at 110 dpi.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable


def run(doc: str, argv: list[str], draw: Callable[[Any, dict], Any]) -> int:
    if len(argv) != 3:
        print(doc, file=sys.stderr)
        return 2
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is missing: run node scripts/setup-python.mjs (the learner's .venv has it)", file=sys.stderr)
        return 3
    with open(argv[1]) as f:
        data = json.load(f)
    fig = draw(plt, data)
    fig.tight_layout()
    fig.savefig(argv[2], dpi=110)
    return 0
