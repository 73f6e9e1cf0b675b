"""LIBLINEAR's flags where blocksvm answered otherwise (issue 41): ``-s 11 -p``, the ``-s 21`` objective and
``-B -1``, warm starts of another problem, shards that choose Newton, ``-s 5 --loss logistic`` and Ctrl-C without a
checkpoint. The oracles: LIBLINEAR itself (liblinear-official), numpy transcriptions of its objectives, and the
serial run's model, bit for bit."""

from __future__ import annotations

import signal

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import memory_for, run_cli
from oracle import svr_primal
from sklearn.datasets import load_svmlight_file

from blocksvm import BlockSVR
from blocksvm.datasets import SyntheticSpec, write_libsvm
from blocksvm.io import convert, write_store
from blocksvm.model import LinearModel
from blocksvm.train import train

liblinear = pytest.importorskip("liblinear.liblinearutil")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """2,000 generated rows (labels -1/+1) as text and as a store of 4 blocks."""
    root = tmp_path_factory.mktemp("liblinear-flags")
    write_libsvm(root / "train.svm", SyntheticSpec(rows=2000, features=120, nnz=12, seed=5), progress=False)
    convert(root / "train.svm", root / "train.bsvm", block_rows=500, progress=False)
    X, y = load_svmlight_file(str(root / "train.svm"), n_features=120)
    return root, X, y


@pytest.fixture(scope="module")
def regression(tmp_path_factory):
    """Real-valued targets of 1,500 sparse rows, as a store of 3 blocks."""
    rng = np.random.default_rng(3)
    X = sp.random(1500, 40, density=0.25, random_state=4, format="csr")
    y = X @ rng.normal(size=40) + 0.1 * rng.normal(size=1500) + 0.3
    path = tmp_path_factory.mktemp("svr") / "svr.bsvm"
    write_store((X, y), path, block_rows=500, dtype="float64", progress=False)
    return path, X, y


@pytest.mark.parametrize("eps", [0.05, 0.3])
def test_s11_reads_p_as_liblinear_does(capsys, regression, tmp_path, eps):
    """``train -s 11 -p EPS`` was refused (--epsilon was dual CD's alone): Newton's SVR has the epsilon given, the
    objective LIBLINEAR's -s 11 -p EPS reaches, and BlockSVR(solver="newton", epsilon=EPS) trains the same model (its
    loss -s 11's)."""
    path, X, y = regression
    code, _, err = run_cli(capsys, "train", path, tmp_path / "m.h5", "-s", "11", "-p", eps, "-e", "1e-6", "-q")
    assert code == 0, err
    model = LinearModel.load(tmp_path / "m.h5")
    assert model.params["solver"] == "newton" and model.params["epsilon"] == eps
    theirs = liblinear.train(liblinear.problem(y, X), f"-s 11 -p {eps} -c 1 -B 1 -e 1e-8 -q")
    w, b = theirs.get_decfun()
    ours = svr_primal(model.coef[0], model.intercept[0], X, y, 1.0, eps, squared=True)
    assert ours == pytest.approx(svr_primal(np.array(w), b, X, y, 1.0, eps, squared=True), rel=1e-6)
    squared = "squared-epsilon-insensitive"  # (BlockSVR's default loss is -s 13's, which Newton does not minimize)
    estimator = BlockSVR(loss=squared, solver="newton", epsilon=eps, eps=1e-6, random_state=0).fit(str(path))
    np.testing.assert_array_equal(estimator.coef_, model.coef[0])


def test_s21_prints_liblinear_s_objective_and_takes_its_default_bias(capsys, data, tmp_path):
    """``-s 21`` printed -f(alpha) where LIBLINEAR prints f(alpha) = 1/2 ||w||^2 > 0, and ``-B -1`` (LIBLINEAR's
    default: the one-class SVM has no bias feature) was refused; another bias still is, saying why."""
    root, X, _ = data
    code, _, err = run_cli(
        capsys, "train", root / "train.bsvm", tmp_path / "oc.h5", "-s", "21", "-n", "0.2", "-B", "-1"
    )
    assert code == 0, err
    (final,) = [line for line in err.splitlines() if line.startswith("optimization finished")]
    printed = float(final.split("objective = ")[1].split(",")[0])
    theirs = liblinear.train(liblinear.problem(np.zeros(X.shape[0]), X), "-s 21 -n 0.2 -e 1e-6 -q")
    w = np.array(theirs.get_decfun()[0])
    assert printed > 0 and printed == pytest.approx(0.5 * w @ w, rel=1e-3)  # LIBLINEAR's "Objective value"
    model = LinearModel.load(tmp_path / "oc.h5")
    assert printed == pytest.approx(0.5 * model.coef[0] @ model.coef[0], rel=1e-5)
    assert f"primal = {model.summary['primal']:.6e}" in final  # the primal beside it, -f at the optimum
    code, _, err = run_cli(capsys, "train", root / "train.bsvm", tmp_path / "oc2.h5", "-s", "21", "-B", "2")
    assert code == 2 and err.startswith("blocksvm: error: --bias is not read by --solver one-class: its offset is rho")
    code, out, _ = run_cli(capsys, "info", tmp_path / "oc.h5")
    (line,) = [line for line in out.splitlines() if line.startswith("objective")]
    assert float(line.split()[1]) == pytest.approx(printed, rel=1e-6) and "LIBLINEAR's, its dual's value" in line


def models(root, tmp_path, capsys) -> dict:
    """A Crammer and Singer model, a regression model, a one-class model and a classifier without a bias."""
    store, made = root / "train.bsvm", {}
    for name, flags in {
        "cs": ["-s", "4", "--max-outer", "3"],
        "svr": ["-s", "12", "--max-outer", "3"],
        "oneclass": ["-s", "21", "--max-outer", "3"],
        "nobias": ["--solver", "perceptron", "-B", "-1", "--max-outer", "1"],
    }.items():
        made[name] = tmp_path / f"{name}.h5"
        assert run_cli(capsys, "train", store, made[name], *flags, "-q")[0] == 0
    return made


def test_every_warm_start_checks_the_model_s_problem(capsys, data, tmp_path):
    """A Crammer-Singer model warm-started an online learner into "unexpected ValueError: could not broadcast", a
    regression model was silently ignored by stream, a one-class model asked for --bias -1 and then trained. Each is
    one line now, and no model is written."""
    root, _, _ = data
    made = models(root, tmp_path, capsys)
    store, text = root / "train.bsvm", root / "train.svm"
    cases = [
        (["train", store, "--solver", "perceptron", "--warm-start", made["cs"]], "cs", "Crammer and", "a classifier"),
        (["stream", text, "--warm-start", made["cs"]], "cs", "Crammer and Singer's multiclass SVM", "a classifier"),
        (["stream", text, "--warm-start", made["svr"]], "svr", "a regression model", "a classifier"),
        (["stream", text, "--warm-start", made["oneclass"]], "oneclass", "a one-class SVM", "a classifier"),
        (["train", store, "-s", "11", "--warm-start", made["nobias"]], "nobias", "a classifier", "a regression model"),
    ]  # fmt: skip
    for argv, name, theirs, ours in cases:
        out = tmp_path / "out.h5"
        code, _, err = run_cli(capsys, argv[0], argv[1], out, *argv[2:])
        assert code == 2 and len(err.splitlines()) == 1, err
        assert err.startswith(f"blocksvm: error: {made[name]} is {theirs}") and f"this run trains {ours}" in err, err
        assert not out.exists()
    code, _, err = run_cli(capsys, "stream", text, tmp_path / "out.h5", "--warm-start", made["nobias"])
    assert (code, err) == (2, f"blocksvm: error: {made['nobias']} was trained with bias -1: pass --bias -1\n")
    code, _, err = run_cli(
        capsys, "stream", text, tmp_path / "out.h5", "--warm-start", made["nobias"], "-B", "-1", "-q"
    )
    assert code == 0, err


@pytest.mark.parametrize("loss", ["squared-hinge", "logistic"])
def test_workers_without_a_solver_train_newton_s_serial_model(capsys, data, tmp_path, loss):
    """``--workers 2`` ran dual CD's CoCoA+ rounds, many more passes than the serial run; without --solver it chooses
    Newton where the loss allows it, whose shards sum the serial passes: the serial Newton model, bit for bit."""
    root, _, _ = data
    code, _, err = run_cli(capsys, "train", root / "train.bsvm", tmp_path / "k.h5", "--loss", loss, "--workers", "2")
    assert code == 0, err
    sharded = LinearModel.load(tmp_path / "k.h5")
    serial = train(root / "train.bsvm", loss=loss, solver="newton", verbose=0).model
    assert sharded.params["solver"] == "newton" and sharded.params["workers"] == 2
    np.testing.assert_array_equal(sharded.coef, serial.coef)
    np.testing.assert_array_equal(sharded.intercept, serial.intercept)


@pytest.mark.parametrize("flags", [["--loss", "hinge"], ["--solver", "dual-cd"]])
def test_workers_on_the_hinge_say_what_cocoa_costs(capsys, data, tmp_path, flags):
    """The hinge loss has no Newton, and --solver dual-cd asks for dual CD: its CoCoA+ rounds, and one line saying
    what they cost (--solver dual-cd was lost on the way to train(), which chose Newton again)."""
    root, _, _ = data
    argv = ["train", root / "train.bsvm", tmp_path / "h.h5", *flags, "--workers", "2", "--max-outer", "2"]
    code, _, err = run_cli(capsys, *argv)
    assert code == 0 and LinearModel.load(tmp_path / "h.h5").params["solver"] == "dual-cd"
    (note,) = [line for line in err.splitlines() if "CoCoA+" in line]
    assert note.startswith("note: dual CD on shards runs CoCoA+ rounds, many more passes than the serial run")


def test_a_flag_that_changes_what_s_set_is_said(capsys, data, tmp_path):
    """``-s 5 --loss logistic`` trained -s 6's problem without a word; it is refused now, naming -s 6 (a --loss or
    --penalty beside -s that asks for another problem is refused), and a --solver that solves -s's problem another
    way is said in a line."""
    root, _, _ = data
    code, _, err = run_cli(capsys, "train", root / "train.bsvm", tmp_path / "m.h5", "-s", "5", "--loss", "logistic")
    assert code == 2 and len(err.splitlines()) == 1 and "-s 6" in err and not (tmp_path / "m.h5").exists()
    argv = ["train", root / "train.bsvm", tmp_path / "m.h5", "-s", "0", "--solver", "dual-cd", "--max-outer", "3"]
    code, _, err = run_cli(capsys, *argv)
    assert code == 0
    assert err.splitlines()[0] == "note: -s 0 with --solver dual-cd trains LIBLINEAR's -s 7 (logistic loss, l2 penalty)"
    model = LinearModel.load(tmp_path / "m.h5")
    assert (model.loss, model.params["solver"]) == ("logistic", "dual-cd")


def test_ctrl_c_without_a_checkpoint_leaves_the_output_alone(capsys, data, tmp_path, monkeypatch):
    """Ctrl-C wrote the partial model over the output path and said nothing. Now the model so far goes beside it
    (MODEL.partial.h5), a model already at the output stays, and one line says so. The SIGINT is sent by the first
    pass's record (no timer)."""
    import blocksvm.monitor

    root, _, _ = data
    output = tmp_path / "m.h5"
    assert run_cli(capsys, "train", root / "train.bsvm", output, "--max-outer", "1", "-q")[0] == 0
    before = output.read_bytes()
    record = blocksvm.monitor.Monitor.record

    def record_then_sigint(self, rec):
        record(self, rec)
        signal.raise_signal(signal.SIGINT)

    monkeypatch.setattr(blocksvm.monitor.Monitor, "record", record_then_sigint)
    code, _, err = run_cli(capsys, "train", root / "train.bsvm", output, "--tol", "0", "--max-outer", "5")
    assert code == 130, err
    partial = tmp_path / "m.partial.h5"
    assert f"the model so far written to {partial}, not to {output}, which a finished run writes" in err
    assert output.read_bytes() == before
    assert LinearModel.load(partial).summary["stop_reason"].startswith("stopped by SIGINT")


@pytest.mark.parametrize(
    "flags, reads",
    [
        (["-s", "6"], "every round of glmnet reads them again"),
        (["-s", "6", "--solver", "owl-qn"], "every pass of owl-qn reads it again"),
    ],
)
def test_an_l1_run_that_reads_the_store_every_pass_names_the_budget_that_keeps_it(capsys, data, tmp_path, flags, reads):
    """An L1 run at a --memory-mb below its data read it at every pass (2.8x slower than from memory) without a word
    of what would keep it: the note names the budget, where this machine has the memory for it."""
    from blocksvm.train.plan import available_mb

    root, _, _ = data
    solver = "owl-qn" if "owl-qn" in flags else "glmnet"
    budget = memory_for(root / "train.bsvm", 0.01, solver)
    argv = ["train", root / "train.bsvm", tmp_path / "l1.h5", *flags, "--memory-mb", budget, "--max-outer", "2"]
    code, _, err = run_cli(capsys, *argv)
    assert code == 0, err
    (note,) = [line for line in err.splitlines() if reads in line]
    if available_mb() is None:  # (not Linux: no MemAvailable to compare with)
        assert note.endswith("keeps it)") or note.endswith("keeps them)")
    else:
        suggested = int(note.split("; --memory-mb ")[1].split()[0])
        assert suggested > budget and note.endswith("es read nothing")


def test_s_sets_liblinears_e_for_its_dual_solvers(capsys, data, tmp_path):
    """``-s 1, 3, 4, 7, 12, 13`` stop as LIBLINEAR's do, on the projected-gradient violation at its default -e 0.1
    (their duality gap rule off), where without ``-s`` the dual solvers stop on the gap; a -e beside ``-s`` is the
    user's, said in no note; a --solver beside it that solves the problem another way keeps its own rule; the
    primal codes' own rules are LIBLINEAR's already."""
    root, _, _ = data

    def trained(*flags):
        code, _, err = run_cli(capsys, "train", root / "train.bsvm", tmp_path / "m.h5", "-q", *flags)
        assert code == 0, err
        model = LinearModel.load(tmp_path / "m.h5")
        return model.params["eps"], model.summary["stop_reason"], err

    for code in ("1", "3", "7"):
        eps, reason, err = trained("-s", code)
        assert eps == 0.1 and reason.startswith("PG violation") and reason.endswith("<= eps 0.1"), reason
        assert float(reason.split()[2]) <= 0.1 and err == ""
    eps, reason, err = trained("-s", "3", "-e", "0.5")
    assert eps == 0.5 and reason.endswith("<= eps 0.5") and err == ""
    assert trained("-s", "1", "--solver", "newton")[0] is None  # (Newton's gradient rule: LIBLINEAR's -s 2)
    assert trained("-s", "2")[0] is None
    eps, reason, _ = trained("--loss", "hinge")
    assert eps is None and reason.startswith("relative duality gap"), reason
