"""GCP (GKE) knowledge, pure: facts (facts.py) and config rules (config_rules.py). The Pulumi adapter is components/gcp."""
