"""GCP (GKE) knowledge, pure: its Cloud (cloud.py), facts (facts.py), config rules (config_rules.py), the decisions
the adapter turns into resources (layout.py, node_pools.py, drivers.py, identity.py, maintenance.py, exposure.py),
the bill and the capacity preflight. The Pulumi adapter is components/gcp; it imports this package, never the reverse."""
