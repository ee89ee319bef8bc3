#!/usr/bin/env bash
# Bad job files: `lbo validate` and `lbo run` exit 2, print file:line:column, key and problem,
# and write nothing.
source "$(dirname "$0")/common.sh"

good() {
  cat <<JOB
name = "bad"
[objective]
command = ["$LBO_TEST_OBJECTIVE", "{params_file}"]
direction = "maximize"
[space]
x = { type = "float", low = 0, high = 1 }
[[tasks]]
name = "a"
budget = 3
JOB
}

# check NAME EXPECTED_MESSAGE SED_EXPRESSION: the good job edited by sed must fail with the message.
check() {
  local name=$1 expected=$2 edit=$3 job="$SCRATCH/$1.toml"
  good | sed "$edit" > "$job"
  for command in "validate" "run --run-root $SCRATCH/runs-$name"; do
    set +e
    "$LBO_BIN" $command "$job" > "$SCRATCH/out" 2> "$SCRATCH/err"
    local status=$?
    set -e
    [ "$status" -eq 2 ] || { cat "$SCRATCH/err"; fail "$name: lbo $command exited $status, expected 2"; }
    grep -qF -- "$expected" "$SCRATCH/err" || { cat "$SCRATCH/err"; fail "$name: message lacks '$expected'"; }
    [ ! -e "$SCRATCH/runs-$name" ] || fail "$name: lbo $command wrote $SCRATCH/runs-$name"
  done
}

# The good job passes.
good > "$SCRATCH/good.toml"
"$LBO_BIN" validate "$SCRATCH/good.toml" | grep -q ": ok:" || fail "the good job does not validate"

check syntax             "syntax.toml:4:"                                      's/^direction = "maximize"$/direction = = "maximize"/'
check unknown_key        'unknown_key.toml:5:1: objective.retires: unknown key; did you mean "retries"?' '/^direction/a retires = 1'
check wrong_type         'wrong_type.toml:9:10: tasks[0].budget: must be an integer, not a string' 's/budget = 3/budget = "3"/'
check low_not_below_high 'space.x: low (1.0) must be < high (0.0)'            's/low = 0, high = 1/low = 1, high = 0/'
check log_needs_positive 'space.x: log = true needs low > 0'                  's/high = 1 }/high = 1, log = true }/'
check empty_choices      'empty_choices.toml:7:'                              '/^x = /a y = { type = "categorical", choices = [] }'
check empty_choices_msg  'space.y.choices: must be a non-empty array of strings' '/^x = /a y = { type = "categorical", choices = [] }'
check when_unknown_param 'space.x.when.model: no parameter is called "model"' 's/high = 1 }/high = 1, when = { model = "a" } }/'
check when_unknown_value 'space.x.when.m: "c" is not a choice of "m"; choices: "a", "b"' '/^\[space\]/a m = { type = "categorical", choices = ["a", "b"] }
s/high = 1 }/high = 1, when = { m = "c" } }/'
check duplicate_task     'tasks[1].name: duplicate task name "a"'             '$a [[tasks]]\nname = "a"\nbudget = 1'
check budget_below_one   'budget_below_one.toml:9:10: tasks[0].budget: must be between 1 and 100000000 (got 0)' 's/budget = 3/budget = 0/'
check missing_command    'objective.command: missing'                         '/^command/d'
check unknown_placeholder 'objective.command[1]: unknown placeholder {param_file}' 's/{params_file}/{param_file}/'
# Edge inputs that validated and then failed every run (issue 18).
check budget_above_cap   'budget_above_cap.toml:9:10: tasks[0].budget: must be between 1 and 100000000 (got 100000001)' 's/budget = 3/budget = 100000001/'
check int64_extremes     'int64_extremes.toml:7:27: space.n: int bounds must lie within -9007199254740992 and 9007199254740992' '/^x = /a n = { type = "int", low = -9223372036854775808, high = 9223372036854775807 }'
check checkpoint_tiny    'checkpoint_tiny.toml:2:22: checkpoint_every_s: must be a number of seconds between 0.1 and 1e9' '1a checkpoint_every_s = 1e-300'
printf '#!/usr/bin/pyhton3\nprint(1)\n' > "$SCRATCH/train.sh"
chmod +x "$SCRATCH/train.sh"
check missing_interpreter 'objective.command[0]: "train.sh": its #! interpreter /usr/bin/pyhton3 does not exist' "s|\"$LBO_TEST_OBJECTIVE\"|\"./train.sh\"|"

# A job file that does not exist, and a command line that is wrong.
for args in "validate $SCRATCH/no-such.toml" "run $SCRATCH/no-such.toml" "run" "frobnicate"; do
  set +e
  "$LBO_BIN" $args > /dev/null 2> "$SCRATCH/err"
  status=$?
  set -e
  [ "$status" -eq 2 ] || { cat "$SCRATCH/err"; fail "lbo $args exited $status, expected 2"; }
done
grep -qF "no-such.toml: cannot read the job file" <("$LBO_BIN" validate "$SCRATCH/no-such.toml" 2>&1) \
  || fail "no message for a missing job file"

# cli NAME EXPECTED_MESSAGE ARGS...: lbo ARGS (run from an empty folder) exits 2 within 10 s
# with the message, and writes nothing.
cli() {
  local name=$1 expected=$2 cwd="$SCRATCH/cwd-$1"
  shift 2
  mkdir -p "$cwd"
  set +e
  (cd "$cwd" && timeout 10 "$LBO_BIN" "$@") > "$SCRATCH/out" 2> "$SCRATCH/err"
  local status=$?
  set -e
  [ "$status" -eq 2 ] || { cat "$SCRATCH/err"; fail "$name: lbo $* exited $status, expected 2"; }
  grep -qF -- "$expected" "$SCRATCH/err" || { cat "$SCRATCH/err"; fail "$name: message lacks '$expected'"; }
  [ -z "$(ls -A "$cwd")" ] || fail "$name: lbo $* wrote $(ls -A "$cwd")"
}
cli checkpoint_nan   "--checkpoint-every: must be a number of seconds between 0.1 and 1e9 (got nan)" \
  run --checkpoint-every nan "$SCRATCH/good.toml"
cli checkpoint_tiny  "--checkpoint-every: must be a number of seconds between 0.1 and 1e9 (got 1e-300)" \
  run --checkpoint-every 1e-300 "$SCRATCH/good.toml"
cli run_root_empty   "--run-root: empty; name the folder that holds run directories" \
  run --run-root "" "$SCRATCH/good.toml"
cli run_root_file    "--run-root $SCRATCH/good.toml: not a folder" run --run-root "$SCRATCH/good.toml" "$SCRATCH/good.toml"
cli local_slots      "--local-slots" run --local-slots 0 "$SCRATCH/good.toml"
cli folder_job       "$SCRATCH: not a regular file but a folder" validate "$SCRATCH"
cli folder_job_run   "$SCRATCH: not a regular file but a folder" run "$SCRATCH"
cli dev_zero         "/dev/zero: not a regular file" validate /dev/zero
cli dev_zero_run     "/dev/zero: not a regular file" run /dev/zero
{ good; head -c $((16 * 1024 * 1024)) /dev/zero | tr '\0' '#'; } > "$SCRATCH/big.toml"
cli big_job          "big.toml: larger than 16 MiB" validate "$SCRATCH/big.toml"

echo "bad input ok"
