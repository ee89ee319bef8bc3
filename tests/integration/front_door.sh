#!/usr/bin/env bash
# The README's two commands build once (issue 31: scripts/test.sh after scripts/quickstart.sh
# configured build/ with other warning flags and rebuilt every library and build/lbo, under
# running jobs). After the whole build that ran these tests, the build step of
# scripts/quickstart.sh, run as it runs it, compiles and links nothing.
source "$(dirname "$0")/common.sh"

[ "$(readlink -f "$(dirname "$LBO_BIN")")" = "$(readlink -f "$REPO/build")" ] \
  || { echo "the tests' build folder is not $REPO/build, which the two commands use: skipped"; exit 0; }
step=$(grep -E '^scripts/build\.sh' "$REPO/scripts/quickstart.sh") || fail "no build step in scripts/quickstart.sh"
# Its configuration for real (as the same settings, it changes nothing), its build as make's dry
# run (-n): the other tests use build/lbo meanwhile, and a developer's tree may hold a newer
# commit than the build (the version stamp), which is not what this checks.
before=$(stat -c %Y "$LBO_BIN")
(cd "$REPO" && eval "$step -- -n") > "$SCRATCH/build.log" 2>&1 || { cat "$SCRATCH/build.log"; fail "$step failed"; }
if grep -E 'Building (CXX|C) object|Linking CXX' "$SCRATCH/build.log"; then
  fail "'$step' after the whole build would rebuild the above"
fi
[ "$(stat -c %Y "$LBO_BIN")" = "$before" ] || fail "'$step' replaced $LBO_BIN"
echo "quickstart's build step after the tests' build: nothing to build"
