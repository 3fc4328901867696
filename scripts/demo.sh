#!/usr/bin/env bash
# Set up miner in ./.venv and run `miner build` on a bundled sample repository.
# Needs only Python 3.11+ and git. Output: ./fixtures_out
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e .
samples="$(mktemp -d)"
trap 'rm -rf "$samples"' EXIT
.venv/bin/python scripts/make_sample_repos.py "$samples/repos" > /dev/null
.venv/bin/miner build "$samples/repos/pyledger" --out fixtures_out --force "$@"
