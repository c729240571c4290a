#!/usr/bin/env bash
# Runs the learner's tests, then the interop tests with vendors' clients (test/peers: dynamixel-sdk, scservo_sdk,
# ur_rtde against rlft's simulators), with the project's interpreter ($RLFT_PYTHON or .venv, made on first use).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=$(node --import tsx -e 'import {ensurePython} from "./app/python.ts"; console.log(ensurePython())')
(cd learner && "$PY" -m pytest -q tests)
exec "$PY" -m pytest -q -p no:cacheprovider test/peers
