"""How many availability zones each AWS region offers an account, for config checks before anything is created.

Regions not listed here are not checked offline; `tritonfleet preflight` asks EC2 for the real zones of any region.
Counts from the AWS "Regions and Zones" documentation as of 2025 (VERIFY when a region adds zones): some regions have
more physical zones than a new account can use (us-west-1: 2 of 3, ap-northeast-1: 3 of 4); the usable count is given.
"""

AWS_ZONE_COUNT: dict[str, int] = {
    "us-east-1": 6,
    "us-east-2": 3,
    "us-west-1": 2,
    "us-west-2": 4,
    "ca-central-1": 3,
    "eu-west-1": 3,
    "eu-west-2": 3,
    "eu-west-3": 3,
    "eu-central-1": 3,
    "eu-north-1": 3,
    "ap-northeast-1": 3,
    "ap-south-1": 3,
    "ap-southeast-1": 3,
    "ap-southeast-2": 3,
    "sa-east-1": 3,
}
