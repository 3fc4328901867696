#!/usr/bin/env bash
# Set up miner with its test extras in ./.venv, check lint and types, and run the whole test suite.
# Needs only Python 3.11+ and git.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[test]"
# Lint (with import order) and types first: a failure names the file and line.
.venv/bin/ruff check miner tests scripts
.venv/bin/ruff format --check miner tests scripts
.venv/bin/mypy miner tests scripts
exec .venv/bin/python -m pytest -q "$@"
