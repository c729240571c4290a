#!/usr/bin/env bash
# Runs the learner's tests with the Python that has torch (Debian's /usr/bin/python3 first).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=$(node --import tsx -e 'import {findPython} from "./cli/python.ts"; console.log(findPython())')
cd learner && exec "$PY" -m pytest -q tests
