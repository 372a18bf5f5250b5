# SPDX-License-Identifier: Apache-2.0
"""PyPTO's per-pass debug switches: ``set_pass_config`` / ``get_pass_config`` /
``get_pass_configs`` / ``set_pass_default_config`` / ``get_pass_default_config`` with
``PassConfigKey``. They dump, print, check or skip PyPTO's graph passes, which pypto-sim
does not run: the values are checked and kept (the getters return them) and change nothing."""

from __future__ import annotations

import enum
from typing import Dict, Tuple

from ._errors import PyptoTypeError


class PassConfigKey(enum.Enum):
    """A per-pass switch of PyPTO's pass manager."""

    KEY_PRINT_GRAPH = 0
    KEY_DUMP_GRAPH = 1
    KEY_DUMP_PASS_TIME_COST = 2
    KEY_PRE_CHECK = 3
    KEY_POST_CHECK = 4
    KEY_DISABLE_PASS = 5
    KEY_HEALTH_CHECK = 6

    def __str__(self) -> str:
        return f"PassConfigKey.{self.name}"

    __repr__ = __str__


_ATTRS = {PassConfigKey.KEY_PRINT_GRAPH: "printGraph", PassConfigKey.KEY_DUMP_GRAPH: "dumpGraph",
          PassConfigKey.KEY_DUMP_PASS_TIME_COST: "dumpPassTimeCost",
          PassConfigKey.KEY_PRE_CHECK: "preCheck", PassConfigKey.KEY_POST_CHECK: "postCheck",
          PassConfigKey.KEY_DISABLE_PASS: "disablePass",
          PassConfigKey.KEY_HEALTH_CHECK: "healthCheck"}

_defaults: Dict[PassConfigKey, bool] = {}
_per_pass: Dict[Tuple[str, str, PassConfigKey], bool] = {}


class PassConfigs:
    """The switches of one pass (read-only attributes printGraph, dumpGraph,
    dumpPassTimeCost, preCheck, postCheck, disablePass, healthCheck)."""

    def __init__(self, values: Dict[str, bool]):
        self.__dict__["_values"] = dict(values)

    def __getattr__(self, name: str) -> bool:
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(f"PassConfigs has no attribute {name!r}") from None

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("PassConfigs attributes are read-only")

    def __repr__(self) -> str:
        vals = self.__dict__["_values"]
        return "PassConfigs(" + ", ".join(f"{k}={v}" for k, v in vals.items()) + ")"


def _check(api: str, **args: object) -> None:
    for name, v in args.items():
        want = {"strategy": str, "identifier": str, "key": PassConfigKey,
                "value": bool, "default_value": bool}[name]
        if not isinstance(v, want):
            raise PyptoTypeError(f"pypto.{api}: {name} must be a {want.__name__}, got {v!r}")


def set_pass_config(strategy: str, identifier: str, key: PassConfigKey, value: bool) -> None:
    """Sets switch ``key`` of pass ``identifier`` of strategy ``strategy`` (kept; no effect
    on SIM, which runs none of PyPTO's passes)."""
    _check("set_pass_config", strategy=strategy, identifier=identifier, key=key, value=value)
    _per_pass[(strategy, identifier, key)] = value


def get_pass_config(strategy: str, identifier: str, key: PassConfigKey,
                    default_value: bool) -> bool:
    """The value set_pass_config gave, else set_pass_default_config's, else
    ``default_value``."""
    _check("get_pass_config", strategy=strategy, identifier=identifier, key=key,
           default_value=default_value)
    return _per_pass.get((strategy, identifier, key), _defaults.get(key, default_value))


def get_pass_configs(strategy: str, identifier: str) -> PassConfigs:
    """Every switch of one pass (False where none was set)."""
    _check("get_pass_configs", strategy=strategy, identifier=identifier)
    return PassConfigs({attr: get_pass_config(strategy, identifier, key, False)
                        for key, attr in _ATTRS.items()})


def set_pass_default_config(key: PassConfigKey, value: bool) -> None:
    """Sets switch ``key`` of every pass without its own value (kept; no effect on SIM)."""
    _check("set_pass_default_config", key=key, value=value)
    _defaults[key] = value


def get_pass_default_config(key: PassConfigKey, default_value: bool) -> bool:
    """The value set_pass_default_config gave ``key``, else ``default_value``."""
    _check("get_pass_default_config", key=key, default_value=default_value)
    return _defaults.get(key, default_value)
