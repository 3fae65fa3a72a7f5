"""Triton model repositories: check one the way Triton reads it, and publish it to S3 or GCS without half-done versions.

Pure: no Pulumi import. Cloud SDKs (boto3, google-cloud-storage) are imported only when a bucket of that cloud is used.
"""
