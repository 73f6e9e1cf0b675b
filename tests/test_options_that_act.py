"""An option given is an option read: what the first users met doing nothing is refused or done. ``-p`` on a
classifier, ``--strict`` without ``--validation`` and ``--tol 0`` alone are refused (tests/test_errors.py has their
lines); here: LIBLINEAR's ``-C`` last on the line points at ``tune``, and an estimator's ``max_outer`` is the number
of passes it runs, the generic default included (``BlockSVC(max_outer=50)`` ran dual CD's 1,000)."""

from __future__ import annotations

import inspect
import warnings

import pytest
from conftest import run_cli
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning

from blocksvm import BlockSVC


@pytest.mark.parametrize("tail", [["-s", "2", "-C"], ["-C", "-s", "2"]])
def test_liblinears_search_flag_without_a_number_points_at_tune(small_libsvm, tmp_path, capsys, tail):
    code, _, err = run_cli(capsys, "train", small_libsvm, tmp_path / "m.h5", *tail)
    assert code == 2 and err.count("\n") == 1
    assert "its search of C, is 'blocksvm tune STORE'" in err and not (tmp_path / "m.h5").exists()


def test_an_estimators_max_outer_is_the_passes_it_runs(small_libsvm):
    X, y = load_svmlight_file(str(small_libsvm))
    assert inspect.signature(BlockSVC).parameters["max_outer"].default is None  # the solver's own
    for passes in (3, 50):
        with pytest.warns(ConvergenceWarning, match=rf"max_outer \({passes}\) reached"):
            fitted = BlockSVC(loss="hinge", tol=1e-12, max_outer=passes, random_state=0).fit(X, y)
        assert len(fitted.history_) == passes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        default = BlockSVC(loss="hinge", tol=1e-12, random_state=0, solver="dual-cd").fit(X[:300], y[:300])
    assert len(default.history_) > 50  # (None: dual CD's own limit, 1,000)


def test_cache_mb_is_the_support_vector_cache_alone(small_libsvm, tmp_path, capsys):
    """``--cache-mb`` meant two things in ``train --help`` (the cache of dual CD's working set, and an older name of
    --memory-mb for the pass learners); it is the cache alone, and the pass learners' budget is --memory-mb."""
    code, out, _ = run_cli(capsys, "train", "--help")
    assert "older name" not in out and "--cache-mb" in out
    code, _, err = run_cli(capsys, "train", small_libsvm, tmp_path / "m.h5", "--solver", "newton", "--cache-mb", "9")
    assert code == 2 and "not by --solver newton" in err


def test_no_learner_takes_a_base_classs_method_to_refuse_an_inherited_one():
    """docs/ARCHITECTURE.md: "none refuses a method it inherits" (OGD reassigned Solver.start_from to refuse its
    family's warm start); a learner declares ``warm_starts`` instead, and the refusal follows the declaration."""
    from blocksvm.solvers import SOLVERS

    for name, solver in SOLVERS.items():
        method = vars(solver).get("start_from")
        assert method is None or method.__qualname__.startswith(solver.__name__ + "."), name
    assert not SOLVERS["ogd"].warm_starts and SOLVERS["perceptron"].warm_starts and SOLVERS["newton"].warm_starts
