#!/usr/bin/env bash
# Set up (see scripts/setup.sh --test) and run every check: lint, types, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
.venv/bin/ruff check
.venv/bin/mypy
# Every test runs here: a test skipped for a missing tool fails the run (tests/conftest.py).
FABRICGEN_TEST_STRICT=1 .venv/bin/pytest "$@"
