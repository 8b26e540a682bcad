"""Mutations of a sample fabric's text, as a hostile or careless user makes them.

The text is composed with PyYAML (nodes keep their character positions) and edited at those
positions, so comments, layout and every other byte stay as they were, and a mutation can be
anything a file can hold: a scalar replaced by a hostile value (written plain, quoted,
escaped or raw), a key or list item deleted or duplicated, an explicit tag, an anchor and
alias, deep nesting, a billion laughs, CRLF, a byte-order mark, `%YAML`, `---`, `...`, tabs,
Unicode line separators, bytes that are not UTF-8. Each mutant is one to three mutations
drawn from a `random.Random` seeded with the run's seed and the mutant's number, so any
mutant can be made again on its own.
"""

from __future__ import annotations

import ipaddress
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import yaml

HUGE = ["99999999999999999999", "-99999999999999999999", "9223372036854775807", "9223372036854775808",
        "-9223372036854775809", "4294967296", "2147483648", "2147483647", "-2147483649", "1e309", "-1e309",
        "1" + "0" * 400]
NUMBERS = ["0", "-0", "-1", "1", "65535", "65536", "4094", "4095", "1500", "68", "67", "9000", "9217",
           "1.5", "0.1", "-0.0", "1e3", "0x10", "0o17", "017", "1_000", "+1", ".5", "NaN", ".nan", ".inf", "-.inf"]
BOOLEANS = ["true", "false", "True", "FALSE", "yes", "no", "on", "off", "y", "n", "Y", "N"]
NULLS = ["null", "~", "Null", "NULL", ""]
SPECIAL_CHARACTERS = ["\u2028", "\u2029", "\x85", "\x00", "\x07", "\x08", "\x0b", "\x0c", "\x1b", "\x7f", "\x9b",
                      "\r", "\n", "\t", "\u202e", "\u202d", "\u2066", "\u2067", "\u2069", "\u200b", "\u200f",
                      "\ufeff", "\ufffe", "\ud800", "\U0001f600", "\u0301", "\uff0e", "\u2215"]
SHELL = ["$(id)", "`id`", "${HOME}", "${IFS}", "$HOME", "$$", "$1", "; touch /tmp/fabricgen-pwned;",
         "| sh", "&& true", "|| true", "& sleep 1", "> /tmp/fabricgen-pwned", "< /etc/passwd", "$((1+1))",
         "\\$x", "'\"'\"'", "\\", "\\\\", "*", "?", "[a-z]", "~root", "!!", "#", "-n", "--help", "-e 'x'",
         "a\nb", "x' ; echo pwned; '"]
FORMAT = ["%s", "%n", "%(x)s", "%%", "%", "{}", "{0}", "{x}", "${x}", "$x", "%x%x%x", "\\u0000", "\\n"]
QUOTES = ["'", '"', "''", '""', "'a'", '"a"', "\\'", '\\"', "`", "\u2018", "\u201c"]
YAML_SPECIAL = ["---", "...", "- x", "? x", ": x", "x: y", "{a: b}", "[a, b]", "&a", "*a", "!tag", "!!str",
                "<<", "=", "|", ">", "@x", "`x", "%YAML 1.2", "# c", "x #c", "x: ", "a, b", "[", "]", "{", "}",
                "'unterminated", '"unterminated', "\\x41", "-", "--", "-1-", ".", "..", " ", "  x  "]
ADDRESSES = ["0.0.0.0", "0.0.0.0/0", "255.255.255.255", "255.255.255.255/32", "169.254.100.0", "169.254.100.255",
             "169.254.100.0/24", "169.254.100.255/24", "10.0.0.1/0", "10.0.0.1/33", "10.0.0.1/-1", "10.0.0.0/8",
             "10.0.0.256", "10.0.0", "010.000.000.001", "1.2.3.4/24", "::", "::1", "fe80::1%eth0", "2001:db8::/32",
             "127.0.0.1", "224.0.0.1", "0x7f000001", "2130706433", "1.2.3.4 ", " 1.2.3.4", "1.2.3.4\n"]
NAMES = ["a" * 63, "a" * 64, "a" * 253, "A", "a_b", "a.b", "-a", "a-", "a--b", "0", "ü", "名前", "kube-system",
         "ovn-default", "join", "ovn-cluster", "external", "ts", "lo", "br-int", "ovs-system", "genev_sys_6081",
         "default", "..", ".", "/", "a/b", "../../etc", "CON", "nul", "con.yaml", "_host", "_delivery", "stage-0",
         "fabric.yaml", "rendered", ".git", "node_modules"]
PATHS = ["/etc/shadow", "../../etc/passwd", "/dev/zero", "/proc/self/environ", "C:\\x", "~/x", "//x", "/", ""]
LONG = ["a" * 5000, "x" * 70000, "\u2028" * 100, "é" * 3000, ("ab" * 16) + "\n" + ("cd" * 16)]

TAGS = ["!!float", "!!int", "!!bool", "!!null", "!!str", "!!binary", "!!timestamp", "!!omap", "!!pairs", "!!set",
        "!!seq", "!!map", "!!merge", "!!value", "!!python/object/apply:os.system", "!!python/name:os.system", "!",
        "!local", "!<tag:yaml.org,2002:str>", "!<tag:yaml.org,2002:omap>", "!<!>", "!<tag:example.com,2000:x>",
        "!e!x"]


@dataclass
class Mutant:
    data: bytes
    notes: list[str] = field(default_factory=list)


@dataclass
class _Site:
    node: yaml.Node
    parent: yaml.Node | None
    key: yaml.Node | None  # the key, when the node is a mapping value
    is_key: bool
    depth: int


def _sites(text: str) -> list[_Site]:
    # libyaml is ten times faster; its positions are the text's where every character is ASCII.
    loader = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) and text.isascii() else yaml.SafeLoader
    root = yaml.compose(text, Loader=loader)
    found: list[_Site] = []
    seen: set[int] = set()
    pending: list[tuple[yaml.Node, yaml.Node | None, yaml.Node | None, bool, int]] = [(root, None, None, False, 0)] \
        if root is not None else []
    while pending:
        node, parent, key, is_key, depth = pending.pop()
        if id(node) in seen:
            continue  # an alias: the anchor's text is where the node is written
        seen.add(id(node))
        found.append(_Site(node, parent, key, is_key, depth))
        if isinstance(node, yaml.MappingNode):
            for k, v in reversed(node.value):
                pending.append((v, node, k, False, depth + 1))
                pending.append((k, node, None, True, depth + 1))
        elif isinstance(node, yaml.SequenceNode):
            for item in reversed(node.value):
                pending.append((item, node, None, False, depth + 1))
    return found


def _start(node: yaml.Node) -> int:
    return int(node.start_mark.index)


def _end(text: str, node: yaml.Node) -> int:
    """Where the node's own text ends (a block collection's end mark is where the next token
    starts: trailing blanks and line breaks are not the node's)."""
    end = int(node.end_mark.index)
    while end > _start(node) and text[end - 1] in " \t\r\n":
        end -= 1
    return end


def _line_indent(text: str, index: int) -> int:
    line_start = text.rfind("\n", 0, index) + 1
    line = text[line_start:index]
    return len(line) - len(line.lstrip(" "))


def _column(text: str, index: int) -> int:
    return index - (text.rfind("\n", 0, index) + 1)


# --- values --------------------------------------------------------------------------------------

def _near_misses(value: str) -> list[str]:
    """Values close to `value` that a fabric may still accept: they reach the output."""
    out: list[str] = []
    if re.fullmatch(r"-?\d+", value):
        n = int(value)
        out += [str(n + 1), str(n - 1), str(n * 2), str(-n), str(n + 2 ** 31), str(n + 2 ** 32), f"{n}.0", f"0{n}",
                str(n // 2), "0"]
    m = re.fullmatch(r"(\d+)\.(\d+)\.(\d+)\.(\d+)(?:/(\d+))?", value)
    if m:
        octets, prefix = [int(x) for x in m.groups()[:4]], m.group(5)
        for i in (3, 2, 1, 0):
            for delta in (1, -1, 128):
                tweaked = list(octets)
                tweaked[i] = (tweaked[i] + delta) % 256
                out.append(".".join(map(str, tweaked)) + (f"/{prefix}" if prefix else ""))
        base = ".".join(map(str, octets))
        out += [f"{base}/{p}" for p in (0, 1, 8, 16, 23, 24, 25, 30, 31, 32, 33)]
        if prefix:
            net = ipaddress.ip_network(f"{base}/{prefix}", strict=False)
            out += [str(net.network_address), str(net.broadcast_address), f"{net.broadcast_address}/{prefix}",
                    f"{net.network_address + 1}/{prefix}", base]
        out += [base + "\n", " " + base, base + " "]
    if value in ("true", "false"):
        out += ["false" if value == "true" else "true", value.capitalize(), "yes", "1"]
    if re.fullmatch(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?", value):
        out += [value + "-x", value + "2", "x" + value, value.upper(), value + ".", value + "-", "-" + value,
                (value * 70)[:63], (value * 70)[:64], value + "\n", value + " ", value.replace("-", "_"),
                value + ".example", value + "/x"]
    if value.startswith("/"):
        out += [value + suffix for suffix in ("$(id)", ";x", "#x", '"q"', "'q'", "\\", " x", "%(x)s", "${x}", "\t")]
    if value.startswith(("http://", "https://")):
        out += [value + "/$(id)", value.replace("https", "http"), value + "#x;y", value + "\n", "https://[::1]:6443",
                "https://x:99999", "https://user:pass@x:6443"]
    return out


def _hostile(rng: random.Random, original: str) -> str:
    pools: list[list[str]] = [HUGE, NUMBERS, BOOLEANS, NULLS, SPECIAL_CHARACTERS, SHELL, FORMAT, QUOTES, YAML_SPECIAL,
                              ADDRESSES, NAMES, PATHS, LONG]
    value = rng.choice(rng.choice(pools))
    how = rng.random()
    if how < 0.25 and original:
        return original + value  # a value that still starts like the original
    if how < 0.35 and original:
        return value + original
    if how < 0.42 and original:
        cut = rng.randrange(len(original) + 1)
        return original[:cut] + value + original[cut:]
    return value


def _written(rng: random.Random, value: str, text: str, site: _Site) -> str:
    """`value` as one of the ways a YAML file can spell it (or cannot: raw and invalid too)."""
    style = rng.random()
    in_flow = site.parent is not None and getattr(site.parent, "flow_style", False)
    if style < 0.30:
        return value  # plain: may be read as another type, or not parse
    if style < 0.50:
        return "'" + value.replace("'", "''") + "'"
    if style < 0.75:
        return json.dumps(value, ensure_ascii=rng.random() < 0.5)
    if style < 0.85:
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'  # raw characters, quoted
    if style < 0.95 and not in_flow and not site.is_key:
        indent = " " * (_line_indent(text, _start(site.node)) + 2)
        header = rng.choice(["|", "|-", "|+", ">", ">-", "|2"])
        body = "\n".join(indent + line for line in (value.split("\n") or [""]))
        return f"{header}\n{body}"
    return value.replace("\n", " ")


# --- mutations -------------------------------------------------------------------------------------
# Each takes (rng, text) and returns (new text, note), or None when it does not apply.

Mutation = Callable[[random.Random, str], tuple[str, str] | None]


def _scalars(sites: list[_Site], keys: bool) -> list[_Site]:
    return [s for s in sites if isinstance(s.node, yaml.ScalarNode) and s.is_key == keys]


def replace_scalar(rng: random.Random, text: str, *, near: bool) -> tuple[str, str] | None:
    sites = _sites(text)
    choices = _scalars(sites, keys=rng.random() < 0.12) or _scalars(sites, keys=False)
    if not choices:
        return None
    site = rng.choice(choices)
    original = str(site.node.value)
    candidates = _near_misses(original) if near else []
    value = rng.choice(candidates) if candidates else _hostile(rng, original)
    start, end = _start(site.node), _end(text, site.node)
    written = _written(rng, value, text, site) if not (near and rng.random() < 0.6 and "\n" not in value
                                                       and value.strip() == value and value) else value
    where = f"line {site.node.start_mark.line + 1}"
    what = "key" if site.is_key else "scalar"
    return text[:start] + written + text[end:], f"{what} {original[:40]!r} at {where} -> {written[:80]!r}"


def _pairs(sites: list[_Site]) -> list[tuple[yaml.Node, yaml.Node, yaml.Node]]:
    """(mapping, key, value) of every pair."""
    return [(s.node, k, v) for s in sites if isinstance(s.node, yaml.MappingNode) for k, v in s.node.value]


def _items(sites: list[_Site]) -> list[tuple[yaml.Node, yaml.Node]]:
    return [(s.node, item) for s in sites if isinstance(s.node, yaml.SequenceNode) for item in s.node.value]


def _dash(text: str, item: yaml.Node) -> int | None:
    """The `-` of a block sequence item."""
    i = _start(item) - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    if i >= 0 and text[i] == "-":
        return i
    while i >= 0 and text[i] in " \t\r\n":  # the item starts on the line after its dash
        i -= 1
    return i if i >= 0 and text[i] == "-" else None


def delete_entry(rng: random.Random, text: str) -> tuple[str, str] | None:
    sites = _sites(text)
    if rng.random() < 0.5:
        pairs = _pairs(sites)
        if not pairs:
            return None
        mapping, key, value = rng.choice(pairs)
        start, end = _start(key), _end(text, value)
        if mapping.flow_style:
            while end < len(text) and text[end] in " ,":
                end += 1
        return text[:start] + text[end:], f"key {key.value!r} at line {key.start_mark.line + 1} deleted"
    items = _items(sites)
    if not items:
        return None
    seq, item = rng.choice(items)
    end = _end(text, item)
    if seq.flow_style:
        start = _start(item)
        while end < len(text) and text[end] in " ,":
            end += 1
    else:
        dash = _dash(text, item)
        if dash is None:
            return None
        start = dash
    return text[:start] + text[end:], f"list item at line {item.start_mark.line + 1} deleted"


def duplicate_entry(rng: random.Random, text: str) -> tuple[str, str] | None:
    sites = _sites(text)
    if rng.random() < 0.5:
        pairs = _pairs(sites)
        if not pairs:
            return None
        mapping, key, value = rng.choice(pairs)
        start, end = _start(key), _end(text, value)
        copy = text[start:end]
        insert = ", " + copy if mapping.flow_style else "\n" + " " * _column(text, start) + copy
        return text[:end] + insert + text[end:], f"key {key.value!r} at line {key.start_mark.line + 1} duplicated"
    items = _items(sites)
    if not items:
        return None
    seq, item = rng.choice(items)
    end = _end(text, item)
    if seq.flow_style:
        copy = text[_start(item):end]
        return text[:end] + ", " + copy + text[end:], f"flow item at line {item.start_mark.line + 1} duplicated"
    dash = _dash(text, item)
    if dash is None:
        return None
    copy = text[dash:end]
    return (text[:end] + "\n" + " " * _column(text, dash) + copy + text[end:],
            f"list item at line {item.start_mark.line + 1} duplicated")


def _property_position(text: str, site: _Site) -> int | None:
    """Where an anchor or a tag of the node goes: before a scalar or a flow collection, after the
    `:` of its key for a block collection (the first key of a block mapping would take it)."""
    node = site.node
    if isinstance(node, yaml.ScalarNode) or getattr(node, "flow_style", False):
        return _start(node)
    if site.key is not None:
        colon = text.find(":", _end(text, site.key))
        return colon + 1 if colon != -1 else None
    return None


def add_tag(rng: random.Random, text: str) -> tuple[str, str] | None:
    sites = [s for s in _sites(text) if s.parent is not None]
    if not sites:
        return None
    site = rng.choice(sites)
    at = _property_position(text, site)
    if at is None:
        return None
    tag = rng.choice(TAGS)
    spaced = f" {tag}" if text[at - 1: at] == ":" else f"{tag} "
    return text[:at] + spaced + text[at:], f"tag {tag} at line {site.node.start_mark.line + 1}"


def add_alias(rng: random.Random, text: str) -> tuple[str, str] | None:
    sites = [s for s in _sites(text) if s.parent is not None and not s.is_key]
    scalars = [s for s in sites if isinstance(s.node, yaml.ScalarNode)]
    if not scalars:
        return None
    kind = rng.random()
    name = rng.choice(["a", "x1", "hq", "zone", "é", "a" * 200])
    if kind < 0.15:  # an alias of an anchor that does not exist
        target = rng.choice(scalars)
        start, end = _start(target.node), _end(text, target.node)
        where = target.node.start_mark.line + 1
        return text[:start] + f"*{name}" + text[end:], f"undefined alias *{name} at line {where}"
    anchored = rng.choice(sites)
    at = _property_position(text, anchored)
    if at is None:
        return None
    spaced = f" &{name}" if text[at - 1: at] == ":" else f"&{name} "
    later = [s for s in scalars if _start(s.node) > _end(text, anchored.node)]
    if kind < 0.25 or not later:  # an anchor alone, or a second anchor of the same name
        return text[:at] + spaced + text[at:], f"anchor &{name} at line {anchored.node.start_mark.line + 1}"
    target = rng.choice(later)
    start, end = _start(target.node), _end(text, target.node)
    edited = text[:start] + f"*{name}" + text[end:]
    lines = anchored.node.start_mark.line + 1, target.node.start_mark.line + 1
    return edited[:at] + spaced + edited[at:], f"anchor &{name} at line {lines[0]}, alias at line {lines[1]}"


def add_merge_key(rng: random.Random, text: str) -> tuple[str, str] | None:
    sites = _sites(text)
    block_maps = [s for s in sites if isinstance(s.node, yaml.MappingNode) and not s.node.flow_style and s.node.value]
    if len(block_maps) < 2:
        return None
    source, target = rng.sample(block_maps, 2)
    at = _property_position(text, source)
    if at is None:
        return None
    first_key = target.node.value[0][0]
    column = _column(text, _start(first_key))
    insert_at = _start(first_key)
    merge = "<<: *m\n" + " " * column
    if insert_at < at:
        text = text[:at] + " &m" + text[at:]
        text = text[:insert_at] + merge + text[insert_at:]
        return text, "merge key of a later mapping (alias before its anchor)"
    text = text[:insert_at] + merge + text[insert_at:]
    text = text[:at] + " &m" + text[at:]
    return text, f"merge key <<: *m at line {first_key.start_mark.line + 1}"


def deep_nesting(rng: random.Random, text: str) -> tuple[str, str] | None:
    scalars = _scalars(_sites(text), keys=False)
    if not scalars:
        return None
    site = rng.choice(scalars)
    depth = rng.choice([10, 62, 63, 64, 65, 66, 100, 1000, 5000, 50000])
    shape = rng.random()
    if shape < 0.4:
        value = "[" * depth + "]" * depth
    elif shape < 0.8:
        value = "{a: " * depth + "x" + "}" * depth
    else:
        indent = _line_indent(text, _start(site.node))
        value = "".join("\n" + " " * (indent + 2 * (i + 1)) + "a:" for i in range(min(depth, 300))) + " x"
    start, end = _start(site.node), _end(text, site.node)
    return text[:start] + value + text[end:], f"nesting {depth} levels at line {site.node.start_mark.line + 1}"


def billion_laughs(rng: random.Random, text: str) -> tuple[str, str] | None:
    scalars = _scalars(_sites(text), keys=False)
    if not scalars:
        return None
    site = rng.choice(scalars)
    levels = rng.choice([3, 5, 9])
    parts = ["&l0 [" + ", ".join(["lol"] * 10) + "]"]
    parts += [f"&l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, levels)]
    value = "[" + ", ".join(parts) + "]"
    start, end = _start(site.node), _end(text, site.node)
    return text[:start] + value + text[end:], f"billion laughs (10^{levels}) at line {site.node.start_mark.line + 1}"


def document_level(rng: random.Random, text: str) -> tuple[str, str] | None:
    choice = rng.randrange(17)
    if choice == 0:
        return text.replace("\r\n", "\n").replace("\n", "\r\n"), "CRLF line breaks"
    if choice == 1:
        return text.replace("\n", "\r"), "CR line breaks"
    if choice == 2:
        return "\ufeff" + text, "byte-order mark"
    if choice == 3:
        return "%YAML 1.2\n---\n" + text, "%YAML 1.2 and ---"
    if choice == 4:
        return "%YAML 1.1\n---\n" + text, "%YAML 1.1 and ---"
    if choice == 5:
        return rng.choice(["%YAML 2.0\n---\n", "%YAML 1.2\n%YAML 1.2\n---\n", "%FOO bar\n---\n",
                           "%TAG !e! tag:example.com,2000:\n---\n", "%TAG ! !\n---\n"]) + text, "odd directive"
    if choice == 6:
        return "---\n" + text + "...\n", "--- and ..."
    if choice == 7:
        return text + rng.choice(["---\n", "---\n" + text, "...\n---\n{}\n", "--- !!str x\n"]), "a second document"
    if choice == 8:
        lines = text.split("\n")
        i = rng.randrange(len(lines))
        lines[i] = re.sub(r"^( {2})", "\t", lines[i])
        return "\n".join(lines), f"a tab indenting line {i + 1}"
    if choice == 9:
        return text.replace("\n", rng.choice(["\u2028", "\u2029", "\x85"])), "Unicode line separators as line breaks"
    if choice == 10:
        return text.rstrip("\n"), "no final line break"
    if choice == 11:
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice(SPECIAL_CHARACTERS) + text[at:], f"a special character at offset {at}"
    if choice == 12:
        return text + "# " + "x" * rng.choice([4 * 1024 * 1024 - len(text) - 3, 4 * 1024 * 1024]) + "\n", \
            "a comment up to or over 4 MiB"
    if choice == 13:
        return text.replace("  ", "    "), "indentation doubled"
    if choice == 14:
        return re.sub(r"#[^\n]*", "", text), "comments removed"
    if choice == 15:
        return text + "\n" * rng.choice([1, 1000]) + rng.choice(["", "# end", " ", "\t"]), "trailing lines"
    return "", "empty file"


def _bytes_level(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    choice = rng.randrange(7)
    at = rng.randrange(len(data) + 1)
    if choice == 0:
        bad = rng.choice([b"\xff", b"\xfe", b"\xc3\x28", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80"])
        return data[:at] + bad + data[at:], f"bytes {bad!r} (not UTF-8) at offset {at}"
    if choice == 1:
        return data.decode("utf-8", "replace").encode("utf-16"), "UTF-16 with a byte-order mark"
    if choice == 2:
        return data.decode("utf-8", "replace").encode("latin-1", "replace"), "Latin-1"
    if choice == 3:
        return data[:at] + b"\x00" + data[at:], f"a NUL byte at offset {at}"
    if choice == 4:
        return data[:at], f"cut at byte {at}"
    if choice == 5:
        return data.decode("utf-8", "replace").encode("utf-32"), "UTF-32"
    return b"\xef\xbb\xbf" + data, "a UTF-8 byte-order mark as bytes"


STRUCTURAL: list[tuple[int, Mutation]] = [
    (30, lambda r, t: replace_scalar(r, t, near=True)),
    (26, lambda r, t: replace_scalar(r, t, near=False)),
    (8, delete_entry),
    (6, duplicate_entry),
    (8, add_tag),
    (5, add_alias),
    (2, add_merge_key),
    (3, deep_nesting),
    (1, billion_laughs),
]


def mutant(sample: str, seed: int, number: int) -> Mutant:
    """Mutant `number` of the sample text, the same for the same seed and number."""
    rng = random.Random(f"{seed}/{number}")
    text = sample
    notes: list[str] = []
    count = rng.choices([1, 2, 3], weights=[70, 20, 10])[0]
    weights = [w for w, _ in STRUCTURAL] + [8]
    for _ in range(count):
        pick = rng.choices(range(len(weights)), weights=weights)[0]
        if len(text) > 1024 * 1024:
            break  # a file past the size limit is refused before it is parsed: mutating it on is no use
        try:
            done = document_level(rng, text) if pick == len(STRUCTURAL) else STRUCTURAL[pick][1](rng, text)
        except yaml.YAMLError:
            done = document_level(rng, text)  # no longer YAML PyYAML composes: only the document changes
        except (ValueError, IndexError, RecursionError):
            done = None
        if done is not None:
            text, note = done
            notes.append(note)
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.04:
        data, note = _bytes_level(rng, data)
        notes.append(note)
    if not notes:
        notes.append("unchanged (no mutation applied)")
    return Mutant(data, notes)
