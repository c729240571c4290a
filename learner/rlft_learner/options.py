"""Turn a config dataclass into argparse options (`field_name` -> `--field-name`), CleanRL/tyro style, and check every
value against the range its field declares (one place per value: the field's metadata)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
import sys
from collections.abc import Hashable
from typing import Any, Callable, TypeVar

import yaml

T = TypeVar("T")

_NUM = r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?"
_INTERVAL = re.compile(rf"^([\[(])\s*({_NUM})\s*,\s*({_NUM})\s*([\])])$")
_COMPARE = re.compile(rf"^(>=|>|<=|<)\s*({_NUM})$")


def help_meta(text: str) -> dict:
    """Dataclass field metadata carrying the --help text of a config key."""
    return {"help": text}


def allow(cls: type, table: dict[str, str | tuple[str, ...]]) -> None:
    """Declare the values a config dataclass accepts, one entry per key: a range in interval notation ("(0, 1]",
    "[0, 2]", "> 0", ">= 1") or a tuple of choices. The one place each value's bounds live: `check_value` enforces
    them wherever the value is read (YAML, flags) and --help shows them. A subclass inherits its parents' entries
    (declare its own table, even an empty one, after the class)."""
    names = {f.name for f in dataclasses.fields(cls)}
    for key, spec in table.items():
        if key not in names or not (isinstance(spec, tuple) or _INTERVAL.match(spec) or _COMPARE.match(spec)):
            raise ValueError(f"{cls.__name__}: bad allowed-values entry {key!r}: {spec!r}")  # a programming error
    inherited: dict[str, str | tuple[str, ...]] = {}
    for base in reversed(cls.__mro__[1:]):  # every parent's entries, also with several parents (serve's flat config)
        inherited.update(vars(base).get("__allowed__", {}))
    cls.__allowed__ = {**inherited, **table}


def allowed(cls: type, name: str) -> str | tuple[str, ...] | None:
    return getattr(cls, "__allowed__", {}).get(name)


def in_range(value: float, spec: str) -> bool:
    """`value` lies in `spec` (allow's notation). NaN lies in none."""
    m = _INTERVAL.match(spec)
    if m:
        lo, hi = float(m.group(2)), float(m.group(3))
        low_ok = value > lo if m.group(1) == "(" else value >= lo
        high_ok = value < hi if m.group(4) == ")" else value <= hi
        return low_ok and high_ok
    op, bound = _COMPARE.match(spec).groups()  # type: ignore[union-attr]
    b = float(bound)
    return {">=": value >= b, ">": value > b, "<=": value <= b, "<": value < b}[op]


def check_value(cls: type, name: str, value: Any, where: str) -> None:
    """Raise ValueError naming the key, the value and what is allowed when `value` does not fit key `name` of config
    class `cls`. Floats must be finite (YAML .nan/.inf and `--x nan` parse as floats)."""
    spec = allowed(cls, name)
    text = next((f.metadata.get("help", "") for f in dataclasses.fields(cls) if f.name == name), "")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where}: {name} = {value!r} is not a finite number; allowed: {spec or 'any finite number'}")
    if isinstance(spec, tuple):
        if value not in spec:
            raise ValueError(f"{where}: {name} = {value!r} is not one of {', '.join(spec)} — {text}"[:600])
    elif spec is not None and isinstance(value, (int, float)) and not isinstance(value, bool) and not in_range(value, spec):
        raise ValueError(f"{where}: {name} = {value!r} is out of range; allowed: {spec} — {text}"[:600])


def check_dataclass(obj: Any, where: str) -> None:
    """`check_value` for every field of a config dataclass instance."""
    for f in dataclasses.fields(obj):
        check_value(type(obj), f.name, getattr(obj, f.name), where)


def add_dataclass_args(parser: argparse.ArgumentParser, cls: type) -> None:
    """One option per field, default from the dataclass, help from the field's `help` metadata."""
    hints = {f.name: f for f in dataclasses.fields(cls)}
    defaults = cls()
    for name, f in hints.items():
        default = getattr(defaults, name)
        flag = "--" + name.replace("_", "-")
        help_text = help_with_range(cls, f)
        if isinstance(default, bool):
            parser.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=default, help=help_text)
        else:
            parser.add_argument(flag, dest=name, type=type(default), default=default,
                                help=f"{help_text} (default: {default})".strip())


def help_with_range(cls: type, f: dataclasses.Field) -> str:
    """A field's --help text with what it allows appended. argparse %-formats help, so literal % are doubled."""
    spec = allowed(cls, f.name)
    text = f.metadata.get("help", "") + (f"; allowed: {'|'.join(spec) if isinstance(spec, tuple) else spec}" if spec else "")
    return text.replace("%%", "%").replace("%", "%%")


def dataclass_from_args(cls: type[T], args: argparse.Namespace) -> T:
    """The config dataclass from parsed arguments; ValueError when a value is out of its field's range."""
    values: dict[str, Any] = {f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)}
    cfg = cls(**values)
    check_dataclass(cfg, "command line")
    return cfg


def run_command(name: str, cls: type[T], args: argparse.Namespace, fn: Callable[[T], Any],
                errors: tuple[type[BaseException], ...] = (ValueError, OSError)) -> int:
    """The body of a learner command's `main`: build its config dataclass from the arguments, run it, and turn an
    expected failure into one line on stderr (plus a JSON `error` event when the config asks for JSON progress) and
    exit code 1."""
    try:
        cfg = dataclass_from_args(cls, args)
        fn(cfg)
    except errors as exc:
        if getattr(args, "json_progress", False):
            print(json.dumps({"event": "error", "message": str(exc)}), flush=True)
        print(f"{name}: {exc}", file=sys.stderr)
        return 1
    return 0


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a key given twice in one mapping is an error (PyYAML keeps the last silently,
    so `gamma: 0.99` then `gamma: 0.9` further down would run with 0.9 unnoticed)."""


def _unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode) -> dict:
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if not isinstance(key, Hashable):
            continue  # construct_mapping reports it
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"key {key!r} appears twice (first on line "
                                                    f"{seen[key].start_mark.line + 1})", key_node.start_mark)
        seen[key] = key_node
    return loader.construct_mapping(node)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _unique_mapping)


def read_yaml(path: str) -> Any:
    """A YAML file's contents; a syntax error is one ValueError `path:line:column: what` (no traceback)."""
    with open(path) as f:
        try:
            return yaml.load(f, Loader=_UniqueKeyLoader)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else path
            what = " ".join(x for x in (getattr(exc, "context", None), getattr(exc, "problem", None)) if x) or str(exc)
            raise ValueError(f"{where}: YAML syntax error: {what}") from None
