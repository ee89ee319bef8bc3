#!/usr/bin/env bash
# cmake --install into a scratch prefix: the installed lbo runs, the cluster scripts point at it,
# the examples validate, and a project using find_package(lbo) builds and runs against it.
#   install_consumer.sh BUILD_DIR CMAKE SOURCE_DIR
set -euo pipefail
build=${1:?usage: install_consumer.sh BUILD_DIR CMAKE SOURCE_DIR}
cmake=${2:?usage: install_consumer.sh BUILD_DIR CMAKE SOURCE_DIR}
source_dir=${3:?usage: install_consumer.sh BUILD_DIR CMAKE SOURCE_DIR}
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/lbo-install.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
prefix=$SCRATCH/prefix

fail() { echo "FAIL: $*" >&2; exit 1; }

"$cmake" --install "$build" --prefix "$prefix" > "$SCRATCH/install.log" || { cat "$SCRATCH/install.log"; fail "cmake --install"; }

version=$("$prefix/bin/lbo" --version) || fail "the installed lbo does not run"
[[ $version =~ ^lbo\ [0-9]+\.[0-9]+\.[0-9]+ ]] || fail "the installed lbo's --version printed '$version'"
# Built from a git checkout: the version names the commit (with -dirty for local changes).
if commit=$(git -C "$source_dir" rev-parse --short=12 HEAD 2> /dev/null); then
  [[ $version == *"+$commit"* ]] || fail "--version printed '$version', without the commit $commit"
fi
for script in slurm.sbatch pbs.sh; do
  installed=$prefix/share/lbo/$script
  [ -x "$installed" ] || fail "$installed is missing or not executable"
  [ "$(grep -c '^installed_lbo=' "$installed")" -eq 1 ] || fail "$installed: not one installed_lbo= line"
  grep -qx "installed_lbo=$prefix/bin/lbo" "$installed" || fail "$installed: installed_lbo= is not $prefix/bin/lbo"
  bash -n "$installed" || fail "$installed: not valid bash"
done
for f in lboConfig.cmake lboConfigVersion.cmake lboTargets.cmake; do
  [ -f "$prefix/lib/cmake/lbo/$f" ] || fail "lib/cmake/lbo/$f is missing"
done
[ -f "$prefix/include/lbo/surrogate/gp.hpp" ] || fail "the headers are missing"
# The examples' relative paths (objective, datasets) resolve next to the installed job file.
[ -f "$prefix/share/lbo/examples/objectives/train.py" ] || fail "the examples' objective is missing"
"$prefix/bin/lbo" validate "$prefix/share/lbo/examples/quickstart.toml" > /dev/null ||
  fail "the installed quickstart job does not validate"
"$prefix/bin/lbo" validate "$prefix/share/lbo/examples/early_stopping.toml" > /dev/null ||
  fail "the installed early-stopping job does not validate"
# The objectives' Python helper is installed and on the PYTHONPATH of the installed lbo's trials.
[ -f "$prefix/share/lbo/python/lbo_trial.py" ] || fail "share/lbo/python/lbo_trial.py is missing"
mkdir -p "$SCRATCH/helper"
cat > "$SCRATCH/helper/job.toml" <<'JOB'
name = "helper"
[objective]
command = ["python3", "-c", "import lbo_trial; p = lbo_trial.params(); lbo_trial.report(1, p['x']); lbo_trial.result(p['x'])"]
direction = "maximize"
[policy]
surrogate = "random"
[space]
x = { type = "float", low = 0, high = 1 }
[[tasks]]
name = "a"
budget = 2
JOB
(cd "$SCRATCH/helper" && "$prefix/bin/lbo" run job.toml > run.log 2>&1) || { cat "$SCRATCH/helper/run.log"; fail "a run whose objective imports lbo_trial"; }
[ "$(grep -c ',ok,' "$SCRATCH/helper/runs/helper/results.csv")" -eq 2 ] || fail "the helper's trials are not ok"
[ "$(wc -l < "$SCRATCH/helper/runs/helper/reports.csv")" -eq 3 ] || fail "the helper's reports are not in reports.csv"
# Nothing of the tests or benchmarks.
if (cd "$prefix" && find . | grep -Ei 'gtest|gmock|test|bench'); then fail "test or benchmark files were installed"; fi

"$cmake" -S "$source_dir/tests/install/consumer" -B "$SCRATCH/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  > "$SCRATCH/configure.log" 2>&1 || { cat "$SCRATCH/configure.log"; fail "configuring the consumer"; }
"$cmake" --build "$SCRATCH/consumer" > "$SCRATCH/build.log" 2>&1 || { cat "$SCRATCH/build.log"; fail "building the consumer"; }
"$SCRATCH/consumer/lbo_consumer" || fail "the consumer's checks"
"$SCRATCH/consumer/lbo_consumer_version" || fail "the installed libraries' version is not the package's"
echo "install and consumer: ok"
