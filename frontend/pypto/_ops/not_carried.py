# SPDX-License-Identifier: Apache-2.0
"""The value a pypto.loop leaves in a loop-carried int it could not carry (the body only
printed it). A module apart from the loop machinery (``carried``) because the size checks of
every op (``common._dim``) recognise it."""

from __future__ import annotations

from typing import Any

from .._errors import PyptoValueError


class _NotCarried:
    """What a loop-carried int the loop could not carry holds after the loop (the body only
    printed it): printing shows why, any other use raises the error."""

    __slots__ = ("name", "why")

    def __init__(self, name: str, why: str):
        self.name = name
        self.why = why

    def __repr__(self) -> str:
        return f"<'{self.name}', not carried: {self.why}>"

    def __format__(self, spec: str) -> str:
        return f"<'{self.name}': not carried by the pypto.loop>"

    __str__ = __format__

    def _same(self, *_: Any) -> "_NotCarried":
        return self  # arithmetic (the body's own counting) stays not carried

    def _fail(self, *_: Any) -> Any:
        raise PyptoValueError(self.why)

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _same
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __neg__ = _same
    __truediv__ = __rtruediv__ = __lt__ = __le__ = __gt__ = __ge__ = _fail
    __bool__ = __index__ = __int__ = __float__ = _fail
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: Any) -> Any:
        self._fail()

    __ne__ = __eq__
