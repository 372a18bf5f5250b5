# SPDX-License-Identifier: Apache-2.0
"""PyPTO's golden verification: ``verify`` (runtime.py), and ``pass_verify_print`` /
``pass_verify_save``, its dumps of intermediate tensors.

PyPTO's ``verify`` interprets the graph ``func`` builds and compares its outputs with goldens
after the tensor graph and after chosen passes. pypto-sim runs none of PyPTO's passes: its
``verify`` runs the graph once in SIM, on the caller's tensors, and compares each output with
its golden under PyPTO's verdict rule (:func:`_compare`). The dumps are checked where the
kernel makes them and record nothing.
"""

from __future__ import annotations

import logging
import math
import numbers
from typing import Any, Dict, List, Optional, Sequence

import torch

from . import _eager, _options, _tracer
from ._enums import RunMode
from ._errors import PyptoTypeError, PyptoValueError
from ._symbolic import SymbolicScalar
from ._tensor import Tensor, from_torch, tensor

__all__ = ["verify", "pass_verify_print", "pass_verify_save"]

#: An element off by more than this many times its tolerance fails the output outright.
_FAIL_FACTOR = 128


def _cond(api: str, cond: Any) -> None:
    if isinstance(cond, bool) or not isinstance(cond, (numbers.Integral, SymbolicScalar)):
        raise PyptoTypeError(f"pypto.{api}: cond must be an int or a SymbolicScalar, got "
                             f"{cond!r}")


def _in_kernel(api: str) -> None:
    if _tracer.current() is None:
        raise PyptoTypeError(f"pypto.{api}: call it inside a @pypto.frontend.jit kernel")


def pass_verify_print(*values: Any, cond: Any = 1) -> None:
    """Prints ``values`` (tensors, ints, symbolic scalars, other objects) during PyPTO's pass
    verification when ``cond`` is 1. Checked; pypto-sim runs no pass verification."""
    _in_kernel("pass_verify_print")
    _cond("pass_verify_print", cond)


def pass_verify_save(tensor: Tensor, fname: Any, cond: Any = 1, **kwargs: Any) -> None:
    """Saves ``tensor`` to ``{fname}.data`` during PyPTO's pass verification when ``cond``
    is 1 (``$NAME`` in fname replaced by kwargs[NAME]). Checked; pypto-sim runs no pass
    verification."""
    api = "pass_verify_save"
    _in_kernel(api)
    if not isinstance(tensor, Tensor):
        raise PyptoTypeError(f"pypto.{api}: tensor must be a pypto.Tensor, got "
                             f"{type(tensor).__name__}")
    if isinstance(fname, bool) or not isinstance(fname, (str, numbers.Integral, SymbolicScalar)):
        raise PyptoTypeError(f"pypto.{api}: fname must be a str, int or SymbolicScalar, got "
                             f"{fname!r}")
    _cond(api, cond)
    for k, v in kwargs.items():
        if isinstance(v, bool) or not isinstance(v, (numbers.Integral, SymbolicScalar)):
            raise PyptoTypeError(f"pypto.{api}: {k}= must be an int or a SymbolicScalar, got "
                                 f"{v!r}")


def _torch_list(what: str, seq: Any, none_ok: bool = False) -> List[Optional[torch.Tensor]]:
    if not isinstance(seq, (list, tuple)):
        raise PyptoTypeError(f"pypto.verify: {what} must be a list of torch tensors, got "
                             f"{type(seq).__name__}")
    for i, t in enumerate(seq):
        if t is None and none_ok:
            continue
        if not isinstance(t, torch.Tensor):
            extra = " or None (not compared)" if none_ok else ""
            raise PyptoTypeError(f"pypto.verify: {what}[{i}] must be a torch.Tensor{extra}, "
                                 f"got {type(t).__name__}")
        if t.device.type != "cpu":
            raise PyptoValueError(f"pypto.verify: {what}[{i}] is on device '{t.device}'; "
                                  "the data must be on the CPU (call .cpu())")
    return list(seq)


def _check_goldens(outputs: Sequence[torch.Tensor], goldens: Sequence[Any]) -> None:
    if len(goldens) != len(outputs):
        raise PyptoValueError(f"pypto.verify: goldens has {len(goldens)} entries for "
                              f"{len(outputs)} outputs; give one golden per output (None: "
                              "that output is not compared)")
    for k, (out, gold) in enumerate(zip(outputs, goldens)):
        if gold is None:
            continue
        if gold.shape != out.shape or gold.dtype != out.dtype:
            raise PyptoValueError(
                f"pypto.verify: goldens[{k}] is a {gold.dtype} tensor of shape "
                f"{list(gold.shape)}; outputs[{k}] (OUT_{k}) is {out.dtype} "
                f"{list(out.shape)}: a golden must have its output's shape and dtype")


def _compare(out: torch.Tensor, gold: torch.Tensor, rtol: float, atol: float) -> Dict[str, Any]:
    """PyPTO's verdict on one output: an element is off when |out - golden| exceeds
    ``rtol * (|out| + |golden|) / 2 + atol``; the output passes when no element is off by more
    than 128 times that and at most ``floor(m * min(rtol, atol))`` elements are off, or
    ``min(16, floor(sqrt(m)) // 2)`` when that is 0 (m: elements not zero in both). Stricter
    than PyPTO in one point: a NaN or inf where the golden differs fails the output."""
    o = out.detach().to(torch.float64).reshape(-1)
    g = gold.detach().to(torch.float64).reshape(-1)
    diff = (o - g).abs()
    both_nan = o.isnan() & g.isnan()
    nonfinite = ~(o.isfinite() & g.isfinite()) & ~(o == g) & ~both_nan
    size = o.abs() + g.abs()
    counted = (size > 0) & ~nonfinite
    tol = size * rtol / 2 + atol
    off = counted & (diff > tol)
    failed = int((counted & (diff > tol * _FAIL_FACTOR)).sum()) + int(nonfinite.sum())
    m = int(counted.sum()) + int(nonfinite.sum())
    allowed = int(m * min(rtol, atol))
    if allowed == 0:
        allowed = min(16, math.isqrt(m) // 2)
    d = torch.where(nonfinite, torch.full_like(diff, math.inf),
                    torch.where(counted, diff, torch.zeros_like(diff)))
    rel = torch.where(counted, 2 * diff / size.clamp_min(1e-300), torch.zeros_like(diff))
    at = int(d.argmax()) if o.numel() else 0
    worst, rest = [], at
    for n in reversed(out.shape):  # torch 1.13 has no unravel_index
        worst.insert(0, rest % n)
        rest //= n
    return {"passed": int(off.sum()) <= allowed and failed == 0, "off": int(off.sum()),
            "failed": failed, "allowed": allowed, "elements": o.numel(),
            "max_abs": float(d.max()) if o.numel() else 0.0,
            "max_rel": float(rel.max()) if o.numel() else 0.0, "worst": worst,
            "worst_out": float(o[at]) if o.numel() else 0.0,
            "worst_golden": float(g[at]) if o.numel() else 0.0}


def _verdict(where: str, name: str, r: Dict[str, Any], rtol: float, atol: float) -> str:
    figures = (f"max abs error {r['max_abs']:.6g}, max rel error {r['max_rel']:.6g}; "
               f"{r['off']} of {r['elements']} elements beyond rtol {rtol:g} / atol {atol:g} "
               f"(at most {r['allowed']} allowed), {r['failed']} beyond {_FAIL_FACTOR}x or "
               "not finite")
    if r["passed"]:
        return f"{where}: {name} PASS ({figures})"
    return (f"{where}: {name} FAILED ({figures}; worst at {r['worst']}: output "
            f"{r['worst_out']:.6g}, golden {r['worst_golden']:.6g})")


def verify(func: Any, inputs: Sequence[torch.Tensor], outputs: Sequence[torch.Tensor],
           goldens: Sequence[Optional[torch.Tensor]], *args: Any,
           codegen_options: Optional[dict] = None, host_options: Optional[dict] = None,
           pass_options: Optional[dict] = None, verify_options: Optional[dict] = None,
           **kwargs: Any) -> None:
    """PyPTO's ``pypto.verify``: checks the graph ``func`` builds against goldens.

    ``func(inputs, outputs, *args, **kwargs)`` gets the inputs and outputs as graph tensors
    named ``IN_i`` / ``OUT_i`` and writes the outputs (``outputs[0].move(...)``,
    ``outputs[0][:] = ...``; it may open its own ``pypto.function`` block over them). The
    graph is compiled and run once in SIM on the torch tensors, writing ``outputs`` in place;
    then each output is compared with its golden (``None``: not compared) under
    ``verify_options``' ``pass_verify_error_tol`` ``[rtol, atol]`` and one verdict line per
    output goes to the ``pypto`` logger (PASS at INFO, FAILED at ERROR). The options are
    validated as ``pypto.set_*_options`` validates them and hold for this call only;
    ``verify_options`` defaults to ``{"enable_pass_verify": True}`` (False: run, no compare).
    Returns None, as PyPTO's does.

    Example::

        def add(inputs, outputs):
            pypto.set_vec_tile_shapes(32, 32)
            outputs[0].move(pypto.add(inputs[0], inputs[1]))

        a, b, c = torch.rand(64, 64), torch.rand(64, 64), torch.zeros(64, 64)
        pypto.verify(add, [a, b], [c], [a + b])     # logs "... OUT_0 PASS (...)"; c == a + b
    """
    where = "pypto.verify"
    if not callable(func):
        raise PyptoTypeError(f"{where}: func must be callable, got {type(func).__name__}")
    ins = _torch_list("inputs", inputs)
    outs = _torch_list("outputs", outputs)
    golds = _torch_list("goldens", goldens, none_ok=True)
    _check_goldens(outs, golds)
    name = getattr(func, "__name__", "")
    name = name if isinstance(name, str) and name.isidentifier() else "verify"
    where = f"pypto.verify({name})"
    if verify_options is None:
        verify_options = {"enable_pass_verify": True}
    with _options.Options(name="verify"):
        # A scope of its own, so that the options and func's tile shapes end with the call.
        _options.set_options(codegen_options=codegen_options, host_options=host_options,
                             pass_options=pass_options, verify_options=verify_options)
        checks = _options.get_verify_options()
        hosts = ([from_torch(t, f"IN_{i}") for i, t in enumerate(ins)]
                 + [from_torch(t, f"OUT_{i}") for i, t in enumerate(outs)])
        data = list(ins) + list(outs)
        graph = [tensor(list(t.shape) or [1], h.dtype, h.name) for t, h in zip(data, hosts)]
        with _eager.record(name, graph, run_mode=RunMode.SIM):
            func(graph[:len(ins)], graph[len(ins):], *args, **kwargs)
        _eager.run_once(hosts)
    log = logging.getLogger("pypto")
    if not checks["enable_pass_verify"]:
        log.info("%s: verify_options enable_pass_verify is False: the outputs are computed, "
                 "not compared", where)
        return None
    rtol, atol = checks["pass_verify_error_tol"]
    for k, (out, gold) in enumerate(zip(outs, golds)):
        if gold is None:
            log.info("%s: OUT_%d not compared (its golden is None)", where, k)
            continue
        r = _compare(out, gold, rtol, atol)
        log.log(logging.INFO if r["passed"] else logging.ERROR, "%s",
                _verdict(where, f"OUT_{k}", r, rtol, atol))
    return None
