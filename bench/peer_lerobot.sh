#!/usr/bin/env bash
# LeRobot 0.4.4's own SAC / HIL-SERL (learner + actor, two processes over gRPC, as its docs run them) on gym-hil
# PandaPickCube-v0, CPU, with rlft's 50 scripted demos as its offline dataset, for the online budget of rlft's side of
# bench:peer (50 episodes of up to 100 steps); then LeRobot's final policy on 200 held-out seeds (100000...).
#   0. bench/peer/lerobot_steptime.py: ms per env step as LeRobot builds the env and as the actor here does;
#   1. the demos: `rlft collect` with launch/gym_hil.yaml's scripted expert, 50 episodes from seed 0 (what bench:peer
#      trains rlft's BC on), `rlft dataset export --format lerobot` (v3.0), and bench/peer/lerobot_demos.py writes
#      them in LeRobot's layout of gym-hil's state (observation.state 18 + observation.environment_state 3,
#      complementary_info.discrete_penalty) with LeRobot's dataset API: the config's dataset.repo_id/root;
#   2. bench/peer_lerobot.py learner and actor with bench/peer/lerobot_gym_hil_sac.json until the actor has finished
#      EPISODES episodes (or MAX_SECONDS passed); the learner then saves its policy;
#   3. bench/peer/lerobot_summary.py (actor episodes, learner updates) and bench/peer/lerobot_eval.py (held-out).
# The actor's env is built without rendering (bench/peer_lerobot.py says exactly how and why); the rest is LeRobot's.
#
# Setup (a separate venv: LeRobot pins torch<2.11, the project runs 2.13):
#   python3 -m venv .venv-lerobot
#   .venv-lerobot/bin/pip install --no-deps --only-binary=:all: --no-binary=evdev -r bench/peer/lerobot-requirements.txt
# and the project's own setup (node scripts/setup-python.mjs: gym-hil aside for rlft's collect).
# Usage: bench/peer_lerobot.sh [EPISODES=50] [MAX_SECONDS=2400] [EVAL_EPISODES=200]
#   (env: LEROBOT_PYTHON, default .venv-lerobot/bin/python; RLFT_GYM_HIL_PATH, default .venv/peers/gym-hil-<version>)
set -euo pipefail
cd "$(dirname "$0")/.."
EPISODES="${1:-50}"
MAX_SECONDS="${2:-2400}"
EVAL="${3:-200}"
PY="${LEROBOT_PYTHON:-.venv-lerobot/bin/python}"
CFG=bench/peer/lerobot_gym_hil_sac.json
WORK=bench/work/lerobot
export MUJOCO_GL="${MUJOCO_GL:-osmesa}"
# One torch thread per process: learner and actor share 2 cores here, and torch's default (one per core in each)
# oversubscribes them (an SAC update of LeRobot's config measured ~0.3-3 s with 2 threads, ~0.15-0.2 s with 1).
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
[ -x "$PY" ] || { echo "bench/peer_lerobot.sh needs LeRobot 0.4.4's venv at $PY: create it as the header of this script says, or set LEROBOT_PYTHON." >&2; exit 1; }
GYM_HIL="${RLFT_GYM_HIL_PATH:-$PWD/.venv/peers/gym-hil-$(sed -n 's/^gym-hil==//p' learner/peers-aside.txt)}"
[ -d "$GYM_HIL" ] || { echo "bench/peer_lerobot.sh needs gym-hil for rlft's collect at $GYM_HIL: run node scripts/setup-python.mjs, or set RLFT_GYM_HIL_PATH." >&2; exit 1; }
rm -rf "$WORK"; mkdir -p "$WORK/demos"
T0=$(date +%s)
# What rendering costs per step (the reason the actor's env renders nothing): LeRobot's env against the actor's.
"$PY" bench/peer/lerobot_steptime.py 2>/dev/null | tee "$WORK/steptime.json"

PYTHONPATH="$GYM_HIL" node bin/rlft.js collect --launch launch/gym_hil.yaml --episodes 50 --seed 0 --no-camera --out "$WORK/demos/mcap" | tail -3
node bin/rlft.js dataset export "$WORK/demos/mcap" --format lerobot --no-video --out "$WORK/demos/rlft_export" | tail -1
"$PY" bench/peer/lerobot_demos.py "$WORK/demos/rlft_export" "$WORK/demos/lerobot" 2>&1 | grep -E '^\{|^LeRobot read|Error|error' || true
[ -f "$WORK/demos/lerobot/meta/info.json" ] || { echo "bench/peer_lerobot.sh: the demos were not converted (above)" >&2; exit 1; }

"$PY" bench/peer_lerobot.py learner --config_path "$CFG" --output_dir="$WORK/train" >"$WORK/learner.log" 2>&1 &
LEARNER=$!
trap 'kill "$LEARNER" "${ACTOR:-}" 2>/dev/null || true' EXIT
for _ in $(seq 300); do grep -q "Starting learner thread" "$WORK/learner.log" && break; sleep 1; done
T1=$(date +%s)
"$PY" bench/peer_lerobot.py actor --config_path "$CFG" --output_dir="$WORK/actor" >"$WORK/actor.log" 2>&1 &
ACTOR=$!
while kill -0 "$ACTOR" 2>/dev/null && kill -0 "$LEARNER" 2>/dev/null; do
  [ "$(grep -c 'Episode reward' "$WORK/actor.log" || true)" -ge "$EPISODES" ] && break
  [ $(( $(date +%s) - T1 )) -ge "$MAX_SECONDS" ] && break
  sleep 2
done
T2=$(date +%s)
kill "$ACTOR" 2>/dev/null || true
wait "$ACTOR" 2>/dev/null || true
kill "$LEARNER" 2>/dev/null || true
for _ in $(seq 120); do kill -0 "$LEARNER" 2>/dev/null || break; sleep 1; done
wait "$LEARNER" 2>/dev/null || true
trap - EXIT
"$PY" bench/peer/lerobot_summary.py "$WORK/actor.log" "$WORK/learner.log" "$((T2 - T1))" | tee "$WORK/summary.json"
printf '{"commit": "%s", "date": "%s", "episode_budget": %s, "max_seconds": %s, "eval_episodes": %s, "online_seconds": %s, "omp_num_threads": "%s"}\n' \
  "$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . 2>/dev/null || echo -dirty)" "$(date -u +%FT%TZ)" "$EPISODES" "$MAX_SECONDS" "$EVAL" "$((T2 - T1))" "$OMP_NUM_THREADS" >"$WORK/run.json"
MODEL="$WORK/train/final/pretrained_model"
[ -f "$MODEL/config.json" ] || { echo "bench/peer_lerobot.sh: the learner saved no policy (see $WORK/learner.log)" >&2; exit 1; }
"$PY" bench/peer/lerobot_eval.py "$MODEL" "$EVAL" 100000 "$WORK/eval.json" >"$WORK/eval.log" 2>&1 || { tail -5 "$WORK/eval.log" >&2; exit 1; }
grep -E '^\{' "$WORK/eval.log"
echo "bench/peer_lerobot.sh: $EPISODES-episode budget, online phase $((T2 - T1)) s, total $(( $(date +%s) - T0 )) s; results in $WORK/{summary,eval}.json"
