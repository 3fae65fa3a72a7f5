"""tritonfleet: GPU inference platforms for NVIDIA Triton on EKS and GKE."""
