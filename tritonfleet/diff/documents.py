"""Reading plan documents (the JSON `tritonfleet plan --json` writes) for a diff, with errors a user can act on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from tritonfleet.core.config.schema import USD_MAX
from tritonfleet.core.strict_json import StrictJsonError, loads_json, read_json

REQUIRED_KEYS = ("format", "stack", "resources", "cost")


class DiffInputError(Exception):
    """A plan document is missing, unreadable or not a plan document."""


def check_plan(document: Any, source: str) -> dict[str, Any]:
    """Return `document` if it looks like a plan document, else raise DiffInputError naming what is wrong."""
    if not isinstance(document, dict):
        raise DiffInputError(f"{source} is not a tritonfleet plan document: expected a JSON object, got {type(document).__name__}")
    missing = [key for key in REQUIRED_KEYS if key not in document]
    if missing:
        raise DiffInputError(
            f"{source} is not a tritonfleet plan document: missing {', '.join(missing)} "
            "(write one with `tritonfleet plan --stack STACK --json FILE`)"
        )
    if not isinstance(document["resources"], list) or not isinstance(document["cost"], dict):
        raise DiffInputError(f"{source} is not a tritonfleet plan document: 'resources' must be a list and 'cost' an object")
    bad = [i for i, r in enumerate(document["resources"]) if not isinstance(r, dict) or not isinstance(r.get("urn"), str)]
    if bad:
        raise DiffInputError(f"{source}: resources[{bad[0]}] has no 'urn' string")
    _check_fields(document, source)
    return document


def _check_fields(document: dict[str, Any], source: str) -> None:
    """The fields a diff reads have the types `tritonfleet plan` writes (a DiffInputError naming the first that does
    not): an edited or foreign document is refused here, not halfway through the comparison."""
    try:
        _PlanFields.model_validate(document)
    except ValidationError as error:
        first = error.errors()[0]
        where = _where(document, first["loc"])
        raise DiffInputError(
            f"{source} is not a tritonfleet plan document:\n  {where}: {first['msg'].lower()}"
            f"\n  (got {json.dumps(first.get('input'), default=str)[:60]})"
        ) from None


def load_plan(path: Path) -> dict[str, Any]:
    return check_plan(read_document(path), str(path))


def read_document(path: Path) -> Any:
    """The JSON in `path`, or a DiffInputError saying why it cannot be read: not there, not UTF-8, not strict JSON
    (NaN, Infinity, 1e400, a key given twice in one object, nesting past 100 levels: tritonfleet/core/strict_json.py)."""
    if not path.exists():
        raise DiffInputError(f"{path} does not exist")
    try:
        return read_json(path)
    except StrictJsonError as error:
        raise DiffInputError(str(error)) from None


def parse_document(text: str, source: str) -> Any:
    """JSON text as a plan document is read: strictly (see read_document)."""
    try:
        return loads_json(text, source)
    except StrictJsonError as error:
        raise DiffInputError(str(error)) from None


def load_plans(path: Path) -> dict[str, dict[str, Any]]:
    """One plan document (a file) or every `*.json` plan document in a folder, keyed by stack name."""
    if path.is_dir():
        files = sorted(path.glob("*.json"))
        if not files:
            raise DiffInputError(f"{path} holds no *.json plan documents")
    else:
        files = [path]
    plans: dict[str, dict[str, Any]] = {}
    for file in files:
        document = load_plan(file)
        stack = document["stack"]
        if stack in plans:
            raise DiffInputError(f"{path}: two plan documents for stack '{stack}'")
        plans[stack] = document
    return plans


def plans_from_paths(base: Path, head: Path, stacks: list[str] | None) -> tuple[dict[str, dict], dict[str, dict]]:
    """Base and head plans keyed by stack, from two files or two folders, limited to `stacks` if given."""
    base_plans, head_plans = load_plans(base), load_plans(head)
    if stacks:
        missing = sorted(set(stacks) - set(base_plans) - set(head_plans))
        if missing:
            raise DiffInputError(f"no plan for stack {', '.join(missing)} in {base} or {head}")
        return {s: p for s, p in base_plans.items() if s in stacks}, {s: p for s, p in head_plans.items() if s in stacks}
    if base.is_file() and head.is_file():
        # Two single documents are compared with each other, even when their stack names differ.
        (stack,) = head_plans
        return {stack: next(iter(base_plans.values()))}, head_plans
    return base_plans, head_plans


def relative_to_checkout(value: Any, root: str) -> Any:
    """Replace the checkout's absolute path in string values with `.`, so two checkouts of the same program compare equal.

    (An absolute path among a resource's inputs, such as a local Helm chart, differs between any two checkouts.)
    """
    if isinstance(value, dict):
        return {k: relative_to_checkout(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [relative_to_checkout(v, root) for v in value]
    if isinstance(value, str) and (value == root or value.startswith(root + "/")):
        return "." + value[len(root):]
    return value


def _where(document: Any, loc: tuple) -> str:
    """A validation error's location as a path into the document (the union members pydantic names are dropped)."""
    path, value = "", document
    for part in loc:
        if isinstance(value, dict) and part in value or isinstance(value, list) and isinstance(part, int) and part < len(value):
            value = value[part]
            path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path.lstrip(".")


# ---- the fields a diff reads, as `tritonfleet plan --json` writes them (other fields pass unread) ----

# A figure within the money a plan can hold (USD_MAX, the schema's: JSON's exact integers, so a delta of two figures
# stays finite), or why there is none ("unknown", "not given").
Money = Annotated[float, Field(ge=-USD_MAX, le=USD_MAX)] | str


class _Fields(BaseModel):
    model_config = ConfigDict(extra="allow", allow_inf_nan=False)


class _Resource(_Fields):
    urn: str
    type: str = ""
    name: str = ""
    inputs: dict[str, Any] | None = None
    ignoreChanges: list[str] = []  # noqa: N815 - the document's spelling
    protect: bool = False
    retainOnDelete: bool = False  # noqa: N815
    deleteBeforeReplace: bool = False  # noqa: N815


class _NodeRange(_Fields):
    min: int = 0
    max: int | None = None


class _PoolCost(_Fields):
    pool: str
    gpu: str | None = None
    instanceType: str | None = None  # noqa: N815
    nodes: dict[str, _NodeRange] = {}
    gpusPerNode: int = 0  # noqa: N815
    maxGpus: int | None = None  # noqa: N815
    monthlyFloorUsd: Money | None = None  # noqa: N815
    monthlyCeilingUsd: Money | None = None  # noqa: N815
    assumedPrice: dict[str, Any] | str | None = None  # noqa: N815


class _OtherLine(_Fields):
    line: str
    monthlyFloorUsd: Money | None = None  # noqa: N815
    monthlyCeilingUsd: Money | None = None  # noqa: N815
    monthlyExpectedUsd: Money | None = None  # noqa: N815


class _Cost(_Fields):
    pools: list[_PoolCost] = []
    otherLines: list[_OtherLine] = []  # noqa: N815
    totals: dict[str, Money | None] = {}
    monthlyFloorUsd: Money = "unknown"  # noqa: N815
    monthlyCeilingUsd: Money = "unknown"  # noqa: N815
    maxGpus: int | Literal["unknown"] = "unknown"  # noqa: N815


class _Verdict(_Fields):
    policy: str
    enforcement: str
    message: str
    urn: str | None = None


class _Policy(_Fields):
    verdicts: list[_Verdict] | None = None


class _PerMillion(_Fields):
    peak: Money | None = None
    average: Money | None = None


class _SizedDeployment(_Fields):
    deployment: str
    usdPer1M: _PerMillion  # noqa: N815
    capacity: dict[str, Any] | float | str | None = None


class _AtLoad(_Fields):
    usdPer1M: Money | None = None  # noqa: N815


class _SizedPool(_Fields):
    pool: str
    peak: _AtLoad
    average: _AtLoad


class _Sizing(_Fields):
    deployments: list[_SizedDeployment] = []
    pools: list[_SizedPool] = []


class _PlanFields(_Fields):
    stack: str
    cloud: str = ""
    region: str = ""
    environment: str = ""
    resources: list[_Resource]
    cost: _Cost
    policy: _Policy | Any = None
    sizing: _Sizing | None = None
    acknowledged: list[str] | None = None

