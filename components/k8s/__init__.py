"""The Kubernetes layer: GPU Operator, monitoring and Triton releases, built from cloud-neutral facts."""
