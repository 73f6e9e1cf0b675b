"""blocksvm: linear SVMs on data larger than memory.

LIBSVM text is converted once into compressed HDF5 blocks (:func:`convert`); training then loads
one block at a time and runs dual coordinate descent, Pegasos or an online learner on it (block
minimization, Yu, Hsieh, Chang & Lin, KDD 2010). Online learners also run in one pass straight
from text (:mod:`blocksvm.stream`).

Everything but the errors is imported on first use (``blocksvm.convert``, ``blocksvm.stream.stream``,
``blocksvm.predict.predict``): ``blocksvm --version`` does not pay for numba, HDF5 or scikit-learn.
"""

from __future__ import annotations

import importlib

from blocksvm._jit_cache import compile_lighter, ensure_fresh_cache
from blocksvm._version import __version__  # noqa: F401  (blocksvm.__version__)

ensure_fresh_cache()
compile_lighter()

from blocksvm.errors import (  # noqa: E402
    BlocksvmError,
    CheckpointError,
    InputFormatError,
    ModelError,
    ParameterError,
    StoreError,
)

__all__ = [
    "BlockOneClassSVM",
    "BlockSVC",
    "BlockSVCCV",
    "BlockSVR",
    "BlockSVRCV",
    "BlockStore",
    "BlocksvmError",
    "CheckpointError",
    "ConvertSummary",
    "InputFormatError",
    "ModelError",
    "OnlineClassifier",
    "ParameterError",
    "StoreError",
    "convert",
    "write_columns",
    "write_store",
    "load_libsvm",
]

# name -> the module that defines it, imported when the name is first read
_LAZY = {
    "convert": "blocksvm.io",
    "write_store": "blocksvm.io",
    "write_columns": "blocksvm.io",
    "ConvertSummary": "blocksvm.io",
    "load_libsvm": "blocksvm.io",
    "BlockStore": "blocksvm.store",
    "BlockOneClassSVM": "blocksvm.estimator",
    "BlockSVC": "blocksvm.estimator",
    "BlockSVR": "blocksvm.estimator",
    "BlockSVCCV": "blocksvm.estimator",
    "BlockSVRCV": "blocksvm.estimator",
    "OnlineClassifier": "blocksvm.online",
}
# the modules of the Python tour, reachable as attributes after ``import blocksvm``
_SUBMODULES = ("datasets", "io", "model", "plot", "predict", "store", "stream", "train")


def __getattr__(name: str):
    """The public names and modules, imported on first use."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"blocksvm.{name}")
    raise AttributeError(f"module 'blocksvm' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_SUBMODULES})
