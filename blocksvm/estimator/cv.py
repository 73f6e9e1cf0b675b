"""BlockSVCCV and BlockSVRCV: C chosen by K-fold cross-validation out of core, ``blocksvm tune`` behind the
estimators :class:`~blocksvm.estimator.svc.BlockSVC` and :class:`~blocksvm.estimator.svr.BlockSVR`."""

from __future__ import annotations

import dataclasses

import numpy as np

from blocksvm._estimators import declared_parameters, declared_tune
from blocksvm.errors import ParameterError
from blocksvm.estimator.fitting import OWN_PARAMS, plain, solver_auto
from blocksvm.estimator.svc import BlockSVC
from blocksvm.estimator.svr import BlockSVR, for_regression
from blocksvm.params import ESTIMATOR_NAMES
from blocksvm.solvers.problem import empty_fold
from blocksvm.store import BlockStore
from blocksvm.train import TrainParams, TrainResult
from blocksvm.train.c_search import Tuner
from blocksvm.train.params import TUNE, settle_tune

# BlockSVCCV's parameters: what tune reads (the training parameters but C, which it searches, and its own options
# but refit: fit always refits), tune's folds and C grid under LogisticRegressionCV's names, then BlockSVC's own.
TUNED = solver_auto(declared_tune())
SEARCH_OWN: dict[str, tuple[object, str]] = {
    "cv": (
        TUNE["folds"].default,
        "int. K of K-fold cross-validation (tune's ``folds``): a row's fold is a hash of its position in the store "
        "and the seed drawn from ``random_state`` (docs/TUNE.md). Range [2, inf).",
    ),
    "Cs": (
        TUNE["C_grid"].default,
        "list of float or None. The values of C (tune's ``C_grid``), tried in increasing order, each started from "
        "the solutions at the one before. None: LIBLINEAR's ``-C`` range, from a C small for the data doubling up "
        "to 1024, stopped by ``patience``. Not a number of values, as LogisticRegressionCV's int ``Cs`` is.",
    ),
}
_SEARCH_FITTED = ("C_", "best_score_", "cv_results_", "tune_result_")
TUNED_OWN = {**SEARCH_OWN, **OWN_PARAMS}  # the CV estimators' own parameters: the search's, then BlockSVC's


class _Tuned:
    """What :class:`BlockSVCCV` and :class:`BlockSVRCV` add to the estimators they extend: tune's check of the
    parameters, and a fit that is tune's search on the store and its refit at the best C."""

    def _settle(self, given: dict, shape: tuple[int, int] | None = None) -> TrainParams:
        """The checked training parameters of the values ``given`` (``shape``: the data's, for the solver "auto"):
        tune's check (it refuses C and what it does not read)."""
        return settle_tune(None, given | self._search_options(), shape=shape)[0]

    def _search_options(self) -> dict:
        """The options of tune the parameters give, under tune's names, each checked against its declaration."""
        options = {name: plain(getattr(self, name)) for name in self._training if name in TUNE}
        for name, alias in ESTIMATOR_NAMES.items():
            if name in TUNE:
                value = getattr(self, alias)
                value = [plain(v) for v in value] if isinstance(value, (list, tuple, np.ndarray)) else plain(value)
                if not TUNE[name].accepts(value):
                    raise ParameterError(f"{alias} must be {TUNE[name].range}, not {getattr(self, alias)!r}")
                options[name] = value
        return options

    def _search(self, store: BlockStore, params: TrainParams) -> TrainResult:
        """Cross-validate C on ``store`` (keeping the search's attributes), then train on every row at the best C,
        started from the folds' solutions there: tune's refit."""
        options = settle_tune(params, self._search_options())[2]
        params = dataclasses.replace(params, seed=_seed_of_full_folds(store.n_rows, params.seed, options["folds"]))
        options["refit"] = True  # keep the folds' solutions for the refit (tune's names a file; fit keeps the model)
        tuner = Tuner(store, params, options, verbose=int(self.verbose), progress=False)
        search = tuner.run()
        if search.interrupted:
            raise KeyboardInterrupt(f"{type(self).__name__}.fit {search.stop_reason}")
        self.C_, self.best_score_, self.tune_result_ = search.best_C, search.best_score, search
        points = search.to_dict()["points"]
        self.cv_results_ = {key: np.array([p[key] for p in points]) for key in points[0]}
        return tuner.refit_run(search.best_C, verbose=int(self.verbose))


def _seed_of_full_folds(n_rows: int, seed: int, folds: int) -> int:
    """The estimators' drawn ``seed``, or the first after it whose folds (docs/TUNE.md's hash of a row's position and
    the seed) all hold rows: a few rows hashed into K folds may leave one empty (10 rows in 5 folds: about half the
    seeds), which tune refuses; an estimator draws its seed, so it draws on (a function of ``random_state`` still).
    Fewer rows than folds are refused."""
    if n_rows < folds:
        raise ParameterError(f"cv={folds}: more folds than the n_samples = {n_rows} rows; use fewer folds")
    while empty_fold(n_rows, seed, folds) is not None:
        seed = (seed + 1) % np.iinfo(np.int32).max
    return seed


def _fill_search_doc(estimator: type, score: str) -> None:
    """A CV estimator's docstring with the attributes of its search, ``score`` its metric."""
    estimator.__doc__ = estimator.__doc__.replace("{search}", _search_attributes(score))


def _search_attributes(score: str) -> str:
    """The Attributes the search adds, ``score`` naming its metric."""
    return f"""C_ : float
            The C chosen: the best cross-validation score, the smallest C of ties.
        best_score_ : float
            Its score: {score}.
        cv_results_ : dict of ndarray
            One entry per C tried, in increasing order of C: ``C``, ``score``, ``fold_scores`` (shape
            (n_Cs, cv): each fold's held-out score), ``spread`` (their standard deviation), ``primal`` (the mean
            over the folds of their exact primal objectives), ``gap`` (the largest relative duality gap), ``passes``
            (over the store, every fold at once), ``seconds``.
        tune_result_ : TuneResult
            The search as :func:`blocksvm.train.tune` returns it; ``tune_result_.table()`` prints it."""


@declared_parameters(TUNED, TUNED_OWN)
class BlockSVCCV(_Tuned, BlockSVC):
    """:class:`BlockSVC` with C chosen by K-fold cross-validation out of core, as ``blocksvm tune`` chooses it.

        ``fit`` cross-validates every C of ``Cs`` (by default LIBLINEAR's ``-C`` range) with
        :class:`blocksvm.train.c_search.Tuner`: the ``cv`` folds' problems are solved side by side, sharing each block
        read, each C started from the solutions at the C before (Chu, Ho, Chen & Lin, KDD 2015). The CV accuracy is
        LIBLINEAR's ``-v``: correct held-out predictions over all rows (with ``sample_weight``, or a weighted store,
        each row counted by its weight, as ``LogisticRegressionCV`` scores its folds). Then it trains on every row at
        the best C, started from the folds' solutions there (tune's refit): that model predicts, as BlockSVC's does
        (``predict_proba`` with ``loss="logistic"``). ``fit`` takes arrays, a store or a LIBSVM file, as
        BlockSVC's does. The learners tune warm-starts along C: dual CD (its dual scaled from one C to the next),
        Newton, OWL-QN, CDN and newGLMNET (from their weights); ``solver="auto"`` chooses as BlockSVC's does
        (docs/TUNE.md).

    {parameters}
        Attributes
        ----------
        {search}
        coef_, intercept_, classes_, n_features_in_, feature_names_in_, model_
            As :class:`BlockSVC`'s, of the model trained on every row at ``C_``.
        n_iter_, history_, stop_reason_
            That training's passes, their records and why it stopped.

        See Also
        --------
        blocksvm.train.tune : the same search on a store, with the command line's table.
        sklearn.linear_model.LogisticRegressionCV : the in-memory counterpart.

        Examples
        --------
        >>> from sklearn.datasets import make_classification
        >>> from blocksvm import BlockSVCCV
        >>> X, y = make_classification(n_samples=300, n_features=5, random_state=0)
        >>> clf = BlockSVCCV(Cs=[0.01, 0.1, 1.0], cv=3, random_state=0).fit(X, y)
        >>> clf.C_ in (0.01, 0.1, 1.0), clf.cv_results_["fold_scores"].shape
        (True, (3, 3))
    """

    _fitted = BlockSVC._fitted + _SEARCH_FITTED

    def _fit_store(self, store: BlockStore, classes: np.ndarray, params: TrainParams) -> BlockSVCCV:
        return self._keep(self._search(store, params), classes, params)


_fill_search_doc(BlockSVCCV, "the held-out accuracy over all rows")

REGRESSION_TUNED = for_regression(TUNED)


@declared_parameters(REGRESSION_TUNED, TUNED_OWN)
class BlockSVRCV(_Tuned, BlockSVR):
    """:class:`BlockSVR` with C chosen by K-fold cross-validation out of core, as ``blocksvm tune`` chooses it.

        As :class:`BlockSVCCV`, for regression: the best C has the lowest cross-validated mean squared error
        (held-out squared errors over all rows), the smallest C of ties.

    {parameters}
        Attributes
        ----------
        {search}
        coef_, intercept_, n_features_in_, model_
            As :class:`BlockSVR`'s, of the model trained on every row at ``C_``.
        n_iter_, history_, stop_reason_
            That training's passes, their records and why it stopped.
    """

    def _fit_store(self, store: BlockStore, params: TrainParams) -> BlockSVRCV:
        return self._keep(self._search(store, params))


_fill_search_doc(BlockSVRCV, "the held-out mean squared error over all rows (lower is better)")
