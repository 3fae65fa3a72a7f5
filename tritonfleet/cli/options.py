"""Options several commands take, declared once (the same name, help and metavar everywhere)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

StackOption = Annotated[str, typer.Option("--stack", "-s", help="stack name: stacks/Pulumi.<stack>.yaml")]
ProjectOption = Annotated[Path | None, typer.Option(help="folder with Pulumi.yaml (default: found from here upwards)")]
PolicyConfigOption = Annotated[
    Path | None, typer.Option("--policy-config", help="policy pack config (default: policies/config/<stack>.json)")
]
