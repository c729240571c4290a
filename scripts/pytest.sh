#!/usr/bin/env bash
# Runs the learner's tests with the project's interpreter ($RLFT_PYTHON or .venv, made on first use).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=$(node --import tsx -e 'import {ensurePython} from "./app/python.ts"; console.log(ensurePython())')
cd learner && exec "$PY" -m pytest -q tests
