#!/usr/bin/env bash
# Sources ROS 2 and the rlft_interfaces package, then runs the command (ros2 launch ..., rlft ...).
set -e
source /opt/ros/jazzy/setup.bash
source /opt/rlft/install/setup.bash
exec "$@"
