"""The benches' data: generated LIBSVM text and stores, written once and reused; the real sets; held-out rows."""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

from harness import SHARED_DATA

# the real sets of ../shared/data: name -> (training file, test file or None, features)
REAL = {"a9a": ("a9a", "a9a.t", 123), "w8a": ("w8a", None, 300)}


def spec(rows: int, features: int, nnz: int, seed: int = 0, **more):
    """A :class:`blocksvm.datasets.SyntheticSpec` (imported here: a parent that only starts children stays light)."""
    from blocksvm.datasets import SyntheticSpec

    return SyntheticSpec(rows=rows, features=features, nnz=nnz, seed=seed, **more)


def text(path: Path, spec, rows: range | None = None) -> Path:
    """``spec``'s rows (``rows`` of them) as LIBSVM text at ``path``, written when missing."""
    from blocksvm.datasets import write_libsvm

    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_libsvm(path, spec, rows=rows, progress=False)  # (the file appears under its name when complete)
    return path


def split(folder: Path, stem: str, spec, test_rows: int) -> tuple[Path, Path]:
    """``spec``'s first ``rows - test_rows`` rows as ``STEM.train.svm``, the others as ``STEM.test.svm``."""
    train = spec.rows - test_rows
    return (text(folder / f"{stem}.train.svm", spec, range(train)),
            text(folder / f"{stem}.test.svm", spec, range(train, spec.rows)))  # fmt: skip


def sized_text(folder: Path, mb: float, spec) -> Path:
    """Generated text of about ``mb`` megabytes (``spec``'s row count is set from a sample's bytes a row)."""
    from blocksvm.datasets import write_libsvm

    path = folder / f"generated-{mb:g}MB-f{spec.features}-nnz{spec.nnz}-s{spec.seed}.txt"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        sample = replace(spec, rows=2000)
        per_row = write_libsvm(folder / "sample.txt", sample, progress=False) / sample.rows
        (folder / "sample.txt").unlink()
        text(path, replace(spec, rows=max(1, round(mb * 1e6 / per_row))))
    return path


def replace(spec, **changes):
    import dataclasses

    return dataclasses.replace(spec, **changes)


def store(source: Path, path: Path, **options) -> Path:
    """``source`` converted into the store ``path`` (``blocksvm.convert``'s ``options``), when missing."""
    from blocksvm.io import convert

    if not (path / "manifest.json").exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        convert(source, path, overwrite=True, progress=False, **options)
    return path


def generated_store(path: Path, spec, block_rows: int) -> Path:
    """``spec``'s rows written directly as the store ``path`` (``make_store``), when missing."""
    from blocksvm.datasets import make_store

    if not (path / "manifest.json").exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        make_store(path, spec, block_rows=block_rows, overwrite=True, progress=False)
    return path


def generated_args(p: argparse.ArgumentParser, rows: int, features: int, nnz: int, block_rows: int) -> None:
    """The options of :func:`generated`: the size of the generated set and of its blocks."""
    p.add_argument("--rows", type=int, default=rows)
    p.add_argument("--features", type=int, default=features)
    p.add_argument("--nnz", type=int, default=nnz, help="mean nonzeros a row")
    p.add_argument("--block-rows", type=int, default=block_rows)


def generated(args: argparse.Namespace, folder: Path, seed: int = 11) -> tuple[Path, Path]:
    """The text and the store of :func:`generated_args`' set, cached in ``folder`` under names that say its size
    (the parallel benches share them)."""
    stem = f"gen-{args.rows}x{args.features}x{args.nnz}"
    source = text(folder / f"{stem}.svm", spec(args.rows, args.features, args.nnz, seed))
    return source, store(source, folder / f"{stem}-b{args.block_rows}.bsvm", block_rows=args.block_rows)


def real(name: str, data_dir: Path = SHARED_DATA) -> tuple[Path, Path | None, int] | None:
    """A real set's training file, its test file (or None) and its features; None when it is not there."""
    train, test, features = REAL[name]
    if not (data_dir / train).exists():
        return None
    return data_dir / train, test and data_dir / test, features


def held_out(source: Path, folder: Path, every: int, held: int) -> tuple[Path, Path]:
    """``source``'s rows (blank lines dropped) split in file order: row ``i`` is held out when ``i % every ==
    held``. The two files (``NAME.train``, ``NAME.test`` in ``folder``) are written once."""
    train, test = folder / f"{source.name}.train", folder / f"{source.name}.test"
    if not test.exists():
        folder.mkdir(parents=True, exist_ok=True)
        lines = [line for line in source.read_bytes().splitlines(keepends=True) if line.strip()]
        train.write_bytes(b"".join(line for i, line in enumerate(lines) if i % every != held))
        test.write_bytes(b"".join(line for i, line in enumerate(lines) if i % every == held))
    return train, test


def arrays(path: Path, n_features: int | None = None):
    """A text file's rows as float64 CSR and labels (scikit-learn's reader), or a store's, in store order."""
    import numpy as np
    import scipy.sparse as sp

    if not path.is_dir():
        from sklearn.datasets import load_svmlight_file

        return load_svmlight_file(str(path), n_features=n_features)
    from blocksvm.store import BlockStore

    s = BlockStore(path)
    blocks = sorted(s.iter_blocks(), key=lambda b: b.index)
    X = sp.vstack([sp.csr_matrix((b.data, b.indices, b.indptr), shape=(b.n_rows, s.n_features)) for b in blocks])
    return X.tocsr().astype(np.float64), np.concatenate([b.labels for b in blocks])


def warm_page_cache(path: Path) -> Path:
    with open(path, "rb") as f:
        while f.read(64 << 20):
            pass
    return path


def warm_up(folder: Path, columns: bool = False, params: dict | None = None) -> None:
    """Load numba's cached kernels before a clock starts: a tiny conversion (``columns``: with the transpose) and,
    with ``params``, two passes of training."""
    from blocksvm.io import convert
    from blocksvm.train import train

    tiny, store = folder / f"warm-up-{os.getpid()}.svm", folder / f"warm-up-{os.getpid()}.bsvm"
    text(tiny, spec(2000, 1000, 10, seed=3))
    convert(tiny, store, block_rows=500, zero_based=False, overwrite=True, progress=False, columns=columns)
    if params is not None:
        train(store, **{**params, "max_outer": 2, "eval_every": 1, "time_limit": None}, verbose=0, progress=False)
    shutil.rmtree(store)
    tiny.unlink()
