"""One declaration of every parameter: the docs page, each command's ``--help``, the estimators and the checks
agree with it, and a parameter knows who reads it."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from blocksvm import BlockSVC, BlockSVCCV, BlockSVRCV, OnlineClassifier
from blocksvm.cli import build_parser, main
from blocksvm.errors import ParameterError
from blocksvm.estimator import OWN_PARAMS
from blocksvm.io.text_cache import cache_path
from blocksvm.online import OWN_PARAMS as ONLINE_OWN
from blocksvm.params import COMMON, ESTIMATOR_NAMES
from blocksvm.solvers import SOLVERS
from blocksvm.train import TrainParams, train
from blocksvm.train.params import (
    AUTO,
    PARAMS,
    RUN,
    TUNE,
    for_command,
    liblinear_codes,
    reference_page,
    settle,
    tune_reads,
    unset,
)

DOC = Path(__file__).resolve().parents[1] / "docs" / "PARAMETERS.md"
OWN_FLAGS = {"help", "quiet", "verbose", "debug", "json"}  # every command's, or the output's

AVERAGING = "pegasos, perceptron, pa, pa1, pa2, cw, arow, ogd"  # the readers of average, in the registry's order


def parser_of(command: str):
    return next(a for a in build_parser()._actions if a.dest == "command").choices[command]


def shown(command: str) -> set[str]:
    """The parameters whose options ``command --help`` shows (an alias's destination is its own: its parameter)."""
    of_alias = {alias.dest: p.name for p in PARAMS.values() for alias in p.aliases}
    return {of_alias.get(a.dest, a.dest) for a in parser_of(command)._actions if a.help != "==SUPPRESS=="}


def test_docs_page_is_made_from_the_declarations():
    assert DOC.read_text() == reference_page(), "run: python -m blocksvm.train.params > docs/PARAMETERS.md"
    for name in (*PARAMS, *RUN):
        assert f"| `{name}` |" in DOC.read_text()


@pytest.mark.parametrize("command, positional", [("train", {"store", "model"}), ("stream", {"input", "model"})])
def test_help_shows_exactly_the_parameters_the_command_reads(command, positional):
    read = {p.name for p in (*for_command(command), *for_command(command, run_options=True))}
    assert shown(command) - OWN_FLAGS - positional == read
    text = parser_of(command).format_help()
    offered = liblinear_codes(command)  # -s: shown where the command runs a solver of LIBLINEAR's codes
    for p in (*for_command(command), *for_command(command, run_options=True)):
        for flag in (*p.all_flags, *(a.flag for a in p.aliases if offered)):
            assert f"{flag} " in text or f"{flag}," in text or f"{flag}\n" in text, flag
    assert ("-s CODE" in text) == bool(offered) == (command == "train")


def test_readers_come_from_the_solvers_lists():
    for name, solver in SOLVERS.items():
        for p in solver.params:
            assert name in PARAMS[p.name].solvers
    for p in PARAMS.values():
        for name in p.solvers:
            assert p.name in {q.name for q in SOLVERS[name].params}
    assert PARAMS["average"].solvers == ("pegasos", "perceptron", "pa", "pa1", "pa2", "cw", "arow", "ogd")
    assert PARAMS["workers"].commands == ("train",)  # dual CD's, which runs under train only
    assert PARAMS["cw_eta"].commands == ("train", "stream", "partial_fit")  # an online learner's
    assert PARAMS["bias"].solvers == ()  # every solver's


def test_estimator_parameters_are_the_declared_ones():
    names = set(inspect.signature(BlockSVC.__init__).parameters) - {"self"}
    train_reads = {p.name for p in for_command("train")}
    assert names == (train_reads - set(ESTIMATOR_NAMES)) | set(OWN_PARAMS)
    assert {ESTIMATOR_NAMES[name] for name in train_reads & set(ESTIMATOR_NAMES)} <= set(OWN_PARAMS)
    defaults = BlockSVC().get_params()
    for name in train_reads - set(ESTIMATOR_NAMES):
        assert defaults[name] == (AUTO if name == "solver" else unset(PARAMS[name])), name  # (auto: by the shape)
        assert f"    {name} : default=" in BlockSVC.__doc__
    online = set(inspect.signature(OnlineClassifier.__init__).parameters) - {"self"}
    partial_fit_reads = {p.name for p in for_command("partial_fit")}
    assert online == (partial_fit_reads - {"seed", "max_outer"}) | set(ONLINE_OWN)
    assert OnlineClassifier().get_params()["solver"] == "perceptron"


@pytest.mark.parametrize("estimator", [BlockSVCCV, BlockSVRCV])
def test_the_cv_estimators_parameters_are_what_tune_reads(estimator):
    names = set(inspect.signature(estimator.__init__).parameters) - {"self"}
    reads = {p.name for p in tune_reads() if p.name in PARAMS} | (set(TUNE) - {"refit"})  # refit: fit keeps the model
    if estimator is BlockSVRCV:
        reads.discard("class_weight")
    renamed = {ESTIMATOR_NAMES[name] for name in reads & set(ESTIMATOR_NAMES)}
    assert renamed == {"random_state", "n_jobs", "cv", "Cs"}
    assert names == (reads - set(ESTIMATOR_NAMES)) | renamed | set(OWN_PARAMS)
    assert "C" not in names and "solver" in names  # dual-cd or newton
    defaults = estimator().get_params()
    assert defaults["cv"] == TUNE["folds"].default and defaults["Cs"] == TUNE["C_grid"].default
    for name in reads - set(ESTIMATOR_NAMES):
        expected = "epsilon-insensitive" if (name, estimator) == ("loss", BlockSVRCV) else unset((PARAMS | TUNE)[name])
        assert defaults[name] == (AUTO if name == "solver" else expected), name
        assert f"    {name} : default=" in estimator.__doc__


def test_train_params_fields_and_defaults_are_the_declared_ones():
    assert TrainParams().to_dict() == {name: unset(p) for name, p in PARAMS.items()}  # (None: the solver's own)
    assert TrainParams().to_dict()["max_outer"] is None and PARAMS["max_outer"].default == 50
    assert [p.name for p in COMMON] == list(PARAMS)[: len(COMMON)]


def test_solver_choices_come_from_the_registry():
    assert PARAMS["solver"].choices == tuple(SOLVERS)
    with pytest.raises(ParameterError, match="solver must be one of " + ", ".join(SOLVERS)):
        TrainParams(solver="nope").validate()
    assert next(p for p in for_command("stream") if p.name == "solver").choices == tuple(
        name for name, s in SOLVERS.items() if s.online
    )


@pytest.mark.parametrize("name", list(PARAMS))
def test_each_range_is_checked(name):
    with pytest.raises(ParameterError, match=f"^{name}(\\[.*\\])? must be "):
        TrainParams(**{name: "x" if name != "class_weight" else {1: "x"}}).validate()


def test_the_commands_defaults():
    assert settle("train")[0].solver == "dual-cd"
    assert settle("stream")[0].solver == "perceptron"
    assert settle("stream")[1].checkpoint_every == 16 and settle("train")[1].checkpoint_every == 0


@pytest.mark.parametrize(
    "command, given, message",
    [
        ("stream", {"max_outer": 3}, "max_outer is a train and OnlineClassifier option; stream makes one pass"),
        ("stream", {"workers": 2}, "workers is a train option; stream makes one pass over text, in file order"),
        ("train", {"zero_based": True}, "zero_based is a stream option; train trains on a store"),
        ("train", {"classes": (1, 2)}, "classes is a stream option; train trains on a store"),
        ("partial_fit", {"time_limit": 2.0}, "time_limit is a train option; OnlineClassifier learns online"),
        (
            "train",
            {"solver": "pegasos", "tol": 0.0},
            "tol is read by the solvers dual-cd, crammer-singer, one-class, not by solver='pegasos'",
        ),
        (
            "train",
            {"average": False},
            f"average is read by the solvers {AVERAGING}, not by solver='dual-cd'",
        ),
        (
            "stream",
            {"solver": "pa", "C": 2.0},
            "C is read by the solvers dual-cd, newton, owl-qn, cdn, glmnet, pegasos, pa1, pa2, ogd.*, not by",
        ),
        ("stream", {"solver": "cw", "arow_r": 2.0}, "arow_r is read by the solvers arow, not by solver='cw'"),
        ("train", {"cost": 1.0}, "unknown parameter"),
    ],
)
def test_a_value_nothing_reads_is_refused(command, given, message):
    with pytest.raises(ParameterError, match=f"^{message}"):
        settle(command, None, given)


def test_a_train_params_object_counts_what_differs_from_the_defaults():
    with pytest.raises(ParameterError, match="batch_size is read by the solvers pegasos"):
        settle("train", TrainParams(batch_size=4))
    assert settle("train", TrainParams(solver="pegasos", batch_size=4))[0].batch_size == 4


def test_the_estimators_refuse_through_the_same_check():
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=60, n_features=4, random_state=0)
    with pytest.raises(ParameterError, match=f"average is read by the solvers {AVERAGING}"):
        BlockSVC(average=False).fit(X, y)
    with pytest.raises(ParameterError, match="C is read by"):
        OnlineClassifier(solver="cw", C=3.0).fit(X, y)


def test_the_command_line_names_the_flag(tmp_path, capsys):
    assert main(["train", str(tmp_path / "none.bsvm"), str(tmp_path / "m.h5"), "--no-average"]) == 2
    assert capsys.readouterr().err == (
        f"blocksvm: error: --average is read by --solver {AVERAGING}, not by --solver dual-cd\n"
    )


def test_train_refuses_unread_values_before_converting_a_text_file(tmp_path):
    (tmp_path / "d.svm").write_text("1 1:1\n-1 2:1\n")
    with pytest.raises(ParameterError, match="eps is read by the solvers dual-cd"):
        train(tmp_path / "d.svm", solver="perceptron", eps=0.1, verbose=0)
    assert not cache_path(tmp_path / "d.svm").exists()
