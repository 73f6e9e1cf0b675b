"""Claims of docs/CHECKPOINTS.md and docs/TUNING.md not tested elsewhere, and the docs' links."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from blocksvm.datasets import SyntheticSpec, make_store
from blocksvm.train import TrainParams, train
from blocksvm.train.params import SAFE_TO_CHANGE

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.name)
def test_relative_links_point_to_files(page):
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
        if not target.startswith(("http://", "https://", "mailto:")):
            assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def test_the_resume_table_lists_exactly_the_safe_parameters():
    text = (REPO / "docs" / "CHECKPOINTS.md").read_text()
    may = re.search(r"^\| may change on resume \| (.+) \|$", text, flags=re.MULTILINE).group(1)
    must = re.search(r"^\| must be as before \| (.+) \|$", text, flags=re.MULTILINE).group(1)

    def names(cell: str) -> set[str]:
        return {n.lstrip("-").replace("-", "_") for n in re.findall(r"`([-\w]+)`", cell)}

    assert names(may) == SAFE_TO_CHANGE
    assert must.startswith("every other training parameter")  # the page names examples, not a list to keep
    assert names(must) <= set(TrainParams().to_dict()) - SAFE_TO_CHANGE


def test_pegasos_resumes_bit_identical(tmp_path, train_in_cuts):
    store = tmp_path / "s.bsvm"
    make_store(store, SyntheticSpec(rows=30_000, features=1_000, nnz=10, seed=2), block_rows=2_500, progress=False)
    params = {"solver": "pegasos", "average": True, "batch_size": 4, "max_outer": 6, "seed": 3, "C": 0.1}
    reference = train(store, verbose=0, **params).model
    result, cuts = train_in_cuts(store, tmp_path / "ck", 5, **params)
    assert cuts == 6 * 12 // 5  # 6 passes of 12 blocks, stopped every 5 blocks
    np.testing.assert_array_equal(result.model.coef, reference.coef)
    np.testing.assert_array_equal(result.model.intercept, reference.intercept)
    assert [r["outer"] for r in result.history] == list(range(1, 7))


def test_resume_can_write_its_checkpoints_elsewhere(tmp_path):
    store = tmp_path / "s.bsvm"
    make_store(store, SyntheticSpec(rows=4_000, features=200, nnz=10, seed=2), block_rows=1_000, progress=False)
    train(store, verbose=0, checkpoint=tmp_path / "a", max_outer=1)
    result = train(store, verbose=0, resume=tmp_path / "a", checkpoint=tmp_path / "b", max_outer=2, tol=0.0)
    assert [r["outer"] for r in result.history] == [1, 2]
    assert (tmp_path / "b").exists() and not (tmp_path / "a.prev").exists()
