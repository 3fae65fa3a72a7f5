"""The pure, cloud-neutral core: stack config (schema, rules, loader), GPU catalog, cost model and shared conventions.

Nothing here imports Pulumi, so the program, the policy pack and the CLI can all load it cheaply. One cloud's facts
and rules live above this package, in tritonfleet/clouds/<cloud>/; core reaches them by cloud name at call time
through the one registry (tritonfleet.core.cloud: `cloud(name)`) and never imports them at module load.
"""
