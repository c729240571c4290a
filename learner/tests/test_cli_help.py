"""Every `python3 -m rlft_learner <command> --help` renders (argparse %-formats help strings, so a bare % breaks it)."""

from __future__ import annotations

import contextlib
import io

import pytest

from rlft_learner.__main__ import COMMANDS, build_parser


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_renders(command):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as e:
        build_parser().parse_args([command, "--help"])
    assert e.value.code == 0
    assert "--" in out.getvalue()
