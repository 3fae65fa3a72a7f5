"""GCP adapter: a GKE cluster, its GPU node pools, model buckets and Workload Identity bindings."""
