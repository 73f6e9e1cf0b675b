"""Help a person can read (issue 41): every option has help, the training commands' options stand in groups, and a
command's help offers only what the command takes (no choice it refuses, no option it does not read)."""

from __future__ import annotations

import argparse
import re

import pytest

from blocksvm.cli import build_parser
from blocksvm.cli.options import COMMANDS
from blocksvm.errors import ParameterError
from blocksvm.params import GROUPS, LOSS
from blocksvm.train.params import PARAMS, RUN, liblinear_codes, settle, settle_tune, solvers_in

TRAINING = ("train", "stream", "tune")
EVERY = (
    "convert",
    "columns",
    "info",
    "generate",
    "train",
    "tune",
    "stream",
    "predict",
    "export",
    "plot",
    "demo",
    "warmup",
)


def parser_of(command: str) -> argparse.ArgumentParser:
    return next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices[command]


def shown(command: str) -> list[argparse.Action]:
    return [a for a in parser_of(command)._actions if a.help != argparse.SUPPRESS]


def settles(command: str, given: dict) -> bool:
    """The command's one check passes ``given``, alone or with a solver of the command that reads what is given."""
    readers = [s for name in given for s in (PARAMS[name].solvers if name in PARAMS else ()) if name != "solver"]
    for solver in (None, *(s for s in readers if s in solvers_in(command))):
        try:
            check = settle_tune if command == "tune" else lambda *a, **k: settle(command, *a, **k)
            check(None, given | ({"solver": solver} if solver else {}), cli=True)
            return True
        except ParameterError:
            continue
    return False


@pytest.mark.parametrize("command", EVERY)
def test_every_option_and_argument_has_help(command):
    """convert --dtype, generate --rows/--features/--seed/--overwrite, demo --test-rows/--features and plot --title
    had none."""
    build_parser()
    assert set(COMMANDS) == set(EVERY)
    for action in shown(command):
        assert action.help and len(action.help) > 10, (command, action.option_strings or action.dest)


def test_train_s_options_stand_in_groups():
    """train --help was 280 lines of 61 options in one flat list, the online learners' knobs among the SVM's."""
    titles = [group.title for group in parser_of("train")._action_groups]
    expected = ("data", "problem", "solver", "stopping", "parallel", "checkpoint", "online learners", "output")
    assert [t for t in titles if t in GROUPS] == list(expected)
    groups = {group.title: {a.dest for a in group._group_actions} for group in parser_of("train")._action_groups}
    assert {"ftrl_alpha", "cw_eta", "l1", "l2", "average"} <= groups["online learners"]
    assert {"tol", "eps", "max_outer", "time_limit"} <= groups["stopping"]
    assert {"threads", "workers", "scheduler", "cocoa_sigma"} <= groups["parallel"]
    assert {"C", "loss", "penalty", "bias", "epsilon", "nu"} <= groups["problem"]


@pytest.mark.parametrize("command", TRAINING)
def test_no_help_offers_a_choice_its_command_refuses(command):
    """stream --help listed --loss crammer-singer, -s 0/2/11/5/6 and the solvers dual-cd and pegasos, which stream
    refuses; each choice a training command's help lists now settles there, alone."""
    offered = 0
    for action in shown(command):
        if isinstance(action.metavar, str) and action.metavar.startswith("{"):
            for choice in action.metavar.strip("{}").split(","):
                assert settles(command, {action.dest: choice}), (action.dest, choice)
                offered += 1
        if action.option_strings == ["-s"]:
            listed = re.findall(r"\b\d+\b", action.help.split(";")[0])
            assert sorted(map(int, listed)) == sorted(liblinear_codes(command))
            for code in listed:
                assert settles(command, LOSS.aliases[0].parse(code)), code
                offered += 1
    assert offered >= 10


@pytest.mark.parametrize(
    "command, absent",
    [
        ("stream", ["-s CODE", "crammer-singer", "dual-cd", "pegasos", "--working-set", "--tol", "takes more passes"]),
        ("tune", ["--ftrl-alpha", "--average", "--cw-eta", "--lambda1", "perceptron", "pegasos"]),
    ],
)
def test_a_command_s_help_shows_only_what_it_reads(command, absent):
    """tune --help listed the online learners, which it refuses; -C said "takes more passes" in stream."""
    text = parser_of(command).format_help()
    for word in absent:
        assert word not in text, word


def test_options_that_are_not_read_are_refused_in_one_line(capsys, tmp_path):
    """Hidden, not gone: an option of another command is refused saying whose it is."""
    from blocksvm.cli import main

    assert main(["stream", str(tmp_path / "a.svm"), str(tmp_path / "m.h5"), "-s", "3"]) == 2
    assert capsys.readouterr().err == (
        "blocksvm: error: -s is LIBLINEAR's solver code, read by train and tune; stream runs online learners: give "
        "--solver\n"
    )
    assert main(["tune", str(tmp_path / "a"), "--ftrl-alpha", "1"]) == 2
    assert "--ftrl-alpha is read by --solver ftrl, not by --solver dual-cd" in capsys.readouterr().err


def test_the_sparse_learners_strengths_do_not_collide_with_the_l1_penalty():
    """--l1 (FTRL's and FOBOS's lambda1) stood beside --penalty l1 and --l1-ratio; --l2 was FTRL's lambda2."""
    flags = {flag for action in parser_of("train")._actions for flag in action.option_strings}
    assert {"--lambda1", "--lambda2", "--penalty", "--l1-ratio"} <= flags
    assert not {"--l1", "--l2"} & flags
    assert PARAMS["l1"].label == "--lambda1" and PARAMS["l2"].label == "--lambda2"


def test_one_spelling_across_commands():
    """convert's --zero-based auto|yes|no against stream's --zero-based/--no-zero-based, --hash-all a switch in one
    and a pair in the other, convert --format with predict's help: one declaration each, now."""
    for name in ("zero_based", "text_format", "hash_bits", "hash_all"):
        commands = [c for c in ("convert", "predict", "stream") if c in RUN[name].commands]
        spellings = {
            c: tuple(next(a for a in parser_of(c)._actions if a.dest == name).option_strings) for c in commands
        }
        assert len(set(spellings.values())) == 1, spellings
    helps = {c: next(a.help for a in parser_of(c)._actions if a.dest == "text_format") for c in ("convert", "predict")}
    assert "the model's" in helps["predict"] and "the model's" not in helps["convert"]
    every = {c: next(a.help for a in parser_of(c)._actions if a.dest == "checkpoint_every") for c in TRAINING}
    assert "blocks" in every["train"] and "chunks of text" in every["stream"]  # each names its own unit


def test_positionals_say_what_they_take():
    """info's positional was named ``store`` and took a model; predict's input said LIBSVM and took VW."""
    info = next(a for a in parser_of("info")._actions if not a.option_strings and a.dest != "help")
    assert info.dest == "path" and "model" in info.help
    predict = next(a for a in parser_of("predict")._actions if a.dest == "input")
    assert "VW" in predict.help and "store" in predict.help
    top = build_parser().format_help()
    assert "Newton" in top and "online learner" in top


def test_scheduler_is_a_declared_parameter():
    """--scheduler was argparse's alone: now a run option, with its readers and its refusal elsewhere."""
    assert RUN["scheduler"].commands == ("train",)
    with pytest.raises(ParameterError, match="^--scheduler is a train option; stream makes one pass"):
        settle("stream", None, {"scheduler": "tcp://127.0.0.1:1"}, cli=True)
