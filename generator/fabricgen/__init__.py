"""fabricgen: one fabric.yaml in, validated per-cluster OVN GitOps output out."""

__version__ = "0.1.0"
