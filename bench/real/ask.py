"""The bench/real objective command: send one evaluation to a models.py server, print its result.

    python3 -S -E ask.py --socket PATH --data PATH --params PATH [--oom] [--result tradeoff]

It follows the lbo objective protocol (last stdout line is the result JSON; exit 2 for invalid
params, 1 for any other failure) and imports only the standard library, so a trial costs the
fits and not the 0.6 s of importing numpy, scikit-learn and XGBoost (see models.py).
"""

import argparse
import json
import socket
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--socket", required=True, help="the socket of `models.py serve`")
    parser.add_argument("--data", required=True)
    parser.add_argument("--params", required=True)
    parser.add_argument("--oom", action="store_true", help="too large models fail (models.too_large)")
    parser.add_argument("--result", default="objective", choices=("objective", "tradeoff"),
                        help="tradeoff: {\"auc\", \"fit_s\"} for two objectives (models.evaluate)")
    args = parser.parse_args()
    with open(args.params) as f:
        params = json.load(f)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.connect(args.socket)
            with connection.makefile("rw") as stream:
                stream.write(json.dumps({"data": args.data, "params": params, "oom": args.oom,
                                         "result": args.result}) + "\n")
                stream.flush()
                reply = stream.readline()
    except OSError as e:
        print(f"ask.py: no models.py server at {args.socket} ({e}); "
              f"start one with: /usr/bin/python3 models.py serve --socket {args.socket}",
              file=sys.stderr)
        return 1
    if not reply:
        print("ask.py: the server's child ended without an answer", file=sys.stderr)
        return 1
    answer = json.loads(reply)
    if answer["status"] != 0:
        print(f"ask.py: {answer['result']}", file=sys.stderr)
        return answer["status"]
    print(json.dumps(answer["result"]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
