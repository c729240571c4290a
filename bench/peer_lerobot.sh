#!/usr/bin/env bash
# LeRobot 0.4.4's own SAC / HIL-SERL (learner + actor, two processes over gRPC, as its docs run them) on gym-hil
# PandaPickCube-v0, CPU, no teleoperator and no offline dataset, for a wall-clock budget; then summarises the actor's
# episode rewards/interventions and the learner's optimisation steps from their logs.
#
# Setup (a separate venv: LeRobot pins torch<2.11, the project runs 2.13):
#   python3 -m venv .venv-lerobot
#   .venv-lerobot/bin/pip install --no-deps --only-binary=:all: --no-binary=evdev -r bench/peer/lerobot-requirements.txt
# Usage: bench/peer_lerobot.sh [seconds, default 420]   (env: LEROBOT_PYTHON, default .venv-lerobot/bin/python)
set -euo pipefail
cd "$(dirname "$0")/.."
BUDGET="${1:-420}"
PY="${LEROBOT_PYTHON:-.venv-lerobot/bin/python}"
CFG=bench/peer/lerobot_gym_hil_sac.json
WORK=bench/work/lerobot
export MUJOCO_GL="${MUJOCO_GL:-osmesa}"
[ -x "$PY" ] || { echo "bench/peer_lerobot.sh needs LeRobot 0.4.4's venv at $PY: create it as the header of this script says, or set LEROBOT_PYTHON." >&2; exit 1; }
rm -rf "$WORK"; mkdir -p "$WORK"
"$PY" bench/peer_lerobot.py learner --config_path "$CFG" --output_dir="$WORK/train" >"$WORK/learner.log" 2>&1 &
LEARNER=$!
trap 'kill "$LEARNER" "${ACTOR:-}" 2>/dev/null || true' EXIT
for _ in $(seq 120); do grep -q "Starting learner thread" "$WORK/learner.log" && break; sleep 1; done
"$PY" bench/peer_lerobot.py actor --config_path "$CFG" --output_dir="$WORK/actor" >"$WORK/actor.log" 2>&1 &
ACTOR=$!
sleep "$BUDGET"
kill "$ACTOR" "$LEARNER" 2>/dev/null || true
wait 2>/dev/null || true
"$PY" bench/peer/lerobot_summary.py "$WORK/actor.log" "$WORK/learner.log" "$BUDGET"
