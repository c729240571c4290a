"""The training commands, `train-bc`, `recap`, `train-vla` and `train-classifier`: one --flag per field of the
algorithm's config dataclass (options.add_dataclass_args), then the algorithm's entry point; an expected failure is one
line on stderr and exit code 1 (options.run_command)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, Callable

from ..algorithms.bc import train as bc
from ..algorithms.classifier import train as classifier
from ..algorithms.recap import train as recap
from ..algorithms.vla import train as vla
from ..options import add_dataclass_args, run_command

#: Failures of a command that waits for a dataset over the network (train-bc, recap) or trains on it.
NETWORK_ERRORS = (TimeoutError, ValueError, RuntimeError, OSError)


@dataclass(frozen=True)
class TrainingCommand:
    name: str
    config: type
    run: Callable[[Any], Any]
    errors: tuple[type[BaseException], ...] = (ValueError, OSError)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        add_dataclass_args(parser, self.config)

    def main(self, args: argparse.Namespace) -> int:
        return run_command(self.name, self.config, args, self.run, errors=self.errors)


TRAIN_BC = TrainingCommand("train-bc", bc.Config, bc.run, NETWORK_ERRORS)
RECAP = TrainingCommand("recap", recap.Config, recap.run, NETWORK_ERRORS)
TRAIN_VLA = TrainingCommand("train-vla", vla.Config, vla.run)
TRAIN_CLASSIFIER = TrainingCommand("train-classifier", classifier.Config, classifier.train)
