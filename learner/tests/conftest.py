import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before torch loads; see rlft_learner/__init__.py
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
