"""Cross-field config rules, one module per area; each reports through a RuleContext (rules/context.py).

Cloud-neutral rules live here; each cloud's own rules live in tritonfleet/clouds/<cloud>/config_rules.py and are
called from these at the points the contract (`CloudConfigRules`) names.
"""
