"""The architecture, checked from the code's own imports and strings (docs/architecture.md describes it).

- Floors: a module imports only from its own floor or below (lazy imports inside functions count; imports under
  `if TYPE_CHECKING:` do not, since they never run).
- No import cycle between modules (a package's `from pkg import Name` counts as importing the submodule that defines
  Name, so a package's facade is not a cycle by itself).
- A cloud lives in its folders: its name, its provider type tokens, its SDKs and its packages appear nowhere else
  (the registry's import strings in tritonfleet/core/cloud.py aside); a policy rule named after a cloud
  (policies/rules/aws_*, gke_*, ...) may use its own cloud's tokens.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest
from conftest import ROOT

from tritonfleet.core.cloud import cloud_names

PACKAGES = ("tritonfleet", "components", "policies")
SDKS = ("pulumi_aws", "pulumi_gcp", "boto3", "botocore", "mypy_boto3", "google.auth", "google.cloud", "google.api_core")
# Policy rule modules named after their cloud's services may use that cloud's resource tokens.
CLOUD_RULE_PREFIXES = {"aws": ("aws_", "s3_", "eks_", "karpenter_"), "gcp": ("gcp_", "gke_", "gcs_")}

# Lowest first. A room is a module's place: its package below tritonfleet/ or components/, or a top-level module.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("tritonfleet", "tritonfleet.core", "tritonfleet.deadline", "tritonfleet.exit_codes", "tritonfleet.terminal", "tritonfleet.output_paths"),
    ("tritonfleet.clouds",),
    (
        "tritonfleet.monitoring", "tritonfleet.models", "tritonfleet.loadtest", "tritonfleet.loadtest_llm",
        "tritonfleet.tune", "tritonfleet.plan", "tritonfleet.diff", "tritonfleet.policycheck", "tritonfleet.cost_actual",
    ),
    ("policies",),
    ("components", "components.contract", "components.k8s"),
    ("components.clouds",),  # components/<cloud>/: each cloud's Pulumi adapter
    ("components.platform", "components.stack_config", "__main__"),
    ("tritonfleet.cli", "tritonfleet.cli_args", "tritonfleet.__main__"),
)  # fmt: skip


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


@cache
def modules() -> dict[str, Path]:
    found = {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}
    found["__main__"] = ROOT / "__main__.py"
    return found


@cache
def _tree(name: str) -> ast.Module:
    return ast.parse(modules()[name].read_text(), filename=str(modules()[name]))


def _type_checking_only(tree: ast.Module) -> set[int]:
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for statement in node.body
        for inner in ast.walk(statement)
    }


def _reexports(package: str) -> dict[str, str]:
    """Names a package's __init__ imports from its own submodules -> that submodule."""
    path = modules().get(package)
    if path is None or path.name != "__init__.py":
        return {}
    return {
        alias.asname or alias.name: node.module
        for node in _tree(package).body
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(package + ".")
        for alias in node.names
    }


def _owning_module(name: str) -> str | None:
    while name and name not in modules():
        name = name.rpartition(".")[0]
    return name or None


def imports(name: str) -> list[tuple[str, int]]:
    return imports_in(_tree(name))


def imports_in(tree: ast.Module) -> list[tuple[str, int]]:
    """(imported name as written or resolved to a module of ours, line) for every import that runs."""
    skipped = _type_checking_only(tree)
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            reexported = _reexports(node.module)
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.append((full if full in modules() else reexported.get(alias.name, node.module), node.lineno))
    return found


@cache
def graph() -> dict[str, set[str]]:
    """module -> the modules of ours it imports (not its own ancestors: a submodule importing its package's facade)."""
    edges: dict[str, set[str]] = {}
    for name in modules():
        targets = {_owning_module(imported) for imported, _ in imports(name)}
        edges[name] = {t for t in targets if t and t != name and not name.startswith(t + ".")}
    return edges


def room(name: str) -> str:
    parts = name.split(".")
    if parts[0] == "components" and len(parts) > 1 and parts[1] in cloud_names():
        return "components.clouds"
    if parts[0] in ("tritonfleet", "components") and len(parts) > 1:
        return ".".join(parts[:2])
    return parts[0]


def floor(name: str) -> int:
    where = room(name)
    return next(i for i, rooms in enumerate(FLOORS) if where in rooms)


def cloud_of(path: Path) -> str | None:
    """The cloud whose folders hold `path`, or None for neutral code."""
    parts = path.relative_to(ROOT).parts
    if parts[:2] == ("tritonfleet", "clouds") and len(parts) > 3:
        return parts[2]
    if parts[0] == "components" and len(parts) > 2 and parts[1] in cloud_names():
        return parts[1]
    if parts[:2] == ("policies", "rules"):
        return next((c for c, prefixes in CLOUD_RULE_PREFIXES.items() if parts[2].startswith(prefixes)), None)
    return None


def test_every_module_has_a_floor():
    assert [name for name in modules() if room(name) not in {r for rooms in FLOORS for r in rooms}] == []


def test_no_module_imports_from_a_floor_above_its_own():
    upward = [
        f"{name} ({room(name)}) imports {target} ({room(target)})"
        for name, targets in graph().items()
        for target in targets
        if floor(target) > floor(name)
    ]
    assert upward == []


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle():
    assert _cycles(graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _cloud_package(imported: str) -> str | None:
    parts = imported.split(".")
    if parts[:2] == ["tritonfleet", "clouds"] and len(parts) > 2 and parts[2] in cloud_names():
        return parts[2]
    if parts[0] == "components" and len(parts) > 1 and parts[1] in cloud_names():
        return parts[1]
    return None


def _docstrings(tree: ast.Module) -> set[int]:
    bodies = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, bodies) and node.body and isinstance(node.body[0], ast.Expr)
    }


def cloud_leaks(label: str, own: str | None, tree: ast.Module) -> list[str]:
    """What a module (of cloud `own`, or neutral: None) knows of another cloud: that cloud's name or provider tokens
    as strings, its packages or SDKs imported."""
    token = re.compile(rf"^(pulumi:providers:)?({'|'.join(cloud_names())})(:|$)")
    docstrings = _docstrings(tree)
    leaks = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            spelled = token.match(node.value)
            if spelled and spelled.group(2) != own:
                leaks.append(f"{label}:{node.lineno} spells {node.value!r}")
    for imported, line in imports_in(tree):
        whose = _cloud_package(imported)
        if whose is not None and whose != own:
            leaks.append(f"{label}:{line} imports {imported}")
        if own is None and imported.startswith(SDKS):
            leaks.append(f"{label}:{line} imports the cloud SDK {imported}")
    return leaks


def test_a_cloud_lives_in_its_own_folders():
    registry = "tritonfleet.core.cloud"  # the one place a cloud's name is registered
    leaks = [
        leak
        for name, path in sorted(modules().items())
        if name != registry
        for leak in dict.fromkeys(cloud_leaks(name, cloud_of(path), _tree(name)))
    ]
    assert leaks == []


def test_the_scan_sees_a_leak():
    """A neutral module that names a cloud, spells its token, imports its SDK or its package is caught; the same
    lines in that cloud's own module are not (apart from the other cloud's package)."""
    source = 'import boto3\nfrom tritonfleet.clouds.gcp import facts\nX = "aws"\nY = "gcp:container/cluster:Cluster"\n'
    neutral = " ".join(cloud_leaks("example", None, ast.parse(source)))
    assert "'aws'" in neutral and "gcp:container" in neutral and "boto3" in neutral and "clouds.gcp" in neutral
    as_aws = " ".join(cloud_leaks("example", "aws", ast.parse(source)))
    assert "'aws'" not in as_aws and "boto3" not in as_aws and "clouds.gcp" in as_aws


@pytest.mark.parametrize("name", ["aws", "gcp"])
def test_a_cloud_imports_no_other_cloud(name):
    mine = [m for m in modules() if cloud_of(modules()[m]) == name]
    assert mine
    assert [f"{m} imports {t}" for m in mine for t in graph()[m] if _cloud_package(t) not in (None, name)] == []


# --- docs/architecture.md, checked against the code ----------------------------------------------------------------

DOC = ROOT / "docs" / "architecture.md"


def _section(title: str) -> str:
    """The text of the doc's section whose heading starts with `title`, up to the next heading of any level."""
    text = DOC.read_text()
    start = text.index(f"\n{title}")
    following = re.search(r"\n#{2,3} ", text[start + 1 :])
    return text[start : start + 1 + following.start()] if following else text[start:]


def test_the_floors_table_is_the_one_the_code_keeps():
    rows = re.findall(r"^\| (\d) \| ([^|]+) \|", _section("## The floors"), flags=re.M)
    assert [(int(n), tuple(re.findall(r"`([^`]+)`", rooms))) for n, rooms in rows] == [
        (i + 1, rooms) for i, rooms in enumerate(FLOORS)
    ]


def test_the_doc_lists_where_a_cloud_may_be_named():
    text = _section("## Where a cloud's name appears")
    assert set(re.findall(r"`([a-z0-9]+_)`", text)) == {p for prefixes in CLOUD_RULE_PREFIXES.values() for p in prefixes}
    assert "`REGISTRY`" in text and "`tritonfleet/core/cloud.py`" in text


def test_the_doc_names_every_part_of_the_cloud_contract():
    import dataclasses

    from tritonfleet.core.cloud import Cloud

    parts = {f.name for f in dataclasses.fields(Cloud)} | set(Cloud.__abstractmethods__) | {"facts", "rules", "bill"}
    named = set(re.findall(r"`([a-z_]+)(?:\([^`]*\))?`", _section("## The cloud contract")))
    assert sorted(parts - named) == []


@pytest.mark.parametrize("folder", ["tritonfleet/clouds", "components"])
def test_the_module_maps_name_every_module_of_each_cloud(folder):
    """Each cloud's modules in its folder appear in that cloud's block of the module map."""
    text = _section(f"### Module map of `{folder}/")
    for name in cloud_names():
        block = re.search(rf"\n  {name}/\n(.*?)(?=\n  [a-z0-9]+/\n|\n```)", text, flags=re.S)
        assert block, f"no {name}/ block in the module map of {folder}/"
        listed = set(re.findall(r"\b([a-z0-9_]+\.py)\b", block.group(1)))
        present = {p.name for p in (ROOT / folder / name).glob("*.py") if p.name != "__init__.py"}
        assert sorted(present - listed) == [], f"{folder}/{name}/"
