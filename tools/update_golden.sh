#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Rewrites the golden results (tests/golden/): the CLI's stats.json of every sample trace and
# of a 100k-task synthetic trace under the four policies, and every Python SIM result of the
# test_sim_* tests. A deliberate step: run it after a change that is meant to move results,
# then review `git diff tests/golden` and commit the goldens with that change.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD_DIR="${BUILD_DIR:-build}" tools/setup.sh >/dev/null
/usr/bin/python3 tests/golden/golden.py update "${BUILD_DIR:-build}/tools/pypto-sim" "$ROOT"
PYPTO_GOLDEN_UPDATE=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/frontend -k "sim" >/dev/null
echo "update_golden: wrote tests/golden/python_sim.json; review with: git diff --stat tests/golden"
