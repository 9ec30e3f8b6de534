#!/usr/bin/env python3
"""Times every GradBench workload in testdata/gradbench through `nabla gradbench`.

Usage: python3 gradbench/tools/timings.py target/release/nabla [DATA_DIR] [-- NABLA_FLAGS...]

Flags after `--` go to `nabla gradbench` (e.g. `-- --ad=static`).

Sends one `define` per eval and one `evaluate` per data file (listed in the
data folder's manifest.json) in a single session, and prints, per file, the
eval, function, description, whether it succeeded, and the run time that
nabla reported in its `timings` (the run only, not JSON conversion).
Correctness is checked by crates/nabla/tests/gradbench_data.rs, not here.
"""
import json
import os
import subprocess
import sys


def main():
    args = sys.argv[1:]
    flags = []
    if "--" in args:
        flags = args[args.index("--") + 1:]
        args = args[:args.index("--")]
    nabla = args[0]
    here = os.path.dirname(os.path.abspath(__file__))
    root = args[1] if len(args) > 1 else os.path.join(here, "../../testdata/gradbench")
    manifest = json.load(open(os.path.join(root, "manifest.json")))
    lines, items, next_id = [], {}, 0
    for ev in sorted({e["eval"] for e in manifest}):
        lines.append(json.dumps({"id": next_id, "kind": "define", "module": ev}))
        next_id += 1
    for e in manifest:
        data = json.load(open(os.path.join(root, e["file"])))
        lines.append(json.dumps({"id": next_id, "kind": "evaluate", "module": e["eval"],
                                 "function": e["function"], "input": data["input"]}))
        items[next_id] = e
        next_id += 1
    out = subprocess.run([nabla, "gradbench", *flags], input="\n".join(lines) + "\n",
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        r = json.loads(line)
        e = items.get(r["id"])
        if e is None:
            continue
        ns = sum(t["nanoseconds"] for t in r.get("timings", []))
        status = "ok" if r.get("success") else "FAIL " + str(r.get("error"))
        print(f"{e['eval']:9} {e['function']:10} {str(e['description']):24} {status:4} {ns / 1e6:10.1f} ms")


if __name__ == "__main__":
    main()
