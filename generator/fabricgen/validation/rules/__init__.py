"""Semantic rules, one module per family (`registry` keeps them): importing this package
registers every rule, and `run` and `catalogue` are the registry's.

- `interconnect` FG1xx, `addressing` FG2xx, `routing` FG3xx, `tenancy` FG4xx and `nat_gateways`,
  `deployments` FG5xx, `consumers` FG6xx, `deployment_interconnect` FG7xx, `delivery` FG8xx,
  `policy` FG9xx (and `policy_members`, what a group's members select).
"""

from __future__ import annotations

from fabricgen.validation.registry import LOAD_CODES, RULES, Rule, catalogue, rule, run
from fabricgen.validation.rules import (
    addressing,
    consumers,
    delivery,
    deployment_interconnect,
    deployments,
    interconnect,
    nat_gateways,
    policy,
    policy_members,
    routing,
    tenancy,
)

__all__ = ["LOAD_CODES", "RULES", "Rule", "addressing", "catalogue", "consumers", "delivery",
           "deployment_interconnect", "deployments", "interconnect", "nat_gateways", "policy", "policy_members",
           "routing", "rule", "run", "tenancy"]
