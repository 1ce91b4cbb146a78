"""The layers of docs/architecture.md, enforced: a subpackage imports only from layers below it.

The picture there is only true while this test passes. Each top-level unit of ``simkit`` (a subpackage, or a
module on top) has a rank; an import from a unit of equal or higher rank, other than itself, is a violation.
"""
import ast
from pathlib import Path

import simkit

ROOT = Path(simkit.__file__).parent

#: unit -> rank; lower layers first (docs/architecture.md, "Layers")
RANKS = {
    "_codegen": -1,         # compiles generated methods (model.record, truth.columns.adder): stdlib only
    "_starting": -1,        # the simkit command's signals while it imports: stdlib only
    "_native": -1,          # the checker's passes, the world's quick path in C (simkit/_native*.c): no import
    "requests": -0.5,  # the requests declared as data, that model's crash points derive from: stdlib only
    "errors": 0, "model": 0,
    "ops": 1, "truth": 1,
    "store": 2, "procedure": 2, "scenario": 2,
    "world": 3,
    "judge": 4,
    "runner": 5,
    "tools": 6, "live": 6, "service": 6,
    "viz": 7,
    "simkit": 7.5,          # the public facade: ``import simkit``
    "testing": 7.6,         # simkit in a consumer author's pytest suite: audit and runs as assertions
    "workshop": 8,
    "cli": 9, "__main__": 10,
}
#: modules ranked apart from their folder: the benchmark times the whole stack, the explorer widget's redraw
#: included
MODULE_RANKS = {"tools/bench.py": 7.2}


def unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "simkit"


def imports(path: Path) -> set[str]:
    """The simkit modules ``path`` imports, absolute."""
    rel = path.relative_to(ROOT).with_suffix("")
    me = ".".join(["simkit", *rel.parts]).removesuffix(".__init__")
    return targets(path.read_text(encoding="utf-8"), me if path.name == "__init__.py"
                   else me.rpartition(".")[0])


def targets(source: str, package: str) -> set[str]:
    """The simkit modules a module of ``package`` with this source imports, absolute."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "simkit":   # from simkit import X: X may be a subpackage
                found |= {f"simkit.{a.name}" if a.name in RANKS else "simkit" for a in node.names}
            elif target.startswith("simkit."):
                found.add(target)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name == "simkit" or a.name.startswith("simkit.")}
    return found


def test_every_unit_has_a_rank():
    units = {p.stem if p.is_file() else p.name for p in ROOT.iterdir()
             if (p.suffix == ".py" and p.stem != "__init__") or (p.is_dir() and (p / "__init__.py").exists())}
    assert units <= set(RANKS), sorted(units - set(RANKS))


def test_imports_only_go_down():
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        mine = rel.parts[0].removesuffix(".py") if len(rel.parts) > 1 or rel.stem != "__init__" else "simkit"
        rank = MODULE_RANKS.get(rel.as_posix(), RANKS[mine])
        for target in imports(path):
            theirs = unit(target)
            if theirs != mine and RANKS[theirs] >= rank:
                wrong.append(f"{rel} ({mine}, rank {rank}) imports {target} ({theirs}, rank {RANKS[theirs]})")
    assert not wrong, "\n".join(wrong)


def test_the_check_sees_upward_imports():
    """The test above can fail: absolute, relative and ``from simkit import`` forms are all seen."""
    assert targets("from simkit.judge.checker import check", "simkit.truth") == {"simkit.judge.checker"}
    assert targets("from ..judge import claims", "simkit.truth") == {"simkit.judge"}
    assert targets("from simkit import viz, Consumer", "simkit.tools") == {"simkit.viz", "simkit"}
    assert targets("import simkit.world.simulation as w", "simkit.judge") == {"simkit.world.simulation"}
    assert RANKS["judge"] > RANKS["truth"] and RANKS["viz"] > RANKS["tools"]


#: functions that import a module named by a string: invisible to the import statements read above
LOADERS = {"import_module", "__import__", "spec_from_file_location", "spec_from_loader"}
#: the one place a string names what to import: ``--strategy package.module:Class`` or
#: ``path/to/file.py:Class``, a user's own consumer (CONTRACT.md §3), loaded as a plugin
PLUGIN_LOADERS = {("procedure/strategies.py", "import_module"),
                  ("procedure/strategies.py", "spec_from_file_location")}


def string_imports(source: str) -> list[tuple[str, str | None]]:
    """Each call in ``source`` that imports a module named by a string:
    ``(loader, the module's name if written as a constant, else None)``, however
    the loader was reached (``importlib.import_module``, an alias, ...)."""
    tree, found = ast.parse(source), []
    aliases = {a.asname for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names
               if a.name in LOADERS and a.asname}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        if name in LOADERS or name in aliases:
            arg = node.args[0] if node.args else None
            found.append((name, arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                          else None))
    return found


def test_no_module_imports_another_by_string():
    """``importlib.import_module("simkit.runner")`` is an import the check
    above cannot see (the world and the runner once imported each other that
    way). Only the plugin loader of a user's strategy imports by string."""
    wrong = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for loader, module in string_imports(path.read_text(encoding="utf-8")):
            if (rel, loader) not in PLUGIN_LOADERS or (module or "").startswith("simkit"):
                wrong.append(f"{rel}: {loader}({module!r})")
    assert not wrong, "\n".join(wrong)


def test_the_check_sees_string_imports():
    """The test above can fail: each way of importing by
    string is seen, with the name when it is a constant."""
    assert string_imports("import importlib\nimportlib.import_module('simkit.runner')") == [
        ("import_module", "simkit.runner")]
    assert string_imports("from importlib import import_module as load\nload(name)") == [("load", None)]
    assert string_imports("__import__('simkit.judge')") == [("__import__", "simkit.judge")]
    assert string_imports("importlib.util.spec_from_file_location('m', p)") == [
        ("spec_from_file_location", "m")
    ]
    assert string_imports("from simkit.judge import check") == []


def test_every_module_declares_its_public_names():
    """``__all__`` in every module: what a reader may import
    is written down, and star imports take only that."""
    def declares(path: Path) -> bool:
        for n in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = (
                n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AnnAssign) else []
            )
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                return True
        return False

    missing = [str(p.relative_to(ROOT)) for p in sorted(ROOT.rglob("*.py")) if not declares(p)]
    assert not missing, missing


def test_small_pieces():
    """docs/architecture.md, "Rules the layout keeps": no module over 400 lines, no function over 60."""
    long_modules, long_functions = [], []
    for path in sorted(ROOT.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT)
        if source.count("\n") > 400:
            long_modules.append(f"{rel}: {source.count(chr(10))} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef,
                                 ast.AsyncFunctionDef)) and node.end_lineno - node.lineno >= 60:
                long_functions.append(f"{rel}:{node.lineno} {node.name}: {node.end_lineno - node.lineno + 1} "
                                      f"lines")
    assert not long_modules and not long_functions, long_modules + long_functions
