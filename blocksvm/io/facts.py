"""What a conversion learns of its text as it reads it (the first pass's facts: rows, features, labels, weights,
lines skipped) and what it says of them (:class:`ConvertSummary`: the figures and the notes on what the text may not
have meant)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from blocksvm.errors import InputFormatError
from blocksvm.features import FeatureSet

MAX_SKIPPED_EXAMPLES = 5


@dataclass
class ConvertSummary:
    """What a conversion produced and how fast."""

    output: str
    rows: int
    features: int
    nnz: int
    blocks: int
    skipped_lines: int
    seconds: float
    source_bytes: int
    text_bytes: int
    skipped_examples: list = field(default_factory=list)
    features_used: int | None = None
    """The features the rows use, when the store keeps them compactly (a sparse space); None otherwise."""
    weights: dict | None = None
    """A weighted store's instance weights (``sum``, ``min``, ``max``, ``zero_rows``: the manifest's); None when
    every row weighs 1."""
    text: dict | None = None
    """How text other than LIBSVM's was read into columns (the manifest's ``text``: VW's hashing); None otherwise."""
    columns: dict | None = None
    """The column layout written with the store (``convert --columns``: :class:`~blocksvm.store.columns.
    ColumnSummary`'s fields); None without one."""
    zero_line: int | None = None
    """The line of the first index 0, when it made the file zero-based (``zero_based="auto"``); None otherwise."""
    rare_labels: dict = field(default_factory=dict)
    """Labels of very few rows (:func:`rare_labels`: ``{label: [rows, first line]}``), a typo's signs."""

    @property
    def mb_per_second(self) -> float:
        """Text megabytes (10**6 bytes) converted per second."""
        return self.text_bytes / 1e6 / max(self.seconds, 1e-9)

    def to_dict(self) -> dict:
        return {**asdict(self), "mb_per_second": round(self.mb_per_second, 1)}

    def __str__(self) -> str:
        used = f" ({self.features_used:,} used, stored compactly)" if self.features_used is not None else ""
        text = (
            f"{self.output}: {self.rows:,} rows, {self.features:,} features{used}, {self.nnz:,} nnz in "
            f"{self.blocks} blocks; {self.seconds:.1f} s, {self.mb_per_second:.1f} MB/s"
        )
        if self.text is not None:
            text += f"; {self.text['format']} names hashed into 2^{self.text['bits']} columns ({self.text['hash']})"
        if self.weights is not None:
            text += f"; instance weights from {self.weights['min']:g} to {self.weights['max']:g}"
        if self.columns is not None:
            c = self.columns
            text += f"; columns in {c['blocks']} blocks ({c['columns']:,} stored, {c['seconds']:.1f} s)"
        if self.skipped_lines:
            text += f"; skipped {self.skipped_lines:,} bad lines, first: " + "; ".join(self.skipped_examples[:1])
        return "\n".join((text, *self.notes()))

    def notes(self) -> list[str]:
        """Lines on what the text may not have meant: an index 0 that made it zero-based, labels of very few rows."""
        notes = []
        if self.zero_line is not None:
            notes.append(
                f"note: feature indices read as 0-based: an index 0 is on line {self.zero_line:,} (--no-zero-based "
                "refuses that line, as LIBLINEAR does; --zero-based says it is meant)"
            )
        for label, (rows, line) in self.rare_labels.items():
            notes.append(
                f"note: label {label:g} is on {rows:,} row{'s' * (rows > 1)} of {self.rows:,} (the first on line "
                f"{line:,}): a class of its own for a classifier, a typo?"
            )
        return notes


@dataclass
class Pass1:
    """Facts gathered while partitioning."""

    rows: int = 0
    nnz: int = 0
    max_index: int = -1
    min_index: int = 2**31
    label_counts: dict = field(default_factory=dict)
    label_lines: dict = field(default_factory=dict)  # each label's first line
    zero_line: int | None = None  # the line of the first index 0
    skipped: int = 0
    skipped_examples: list = field(default_factory=list)
    source_bytes: int = 0
    text_bytes: int = 0
    features: FeatureSet = field(default_factory=FeatureSet)
    weights: WeightTally | None = None


@dataclass
class WeightTally:
    """What the instance weights met so far add up to: a store is weighted only if some row's weight is not 1."""

    not_one: int = 0
    zero_rows: int = 0
    sum: float = 0.0
    min: float = math.inf
    max: float = -math.inf

    def add(self, weights: np.ndarray) -> None:
        if len(weights) == 0:
            return
        self.not_one += int(np.count_nonzero(weights != 1.0))
        self.zero_rows += int(np.count_nonzero(weights == 0.0))
        self.sum += float(np.sum(weights))
        self.min = min(self.min, float(weights.min()))
        self.max = max(self.max, float(weights.max()))

    def manifest(self) -> dict | None:
        """The manifest's ``weights`` entry; None when every weight is 1 (the store is then unweighted)."""
        if not self.not_one:
            return None
        return {"sum": self.sum, "min": self.min, "max": self.max, "zero_rows": self.zero_rows}


def tally(facts: Pass1, chunk) -> None:
    facts.rows += chunk.n_rows
    facts.nnz += chunk.nnz
    facts.max_index = max(facts.max_index, chunk.max_index)
    facts.min_index = min(facts.min_index, chunk.min_index)
    facts.features.add(chunk.indices, chunk.max_index)
    facts.skipped += chunk.n_skipped
    facts.text_bytes += chunk.text_bytes
    facts.source_bytes = max(facts.source_bytes, chunk.source_pos)
    if facts.weights is not None:
        facts.weights.add(np.ones(chunk.n_rows) if chunk.weights is None else chunk.weights)
    for error in chunk.skipped:
        if len(facts.skipped_examples) < MAX_SKIPPED_EXAMPLES:
            facts.skipped_examples.append(str(error).splitlines()[0])
    if facts.zero_line is None and chunk.min_index == 0:
        row = np.searchsorted(chunk.indptr, int(np.argmax(chunk.indices == 0)), side="right") - 1
        facts.zero_line = int(chunk.lines[row])
    values, firsts, counts = np.unique(chunk.labels, return_index=True, return_counts=True)
    for value, first, count in zip(values.tolist(), firsts.tolist(), counts.tolist()):
        facts.label_counts[value] = facts.label_counts.get(value, 0) + count
        facts.label_lines.setdefault(value, int(chunk.lines[first]))


RARE_SHARE = 1e-3
"""A label on fewer than this share of the rows is rare (:func:`rare_labels`)."""
RARE_LABELS_AT_MOST = 32  # more distinct labels than this: regression targets, where every value is rare


def rare_labels(counts: dict, lines: dict, rows: int) -> dict:
    """The labels of a classifier's text on fewer than :data:`RARE_SHARE` of its rows (a ``+2`` among ``+1``/``-1``:
    a class of its own, silently), ``{label: [rows, first line]}``; none for a small file or many distinct labels."""
    if rows * RARE_SHARE < 1 or len(counts) > RARE_LABELS_AT_MOST:
        return {}
    return {label: [n, lines[label]] for label, n in sorted(counts.items()) if n < rows * RARE_SHARE}


def check_row_norms(chunk, path) -> None:
    """Refuse a row whose squared norm overflows float64: the solvers divide by it (``Q_ii``).

    Only float64 values can reach that (beyond about 1.3e154); float32 ones stop at 3.4e38.
    """
    if chunk.nnz == 0 or chunk.data.dtype != np.float64:
        return
    lengths = np.diff(chunk.indptr)
    largest = float(np.abs(chunk.data).max())
    if largest * largest * float(lengths.max()) < np.finfo(np.float64).max:
        return  # no row can overflow: the common case costs one pass over the values
    with np.errstate(over="ignore"):
        norms = np.bincount(np.repeat(np.arange(chunk.n_rows), lengths), weights=chunk.data**2, minlength=chunk.n_rows)
    bad = np.flatnonzero(~np.isfinite(norms))
    if len(bad):
        raise InputFormatError(
            path,
            int(chunk.lines[bad[0]]),
            "the squared norm of the row overflows float64 (values beyond about 1e154): rescale the features",
        )
