# Shared by the integration scripts: paths to the binaries, a scratch folder, assertions.
set -euo pipefail
: "${LBO_BIN:?set LBO_BIN to the lbo binary (ctest does)}"
: "${LBO_TEST_OBJECTIVE:?set LBO_TEST_OBJECTIVE (ctest does)}"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/lbo-it.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

wait_for_rows() {  # wait_for_rows CSV N: until the CSV has N data rows (at most 60 s)
  for _ in $(seq 600); do
    [ -f "$1" ] && [ "$(($(wc -l < "$1") - 1))" -ge "$2" ] && return 0
    sleep 0.1
  done
  fail "no $2 rows in $1"
}

# Objective processes of runs under the scratch folder (found by their LBO_WORKDIR), and their
# children. One grep reads every environment, so the count is taken within milliseconds even
# on a busy machine, and a trial of a second or two cannot end unseen during the search.
objectives_left() {
  { grep -lzs "^LBO_WORKDIR=$SCRATCH/" /proc/[0-9]*/environ || true; } | wc -l
}

# The committed results in a results.csv, sorted: trial,task,status,objective, the parameters
# and what follows them, but not attempts, duration_s, worker, started, finished, rank, slot, cores or gpus
# (comparable.py), which a resume may change.
committed() { python3 "$HERE/comparable.py" "$1" --no-header | sort; }

# keeps OLD NEW WHAT: every committed result of OLD is in NEW, unchanged; else it fails naming
# the rows of OLD that NEW lacks and what NEW has of the same trials.
keeps() {
  [ -n "$1" ] || return 0
  local lost
  lost=$(comm -23 <(echo "$1") <(echo "$2") || true)
  [ -n "$lost" ] || return 0
  {
    echo "rows of the earlier results.csv that the later one lacks (at most 5 of $(echo "$lost" | wc -l)):"
    echo "$lost" | head -5 | sed 's/^/  before: /'
    echo "$lost" | head -5 | cut -d, -f1 | while read -r trial; do
      echo "$2" | grep "^$trial," | sed 's/^/  after:  /' || echo "  after:  (no row of trial $trial)"
    done
  } >&2
  fail "$3: committed results changed or vanished"
}

# A job running the test objective: outcomes drawn from ok/fail/crash, retries = 1, 2 tasks.
write_test_job() {  # write_test_job FILE SLOTS_PER_RANK
  cat > "$1" <<JOB
name = "it"
seed = 11
[objective]
command = ["$LBO_TEST_OBJECTIVE", "--via", "file"]
direction = "minimize"
timeout_s = 30
retries = 1
[workers]
local_slots = 3
slots_per_rank = ${2:-1}
[space]
x = { type = "float", low = -1, high = 1 }
outcome = { type = "categorical", choices = ["ok", "fail", "crash"] }
sleep_ms = { type = "int", low = 0, high = 30 }
[[tasks]]
name = "first"
budget = 20
[[tasks]]
name = "second"
budget = 15
JOB
}

# PATH without the folders that hold an lbo, to check where the cluster scripts find one.
path_without_lbo() {
  local dir dirs others=()
  IFS=: read -r -a dirs <<< "$PATH"
  for dir in "${dirs[@]}"; do [ -x "$dir/lbo" ] || others+=("$dir"); done
  (IFS=:; echo "${others[*]}")
}
