"""docs/ARCHITECTURE.md's claims about imports, checked against the code: the layer table, no cycles (imports of a
package's ``__init__`` included), solvers apart, kernels numeric, no private module of another package."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "blocksvm"
DOC = PACKAGE.parent / "docs" / "ARCHITECTURE.md"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports_of(path: Path) -> set[str]:
    """The blocksvm modules ``path`` imports, at the top or inside functions. ``from P import name`` is an
    import of the module ``P.name`` when there is one, else of ``P`` itself (its ``__init__``, for a package)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("blocksvm"):
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in MODULES else node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("blocksvm")}
    return found


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """Each module of blocksvm and the blocksvm modules it imports (parsed once: every test reads it)."""
    return {name: {m for m in imports_of(path) if m != name} for name, path in MODULES.items()}


def layers() -> list[tuple[str, set[str]]]:
    """The layer table of docs/ARCHITECTURE.md: (layer, its modules), from the first row down."""
    table = []
    for row in re.findall(r"^\| ([a-z ]+) \| (.+) \| .+ \|$", DOC.read_text(), flags=re.MULTILINE):
        layer, cell = row
        if layer in ("layer", "caller"):
            continue
        found = set()
        for pattern in re.findall(r"`([\w/*]+\.py)`", cell):  # a file, or every file of a folder: solvers/*.py
            found |= {module_name(path) for path in PACKAGE.glob(pattern)}
        table.append((layer, found))
    return table


def layer_of() -> dict[str, int]:
    return {module: i for i, (_, modules) in enumerate(layers()) for module in modules}


def test_every_module_is_in_exactly_one_layer():
    listed = [m for _, modules in layers() for m in modules]
    assert len(listed) == len(set(listed)), "a module stands in two layers"
    assert set(listed) == set(MODULES), (set(MODULES) - set(listed), set(listed) - set(MODULES))


def test_a_module_imports_only_its_own_layer_and_those_above():
    where, names = layer_of(), [layer for layer, _ in layers()]
    for module, deps in import_graph().items():
        for dep in deps:
            assert where[dep] <= where[module], (
                f"{module} ({names[where[module]]}) imports {dep} ({names[where[dep]]}), a layer below it"
            )


def test_no_import_cycles_even_through_a_package_init():
    graph = import_graph()
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph[node]):
            assert state.get(dep) != 1, f"import cycle: {' -> '.join(path + [dep])}"
            if dep not in state:
                visit(dep, path + [dep])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def test_the_faces_are_imported_by_nobody_but_the_package():
    for module, deps in import_graph().items():
        if not module.startswith("blocksvm.cli"):
            assert not any(dep == "blocksvm.cli" or dep.startswith("blocksvm.cli.") for dep in deps), module
        if module != "blocksvm":
            assert not deps & {"blocksvm.estimator", "blocksvm.online"}, module


def test_no_private_module_of_another_package_is_imported():
    for module, deps in import_graph().items():
        for dep in deps:
            private = dep.rsplit(".", 1)[-1].startswith("_")
            top_level = dep.rsplit(".", 1)[0] == "blocksvm"  # blocksvm/_hdf5.py, ...: the package's own helpers
            if private and not top_level:
                assert dep.rsplit(".", 1)[0] == module.rsplit(".", 1)[0] or dep.startswith(module + "."), (
                    f"{module} imports {dep}"
                )


def test_solvers_import_only_the_neutral_layer_and_each_other():
    neutral = layers()[0][1]
    for module, deps in import_graph().items():
        if module.startswith("blocksvm.solvers"):
            for dep in deps:
                assert dep in neutral or dep.startswith("blocksvm.solvers"), f"{module} imports {dep}"


def test_kernels_import_only_numerics_and_other_kernels():
    for path in PACKAGE.rglob("*.py"):
        if path.name.endswith("_kernels.py") or path.name in ("decision.py", "_common.py"):
            for dep in import_graph()[module_name(path)]:
                leaf = dep.rsplit(".", 1)[-1]
                allowed = ("_common", "decision", "rows", "losses")  # losses: the loss kinds, numbers
                assert leaf.endswith("_kernels") or leaf in allowed, f"{path.name}: {dep}"
            imported = {
                n.names[0].name.split(".")[0]
                for n in ast.walk(ast.parse(path.read_text()))
                if isinstance(n, ast.Import)
            }
            assert imported <= {"numpy", "numba", "math", "llvmlite", "scipy"}, (path.name, imported)


def calls_of(path: Path, method: str) -> list[int]:
    """The lines of ``path`` that call a method named ``method``."""
    tree = ast.parse(path.read_text())
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method
    ]


def test_only_the_pass_loop_hands_rows_to_a_learner():
    """docs/ARCHITECTURE.md: ``run_pass`` is the only loop that hands rows to learners: nothing else calls a
    learner's ``visit`` (a growing learner grows in its ``pieces``, before the pass loop visits them)."""
    callers = {module_name(path): lines for path in MODULES.values() if (lines := calls_of(path, "visit"))}
    assert list(callers) == ["blocksvm.train.pass_loop"], callers


def test_no_test_module_imports_another():
    """The tests' shared fixtures are conftest.py's and their shared oracles oracle.py's: a test module imports no
    other test module."""
    for path in Path(__file__).resolve().parent.glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            else:
                continue
            assert not any(name.split(".")[0].startswith("test_") for name in names), f"{path.name} imports {names}"


TESTS = Path(__file__).resolve().parent
TESTS_README = TESTS / "README.md"
TABLE_START = "| module | the test modules that import it |"


def tests_by_module() -> str:
    """The table of tests/README.md: each blocksvm module and the test modules that import it (:func:`imports_of`)."""
    importers: dict[str, list[str]] = {}
    for path in sorted(TESTS.glob("test_*.py")):
        for module in imports_of(path):
            importers.setdefault(module, []).append(path.stem)
    rows = [f"| `{module}` | {', '.join(tests)} |" for module, tests in sorted(importers.items())]
    return "\n".join([TABLE_START, "|---|---|", *rows])


def test_the_tests_readme_table_is_the_tests_imports():
    """tests/README.md's table from module to tests is what the test modules import (``python
    tests/test_architecture.py`` writes it again)."""
    text = TESTS_README.read_text()
    start = text.index(TABLE_START)
    end = text.find("\n\n", start)
    table = text[start : end if end >= 0 else None].rstrip("\n")
    assert table == tests_by_module(), "write it again: python tests/test_architecture.py"


if __name__ == "__main__":  # write tests/README.md's table again
    text = TESTS_README.read_text()
    start = text.index(TABLE_START)
    end = text.find("\n\n", start)
    TESTS_README.write_text(text[:start] + tests_by_module() + ("\n" if end < 0 else text[end:]))
