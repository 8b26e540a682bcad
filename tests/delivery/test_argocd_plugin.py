"""The Argo CD plugin, run the way argocd-cmp-server runs it.

The cmp-server unpacks the repository (no `.git`) into `<tmp>/_cmp_server/<uuid>/`,
sets the working directory to the Application's path, and runs plugin.yaml's
generate command with the build environment (ARGOCD_APP_*, ARGOCD_ENV_*, PARAM_*).
"""

from __future__ import annotations

import subprocess
import uuid
from pathlib import Path

import pytest

from fabricgen.cli import main
from support.gitops_tree import LAB, REPO, ZONES, break_nb_port, copy_sources, load_file, load_stream, run, tool_env

pytestmark = pytest.mark.lab  # starts real programs: bash, fabricgen


@pytest.fixture(scope="module")
def expected(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[dict[str, object]]]:
    """Each zone's objects as `fabricgen render` writes them."""
    from support.gitops_tree import rendered_objects

    out = tmp_path_factory.mktemp("rendered")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        assert main(["render", LAB, "-o", str(out), "-q"]) == 3
    return {zone: rendered_objects(out / "lab" / zone) for zone in ZONES}


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """An unpacked repository as the cmp-server holds it."""
    root = tmp_path / "_cmp_server" / str(uuid.uuid4())
    copy_sources(root)
    return root


def generate_command() -> list[str]:
    spec = load_file(REPO / "deploy" / "argocd" / "plugin.yaml")["spec"]["generate"]
    return [*spec["command"], *spec.get("args", [])]


def cmp_run(root: Path, app_path: str, **env: str) -> subprocess.CompletedProcess[str]:
    build_env = tool_env(
        ARGOCD_APP_NAME="fabric-lab", ARGOCD_APP_NAMESPACE="kube-system",
        ARGOCD_APP_PROJECT_NAME="default", ARGOCD_APP_REVISION="0123456789abcdef",
        ARGOCD_APP_SOURCE_REPO_URL="https://git.example/network/fabric.git",
        ARGOCD_APP_SOURCE_PATH=app_path, ARGOCD_APP_SOURCE_TARGET_REVISION="main",
        KUBE_VERSION="1.32.4", **env,
    )
    return run(generate_command(), root / app_path, build_env)


def test_plugin_runs_the_generate_command() -> None:
    assert generate_command() == ["fabricgen", "argocd-generate"]


# Where argocd-cmp-server reads its plugin (Argo CD's plugin guide: "the plugin config file
# ... at /home/argocd/cmp-server/config/plugin.yaml", baked in or mounted from a ConfigMap).
PLUGIN_CONFIG = "/home/argocd/cmp-server/config/plugin.yaml"


def test_plugin_config_is_where_its_comment_says_and_nothing_hides_it() -> None:
    argocd = REPO / "deploy" / "argocd"
    plugin_text = (argocd / "plugin.yaml").read_text()
    assert PLUGIN_CONFIG in plugin_text
    assert f"COPY deploy/argocd/plugin.yaml {PLUGIN_CONFIG}\n" in (argocd / "Containerfile").read_text()
    patch = load_file(argocd / "argocd-repo-server-patch.yaml")["spec"]["template"]["spec"]
    mounts = [m["mountPath"] for c in patch["containers"] for m in c.get("volumeMounts", [])]
    # a mount at the file or any directory above it would hide the baked-in file
    assert not [m for m in mounts if m == PLUGIN_CONFIG or PLUGIN_CONFIG.startswith(m.rstrip("/") + "/")]
    assert not [v for v in patch.get("volumes", []) if "configMap" in v]
    assert "mounts nothing over that path" in plugin_text


@pytest.mark.parametrize("zone", ZONES)
def test_env_zone_prints_exactly_the_rendered_objects(
    checkout: Path, expected: dict[str, list[dict[str, object]]], zone: str
) -> None:
    result = cmp_run(checkout, "sites/lab", ARGOCD_ENV_ZONE=zone)
    assert result.returncode == 0, result.stderr
    assert load_stream(result.stdout) == expected[zone]
    assert result.stderr.strip().splitlines()[-1].endswith(f"zone {zone}: {len(expected[zone])} object(s)")


def test_parameter_and_fabric_from_another_app_path(
    checkout: Path, expected: dict[str, list[dict[str, object]]]
) -> None:
    """An Application pointing at rendered/lab/hq names the fabric explicitly."""
    (checkout / "rendered" / "lab" / "hq").mkdir(parents=True)
    result = cmp_run(checkout, "rendered/lab/hq", PARAM_ZONE="hq", PARAM_FABRIC=LAB)
    assert result.returncode == 0, result.stderr
    assert load_stream(result.stdout) == expected["hq"]


def test_writes_nothing_and_runs_concurrently(
    checkout: Path, expected: dict[str, list[dict[str, object]]]
) -> None:
    before = sorted((p.relative_to(checkout).as_posix(), p.stat().st_mtime_ns)
                    for p in checkout.rglob("*"))
    env = {z: tool_env(ARGOCD_APP_SOURCE_PATH="sites/lab", ARGOCD_ENV_ZONE=z) for z in ZONES * 2}
    procs = [(z, subprocess.Popen(generate_command(), cwd=checkout / "sites" / "lab", env=env[z],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
             for z in ZONES * 2]
    for zone, proc in procs:
        out, err = proc.communicate()
        assert proc.returncode == 0, err
        assert load_stream(out) == expected[zone]
    after = sorted((p.relative_to(checkout).as_posix(), p.stat().st_mtime_ns)
                   for p in checkout.rglob("*"))
    assert after == before


def test_missing_zone_fails_with_the_choices(checkout: Path) -> None:
    result = cmp_run(checkout, "sites/lab")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        "fabricgen: error: sites/lab/fabric.yaml: no zone chosen; set the plugin parameter 'zone' "
        "(PARAM_ZONE) or env ZONE (ARGOCD_ENV_ZONE) (one of: hq, ai, edge, dr)\n"
    )


def test_unknown_zone_fails(checkout: Path) -> None:
    result = cmp_run(checkout, "sites/lab", ARGOCD_ENV_ZONE="dq")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "no zone 'dq' in site 'lab' (zones: hq, ai, edge, dr)" in result.stderr


def test_unknown_variable_is_a_typo(checkout: Path) -> None:
    result = cmp_run(checkout, "sites/lab", ARGOCD_ENV_ZOEN="hq", PARAM_FABRC=LAB)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == (
        "fabricgen: error: unknown variable ARGOCD_ENV_ZOEN (did you mean ARGOCD_ENV_ZONE?); "
        "unknown variable PARAM_FABRC (did you mean PARAM_FABRIC?)\n"
    )


def test_conflicting_parameter_and_env(checkout: Path) -> None:
    result = cmp_run(checkout, "sites/lab", ARGOCD_ENV_ZONE="hq", PARAM_ZONE="ai")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "conflicting values for ZONE" in result.stderr


def test_fabric_outside_the_repository_is_refused(checkout: Path) -> None:
    (checkout.parent / "fabric.yaml").write_text((checkout / LAB).read_text())
    result = cmp_run(checkout, "sites/lab", ARGOCD_ENV_ZONE="hq", ARGOCD_ENV_FABRIC="../fabric.yaml")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "points outside the repository" in result.stderr


def test_no_fabric_found_walking_up(checkout: Path) -> None:
    (checkout / "apps" / "hq").mkdir(parents=True)
    result = cmp_run(checkout, "apps/hq", ARGOCD_ENV_ZONE="hq")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "no fabric.yaml" in result.stderr and "PARAM_FABRIC" in result.stderr


def test_bad_fabric_fails_short_and_located(checkout: Path) -> None:
    line = break_nb_port(checkout / LAB)
    result = cmp_run(checkout, "sites/lab", ARGOCD_ENV_ZONE="hq")
    assert result.returncode == 1
    assert result.stdout == ""
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"sites/lab/fabric.yaml:{line}:")
    assert "interconnection.database.nbPort" in first
    assert result.stderr.splitlines()[-1].endswith("no manifests generated")
    assert len(result.stderr.splitlines()) <= 12


def test_an_ovn_kubernetes_cluster_directory_is_selectable(checkout: Path) -> None:
    """Not only zones: a platform fabric's OVN-Kubernetes cluster is a Kubernetes directory too."""
    cluster = next(p.name for p in (REPO / "rendered" / "openstack-k8s").iterdir() if not p.name.startswith("_"))
    result = cmp_run(checkout, "sites/openstack-k8s", ARGOCD_ENV_ZONE=cluster)
    assert result.returncode == 0, result.stderr
    from support.gitops_tree import rendered_objects

    assert load_stream(result.stdout) == rendered_objects(REPO / "rendered" / "openstack-k8s" / cluster)


# --- the fabric the plugin reads: the one at the app path, or an error ------------------

@pytest.mark.parametrize("kind", ["dangling symlink", "directory", "FIFO"])
def test_an_unusable_fabric_at_the_app_path_is_an_error_not_the_parent_sites(checkout: Path, kind: str) -> None:
    """A site below another fabric's directory: its broken fabric.yaml must not let discovery
    walk up and render the parent's fabric."""
    app = checkout / "sites" / "lab" / "branch"
    app.mkdir()
    fabric = app / "fabric.yaml"
    if kind == "dangling symlink":
        fabric.symlink_to("missing.yaml")
    elif kind == "directory":
        fabric.mkdir()
    else:
        import os

        os.mkfifo(fabric)
    result = cmp_run(checkout, "sites/lab/branch", ARGOCD_ENV_ZONE="hq")
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert "sites/lab/branch/fabric.yaml is " in result.stderr and kind.split()[-1] in result.stderr


def test_a_fabric_symlink_out_of_the_repository_is_not_followed(checkout: Path) -> None:
    outside = checkout.parent / "elsewhere.yaml"
    outside.write_text((checkout / LAB).read_text())
    (checkout / LAB).unlink()
    (checkout / LAB).symlink_to(outside)
    for env in ({}, {"ARGOCD_ENV_FABRIC": LAB}):
        result = cmp_run(checkout, "sites/lab", ARGOCD_ENV_ZONE="hq", **env)
        assert result.returncode == 2 and result.stdout == ""
        assert "outside the repository" in result.stderr


def test_a_fabric_symlink_within_the_repository_is_read(checkout: Path,
                                                        expected: dict[str, list[dict[str, object]]]) -> None:
    (checkout / "sites" / "lab-link").mkdir()
    (checkout / "sites" / "lab-link" / "fabric.yaml").symlink_to("../lab/fabric.yaml")
    result = cmp_run(checkout, "sites/lab-link", ARGOCD_ENV_ZONE="hq")
    assert result.returncode == 0, result.stderr
    assert len(load_stream(result.stdout)) == len(expected["hq"])


@pytest.mark.parametrize("sent", ["sites/lab", "sites"])
def test_only_the_app_path_sent(tmp_path: Path, expected: dict[str, list[dict[str, object]]], sent: str) -> None:
    """With reposerver.plugin.use.manifest.generate.paths=true the repo-server sends only the
    deepest directory holding the app path and its manifest-generate-paths (argo-cd
    reposerver/repository/utils.go getApplicationRootPath), unpacked at the cmp-server's
    work directory; the working directory is the app path inside it."""
    import shutil

    workdir = tmp_path / "_cmp_server" / str(uuid.uuid4())
    shutil.copytree(REPO / sent, workdir)
    app_rel = Path("sites/lab").relative_to(sent)
    build_env = tool_env(ARGOCD_APP_SOURCE_PATH="sites/lab", ARGOCD_ENV_ZONE="hq")
    result = run(generate_command(), workdir / app_rel, build_env)
    assert result.returncode == 0, result.stderr
    assert load_stream(result.stdout) == expected["hq"]  # names the fabric as render does: sites/lab/fabric.yaml
    assert result.stderr.endswith(f"fabricgen: sites/lab/fabric.yaml: zone hq: {len(expected['hq'])} object(s)\n")
    outside = run(generate_command(), workdir / app_rel,
                  {**build_env, "ARGOCD_ENV_FABRIC": "sites/nat/fabric.yaml"} if sent == "sites/lab" else
                  {**build_env, "ARGOCD_ENV_FABRIC": "deploy/fabric.yaml"})
    assert outside.returncode == 2 and "outside the files Argo CD sent the plugin" in outside.stderr


def test_a_reader_that_goes_away_is_a_broken_pipe_not_a_bug(checkout: Path) -> None:
    env = tool_env(ARGOCD_APP_SOURCE_PATH="sites/lab", ARGOCD_ENV_ZONE="hq", FABRICGEN_FAST_PATH="0")
    for fast in ("0", "1", "1"):  # rendered, then (twice) from the cache
        env["FABRICGEN_FAST_PATH"] = fast
        done = subprocess.run(["bash", "-c", 'fabricgen argocd-generate | head -c 0; echo "${PIPESTATUS[0]}"'],
                              cwd=checkout / "sites" / "lab", env=env, capture_output=True, text=True, check=False)
        assert done.stdout == "141\n", done.stderr
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_a_fabric_that_is_not_utf8_is_reported_as_validate_reports_it(checkout: Path) -> None:
    fabric = checkout / LAB
    fabric.write_bytes(fabric.read_bytes().replace(b"# ", b"# \xff", 1))
    result = cmp_run(checkout, "sites/lab", ARGOCD_ENV_ZONE="hq")
    validate = run(["fabricgen", "validate", LAB], checkout, tool_env())
    assert (result.returncode, validate.returncode) == (1, 1)
    assert result.stderr.splitlines()[0] == validate.stderr.splitlines()[0]
    assert "is not UTF-8" in result.stderr and "[FG000]" in result.stderr


def test_a_fabric_symlink_loop_is_an_error(checkout: Path) -> None:
    app = checkout / "sites" / "lab" / "app"
    app.mkdir()
    (app / "fabric.yaml").symlink_to("fabric.yaml")
    result = cmp_run(checkout, "sites/lab/app", ARGOCD_ENV_ZONE="hq")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == ("fabricgen: error: sites/lab/app/fabric.yaml is a symlink loop; point it at the "
                             "fabric file or replace it with the fabric itself\n")
