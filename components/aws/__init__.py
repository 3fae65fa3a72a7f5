"""AWS adapter: an EKS cluster, its GPU node groups, model buckets and IRSA identities."""
