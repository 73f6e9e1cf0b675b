"""One checker, many schemas: a file blocksvm reads back is checked against a declared schema before any of it is
trusted.

A file lies about itself when it is edited by hand, cut by a full disk, copied half-way or damaged on a disk: a
manifest whose ``rows`` is a string, a checkpoint whose ``alpha`` has the wrong length. Each kind of file declares its
schema once, beside the code that reads it (:data:`blocksvm.store.format.MANIFEST_SCHEMA`, the checkpoint's, the
model's, ...), and is checked where it is opened; a failure is one line naming the file and the field::

    run.ckpt: field 'state.outer' is a string ('3'), not an integer

A :class:`Schema` is a tuple of :class:`Field` (a JSON value: its type, range, choices, its items or its own fields)
and of rules across fields (sums that must agree, labels sorted), each a function of the document returning a
``(field, problem)`` or None. :class:`Array` declares an array stored in a file (an HDF5 dataset: its dtype, rank and
shape), checked from the file's metadata before the array is read. Keys a schema does not name are let through (a
newer blocksvm may add some); a schema grows by :meth:`Schema.extended`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from blocksvm.errors import BlocksvmError

_KINDS = {
    "int": "an integer",
    "number": "a number",
    "real": "a number",
    "str": "a string",
    "bool": "true or false",
    "list": "a list",
    "dict": "an object",
    "any": "a value",
}


@dataclass(frozen=True)
class Field:
    """One value of a JSON document (or of an object within it).

    Attributes
    ----------
    name : str
        Its key.
    kind : {"int", "number", "real", "str", "bool", "list", "dict", "any"}
        Its JSON type ("number": an integer or a finite float, "real" NaN and infinities too, as Python's JSON writes
        them; "int" refuses ``true``, which JSON parses as 1).
    optional : bool
        It may be absent.
    null : bool
        It may be ``null``.
    low, high : float, optional
        The range of a number, or of a string's or list's length.
    choices : tuple, optional
        The values it may take.
    items : Field, optional
        A list's items (their ``name`` unused).
    fields : Schema, optional
        A dict's own fields.
    """

    name: str
    kind: str
    optional: bool = False
    null: bool = False
    low: float | None = None
    high: float | None = None
    choices: tuple | None = None
    items: Field | None = None
    fields: Schema | None = None


Rule = Callable[[dict], "tuple[str, str] | None"]
"""A check across fields: ``rule(document)`` returns ``(field, problem)``, or None when it holds. It runs only when
every field is of its declared type."""


@dataclass(frozen=True)
class Schema:
    """A JSON object's fields and the rules across them."""

    fields: tuple[Field, ...]
    rules: tuple[Rule, ...] = ()

    def extended(self, *fields: Field, rules: tuple[Rule, ...] = ()) -> Schema:
        """This schema with more fields (a field of the same name replaced) and rules."""
        names = {f.name for f in fields}
        kept = tuple(f for f in self.fields if f.name not in names)
        return Schema(kept + tuple(fields), self.rules + tuple(rules))

    def problem(self, document, prefix: str = "") -> tuple[str, str] | None:
        """The first ``(field, problem)`` of ``document``, or None if it follows the schema."""
        if not isinstance(document, dict):
            return prefix.rstrip(".") or "(the document)", f"is {_shown(document)}, not an object"
        for f in self.fields:
            name = prefix + f.name
            if f.name not in document:
                if f.optional:
                    continue
                return name, "is missing"
            found = _value_problem(f, document[f.name], name)
            if found:
                return found
        for rule in self.rules:
            found = rule(document)
            if found:
                return prefix + found[0], found[1]
        return None

    def check(self, document, where: str, error: type[BlocksvmError] = BlocksvmError, remedy: str = ""):
        """Return ``document`` if it follows the schema; else raise ``error``: ``where: field 'F' <problem>``
        (then ``: remedy``, when given)."""
        found = self.problem(document)
        if found is not None:
            raise error(_message(where, found, remedy))
        return document


def _message(where: str, found: tuple[str, str], remedy: str) -> str:
    where = f"{where}: " if where else ""
    return f"{where}field '{found[0]}' {found[1]}" + (f": {remedy}" if remedy else "")


def _value_problem(f: Field, value, name: str) -> tuple[str, str] | None:
    if value is None:
        return None if f.null else (name, f"is null, not {_KINDS[f.kind]}")
    if not _is_kind(value, f.kind):
        return name, f"is {_shown(value)}, not {_KINDS[f.kind]}"
    if f.choices is not None and value not in f.choices:
        return name, f"is {_shown(value)}, not one of {', '.join(repr(c) for c in f.choices)}"
    size = len(value) if isinstance(value, (str, list)) else value if f.kind in ("int", "number", "real") else None
    what = "items" if isinstance(value, list) else "characters" if isinstance(value, str) else None
    if size is not None and f.low is not None and size < f.low:
        return name, _beyond(size, what, "fewer" if what else "less", f.low)
    if size is not None and f.high is not None and size > f.high:
        return name, _beyond(size, what, "more", f.high)
    if f.items is not None and isinstance(value, list):
        for i, item in enumerate(value):
            found = _value_problem(f.items, item, f"{name}[{i}]")
            if found:
                return found
    if f.fields is not None and isinstance(value, dict):
        return f.fields.problem(value, name + ".")
    return None


def _beyond(size, what: str | None, word: str, bound) -> str:
    """``has 3 items, fewer than 4`` or ``is -1, less than 0``."""
    if what:
        return f"has {_number(size)} {what}, {word} than {_number(bound)}"
    return f"is {_number(size)}, {word} than {_number(bound)}"


def _is_kind(value, kind: str) -> bool:
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind in ("number", "real"):
        real = isinstance(value, (int, float)) and not isinstance(value, bool)
        return real and (kind == "real" or math.isfinite(value))
    return kind == "any" or isinstance(value, {"str": str, "bool": bool, "list": list, "dict": dict}[kind])


def _shown(value) -> str:
    """A value as a problem names it: its type, and the value itself when short."""
    kind = {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value!r} (not finite)"
    text = repr(value)
    return f"{kind} ({text})" if len(text) <= 40 else kind


def _number(value) -> str:
    return f"{value:,}" if isinstance(value, int) or float(value).is_integer() else f"{value:g}"


# ---- arrays stored in files ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Array:
    """An array of a file (an HDF5 dataset), checked from its metadata before it is read.

    Attributes
    ----------
    name : str
    kinds : str
        The numpy dtype kinds it may have ("i" signed, "u" unsigned, "f" float, "b" bool); ignored with ``dtype``.
    dtype : numpy dtype, optional
        The one dtype it must have (native byte order).
    ndim : int or None
        Its rank (None: any).
    optional : bool
        It may be absent.
    length : callable, optional
        ``length(context)``: the number of values it must hold, or None when not known.
    of : str
        What the length counts, for the message: ``the store has 1,605 rows``.
    """

    name: str
    kinds: str = "biuf"
    dtype: np.dtype | None = None
    ndim: int | None = 1
    optional: bool = False
    length: Callable[[dict], int | None] | None = None
    of: Callable[[dict], str] | None = None


@dataclass(frozen=True)
class Arrays:
    """The arrays of a file."""

    arrays: tuple[Array, ...]

    def problem(self, found: Mapping, context: dict | None = None) -> tuple[str, str] | None:
        """The first ``(array, problem)`` of ``found`` (names to h5py datasets or numpy arrays: anything with
        ``dtype`` and ``shape``), or None."""
        context = context or {}
        for spec in self.arrays:
            if found.get(spec.name) is None:
                if spec.optional:
                    continue
                return spec.name, "is missing"
            found_problem = array_problem(spec, found[spec.name], context)
            if found_problem:
                return spec.name, found_problem
        return None

    def check(
        self, found: Mapping, where: str, error: type[BlocksvmError], context: dict | None = None, remedy: str = ""
    ) -> None:
        """Raise ``error`` (``where: field 'A' <problem>``) unless ``found`` holds the arrays as declared."""
        problem = self.problem(found, context)
        if problem is not None:
            raise error(_message(where, problem, remedy))


def array_problem(spec: Array, array, context: dict) -> str | None:
    """Why ``array`` (an h5py dataset or a numpy array) is not what ``spec`` declares, or None."""
    dtype, shape = getattr(array, "dtype", None), getattr(array, "shape", None)
    if dtype is None or shape is None:
        return "is not an array"
    if spec.dtype is not None and np.dtype(dtype) != spec.dtype:
        return f"holds {np.dtype(dtype)}, not {np.dtype(spec.dtype)}"
    if spec.dtype is None and np.dtype(dtype).kind not in spec.kinds:
        return f"holds {np.dtype(dtype)}, not numbers"
    if spec.ndim is not None and len(shape) != spec.ndim:
        return f"has {len(shape)} dimensions, not {spec.ndim}"
    expected = spec.length(context) if spec.length is not None else None
    values = int(np.prod(shape, dtype=np.int64))
    if expected is not None and values != expected:
        what = f", {spec.of(context)}" if spec.of is not None else f", not {expected:,}"
        return f"has {values:,} values{what}"
    return None
