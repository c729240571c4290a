"""Turn a config dataclass into argparse options (`field_name` -> `--field-name`), CleanRL/tyro style."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any, Callable, TypeVar

T = TypeVar("T")


def help_meta(text: str) -> dict:
    """Dataclass field metadata carrying the --help text of a config key."""
    return {"help": text}


def add_dataclass_args(parser: argparse.ArgumentParser, cls: type) -> None:
    """One option per field, default from the dataclass, help from the field's `help` metadata."""
    hints = {f.name: f for f in dataclasses.fields(cls)}
    defaults = cls()
    for name, f in hints.items():
        default = getattr(defaults, name)
        flag = "--" + name.replace("_", "-")
        help_text = f.metadata.get("help", "")
        if isinstance(default, bool):
            parser.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=default, help=help_text)
        else:
            parser.add_argument(flag, dest=name, type=type(default), default=default,
                                help=f"{help_text} (default: {default})".strip())


def dataclass_from_args(cls: type[T], args: argparse.Namespace) -> T:
    values: dict[str, Any] = {f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)}
    return cls(**values)


def run_command(name: str, cls: type[T], args: argparse.Namespace, fn: Callable[[T], Any],
                errors: tuple[type[BaseException], ...] = (ValueError, OSError)) -> int:
    """The body of a learner command's `main`: build its config dataclass from the arguments, run it, and turn an
    expected failure into one line on stderr (plus a JSON `error` event when the config asks for JSON progress) and
    exit code 1."""
    cfg = dataclass_from_args(cls, args)
    try:
        fn(cfg)
    except errors as exc:
        if getattr(cfg, "json_progress", False):
            print(json.dumps({"event": "error", "message": str(exc)}), flush=True)
        print(f"{name}: {exc}", file=sys.stderr)
        return 1
    return 0
