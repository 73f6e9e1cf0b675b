"""The outer loop: block order, stopping rules, monitoring hooks (:mod:`blocksvm.train.loop`).

The public names are imported on first use: a command that imports one of this package's modules (``stream`` its
pass loop, the CLI its parameters) does not pay for the trainer, its engines and its checkpoints.
"""

from __future__ import annotations

from blocksvm._lazy import lazy_names

# name -> the module that defines it
_LAZY = {
    "Trainer": "blocksvm.train.loop",
    "TrainResult": "blocksvm.train.loop",
    "TrainState": "blocksvm.train.loop",
    "train": "blocksvm.train.loop",
    "TrainParams": "blocksvm.train.params",
    "TuneResult": "blocksvm.train.c_search",
    "tune": "blocksvm.train.c_search",
}

__all__ = ["TrainParams", "TrainResult", "TrainState", "Trainer", "TuneResult", "train", "tune"]


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
