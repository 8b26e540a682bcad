"""No fabric.yaml can crash fabricgen: every rejection is a located diagnostic, exit 1.

- Structure-aware mutation of the sample fabrics (delete, duplicate, retype, rename,
  empty, near-miss addresses, hostile names, moved sections), dumped back to YAML and
  run through `fabricgen render` in-process: exit 0, 1 or 3, never 4.
- Raw text: arbitrary text and bytes, and YAML fragments (tabs, BOM, anchors, aliases,
  merge keys, tags, several documents, deep nesting, long lines, duplicate keys) spliced
  into a sample fabric.
- Deterministic regression tests for every crash and malformed diagnostic found, and
  for the JSON and GitHub formats with hostile values.

Hypothesis runs derandomized with a bounded number of examples;
FABRICGEN_FUZZ_EXAMPLES=N runs N examples per property for a longer local search.
"""

from __future__ import annotations

import contextlib
import copy
import io
import ipaddress
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from fabricgen.cli import main
from fabricgen.diagnostics import format_path
from support.fabrics import SITES, build_text, tree

EXAMPLES = int(os.environ.get("FABRICGEN_FUZZ_EXAMPLES", "0"))


def fuzz(default: int) -> settings:
    return settings(max_examples=EXAMPLES or default, derandomize=True, database=None, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


DIAGNOSTIC = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): \S.*: .+ \[FG\d{3}\]$")
SUMMARY = re.compile(r"^fabricgen: \d+ error\(s\), \d+ warning\(s\); nothing written$")
YAML_LINE_BREAK = re.compile("\r\n|[\r\n]")  # as ruamel's YAML 1.2 reader counts lines
GITHUB = re.compile(r"^::(error|warning) file=[^,:]*,line=\d+,col=\d+,title=fabricgen FG\d{3}::[^\r\n]*$")


@pytest.fixture(autouse=True)
def _plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("FABRICGEN_DEBUG", raising=False)


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def assert_located(text: str, stderr: str, name: str) -> None:
    """Every line but the summary is `FILE:LINE:COL: path: message [FGnnn]` inside the file."""
    assert stderr.endswith("\n")
    lines = stderr[:-1].split("\n")
    assert SUMMARY.match(lines[-1]), lines[-1]
    assert len(lines) > 1, "exit 1 without a diagnostic"
    source_lines = YAML_LINE_BREAK.split(text)
    for line in lines[:-1]:
        m = DIAGNOSTIC.match(line)
        assert m, f"not a located diagnostic: {line!r}"
        assert line.isprintable(), f"raw control character in a diagnostic: {line!r}"
        assert m["file"] == name, line
        row, col = int(m["line"]), int(m["col"])
        assert 1 <= row <= max(len(source_lines), 1), line
        assert 1 <= col <= len(source_lines[row - 1]) + 1, line


def check_fabric_text(text: str | bytes) -> int:
    """Render `text` as fabricgen's CLI would and check the contract; returns the exit code."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "fabric.yaml"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        out = root / "out"
        code, _, err = run(["render", str(path), "-o", str(out), "--format", "text"])
        assert code in (0, 1, 3), err
        assert "Traceback" not in err
        if code == 1:
            shown = text if isinstance(text, str) else text.decode("utf-8", "replace")
            assert_located(shown, err, path.as_posix())
            assert not out.exists(), "an invalid fabric wrote output"
            return code
        sites = list(out.iterdir())
        assert len(sites) == 1 and sites[0].is_dir() and not sites[0].is_symlink()
        for item in out.rglob("*"):
            assert not item.is_symlink() and item.resolve().is_relative_to(sites[0].resolve())
        first = tree(out)
        assert run(["render", str(path), "-o", str(out), "--format", "text"])[0] == 0, "second render changed files"
        again = root / "again"
        assert run(["render", str(path), "-o", str(again), "--format", "text", "-q"])[0] == 3
        assert tree(again) == first, "rendering is not deterministic"
        return code


# --------------------------------------------------------------------------------------------
# Structure-aware mutation of the sample fabrics

SAMPLES = {p.parent.name: p.read_text(encoding="utf-8") for p in SITES}


def load(text: str) -> Any:
    return YAML(typ="rt").load(text)


def dump(data: Any) -> str:
    buffer = io.StringIO()
    yaml = YAML(typ="rt")
    yaml.width = 4096
    yaml.dump(data, buffer)
    return buffer.getvalue()


Slot = tuple[Any, Any]  # (container, key or index)


def slots(node: Any) -> list[Slot]:
    """Every (container, key) pair of the tree, in document order."""
    found: list[Slot] = []
    stack = [node]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, dict):
            children = list(current.items())
        elif isinstance(current, list):
            children = list(enumerate(current))
        else:
            continue
        for key, value in reversed(children):
            found.append((current, key))
            stack.append(value)
    return found


NEAR_MISS_ADDRESSES = [
    "10.0.0.1/24", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/0", "0.0.0.0/0", "0.0.0.0", "255.255.255.255",
    "255.255.255.255/32", "fd00::/64", "::1", "fe80::1%eth0", "10.0.0", "1.2.3.4.5", "010.0.0.0/8",
    "10.0.0.0/255.0.0.0", "10.0.0.0 /24", " 10.0.0.0/24", "169.254.100.0/24", "169.254.100.200", "10.0.0.0/31",
    "10.0.0.0/32", "224.0.0.0/4", "127.0.0.1", "10.250.0.11/20", "256.1.1.1", "1.2.3.4/24/24",
]
HOSTILE_NAMES = [
    "../x", "..", ".", "a.b", "UPPER", "a" * 63, "a" * 64, "$(x)", "`id`", "x\ny", "x\r\ny", "", " ", "-a", "a-",
    "a b", "zöne", "ovn-cluster", "ts", "_host", "kube-system", "default", "backbone-hq", "x/y", "x\\y", "x::y",
    "x%0Ay", "%", "x,y", "a" * 300, "\x07", "\u2028", "\ufeff", "0", "1.2", "true", "null", "~", "-", "*a", "&a",
    "!!str", "# comment", "key: value", "{a: 1}", "[a]", "\t", "é" * 40,
]
HOSTILE_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.sampled_from([0, -1, 65536, 4095, 2**32, 2**64]),
    st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(HOSTILE_NAMES),
    st.sampled_from(NEAR_MISS_ADDRESSES), st.text(max_size=20), st.just("x" * 20000),
    st.text(st.characters(max_codepoint=0x9F, exclude_categories=("Cs",)), max_size=10),
    st.lists(st.integers(0, 3), max_size=3), st.dictionaries(st.sampled_from(["a", "name", "cidr"]),
                                                             st.integers(0, 3), max_size=2),
)


def names_in(data: Any) -> list[str]:
    """Every string value in the tree: reusing one elsewhere makes realistic collisions."""
    return [c[k] for c, k in slots(data) if isinstance(c[k], str)]


def mutate(draw: Callable[..., Any], data: Any) -> None:
    candidates = slots(data)
    if not candidates:
        return
    container, key = draw(st.sampled_from(candidates))
    value = container[key]
    kind = draw(st.sampled_from(["delete", "duplicate", "retype", "rename", "empty", "address", "name",
                                 "collide", "move", "alias", "wrap"]))
    if kind == "delete":
        del container[key]
    elif kind == "duplicate" and isinstance(container, list):
        container.insert(key, copy.deepcopy(value))
    elif kind == "retype":
        container[key] = draw(HOSTILE_VALUES)
    elif kind == "rename" and isinstance(container, dict):
        new = draw(st.sampled_from([str(key).upper(), str(key).lower(), f"{key}s", str(key)[:-1] or "x",
                                    str(key) + "\u200b", "<<", "apiVersion", 7, None, True, *HOSTILE_NAMES[:12]]))
        if new not in container:
            position = list(container).index(key)
            del container[key]
            if isinstance(container, CommentedMap):
                container.insert(position, new, value)
            else:
                container[new] = value
    elif kind == "empty":
        container[key] = CommentedSeq() if isinstance(value, list) else CommentedMap()
    elif kind == "address":
        container[key] = draw(st.sampled_from(NEAR_MISS_ADDRESSES))
    elif kind == "name":
        container[key] = draw(st.sampled_from(HOSTILE_NAMES))
    elif kind == "collide":
        pool = names_in(data)
        if pool:
            container[key] = draw(st.sampled_from(pool))
    elif kind == "move":
        target, target_key = draw(st.sampled_from(candidates))
        destination = target[target_key]
        if isinstance(destination, dict) and destination is not value:
            del container[key]
            destination[key if isinstance(container, dict) else f"moved{key}"] = value
        elif isinstance(destination, list) and destination is not value:
            del container[key]
            destination.append(value)
    elif kind == "alias":
        # Share one node in two places: ruamel writes an anchor and an alias.
        target, target_key = draw(st.sampled_from(candidates))
        if target[target_key] is not container:
            target[target_key] = value
    elif kind == "wrap":
        container[key] = CommentedSeq([value]) if draw(st.booleans()) else CommentedMap([("value", value)])


@st.composite
def mutated_fabric(draw: Callable[..., Any]) -> str:
    site = draw(st.sampled_from(sorted(SAMPLES)))
    data = load(SAMPLES[site])
    for _ in range(draw(st.integers(1, 4))):
        mutate(draw, data)
    return dump(data)


@fuzz(120)
@given(mutated_fabric())
def test_mutated_samples_never_crash(text: str) -> None:
    check_fabric_text(text)


# Type-preserving mutations get past the schema into the semantic rules and the renderers.
VALID_NETWORKS = ["0.0.0.0/0", "10.0.0.0/8", "10.54.0.0/16", "10.100.2.0/24", "172.30.10.0/24", "169.254.100.0/24",
                  "169.254.0.0/30", "10.0.0.0/31", "10.0.0.0/32", "255.255.255.255/32", "192.168.0.0/29",
                  "100.64.0.0/16", "224.0.0.0/4", "10.250.0.0/20", "127.0.0.0/8"]
VALID_ADDRESSES = ["0.0.0.0", "255.255.255.255", "10.0.0.1", "10.0.0.0", "169.254.100.1", "169.254.100.127",
                   "169.254.100.128", "169.254.100.254", "169.254.100.255", "172.30.10.1", "172.30.10.255",
                   "10.250.0.11", "127.0.0.1", "10.0.0.10"]
VALID_INTERFACES = ["10.250.0.11/20", "10.0.0.21/24", "0.0.0.0/0", "255.255.255.255/32", "10.0.0.0/24",
                    "10.1.1.1/32", "169.254.100.200/24"]
VALID_LABELS = ["a", "a" * 63, "ovn-cluster", "ts", "default", "mgmt", "kube-system", "backbone-hq", "hq", "x-1",
                "public", "physnet1", "ic-router", "ovn-kubernetes", "0", "9a"]
BOUNDARY_INTS = [0, 1, 2, 3, 23, 30, 31, 32, 576, 1280, 1500, 4094, 4095, 6641, 6645, 9216, 29500, 31000, 32767,
                 65535, 4294967295]


def same_kind(draw: Callable[..., Any], value: Any, data: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return draw(st.sampled_from(BOUNDARY_INTS))
    if not isinstance(value, str):
        return value
    if re.fullmatch(r"[0-9.]+/[0-9]+", value):
        return draw(st.sampled_from(VALID_NETWORKS if value.split("/")[0].endswith(".0") else VALID_INTERFACES))
    if re.fullmatch(r"[0-9.]+", value) and value.count(".") == 3:
        return draw(st.sampled_from(VALID_ADDRESSES))
    return draw(st.sampled_from([*VALID_LABELS, *names_in(data)]))


@st.composite
def retyped_fabric(draw: Callable[..., Any]) -> str:
    """Each change keeps the value's type: mostly schema-valid, semantically odd fabrics."""
    data = load(SAMPLES[draw(st.sampled_from(sorted(SAMPLES)))])
    for _ in range(draw(st.integers(1, 5))):
        candidates = slots(data)
        container, key = draw(st.sampled_from(candidates))
        value = container[key]
        kind = draw(st.sampled_from(["same", "same", "same", "delete", "duplicate", "empty"]))
        if kind == "same":
            container[key] = same_kind(draw, value, data)
        elif kind == "delete" and (isinstance(container, list) or not isinstance(value, (str, int))):
            del container[key]
        elif kind == "duplicate" and isinstance(container, list):
            container.insert(key, copy.deepcopy(value))
        elif kind == "empty" and isinstance(value, list):
            container[key] = CommentedSeq()
    return dump(data)


@fuzz(150)
@given(retyped_fabric())
def test_retyped_samples_never_crash(text: str) -> None:
    check_fabric_text(text)


@pytest.mark.parametrize("site", sorted(SAMPLES))
def test_samples_round_trip_through_the_mutator_unchanged(site: str) -> None:
    """The mutator's load/dump is faithful, so a mutation is the only change."""
    assert load(dump(load(SAMPLES[site]))) == load(SAMPLES[site])
    assert check_fabric_text(dump(load(SAMPLES[site]))) in (0, 3)


def _is_address(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        ipaddress.IPv4Interface(value)
    except ValueError:
        return False
    return True


@pytest.mark.filterwarnings("error")  # ipaddress warns of a bool taken as an int; a later Python refuses it
@pytest.mark.parametrize("value", [5, True, 3.5], ids=["number", "boolean", "float"])
@pytest.mark.parametrize("site", sorted(SAMPLES))
def test_a_number_or_boolean_is_no_address(site: str, value: object) -> None:
    """Every address, network and interface address of a sample written as a YAML number or
    boolean is refused where it stands: pydantic alone takes `5` as 0.0.0.5 and `true` as 0.0.0.1."""
    rows = SAMPLES[site].split("\n")
    places = []  # (line, column, the address's text), each written as a plain scalar in the sample
    for container, key in slots(load(SAMPLES[site])):
        if _is_address(container[key]):
            line, col = container.lc.value(key) if isinstance(container, CommentedMap) else container.lc.item(key)
            assert rows[line][col:].startswith(container[key]), (line, col)
            places.append((line, col, container[key]))
    assert places, site
    written = json.dumps(value)  # 5, true, 3.5
    for line, col, address in sorted(places, reverse=True):
        rows[line] = rows[line][:col] + written + rows[line][col + len(address):]
    text = "\n".join(rows)
    lines = {line + 1 for line, _col, _address in places}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fabric.yaml"
        path.write_text(text, encoding="utf-8")
        code, _, err = run(["validate", str(path)])
    assert code == 1, err
    assert_located(text, err, path.as_posix())
    refused = {int(m["line"]) for line in err.splitlines()[:-1] if (m := DIAGNOSTIC.match(line))}
    assert lines <= refused, sorted(lines - refused)
    shown = "a boolean" if value is True else "a number"
    assert f"is {shown}, not an address: write it in dotted form, such as " in err


# --------------------------------------------------------------------------------------------
# Raw text

FRAGMENTS = [
    "\t", "\ufeff", "a: &a [1, 2]", "b: *a", "c: *missing", "<<: *a", "<<: [*a, *a]", "x: !!python/object:os.system {}",
    "x: !!python/name:os.system", "x: !!binary aGVsbG8=", "x: !!set {a, b}", "x: !!omap [a: 1]", "x: !custom y",
    "---", "...", "%YAML 1.1", "%TAG ! tag:example.com,2000:", "- item", "? complex", ": value", "[[[[[[[[", "]]]]",
    "{a: {b: {c: {d: {e: {}}}}}}", "k: " + "x" * 10000, "k: 1\nk: 2", "name: a\n  name: b", "'unterminated",
    '"\\x07\\u2028"', "&anchor", "*alias", "|", ">-", "# comment", "key:value", "- - - -", "k: 0x1F", "k: 1e400",
    "k: .nan", "k: -.inf", "k: 2001-12-14", "k: 12:30:00", "k: ~", "k: yes", "k: 0o17", "\x00", "\x85", "\u2029",
    "k: [" + "1, " * 500 + "1]", "  - &z {name: z}", "  - *z", "zones: &zs []", "ovnDeployments: *zs",
]


def splice(sample: str, fragments: list[str], positions: list[int]) -> str:
    lines = sample.split("\n")
    for fragment, position in zip(fragments, positions, strict=True):
        index = position % (len(lines) + 1)
        indent = re.match(r"^\s*", lines[index - 1] if index else "")
        prefix = indent.group(0) if indent else ""
        lines.insert(index, prefix + fragment)
    return "\n".join(lines)


@st.composite
def spliced_fabric(draw: Callable[..., Any]) -> str:
    sample = SAMPLES[draw(st.sampled_from(sorted(SAMPLES)))]
    count = draw(st.integers(1, 3))
    fragments = draw(st.lists(st.sampled_from(FRAGMENTS), min_size=count, max_size=count))
    positions = draw(st.lists(st.integers(0, 10_000), min_size=count, max_size=count))
    return splice(sample, fragments, positions)


YAMLISH = st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=30), max_size=12).map("\n".join)


@fuzz(100)
@given(st.one_of(spliced_fabric(), YAMLISH, st.text(max_size=200), st.binary(max_size=200)))
def test_raw_text_never_crashes(text: str | bytes) -> None:
    check_fabric_text(text)


@fuzz(60)
@given(st.one_of(spliced_fabric(), mutated_fabric()))
def test_json_and_github_formats_stay_well_formed(text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "fabric.yaml")
        path.write_text(text, encoding="utf-8")
        code, out, err = run(["validate", str(path), "--format", "json"])
        assert code in (0, 1), err
        report = json.loads(out)
        assert report["errors"] == sum(d["severity"] == "error" for d in report["diagnostics"])
        assert (code == 1) == (report["errors"] > 0)
        code, _, err = run(["validate", str(path), "--format", "github"])
        assert code in (0, 1)
        annotations = err.splitlines()[:-1]
        assert len(annotations) == len(report["diagnostics"])
        for line in annotations:
            assert GITHUB.match(line), line


# --------------------------------------------------------------------------------------------
# Regression tests: one per crash or malformed diagnostic found


LAB = SAMPLES["lab"]


def diagnostics_of(text: str) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "fabric.yaml")
        path.write_text(text, encoding="utf-8")
        code, _, err = run(["validate", str(path), "--format", "text"])
        assert code == 1, err
        assert_located(text, err, path.as_posix())
        prefix = f"{path.as_posix()}:"
        return [line.removeprefix(prefix) for line in err.split("\n")[:-2]]


def test_deep_flow_nesting_is_refused_where_it_gets_too_deep() -> None:
    # Past Python's recursion limit for ruamel's composer: once a RecursionError (exit 4).
    # The top-level mapping is the first level, so the 64th '[' is one too many.
    text = "apiVersion: " + "[" * 400 + "]" * 400 + "\n"
    assert diagnostics_of(text) == [
        f"1:76: apiVersion{'[0]' * 63}: YAML nesting is deeper than 64 levels; a fabric needs far fewer; "
        "close the open lists and mappings [FG001]"]


def test_very_deep_nesting_is_refused_at_the_first_level_too_deep() -> None:
    """2,000 levels took 11 s to refuse when the whole document was built first."""
    text = "apiVersion: " + "[" * 2000 + "]" * 2000 + "\n"
    assert diagnostics_of(text) == [
        f"1:76: apiVersion{'[0]' * 63}: YAML nesting is deeper than 64 levels; a fabric needs far fewer; "
        "close the open lists and mappings [FG001]"]


def test_deep_block_nesting_is_refused_at_the_deepest_key() -> None:
    text = "".join(f"{'  ' * i}k{i}:\n" for i in range(70)) + "  " * 70 + "leaf\n"
    [message] = diagnostics_of(text)
    assert message.startswith("65:129: k0.k1.") and ": YAML nesting is deeper than 64 levels;" in message


def test_alias_bomb_is_refused_without_expanding_it() -> None:
    """A billion laughs: nine levels of ten aliases each would expand to 10**9 strings."""
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 10)]
    text = "\n".join(lines) + "\n"
    [message] = diagnostics_of(text)
    # ruamel gives an alias the position of its anchor: `&l3` on line 4, used by l4 on line 5.
    assert message == ("4:5: l4[7]: aliases expand the document by more than 100000 nodes; a fabric shares "
                       "values a few times at most; write the values out instead of nesting aliases [FG001]")


def test_recursive_alias_is_a_diagnostic() -> None:
    # ruamel loads an alias inside its own anchor as null.
    text = LAB.replace("gatewayNodes: [hq-node-1, hq-node-2]", "gatewayNodes: &loop [*loop]")
    assert diagnostics_of(text) == ["39:19: zones[0].gatewayNodes[0]: input should be a valid string [FG003]"]


def test_anchors_aliases_and_merge_keys_mean_what_yaml_says() -> None:
    """Sharing values with anchors, aliases and `<<` renders exactly what writing them out does."""
    shared = ("    cluster:\n      podCIDR: 10.54.0.0/16\n      serviceCIDR: 10.55.0.0/16\n"
              "      primaryPodCIDR: 10.52.0.0/16\n")
    text = LAB.replace("    cluster:\n      podCIDR: 10.54.0.0/16        # same as hq: fine with explicit routes\n",
                       "    cluster: &cluster\n      podCIDR: 10.54.0.0/16\n", 1)
    text = text.replace(shared, "    cluster: *cluster\n", 1)  # edge
    text = text.replace("    cluster:\n      podCIDR: 10.56.0.0/16        # renumbered away from Canal's range\n"
                        "      serviceCIDR: 10.57.0.0/16\n      primaryPodCIDR: 10.52.0.0/16\n",
                        "    cluster:\n      <<: *cluster\n      podCIDR: 10.56.0.0/16\n"
                        "      serviceCIDR: 10.57.0.0/16\n", 1)
    assert text.count("*cluster") == 2, text
    assert build_text(text, "lab.yaml").files == build_text(LAB, "lab.yaml").files


def test_control_character_is_located() -> None:
    text = LAB.replace("name: lab ", "name: l\x07b ")
    assert diagnostics_of(text) == [
        "10:10: (document): character U+0007 is not allowed in YAML; remove it, or write it as the escape "
        "\\x07 inside a double-quoted string [FG001]"]


def test_invalid_utf8_is_located() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "fabric.yaml")
        path.write_bytes(b"apiVersion: fabricgen.io/v1alpha1\nkind: Fabric\nmetadata: {name: \xff}\n")
        code, _, err = run(["validate", str(path), "--format", "text"])
    assert code == 1
    assert err.splitlines()[0] == (f"{path.as_posix()}:3:18: (document): byte 0xff is not UTF-8; "
                                   "save the file as UTF-8 [FG000]")


def test_hostile_key_is_quoted_in_the_path() -> None:
    text = LAB.replace("kind: Fabric\n", 'kind: Fabric\n"bad\\nkey: x": 1\n')
    [message] = diagnostics_of(text)
    assert message.startswith("9:1: ['bad\\nkey: x']: unknown field 'bad\\nkey: x'; allowed fields: ")
    assert format_path(("zones", 0, "a b", "c")) == "zones[0]['a b'].c"


def test_non_string_key_names_its_mapping() -> None:
    text = LAB.replace("  name: lab ", "  7: x\n  name: lab ")
    assert diagnostics_of(text) == [
        "10:3: metadata: key 7 is not a field name: every key of a fabric is a string such as 'name'; "
        "fix or remove it [FG003]"]


TAGGED = [
    ("!!python/object:os.system {}", "!!python/object:os.system"), ("!!binary bGFi", "!!binary"),
    ("!!str lab", "!!str"), ("!custom lab", "!custom"), ("!!set {lab}", "!!set"),
    # These reached a constructor before they were refused: ValueError, KeyError, AttributeError (exit 4).
    ("!!float lab", "!!float"), ("!!int lab", "!!int"), ("!!bool lab", "!!bool"), ("!!omap lab", "!!omap"),
    ("!!set lab", "!!set"), ("!!timestamp lab", "!!timestamp"), ("!!map lab", "!!map"),
    ("!!null lab", "!!null"), ("! lab", "!"), ("!<tag:yaml.org,2002:str> lab", "!!str"),
]


@pytest.mark.parametrize(("value", "tag"), TAGGED)
def test_explicit_tags_are_refused(value: str, tag: str) -> None:
    text = LAB.replace("  name: lab ", f"  name: {value} ")
    assert diagnostics_of(text) == [
        f"10:9: metadata.name: explicit YAML tag {tag} is not supported in a fabric; remove it "
        "(quote the value if it must be a string) [FG001]"]


def test_a_null_tag_does_not_drop_a_value() -> None:
    """`!!null` made the transit address null: the zone validated without one."""
    text = LAB.replace("transitAddress: 169.254.100.71", "transitAddress: !!null 169.254.100.71")
    assert diagnostics_of(text) == [
        "42:21: zones[0].transitAddress: explicit YAML tag !!null is not supported in a fabric; remove it "
        "(quote the value if it must be a string) [FG001]"]


@pytest.mark.parametrize("command", [["render", "-o", "{out}"], ["validate"], ["diff", "--no-verify"]])
def test_tagged_fabrics_never_crash_a_command(tmp_path: Path, command: list[str]) -> None:
    for value, _tag in TAGGED:
        path = tmp_path / "fabric.yaml"
        path.write_text(LAB.replace("  name: lab ", f"  name: {value} "), encoding="utf-8")
        args = [a.replace("{out}", str(tmp_path / "out")) for a in command]
        code, _, err = run([*args[:1], str(path), *args[1:]])
        assert code in (1, 2) and "internal error" not in err and "Traceback" not in err, (value, err)
        assert not (tmp_path / "out").exists()


@pytest.mark.lab
def test_a_tagged_inline_fabric_comes_back_as_a_result_of_the_krm_function() -> None:
    inline = LAB.replace("  name: lab ", "  name: !!float lab ").replace("\n", "\n      ")
    stdin = ("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n"
             "  apiVersion: fabricgen.io/v1alpha1\n  kind: FabricGenerator\n  metadata: {name: t}\n"
             f"  spec:\n    zone: hq\n    inline: |\n      {inline}\n")
    done = subprocess.run([sys.executable, "-m", "fabricgen", "krm"], input=stdin, capture_output=True, text=True,
                          check=False)
    assert done.returncode == 1 and "internal error" not in done.stderr
    assert "explicit YAML tag !!float is not supported" in done.stdout


def test_long_values_are_cut_short_in_messages() -> None:
    text = LAB.replace("kind: Fabric", f"kind: {'X' * 5000}")
    assert diagnostics_of(text) == [
        f"8:7: kind: '{'X' * 79}... (5002 characters) is not allowed; expected 'Fabric' [FG003]"]


def test_pattern_messages_fit_the_field() -> None:
    text = SAMPLES["openstack-k8s"]
    assert "apiServer: https://" in text
    [message] = diagnostics_of(text.replace("apiServer: https://", "apiServer: ftp://", 1))
    assert "apiServer: 'ftp://10.20.1.5:6443' is not a URL of https:// [FG003]" in message
    assert "is not a valid name" not in message


HOSTILE_NAME = "a::b,c%0A%\nd\u2028e\x1b[31m"


def test_json_report_keeps_hostile_messages_intact() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "fabric.yaml")
        path.write_text(LAB.replace("  name: lab ", f"  name: {json.dumps(HOSTILE_NAME)} "), encoding="utf-8")
        code, out, _ = run(["validate", str(path), "--format", "json"])
    assert code == 1
    [diagnostic] = json.loads(out)["diagnostics"]
    assert diagnostic["message"].startswith(repr(HOSTILE_NAME) + " is not a valid name")
    assert (diagnostic["line"], diagnostic["column"], diagnostic["path"]) == (10, 9, "metadata.name")


def test_github_annotations_escape_hostile_messages_and_files() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "a,b:c%.yaml")
        text = LAB.replace("kind: Fabric\n", f"kind: Fabric\n{json.dumps(HOSTILE_NAME)}: 1\n")
        path.write_text(text, encoding="utf-8")
        code, _, err = run(["validate", str(path), "--format", "github"])
    assert code == 1
    [annotation, summary] = err.split("\n")[:-1]
    assert summary == "fabricgen: 1 error(s), 0 warning(s); nothing written"
    escaped_file = path.as_posix().replace("%", "%25").replace(":", "%3A").replace(",", "%2C")
    assert annotation.startswith(f"::error file={escaped_file},line=9,col=1,title=fabricgen FG003::")
    message = annotation.split("::", 2)[2]
    assert "\r" not in message and "\u2028" not in message and "\x1b" not in message
    assert message.startswith("[" + repr(HOSTILE_NAME).replace("%", "%25") + "]: unknown field ")


@pytest.mark.parametrize(("old", "new", "expected"), [
    # Rendering computed the default gateway 255.255.255.255 + 1 (AddressValueError, exit 4).
    ("{name: prod-db, cidr: 10.100.1.0/24}", "{name: prod-db, cidr: 255.255.255.255/32}",
     "61:35: zones[0].vpcs[0].subnets[0].cidr: 255.255.255.255/32 is too small"),
    # Rendered a gateway outside its own subnet.
    ("cidr: 172.30.10.0/24\n      gateway: 172.30.10.1", "cidr: 10.9.9.9/32",
     "49:13: zones[0].backbone.cidr: 10.9.9.9/32 is too small"),
    # FG208 computed the lower half of a /32 transit subnet as 0.0.0.0 - 1 (exit 4).
    ("subnet: 169.254.100.0/24", "subnet: 0.0.0.0/32",
     "22:13: interconnection.transitSwitch.subnet: 0.0.0.0/32 is too small"),
])
def test_subnets_without_host_addresses_are_refused(old: str, new: str, expected: str) -> None:
    assert old in LAB
    text = LAB.replace(old, new, 1).replace("transitAddress: 169.254.100.71", "transitAddress: 0.0.0.0")
    messages = diagnostics_of(text)
    assert [m for m in messages if m.startswith(expected)] == [
        expected + " for a subnet: it leaves no host address for the gateway and the ports on it; use a /30 or larger "
        "[FG003]"], messages


def test_deployment_transit_subnet_without_hosts_is_refused() -> None:
    # The FG7xx upper-half check computed 0.0.0.0/32's broadcast - 1 (exit 4).
    text = SAMPLES["openstack-k8s"].replace(
        "interconnection:\n", "interconnection:\n  transitSwitch: {subnet: 0.0.0.0/32}\n", 1)
    assert any("interconnection.transitSwitch.subnet: 0.0.0.0/32 is too small for a subnet" in m
               for m in diagnostics_of(text))


def test_a_yaml_version_the_reader_does_not_know_is_a_located_error() -> None:
    """`%YAML 2.0` before a second document reached ruamel's resolver: KeyError (exit 4)."""
    text = "%YAML 1.2\n---\n%YAML 2.0\n---\n" + LAB
    assert diagnostics_of(text) == [
        "3:1: (document): YAML syntax error: found incompatible YAML document (version 1.* is required); fix the "
        "syntax at this position [FG001]"]


@pytest.mark.lab
def test_an_anchor_defined_twice_is_refused_without_a_python_warning() -> None:
    """ruamel only warns (ReusedAnchorWarning, on stderr with a site-packages path); an alias would
    mean whichever anchor came last."""
    text = LAB.replace("transitAddress: 169.254.100.71", "transitAddress: &a 169.254.100.71")
    text = text.replace("transitAddress: 169.254.100.23", "transitAddress: &a 169.254.100.23")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "fabric.yaml")
        path.write_text(text, encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "fabricgen", "validate", str(path)], capture_output=True,
                              text=True, check=False)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"{path}:77:21: zones[1].transitAddress: anchor &a is defined twice, so an alias *a would mean the later "
        "one; give each anchor its own name [FG001]", "fabricgen: 1 error(s), 0 warning(s); nothing written"]


def test_deep_nesting_is_refused_without_reading_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    """The depth is checked on the parser's events as the loader reads them, which stops at the
    first level too deep: of a document nested 100,000 levels only about MAX_DEPTH levels of
    events are read, and nothing is constructed (what took 11 s for 2,000 levels)."""
    from ruamel.yaml.constructor import RoundTripConstructor

    from fabricgen.source import reader, yaml_checks

    pulled = {"events": 0}
    see = yaml_checks.EventCheck.see

    def counting(self: Any, event: Any) -> Any:
        pulled["events"] += 1
        return see(self, event)

    constructed: list[Any] = []
    monkeypatch.setattr(yaml_checks.EventCheck, "see", counting)
    monkeypatch.setattr(RoundTripConstructor, "construct_document", lambda _self, node: constructed.append(node))
    depth = 100_000
    source, problems = reader.parse("apiVersion: " + "[" * depth + "]" * depth + "\n", "deep.yaml")
    assert source is None and "YAML nesting is deeper than 64 levels" in problems[0].message
    assert constructed == []
    assert 0 < pulled["events"] < 4 * yaml_checks.MAX_DEPTH
