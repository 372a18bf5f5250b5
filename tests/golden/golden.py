#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Golden regression test of the simulator's results.

Runs `pypto-sim run` on every sample trace and on a 100k-task synthetic trace under the four
built-in policies (and two runs of parameterised policies) and compares each stats.json, field
by field, with the reviewed copy in tests/golden/cli/. Wall-clock fields are left out (they are the only fields allowed to differ
between two runs of the same input).

    golden.py check  PYPTO_SIM ROOT     # exit 1 and list every differing field
    golden.py update PYPTO_SIM ROOT     # rewrite the goldens (a deliberate, reviewed step)

`tools/update_golden.sh` updates these and the Python SIM goldens (tests/golden/python_sim.json)
in one step. Standard library only, so it runs under any python3.
"""

import json
import os
import subprocess
import sys
import tempfile

# Fields that hold wall-clock measurements: never compared, never stored.
WALL_FIELDS = {"wall_s", "tasks_per_s"}

SAMPLES = "traces/samples"
POLICIES = ["fifo", "l2_affinity", "fair", "l2_fair"]
SYNTHETIC = {"name": "mix100k", "gen": ["--shape", "mix", "--tasks", "100000", "--seed", "7"]}


def cases():
    """(name, trace path relative to ROOT or None for the synthetic one, extra run flags)."""
    out = []
    for pol in POLICIES:
        out.append((f"dyn_topo_{pol}", f"{SAMPLES}/dyn_topo.txt",
                    ["--prof", f"{SAMPLES}/tilefwk_L1_prof_data.json"], pol))
        out.append((f"topo_json_{pol}", f"{SAMPLES}/topo.json",
                    ["--prof", f"{SAMPLES}/tilefwk_L1_prof_data.json"], pol))
        out.append((f"fixed_task_topo_{pol}", f"{SAMPLES}/fixed_task_topo.json", [], pol))
        out.append((f"pipeline_{pol}", f"{SAMPLES}/pipeline.ndjson", [], pol))
        out.append((f"{SYNTHETIC['name']}_{pol}", None, [], pol))
    # The sample recording drawn as PyPTO's merged swimlane: the same replay as dyn_topo_fifo.
    out.append(("merged_swimlane_fifo", f"{SAMPLES}/merged_swimlane.json", [], "fifo"))
    # Policies that declare parameters: stats.json records every one with its value.
    out.append(("pipeline_random_seed3", f"{SAMPLES}/pipeline.ndjson",
                ["--policy-param", "seed=3"], "random"))
    out.append(("fixed_task_topo_work_stealing", f"{SAMPLES}/fixed_task_topo.json",
                ["--policy-param", "min_victim_staged=2"], "work_stealing"))
    return out


def strip_wall(value):
    """The stats without wall-clock fields (recursively)."""
    if isinstance(value, dict):
        return {k: strip_wall(v) for k, v in value.items() if k not in WALL_FIELDS}
    if isinstance(value, list):
        return [strip_wall(v) for v in value]
    return value


def diff(expected, actual, path=""):
    """Every differing field as 'path: expected -> actual' lines."""
    out = []
    if isinstance(expected, dict) and isinstance(actual, dict):
        for k in sorted(set(expected) | set(actual)):
            p = f"{path}.{k}" if path else k
            if k not in actual:
                out.append(f"{p}: missing (golden has {json.dumps(expected[k])[:80]})")
            elif k not in expected:
                out.append(f"{p}: new field {json.dumps(actual[k])[:80]}")
            else:
                out.extend(diff(expected[k], actual[k], p))
    elif isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            out.append(f"{path}: {len(expected)} entries -> {len(actual)}")
        for i, (e, a) in enumerate(zip(expected, actual)):
            out.extend(diff(e, a, f"{path}[{i}]"))
    elif expected != actual or type(expected) is not type(actual):
        out.append(f"{path}: {json.dumps(expected)} -> {json.dumps(actual)}")
    return out


def run_case(sim, root, tmp, name, trace, flags, policy):
    cwd = root
    if trace is None:
        # Generated into the scratch folder and named relative to it, so that the "source"
        # field is the same in every clone.
        cwd, trace = tmp, SYNTHETIC["name"] + ".ndjson"
        if not os.path.exists(os.path.join(tmp, trace)):
            subprocess.run([sim, "gen", *SYNTHETIC["gen"], "-o", trace], check=True, cwd=tmp)
    out = os.path.join(tmp, name)
    cmd = [sim, "run", trace, *flags, "--device-sched-mode", policy, "-q", "-o", out]
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"golden: {' '.join(cmd)} exited {r.returncode}: {r.stderr.strip()}")
    with open(os.path.join(out, "stats.json"), encoding="utf-8") as f:
        return strip_wall(json.load(f))


def main(argv):
    if len(argv) != 4 or argv[1] not in ("check", "update"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, sim, root = argv[1], os.path.abspath(argv[2]), os.path.abspath(argv[3])
    gold_dir = os.path.join(root, "tests", "golden", "cli")
    os.makedirs(gold_dir, exist_ok=True)
    failures = 0
    with tempfile.TemporaryDirectory(prefix="pypto-golden-") as tmp:
        for name, trace, flags, policy in cases():
            actual = run_case(sim, root, tmp, name, trace, flags, policy)
            path = os.path.join(gold_dir, name + ".json")
            if mode == "update":
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(actual, f, indent=1, sort_keys=True)
                    f.write("\n")
                continue
            if not os.path.exists(path):
                print(f"golden: {name}: no golden file {path} (run tools/update_golden.sh)")
                failures += 1
                continue
            with open(path, encoding="utf-8") as f:
                expected = json.load(f)
            lines = diff(expected, actual)
            if lines:
                failures += 1
                print(f"golden: {name}: {len(lines)} field(s) differ from {path}:")
                for line in lines[:40]:
                    print("   ", line)
    if mode == "update":
        print(f"golden: wrote {len(cases())} goldens to {gold_dir}")
        return 0
    print(f"golden: {len(cases()) - failures}/{len(cases())} runs match their goldens")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
