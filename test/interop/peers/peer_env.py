"""Shared set-up of the peer scripts the interop tests run (test/interop/*.test.ts start them with the project's
.venv interpreter; test/interop/peers.ts puts the LeRobot release a test asks for on PYTHONPATH).

torchvision on PyPI is built against PyTorch's CUDA build. Next to the CPU build the project pins, its C extension
cannot load (it links libtorch_cuda), and torchvision 0.28 then fails at import in its meta registrations, which
assume the `torchvision::nms` / `torchvision::qnms` operators exist. LeRobot's dataset code imports torchvision (for
transforms it does not call here), so `import_torchvision()` declares those two operator schemas — no kernels: calling
them would fail loudly — when, and only when, the extension did not load. With a matching torchvision it does nothing.
"""
import json
import sys


def import_torchvision():
    import torch

    try:
        import torchvision  # noqa: F401
        return
    except RuntimeError as e:
        if "torchvision::nms" not in str(e):
            raise
    for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
        del sys.modules[name]
    lib = torch.library.Library("torchvision", "DEF")  # schemas as in torchvision/csrc/ops/nms.cpp
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    import_torchvision.keep = lib  # the definitions live as long as the library object
    import torchvision  # noqa: F401


def emit(obj):
    """The one line of JSON the TypeScript side parses (stdout; everything else goes to stderr)."""
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
