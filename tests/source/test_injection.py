"""No value can inject a YAML key or document, a shell command, or a path.

- `manifest_yaml.dump_all` round-trips arbitrary data through a YAML 1.2 parser
  (ruamel.yaml) and a YAML 1.1 parser (PyYAML), property-tested with hypothesis.
- Hostile fabric values are rejected by validation (names are DNS labels) or come
  out quoted and parse back to exactly themselves.
- `templating.shquote` makes any string one literal word for a real `sh`.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from fabricgen.cli import main
from fabricgen.errors import InvalidFabricError
from fabricgen.pipeline import safe_path
from fabricgen.render.templating import shquote
from fabricgen.serialise.manifest_yaml import dump, dump_all
from support.fabrics import REPO, build_text, tree

SETTINGS = settings(max_examples=250, derandomize=True, database=None, deadline=None)

# Every character YAML may carry, which is every character a str can hold except lone surrogates.
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
SCALARS = st.none() | st.booleans() | st.integers() | TEXT
DATA = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20,
)
# Multi-line text, as scripts are: lines of printable text ending in a newline.
SCRIPT = st.lists(st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\r\n"), max_size=30),
                  min_size=1, max_size=6).map(lambda lines: "\n".join(lines) + "\n")


def load_12(text: str) -> list[Any]:
    return list(YAML(typ="safe", pure=True).load_all(io.StringIO(text)))


def load_11(text: str) -> list[Any]:
    return list(yaml.load_all(text, Loader=yaml.SafeLoader))


@SETTINGS
@given(st.lists(st.dictionaries(TEXT, DATA, min_size=1, max_size=5), min_size=1, max_size=3))
def test_dump_all_round_trips_yaml_12_and_11(documents: list[dict[str, Any]]) -> None:
    text = dump_all(documents)
    assert load_12(text) == documents
    assert load_11(text) == documents


@SETTINGS
@given(st.dictionaries(TEXT, SCRIPT | TEXT, min_size=1, max_size=4))
def test_multiline_strings_round_trip(data: dict[str, str]) -> None:
    text = dump({"data": data})
    assert load_12(text) == [{"data": data}]
    assert load_11(text) == [{"data": data}]


@pytest.mark.parametrize("value", [
    "a\n---\nkind: Secret", "key: value", "# comment", "'single'", '"double"', "$(rm -rf /)", "`id`",
    "../../etc/passwd", "- item", "{a: 1}", "[1]", "&anchor", "*alias", "!!python/object", "%YAML 1.1",
    "yes", "No", "ON", "off", "y", "null", "~", "", " ", "0x1F", "0o17", "1e3", "1_000", "12:30", "2026-11-30",
    ".inf", "-.nan", "@at", "|", ">", "? q", "a #b", "tab\there", "\u2028", "\x85", "\ufeff", "é", "\x00",
    "line\n", "two\nlines\n", " leading\n", "trailing \n", "\n", "a\n\n", "---\n", "...\n", "- x\n",
])
def test_hostile_strings_round_trip(value: str) -> None:
    documents = [{"metadata": {"name": value, value: [value, {value: value}]}}, {"kind": value}]
    text = dump_all(documents)
    assert load_12(text) == documents
    assert load_11(text) == documents


# --- fabric values ---

BASE = (REPO / "tests" / "golden" / "tenant-peering" / "fabric.yaml").read_text(encoding="utf-8")
MATCH = '"ip4.dst == 203.0.113.0/24"'
# Matches OVN parses, holding what YAML, a shell or a path would read otherwise (in a string, a
# comment): quoted into the output, never a key, a document or a command.
HOSTILE_LINES = [
    "ip4.dst == 10.0.0.0/8 // # not a comment",
    "ip4.src == 10.0.0.1 && inport == \"lsp: x\"",
    "inport == \"it's 'quoted' and \\\"double\\\" \\\\ backslash\"",
    "inport == \"$(rm -rf /) `reboot` ; echo pwned\"",
    "inport == \"../../etc/passwd: {evil: true}\"",
    "inport == \"--- !!python/object/apply:os.system ['id']\" /* - a: b */",
    "inport == \"- a: b\"",
    "inport == \"yes\"",
]


def render_objects(text: str) -> tuple[dict[PurePosixPath, str], list[dict[str, Any]]]:
    build = build_text(text, "sites/tenants/fabric.yaml")
    files = {path: out.text for path, out in build.files.items()}
    objects = []
    for path, content in files.items():
        if path.suffix == ".yaml":
            docs_12, docs_11 = load_12(content), load_11(content)
            assert docs_12 == docs_11, path
            objects += [d for d in docs_12 if d is not None]
    return files, objects


@pytest.mark.parametrize("match", HOSTILE_LINES)
def test_policy_match_is_quoted_not_injected(match: str) -> None:
    text = BASE.replace(MATCH, json.dumps(match))
    assert text != BASE
    files, objects = render_objects(text)
    vpcs = [o for o in objects if o["kind"] == "Vpc" and o["metadata"]["name"] == "ovn-cluster"]
    dc1 = next(v for v in vpcs if any(p["action"] == "drop" for p in v["spec"]["policyRoutes"]))
    assert [p["match"] for p in dc1["spec"]["policyRoutes"] if p["action"] == "drop"] == [match]
    # Same number of objects as with a harmless value: nothing was injected.
    assert len(objects) == len(render_objects(BASE)[1])
    patch = json.loads(files[PurePosixPath("tenants/dc1/ic-routes-dc1.json")])
    assert patch["spec"] == dc1["spec"]


@pytest.mark.parametrize("match", ["a\nb", "a\n---\nkind: Secret", "a\rb", "", "\u2028 unicode \x85 separators",
                                   "ip4.src == 10.0.0.1 \u202e&& ip4.dst == 10.0.0.2", "tcp \x1b[2J"])
def test_policy_match_with_line_break_is_rejected(match: str) -> None:
    """A line break, a separator, a bidirectional override or a terminal control: refused, never
    written into a rendered file or shown by `diff`."""
    with pytest.raises(InvalidFabricError) as info:
        build_text(BASE.replace(MATCH, json.dumps(match)), "sites/tenants/fabric.yaml")
    assert [d.code for d in info.value.diagnostics] == ["FG003"]
    assert info.value.diagnostics[0].path == "zones[0].defaultVpc.policyRoutes[1].match"


HOSTILE_NAMES = ["a\n", "../x", "..", "a/b", "a\n---\nb", "a: b", "a#b", "$(id)", "A", "-a", "a b", "x" * 64, "'a'", ""]
NAME_FIELDS = {  # where a name goes -> (text to replace in BASE, path reported)
    "site": ("  name: tenants\n", "metadata.name"),
    "zone": ("  - name: dc2\n", "zones[1].name"),
    "vpc": ("      - name: red\n", "zones[0].vpcs[2].name"),
    "subnet": ("{name: red-lab,", "zones[0].vpcs[2].subnets[0].name"),
    "namespace": ("namespace: blue-db}", "zones[0].vpcs[0].subnets[1].network.namespace"),
}


@pytest.mark.parametrize("field", sorted(NAME_FIELDS))
@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_names_are_rejected(field: str, name: str) -> None:
    old, path = NAME_FIELDS[field]
    assert BASE.count(old) == 1
    new = old.replace(old.split("name: " if "name: " in old else "namespace: ")[1].rstrip("\n,}"),
                      json.dumps(name), 1)
    with pytest.raises(InvalidFabricError) as info:
        build_text(BASE.replace(old, new), "sites/tenants/fabric.yaml")
    # The rules' errors on the rest come too: a renamed VPC leaves its peering naming one not there.
    assert [(d.code, d.path) for d in info.value.diagnostics if d.code == "FG003"] == [("FG003", path)]
    assert {d.code for d in info.value.diagnostics} <= {"FG003", "FG406"}


@pytest.mark.parametrize("image", ["repo/img:tag\nimage: evil", "img; rm -rf /", "$(id)", "img #x", "'img'", "img tag"])
def test_hostile_image_is_rejected(image: str) -> None:
    text = BASE.replace("  database:\n", f"  database:\n    image: {json.dumps(image)}\n", 1)
    with pytest.raises(InvalidFabricError) as info:
        build_text(text, "sites/tenants/fabric.yaml")
    assert [(d.code, d.path) for d in info.value.diagnostics] == [("FG003", "interconnection.database.image")]


def test_digest_image_is_quoted() -> None:
    image = "registry.example:5000/kubeovn/kube-ovn@sha256:" + "0" * 64
    lab = (REPO / "sites" / "lab" / "fabric.yaml").read_text(encoding="utf-8")
    text = lab.replace("    zone: hq ", f"    image: {image}\n    zone: hq ", 1)
    text = text.replace("  image: registry.example/network/fabricgen:0.1.0", f"  image: {image}", 1)  # the watch
    assert text != lab and text.count(image) == 2
    _files, objects = render_objects(text)
    images = {c["image"] for o in objects if o["kind"] in ("Deployment", "Job")
              for c in o["spec"]["template"]["spec"]["containers"]}
    assert images == {image}


def test_zone_path_traversal_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sites").mkdir()
    (tmp_path / "sites" / "fabric.yaml").write_text(BASE.replace("  - name: dc2\n", "  - name: ../x\n"),
                                                    encoding="utf-8")
    before = tree(tmp_path)
    assert main(["render", "sites/fabric.yaml", "--format", "text"]) == 1
    assert "zones[1].name: '../x' is not a valid name" in capsys.readouterr().err
    assert tree(tmp_path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sites"]


@pytest.mark.parametrize("path", ["../x/a.yaml", "/etc/passwd", "a/../../b", "a/.hidden", "", "a/b c", "a\n/b"])
def test_renderer_paths_are_checked(path: str) -> None:
    with pytest.raises(ValueError, match="unsafe path"):
        safe_path(PurePosixPath(path))


def test_every_rendered_path_stays_inside_its_site() -> None:
    for case in sorted((REPO / "tests" / "golden").glob("*/fabric.yaml")):
        build = build_text(case.read_text(encoding="utf-8"), "x/fabric.yaml")
        for path in build.files:
            assert path.parts[0] == build.site and ".." not in path.parts and not path.is_absolute()


# --- shell words ---

SH = shutil.which("sh")
WORDS = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00\n\r"), max_size=30)


def sh_printf(words: list[str]) -> list[str]:
    """What a real sh receives: each quoted word printed and NUL-terminated."""
    assert SH is not None
    script = "printf '%s\\0' " + " ".join(shquote(w) for w in words)
    result = subprocess.run([SH, "-c", script], capture_output=True, check=True)
    return result.stdout.decode("utf-8").split("\0")[:-1]


@pytest.mark.lab
@pytest.mark.skipif(SH is None, reason="no sh")
@settings(max_examples=60, derandomize=True, database=None, deadline=None)
@given(st.lists(WORDS, min_size=1, max_size=8))
def test_shquote_is_one_literal_word(words: list[str]) -> None:
    assert sh_printf(words) == words


@pytest.mark.lab
@pytest.mark.skipif(SH is None, reason="no sh")
def test_shquote_hostile_words() -> None:
    words = ["$(touch pwned)", "`touch pwned`", "'; touch pwned; '", "a b", "*", "~", "$HOME", "-n", "", "'",
             "\\", "!", "a'b\"c", "#", "${x:-y}", "%s"]
    assert sh_printf(words) == words
    assert not Path("pwned").exists()


@pytest.mark.parametrize("value", ["a\nb", "a\rb", "a\x00b"])
def test_shquote_refuses_line_breaks(value: str) -> None:
    with pytest.raises(ValueError, match="refusing"):
        shquote(value)


def _kube_ovn_selectors(entries: list[str]) -> dict[str, str]:
    """kube-ovn pkg/util/vpc_nat_gateway.go GenNatGwSelectors: split each entry at ':', keep it
    only when that gives exactly two parts, trim both."""
    out: dict[str, str] = {}
    for entry in entries:
        parts = entry.strip().split(":")
        if len(parts) == 2:
            out[parts[0].strip()] = parts[1].strip()
    return out


@pytest.mark.parametrize("fabric", ["sites/nat/fabric.yaml", "tests/golden/nat-gateway/fabric.yaml"])
def test_nat_gateway_selectors_read_back_as_written(fabric: str) -> None:
    text = (REPO / fabric).read_text(encoding="utf-8")
    build = build_text(text, fabric)
    gateways = {vpc.nat_gateway.name: vpc.nat_gateway for zone in build.plan.fabric.zones for vpc in zone.vpcs
                if vpc.nat_gateway is not None}
    checked: list[dict[str, str]] = []
    for directory in build.manifests:
        for obj in build.objects(directory):
            if obj["kind"] == "VpcNatGateway":
                selector = gateways[obj["metadata"]["name"]].selector
                assert _kube_ovn_selectors(obj["spec"].get("selector", [])) == selector
                checked.append(selector)
    assert len(checked) == len(gateways) and any(checked)


@pytest.mark.parametrize(("key", "value"), [("zone: a", "b"), ("a", "b:c"), ("a", " b"), (" a", "b"), ("a b", "c"),
                                            ("a", "x" * 64), ("-a", "b"), ("example.com/", "b"), ("a/b/c", "d"),
                                            # `$` of Python's re matches before a final line break too
                                            ("a\n", "b"), ("a", "b\n"), ("example.com\n/a", "b")])
def test_nat_gateway_selectors_kube_ovn_would_change_are_refused(key: str, value: str) -> None:
    text = (REPO / "sites" / "nat" / "fabric.yaml").read_text(encoding="utf-8")
    old = "            kubernetes.io/os: linux\n"
    assert text.count(old) == 1
    hostile = text.replace(old, f"            {json.dumps(key)}: {json.dumps(value)}\n")
    with pytest.raises(InvalidFabricError) as caught:
        build_text(hostile, "sites/nat/fabric.yaml")
    assert [d.code for d in caught.value.diagnostics] == ["FG003"]
    assert "selector" in caught.value.diagnostics[0].path
