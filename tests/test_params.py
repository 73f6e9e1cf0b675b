"""One declaration of every training parameter: the docs page, ``--help`` and the estimator agree with it."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from blocksvm import BlockSVC
from blocksvm.cli import build_parser
from blocksvm.errors import ParameterError
from blocksvm.estimator import OWN_PARAMS
from blocksvm.params import ESTIMATOR_NAMES
from blocksvm.solvers import SOLVERS
from blocksvm.train import TrainParams
from blocksvm.train.params import PARAMS, reference_page

DOC = Path(__file__).resolve().parents[1] / "docs" / "PARAMETERS.md"


def train_help() -> str:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices["train"].format_help()


def test_docs_page_is_made_from_the_declarations():
    assert DOC.read_text() == reference_page(), "run: python -m blocksvm.train.params > docs/PARAMETERS.md"
    for name in PARAMS:
        assert f"| `{name}` |" in DOC.read_text()


def test_every_declared_flag_is_in_train_help():
    text = train_help()
    for param in PARAMS.values():
        flags = param.all_flags if param.cli else ("--class-weight", "-w")
        for flag in (*flags, *(a.flag for a in param.aliases)):
            assert f"{flag} " in text or f"{flag}," in text or f"{flag}\n" in text, flag


def test_train_help_has_no_training_flag_that_is_not_declared():
    parser = next(a for a in build_parser()._actions if a.dest == "command").choices["train"]
    run_options = {
        "help",
        "quiet",
        "verbose",
        "debug",
        "store",
        "model",
        "validation",
        "history",
        "checkpoint",
        "checkpoint_every",
        "checkpoint_seconds",
        "resume",
        "json",
        "cache_dir",
        "warm_start",
        "scheduler",
    }
    assert {a.dest for a in parser._actions} - run_options == set(PARAMS)


def test_estimator_parameters_are_the_declared_ones():
    names = set(inspect.signature(BlockSVC.__init__).parameters) - {"self"}
    assert names == (set(PARAMS) - set(ESTIMATOR_NAMES)) | set(OWN_PARAMS)
    assert set(ESTIMATOR_NAMES.values()) <= set(OWN_PARAMS)
    defaults = BlockSVC().get_params()
    for name in set(PARAMS) - set(ESTIMATOR_NAMES):
        assert defaults[name] == PARAMS[name].default, name
        assert f"    {name} : default=" in BlockSVC.__doc__


def test_train_params_fields_and_defaults_are_the_declared_ones():
    assert TrainParams().to_dict() == {name: p.default for name, p in PARAMS.items()}


def test_solver_choices_come_from_the_registry():
    assert PARAMS["solver"].choices == tuple(SOLVERS)
    with pytest.raises(ParameterError, match="solver must be one of " + ", ".join(SOLVERS)):
        TrainParams(solver="nope").validate()


@pytest.mark.parametrize("name", list(PARAMS))
def test_each_range_is_checked(name):
    with pytest.raises(ParameterError, match=f"^{name}(\\[.*\\])? must be "):
        TrainParams(**{name: "x" if name != "class_weight" else {1: "x"}}).validate()
