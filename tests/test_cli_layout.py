"""The CLI's layout (tritonfleet/cli/): one module per command or command group, each registering only its own, and
no code outside the package importing it (the core, plan, models, diff and policycheck modules stay usable without
the command line)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path

import typer
from conftest import ROOT

import tritonfleet.cli as cli

CLI_FOLDER = ROOT / "tritonfleet" / "cli"
# Where the project's code lives (tests and benchmarks drive the CLI, and may import it).
CODE = [*(ROOT / "tritonfleet").rglob("*.py"), *(ROOT / "components").rglob("*.py"), *(ROOT / "policies").rglob("*.py"),
        ROOT / "__main__.py"]  # fmt: skip
ENTRY_POINTS = {ROOT / "tritonfleet" / "__main__.py"}  # `python -m tritonfleet`: runs the CLI


def _cli_modules() -> list:
    return [importlib.import_module(f"tritonfleet.cli.{m.name}") for m in pkgutil.iter_modules(cli.__path__)]


def test_each_module_registers_one_command_or_one_group_of_its_own():
    # app.add_typer(module.app) merges its command into the tritonfleet app (no name); with name= it is a group
    added = {id(group.typer_instance): group.name if isinstance(group.name, str) else None for group in cli.app.registered_groups}
    assert not cli.app.registered_commands, "tritonfleet/cli/__init__.py adds the modules' apps; it defines no command"
    owners = []
    for module in _cli_modules():
        apps = [value for value in vars(module).values() if isinstance(value, typer.Typer)]
        assert len(apps) <= 1, f"{module.__name__} defines {len(apps)} Typer apps: one command or one group a module"
        if not apps:
            continue
        (app,) = apps
        assert id(app) in added, f"{module.__name__}.app is not added to the tritonfleet app (tritonfleet/cli/__init__.py)"
        assert not app.registered_groups, f"{module.__name__}: a group inside a group"
        commands = app.registered_commands
        if added[id(app)] is None:  # merged into the tritonfleet app: a command of its own
            assert len(commands) == 1 and app.registered_callback is None, f"{module.__name__} registers {len(commands)} commands"
        else:  # a command group: `tritonfleet NAME ...`
            assert commands, f"{module.__name__}: the group {added[id(app)]} has no command"
        callbacks = [c.callback for c in commands] + ([app.registered_callback.callback] if app.registered_callback else [])
        strangers = [f.__qualname__ for f in callbacks if f.__module__ != module.__name__]
        assert not strangers, f"{module.__name__}.app carries commands defined elsewhere: {strangers}"
        owners.append(module.__name__)
    assert len(owners) == len(cli.app.registered_groups), "an app added twice, or one from outside tritonfleet/cli"


def _imported_modules(path: Path) -> set[str]:
    """Every module the file at `path` imports (at its top or inside a function), relative imports resolved."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    return _imports(path.read_text(), package)


def _imports(source: str, package: str) -> set[str]:
    """The modules `source` (a module of `package`) imports; for `from A import b`, both A and A.b (b may be a module)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            names |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return names


def _imports_the_cli(names: set[str]) -> bool:
    return any(name == "tritonfleet.cli" or name.startswith("tritonfleet.cli.") for name in names)


def test_no_module_outside_the_cli_imports_it():
    outside = [p for p in CODE if not p.is_relative_to(CLI_FOLDER) and p not in ENTRY_POINTS]
    importers = sorted(str(p.relative_to(ROOT)) for p in outside if _imports_the_cli(_imported_modules(p)))
    assert not importers, f"these import tritonfleet.cli; move what they need out of the CLI: {importers}"


def test_the_import_reader_sees_every_way_of_importing_the_cli():
    assert not _imports_the_cli(_imports("import tritonfleet.cli_args\nfrom tritonfleet import plan", "tritonfleet.plan"))
    for source in ("import tritonfleet.cli", "from tritonfleet import cli", "from tritonfleet.cli.plan import print_plan",
                   "def f():\n    from tritonfleet.cli import output", "from ..cli import output", "from .. import cli"):  # fmt: skip
        assert _imports_the_cli(_imports(source, "tritonfleet.plan")), source


def test_the_console_script_and_python_m_run_the_cli_main():
    script = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["tritonfleet"]
    module, _, function = script.partition(":")
    assert getattr(importlib.import_module(module), function) is cli.main
    assert "tritonfleet.cli" in _imported_modules(ROOT / "tritonfleet" / "__main__.py")


def test_importing_the_cli_loads_no_config_schema_sdk_or_pack():
    """`tritonfleet --help` pays only for the CLI's own imports: the config schema (pydantic), the Pulumi SDKs, the
    policy pack and cloud clients load inside the commands that use them (benchmarks/cli_speed.py --against)."""
    code = "import sys, tritonfleet.cli\nprint(' '.join(sorted(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    heavy = ("pydantic", "pulumi", "boto3", "google", "grpc", "tritonfleet.core.config", "tritonfleet.plan.document",
             "tritonfleet.policycheck", "components")  # fmt: skip
    assert not [m for m in loaded if m.startswith(heavy)]
