"""Training parameters: a dataclass built from the declarations, and the one place they are checked.

The fields of :class:`TrainParams` are :data:`blocksvm.params.COMMON` followed by every registered
solver's own ``params``, in registry order; nothing here names a parameter by hand except the
cross-parameter rule on ``class_weight``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, field, fields, make_dataclass, replace

from blocksvm.errors import ParameterError
from blocksvm.params import COMMON, Param
from blocksvm.solvers.registry import SOLVERS


def declared() -> tuple[Param, ...]:
    """Every training parameter: the common ones, then each solver's own."""
    params = [replace(p, choices=tuple(SOLVERS)) if p.name == "solver" else p for p in COMMON]
    for solver in SOLVERS.values():
        params += [p for p in solver.params if p.name not in {q.name for q in params}]
    return tuple(params)


PARAMS: dict[str, Param] = {p.name: p for p in declared()}

# Parameters a resumed run may change: they affect when training stops or what it prints, never
# the path the optimizer takes.
SAFE_TO_CHANGE = frozenset(p.name for p in PARAMS.values() if p.safe_to_change)


class _Checked:
    """Methods of :class:`TrainParams`."""

    def validate(self):
        """Check every parameter against its declared range; raise ParameterError naming the first bad one."""
        for p in PARAMS.values():
            value = getattr(self, p.name)
            if p.name == "class_weight":
                _check_class_weight(value)
            elif not p.accepts(value):
                raise ParameterError(f"{p.name} must be {p.range}, not {value!r}")
        return self

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict):
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in values.items() if k in known})


def _check_class_weight(value) -> None:
    if value is None or value == "balanced":
        return
    if not isinstance(value, dict):
        raise ParameterError(f"class_weight must be a dict, 'balanced' or None, not {value!r}")
    for label, weight in value.items():
        if not (
            isinstance(weight, (int, float)) and not isinstance(weight, bool) and weight > 0 and math.isfinite(weight)
        ):
            raise ParameterError(f"class_weight[{label!r}] must be a positive number, not {weight!r}")


def _docstring() -> str:
    lines = [
        "Hyper-parameters and stopping rules of a training run (built from blocksvm.params).",
        "",
        "Attributes",
        "----------",
    ]
    for p in PARAMS.values():
        lines += [f"{p.name} : default={p.default!r}", f"    {p.help}"]
    return "\n".join(lines)


TrainParams = make_dataclass(
    "TrainParams",
    [(p.name, object, field(default=p.default)) for p in PARAMS.values()],
    bases=(_Checked,),
    namespace={"__doc__": _docstring(), "__module__": __name__},
)


def reference_page() -> str:
    """docs/PARAMETERS.md: ``python -m blocksvm.train.params > docs/PARAMETERS.md`` writes it."""
    from blocksvm.params import ESTIMATOR_NAMES, markdown_table

    return (
        "# Training parameters\n\n"
        "Made from the declarations (`blocksvm/params.py` and each solver's `params`) by "
        "`python -m blocksvm.train.params > docs/PARAMETERS.md`; tests/test_params.py checks that this page, "
        "`blocksvm train --help` and `BlockSVC` agree with them. Parameters marked safe to change in "
        "docs/CHECKPOINTS.md may differ when a run resumes.\n\n"
        + markdown_table(tuple(PARAMS.values()), ESTIMATOR_NAMES)
    )


if __name__ == "__main__":
    print(reference_page(), end="")
