"""The outer loop: block order, stopping rules, monitoring hooks (:mod:`blocksvm.train.loop`)."""

from blocksvm.train.loop import Trainer, TrainResult, TrainState, train
from blocksvm.train.params import TrainParams
from blocksvm.train.tune import TuneResult, tune

__all__ = ["TrainParams", "TrainResult", "TrainState", "Trainer", "TuneResult", "train", "tune"]
