"""Karpenter's interruption handling: the SQS queue EventBridge feeds with the events that end or threaten an
instance, so the controller cordons and drains the node (and launches its replacement) before EC2 takes it away.

From AWS's getting-started CloudFormation for Karpenter 1.14.1 (see tritonfleet/clouds/aws/karpenter_iam.py for the source):
queue `KarpenterInterruptionQueue`, its policy, and one EventBridge rule per event type below, each targeting the queue.
A spot interruption warning comes two minutes before the instance is reclaimed; the messages are useless after that,
hence the short retention.
"""

from __future__ import annotations

from tritonfleet.clouds.aws.iam_policies import VERSION

MESSAGE_RETENTION_SECONDS = 300
TARGET_ID = "KarpenterInterruptionQueueTarget"
# rule slug (our resource names) -> (CloudFormation logical id, EventBridge event pattern)
INTERRUPTION_RULES: dict[str, tuple[str, dict]] = {
    "scheduled-change": ("ScheduledChangeRule", {"source": ["aws.health"], "detail-type": ["AWS Health Event"]}),
    "spot-interruption": (
        "SpotInterruptionRule",
        {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]},
    ),
    "rebalance": ("RebalanceRule", {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]}),
    "instance-state-change": (
        "InstanceStateChangeRule",
        {"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]},
    ),
    # Capacity blocks and ODCRs (Karpenter's `reserved` capacity type) warn before the reservation ends.
    "capacity-reservation-interruption": (
        "CapacityReservationInterruptionRule",
        {"source": ["aws.ec2"], "detail-type": ["EC2 Capacity Reservation Instance Interruption Warning"]},
    ),
}


def interruption_queue_name(cluster_name: str) -> str:
    """The queue is named after the cluster, as in the CloudFormation (cluster names are at most 40 characters here,
    SQS allows 80)."""
    return cluster_name


def interruption_queue_policy(queue_arn: str) -> dict:
    """EventBridge (and SQS) may send to the queue; nothing may use it without TLS."""
    return {
        "Version": VERSION,
        "Id": "EC2InterruptionPolicy",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
            },
            {
                "Sid": "DenyHTTP",
                "Effect": "Deny",
                "Action": "sqs:*",
                "Resource": queue_arn,
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                "Principal": "*",
            },
        ],
    }
