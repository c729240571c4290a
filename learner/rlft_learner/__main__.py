"""Command line: `python3 -m rlft_learner <command>`; each command's --help shows an example."""

from __future__ import annotations

import argparse
import logging
import sys

from . import __version__
from .commands import bench_checkpoint, bench_pixel_update, bench_sampler, bench_vla, make_fixture, plot_episode, plots
from .commands.training import RECAP, TRAIN_BC, TRAIN_CLASSIFIER, TRAIN_VLA
from .commands.serve import BenchUpdateCommand, ServeCommand
from .algorithms.vla import smolvla_export

COMMANDS = {
    "train-bc": (TRAIN_BC, "train a Diffusion Policy by behaviour cloning and export a policy package",
                 "example:\n  python3 -m rlft_learner train-bc --bind tcp://127.0.0.1:5555 --out runs/bc --json-progress\n"
                 "  python3 -m rlft_learner train-bc --dataset demos.npz --out runs/bc --steps 2000\n"
                 "  python3 -m rlft_learner train-bc --bind tcp://127.0.0.1:5555 --out runs/bc --save-dataset runs/bc/demos.npz"),
    "train-vla": (TRAIN_VLA, "train a tiny language-conditioned VLA (pi0-style flow matching) and export a VLA package",
                  "example:\n  python3 -m rlft_learner train-vla --dataset runs/vla/dataset --out runs/vla --steps 3000\n"
                  "  python3 -m rlft_learner train-vla --synthetic --steps 20 --width 32 --out /tmp/vla"),
    "export-smolvla": (smolvla_export, "turn a LeRobot SmolVLA checkpoint directory (config.json + model.safetensors) into an rlft VLA package",
                       "example:\n  python3 -m rlft_learner export-smolvla outputs/train/smolvla/checkpoints/last/pretrained_model --out runs/smolvla --tokenizer tokenizer.json --state-names q.a,q.b --action-names a,b"),
    "bench-smolvla": (smolvla_export.BenchCommand, "time a LeRobot SmolVLA checkpoint's prefix and whole chunk in eager PyTorch at batch 1; prints JSON",
                      "example:\n  python3 -m rlft_learner bench-smolvla --checkpoint runs/smolvla-ckpt --threads 2 --iters 5"),
    "bench-vla": (bench_vla, "time the VLA's prefix and one action-expert step in eager PyTorch at batch 1; prints JSON",
                  "example:\n  python3 -m rlft_learner bench-vla --package runs/vla/package --threads 1 --iters 200"),
    "recap": (RECAP, "RECAP iteration: value function on all episodes, advantage indicators, indicator-conditioned fine-tune, export",
              "example:\n  python3 -m rlft_learner recap --bind tcp://127.0.0.1:5555 --pretrained runs/bc/package --out runs/recap/iter1 --json-progress\n"
              "  python3 -m rlft_learner recap --dataset all.npz --pretrained runs/bc/package --out runs/recap/iter1 --n-step 0 --cfg-beta 1.5"),
    "plot-episode": (plot_episode, "plot V(t), return and A(t) of one episode (JSON from rlft inspect-episode --json; needs matplotlib)",
                     "example:\n  python3 -m rlft_learner plot-episode --data ep.json --out ep.png"),
    "plot": (plots, "draw stacked line plots from a JSON spec as PNG (what rlft inspect/replay --plot write)",
             "example:\n  python3 -m rlft_learner plot --spec spec.json --out plot.png"),
    "make-fixture": (make_fixture, "train a tiny model on synthetic data and export a package (for TS tests)",
                     "example:\n  python3 -m rlft_learner make-fixture --out /tmp/fixture --obs-dim 12 --action-dim 5"),
    "bench-sampler": (bench_sampler, "time the eager PyTorch DDIM sampler at batch 1; prints JSON",
                      "example:\n  python3 -m rlft_learner bench-sampler --package /tmp/fixture --threads 1 --iters 200"),
    "serve": (ServeCommand, "online residual RL (ResFiT TD3; or algorithm rlpd_sac, the SAC baseline): serve robots over rlft-exp/1, train, publish packages",
              "example:\n  python3 -m rlft_learner serve --config learner.yaml --json-progress\n"
              "  python3 -m rlft_learner serve --base-package runs/bc/package --run-dir runs/res --max-updates 20000\n"
              "  python3 -m rlft_learner serve --algorithm rlpd_sac --base-package runs/bc/package --demo-dataset demos.npz"),
    "train-classifier": (TRAIN_CLASSIFIER, "train a success classifier (image -> P(success), ONNX) from frames labelled with rlft label",
                         "example:\n  python3 -m rlft_learner train-classifier --data runs/labels --out runs/classifier"),
    "bench-update": (BenchUpdateCommand, "time residual TD3 updates (critic ensemble + delayed actor); prints JSON",
                     "example:\n  python3 -m rlft_learner bench-update --seconds 5 [--config learner.yaml]"),
    "bench-checkpoint": (bench_checkpoint, "time how long a checkpoint of a replay with camera frames holds the serving thread, before and now; prints JSON",
                         "example:\n  python3 -m rlft_learner bench-checkpoint --rows 40000 --dir /tmp"),
    "bench-pixel-update": (bench_pixel_update, "time residual TD3 updates from pixels, frozen base encoder vs own encoders side by side; prints JSON",
                           "example:\n  python3 -m rlft_learner bench-pixel-update --batch-size 256 --seconds 10 [--base-package runs/bc/package]"),
}


def build_parser() -> argparse.ArgumentParser:
    examples = "\n".join(epilog.split("\n", 1)[1] for _, _, epilog in COMMANDS.values())
    parser = argparse.ArgumentParser(prog="python3 -m rlft_learner", description=f"rlft learner {__version__}",
                                     epilog="examples:\n" + examples, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"rlft_learner {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="<command>", required=True)
    for name, (command, help_text, epilog) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=epilog,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        command.add_arguments(p)
        p.set_defaults(_command=command)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    args = build_parser().parse_args(argv)
    return args._command.main(args)


if __name__ == "__main__":
    sys.exit(main())
