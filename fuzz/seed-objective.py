import json, sys
p = json.load(open(sys.argv[1]))
x = p.get("x", 0.0)
if p.get("c") == "bad":
    sys.exit(3)
print(json.dumps({"objective": (x - 0.3) ** 2, "steps": [x, x * x], "metrics": {"m": x}}))
