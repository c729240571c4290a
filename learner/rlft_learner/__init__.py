"""rlft_learner: the PyTorch side of rlft (dataset server, diffusion BC, policy export)."""

import os

# Debian's torch uses OpenBLAS; its own thread pool fights torch's OpenMP threads (measured 25x slower steps on
# 2 cores with both at 2). One BLAS thread plus torch.set_num_threads(N) is fast everywhere. Must precede torch.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
