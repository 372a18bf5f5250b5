# SPDX-License-Identifier: Apache-2.0
"""The ``pypto-sim`` commands that need Python.

The native ``pypto-sim`` does not embed Python. A command line with ``--policy-module FILE.py``
(``run``, ``compare``, ``policies``) or the ``sweep`` command makes it exec the configured
Python on ``pypto._cli.main(ARGS)`` (also ``python -m pypto._cli ARGS``): this module runs the same command line in ``pypto._C``
(``cli_main``, the CLI's own C++ commands), which loads each FILE.py here first, so that
the policies its ``pypto.sim.register_policy`` calls add are in the registry the run uses.
``sweep`` goes to ``pypto.sweep.main``.

Errors keep the CLI's rule (one line on stderr, exit status 2 for the user's input): a
policy file that is missing or raises while loading names the file and line; an exception
inside a hook names the hook, the policy class, the exception and where it was raised.
"""

import os
import runpy
import signal
import sys
import traceback
from typing import List, Optional, Sequence

# Absolute paths of the policy files loaded by this process (frames in them locate errors).
_loaded: List[str] = []


class PolicyModuleError(Exception):
    """A --policy-module file that cannot be loaded (its str is the whole line)."""


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _where(tb) -> str:
    """``file:line`` of the innermost frame in a loaded policy file, else of the innermost."""
    frames = traceback.extract_tb(tb)
    if not frames:
        return ""
    mine = [f for f in frames if os.path.abspath(f.filename) in _loaded]
    f = (mine or frames)[-1]
    return f"{f.filename}:{f.lineno}"


def _exception_text(exc: BaseException) -> str:
    message = _one_line(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def describe_exception(exc: BaseException, tb=None) -> str:
    """The CLI's line for an exception of Python code run by a command (a policy's hook);
    ``tb``: its traceback where the exception does not carry it."""
    if isinstance(exc, PolicyModuleError):
        return str(exc)
    # The notes say where in the run it happened: "in scheduling policy hook pick_shared of
    # Newest" (added by pypto._C as the exception leaves the hook).
    notes = [_one_line(n) for n in getattr(exc, "__notes__", ()) or ()]
    head = "Python policy error " + ("; ".join(notes) if notes else "in Python code")
    where = _where(tb if tb is not None else exc.__traceback__)
    return f"{head}: {_exception_text(exc)}" + (f" (at {where})" if where else "")


def load_policy_modules(paths: Sequence[str]) -> None:
    """Runs each file (as a script is run: its folder first on sys.path) so that its
    ``register_policy`` calls register its policies. Raises PolicyModuleError naming the
    file and line for a missing file, a syntax error or an exception while loading."""
    for i, path in enumerate(paths):
        flag = f"--policy-module {path}"
        if not os.path.exists(path):
            raise PolicyModuleError(f"{flag}: no such file")
        if not os.path.isfile(path):
            raise PolicyModuleError(f"{flag}: not a file")
        absolute = os.path.abspath(path)
        # Its register_policy calls would fail as "already registered" the second time.
        if absolute in [os.path.abspath(p) for p in paths[:i]]:
            raise PolicyModuleError(f"{flag}: the same file is given twice; give it once")
        folder = os.path.dirname(absolute)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        _loaded.append(absolute)
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            runpy.run_path(path, run_name=name)
        except SyntaxError as e:
            raise PolicyModuleError(f"{flag}:{e.lineno}: SyntaxError: {_one_line(e.msg)}") from None
        except (Exception, SystemExit) as e:  # noqa: BLE001 - any failure of the user's file
            frames = [f for f in traceback.extract_tb(e.__traceback__)
                      if os.path.abspath(f.filename) == absolute]
            line = f":{frames[-1].lineno}" if frames else ""
            raise PolicyModuleError(f"{flag}{line}: {_exception_text(e)}") from None


def run_sweep(args: Sequence[str]) -> int:
    """``pypto-sim sweep ARGS...``: pypto.sweep.main(args); its exit status."""
    try:
        from . import sweep
    except ImportError as e:
        print(f"pypto-sim: sweep: cannot import pypto.sweep ({_one_line(e)})", file=sys.stderr)
        return 2
    try:
        return int(sweep.main(list(args)) or 0)
    except SystemExit as e:  # argparse's --help and usage errors
        if e.code is None or isinstance(e.code, int):
            return int(e.code or 0)
        print(e.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("pypto-sim: sweep: interrupted before the sweep started; nothing written",
              file=sys.stderr)
        return 130
    except OSError as e:  # its output (--help, plot's paths) could not be written
        print(f"pypto-sim: sweep: error while writing {e.filename or 'to stdout'} "
              f"({e.strerror or e})", file=sys.stderr)
        return 1


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Runs one pypto-sim command line (without the program name) and exits with its status."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        if args[:1] == ["sweep"]:
            code = run_sweep(args[1:])  # Python code: Python's own Ctrl-C handling
        else:
            from . import _C
            # The process is the CLI now: its signal handlers (Ctrl-C stops the run cleanly,
            # exit 130), as in the native binary.
            code = _C.cli_main(["pypto-sim"] + args, install_signal_handlers=True)
    except KeyboardInterrupt:  # before the CLI's handlers took over
        print("pypto-sim: interrupted while starting; nothing written", file=sys.stderr)
        code = 130
    # The command's outcome is final (its reports are committed or removed): a Ctrl-C while
    # the interpreter shuts down must not turn it into a death by SIGINT.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    code = _flush_stdout(code)
    sys.exit(code)


def _flush_stdout(code: int) -> int:
    """What the command printed reached stdout, or one line and exit 1 (a full disk or a
    closed pipe behind stdout is an I/O failure, not a success with its output lost)."""
    try:
        sys.stdout.flush()
        return code
    except OSError as e:
        # What is still buffered goes nowhere: the interpreter's own flush at exit must not
        # fail again with a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        if code == 0:
            print(f"pypto-sim: error while writing to stdout ({e.strerror or e})",
                  file=sys.stderr)
        return code or 1


if __name__ == "__main__":
    main()
