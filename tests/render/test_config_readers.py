"""Values read back as written, by the real reader of each file.

ovn_k8s.conf is read by gcfg (gopkg.in/gcfg.v1, git-config syntax): here by `git config -f
FILE --get section.key`, which follows the same rules for comments (`;`, `#`), quotes and
escapes. ml2_conf.ini is read by oslo.config (installed as a test dependency): its own INI
parser and its `$name` / `${name}` substitution. Hostile values (comment characters, quotes,
backslashes, dollars, percent signs, blanks) go through the fabric into both files and come
back unchanged; a value neither format can hold (a line break) is refused with a located error.
"""

from __future__ import annotations

import configparser
import shutil
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oslo_config import cfg as oslo_cfg  # a test dependency (pyproject.toml, extra `test`)

from fabricgen.pipeline import Build
from fabricgen.render.templating import gcfg_value, oslo_value
from support.fabrics import REPO, SITES, build_file, build_text, diagnostic_lines, edit

pytestmark = pytest.mark.lab  # starts real programs: git

SAMPLE = REPO / "sites" / "openstack-k8s" / "fabric.yaml"
SITE_FILE = "sites/openstack-k8s/fabric.yaml"
HOSTILE = [
    "/etc/ovn/a;b.pem", "/etc/ovn/a#b.pem", '/etc/ovn/"quoted".pem', "/etc/ovn/back\\slash.pem",
    "/etc/ovn/$x.pem", "/etc/ovn/${x}.pem", "/etc/ovn/$$.pem", "/etc/ovn/\\$x.pem", "/etc/ovn/100%.pem",
    "/etc/ovn/%(x)s.pem", '/etc/ovn/\\";#x', "/etc/ovn/end\\",
]
BLANKS = [" leading", "trailing ", "in side", "\ttab", "\x0bvt", "nel\x85", "\u2028ls", "fs\x1c", "'single'",
          '"double"', '"', "'", "", "=", "a = b"]


def _need_git() -> None:
    if shutil.which("git") is None:
        pytest.skip("git not installed")


def git_config(path: Path, key: str) -> str:
    """The value of `key` as git config reads it (gcfg's syntax)."""
    out = subprocess.run(["git", "config", "-f", str(path), "--get", key], capture_output=True, check=True)
    return out.stdout.decode("utf-8").removesuffix("\n")


def oslo_read(path: Path, options: dict[str, list[str]]) -> dict[tuple[str, str], str]:
    """Values of the given group options as oslo.config's ConfigOpts reads them from one file."""
    conf = oslo_cfg.ConfigOpts()
    for group, names in options.items():
        conf.register_opts([oslo_cfg.StrOpt(name) for name in names], group=group)
    conf(args=[], default_config_files=[str(path)], default_config_dirs=[], project="fabricgen-test",
         use_env=False)
    return {(g, n): getattr(getattr(conf, g), n) for g, names in options.items() for n in names}


# --- the filters on their own, against the real readers ------------------------------------


def test_gcfg_values_read_back_with_git_config(tmp_path: Path) -> None:
    _need_git()
    values = HOSTILE + BLANKS + ["https://api.example:6443/p;q#r"]
    path = tmp_path / "values.conf"
    path.write_text("[s]\n" + "".join(f"k{i}={gcfg_value(v)}\n" for i, v in enumerate(values)), encoding="utf-8")
    assert [git_config(path, f"s.k{i}") for i in range(len(values))] == values


@settings(max_examples=60, deadline=None)
@given(st.text(st.characters(blacklist_characters="\r\n\x00", blacklist_categories=("Cs",)), max_size=30))
def test_gcfg_any_one_line_value_reads_back(tmp_path_factory: pytest.TempPathFactory, value: str) -> None:
    _need_git()
    path = tmp_path_factory.mktemp("gcfg") / "one.conf"
    path.write_text(f"[s]\nk={gcfg_value(value)}\n", encoding="utf-8")
    assert git_config(path, "s.k") == value


def test_oslo_values_read_back_with_oslo_config(tmp_path: Path) -> None:
    values = HOSTILE + BLANKS
    path = tmp_path / "values.ini"
    path.write_text("[g]\n" + "".join(f"k{i} = {oslo_value(v)}\n" for i, v in enumerate(values)), encoding="utf-8")
    read = oslo_read(path, {"g": [f"k{i}" for i in range(len(values))]})
    assert [read[("g", f"k{i}")] for i in range(len(values))] == values


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_characters="\r\n\x00", blacklist_categories=("Cs",)), min_size=1,
               max_size=30))
def test_oslo_any_one_line_value_reads_back(tmp_path_factory: pytest.TempPathFactory, value: str) -> None:
    path = tmp_path_factory.mktemp("oslo") / "one.ini"
    path.write_text(f"[g]\nk = {oslo_value(value)}\n", encoding="utf-8")
    assert oslo_read(path, {"g": ["k"]})[("g", "k")] == value


@pytest.mark.parametrize("value", ["a\nb", "a\rb", "a\x00b"])
def test_line_breaks_cannot_be_written(value: str) -> None:
    for write in (gcfg_value, oslo_value):
        with pytest.raises(ValueError, match="line break"):
            write(value)


# --- rendered files ------------------------------------------------------------------------

CONF_KEYS = {
    "default.mtu", "default.encap-type", "default.encap-port", "default.cluster-subnets", "default.monitor-all",
    "kubernetes.apiserver", "kubernetes.service-cidrs", "kubernetes.host-network-namespace",
    "ovnnorth.address", "ovnsouth.address", "gateway.mode",
    "ovnkubernetesfeature.enable-interconnect",
    # the sample's cluster asks for AdminNetworkPolicies (config.go `gcfg:"enable-admin-network-policy"`)
    "ovnkubernetesfeature.enable-admin-network-policy",
}
SSL_KEYS = {f"{side}.{key}" for side in ("ovnnorth", "ovnsouth")
            for key in ("client-privkey", "client-cert", "client-cacert", "cert-common-name")}


def hostile_sample(api_server: str, private_key: str, certificate: str, ca_certificate: str) -> Build:
    """The openstack-k8s sample over ssl with the given certificate paths and API server."""
    text = SAMPLE.read_text(encoding="utf-8")
    ssl = (f"      protocol: ssl\n      ssl:\n        privateKey: '{private_key}'\n"
           f"        certificate: '{certificate}'\n        caCertificate: '{ca_certificate}'\n")
    openstack = "      clientNetworks: [10.20.0.0/24, 10.255.0.0/24]   # control plane and the chassis loopbacks\n"
    text = edit(text, openstack, openstack + ssl)
    kubernetes = "      clientNetworks: [10.20.1.0/24, 10.255.1.0/24]\n"
    text = edit(text, kubernetes, kubernetes + ssl)
    text = edit(text, "        apiServer: https://10.20.1.5:6443\n", f"        apiServer: '{api_server}'\n")
    return build_text(text, SITE_FILE)


def rendered(build: Build, name: str, directory: Path) -> Path:
    (path,) = [p for p in build.files if p.name == name]
    out = directory / name
    out.write_text(build.files[path].text, encoding="utf-8")
    return out


def conf_keys(path: Path) -> set[str]:
    out = subprocess.run(["git", "config", "-f", str(path), "--name-only", "--list"], capture_output=True,
                         text=True, check=True)
    return set(out.stdout.split())


def test_sample_ovn_k8s_conf_reads_back(tmp_path: Path) -> None:
    _need_git()
    build = build_file(SAMPLE)
    path = rendered(build, "ovn_k8s.conf", tmp_path)
    assert conf_keys(path) == CONF_KEYS
    assert git_config(path, "kubernetes.apiserver") == "https://10.20.1.5:6443"
    assert git_config(path, "ovnnorth.address") == "tcp:10.20.1.10:6641"
    assert git_config(path, "default.cluster-subnets") == "10.128.0.0/14/23"
    # ovnkube's own default is "" (ovn-org/ovn-kubernetes go-controller/pkg/config/config.go); only
    # ovnkube.sh passes ovn-host-network, so a launcher reading this file needs it here.
    assert git_config(path, "kubernetes.host-network-namespace") == "ovn-host-network"


def test_every_rendered_file_reads_the_same_with_its_real_reader(tmp_path: Path) -> None:
    """Sample values need no quoting: the real readers agree with a plain INI reading of each file."""
    _need_git()
    seen = {"ovn_k8s.conf": 0, "ml2_conf.ini": 0}
    for site in SITES:
        build = build_file(site)
        for rel, out in build.files.items():
            if rel.name not in seen:
                continue
            seen[rel.name] += 1
            path = tmp_path / f"{seen[rel.name]}-{rel.name}"
            path.write_text(out.text, encoding="utf-8")
            plain = configparser.ConfigParser(interpolation=None)
            plain.read_string(out.text)
            expected = {(s, k): v for s in plain.sections() for k, v in plain[s].items()}
            if rel.name == "ovn_k8s.conf":
                assert {(s, k): git_config(path, f"{s}.{k}") for s, k in expected} == expected
                assert conf_keys(path) == {f"{s}.{k}" for s, k in expected}
            else:
                options: dict[str, list[str]] = {}
                for s, k in expected:
                    options.setdefault(s, []).append(k)
                assert oslo_read(path, options) == expected
    assert all(seen.values()), seen


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_paths_and_api_server_read_back(tmp_path: Path, hostile: str) -> None:
    _need_git()
    # a URL holds no quote, backslash or blank (RFC 3986; the fabric refuses them): percent-encoded
    api_server = "https://api.example:6443/" + quote(hostile.removeprefix("/etc/ovn/"), safe="$;#")
    build = hostile_sample(api_server, hostile, hostile + ".crt", "/etc/ovn/ca" + hostile.removeprefix("/etc/ovn/"))
    conf = rendered(build, "ovn_k8s.conf", tmp_path)
    assert conf_keys(conf) == CONF_KEYS | SSL_KEYS
    assert git_config(conf, "kubernetes.apiserver") == api_server
    for side in ("ovnnorth", "ovnsouth"):
        assert git_config(conf, f"{side}.client-privkey") == hostile
        assert git_config(conf, f"{side}.client-cert") == hostile + ".crt"
        assert git_config(conf, f"{side}.client-cacert") == "/etc/ovn/ca" + hostile.removeprefix("/etc/ovn/")
    ovn = ["ovn_nb_connection", "ovn_sb_connection", "ovn_l3_scheduler"] + [
        f"ovn_{side}_{key}" for side in ("nb", "sb") for key in ("private_key", "certificate", "ca_cert")]
    ini = oslo_read(rendered(build, "ml2_conf.ini", tmp_path), {"ovn": ovn, "ml2_type_geneve": ["vni_ranges"]})
    for side in ("nb", "sb"):
        assert ini[("ovn", f"ovn_{side}_private_key")] == hostile
        assert ini[("ovn", f"ovn_{side}_certificate")] == hostile + ".crt"
        assert ini[("ovn", f"ovn_{side}_ca_cert")] == "/etc/ovn/ca" + hostile.removeprefix("/etc/ovn/")
    assert ini[("ovn", "ovn_nb_connection")] == "ssl:10.20.0.11:6641,ssl:10.20.0.12:6641,ssl:10.20.0.13:6641"
    assert ini[("ml2_type_geneve", "vni_ranges")] == "1:65536"
    # The ConfigMap carries the same file.
    objects = {o["metadata"]["name"]: o for o in build.objects("k8s-prod")}
    assert objects["ovnkube-config"]["data"]["ovn_k8s.conf"] == conf.read_text(encoding="utf-8")
    assert objects["ovn-config"]["data"]["k8s_apiserver"] == api_server


@pytest.mark.parametrize("value", ["a\\nb", "a\\rb", "a\\0b", "a\\x01b", "a\\x7fb"],
                         ids=["newline", "return", "nul", "soh", "del"])
def test_what_cannot_be_written_is_refused_with_a_located_error(value: str) -> None:
    """A line break (or any control character) in the API server or a certificate path: one
    located schema error per field, never a failed render."""
    text = SAMPLE.read_text(encoding="utf-8")
    text = edit(text, "        apiServer: https://10.20.1.5:6443\n", f'        apiServer: "https://api/{value}"\n')
    kubernetes = "      clientNetworks: [10.20.1.0/24, 10.255.1.0/24]\n"
    text = edit(text, kubernetes, kubernetes + "      protocol: ssl\n      ssl:\n"
                f'        privateKey: "/etc/ovn/{value}.pem"\n        certificate: /etc/ovn/c.pem\n'
                "        caCertificate: /etc/ovn/ca.pem\n")
    errors = [line for line in diagnostic_lines(text, SITE_FILE) if "[FG003]" in line]
    assert len(errors) == 2, errors
    lines = text.splitlines()
    key = 1 + next(i for i, line in enumerate(lines) if line.startswith("        privateKey: "))
    api = 1 + next(i for i, line in enumerate(lines) if line.startswith("        apiServer: "))
    assert errors[0].startswith(f"{SITE_FILE}:{key}:21: ovnDeployments[1].databases.ssl.privateKey: ")
    assert errors[1].startswith(f"{SITE_FILE}:{api}:20: ovnDeployments[1].consumers[0].apiServer: ")
