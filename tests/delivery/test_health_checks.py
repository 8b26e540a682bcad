"""The health checks pass their fixtures in Lua 5.1 (Argo CD) and in CEL (Flux).

Each check lives in Argo CD's own layout, `resource_customizations/<group>/<Kind>/` with
`health.lua`, `health_test.yaml` and `testdata/` (argoproj/argo-cd `docs/operator-manual/
health.md`, "Way 2"; argo-cd `util/lua/health_test.go` reads the same files). The fixtures cover
no status yet, empty conditions, no Ready condition, Ready False and Unknown, an Error
condition, one node NotReady and healthy. The Flux expressions are judged on the same
fixtures: what Argo CD calls Healthy is Current, Degraded is Failed, Progressing is
InProgress, and an object without any status is Unknown (the expression errors; the wait
holds). `tests/support/health.py` says how each engine is reproduced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.render import health_checks
from support.health import Cel, kstatus, lua_binary, lua_literal, run_lua

pytestmark = pytest.mark.skipif(lua_binary() is None, reason="lua5.1 not installed (scripts/setup.sh --test)")

FLUX = {"Healthy": "Current", "Degraded": "Failed", "Progressing": "InProgress"}
# Where the Flux expression and the Lua script part, and why.
FLUX_EXCEPTIONS = {
    # Kube-OVN writes no status for a gateway with neither externalSubnets nor selector, and CEL
    # cannot test for a missing status; fabricgen always renders externalSubnets.
    ("kubeovn.io", "VpcNatGateway", "healthy_nothingToEcho"): "Unknown",
}


def cases() -> list[tuple[health_checks.Kind, str, dict[str, Any], str, str]]:
    out = []
    for kind in health_checks.ARGOCD_KINDS:
        folder = health_checks.script_path(kind).parent
        tests = yaml.safe_load((folder / "health_test.yaml").read_text(encoding="utf-8"))["tests"]
        for test in tests:
            obj = yaml.safe_load((folder / test["inputPath"]).read_text(encoding="utf-8"))
            expected = test["healthStatus"]
            out.append((kind, Path(test["inputPath"]).stem, obj, expected["status"], expected.get("message", "")))
    return out


CASES = cases()


def test_every_kind_has_a_check_and_its_fixtures() -> None:
    folders = {p.parent.relative_to(health_checks.ROOT).parts for p in health_checks.ROOT.glob("*/*/health.lua")}
    assert folders == set(health_checks.ARGOCD_KINDS)
    for kind in health_checks.ARGOCD_KINDS:
        folder = health_checks.script_path(kind).parent
        listed = {t["inputPath"] for t in yaml.safe_load((folder / "health_test.yaml").read_text())["tests"]}
        assert listed == {f"testdata/{p.name}" for p in (folder / "testdata").glob("*.yaml")}, kind
        names = {Path(p).stem for p in listed}
        if kind[0] == "kubeovn.io":
            assert any(n.endswith("noStatus") for n in names), kind
            assert any(n.startswith("healthy") for n in names), kind


def test_the_code_digest_covers_the_scripts(tmp_path: Path) -> None:
    """A changed health.lua is a changed fabricgen: no render record of the old code answers."""
    import shutil

    from fabricgen.serialise import render_record

    package = tmp_path / "fabricgen"
    shutil.copytree(Path(render_record.__file__).parent.parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    before = render_record.code_digest(package)
    script = package / health_checks.script_path(health_checks.ARGOCD_KINDS[0]).relative_to(
        Path(render_record.__file__).parent.parent)
    script.write_text(script.read_text() + "-- edited\n")
    assert render_record.code_digest(package) != before


@pytest.mark.lab
def test_lua_fixtures() -> None:
    results = run_lua([(health_checks.script(kind), obj) for kind, _n, obj, _s, _m in CASES])
    failures = [f"{kind[1]} {name}: expected {status} {message!r}, got {got}"
                for (kind, name, _o, status, message), got in zip(CASES, results, strict=True)
                if got != (status, message)]
    assert failures == []
    covered = {(kind, status) for kind, _n, _o, status, _m in CASES}
    assert (("kubeovn.io", "Subnet"), "Degraded") in covered


@pytest.mark.lab
def test_the_scripts_need_no_string_library() -> None:
    """argocd-cm scripts run without Lua's string library: a method call on a string fails here too."""
    probe = 'local hs = {}\nhs.status = ("healthy"):upper()\nreturn hs\n'
    assert run_lua([(probe, {"status": {}})])[0][0] == "error"
    ok = 'local hs = {}\nhs.status = "Healthy"\nhs.message = table.concat({"a", "b"}, ",")\nreturn hs\n'
    assert run_lua([(ok, {})]) == [("Healthy", "a,b")]


@pytest.mark.lab
def test_lua_literal_keeps_every_character() -> None:
    text = 'a"b\\c\nd\x00é]]'
    probe = 'local hs = {}\nhs.status = "Healthy"\nhs.message = obj.text\nreturn hs\n'
    assert run_lua([(probe, {"text": text})]) == [("Healthy", text)]
    assert lua_literal([None, True, 1.5]) == "{nil, true, 1.5}"


@pytest.fixture(scope="module")
def cel() -> Cel:
    return Cel()


def test_cel_fixtures(cel: Cel) -> None:
    failures = []
    for kind, name, obj, status, _message in CASES:
        exprs = health_checks.FLUX_EXPRESSIONS.get(kind)
        if exprs is None:
            continue
        expected = FLUX_EXCEPTIONS.get((*kind, name)) or ("Unknown" if "status" not in obj else FLUX[status])
        got = cel.status(exprs, obj)
        if got != expected:
            failures.append(f"{kind[1]} {name}: expected {expected}, got {got}")
    assert failures == []


def test_every_kind_with_a_status_has_an_expression_but_vlan() -> None:
    kube_ovn = {k for k in health_checks.ARGOCD_KINDS if k[0] == "kubeovn.io"}
    assert set(health_checks.FLUX_EXPRESSIONS) == kube_ovn - {("kubeovn.io", "Vlan")}


def test_the_expressions_parse_and_every_key_is_one_flux_reads(cel: Cel) -> None:
    for exprs in health_checks.FLUX_EXPRESSIONS.values():
        assert set(exprs) <= {"current", "failed", "inProgress"} and "current" in exprs
        for expr in exprs.values():
            assert cel.evaluate(expr, {"status": {}, "spec": {}, "metadata": {}}) in (True, False)


def test_a_vlan_is_current_for_kstatus_without_an_expression() -> None:
    """No expression for Vlan: kstatus calls a Vlan without conditions Current, so the stage with
    the Subnets (which give it a status) can start."""
    for kind, name, obj, _status, _message in CASES:
        if kind == ("kubeovn.io", "Vlan") and name.startswith("healthy"):
            assert kstatus(obj) == "Current"


def test_what_the_naive_forms_get_wrong(cel: Cel) -> None:
    """Why `exists` and not `filter(...).all(...)`, and why ProviderNetwork needs an expression."""
    by_name = {(k[1], n): o for k, n, o, _s, _m in CASES}
    naive = "status.conditions.filter(e, e.type == 'Ready').all(e, e.status == 'True')"
    no_ready = by_name[("Subnet", "progressing_noReadyCondition")]
    assert cel.status({"current": naive}, no_ready) == "Current"  # .all() over an empty list is true
    assert cel.status(health_checks.FLUX_EXPRESSIONS[("kubeovn.io", "Subnet")], no_ready) == "InProgress"
    # kstatus without an expression: a fresh Subnet without conditions is Current, and of a
    # ProviderNetwork's per-node conditions only the first Ready one counts.
    assert kstatus(by_name[("Subnet", "progressing_noStatus")]) == "Current"
    one_down = by_name[("ProviderNetwork", "healthy_oneNodeNotReady")]
    assert kstatus(one_down) == "InProgress"
    flipped = {**one_down, "status": {**one_down["status"], "conditions": one_down["status"]["conditions"][::-1]}}
    assert kstatus(flipped) == "Current"


def test_flux_health_checks_list_the_kinds_present() -> None:
    objs = [{"apiVersion": "kubeovn.io/v1", "kind": "Subnet"}, {"apiVersion": "v1", "kind": "ConfigMap"},
            {"apiVersion": "kubeovn.io/v1", "kind": "Vlan"}]
    checks = health_checks.flux_health_checks(objs)
    assert [c["kind"] for c in checks] == ["Subnet"]
    assert checks[0]["apiVersion"] == "kubeovn.io/v1"
