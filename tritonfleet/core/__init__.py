"""The pure core: stack config schema, GPU catalog, cost model and shared conventions.

Nothing here imports Pulumi, so the program, the policy pack and the CLI can all load it cheaply.
"""
