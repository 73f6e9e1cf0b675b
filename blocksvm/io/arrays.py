"""Rows given in memory, as the parsed chunks the store's two passes take (:func:`blocksvm.write_store`).

``(X, y)`` (a numpy array, a scipy sparse matrix, a pandas data frame, a dask array or data frame) is read a slice
of rows or a partition at a time, never whole; an iterable of ``(X, y)`` or ``(X, y, sample_weight)`` chunk by
chunk. Each becomes a :class:`~blocksvm.io.text.ParsedChunk` whose rows are numbered from 1 on, as lines are.
"""

from __future__ import annotations

import itertools

import numpy as np

from blocksvm.errors import InputFormatError, ParameterError
from blocksvm.io.text import ParsedChunk
from blocksvm.io.weights import check_weights

NAME = "the rows given"
"""What messages call rows given in memory."""


def given_rows(data, sample_weight, chunk_rows: int, n_features: int | None, dtype: np.dtype):
    """``data`` as :func:`blocksvm.write_store` takes it (see there), as parsed chunks.

    Returns ``(chunks, weighted, n_features)``: whether the chunks carry instance weights, and the store's width
    (given, or ``X``'s for one pair less a weight column; None for an iterable: its largest column used).
    """
    if chunk_rows < 1:
        raise ParameterError(f"chunk_rows must be a positive integer, not {chunk_rows}")
    column = sample_weight if isinstance(sample_weight, str) else None
    if isinstance(data, tuple):
        X, y = data
        n_features = n_features or _width(X) - (column is not None)
        w = sample_weight if column is None else None
        triples = _partitions(X, y, w) if _is_dask_frame(X) else _row_chunks(X, y, chunk_rows, w)
        weighted = sample_weight is not None
    else:
        if sample_weight is not None and column is None:
            raise ParameterError(
                "sample_weight of an iterable of chunks is the name of their weight column: give each chunk's "
                "weights as the third item of (X, y, sample_weight)"
            )
        triples, weighted = _peek_weighted(iter(data))
        weighted = weighted or column is not None
    return _parsed_chunks(triples, dtype, column=column), weighted, n_features


def _peek_weighted(items):
    """The items of an iterable of chunks as ``(X, y, sample_weight or None)``, and whether the first has weights
    (then every chunk must)."""
    first = next(items, None)
    if first is None:
        return iter(()), False
    weighted = len(first) == 3

    def triples():
        for item in itertools.chain([first], items):
            if (len(item) == 3) != weighted:
                raise ParameterError(
                    "give every chunk as (X, y, sample_weight) or every chunk as (X, y): some have weights, some not"
                )
            yield item if weighted else (*item, None)

    return triples(), weighted


def _row_chunks(X, y, chunk_rows: int, weights=None):
    """``(X, y, weights)`` in slices of ``chunk_rows`` rows (weights None: none)."""
    n_rows = int(np.shape(X)[0])
    if len(y) != n_rows:
        raise ParameterError(f"X has {n_rows:,} rows and y {len(y):,} labels: give one label a row")
    if weights is not None and len(weights) != n_rows:
        raise ParameterError(f"X has {n_rows:,} rows and sample_weight {len(weights):,} weights: give one weight a row")
    for start in range(0, n_rows, chunk_rows):
        stop = min(start + chunk_rows, n_rows)
        w = None if weights is None else _rows(weights, start, stop)
        yield _rows(X, start, stop), _rows(y, start, stop), w  # a dask slice is computed by _parsed_chunks


def _rows(a, start: int, stop: int):
    """Rows ``start:stop`` of an array, a matrix or a pandas frame or series (by position, not by label)."""
    return a.iloc[start:stop] if hasattr(a, "iloc") else a[start:stop]


def _width(X) -> int:
    """Columns of an array, a matrix or a (dask) data frame (whose shape's rows may be unknown)."""
    return len(X.columns) if hasattr(X, "columns") else int(np.shape(X)[1])


def _is_dask_frame(X) -> bool:
    return hasattr(X, "columns") and hasattr(X, "npartitions")


def _partitions(X, y, weights=None):
    """A dask data frame and its labels, partition by partition (each computed by _parsed_chunks, never the
    whole): the labels must be partitioned as the rows are, as ``frame[label]`` beside ``frame.drop(columns=
    label)`` is."""
    if getattr(y, "npartitions", None) != X.npartitions:
        raise ParameterError(
            f"X is a dask data frame of {X.npartitions} partitions: give y as a dask series partitioned as X "
            "(frame[label] of the same frame)"
        )
    if weights is not None and getattr(weights, "npartitions", None) != X.npartitions:
        raise ParameterError(
            f"X is a dask data frame of {X.npartitions} partitions: give sample_weight as a dask series partitioned "
            "as X, or as the name of its weight column"
        )
    for i in range(X.npartitions):
        yield X.partitions[i], y.partitions[i], None if weights is None else weights.partitions[i]


def _computed(part):
    """A dask collection's values (one slice: never the whole), anything else as it is."""
    return part.compute() if hasattr(part, "dask") and hasattr(part, "compute") else part


def _parsed_chunks(triples, dtype: np.dtype, name: str = NAME, column: str | None = None):
    """Parsed chunks (zero-based columns, rows numbered from 1 on) of ``(X, y, weights or None)``; ``column``
    names ``X``'s weight column, if it has one."""
    first = 1
    for X, y, w in triples:
        X = _computed(X)
        if column is not None:
            w, X = X[column], X.drop(columns=column)
        chunk = rows_as_chunk(X, _computed(y), first, dtype, name, None if w is None else _computed(w))
        first += chunk.n_rows
        yield chunk


def rows_as_chunk(X, y, first: int, dtype: np.dtype, name=NAME, weights=None) -> ParsedChunk:
    """``(X, y)`` (with the rows' ``weights``, if given) as a parsed chunk whose first row is line ``first`` of
    ``name``."""
    import scipy.sparse as sp  # here: convert imports this module, and text never needs scipy

    X = sp.csr_matrix(X if sp.issparse(X) else np.asarray(X, dtype=dtype), dtype=dtype)  # a pandas frame too
    X.sum_duplicates()
    X.eliminate_zeros()
    y = np.asarray(y, dtype=np.float64).ravel()
    if len(y) != X.shape[0]:
        raise InputFormatError(name, first, f"a chunk of {X.shape[0]:,} rows has {len(y):,} labels")
    bad = np.flatnonzero(~np.isfinite(y))
    if len(bad) == 0 and not np.all(np.isfinite(X.data)):
        bad = np.flatnonzero(~np.isfinite(X.sum(axis=1).A.ravel()))
    if len(bad):
        raise InputFormatError(name, first + int(bad[0]), "holds a value that is not finite")
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64).ravel()
        if len(weights) != len(y):
            raise InputFormatError(name, first, f"a chunk of {len(y):,} rows has {len(weights):,} weights")
        check_weights(weights, np.arange(first, first + len(y)), name)
    indices = X.indices.astype(np.int32)
    return ParsedChunk(
        X.indptr.astype(np.int64),
        indices,
        X.data,
        y,
        np.arange(first, first + X.shape[0], dtype=np.int64),
        weights,
        max_index=int(indices.max()) if len(indices) else -1,
        min_index=int(indices.min()) if len(indices) else 2**31,
        source_pos=first + X.shape[0] - 1,
    )
