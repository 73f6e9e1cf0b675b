"""A training run's validation data: opened in the training store's feature space, and checked against it as
``predict`` checks its input (labels a classifier does not have, features outside its space), from the manifests."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import numpy as np

from blocksvm.errors import FeatureSpaceWarning, LabelWarning, ModelError
from blocksvm.losses import NOVELTY, REGRESSION
from blocksvm.store import BlockStore, SpaceView, same_space


def open_validation(validation, store: BlockStore, read_threads: int | None) -> BlockStore | None:
    if validation is None:
        return None
    validation = validation if isinstance(validation, BlockStore) else BlockStore(validation)
    if read_threads is not None:
        validation.read_threads = read_threads
    if validation.index_base != store.index_base:
        raise ModelError(
            f"validation store {validation.path} has {validation.index_base}-based feature indices, "
            f"the training store {store.path} {store.index_base}-based: they are different feature spaces"
        )
    if same_space(validation, store):
        return validation
    return SpaceView(validation, store.feature_map, store.n_features)


def check_validation(validation, store: BlockStore, problem, strict: bool, name=None) -> None:
    """Say (a warning) or, ``strict``, refuse what a validation store holds that the training store does not, as
    ``predict`` does of its input: labels outside a classifier's classes (their rows count as wrong in its score) and
    features outside the training store's space (ignored). Read from the manifests: nothing is read of the rows.
    ``name``: the validation data as the user gave it (a text file: its cached store is what is read)."""
    for category, text in _validation_mismatches(validation, store, problem, name or validation.path):
        if strict:
            raise ModelError(f"{text} (--strict; without it they count in its score as predict counts them)")
        warnings.warn(f"{text} (--strict or strict=True makes this an error)", category, stacklevel=3)


def _validation_mismatches(validation, store: BlockStore, problem, name) -> Iterator[tuple[type, str]]:
    where = f"the validation data {name}"
    if problem.task not in (REGRESSION, NOVELTY):
        stray = ~np.isin(validation.classes, problem.classes)
        if stray.any():
            rows, labels = int(validation.label_counts[stray].sum()), _numbers(validation.classes[stray])
            yield (
                LabelWarning,
                (
                    f"{where}: {rows} rows have labels the training store does not have ({labels}; its classes: "
                    f"{_numbers(problem.classes)}): they count as predicted wrong in the validation score"
                ),
            )
    base, space = store.index_base, store.space_features
    theirs = f"the training store's features (indices {base} to {base + space - 1})"
    if validation.feature_map is not None:  # a compact store: its features are known
        mine = validation.feature_map
        outside = ~np.isin(mine, store.feature_map) if store.feature_map is not None else mine >= space
        if outside.any():
            yield (
                FeatureSpaceWarning,
                (
                    f"{where}: {int(outside.sum())} of its features (the first, index {int(mine[outside][0]) + base}) "
                    f"are outside {theirs}: they are ignored in the validation score"
                ),
            )
    elif validation.space_features > space:  # its largest index is one of its features
        last = base + validation.space_features - 1
        yield (
            FeatureSpaceWarning,
            (
                f"{where}: its features of indices {base + space} to {last} are outside {theirs}: they are ignored in "
                "the validation score"
            ),
        )


def _numbers(values) -> str:
    return ", ".join(f"{float(v):g}" for v in values)
