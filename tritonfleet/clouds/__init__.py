"""Each cloud's pure knowledge, one package per cloud (tritonfleet/clouds/<name>/): its `cloud.py` (the Cloud object,
tritonfleet/core/cloud.py's contract), facts with source and date, config rules, preflight and bill. A cloud's package
imports the core and itself only; the registry in tritonfleet/core/cloud.py finds it by name.
"""
