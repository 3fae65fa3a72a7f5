"""tritonfleet's CrossGuard policy pack: GPU limits, budgets, spot mix and security guardrails.

`registry.ALL_POLICIES` lists every policy (one module each under `rules/`); `__main__.py` is what the Pulumi CLI runs.
Importing this package never starts the pack's gRPC server and never imports a cloud SDK.
"""
