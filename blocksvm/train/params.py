"""Training parameters, their ranges (declared once, as data), and the one place they are checked."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

from blocksvm.errors import ParameterError

SOLVERS = ("dual-cd", "pegasos")
WORKING_SETS = ("cache", "pair", "block")
LOSSES = ("hinge", "squared-hinge")

# Parameters a resumed run may change: they affect when training stops or what it prints, never
# the path the optimizer takes.
SAFE_TO_CHANGE = frozenset({"tol", "eps", "max_outer", "time_limit", "eval_every", "prefetch"})


@dataclass
class TrainParams:
    """Hyper-parameters and stopping rules of block-minimization training.

    Attributes
    ----------
    C : float, default=1.0
        Cost of a unit of loss; in (0, inf).
    loss : {"hinge", "squared-hinge"}, default="squared-hinge"
        L1-loss (LIBLINEAR ``-s 3``) or L2-loss (``-s 1``) SVM.
    solver : {"dual-cd", "pegasos"}, default="dual-cd"
    bias : float, default=1.0
        Value of the constant bias feature appended to every row (LIBLINEAR ``-B``); a value
        <= 0 means no bias term.
    tol : float, default=1e-3
        Stop when the relative duality gap ``(P - D) / P`` is at most ``tol`` (dual CD only;
        confirmed by an exact evaluation pass). 0 disables the rule.
    eps : float or None, default=None
        Stop when LIBLINEAR's projected-gradient violation ``max PG - min PG`` over a pass is at
        most ``eps`` (dual CD only). None disables the rule.
    max_outer : int, default=50
        Outer iterations (passes over the store) at most.
    working_set : {"cache", "pair", "block"}, default="cache"
        Rows the inner dual CD solver optimizes at each visit: the loaded block together with a
        cache of support vectors kept from earlier blocks ("cache": selective block
        minimization, Chang & Roth 2011; see ``cache_mb``), together with the block visited
        before it ("pair": the groups of rows solved together change every pass), or alone
        ("block": plain block minimization). On redundant data the first two converge many times
        faster than the third; where support vectors are a small part of the data, "cache"
        needs 4-5 times fewer passes than "pair" (docs/ALGORITHMS.md).
    cache_mb : float, default=64.0
        Megabytes of rows the "cache" working set keeps in memory.
    inner_passes : int, default=5
        Passes of the inner solver over its working set per visit at most (dual CD).
    inner_eps : float, default=0.0
        Inner early stop: a visit ends after a pass whose PG violation is at most this (dual CD;
        0 means always make ``inner_passes`` passes).
    batch_size : int, default=1
        Pegasos mini-batch size ``r``.
    average : bool, default=False
        Pegasos: return the average of the iterates at block ends from the second pass on.
    class_weight : dict, "balanced" or None
        Multiplier of C per class label (LIBLINEAR ``-wi``); ``"balanced"`` weighs each class by
        ``n_rows / (n_classes * count)``.
    seed : int, default=0
        Seed of the block order and the row order within blocks.
    time_limit : float or None
        Seconds of wall-clock time; training stops at the next block boundary after it.
    eval_every : int, default=0
        Make an exact evaluation pass (primal objective at a fixed w) every this many outer
        iterations; 0: only to confirm the gap rule.
    prefetch : int, default=1
        Blocks read ahead by a reader thread.
    """

    C: float = 1.0
    loss: str = "squared-hinge"
    solver: str = "dual-cd"
    bias: float = 1.0
    tol: float = 1e-3
    eps: float | None = None
    max_outer: int = 50
    working_set: str = "cache"
    cache_mb: float = 64.0
    inner_passes: int = 5
    inner_eps: float = 0.0
    batch_size: int = 1
    average: bool = False
    class_weight: dict | str | None = field(default=None)
    seed: int = 0
    time_limit: float | None = None
    eval_every: int = 0
    prefetch: int = 1

    def validate(self) -> TrainParams:
        """Check every parameter against its range; raise ParameterError naming the first bad one."""
        for f in fields(self):
            rule = _CONSTRAINTS.get(f.name)
            value = getattr(self, f.name)
            if rule and not (value is None and rule[2]) and not rule[0](value):
                raise ParameterError(f"{f.name} must be {rule[1]}, not {value!r}")
        if self.class_weight is not None and self.class_weight != "balanced":
            if not isinstance(self.class_weight, dict):
                raise ParameterError(f"class_weight must be a dict, 'balanced' or None, not {self.class_weight!r}")
            for label, weight in self.class_weight.items():
                if not (_is_number(weight) and weight > 0 and math.isfinite(weight)):
                    raise ParameterError(f"class_weight[{label!r}] must be a positive number, not {weight!r}")
        return self

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> TrainParams:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _positive(x) -> bool:
    return _is_number(x) and x > 0 and math.isfinite(x)


def _count(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 1


# name -> (test, description, None allowed)
_CONSTRAINTS = {
    "C": (_positive, "a positive finite number", False),
    "loss": (lambda x: x in LOSSES, f"one of {', '.join(LOSSES)}", False),
    "solver": (lambda x: x in SOLVERS, f"one of {', '.join(SOLVERS)}", False),
    "bias": (lambda x: _is_number(x) and math.isfinite(x), "a finite number (<= 0: no bias)", False),
    "tol": (lambda x: _is_number(x) and x >= 0, "a number >= 0", False),
    "eps": (_positive, "a positive number or None", True),
    "max_outer": (_count, "an integer >= 1", False),
    "working_set": (lambda x: x in WORKING_SETS, f"one of {', '.join(WORKING_SETS)}", False),
    "cache_mb": (_positive, "a positive number of megabytes", False),
    "inner_passes": (_count, "an integer >= 1", False),
    "inner_eps": (lambda x: _is_number(x) and x >= 0, "a number >= 0", False),
    "batch_size": (_count, "an integer >= 1", False),
    "average": (lambda x: isinstance(x, bool), "True or False", False),
    "seed": (lambda x: isinstance(x, int) and not isinstance(x, bool) and x >= 0, "an integer >= 0", False),
    "time_limit": (_positive, "a positive number of seconds or None", True),
    "eval_every": (lambda x: isinstance(x, int) and not isinstance(x, bool) and x >= 0, "an integer >= 0", False),
    "prefetch": (lambda x: isinstance(x, int) and not isinstance(x, bool) and x >= 0, "an integer >= 0", False),
}
