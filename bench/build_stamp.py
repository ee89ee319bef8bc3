"""Ties a folder of cached benchmark results to the lbo build that made them (bench/transfer,
bench/fidelity). Their caches are keyed by task, method and seed, not by the build: on 2026-12-07
a cache that held another build's runs put figures in a log that the build it named did not
reproduce. Standard library."""
import hashlib
import os
import sys

STAMP = "lbo-build.txt"


def claim(out, lbo):
    """Records the SHA-256 of the `lbo` binary in out/lbo-build.txt on the folder's first use; exits
    with status 2 when the folder holds another build's results. A folder from before the stamp
    is claimed by the first build that uses it."""
    if not os.path.isfile(lbo):
        print(f"{lbo}: no lbo binary there; build it (scripts/build.sh) or set LBO_BUILD_DIR", file=sys.stderr)
        sys.exit(2)
    with open(lbo, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    os.makedirs(out, exist_ok=True)
    stamp = os.path.join(out, STAMP)
    if os.path.exists(stamp):
        with open(stamp) as f:
            held = (f.read().split() or [""])[0]
        if held != digest:
            print(f"{stamp}: {out} holds the results of another lbo build (SHA-256 {held[:12]}; {lbo} is "
                  f"{digest[:12]}): give this build its own --out, or delete the folder", file=sys.stderr)
            sys.exit(2)
        return
    with open(stamp, "w") as f:
        f.write(f"{digest} {os.path.abspath(lbo)}\n")
