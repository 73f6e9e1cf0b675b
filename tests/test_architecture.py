"""The import rules of docs/ARCHITECTURE.md: no cycles, no private cross-package imports, solvers apart."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "blocksvm"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Each module of blocksvm and the blocksvm modules it imports (at the top or inside functions)."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("blocksvm"):
                found.add(node.module)
                found |= {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def package_of(module: str) -> str:
    return module.rsplit(".", 1)[0]


def test_no_import_cycles():
    graph = import_graph()
    # a package's __init__ re-exporting its own modules is not a cycle between stages
    edges = {
        m: {d for d in deps if not d.startswith(m + ".") and not m.startswith(d + ".")} for m, deps in graph.items()
    }
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(edges[node]):
            assert state.get(dep) != 1, f"import cycle: {' -> '.join(path + [dep])}"
            if dep not in state:
                visit(dep, path + [dep])
        state[node] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])


def test_no_private_module_of_another_package_is_imported():
    for module, deps in import_graph().items():
        for dep in deps:
            private = dep.rsplit(".", 1)[-1].startswith("_") and not dep.endswith("__init__")
            top_level = package_of(dep) == "blocksvm"  # blocksvm/_hdf5.py, _progress.py: the package's own helpers
            if private and not top_level:
                assert package_of(dep) == package_of(module), f"{module} imports {dep}"


def test_solvers_know_nothing_of_files_or_the_loop():
    for module, deps in import_graph().items():
        if module.startswith("blocksvm.solvers"):
            for dep in deps:
                assert not dep.startswith(
                    (
                        "blocksvm.store",
                        "blocksvm.io",
                        "blocksvm.train",
                        "blocksvm.checkpoint",
                        "blocksvm.cli",
                        "blocksvm.estimator",
                    )
                ), f"{module} imports {dep}"


def test_kernels_import_only_numerics_and_other_kernels():
    for path in PACKAGE.rglob("*.py"):
        if path.name.endswith("_kernels.py") or path.name in ("decision.py", "rows.py"):
            for dep in import_graph()[module_name(path)]:
                leaf = dep.rsplit(".", 1)[-1]
                assert leaf.endswith("_kernels") or leaf in ("_common", "decision", "rows"), f"{path.name}: {dep}"
