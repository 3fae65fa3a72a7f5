"""One module per policy; the module is named after the policy (kebab-case name, underscores here)."""
