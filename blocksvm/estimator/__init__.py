"""The scikit-learn face of blocksvm: :class:`BlockSVC`, :class:`BlockSVR`, :class:`BlockOneClassSVM`, and
:class:`BlockSVCCV`, :class:`BlockSVRCV` (C chosen by ``blocksvm tune``'s search).

``fit(X, y)`` writes the arrays as a temporary block store (rows shuffled, labels encoded as floats ``0 .. K-1``),
trains on it exactly as :func:`blocksvm.train.train` trains on a store made by ``blocksvm convert``, and removes it;
``fit(store_path)`` trains on a store already on disk, for data larger than memory
(:mod:`blocksvm.estimator.fitting`).

A fitted model is linear, so scikit-learn's own estimators carry it exactly: ``to_sklearn()`` gives the fitted
``LinearSVC``, ``LogisticRegression``, ``Perceptron``, ``LinearSVR`` or ``SGDOneClassSVM``, and ``from_sklearn(est)``
goes the other way (:mod:`blocksvm.estimator.twins`).

Each estimator is a module of its own: :mod:`~blocksvm.estimator.svc`, :mod:`~blocksvm.estimator.svr`,
:mod:`~blocksvm.estimator.one_class`, :mod:`~blocksvm.estimator.cv`.
"""

from blocksvm.estimator.cv import BlockSVCCV, BlockSVRCV
from blocksvm.estimator.fitting import OWN_PARAMS
from blocksvm.estimator.one_class import BlockOneClassSVM
from blocksvm.estimator.svc import BlockSVC
from blocksvm.estimator.svr import BlockSVR

__all__ = ["OWN_PARAMS", "BlockOneClassSVM", "BlockSVC", "BlockSVCCV", "BlockSVR", "BlockSVRCV"]
