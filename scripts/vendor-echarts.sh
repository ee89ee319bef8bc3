#!/usr/bin/env bash
# Refreshes the vendored Apache ECharts that the HTML run report embeds
# (report/assets/vendor/echarts/): fetches the package from the npm registry with
# `npm pack`, checks the tarball against the registry's sha512 integrity, and copies
# dist/echarts.min.js, LICENSE and NOTICE, plus a VERSION file: the version on its first
# line, the tarball's sha512 integrity (as npm reports it) on its second.
#
# Usage: scripts/vendor-echarts.sh [VERSION]   (default 6.1.0)
# Needs npm (and so node) and tar, and access to the npm registry only.
set -euo pipefail

version="${1:-6.1.0}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$root/report/assets/vendor/echarts"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# npm's chatter (config warnings) goes to a log that is shown only when a step fails.
log="$tmp/npm.log"
fail() { cat "$log" >&2 2>/dev/null || true; echo "vendor-echarts: $*" >&2; exit 1; }

integrity="$(npm view "echarts@$version" dist.integrity 2>"$log")" || fail "npm view echarts@$version failed"
case "$integrity" in
  sha512-*) ;;
  *) fail "no sha512 integrity for echarts@$version (got '$integrity')" ;;
esac

tarball="$(cd "$tmp" && npm pack --silent "echarts@$version" 2>"$log" | tail -n 1)" || fail "npm pack failed"
[ -f "$tmp/$tarball" ] || fail "npm pack produced no tarball"

# npm pack checks integrity itself, but VERSION records it, so make sure it is the right one
# (node comes with npm; openssl or xxd may not be installed).
actual="sha512-$(node -e 'const c = require("crypto"), fs = require("fs");
  process.stdout.write(c.createHash("sha512").update(fs.readFileSync(process.argv[1])).digest("base64"));' "$tmp/$tarball")"
if [ "$actual" != "$integrity" ]; then
  echo "vendor-echarts: integrity mismatch: registry $integrity, tarball $actual" >&2
  exit 1
fi

tar -xzf "$tmp/$tarball" -C "$tmp" package/dist/echarts.min.js package/LICENSE package/NOTICE
mkdir -p "$dest"
cp "$tmp/package/dist/echarts.min.js" "$tmp/package/LICENSE" "$tmp/package/NOTICE" "$dest/"
printf '%s\n%s\n' "$version" "$integrity" >"$dest/VERSION"

# The library goes inside a <script> element: a literal "</script" in it would end the
# element early, so the page builder has to escape it. Say so loudly if it appears.
if grep -qi '</script' "$dest/echarts.min.js"; then
  echo "vendor-echarts: WARNING: echarts.min.js contains '</script'; the embedder must escape it" >&2
fi

echo "vendor-echarts: echarts $version -> ${dest#"$root"/} ($(wc -c <"$dest/echarts.min.js") bytes)"
