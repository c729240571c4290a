# The learner image: PyTorch with CUDA and the rlft_learner package (residual TD3 / RECAP server, BC training).
#   docker build -f docker/learner.Dockerfile -t rlft-learner .
#   docker run --rm --gpus all -p 127.0.0.1:5555-5556:5555-5556 -v $PWD/runs:/opt/rlft/runs rlft-learner \
#     serve --experience_bind tcp://0.0.0.0:5555 --policy_bind tcp://0.0.0.0:5556 --base_package runs/demo/package
# The learner only uses APIs that torch 1.13 and 2.x share, so any recent PyTorch image works.
FROM pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
RUN pip install "numpy<2.3" "pyzmq>=24" "msgpack>=1.0" "onnx>=1.14" "pyyaml>=6" pytest

WORKDIR /opt/rlft
COPY learner/ learner/
ENV PYTHONPATH=/opt/rlft/learner
ENTRYPOINT ["python", "-m", "rlft_learner"]
CMD ["--help"]
