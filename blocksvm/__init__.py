"""blocksvm: linear SVMs on data larger than memory.

LIBSVM text is converted once into compressed HDF5 blocks (:func:`convert`); training then loads
one block at a time and runs dual coordinate descent, Pegasos or an online learner on it (block
minimization, Yu, Hsieh, Chang & Lin, KDD 2010). Online learners also run in one pass straight
from text (:mod:`blocksvm.stream`).
"""

from blocksvm._jit_cache import ensure_fresh_cache  # noqa: E402
from blocksvm._version import __version__  # noqa: F401  (blocksvm.__version__)

ensure_fresh_cache()

from blocksvm.errors import (  # noqa: E402
    BlocksvmError,
    CheckpointError,
    InputFormatError,
    ModelError,
    ParameterError,
    StoreError,
)
from blocksvm.io import ConvertSummary, convert, load_libsvm  # noqa: E402
from blocksvm.store import BlockStore  # noqa: E402

__all__ = [
    "BlockSVC",
    "BlockSVR",
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
    "load_libsvm",
]


def __getattr__(name: str):
    """``blocksvm.BlockSVC``, ``BlockSVR`` and ``OnlineClassifier``, imported on first use: the command line does
    not pay for scikit-learn."""
    if name in ("BlockSVC", "BlockSVR"):
        from blocksvm import estimator

        return getattr(estimator, name)
    if name == "OnlineClassifier":
        from blocksvm.online import OnlineClassifier

        return OnlineClassifier
    raise AttributeError(f"module 'blocksvm' has no attribute {name!r}")
