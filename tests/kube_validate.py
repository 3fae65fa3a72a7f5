"""kubernetes-validate, with each schema file it reads parsed once per test process.

The library opens and parses the schema of the object's kind and the multi-megabyte `_definitions.json` again on
every call (0.05 s a call, 80 % of it JSON parsing); the suite validates hundreds of objects against several
Kubernetes versions. The files are the installed package's own and never change while tests run, and validation
only reads the parsed schemas, so the answers are the library's own. Imported on first use (0.2 s), not at
collection."""

from __future__ import annotations

import functools

# API groups of custom resources the chart renders: kubernetes-validate has no schema for them, so the tests that
# render them validate them against the vendored CRDs instead (tests/upstream/).
CUSTOM_RESOURCE_GROUPS = (
    "monitoring.coreos.com/",
    "argoproj.io/",
    "gateway.networking.k8s.io/",
    "networking.gke.io/",
    "keda.sh/",
    "http.keda.sh/",
)


def validate_strict(obj: dict, version: str) -> str:
    """kubernetes_validate.validate(obj, version, strict=True): unknown fields are errors; a kind without a schema
    raises kubernetes_validate.SchemaNotFoundError."""
    import kubernetes_validate
    from kubernetes_validate import utils

    if not hasattr(utils.schema_contents, "cache_info"):
        utils.schema_contents = functools.cache(utils.schema_contents)
    return kubernetes_validate.validate(obj, version, strict=True)
