"""Write constraints.txt: the installed versions of everything `pip install -e '.[test]'` pulls in.

Run with the venv's interpreter after installing without constraints and passing the tests:
    venv/bin/python scripts/constraints.py > constraints.txt
It walks pyproject.toml's dependencies and test extra through the installed packages' own requirements (markers
and extras evaluated here), so what is pinned is exactly the closure the project needs, not whatever else the venv
holds.
"""

from __future__ import annotations

import sys
import tomllib
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

HEADER = """\
# The resolved versions of everything `pip install -e '.[test]'` installs (pyproject.toml's pins and all they pull
# in), so a fresh install resolves the same set at once, without backtracking. The Makefile passes it to every pip
# install of ./venv (-c constraints.txt), and requirements.txt (what the Pulumi CLI installs) includes it.
# Not here: setuptools (the venv's own; the build backend comes from pyproject's build-system) and
# nvidia-pytriton==0.7.0, which the Makefile installs with --no-deps.
# Regenerate after changing a pin: install into a fresh venv without -c, run the tests, then
#   venv/bin/python scripts/constraints.py > constraints.txt"""
LEFT_OUT = {"setuptools", "tritonfleet"}


def closure(roots: list[Requirement]) -> dict[str, str]:
    """name -> installed version for `roots` and, recursively, what each installed package requires."""
    environment = default_environment()
    found: dict[str, str] = {}
    seen: set[tuple[str, tuple[str, ...]]] = set()
    todo = list(roots)
    while todo:
        requirement = todo.pop()
        key = (canonicalize_name(requirement.name), tuple(sorted(requirement.extras)))
        if key in seen:
            continue
        seen.add(key)
        try:
            installed = distribution(requirement.name)
        except PackageNotFoundError:
            raise SystemExit(f"{requirement.name} is not installed: install '.[test]' first") from None
        found[key[0]] = installed.version
        for line in installed.requires or []:
            needed = Requirement(line)
            extras = list(requirement.extras) or [""]
            if needed.marker is None or any(needed.marker.evaluate({**environment, "extra": e}) for e in extras):
                todo.append(needed)
    return found


def main() -> None:
    project = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())["project"]
    roots = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]]
    pins = closure(roots)
    lines = [f"{name}=={version}" for name, version in sorted(pins.items()) if name not in LEFT_OUT]
    sys.stdout.write(HEADER + "\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
