"""Faster EM for click models (``ACCELERATIONS``): squared extrapolation, SQUAREM.

EM converges linearly: near its limit each pass moves the parameters by a fixed fraction
``r`` of the previous move, and a model such as UBM, whose passes shrink by ``r = 0.99``, needs
hundreds of them. SQUAREM (Varadhan & Roland 2008, scheme S3) takes two EM passes from
``theta``, ``theta_1 = F(theta)`` and ``theta_2 = F(theta_1)``, and jumps along them:

    r = theta_1 - theta,  v = theta_2 - 2 theta_1 + theta,  a = -|r| / |v|  (at most -1)
    theta' = theta - 2 a r + a^2 v

then carries on with EM passes from ``theta'`` (each cycle costs two passes). ``a = -1`` gives
``theta_2``, plain EM. Every probability stays inside (0, 1); a jump whose log-likelihood is
below the one of ``theta_1`` (EM's own next point is never below) is undone: the fit returns
to ``theta_2``. Under the empirical prior the log-likelihood is not what EM's passes raise (the
prior is refitted at every pass, and the passes may lower the likelihood on their way to the
limit), so there a jump below ``theta_1``'s log-likelihood is still kept when the fixed-point
residual says it is closer (Varadhan & Roland's safeguard without an objective): when the EM
pass from it moves the parameters no further than the pass from ``theta_1`` did. The fixed
point is EM's; only the way there is shorter. The stopping rule needs EM's rate: each cycle
measures it on its two plain passes, and a jump can land where the first of them moves far and
the second little, so the rule takes the largest rate of the last ``RATE_CYCLES`` cycles
(``rate``); and since jumps can still make it look faster than EM's own, a stop is confirmed
by ``CHECK_PASSES`` plain passes (``confirms_limit``).

- ``squarem`` (the default): as above;
- ``none``: plain EM, one pass after another (the path PyClick and earlier versions took).

>>> [a.name for a in ACCELERATIONS.values()]
['squarem', 'none']
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankwise.clicks.shrinkage import EMPIRICAL
from rankwise.params import Declared, Registry

EDGE = 1e-10
"""How close to 0 or 1 an extrapolated probability may come."""
RATE_CYCLES = 5
"""The cycles whose largest EM rate the stopping rule reads."""
RATE_CAP = 0.9999
"""The largest rate one cycle may report (a rate of 1 or more is rounding near the limit)."""
CHECK_PASSES = 3
"""Plain EM passes that confirm a stop: the last two give EM's own rate at the stopping point."""


def parameter_names(model: Any) -> list[str]:
    """The attributes ``model.parameter_vector`` concatenates, in its order."""
    names = [*model.pair_fields.values(), *model.fields]
    return [n for n in names if hasattr(model, n)]


def set_parameter_vector(model: Any, vector: np.ndarray) -> None:
    """Set the attributes of ``parameter_names(model)`` from ``vector`` (the inverse of
    ``model.parameter_vector()``: each keeps its shape; a number stays a number).

    >>> from rankwise.clicks.models import PBM
    >>> model = PBM()
    >>> model.alpha, model.gamma = np.array([0.2, 0.4]), np.array([1.0, 0.5])
    >>> set_parameter_vector(model, np.array([0.3, 0.5, 1.0, 0.25]))
    >>> model.alpha.tolist(), model.gamma.tolist()
    ([0.3, 0.5], [1.0, 0.25])
    """
    at = 0
    for name in parameter_names(model):
        current = getattr(model, name)
        size = int(np.size(current))
        piece = vector[at:at + size]
        at += size
        setattr(model, name, float(piece[0]) if np.ndim(current) == 0 else piece.reshape(np.shape(current)).copy())


class Squarem:
    """SQUAREM over a model's EM passes: call ``after_pass`` after each M-step with the
    parameters the pass started from, those it ended with and the log-likelihood per session of
    the start; it may set the model's parameters for the next pass (a jump, or back from one)."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.rate = math.nan
        """EM's rate for the stopping rule: the largest of the last ``RATE_CYCLES`` cycles'
        ``|theta_2 - theta_1| / |theta_1 - theta|`` (largest changes of one probability); NaN
        before the first cycle."""
        self._rates: list[float] = []
        self._anchor: np.ndarray | None = None     # theta: the start of the cycle
        self._first: np.ndarray | None = None      # theta_1 = F(theta)
        self._first_ll = -math.inf                 # the log-likelihood of theta_1
        self._first_residual = math.inf            # |theta_2 - theta_1|: the move of the pass from theta_1
        self._by_residual = getattr(model, "prior", None) == EMPIRICAL
        self._fallback: dict[str, Any] | None = None   # the model at theta_2, kept while a jump is tried
        self._check_left = 0     # plain passes still to run in a check of the stop
        self._checked = 0        # plain passes run in the current check
        self.jumps = self.undone = 0

    def confirms_limit(self) -> bool:
        """Whether the fit may stop where the stopping rule says it is near EM's limit. The rule
        reads a rate measured on the cycles' passes, which jumps can make look faster than EM's
        own; so the first time it says stop, ``CHECK_PASSES`` plain passes follow and the rule,
        reading their rate, must say it again on the last of them (False until then)."""
        if self._checked >= CHECK_PASSES:
            return True
        if self._check_left == 0:
            self._check_left, self._checked = CHECK_PASSES, 0
            self.rate = math.nan      # the rule reads the plain passes' own rate
        return False

    def settle(self) -> None:
        """At the end of a fit: back to theta_2 if the model holds a jump not yet scored (the fit
        ends at a point of EM's own)."""
        if self._fallback is not None:
            for name, value in self._fallback.items():
                setattr(self.model, name, value)
            self._fallback = None

    def after_pass(self, start: np.ndarray, end: np.ndarray, start_ll: float) -> str:
        """``plain``, ``extrapolated`` (the model now holds the jump) or ``undone`` (the jump
        scored below theta_1's log-likelihood and, under the empirical prior, its pass also moved
        further than the pass from theta_1: the model is back at theta_2)."""
        if self._fallback is not None:   # this pass started from a jump
            fallback, self._fallback = self._fallback, None
            worse = not start_ll >= self._first_ll
            if worse and self._by_residual:   # kept if its pass moves no further than theta_1's did
                worse = float(np.abs(end - start).max(initial=0.0)) > self._first_residual
            if worse:
                for name, value in fallback.items():
                    setattr(self.model, name, value)
                self.undone += 1
                self._anchor = self._first = None
                return "undone"
        if self._check_left > 0:      # a check of the stop: plain passes, no cycle
            self._check_left -= 1
            self._checked += 1
            self._anchor = self._first = None
            return "plain"
        self._checked = 0
        if self._anchor is None or self._first is None or self._anchor.shape != end.shape:
            self._anchor, self._first, self._first_ll = start, end, -math.inf
            return "plain"
        if not np.array_equal(start, self._first):   # not the pass after theta_1: start a new cycle
            self._anchor, self._first = start, end
            return "plain"
        theta, theta_1, theta_2 = self._anchor, self._first, end
        self._first_ll = start_ll
        r, v = theta_1 - theta, theta_2 - 2 * theta_1 + theta
        first_move, second_move = float(np.abs(r).max(initial=0.0)), float(np.abs(theta_2 - theta_1).max(initial=0.0))
        self._first_residual = second_move
        self._rates = [*self._rates[1 - RATE_CYCLES:], min(second_move / first_move, RATE_CAP) if first_move > 0
                       else 0.0]
        self.rate = max(self._rates)
        self._anchor = self._first = None
        length = float(np.linalg.norm(v))
        if not length > 0:
            return "plain"
        a = min(-float(np.linalg.norm(r)) / length, -1.0)
        if a == -1.0:
            return "plain"
        jump = theta - 2 * a * r + a * a * v
        moving = r != 0
        jump[moving] = np.clip(jump[moving], EDGE, 1 - EDGE)
        self._fallback = self.model._snapshot()
        set_parameter_vector(self.model, jump)
        self.jumps += 1
        return "extrapolated"


class PlainEM:
    """No acceleration: EM's passes one after another."""

    rate = math.nan
    jumps = undone = 0

    def __init__(self, model: Any) -> None:
        self.model = model

    def confirms_limit(self) -> bool:
        """Plain EM's rate is measured pass by pass: its stopping rule needs no check."""
        return True

    def settle(self) -> None:
        """Nothing to undo."""

    def after_pass(self, start: np.ndarray, end: np.ndarray, start_ll: float) -> str:
        return "plain"


@dataclass(frozen=True)
class Acceleration(Declared[Callable[..., Any]]):
    """A way of running EM's passes: ``target(model, **params)`` gives the object whose
    ``after_pass`` sees each pass and whose ``settle`` ends the fit."""


ACCELERATIONS: Registry[Acceleration] = Registry("EM acceleration", (
    Acceleration("squarem", Squarem, "Squared extrapolation: after two EM passes, a jump along them (undone if "
                 "its likelihood is lower and, under the empirical prior, the pass from it moves further).",
                 reference="Varadhan & Roland 2008, SQUAREM scheme S3"),
    Acceleration("none", PlainEM, "Plain EM: one pass after another (PyClick's path).",
                 reference="Dempster, Laird & Rubin 1977"),
), option="--acceleration")
"""The ways of running EM; the first is the default."""

DEFAULT_ACCELERATION = "squarem"


def accelerator_for(model: Any, spelling: str) -> Any:
    """The object that runs ``model``'s EM passes the way ``spelling`` names
    (``ACCELERATIONS.parse``: a member and its parameters).

    >>> from rankwise.clicks.models import PBM
    >>> type(accelerator_for(PBM(), "none")).__name__
    'PlainEM'
    """
    member, params = ACCELERATIONS.parse(spelling)
    return member.target(model, **params)

__all__ = ["ACCELERATIONS", "DEFAULT_ACCELERATION", "Acceleration", "PlainEM", "Squarem", "accelerator_for",
           "set_parameter_vector"]
