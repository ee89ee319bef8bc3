#!/usr/bin/env bash
# Sets up what is missing, builds lbo and runs the quickstart job on local slots.
# An earlier quickstart run is moved aside (runs/quickstart.<timestamp>), never deleted.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh --target lbo
build/lbo run jobs/examples/quickstart.toml --fresh "$@"
echo
echo "results: runs/quickstart/results.csv (one row per trial); trial files: runs/quickstart/trials/<id>/"
echo "report: $(pwd)/runs/quickstart/report.html (plots of the run; one file, opens offline)"
