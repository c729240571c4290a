# The robot image: ROS 2 Jazzy, Node 20, rlft with rclnodejs and onnxruntime-node's CUDA 12 execution provider.
#   docker build -f docker/robot.Dockerfile -t rlft-robot .
#   docker run --rm --gpus all --network host rlft-robot                       # the sim launch on ROS 2
#   docker run --rm --gpus all --network host --device /dev/ttyACM0 -v $PWD/runs:/opt/rlft/runs rlft-robot \
#     ros2 launch launch/ros2/so100.launch.xml port:=/dev/ttyACM0 policy:=runs/policies/so100
# Without a GPU the CPU provider is used (actor.providers lists cuda first, cpu as the fallback).
FROM ros:jazzy

ARG NODE_MAJOR=20
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
# Node from NodeSource (Ubuntu 24.04's nodejs is 18); ffmpeg for V4L2 cameras; build tools for rclnodejs' addon.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl gnupg build-essential python3 ffmpeg \
 && curl -fsSL "https://deb.nodesource.com/setup_${NODE_MAJOR}.x" | bash - \
 && apt-get install -y --no-install-recommends nodejs \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/rlft
# The message package first: rclnodejs generates JS bindings for every interface it finds when it is installed.
COPY interfaces/ interfaces/
RUN source /opt/ros/jazzy/setup.bash \
 && colcon build --base-paths interfaces --packages-select rlft_interfaces --install-base /opt/rlft/install

COPY package.json package-lock.json .npmrc ./
# ONNXRUNTIME_NODE_INSTALL wins over .npmrc's skip: fetch the CUDA 12 provider libraries at install time.
ENV ONNXRUNTIME_NODE_INSTALL=cuda12
RUN source /opt/ros/jazzy/setup.bash && source /opt/rlft/install/setup.bash \
 && npm ci --no-audit --no-fund \
 && npm install --no-save --no-audit --no-fund rclnodejs \
 && npm cache clean --force

COPY . .
RUN ln -s /opt/rlft/bin/rlft.js /usr/local/bin/rlft && chmod +x docker/robot-entrypoint.sh
ENTRYPOINT ["/opt/rlft/docker/robot-entrypoint.sh"]
CMD ["ros2", "launch", "launch/ros2/sim.launch.xml", "episodes:=0"]
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["/opt/rlft/docker/robot-entrypoint.sh", "bash", "-c", "ros2 node list | grep -q arm_driver"]
