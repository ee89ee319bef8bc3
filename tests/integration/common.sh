# Shared by the integration scripts: paths to the binaries, a scratch folder, assertions.
set -euo pipefail
: "${LBO_BIN:?set LBO_BIN to the lbo binary (ctest does)}"
: "${LBO_TEST_OBJECTIVE:?set LBO_TEST_OBJECTIVE (ctest does)}"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/lbo-it.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

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
