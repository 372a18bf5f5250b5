# SPDX-License-Identifier: Apache-2.0
"""Policy sweeps: the cross product of traces x chips x chip overrides x policies (with their
parameters) x runtime options, run on Dask distributed, one row per point in a CSV table.

Example::

    python -m pypto.sweep SPEC.yaml -o DIR              # local Dask cluster, os.cpu_count() workers
    python -m pypto.sweep SPEC.yaml -o DIR --workers 2
    python -m pypto.sweep SPEC.yaml -o DIR --scheduler tcp://10.0.0.5:8786
    python -m pypto.sweep SPEC.yaml -o DIR --serial     # in this process, no Dask
    python -m pypto.sweep plot DIR [--heatmap OPTION] [--swimlanes fifo,fair]

The spec (YAML, read strictly; relative paths are relative to the spec's folder)::

    traces:                       # required: native traces, or a board recording with its prof
      - traces/samples/pipeline.ndjson
      - {path: traces/samples/dyn_topo.txt, prof: traces/samples/tilefwk_L1_prof_data.json}
    chips: [a2, mychip.yaml]      # presets (pypto-sim config --list) or chip YAML files; [a2]
    set: {l2.ways: [8, 16]}       # swept chip overrides, as pypto-sim run --set
    policies:                     # required
      - fifo
      - {name: random, params: {seed: [1, 2, 3]}}   # a value or a list of values per param
    runtime_options: {launch_sched_aicpu_num: [2, 3]}  # replay options (pypto-sim run --help)
    policy_modules: [mine.py]     # Python files run in every worker first (register_policy)

Point order (and id): traces, chips, set values, policies, parameter values, runtime option
values, the last varying fastest; each list in the order of the spec. DIR/results.csv gets a
row per point as it finishes (flushed to disk), so a stopped sweep resumes where it stopped;
at the end it is rewritten sorted by point id. Two runs of one spec, serial or on any
cluster, give byte-identical tables except the wall_s column.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import difflib
import errno
import hashlib
import io
import itertools
import json
import math
import os
import re
import runpy
import signal
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

OUTPUTS = ["status", "error", "makespan_ns", "util_aic", "util_aiv", "l2_hit_rate",
           "aicpu_busy_ns", "wall_s"]
TOP_KEYS = ["traces", "chips", "set", "policies", "runtime_options", "policy_modules"]


class SpecError(Exception):
    """A spec that cannot be swept: the message names the file, the key, the value and what
    was expected."""


class _Usage(Exception):
    """A sweep folder or command line that cannot be used (exit 2)."""


class _IOFailure(Exception):
    """The sweep folder or the cluster failing under the sweep: an I/O failure (exit 1), as
    for every other command's outputs."""


#: Most points one sweep runs: the grid is counted from the spec's list lengths before any
#: value is checked or any point is built (each point's row and arguments stay in memory).
MAX_POINTS = 100_000

#: Most local Dask workers per CPU (one single-threaded process each).
MAX_WORKERS_PER_CPU = 4


# ---------------------------------------------------------------------------------------------
# The spec


def _native():
    from . import _C
    return _C


def _suggest(word: str, known: Sequence[str]) -> str:
    m = difflib.get_close_matches(str(word), list(known), n=1)
    return f"; did you mean '{m[0]}'?" if m else ""


def _values(v: Any) -> List[Any]:
    """A swept value: a scalar is one value, a list its values."""
    return list(v) if isinstance(v, list) else [v]


def _text(v: Any) -> str:
    """A YAML scalar as the C++ side reads text (--set, --policy-param): true/false for bools."""
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def _no_repeats(key: str, labels: Sequence[Any]) -> None:
    """A value given twice in one list of the spec makes two points of the same inputs (one
    row would replace the other in results.csv): refused, naming both entries. `labels`: a
    label per entry, or (entry key, label) pairs where one entry makes several values."""
    first: Dict[str, str] = {}
    for i, label in enumerate(labels):
        where, label = label if isinstance(label, tuple) else (f"{key}[{i}]", label)
        if label in first:
            raise SpecError(f"{where}: {label!r} repeats {first[label]}; every point of a "
                            "sweep must differ (remove the repeated value)")
        first[label] = where


class Spec:
    """A validated spec: its dimensions, each a list of (column values, call arguments)."""

    def __init__(self, path: str):
        self.path = path
        self.base = os.path.dirname(os.path.abspath(path))
        try:
            import yaml
            # The file rules (a regular file, size, one document, distinct keys) are the C++
            # reader's, shared by every YAML input; PyYAML then gives the values their types.
            _native().check_yaml_file(path, "sweep spec")
            # libyaml's loader where PyYAML has it: the same types, a spec of long grids 20x faster.
            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            with open(path, encoding="utf-8") as f:
                doc = yaml.load(f, Loader=loader)
        except OSError as e:
            raise SpecError(f"{path}: cannot read the spec: {e.strerror}") from None
        except UnicodeDecodeError as e:  # a ValueError too: before the rules' errors
            raise SpecError(f"{path}: not UTF-8 text (byte {e.start}: {e.reason})") from None
        except ValueError as e:  # the rules' message names the file (and line)
            raise SpecError(str(e)) from None
        except yaml.YAMLError as e:
            raise SpecError(f"{path}: not valid YAML: {' '.join(str(e).split())}") from None
        if not isinstance(doc, dict):
            raise SpecError(f"{path}: expected a mapping with the keys {', '.join(TOP_KEYS)}")
        self.doc = doc
        for k in doc:
            if k not in TOP_KEYS:
                self._fail(str(k), None, f"unknown key{_suggest(k, TOP_KEYS)} (known: "
                           f"{', '.join(TOP_KEYS)})")
        self._check_size()
        self.modules = [self._file(f"policy_modules[{i}]", m)
                        for i, m in enumerate(self._list("policy_modules", []))]
        for m in self.modules:
            try:
                _load_modules([self.abspath(m)])
            except Exception as e:  # noqa: BLE001 - the module's own error, reported as such
                self._fail("policy_modules", m, f"running it failed: {_one_line(e)}")
        self.traces = self._traces()
        self.chips = self._chips()
        self.sets = self._sets()
        self.policies = self._policies()
        self.options = self._options()
        canonical = json.dumps({k: doc.get(k) for k in TOP_KEYS}, sort_keys=True, default=str)
        self.sha256 = hashlib.sha256(canonical.encode()).hexdigest()

    def _check_size(self) -> None:
        """Counts the grid from the spec's list lengths, before any value is checked or any
        point built: an empty list anywhere (no point at all) or more than MAX_POINTS points
        is refused at once."""
        def count(key: str, v: Any) -> int:
            if isinstance(v, list) and not v:
                self._fail(key, v, "an empty list makes no point; expected a value or a "
                           "non-empty list of values")
            return len(v) if isinstance(v, list) else 1

        def product(key: str, m: Any) -> int:
            n = 1
            if isinstance(m, dict):
                for k, v in m.items():
                    n *= count(f"{key}.{k}", v)
            return n

        doc = self.doc
        dims = [("traces", len(doc["traces"]) if isinstance(doc.get("traces"), list) else 1),
                ("chips", len(doc["chips"]) if isinstance(doc.get("chips"), list) else 1),
                ("set", product("set", doc.get("set"))),
                ("runtime_options", product("runtime_options", doc.get("runtime_options")))]
        pols = doc.get("policies")
        if isinstance(pols, list):
            n = 0
            for i, p in enumerate(pols):
                params = p.get("params") if isinstance(p, dict) else None
                n += product(f"policies[{i}].params", params)
            dims.append(("policies", n))
        total = 1
        for _, n in dims:
            total *= n
        if total > MAX_POINTS:
            shown = " x ".join(f"{k} {n}" for k, n in dims)
            raise SpecError(f"{self.path}: the grid has {total} points ({shown}), more than the "
                            f"{MAX_POINTS} one sweep runs; split it into several specs")

    def _fail(self, key: str, value: Any, expected: str):
        shown = "" if value is None else f" {value!r}:"
        raise SpecError(f"{self.path}: {key}:{shown} {expected}")

    def _list(self, key: str, default: Optional[list] = None) -> list:
        if key not in self.doc:
            if default is None:
                self._fail(key, None, "missing; expected a non-empty list")
            return default
        v = self.doc[key]
        if not isinstance(v, list) or not v:
            self._fail(key, v, "expected a non-empty list")
        return v

    def _map(self, key: str) -> dict:
        v = self.doc.get(key, {})
        if not isinstance(v, dict):
            self._fail(key, v, "expected a mapping of name: [values]")
        for k, vals in v.items():
            if isinstance(vals, list) and not vals or isinstance(vals, dict) or vals is None:
                self._fail(f"{key}.{k}", vals, "expected a value or a non-empty list of values")
        return v

    def _file(self, key: str, rel: Any) -> str:
        if not isinstance(rel, str) or not rel:
            self._fail(key, rel, "expected a file path")
        if not os.path.isfile(os.path.join(self.base, rel)):
            self._fail(key, rel, f"no such file (relative paths start at {self.base})")
        return rel

    def abspath(self, rel: str) -> str:
        return os.path.join(self.base, rel) if rel else ""

    def _check(self, key: str, value: Any, **kw):
        """Asks the C++ owners (chip config, runtime options, policy registry) about a value."""
        try:
            _native().run_point("", **kw, check_only=True)
        except (ValueError, RuntimeError, TypeError) as e:
            self._fail(key, value, " ".join(str(e).split()))

    def _traces(self) -> List[Tuple[str, str]]:
        out = []
        for i, t in enumerate(self._list("traces")):
            key = f"traces[{i}]"
            if isinstance(t, dict):
                for k in t:
                    if k not in ("path", "prof"):
                        self._fail(f"{key}.{k}", None, f"unknown key{_suggest(k, ['path', 'prof'])}"
                                   " (expected path and optionally prof)")
                out.append((self._file(f"{key}.path", t.get("path")),
                            self._file(f"{key}.prof", t["prof"]) if "prof" in t else ""))
            else:
                out.append((self._file(key, t), ""))
        _no_repeats("traces", [os.path.normpath(self.abspath(t)) + (
            f" --prof {os.path.normpath(self.abspath(p))}" if p else "") for t, p in out])
        return out

    def _chips(self) -> List[Tuple[str, str, str]]:
        """(column value, preset, config file) per chip."""
        presets = list(_native().chips())
        out = []
        for i, c in enumerate(self._list("chips", ["a2"])):
            key = f"chips[{i}]"
            if not isinstance(c, str):
                self._fail(key, c, "expected a chip preset name or a chip YAML file")
            if c in presets:
                out.append((c, c, ""))
            elif c.endswith((".yaml", ".yml")) or "/" in c:
                out.append((c, "", self.abspath(self._file(key, c))))
            else:
                self._fail(key, c, f"not a chip preset{_suggest(c, presets)} (presets: "
                           f"{', '.join(presets)}; or a chip YAML file)")
            self._check(key, c, chip=out[-1][1], config=out[-1][2])
        _no_repeats("chips", [c for c, _, _ in out])
        return out

    def _sets(self) -> List[Tuple[str, List[str]]]:
        out = []
        for k, vals in self._map("set").items():
            texts = [f"{k}={_text(v)}" for v in _values(vals)]
            for v, t in zip(_values(vals), texts):
                for _, preset, config in self.chips:
                    self._check(f"set.{k}", v, chip=preset, config=config, sets=[t])
            _no_repeats(f"set.{k}", [t.split("=", 1)[1] for t in texts])
            out.append((str(k), texts))
        return out

    def _policies(self) -> List[Tuple[str, List[Dict[str, Any]]]]:
        """(name, the parameter combinations) per entry of policies."""
        names = list(_native().policies())
        out = []
        for i, p in enumerate(self._list("policies")):
            key = f"policies[{i}]"
            params: Dict[str, Any] = {}
            if isinstance(p, dict):
                for k in p:
                    if k not in ("name", "params"):
                        self._fail(f"{key}.{k}", None,
                                   f"unknown key{_suggest(k, ['name', 'params'])} (expected name "
                                   "and optionally params)")
                params = p.get("params", {})
                if not isinstance(params, dict):
                    self._fail(f"{key}.params", params, "expected a mapping of parameter: value "
                               "or [values]")
                p = p.get("name")
            if not isinstance(p, str) or p not in names:
                self._fail(key, p, f"not a registered policy{_suggest(p, names)} (pypto-sim "
                           "policies lists them; Python ones come from policy_modules)")
            # Each value on its own (parameters are checked independently): linear in the
            # values, not in their combinations.
            for k, vals in params.items():
                if not isinstance(k, str):
                    self._fail(f"{key}.params", k, "parameter names are plain names")
                if isinstance(vals, dict) or vals is None:
                    self._fail(f"{key}.params.{k}", vals, "expected a value or a non-empty "
                               "list of values")
                for v in _values(vals):
                    self._check(f"{key}.params", {k: v}, runtime={"device_sched_mode": p},
                                params={k: v})
            combos = [dict(zip(params, c))
                      for c in itertools.product(*(_values(v) for v in params.values()))]
            out.append((p, combos))
        _no_repeats("policies", [(f"policies[{i}]",
                                  " ".join([name] + [f"{k}={_text(v)}" for k, v in c.items()]))
                                 for i, (name, combos) in enumerate(out) for c in combos])
        return out

    def _options(self) -> List[Tuple[str, List[Any]]]:
        schema = {s["name"]: s for s in _native().runtime_option_schema()
                  if "replay" in s["acts_on"] and s["type"] != "list[str]"}
        out = []
        for k, vals in self._map("runtime_options").items():
            key = f"runtime_options.{k}"
            if k == "device_sched_mode":
                self._fail(key, None, "the policy is swept with policies:, not here")
            if k not in schema:
                self._fail(key, None, f"not a runtime option that replay acts on"
                           f"{_suggest(k, schema)} (pypto-sim run --help lists them)")
            for v in _values(vals):
                if not isinstance(v, (int, str)) or isinstance(v, bool):
                    self._fail(key, v, "expected a whole number (or a name)")
                self._check(key, v, runtime={k: v})
            _no_repeats(key, [str(v) for v in _values(vals)])
            out.append((str(k), _values(vals)))
        return out

    def columns(self) -> List[str]:
        """The input columns of results.csv."""
        return (["point", "trace", "prof", "chip"] + [f"set:{k}" for k, _ in self.sets] +
                ["policy", "params"] + [k for k, _ in self.options])

    def points(self) -> List[Tuple[Dict[str, str], Dict[str, Any]]]:
        """(the row's input columns, the run_point arguments) per point, in id order."""
        pol = [(name, c) for name, combos in self.policies for c in combos]
        out = []
        for i, ((trace, prof), (chip, preset, config), sets, (policy, params), opts) in enumerate(
                itertools.product(self.traces, self.chips,
                                  itertools.product(*(t for _, t in self.sets)), pol,
                                  itertools.product(*(v for _, v in self.options)))):
            row = {"point": str(i), "trace": trace, "prof": prof, "chip": chip}
            row.update({f"set:{k}": t.split("=", 1)[1] for (k, _), t in zip(self.sets, sets)})
            row["policy"] = policy
            row["params"] = ";".join(f"{k}={_text(v)}" for k, v in params.items())
            row.update({k: str(v) for (k, _), v in zip(self.options, opts)})
            args = dict(path=self.abspath(trace), prof=self.abspath(prof), chip=preset,
                        config=config, sets=list(sets),
                        runtime=dict({k: v for (k, _), v in zip(self.options, opts)},
                                     device_sched_mode=policy), params=params)
            out.append((row, args))
        return out


def _key(row: Dict[str, str], columns: Sequence[str]) -> str:
    """A point's inputs as one string (the point id is not part of it)."""
    return json.dumps([row.get(c, "") for c in columns if c != "point"])


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


# ---------------------------------------------------------------------------------------------
# One point (runs in a worker)

_loaded_modules: set = set()


def _load_modules(paths: Sequence[str]) -> None:
    """Runs each policy module once per process: its register_policy calls make the Python
    policies known to this worker's registry."""
    for p in paths:
        if p not in _loaded_modules:
            _loaded_modules.add(p)
            runpy.run_path(p)


def run_point(args: Dict[str, Any], modules: Sequence[str] = (),
              out_dir: Optional[str] = None) -> Dict[str, str]:
    """Runs one point; returns the output columns. Any exception is the point's failure (its
    error column), never the sweep's."""
    t0 = time.perf_counter()
    try:
        _load_modules(modules)
        s = _native().run_point(**args, out_dir=out_dir or "")
        cores = s["cores"]
        out = {"status": "ok", "error": "", "makespan_ns": str(s["makespan_ns"]),
               "util_aic": str(cores.get("AIC", {}).get("utilization", 0.0)),
               "util_aiv": str(cores.get("AIV", {}).get("utilization", 0.0)),
               "l2_hit_rate": str(s["l2"]["hit_rate"]),
               "aicpu_busy_ns": str(round(sum(t["busy_ns"] for t in s["aicpu"]["threads"]), 3))}
    except Exception as e:  # noqa: BLE001 - recorded in the table, the sweep goes on
        out = dict.fromkeys(OUTPUTS, "")
        out.update(status="failed", error=_one_line(e))
    out["wall_s"] = f"{time.perf_counter() - t0:.4f}"
    return out


# ---------------------------------------------------------------------------------------------
# The table


class Table:
    """DIR/results.csv: rows appended and flushed to disk as points finish; read back on
    resume (a torn last line from a kill is dropped)."""

    def __init__(self, path: str, header: List[str]):
        self.path, self.header = path, header
        self.rows = self._read()
        self._f = open(path, "a", newline="")
        self._w = csv.DictWriter(self._f, header, lineterminator="\n")
        if self._f.tell() == 0:
            self._w.writeheader()

    def _read(self) -> Dict[str, Dict[str, str]]:
        """The rows on disk by point key, the last one of a key winning (a --retry-failed
        rerun comes after the failure)."""
        rows: Dict[str, Dict[str, str]] = {}
        if not os.path.exists(self.path):
            return rows
        with open(self.path, "rb+") as f:
            data = f.read()
            # Said outright: either makes the header read "not this spec's columns".
            if data.startswith(b"\xef\xbb\xbf"):
                raise _Usage(f"{self.path}: starts with a UTF-8 byte order mark (an editor "
                             "saved it); this command writes none: delete it or use another "
                             "-o folder")
            nul = data.find(b"\0")
            if nul >= 0:
                raise _Usage(f"{self.path}: holds a NUL byte at offset {nul}, "
                             "not a sweep table; delete it or use another -o folder")
            if data and not data.endswith(b"\n"):
                f.truncate(data.rfind(b"\n") + 1)
        try:
            with open(self.path, newline="", encoding="utf-8") as f:
                reader = csv.DictReader(f)
                if reader.fieldnames and reader.fieldnames != self.header:
                    raise _Usage(f"{self.path}: its columns are not this spec's; delete it or "
                                 "use another -o folder")
                for r in reader:
                    _check_row(self.path, reader.line_num, r, self.header)
                    rows[_key(r, self.inputs)] = r
        except (csv.Error, UnicodeDecodeError) as e:
            raise _Usage(f"{self.path}: not a sweep table ({' '.join(str(e).split())[:200]}); "
                         "delete it or use another -o folder") from None
        return rows

    @property
    def inputs(self) -> List[str]:
        return self.header[:-len(OUTPUTS)]

    def close(self) -> None:
        self._f.close()

    def append(self, row: Dict[str, str]) -> None:
        self._w.writerow(row)
        self._f.flush()
        os.fsync(self._f.fileno())  # a stopped sweep keeps every finished point
        self.rows[_key(row, self.inputs)] = row

    def finish(self, keys: Sequence[str]) -> None:
        """Rewrites the table as the rows of `keys` (the spec's points), in point-id order,
        atomically. The rows are read back from disk: a Ctrl-C may have come between a row's
        write and its bookkeeping."""
        self._f.close()
        try:  # a second Ctrl-C must not stop the rewrite half-way (it is quick)
            before = [signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)]
        except ValueError:  # not the main thread
            before = []
        try:
            self.rows = self._read()
            tmp = self.path + ".tmp"
            with open(tmp, "w", newline="") as f:
                w = csv.DictWriter(f, self.header, lineterminator="\n")
                w.writeheader()
                for k in keys:
                    if k in self.rows:
                        w.writerow(self.rows[k])
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        finally:
            for s, h in zip((signal.SIGINT, signal.SIGTERM), before):
                signal.signal(s, h)


def _check_row(path: str, line: int, r: Dict[Any, Any], header: Sequence[str]) -> None:
    """A row of results.csv as this command writes it, or a _Usage naming the line: a
    hand-edited or damaged table is refused, not resumed or drawn from."""
    def bad(why: str) -> None:
        raise _Usage(f"{path}:{line}: {why}; not a row this command wrote (delete the table "
                     "or use another -o folder)")
    if None in r:
        bad(f"{len(header) + len(r[None])} fields, the header has {len(header)}")
    missing = [c for c in header if r.get(c) is None]
    if missing:
        bad(f"{len(header) - len(missing)} fields, the header has {len(header)}")
    if "point" in r and not r["point"].isdigit():
        bad(f"point {r['point']!r} is not a point id")
    if r.get("status") not in ("ok", "failed"):
        bad(f"status {r.get('status')!r} is neither ok nor failed")
    if r["status"] == "ok":
        for c in OUTPUTS[2:]:
            try:
                v = float(r[c])
            except ValueError:
                v = math.nan
            if not math.isfinite(v):
                bad(f"{c} {r[c]!r} is not a number")


class Progress:
    """Points done, failed, rate and ETA on stderr: one line redrawn on a terminal, else a
    line every 10 %."""

    def __init__(self, total: int, quiet: bool):
        self.total, self.quiet = total, quiet
        self.tty = sys.stderr.isatty()
        self.t0 = self.last = time.monotonic()
        self.step = 0

    def restart(self) -> None:
        """The rate counts from here (after the cluster's start-up)."""
        self.t0 = time.monotonic()

    def update(self, done: int, failed: int) -> None:
        if self.quiet or self.total == 0:
            return
        now = time.monotonic()
        rate = done / max(now - self.t0, 1e-9)
        eta = _duration((self.total - done) / rate) if done else "?"
        line = (f"sweep: {done}/{self.total} done, {failed} failed, {rate:.1f} points/s, "
                f"ETA {eta}")
        if self.tty:
            if now - self.last >= 0.2 or done == self.total:
                self.last = now
                sys.stderr.write("\r\033[K" + line)
                sys.stderr.flush()
        elif done * 10 // self.total > self.step:
            self.step = done * 10 // self.total
            print(line, file=sys.stderr, flush=True)

    def clear(self) -> None:
        if self.tty and not self.quiet:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _duration(s: float) -> str:
    s = int(math.ceil(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else (
        f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s")


# ---------------------------------------------------------------------------------------------
# Running


def _run_serial(pending, modules, out_dir_of, on_done, ready) -> None:
    ready()
    for pid, args in pending:
        on_done(pid, run_point(args, modules, out_dir_of(pid)))


def _run_dask(pending, modules, out_dir_of, on_done, ready, workers: int, scheduler: str,
              tag: str) -> None:
    import logging
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError as e:
        raise _Usage(f"running on Dask needs the distributed package ({_one_line(e)}); install "
                     "it or run with --serial") from None
    cluster = None
    if scheduler:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError, ValueError) as e:
            raise _IOFailure(f"--scheduler {scheduler}: cannot reach the Dask scheduler "
                             f"({_one_line(e)[:200]})") from None
    else:
        # Worker processes start as sys.executable; inside a program that embeds Python (the
        # pypto-sim CLI) that is not a Python: take the interpreter of this environment.
        if not os.path.basename(sys.executable).startswith("python"):
            import multiprocessing
            multiprocessing.set_executable(os.path.join(sys.prefix, "bin", "python3"))
        # One single-threaded process per core: a point holds one core for its whole run.
        # The scheduler's HTTP server on a free port: the default 8787 taken by another
        # cluster on this machine prints a multi-line warning.
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR,
                               scheduler_kwargs={"dashboard": False,
                                                 "dashboard_address": ":0"})
        client = Client(cluster)
    futures = {}
    try:
        for pid, args in pending:
            f = client.submit(run_point, args, modules, out_dir_of(pid), pure=False,
                              key=f"pypto-sweep-{tag}-{pid}")
            futures[f] = pid
        ready()
        for f in as_completed(futures):
            try:
                out = f.result()
            except Exception as e:  # noqa: BLE001 - a lost worker: the point failed
                out = dict.fromkeys(OUTPUTS, "")
                out.update(status="failed", error=_one_line(e), wall_s="0")
            on_done(futures[f], out)
    finally:
        client.cancel(list(futures))
        client.close()
        if cluster is not None:
            cluster.close()


def _input_files(spec: "Spec") -> List[str]:
    """The files a sweep's results depend on besides the spec: traces, recordings, chip
    files and policy modules (absolute paths, each once)."""
    files = [spec.abspath(t) for t, _ in spec.traces] + [spec.abspath(p) for _, p in spec.traces
                                                          if p]
    files += [c for _, _, c in spec.chips if c] + [spec.abspath(m) for m in spec.modules]
    return list(dict.fromkeys(os.path.normpath(f) for f in files))


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _fingerprints(files: Sequence[str]) -> Dict[str, Dict[str, Any]]:
    out = {}
    for f in files:
        st = os.stat(f)
        out[f] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": _sha256(f)}
    return out


def _check_inputs_unchanged(out: str, old: Dict[str, Any]) -> None:
    """A resumed sweep's inputs are the files its finished points read: one edited since
    (other content, not just a newer time) would mix two versions in one table."""
    for f, was in (old.get("inputs") or {}).items():
        try:
            st = os.stat(f)
        except OSError as e:
            raise _Usage(f"{f}: an input of the sweep in {out} cannot be read now "
                         f"({e.strerror}); use another -o folder or delete this one") from None
        if st.st_size == was.get("size") and st.st_mtime_ns == was.get("mtime_ns"):
            continue
        if st.st_size != was.get("size") or _sha256(f) != was.get("sha256"):
            raise _Usage(f"{f} changed since the sweep in {out} began (its finished points read "
                         "the old file, the rest would read the new one); use another -o "
                         "folder, or delete this one to start over")


def _write_json(path: str, doc: Dict[str, Any]) -> None:
    """Writes `doc` complete or not at all (a temporary renamed over `path`)."""
    tmp = os.path.join(os.path.dirname(path) or ".",
                       f".{os.path.basename(path)}.tmp.{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _sweep(a: argparse.Namespace) -> int:
    spec = Spec(a.spec)
    points = spec.points()
    header = spec.columns() + OUTPUTS
    # The sweep folder is an output like any other: a path that cannot hold it is an I/O
    # failure (exit 1), as for pypto-sim run -o.
    if os.path.exists(a.out) and not os.path.isdir(a.out):
        raise _IOFailure(f"-o {a.out}: is a file, not a folder; the sweep folder holds "
                         "results.csv and sweep.json")
    meta_path = os.path.join(a.out, "sweep.json")
    old = None
    if os.path.exists(meta_path):
        try:
            with open(meta_path, encoding="utf-8") as f:
                old = json.load(f)
        except (OSError, ValueError) as e:
            raise _Usage(f"{meta_path}: cannot be read as a sweep's sweep.json "
                         f"({' '.join(str(e).split())[:200]}); use another -o folder or delete "
                         "this one") from None
        if not isinstance(old, dict) or old.get("schema") != "pypto-sweep/1":
            raise _Usage(f"{meta_path}: not a sweep.json this command wrote; use another -o "
                         "folder or delete this one")
        if old.get("spec_sha256") != spec.sha256:
            raise _Usage(f"{a.out} holds the sweep of another spec ({old.get('spec')}, "
                         f"sha256 {old.get('spec_sha256', '?')[:12]}); results of different "
                         "specs are not mixed: use another -o folder or delete this one")
        _check_inputs_unchanged(a.out, old)
    elif os.path.exists(os.path.join(a.out, "results.csv")):
        raise _Usage(f"{a.out}/results.csv exists but {meta_path} does not: not a sweep folder "
                     "this command wrote; use another -o folder")
    meta = {"schema": "pypto-sweep/1", "spec": os.path.abspath(a.spec),
            "spec_sha256": spec.sha256, "points": len(points), "columns": header,
            "inputs": old.get("inputs") if old and old.get("inputs") else
            _fingerprints(_input_files(spec))}
    made = not os.path.exists(a.out)
    results_path = os.path.join(a.out, "results.csv")
    new_table = not os.path.exists(results_path)
    def discard() -> None:
        """Nothing of a sweep that could not start is left: what this run made goes."""
        for path, ours in ((results_path, new_table), (meta_path, old is None)):
            if ours and os.path.exists(path):
                os.unlink(path)
        if made and os.path.isdir(a.out) and not os.listdir(a.out):
            os.rmdir(a.out)

    try:
        os.makedirs(a.out, exist_ok=True)
        _write_json(meta_path, meta)
        table = Table(results_path, header)
    except OSError as e:
        discard()
        where = e.filename or a.out
        raise _IOFailure(f"-o {a.out}: cannot write {where} ({e.strerror or e}); nothing "
                         "written") from None
    keys = [_key(row, spec.columns()) for row, _ in points]
    pending, inputs = [], {}
    for (row, args), k in zip(points, keys):
        old = table.rows.get(k)
        if old is None or (a.retry_failed and old["status"] != "ok"):
            pending.append((int(row["point"]), args))
            inputs[int(row["point"])] = row
    if a.limit is not None:
        pending = pending[:a.limit]
    if not a.quiet:
        print(f"sweep: {len(points)} points, {len(points) - len(pending)} already done, running "
              f"{len(pending)}", file=sys.stderr, flush=True)

    def out_dir_of(pid: int) -> Optional[str]:
        return os.path.join(os.path.abspath(a.out), "points", str(pid)) if a.keep_reports else None

    bar = Progress(len(pending), a.quiet)
    counts = {"done": 0, "failed": 0}

    def on_done(pid: int, out: Dict[str, str]) -> None:
        table.append({**inputs[pid], **out})
        counts["done"] += 1
        counts["failed"] += out["status"] != "ok"
        bar.update(counts["done"], counts["failed"])

    modules = [spec.abspath(m) for m in spec.modules]
    t0 = time.monotonic()
    interrupted = False
    try:
        if a.serial or not pending:  # nothing to run: no cluster to start
            _run_serial(pending, modules, out_dir_of, on_done, bar.restart)
        else:
            _run_dask(pending, modules, out_dir_of, on_done, bar.restart,
                      a.workers or os.cpu_count() or 1, a.scheduler, spec.sha256[:12])
    except KeyboardInterrupt:
        interrupted = True
    except (_IOFailure, _Usage):  # the cluster could not be used: no point ran
        table.close()
        if counts["done"] == 0:
            discard()
        raise
    bar.clear()
    table.finish(keys)
    have = [table.rows[k] for k in keys if k in table.rows]
    failed = sum(1 for r in have if r["status"] != "ok")
    results = os.path.join(a.out, "results.csv")
    if interrupted:
        print(f"sweep: interrupted; {results} holds {len(have)} of {len(points)} points, run "
              "the same command again to resume", file=sys.stderr)
        return 130
    if not a.quiet or failed:  # exit 1 always says why, -q or not
        print(f"sweep: {counts['done']} points run in {time.monotonic() - t0:.1f} s; "
              f"{results} holds {len(have)} of {len(points)} points, {failed} failed",
              file=sys.stderr)
    return 1 if failed else 0


class _ArgumentParser(argparse.ArgumentParser):
    """argparse with the CLI's rule for a bad command line: one line on stderr, exit 2 (not
    the usage block)."""

    def error(self, message: str):
        print(f"{self.prog}: {message} ('{self.prog} --help' lists the options)",
              file=sys.stderr)
        raise SystemExit(2)


def _parser() -> argparse.ArgumentParser:
    p = _ArgumentParser(
        prog="pypto-sim sweep",
        description="Run the cross product of a sweep spec (see pypto/sweep.py) on Dask; "
        "'pypto-sim sweep plot DIR' draws its pictures.")
    p.add_argument("spec", help="sweep spec YAML")
    p.add_argument("-o", "--out", required=True, help="sweep folder (results.csv, sweep.json)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--workers", type=int, help="local Dask workers (default: the CPU count)")
    mode.add_argument("--scheduler", default="", help="an existing Dask cluster, tcp://HOST:PORT "
                      "(its workers must import pypto)")
    mode.add_argument("--serial", action="store_true", help="run in this process, without Dask")
    p.add_argument("--keep-reports", action="store_true",
                   help="write each point's stats.json, trace.json, swim.json to DIR/points/ID/")
    p.add_argument("--retry-failed", action="store_true", help="rerun the failed points too")
    p.add_argument("--limit", type=int, help="run at most this many of the remaining points")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress, no summary")
    return p


@contextlib.contextmanager
def _interrupt_on_term():
    """SIGTERM stops a sweep as Ctrl-C does (what finished is kept, exit 130), as it stops
    pypto-sim run; the caller's handler is back afterwards."""
    def stop(signum, frame):
        raise KeyboardInterrupt

    try:
        before = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread: leave the signals to the embedding program
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def main(argv: List[str]) -> int:
    """``pypto-sim sweep``: exit 0 when every point is ok, 1 when one failed, 2 for a bad spec
    or command line, 130 when interrupted."""
    if argv[:1] == ["plot"]:
        return plot_main(argv[1:])
    p = _parser()
    try:
        a = p.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0) and 2
    if a.workers is not None and a.workers < 1:
        print(f"pypto-sim sweep: --workers {a.workers}: expected a whole number >= 1",
              file=sys.stderr)
        return 2
    if a.workers is not None and a.workers > MAX_WORKERS_PER_CPU * (os.cpu_count() or 1):
        print(f"pypto-sim sweep: --workers {a.workers}: more than {MAX_WORKERS_PER_CPU} per CPU "
              f"of this machine ({os.cpu_count() or 1}); for a larger cluster, start one and "
              "give --scheduler", file=sys.stderr)
        return 2
    if a.scheduler and not re.fullmatch(r"(tcp|tls|ucx|ws|wss|inproc)://[^\s/]+", a.scheduler):
        print(f"pypto-sim sweep: --scheduler {a.scheduler}: not a Dask scheduler address; "
              "expected tcp://HOST:PORT", file=sys.stderr)
        return 2
    if a.limit is not None and a.limit < 0:
        print(f"pypto-sim sweep: --limit {a.limit}: expected a whole number >= 0",
              file=sys.stderr)
        return 2
    if not a.out:
        print("pypto-sim sweep: -o: the value is empty; expected the sweep folder",
              file=sys.stderr)
        return 2
    try:
        with _interrupt_on_term():
            return _sweep(a)
    except (SpecError, _Usage) as e:
        print(f"pypto-sim sweep: {e}", file=sys.stderr)
        return 2
    except _IOFailure as e:
        print(f"pypto-sim sweep: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("pypto-sim sweep: interrupted before any point ran", file=sys.stderr)
        return 130
    except OSError as e:  # the sweep folder failing under it (disk full, removed): I/O, exit 1
        where = f"{e.filename}: " if e.filename else ""
        print(f"pypto-sim sweep: {where}{e.strerror or e}", file=sys.stderr)
        return 1


# ---------------------------------------------------------------------------------------------
# Pictures


def read_results(folder: str) -> Tuple[List[Dict[str, str]], List[str]]:
    """The rows of DIR/results.csv and its input columns."""
    path = os.path.join(folder, "results.csv")
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
            header = list(reader.fieldnames or [])
    except OSError as e:
        raise _Usage(f"{path}: cannot read it ({e.strerror}); is {folder} a sweep folder?")
    except (csv.Error, UnicodeDecodeError) as e:
        raise _Usage(f"{path}: not a sweep table ({_one_line(e)[:200]})") from None
    if header[-len(OUTPUTS):] != OUTPUTS or "policy" not in header:
        raise _Usage(f"{path}: not a sweep table (its last columns are not "
                     f"{', '.join(OUTPUTS)})")
    for i, r in enumerate(rows):
        _check_row(path, i + 2, r, header)
    return rows, header[:-len(OUTPUTS)]


def _label(r: Dict[str, str]) -> str:
    return r["policy"] + (f" ({r['params']})" if r["params"] else "")


def speedups(rows: List[Dict[str, str]], inputs: List[str]) -> List[Dict[str, Any]]:
    """Speed-up over fifo of every ok point: makespan of the fifo point whose other inputs
    are the same / the point's makespan. Each entry: the row, its label and speedup."""
    rest = [c for c in inputs if c not in ("point", "policy", "params")]
    ok = [r for r in rows if r["status"] == "ok"]
    fifo = {tuple(r[c] for c in rest): float(r["makespan_ns"]) for r in ok
            if r["policy"] == "fifo" and not r["params"]}
    if not fifo:
        raise _Usage("no ok fifo point in the table: speed-ups over fifo need policies: "
                     "[fifo, ...] in the spec")
    out = []
    for r in ok:
        base = fifo.get(tuple(r[c] for c in rest))
        if base is not None and float(r["makespan_ns"]) > 0:
            out.append({"row": r, "label": _label(r), "speedup": base / float(r["makespan_ns"])})
    return out


def _geomean(xs: List[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def _ordered(items) -> list:
    return list(dict.fromkeys(items))


def speedup_data(folder: str) -> Dict[str, Dict[str, float]]:
    """trace -> policy label -> speed-up over fifo (geometric mean over the other swept
    inputs when there are several), fifo itself left out."""
    rows, inputs = read_results(folder)
    data: Dict[str, Dict[str, List[float]]] = {}
    for s in speedups(rows, inputs):
        if s["label"] != "fifo":
            data.setdefault(s["row"]["trace"], {}).setdefault(s["label"], []).append(s["speedup"])
    if not data:
        raise _Usage(f"{folder}: no policy but fifo has ok points to compare")
    return {t: {p: _geomean(v) for p, v in d.items()} for t, d in data.items()}


def _pyplot():
    from . import _plot
    return _plot._pyplot()


def speedup_figure(folder: str):
    """Grouped bars per trace, one per policy, rising from 1.0 (fifo) to the speed-up, with
    the number on each bar; the axis spans the data (not from 0) so 1 % shows."""
    data = speedup_data(folder)
    plt = _pyplot()
    labels = _ordered(p for d in data.values() for p in d)
    traces = list(data)
    vals = [v for d in data.values() for v in d.values()]
    lo, hi = min(vals + [1.0]), max(vals + [1.0])
    pad = max(0.004, 0.15 * (hi - lo))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(traces) * len(labels) + 2), 4.5))
    w = 0.8 / len(labels)
    for k, lab in enumerate(labels):
        xs = [i + (k - (len(labels) - 1) / 2) * w for i, t in enumerate(traces) if lab in data[t]]
        ys = [data[t][lab] for t in traces if lab in data[t]]
        bars = ax.bar(xs, [y - 1.0 for y in ys], bottom=1.0, width=w, label=lab)
        for b, y in zip(bars, ys):
            ax.text(b.get_x() + b.get_width() / 2, y, f"{y:.3f}×", ha="center",
                    va="bottom" if y >= 1 else "top", fontsize=7)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_ylim(lo - pad, hi + pad)
    ax.set_xticks(range(len(traces)))
    ax.set_xticklabels([os.path.basename(t) for t in traces], fontsize=8)
    ax.set_ylabel("speed-up over fifo (fifo makespan / makespan)")
    ax.set_title(f"{os.path.basename(os.path.normpath(folder))}: speed-up over fifo per policy "
                 "(geometric mean over the other swept inputs)", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0))
    fig.tight_layout()
    return fig


def heatmap_data(folder: str, option: str) -> Dict[str, Any]:
    """Speed-up over fifo with `option` (a swept input column: chip, set:KEY, a runtime
    option) across x and the policies down y, geometric mean over everything else."""
    rows, inputs = read_results(folder)
    swept = [c for c in inputs if c not in ("point", "policy", "params", "prof")]
    if option not in swept:
        raise _Usage(f"--heatmap {option}: not a column of the table{_suggest(option, swept)} "
                     f"(columns: {', '.join(swept)})")
    xs = _ordered(r[option] for r in rows)
    if len(xs) < 2:
        raise _Usage(f"--heatmap {option}: the sweep has one value of it ({xs[0]}); a heatmap "
                     "needs a swept option")
    cells: Dict[Tuple[str, str], List[float]] = {}
    for s in speedups(rows, inputs):
        if s["label"] != "fifo":
            cells.setdefault((s["label"], s["row"][option]), []).append(s["speedup"])
    ys = _ordered(k[0] for k in cells)
    if not ys:
        raise _Usage(f"{folder}: no policy but fifo has ok points to compare")
    grid = [[_geomean(cells[(y, x)]) if (y, x) in cells else float("nan") for x in xs]
            for y in ys]
    return {"x": xs, "y": ys, "values": grid}


def heatmap_figure(folder: str, option: str):
    d = heatmap_data(folder, option)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(d["x"]) + 3), 0.6 * len(d["y"]) + 2))
    flat = [v for row in d["values"] for v in row if v == v]
    span = max(abs(v - 1.0) for v in flat) or 0.01
    im = ax.imshow(d["values"], cmap="RdBu", vmin=1 - span, vmax=1 + span, aspect="auto")
    for i, row in enumerate(d["values"]):
        for j, v in enumerate(row):
            dark = v == v and abs(v - 1.0) > 0.6 * span
            ax.text(j, i, "—" if v != v else f"{v:.3f}", ha="center", va="center", fontsize=8,
                    color="white" if dark else "black")
    ax.set_xticks(range(len(d["x"])))
    ax.set_xticklabels(d["x"], fontsize=8)
    ax.set_yticks(range(len(d["y"])))
    ax.set_yticklabels(d["y"], fontsize=8)
    ax.set_xlabel(option)
    ax.set_title(f"speed-up over fifo across {option}\n(geometric mean over the other inputs)",
                 fontsize=9)
    fig.colorbar(im, ax=ax, label="speed-up over fifo")
    fig.tight_layout()
    return fig


def swimlanes_figure(folder: str, policies: Sequence[str], point: Optional[int] = None):
    """The swimlanes of two policies side by side (pypto._plot.swimlane_figure of each), for
    `point` (a point id of either policy; default: the first point of the first policy) and
    the point of the other policy with the same other inputs. Needs --keep-reports."""
    from . import _plot
    rows, inputs = read_results(folder)
    rest = [c for c in inputs if c not in ("point", "policy", "params")]
    by_label = {}
    for r in rows:
        by_label.setdefault(_label(r), []).append(r)
    for p in policies:
        if p not in by_label:
            raise _Usage(f"--swimlanes: no point of policy '{p}'{_suggest(p, by_label)} "
                         f"(policies: {', '.join(by_label)})")
    if point is None:
        anchor = by_label[policies[0]][0]
    else:
        anchor = next((r for p in policies for r in by_label[p] if r["point"] == str(point)),
                      None)
        if anchor is None:
            raise _Usage(f"--point {point}: not a point of {' or '.join(policies)}")
    chosen = []
    for p in policies:
        r = next((r for r in by_label[p] if all(r[c] == anchor[c] for c in rest)), None)
        if r is None:
            raise _Usage(f"--swimlanes: no point of {p} with the inputs of point {anchor['point']}")
        run = os.path.join(folder, "points", r["point"])
        if not os.path.exists(os.path.join(run, "trace.json")):
            raise _Usage(f"{run}/trace.json not found: run the sweep with --keep-reports to "
                         "keep each point's reports")
        chosen.append((p, r, run))
    plt = _pyplot()
    images = []
    span_us = 1.01 * max(float(r["makespan_ns"]) for _, r, _ in chosen) / 1000
    for p, r, run in chosen:
        sub = _plot.swimlane_figure(run)
        sub.axes[0].set_xlim(0, span_us)  # one time scale for both (the axes share x)
        buf = io.BytesIO()
        sub.savefig(buf, format="png", dpi=90)
        plt.close(sub)
        buf.seek(0)
        images.append(plt.imread(buf))
    fig, axes = plt.subplots(1, 2, figsize=(22, 22 * images[0].shape[0] / images[0].shape[1] / 2
                                            + 0.6))
    for ax, img, (p, r, _) in zip(axes, images, chosen):
        ax.imshow(img)
        ax.set_axis_off()
        ax.set_title(f"{p}: point {r['point']}, makespan {float(r['makespan_ns']) / 1000:.2f} us",
                     fontsize=10)
    fig.tight_layout()
    return fig


def plot(folder: str, out_dir: Optional[str] = None, heatmap: Optional[str] = None,
         swimlanes: Optional[Sequence[str]] = None, point: Optional[int] = None) -> List[str]:
    """Writes speedup.png (and heatmap_OPTION.png, swimlanes_A_vs_B.png when asked) to
    out_dir (default: the sweep folder); returns the paths."""
    out_dir = out_dir or folder
    figures = [("speedup.png", lambda: speedup_figure(folder))]
    if heatmap:
        figures.append((f"heatmap_{heatmap.replace(':', '_')}.png",
                        lambda: heatmap_figure(folder, heatmap)))
    if swimlanes:
        figures.append((f"swimlanes_{swimlanes[0]}_vs_{swimlanes[1]}.png",
                        lambda: swimlanes_figure(folder, swimlanes, point)))
    made = [(name, make()) for name, make in figures]  # every refusal before any file
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise NotADirectoryError(errno.ENOTDIR, "not a folder", out_dir)
    created = not os.path.isdir(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    plt = _pyplot()
    paths = []
    try:
        for name, fig in made:
            path = os.path.join(out_dir, name)
            # Complete or absent: a full disk or Ctrl-C mid-write leaves no half picture.
            tmp = os.path.join(out_dir, f".{name}.tmp.{os.getpid()}")
            try:
                fig.savefig(tmp, dpi=110, format="png")
                os.replace(tmp, path)
            except OSError as e:
                raise OSError(e.errno, e.strerror or str(e), path) from None
            finally:
                with contextlib.suppress(OSError):
                    os.remove(tmp)
                plt.close(fig)
            paths.append(path)
    except BaseException:
        # A failed plot leaves no picture and no folder it made.
        for path in paths:
            with contextlib.suppress(OSError):
                os.remove(path)
        if created:
            with contextlib.suppress(OSError):
                os.rmdir(out_dir)
        raise
    return paths


def plot_main(argv: List[str]) -> int:
    p = _ArgumentParser(prog="pypto-sim sweep plot",
                                description="Pictures of a sweep folder.")
    p.add_argument("dir", help="the sweep folder (-o of the sweep)")
    p.add_argument("-o", "--out", help="folder for the PNGs (default: the sweep folder)")
    p.add_argument("--heatmap", metavar="OPTION",
                   help="also a heatmap across this swept column (chip, set:KEY, an option)")
    p.add_argument("--swimlanes", metavar="A,B",
                   help="also two policies' swimlanes side by side (needs --keep-reports)")
    p.add_argument("--point", type=int, help="the point of --swimlanes (default: the first)")
    try:
        a = p.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0) and 2
    for flag, value in (("-o", a.out), ("--heatmap", a.heatmap), ("--swimlanes", a.swimlanes)):
        if value is not None and not value.strip():
            print(f"pypto-sim sweep plot: {flag}: the value is empty", file=sys.stderr)
            return 2
    if a.point is not None and not a.swimlanes:
        print(f"pypto-sim sweep plot: --point {a.point}: not used without --swimlanes (it picks "
              "the point whose swimlanes are drawn); remove it", file=sys.stderr)
        return 2
    lanes = a.swimlanes.split(",") if a.swimlanes else None
    if lanes is not None and len(lanes) != 2:
        print(f"pypto-sim sweep plot: --swimlanes {a.swimlanes}: expected two policies, A,B",
              file=sys.stderr)
        return 2
    try:
        for path in plot(a.dir, a.out, a.heatmap, lanes, a.point):
            print(path)
    except _Usage as e:
        print(f"pypto-sim sweep plot: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    # Through the package module, so Dask pickles pypto.sweep.run_point by reference.
    from pypto.sweep import main as _main
    sys.exit(_main(sys.argv[1:]))
