#!/usr/bin/env bash
# Install everything the test suite needs, then run it. Used as-is by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
# torch first, pinned, and its CPU build: PyPI's torch for Linux is a CUDA build of several GB.
# A torch 2.13.0 that is installed already (CPU or CUDA) is kept.
if ! "$PY" -c 'import sys, torch; sys.exit(torch.__version__.split("+")[0] != "2.13.0")' 2>/dev/null; then
    "$PY" -m pip install --quiet --disable-pip-version-check "torch==2.13.0" \
        --extra-index-url https://download.pytorch.org/whl/cpu
fi
"$PY" -m pip install --quiet --disable-pip-version-check -e ".[test,verify]"
exec "$PY" -m pytest -q "$@"
