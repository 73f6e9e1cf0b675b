"""The habits of LIBLINEAR, scikit-learn and Vowpal Wabbit users where they meet blocksvm's own rules (issue 47): -e on
the dual solvers, scaled data with the estimators' default solver, labels a model never saw, a bad line in a stream,
the same fit twice, options that nothing reads, other tools' flags, and help that says what the commands do.

Oracles: LIBLINEAR's optimum (liblinear-official), scikit-learn's LinearSVC, the same text without its bad line, the
labels and lines counted by hand, and the solvers' declared readers."""

from __future__ import annotations

import argparse
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import SMALL_SPEC, run_cli
from oracle import liblinear_fit, primal
from sklearn.datasets import load_svmlight_file

import blocksvm
from blocksvm.cli import build_parser
from blocksvm.datasets import write_libsvm
from blocksvm.errors import InputFormatError, ModelError, ParameterError
from blocksvm.io import convert
from blocksvm.model import LinearModel
from blocksvm.predict import LabelWarning, predict
from blocksvm.solvers.registry import SOLVERS
from blocksvm.train import train
from blocksvm.train.params import PARAMS, RUN, TUNE, settle, solvers_in

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """The small generated set (3,000 rows, 400 features, +1/-1) as text and as a store of 3 blocks, and its rows."""
    root = tmp_path_factory.mktemp("habits")
    text = root / "small.txt"
    write_libsvm(text, SMALL_SPEC, progress=False)
    convert(text, root / "small.bsvm", block_rows=1000, progress=False)
    X, y = load_svmlight_file(str(text), n_features=SMALL_SPEC.features)
    return text, root / "small.bsvm", X, y


def cut(text: Path, target: Path, lines: int) -> Path:
    """The first ``lines`` lines of ``text`` at ``target``."""
    target.write_text("".join(text.read_text().splitlines(keepends=True)[:lines]))
    return target


# ---- 1. -e on the dual solvers ----------------------------------------------------------------------------------


@pytest.mark.parametrize("loss", ["squared-hinge", "hinge"])
def test_e_alone_stops_a_dual_solver_as_liblinear_s_e_does(small, loss):
    """``-e 1e-4`` on -s 1 and -s 3 made the same passes and objective as no -e: the default gap rule (--tol 1e-3)
    stopped first. Given alone, -e is the rule now, as in LIBLINEAR: more passes, the PG violation within it, the primal
    closer to LIBLINEAR's optimum; given with --tol, either stops the run and the reason says -e was not met."""
    _, store, X, y = small
    coef, intercept = liblinear_fit(X, y, loss, C=1.0, bias=1.0, eps=1e-6)
    best = primal(coef, intercept, X, y, 1.0, loss)
    default = train(store, loss=loss, verbose=0)
    tight = train(store, loss=loss, eps=1e-4, verbose=0)
    assert default.stop_reason.startswith("relative duality gap")
    assert tight.stop_reason.startswith("PG violation") and tight.history[-1]["pg_violation"] <= 1e-4
    assert len(tight.history) > len(default.history)
    assert abs(tight.model.summary["primal"] - best) < abs(default.model.summary["primal"] - best)
    both = train(store, loss=loss, eps=1e-4, tol=1e-3, verbose=0)
    assert len(both.history) == len(default.history)
    assert both.stop_reason.endswith(
        f"(PG violation {both.history[-1]['pg_violation']:.3g} not yet <= eps 0.0001: --tol 0 leaves -e alone)"
    )


# ---- 2. scaled data and the estimators' default solver ----------------------------------------------------------


def test_the_estimators_solver_auto_is_chosen_by_the_data_s_shape():
    """``solver="auto"``, the estimators' default, is Newton where rows outnumber features and Newton minimizes the
    problem and reads what was given (scikit-learn's LinearSVC(dual="auto") picks its primal there), else dual CD."""

    def chosen(shape, **given):
        return settle("train", None, {"solver": "auto", **given}, shape=shape)[0].solver

    assert chosen((1000, 10)) == "newton"
    assert chosen((1000, 10), loss="logistic") == "newton"
    assert chosen((10, 1000)) == "dual-cd"
    assert chosen((1000, 10), loss="hinge") == "dual-cd"  # (no primal for the hinge: LIBLINEAR's -s 3)
    assert chosen((1000, 10), inner_passes=3) == "dual-cd"  # (a parameter Newton does not read)
    assert chosen((1000, 10), penalty="l1") == "cdn"  # (the penalty's own rule first)
    assert chosen(None) == "dual-cd"  # (a store: out of core)
    assert blocksvm.BlockSVC().get_params()["solver"] == "auto"


def test_scaled_a9a_converges_with_the_default_and_lands_by_linear_svc(shared_data):
    """make_pipeline(StandardScaler(with_mean=False), BlockSVC(C=0.5)) on a9a stopped at max_outer 50, 9e-2 from
    its gap, 84.1-84.7% on a9a.t against LinearSVC's 84.9%, with a ConvergenceWarning. The default now converges,
    silently, within 0.1 point of LinearSVC's test accuracy."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    X, y = load_svmlight_file(str(shared_data / "a9a"), n_features=123)
    Xt, yt = load_svmlight_file(str(shared_data / "a9a.t"), n_features=123)
    reference = make_pipeline(StandardScaler(with_mean=False), LinearSVC(C=0.5)).fit(X, y).score(Xt, yt)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ours = make_pipeline(StandardScaler(with_mean=False), blocksvm.BlockSVC(C=0.5)).fit(X, y)
    assert not ours[-1].stop_reason_.startswith("max_outer")
    assert abs(ours.score(Xt, yt) - reference) <= 0.001


def test_a_dual_run_short_of_its_tolerance_names_the_solver_that_converges(small, capsys):
    """The ConvergenceWarning suggested more passes (7 s on scaled a9a), not Newton (1.4 s)."""
    from sklearn.exceptions import ConvergenceWarning

    _, store, X, y = small
    with pytest.warns(ConvergenceWarning, match="or give solver='newton': it converges in fewer passes"):
        blocksvm.BlockSVC(solver="dual-cd", max_outer=1).fit(X, y)
    code, _, err = run_cli(capsys, "train", store, store.parent / "m.h5", "--max-outer", "1")
    assert code == 0 and "--solver newton (solver='newton' in Python) converges in fewer passes" in err


# ---- 3. labels a model never saw --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def three_classes(small):
    """A model of classes 1, 2 and 3 (the small set's rows relabelled in turn)."""
    text, _, _, _ = small
    lines = text.read_text().splitlines()
    relabelled = text.parent / "three.txt"
    relabelled.write_text("".join(f"{i % 3 + 1} {line.split(' ', 1)[1]}\n" for i, line in enumerate(lines)))
    model = text.parent / "three.h5"
    train(relabelled, max_outer=2, verbose=0).model.save(model)
    return model


def test_labels_the_model_never_saw_are_said_and_refused_with_strict(small, three_classes, capsys):
    """A 3-class model (1, 2, 3) on a -1/+1 file printed "Accuracy = 0.0000%", rc 0, without a word. The rows whose
    label is not a class of the model are counted (their labels, the first line) and --strict refuses the first."""
    text, store, _, y = small
    unseen = int(np.count_nonzero(y == -1))  # (+1 is class 1 of the model)
    first = int(np.flatnonzero(y == -1)[0]) + 1
    with pytest.warns(LabelWarning) as caught:
        summary = predict(three_classes, text)
    assert summary.rows == len(y)
    assert str(caught[0].message) == (
        f"{text}: {unseen} rows have labels the model never saw (-1; the first at line {first}), not among its "
        "classes (1, 2, 3): they count as predicted wrong (--strict or strict=True makes this an error)"
    )
    code, _, err = run_cli(capsys, "predict", three_classes, store)
    assert code == 0 and err.startswith(f"warning: {store}: {unseen} rows have labels the model never saw (-1; ")
    with pytest.raises(ModelError, match=rf"{text}:{first}: label -1 is not among the model's classes \(1, 2, 3\)"):
        predict(three_classes, text, strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LabelWarning)
        predict(LinearModel.load(three_classes), text.parent / "three.txt")  # its own labels: no word


# ---- 4. a bad line in a stream, and wherever text is read -------------------------------------------------------


@pytest.fixture(scope="module")
def bad_line(small):
    """The small set's first 2,000 lines with a malformed line 1,001, and the same without it."""
    text, _, _, _ = small
    lines = text.read_text().splitlines(keepends=True)[:2000]
    bad, clean = text.parent / "bad.txt", text.parent / "clean.txt"
    bad.write_text("".join([*lines[:1000], "+1 3:x 7:1\n", *lines[1000:]]))
    clean.write_text("".join(lines))
    return bad, clean


def test_stream_skips_bad_lines_and_learns_the_others(bad_line, tmp_path, capsys):
    """One bad line at row 1,001 ended `stream` with rc 2 and no model, and only convert could skip. Now the stream
    says how to go past it, and with --skip-bad-lines learns the model of the text without that line, saying the
    count."""
    bad, clean = bad_line
    code, _, err = run_cli(capsys, "stream", bad, tmp_path / "o.h5")
    assert code == 2 and f"{bad}:1001: value in '3:x' is not a number" in err
    assert "--skip-bad-lines skips such lines and counts them" in err
    code, _, err = run_cli(capsys, "stream", bad, tmp_path / "o.h5", "--skip-bad-lines", "-q")
    assert code == 0
    run_cli(capsys, "stream", clean, tmp_path / "clean.h5", "-q")
    np.testing.assert_array_equal(
        LinearModel.load(tmp_path / "o.h5").coef, LinearModel.load(tmp_path / "clean.h5").coef
    )
    result = blocksvm.stream.stream(bad, skip_bad_lines=True, verbose=0)
    assert result.summary["skipped_lines"] == 1 and result.summary["first_skipped"].startswith(f"{bad}:1001: ")
    code, _, err = run_cli(capsys, "stream", bad, tmp_path / "o.h5", "--skip-bad-lines")
    assert f"skipped 1 malformed lines; the first: {bad}:1001: value in '3:x' is not a number" in err


def test_train_and_predict_skip_bad_lines_of_text_and_refuse_it_for_a_store(bad_line, small, tmp_path, capsys):
    bad, clean = bad_line
    code, _, err = run_cli(capsys, "train", bad, tmp_path / "m.h5", "--skip-bad-lines", "--max-outer", "2")
    assert code == 0 and f"skipped 1 malformed lines of {bad}; the first: {bad}:1001: " in err
    reference = train(clean, max_outer=2, verbose=0, cache_dir=tmp_path / "cache").model
    np.testing.assert_array_equal(LinearModel.load(tmp_path / "m.h5").coef, reference.coef)
    summary = predict(tmp_path / "m.h5", bad, tmp_path / "p.txt", skip_bad_lines=True)
    expected = predict(tmp_path / "m.h5", clean, tmp_path / "q.txt")
    assert (summary.rows, summary.correct, summary.skipped_lines) == (expected.rows, expected.correct, 1)
    assert (tmp_path / "p.txt").read_text() == (tmp_path / "q.txt").read_text()
    assert "skipped 1 malformed lines (no prediction written for them)" in str(summary)
    code, _, err = run_cli(capsys, "train", small[1], tmp_path / "n.h5", "--skip-bad-lines")
    assert code == 2 and "--skip-bad-lines (skip_bad_lines=) reads text" in err


def test_vw_text_read_as_libsvm_says_format_vw(small, tmp_path):
    """A .vw file converted without --format vw got "'|f' is not an index:value pair" and no hint (the reverse
    mistake had one)."""
    vw = tmp_path / "s.vw"
    vw.write_text("".join(line.replace(" ", " |f ", 1) + "\n" for line in small[0].read_text().splitlines()[:50]))
    hint = "'|f' is not an index:value pair: it looks like Vowpal Wabbit text (features after a '|namespace'): read it "
    with pytest.raises(InputFormatError, match=re.escape(hint + "with --format vw (text_format='vw' in Python)")):
        convert(vw, tmp_path / "s.bsvm", progress=False)


# ---- 5. the same fit twice --------------------------------------------------------------------------------------


def test_the_estimators_fit_the_same_model_twice_by_default(small):
    """random_state=None drew a new seed each fit: BlockSVCCV's C_ was 0.5 in one run of the README's block and
    0.03125 in the next. The default is 0 now, as the command line's --seed 0."""
    _, _, X, y = small
    X, y = X[:600], y[:600]
    fits = [blocksvm.BlockSVC(loss="hinge").fit(X, y) for _ in range(2)]
    np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)
    searches = [blocksvm.BlockSVCCV(Cs=[0.03125, 0.5], cv=3, loss="hinge").fit(X, y) for _ in range(2)]
    assert searches[0].C_ == searches[1].C_
    np.testing.assert_array_equal(searches[0].cv_results_["score"], searches[1].cv_results_["score"])
    online = [blocksvm.OnlineClassifier().fit(X, y) for _ in range(2)]
    np.testing.assert_array_equal(online[0].coef_, online[1].coef_)


# ---- 6. options that nothing reads ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--checkpoint-seconds", "5"], "--checkpoint-seconds is read only with --checkpoint PATH (or --resume PATH)"),
        (["--checkpoint-every", "2"], "--checkpoint-every is read only with --checkpoint PATH (or --resume PATH)"),
        (["--cocoa-sigma", "2"], "--cocoa-sigma is read only with --workers K > 1 (or --scheduler)"),
        (["--no-line-search"], "--line-search is read only with --workers K > 1 (or --scheduler)"),
        (
            ["-s", "1", "--loss", "logistic"],
            "-s 1 is the squared-hinge loss with the l2 penalty; --loss logistic beside it asks for another problem "
            "(LIBLINEAR's -s 7): give one of them",
        ),
        (
            ["-s", "6", "--penalty", "l2"],
            "-s 6 is the logistic loss with the l1 penalty; --penalty l2 beside it asks for another problem "
            "(LIBLINEAR's -s 0): give one of them",
        ),
    ],
)
def test_an_option_nothing_reads_is_refused(small, tmp_path, capsys, argv, message):
    """--checkpoint-seconds without --checkpoint, --cocoa-sigma or --line-search without --workers were accepted and
    did nothing; -s 1 --loss logistic trained -s 7 while -s 0 --loss hinge was refused."""
    code, _, err = run_cli(capsys, "train", small[1], tmp_path / "m.h5", *argv)
    assert code == 2 and err.startswith(f"blocksvm: error: {message}") and len(err.splitlines()) == 1
    assert not (tmp_path / "m.h5").exists()


def test_the_python_face_refuses_them_too_and_keeps_what_reads_them(small, tmp_path):
    with pytest.raises(ParameterError, match="checkpoint_seconds is read only with checkpoint=PATH"):
        train(small[1], checkpoint_seconds=5, verbose=0)
    with pytest.raises(ParameterError, match="cocoa_sigma is read only with workers=K > 1"):
        blocksvm.BlockSVC(solver="dual-cd", cocoa_sigma=2.0).fit(small[2][:100], small[3][:100])
    result = train(small[1], checkpoint=tmp_path / "ck", checkpoint_seconds=5, max_outer=1, verbose=0)
    assert result.model.summary["checkpoints"] >= 1


# ---- 7. LIBLINEAR's and VW's flags ------------------------------------------------------------------------------


def test_liblinear_s_and_vw_s_flags_are_answered_in_one_line(small, tmp_path, capsys, monkeypatch):
    text, store, _, _ = small
    code, _, err = run_cli(capsys, "train", "-s", "2", "-C", text, tmp_path / "m.h5")
    assert code == 2 and len(err.splitlines()) == 1
    assert "-C VALUE is the cost, LIBLINEAR's -c" in err and "'blocksvm tune STORE'" in err and str(text) in err
    code, _, err = run_cli(capsys, "convert", text, tmp_path / "v.bsvm", "-b", "18")
    assert code == 2 and "Vowpal Wabbit's -b BITS is --hash-bits BITS here" in err
    code, _, err = run_cli(capsys, "stream", text, tmp_path / "o.h5", "--passes", "3")
    assert code == 2 and "stream makes one pass" in err
    monkeypatch.chdir(tmp_path)  # LIBLINEAR's train writes INPUT.model in the current folder
    code, _, err = run_cli(capsys, "train", "-s", "2", store, "--max-outer", "1")
    assert code == 0 and f"model written to {store.name}.model;" in err
    start = f"{store.name}.model"
    assert run_cli(capsys, "train", "-s", "2", store, "i.h5", "--max-outer", "2", "-i", start)[0] == 0
    assert run_cli(capsys, "train", "-s", "2", store, "w.h5", "--max-outer", "2", "--warm-start", start)[0] == 0
    cold = train(store, solver="newton", max_outer=2, verbose=0).model
    np.testing.assert_array_equal(LinearModel.load("i.h5").coef, LinearModel.load("w.h5").coef)
    assert not np.array_equal(LinearModel.load("i.h5").coef, cold.coef)  # (it did start from the model)


# ---- 8. words that say what the commands do ---------------------------------------------------------------------

# The learners' names in prose, as help texts write them; a possessive ("Pegasos's schedule") names a method, not a
# reader.
PROSE = {
    "OWL-QN": "owl-qn",
    "Newton": "newton",
    "dual CD": "dual-cd",
    "CDN": "cdn",
    "newGLMNET": "glmnet",
    "Pegasos": "pegasos",
    "CoCoA+": "dual-cd",
}
_NAME = "|".join(sorted(map(re.escape, SOLVERS), key=len, reverse=True))
CLAUSE = re.compile(rf"(?:^|[.;] )((?:{_NAME})(?:(?:, | and )(?:{_NAME}))*):")


def named(text: str) -> set[str]:
    """The learners ``text`` names (registry names, and the prose names not in the possessive)."""
    found = {n for n in SOLVERS if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text)}
    return found | {n for word, n in PROSE.items() if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w'-])", text)}


def clauses(text: str) -> set[str]:
    """The learners of ``text``'s clauses of its own (``dual-cd: ...; newton, owl-qn: ...``), outside parentheses."""
    depth = lambda i: text[:i].count("(") - text[:i].count(")")  # noqa: E731
    return {n for m in CLAUSE.finditer(text) if depth(m.start(1)) == 0 for n in re.split(r", | and ", m.group(1))}


@pytest.mark.parametrize("p", [*PARAMS.values(), *RUN.values(), *TUNE.values()], ids=lambda p: p.name)
def test_each_learner_a_help_names_reads_the_parameter(p):
    """--threads and --workers left out cdn and glmnet, --lambda1 named OWL-QN as the L1 learner (it does not read
    lambda1): a learner a help names reads the parameter, and a help that describes the learners clause by clause
    (``dual-cd: ...; newton, owl-qn: ...``) describes every learner that reads it, as the choices a help offers are
    the ones its command takes (tests/test_cli_help.py)."""
    readers = set(p.solvers) if p.solvers else set(SOLVERS)
    for command, text in (("", p.help), *p.command_help):
        assert named(text) <= readers, (command, named(text) - readers)
        listed = clauses(text)
        under = {r for r in readers if not command or command in SOLVERS[r].commands}
        assert not listed or under <= listed, (command, under - listed)


def parser_of(command: str) -> argparse.ArgumentParser:
    return next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices[command]


@pytest.mark.parametrize("command", ["train", "tune", "stream"])
def test_a_command_s_help_speaks_of_that_command(command):
    """tune --help's --order spoke of online learners and its --bias of warm starts (tune has neither), stream
    --help's --resume of a search (tune), and train --help's --solver described two of its ten learners."""
    actions = [a for a in parser_of(command)._actions if a.help and a.help != argparse.SUPPRESS]
    reads = {a.dest for a in actions}
    online = any(SOLVERS[name].online for name in solvers_in(command))
    for action in actions:
        text = action.help
        if "warm_start" not in reads:
            assert "warm-start from" not in text and "--warm-start" not in text, action.dest
        if not online:
            assert "online learner" not in text, action.dest
        for other in {"train", "tune", "stream"} - {command}:
            assert f"({other})" not in text, (action.dest, other)
    (solver,) = [a for a in actions if a.dest == "solver"]
    assert named(solver.help) == set(solvers_in(command))


def test_the_docs_say_what_the_commands_do():
    """TROUBLESHOOTING offered --zero-based auto|yes|no (a flag now), PARAMETERS.md gave zero_based "default False"
    (convert detects it), checkpoint_every's 0 meant two things, and `blocksvm --help` had OWL-QN as train's L1."""
    troubleshooting = (REPO / "docs" / "TROUBLESHOOTING.md").read_text()
    assert "(auto, yes or no)" not in troubleshooting
    parameters = (REPO / "docs" / "PARAMETERS.md").read_text()
    (row,) = [line for line in parameters.splitlines() if line.startswith("| `zero_based` |")]
    assert "convert: `'auto'`" in row
    assert "0: never" not in RUN["checkpoint_every"].help
    train_line = parser_of("train").description
    assert "CDN, newGLMNET" in train_line


# ---- 9. small ones ----------------------------------------------------------------------------------------------


def test_a_binary_file_is_one_line_not_its_bytes(tmp_path, capsys):
    binary = tmp_path / "a.npy"
    np.save(binary, np.arange(100.0))
    code, _, err = run_cli(capsys, "convert", binary, tmp_path / "b.bsvm")
    assert code == 2 and err == (
        f"blocksvm: error: {binary}:1: is not UTF-8 text (a binary file?): blocksvm reads LIBSVM or VW text, plain or "
        ".gz, .bz2 or .xz\n"
    )


def test_a_stray_label_and_a_stray_index_0_are_said_when_converted(small, tmp_path):
    """A single +2 on line 1,001 made a 3-class model silently; a stray 0:1 there made the whole file 0-based."""
    lines = small[0].read_text().splitlines(keepends=True)
    (tmp_path / "two.txt").write_text("".join([*lines[:1000], "+2 3:1\n", *lines[1000:]]))
    (tmp_path / "zero.txt").write_text("".join([*lines[:1000], "+1 0:1 3:1\n", *lines[1000:]]))
    summary = convert(tmp_path / "two.txt", tmp_path / "two.bsvm", progress=False)
    assert summary.rare_labels == {2.0: [1, 1001]}
    assert "note: label 2 is on 1 row of 3,001 (the first on line 1,001): a class of its own" in str(summary)
    summary = convert(tmp_path / "zero.txt", tmp_path / "zero.bsvm", progress=False)
    assert summary.zero_line == 1001 and "an index 0 is on line 1,001" in str(summary)
    assert convert(small[0], tmp_path / "plain.bsvm", progress=False).notes() == []


def test_train_says_it_replaced_a_model_and_a_finished_resume_removes_the_partial(small, tmp_path, capsys):
    store = small[1]
    run_cli(capsys, "train", store, tmp_path / "m.h5", "--max-outer", "1")
    code, _, err = run_cli(capsys, "train", store, tmp_path / "m.h5", "--max-outer", "1")
    assert code == 0 and f"model written to {tmp_path / 'm.h5'} (it replaced the model there)" in err
    run_cli(capsys, "train", store, tmp_path / "r.h5", "--max-outer", "1", "--checkpoint", tmp_path / "ck")
    partial = tmp_path / "r.partial.h5"
    partial.write_bytes((tmp_path / "m.h5").read_bytes())  # what an interrupted run leaves
    code, _, err = run_cli(capsys, "train", store, tmp_path / "r.h5", "--max-outer", "2", "--resume", tmp_path / "ck")
    assert code == 0 and not partial.exists() and f"removed {partial}" in err


class Ran(Exception):
    """A command of the warm-up ran."""


def ran(*args):
    raise Ran


def test_warmup_compiles_nothing_while_its_caches_stand(monkeypatch, tmp_path):
    """warmup took 43-46 s with everything compiled, running every command again to load its caches. While the caches
    a warm-up left stand (the same files, sources, numba, Python and processor), it says so and runs nothing."""
    from blocksvm import warmup

    if not warmup._caches():
        pytest.skip("numba caches outside the package here")
    monkeypatch.setattr(warmup, "STAMP", tmp_path / "warmup.json")
    monkeypatch.setattr(warmup, "_run", ran)
    warmup._stamp()
    said = []
    figures = warmup.warmup(1, say=said.append)
    assert figures["commands"] == 0 and said[0].startswith("warm already: the kernels of")
    monkeypatch.setattr(warmup, "sources_digest", lambda: "another source")
    with pytest.raises(Ran):
        warmup.warmup(1, say=said.append)
