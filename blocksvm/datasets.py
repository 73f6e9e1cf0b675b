"""Synthetic webspam-like data: sparse rows, a hidden linear separator, label noise.

Every row is a pure function of ``(seed, row number)``, so the same data comes out whether it is
written as LIBSVM text (:func:`write_libsvm`) or directly as a block store (:func:`make_store`),
in any chunking, by any number of threads, and tens of gigabytes are produced at disk speed.

Row ``r``: about ``nnz`` distinct feature indices drawn from a power law (low indices are common,
as words and n-grams are), positive values normalized to unit length and rounded to 6 decimals,
and the label ``sign(w_true . x)``, flipped with probability ``noise``. With ``classes=K > 2`` there
are K hidden vectors ``w_1 .. w_K`` and the label is ``argmax_k w_k . x`` (labels ``1 .. K``),
replaced with probability ``noise`` by one of the other classes, drawn uniformly. With
``dense=True`` every feature is present with a Gaussian value. Values are written as ``%.6f``, so
text and store agree exactly.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

from blocksvm._progress import progress_bar
from blocksvm.errors import ParameterError
from blocksvm.params import cores
from blocksvm.rows import Rows
from blocksvm.store import format as F
from blocksvm.store.writer import StoreBuilder, write_block

SCALE = 1_000_000  # values are integers / SCALE, i.e. 6 decimals
CHUNK_ROWS = 1 << 15
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@dataclass(frozen=True)
class SyntheticSpec:
    """Parameters of a synthetic data set.

    Attributes
    ----------
    rows : int
    features : int
    nnz : int
        Mean stored entries per row (ignored when ``dense``).
    noise : float
        Probability that a label is flipped, in [0, 0.5).
    seed : int
    dense : bool
    power : float
        Skew of feature popularity: index = features * u**power.
    classes : int, default=2
        Number of classes: 2 gives labels -1/+1 from one hidden separator; K > 2 gives labels
        1..K, the arg-max of K hidden separators. Rows ``x`` do not depend on it.
    """

    rows: int
    features: int
    nnz: int = 50
    noise: float = 0.05
    seed: int = 0
    dense: bool = False
    power: float = 2.0
    classes: int = 2

    def validate(self) -> None:
        if self.rows < 1 or self.features < 1:
            raise ParameterError("rows and features must be positive")
        if not self.dense and not 1 <= self.nnz <= self.features:
            raise ParameterError(f"nnz must be in 1..features ({self.features}), not {self.nnz}")
        if not 0 <= self.noise < 0.5:
            raise ParameterError(f"noise must be in [0, 0.5), not {self.noise}")
        if isinstance(self.classes, bool) or not isinstance(self.classes, int) or self.classes < 2:
            raise ParameterError(f"classes must be an integer >= 2, not {self.classes!r}")

    def hidden_weights(self) -> np.ndarray:
        """The separator ``w_true``: shape (features,) for two classes, (classes, features) for more."""
        rng = np.random.default_rng([self.seed, 7])
        if self.classes == 2:
            return rng.standard_normal(self.features)
        return rng.standard_normal((self.classes, self.features))


def _hidden_matrix(spec: SyntheticSpec, w_true: np.ndarray | None) -> np.ndarray:
    """``w_true`` (or the spec's) as rows of hidden separators, shape (1 or classes, features)."""
    w_true = spec.hidden_weights() if w_true is None else w_true
    return np.ascontiguousarray(np.atleast_2d(w_true), dtype=np.float64)


@njit(cache=True, nogil=True, inline="always")
def _next(state):
    """splitmix64: returns (new state, 64 random bits)."""
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return state, z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def _uniform(state):
    state, bits = _next(state)
    return state, (bits >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True)
def _generate(seed, first_row, n_rows, features, nnz, power, noise, dense, w_true):
    """Rows ``first_row .. first_row + n_rows - 1``: CSR with integer values (units of 1e-6).

    ``w_true`` has shape (1, features) (labels ±1: the sign of the margin) or (K, features) with
    K > 2 (labels 1..K: the arg-max margin). The multiclass draws come after every binary draw,
    so a row's features do not depend on K.
    """
    n_hidden = w_true.shape[0]
    width = features if dense else min(features, 2 * nnz)
    indptr = np.zeros(n_rows + 1, np.int64)
    indices = np.empty(n_rows * width, np.int32)
    q = np.empty(n_rows * width, np.int64)
    labels = np.empty(n_rows, np.float64)
    raw = np.empty(width, np.float64)
    picks = np.empty(width, np.int64)
    margins = np.empty(n_hidden, np.float64)
    k = 0
    for i in range(n_rows):
        state = np.uint64(seed) * _GOLDEN ^ np.uint64(first_row + i) * np.uint64(0xD1B54A32D192ED03)
        state, _ = _next(state)
        if dense:
            count = features
            for j in range(features):
                state, u1 = _uniform(state)
                state, u2 = _uniform(state)
                picks[j] = j
                raw[j] = math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)
        else:
            state, u = _uniform(state)
            want = max(1, nnz // 2 + int(u * (nnz + 1)))
            want = min(want, width)
            for j in range(want):
                state, u = _uniform(state)
                picks[j] = min(int(features * u**power), features - 1)
            sorted_picks = np.sort(picks[:want])
            count = 0
            for j in range(want):
                if count == 0 or sorted_picks[j] != picks[count - 1]:
                    picks[count] = sorted_picks[j]
                    count += 1
            for j in range(count):
                state, u = _uniform(state)
                raw[j] = 0.1 + 0.9 * u
        norm = 0.0
        for j in range(count):
            norm += raw[j] * raw[j]
        norm = math.sqrt(norm)
        margins[:] = 0.0
        for j in range(count):
            value = round(raw[j] / norm * SCALE)
            if value != 0:
                indices[k] = picks[j]
                q[k] = value
                for h in range(n_hidden):
                    margins[h] += w_true[h, picks[j]] * value
                k += 1
        indptr[i + 1] = k
        state, u = _uniform(state)
        if n_hidden == 1:
            label = 1.0 if margins[0] > 0 else -1.0
            labels[i] = -label if u < noise else label
        else:
            best = np.argmax(margins)
            if u < noise:  # one of the other classes, uniformly
                state, u = _uniform(state)
                best = (best + 1 + min(int(u * (n_hidden - 1)), n_hidden - 2)) % n_hidden
            labels[i] = best + 1.0
    return indptr, indices[:k].copy(), q[:k].copy(), labels


def _spec_rows(spec: SyntheticSpec, w_true: np.ndarray, first_row: int, n_rows: int):
    """:func:`_generate`'s ``(indptr, indices, q, labels)`` of rows ``first_row ..`` of ``spec``'s data set."""
    return _generate(spec.seed, first_row, n_rows, spec.features, spec.nnz, spec.power, spec.noise, spec.dense, w_true)


def generate_rows(
    spec: SyntheticSpec, first_row: int, n_rows: int, dtype="float32", w_true: np.ndarray | None = None
) -> Rows:
    """Rows ``first_row ..`` of the data set as a block (zero-based indices, ``lines`` = row + 1)."""
    w_true = _hidden_matrix(spec, w_true)
    indptr, indices, q, labels = _spec_rows(spec, w_true, first_row, n_rows)
    data = (q / SCALE).astype(dtype)
    lines = np.arange(first_row + 1, first_row + n_rows + 1, dtype=np.int64)
    return Rows(indptr, indices, data, labels, lines)


@njit(cache=True, nogil=True)
def _write_int(out, pos, value):
    if value == 0:
        out[pos] = 48
        return pos + 1
    digits = 0
    v = value
    while v > 0:
        digits += 1
        v //= 10
    end = pos + digits
    v = value
    for j in range(digits):
        out[end - 1 - j] = 48 + v % 10
        v //= 10
    return end


@njit(cache=True, nogil=True)
def _format_libsvm(indptr, indices, q, labels, binary):
    """LIBSVM text (one-based indices, values ``%.6f``) of integer-valued rows.

    Labels are written ``+1``/``-1`` when ``binary``, else as integers (1..K).
    """
    n_rows = labels.shape[0]
    out = np.empty(n_rows * 24 + q.shape[0] * 32, np.uint8)
    pos = 0
    for i in range(n_rows):
        if binary:
            out[pos] = 43 if labels[i] > 0 else 45  # '+1' / '-1'
            out[pos + 1] = 49
            pos += 2
        else:
            pos = _write_int(out, pos, np.int64(labels[i]))
        for k in range(indptr[i], indptr[i + 1]):
            out[pos] = 32
            pos = _write_int(out, pos + 1, indices[k] + 1)
            out[pos] = 58
            pos += 1
            v = q[k]
            if v < 0:
                out[pos] = 45
                pos += 1
                v = -v
            pos = _write_int(out, pos, v // SCALE)
            out[pos] = 46
            frac = v % SCALE
            for j in range(6):
                out[pos + 6 - j] = 48 + frac % 10
                frac //= 10
            pos += 7
        out[pos] = 10
        pos += 1
    return out[:pos]


def _text_chunk(spec: SyntheticSpec, w_true, first_row: int, n_rows: int) -> bytes:
    indptr, indices, q, labels = _spec_rows(spec, w_true, first_row, n_rows)
    return _format_libsvm(indptr, indices, q, labels, spec.classes == 2).tobytes()


def _open_for_writing(path: Path, suffix: str):
    """Open ``path`` for writing, compressed as the final name's ``suffix`` says."""
    if suffix == ".gz":
        return gzip.open(path, "wb", compresslevel=1)
    if suffix == ".bz2":
        return bz2.open(path, "wb", compresslevel=1)
    if suffix == ".xz":
        return lzma.open(path, "wb", preset=0)
    return open(path, "wb")


def write_libsvm(
    path: str | os.PathLike,
    spec: SyntheticSpec,
    *,
    rows: range | None = None,
    progress: bool | None = None,
    threads: int = 2,
) -> int:
    """Write the data set as LIBSVM text (``.gz``, ``.bz2``, ``.xz`` compress); return bytes of text.

    ``rows`` selects a range of rows (default: all ``spec.rows``), e.g. held-out rows after the
    training ones. The file appears under its name only when complete.
    """
    spec.validate()
    path = Path(path)
    tmp = path.with_name(path.name + ".partial")
    w_true = _hidden_matrix(spec, None)
    rows = rows if rows is not None else range(spec.rows)
    starts = range(rows.start, rows.stop, CHUNK_ROWS)
    written = 0
    bar = progress_bar(len(rows), f"generate {path.name}", unit="row", unit_scale=True, enabled=progress)
    try:
        with _open_for_writing(tmp, path.suffix) as f, ThreadPoolExecutor(threads) as pool, bar:
            window = []
            for start in starts:
                window.append(pool.submit(_text_chunk, spec, w_true, start, min(CHUNK_ROWS, rows.stop - start)))
                if len(window) > threads:
                    written += _drain(f, window.pop(0), bar)
            for future in window:
                written += _drain(f, future, bar)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return written


def _drain(f, future, bar) -> int:
    text = future.result()
    f.write(text)
    bar.update(text.count(b"\n"))
    return len(text)


def _store_block(
    spec: SyntheticSpec,
    first_row: int,
    n_rows: int,
    dtype: str,
    path: Path,
    index: int,
    compression: str,
    store_id: str,
    w_true: np.ndarray,
) -> tuple[dict, dict]:
    block = generate_rows(spec, first_row, n_rows, dtype, w_true)
    values, counts = np.unique(block.labels, return_counts=True)
    max_index = int(block.indices.max()) if block.nnz else -1
    entry = write_block(path, block, index=index, compression=compression, store_id=store_id)
    return entry, {"labels": dict(zip(values.tolist(), counts.tolist())), "max_index": max_index}


def make_store(
    path: str | os.PathLike,
    spec: SyntheticSpec,
    *,
    block_rows: int = 100_000,
    dtype: str = "float32",
    compression: str = F.DEFAULT_COMPRESSION,
    jobs: int | None = None,
    overwrite: bool = False,
    progress: bool | None = None,
) -> Path:
    """Write the data set directly as a block store of ``block_rows`` rows per block.

    The store equals what ``convert(write_libsvm(...), block_rows=..., shuffle=False)`` gives,
    except for the store id; rows are already in random order.
    """
    spec.validate()
    F.compression_filters(compression)
    n_blocks = math.ceil(spec.rows / block_rows)
    w_true = _hidden_matrix(spec, None)
    with StoreBuilder(path, overwrite=overwrite) as builder:

        def build(b: int) -> tuple[dict, dict]:
            return _store_block(
                spec,
                b * block_rows,
                min(block_rows, spec.rows - b * block_rows),
                dtype,
                builder.block_path(b),
                b,
                compression,
                builder.store_id,
                w_true,
            )

        entries, label_counts, max_index = [], {}, -1
        # threads: the generator kernel and the chunks' compression (before h5py is called) release the GIL
        with (
            ThreadPoolExecutor(max(1, min(jobs or cores(), n_blocks))) as pool,
            progress_bar(n_blocks, f"generate {Path(path).name}", unit="block", enabled=progress) as bar,
        ):
            for entry, facts in pool.map(build, range(n_blocks)):
                entries.append(entry)
                for value, count in facts["labels"].items():
                    label_counts[value] = label_counts.get(value, 0) + count
                max_index = max(max_index, facts["max_index"])
                bar.update()
        builder.commit(
            features=spec.features,
            index_base=0,
            dtype=dtype,
            label_counts=label_counts,
            blocks=entries,
            source={"generator": "blocksvm.datasets", **spec.__dict__},
            params={
                "block_rows": block_rows,
                "block_mb": None,
                "shuffle": False,
                "seed": spec.seed,
                "compression": compression,
                "zero_based": True,
                "skip_bad_lines": False,
            },
        )
    return Path(path)
