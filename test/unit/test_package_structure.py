"""The package's shape: no import cycle between its modules or its packages, no module over 800 lines,
no function over 100 lines."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "mcu_mlir"
MAX_LINES = 800
MAX_FUNCTION_LINES = 100


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package modules `path` imports (at any depth: a function-level import counts)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                target = f"{base}.{alias.name}"
                found.add(target if target in modules else base)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in modules and m != name}


def _graph() -> dict[str, set[str]]:
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: _imports(path, set(paths)) for name, path in paths.items()}


def _cycle(graph):
    """One import cycle as a list of modules, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_no_import_cycle():
    cycle = _cycle(_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_no_module_over_the_line_limit():
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by what they do): {long}"


def _package_graph(graph) -> dict[str, set[str]]:
    """Package -> the packages its modules import. A package is a folder (its __init__ included); a
    module at the top of mcu_mlir stands for itself, as they sit at every level (the bindings'
    import at the bottom, the driver at the top)."""
    def folder(module: str) -> str:
        path = PACKAGE.parent / module.replace(".", "/")
        parent = module.rsplit(".", 1)[0]
        return module if path.is_dir() or parent == PACKAGE.name else parent
    packages: dict[str, set[str]] = {}
    for module, imported in graph.items():
        edges = packages.setdefault(folder(module), set())
        edges.update(folder(m) for m in imported)
    for name, edges in packages.items():
        edges.discard(name)
    return packages


def test_no_package_import_cycle():
    cycle = _cycle(_package_graph(_graph()))
    assert cycle is None, "import cycle between packages: " + " -> ".join(cycle)


def test_package_graph_puts_a_folder_together():
    graph = {"mcu_mlir.passes.a": {"mcu_mlir.ir.b"}, "mcu_mlir.ir.b": {"mcu_mlir.passes.c"},
             "mcu_mlir.passes.c": set()}
    assert _cycle(_package_graph(graph)) == ["mcu_mlir.ir", "mcu_mlir.passes", "mcu_mlir.ir"]


def _long_functions(source: str, limit: int) -> dict[str, int]:
    """Each function (method, nested function) of `source` longer than `limit` lines, by name."""
    return {node.name: n for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and (n := node.end_lineno - node.lineno + 1) > limit}


def test_no_function_over_the_line_limit():
    long = {f"{p.relative_to(PACKAGE.parent)}:{name}": n for p in PACKAGE.parent.rglob("*.py")
            for name, n in _long_functions(p.read_text(), MAX_FUNCTION_LINES).items()}
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines (split them by what they do): {long}"


def test_long_function_finder_finds_a_long_function():
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    assert _long_functions(f"def long():\n{body}", MAX_FUNCTION_LINES) == {"long": MAX_FUNCTION_LINES + 1}
    assert _long_functions("def short():\n    return 1\n", MAX_FUNCTION_LINES) == {}
