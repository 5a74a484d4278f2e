#!/usr/bin/env bash
# Install everything the test suite needs, then run it. Used as-is by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
# torch first, pinned: an unpinned torch may pull a multi-GB CUDA build.
"$PY" -m pip install --quiet --disable-pip-version-check "torch==2.13.0"
"$PY" -m pip install --quiet --disable-pip-version-check -e ".[test,verify]"
exec "$PY" -m pytest -q "$@"
