"""Pulumi components: cloud adapters (aws, gcp) below, the Kubernetes layer (k8s) above, the platform on top."""
