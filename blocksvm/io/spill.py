"""Temporary bucket files: the external-memory half of the converter's shuffle.

Rows are appended to numbered buckets. Pending rows are kept in memory up to ``flush_bytes`` and
then written as one record per bucket to a single append-only file, so writes are large and
sequential whatever the number of buckets. A bucket is read back by seeking to its records.

Record layout (native byte order): row lengths int32[rows], indices int32[nnz], values
<dtype>[nnz], labels float64[rows], lines int64[rows], and for a weighted spill weights float64[rows].
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from blocksvm._rows_kernels import gather_rows
from blocksvm.rows import Rows


@dataclass(frozen=True)
class Record:
    offset: int
    rows: int
    nnz: int


class SpillWriter:
    """Append rows to buckets on disk.

    Parameters
    ----------
    path : Path
        The spill file (created).
    n_buckets : int
    dtype : numpy dtype of the values
    flush_bytes : int
        Pending bytes kept in memory before they are written.
    weighted : bool
        Rows carry instance weights (a sixth field of every record).
    """

    def __init__(self, path: Path, n_buckets: int, dtype, flush_bytes: int = 64 << 20, *, weighted: bool = False):
        self.path = Path(path)
        self.file = open(self.path, "wb")  # noqa: SIM115 - closed by close()
        self.n_buckets = n_buckets
        self.dtype = np.dtype(dtype)
        self.flush_bytes = flush_bytes
        self.weighted = weighted
        self.records: list[list[Record]] = [[] for _ in range(n_buckets)]
        self.rows = np.zeros(n_buckets, np.int64)
        self.nnz = np.zeros(n_buckets, np.int64)
        self._pending: list[list[tuple]] = [[] for _ in range(n_buckets)]
        self._pending_bytes = 0
        self._offset = 0

    def grow(self, n_buckets: int) -> None:
        """Make room for buckets up to ``n_buckets - 1`` (consecutive filling adds them as it goes)."""
        extra = n_buckets - self.n_buckets
        if extra > 0:
            self.records += [[] for _ in range(extra)]
            self._pending += [[] for _ in range(extra)]
            self.rows = np.concatenate((self.rows, np.zeros(extra, np.int64)))
            self.nnz = np.concatenate((self.nnz, np.zeros(extra, np.int64)))
            self.n_buckets = n_buckets

    def row_bytes(self, rows: int, nnz: int) -> int:
        return rows * (28 if self.weighted else 20) + nnz * (4 + self.dtype.itemsize)

    def add(self, indptr, indices, values, labels, lines, buckets: np.ndarray, weights=None) -> None:
        """Append each row ``i`` to bucket ``buckets[i]`` (row order within a bucket is kept). A weighted spill
        takes each row's ``weights`` (None: 1)."""
        order = np.argsort(buckets, kind="stable")
        indptr, indices, values = gather_rows(indptr, indices, values, order)
        labels, lines = labels[order], lines[order]
        if self.weighted:
            weights = np.ones(len(labels)) if weights is None else np.asarray(weights, np.float64)[order]
        bounds = np.searchsorted(buckets[order], np.arange(self.n_buckets + 1))
        for b in np.flatnonzero(np.diff(bounds)):
            lo, hi = bounds[b], bounds[b + 1]
            piece = (
                np.diff(indptr[lo : hi + 1]).astype(np.int32),
                indices[indptr[lo] : indptr[hi]],
                values[indptr[lo] : indptr[hi]],
                labels[lo:hi],
                lines[lo:hi],
                *((weights[lo:hi],) if self.weighted else ()),
            )
            self._pending[b].append(piece)
            self.rows[b] += hi - lo
            self.nnz[b] += len(piece[1])
            self._pending_bytes += self.row_bytes(hi - lo, len(piece[1]))
        if self._pending_bytes >= self.flush_bytes:
            self.flush()

    def flush(self) -> None:
        """Write each bucket's pending pieces as one record, field after field (no concatenation)."""
        for b, pieces in enumerate(self._pending):
            if not pieces:
                continue
            record = Record(self._offset, sum(len(p[0]) for p in pieces), sum(len(p[1]) for p in pieces))
            for field in range(len(pieces[0])):
                for piece in pieces:
                    array = np.ascontiguousarray(piece[field])
                    self.file.write(memoryview(array).cast("B"))
                    self._offset += array.nbytes
            self.records[b].append(record)
            pieces.clear()
        self._pending_bytes = 0

    def close(self) -> None:
        self.flush()
        self.file.close()


def read_bucket(path: Path, records: list[Record], dtype, weighted: bool = False) -> Rows:
    """Read every record of one bucket into one block (raw indices, rows in append order; weights from a
    weighted spill, else None)."""
    dtype = np.dtype(dtype)
    rows = sum(r.rows for r in records)
    nnz = sum(r.nnz for r in records)
    lengths = np.empty(rows, np.int32)
    indices = np.empty(nnz, np.int32)
    data = np.empty(nnz, dtype)
    labels = np.empty(rows, np.float64)
    lines = np.empty(rows, np.int64)
    weights = np.empty(rows, np.float64) if weighted else None
    row_at = nnz_at = 0
    with open(path, "rb") as f:
        for r in records:
            f.seek(r.offset)
            fields = [
                (lengths, row_at, row_at + r.rows),
                (indices, nnz_at, nnz_at + r.nnz),
                (data, nnz_at, nnz_at + r.nnz),
                (labels, row_at, row_at + r.rows),
                (lines, row_at, row_at + r.rows),
            ]
            if weighted:
                fields.append((weights, row_at, row_at + r.rows))
            for array, lo, hi in fields:
                view = memoryview(array[lo:hi]).cast("B")
                if f.readinto(view) != len(view):
                    raise OSError(f"spill file {path} is shorter than its index")
            row_at += r.rows
            nnz_at += r.nnz
    indptr = np.zeros(rows + 1, np.int64)
    np.cumsum(lengths, out=indptr[1:])
    return Rows(indptr, indices, data, labels, lines, weights)


def permute_rows(block: Rows, order: np.ndarray) -> Rows:
    """The block's rows in the order ``order`` (a permutation of its rows)."""
    indptr, indices, data = gather_rows(block.indptr, block.indices, block.data, order)
    weights = None if block.weights is None else block.weights[order]
    return Rows(indptr, indices, data, block.labels[order], block.lines[order], weights)
