"""Family `live-data`: what a broken or hostile cluster feeds in, through the commands that read
the live side: `import` (kubectl captures, `ovn-ic-sbctl show`), `status --from` (a capture
attached to a ticket: `cluster/status`, `ovn-ic-sbctl show`, kubectl errors) and `transit`.

The inputs are the lab's captures (tests/data/import/lab/), mutated with a seed: a name with
terminal controls, bidirectional or line separators, or a token; a number no Kubernetes object
holds (5,000 digits, NaN, 1e999); nesting thousands deep; a truncated file, an empty List, a
`null`. A case holds when:
- the command ends with a documented code, never 4, never a traceback, within its time;
- nothing it prints holds a raw control, bidirectional or line-separator character, or the token;
- `import`: it leaves no temporary file, and a fabric it writes holds none of them either and
  is read by `fabricgen validate` (valid or located errors);
- no reading costs more than 1 GiB.
"""

from __future__ import annotations

import json
import random
import re
from functools import partial
from pathlib import Path

from hostile.harness import Case, Context, Workdir

FAMILY = "live-data"
TOKEN = "Zk3Lq8Rt5Wv2Xy7Bn4Mc9Pd6Hf1Jg0Sa"
HOSTILE = ["\x1b[31mRED\x1b]0;owned\x07\x1b[2J", "a\u202eevil", "a\u2028b", "x\x85y", "\x00nul", "a\nb: c",
           f"Bearer {TOKEN}", "\u2066iso\u2069", "\x9b31m", "'; rm -rf / #"]
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
MAX_RSS_KIB = 1024 * 1024
LAB = ("hq.yaml", "ai.json", "edge.yaml", "dr.json")


def cases(ctx: Context, count: int) -> list[Case]:
    out = [Case(FAMILY, f"import-{n:04d}", partial(_import, ctx, n), quick=n < 12) for n in range(count)]
    out += [Case(FAMILY, f"status-from-{n:04d}", partial(_status_from, ctx, n), quick=n < 4)
            for n in range(max(count // 4, 4))]
    out += [Case(FAMILY, f"transit-{n:04d}", partial(_transit, ctx, n), quick=n < 4) for n in range(max(count // 4, 4))]
    return out


def _data(ctx: Context) -> Path:
    return ctx.repo / "tests" / "data" / "import" / "lab"


def _hostile_json(rng: random.Random, text: str) -> str:
    """One mutation of a kubectl `-o json` capture."""
    kind = rng.randrange(8)
    if kind == 0:  # a name, a provider or a label value with a hostile string
        fields = [m.start() for m in re.finditer(r'"(name|provider|vpc|cidrBlock)": "', text)]
        at = fields[rng.randrange(len(fields))]
        start = text.index('": "', at) + 4
        end = text.index('"', start)
        return text[:start] + json.dumps(text[start:end] + rng.choice(HOSTILE))[1:-1] + text[end:]
    if kind == 1:
        return text.replace('"generation": 1', '"generation": ' + "7" * 5000, 1)
    if kind == 2:
        return text.replace('"generation": 1', '"generation": ' + rng.choice(["NaN", "Infinity", "1e999"]), 1)
    if kind == 3:
        depth = rng.choice([200, 5000, 100_000])
        return text.replace('"generation": 1', '"generation": ' + "[" * depth + "]" * depth, 1)
    if kind == 4:
        return text[:rng.randrange(1, len(text))]
    if kind == 5:
        return rng.choice(["null\n", '{"apiVersion": "v1", "kind": "List", "items": []}\n', "", "[]"])
    if kind == 6:
        return text.replace('"name": ', '"name": "dup", "name": ', 1)
    return text.replace('"kind": "Subnet"', '"kind": "Subnet\u202e"', 1)


def _hostile_show(rng: random.Random, text: str) -> str:
    """One mutation of `ovn-ic-sbctl show`."""
    kind = rng.randrange(6)
    if kind == 0:
        return text.replace("availability-zone ai", "availability-zone ai" + rng.choice(HOSTILE).replace("\n", ""), 1)
    if kind == 1:
        return text.replace("port ts-ai", "port ts-ai" + rng.choice(HOSTILE).replace("\n", ""), 1)
    if kind == 2:
        block = text[:text.index("availability-zone dr")]
        return block + text  # an AZ (and its ports) listed twice
    if kind == 3:
        depth = rng.choice([50, 5000, 100_000])
        return text.replace('address: ["', 'address: ' + "[" * depth + '["', 1)
    if kind == 4:
        return text.replace("169.254.100.23/24", "169.254.100.23/24 " + "9" * 5000, 1)
    return text.replace("hostname: ai-node-1", f"hostname: ai-node-1 token={TOKEN}", 1)


def _hostile_yaml(rng: random.Random, text: str) -> str:
    """One mutation of a kubectl `-o yaml` capture: a plain integer no object holds, where an
    integer, a string or a port stands (YAML reads a plain digit run as an integer)."""
    field = rng.choice(["  generation: ", "    resourceVersion: ", "    az-name: ", "    ic-nb-port: "])
    start = text.index(field) + len(field)
    end = text.index("\n", start)
    return text[:start] + rng.choice(["7" * 5000, "-" + "9" * 30, "0x" + "f" * 40]) + text[end:]


def _printed(work: Workdir, where: str, *texts: str) -> None:
    for text in texts:
        found = UNSAFE.search(text)
        work.check(found is None, f"{where}: a raw {found.group()!r} reached the output" if found else "")
        work.check(TOKEN not in text, f"{where}: the token reached the output")


def _import(ctx: Context, number: int, work: Workdir) -> str | None:
    rng = random.Random(f"{ctx.seed}/{number}/live-import")
    data = _data(ctx)
    files = {name: (data / name).read_text(encoding="utf-8") for name in LAB}
    show = (data / "icsb-show.txt").read_text(encoding="utf-8")
    pick = rng.random()
    if pick < 0.6:
        victim = rng.choice(["ai.json", "dr.json"])
        files[victim] = _hostile_json(rng, files[victim])
    elif pick < 0.8:
        victim = rng.choice(["hq.yaml", "edge.yaml"])
        files[victim] = _hostile_yaml(rng, files[victim])
    else:
        show = _hostile_show(rng, show)
    args: list[str | Path] = ["import", "sites/lab/fabric.yaml", "--show", work.write("in/show.txt", show)]
    # a command-line argument cannot hold a NUL: every other hostile name can be given
    cluster = rng.choice(["hq", f"hq{rng.choice(HOSTILE[:4])}"]) if rng.random() < 0.2 else "hq"
    for name, text in files.items():
        path = work.write(f"in/{name}", text)
        args += ["--cluster", f"{cluster if name == 'hq.yaml' else name.split('.')[0]}={path}"]
    result = work.fabricgen(*args, cwd=work.path)
    _printed(work, "import", result.out, result.err)
    work.check(result.max_rss_kib < MAX_RSS_KIB, f"import took {result.max_rss_kib // 1024} MiB")
    site = work.path / "sites" / "lab"
    left = sorted(p.name for p in site.iterdir()) if site.is_dir() else []
    work.check(left in ([], ["fabric.yaml"]), f"import left {left} in sites/lab/")
    if result.code in (0, 3):
        written = (site / "fabric.yaml").read_text(encoding="utf-8")
        _printed(work, "the imported fabric", written)
        work.fabricgen("validate", "sites/lab/fabric.yaml", cwd=work.path)
    return None


def _capture(ctx: Context, work: Workdir, rng: random.Random) -> Path:
    """A status capture of sites/lab as a ticket would carry it: made by `status --capture` here
    (kubectl reaches no cluster), then its outputs rewritten the way a hostile cluster or a hostile
    attacher would: kubectl errors echoing a token, terminal controls, a pod list with hostile
    names, the IC southbound mutated."""
    capture = work.path / "capture"
    # the IC database's members named with control sockets, so that the capture holds their
    # `cluster/status` probes too (the sockets are not there: the members are written below)
    gone = work.path / "no-such.ctl"
    members = [{"name": f"hq-node-{i}", "northbound": {"control": f"{gone}{i}"},
                "southbound": {"control": f"{gone}{i}"}} for i in (1, 2, 3)]
    endpoints = work.write("in/endpoints.json", json.dumps({"icDatabase": {
        "northbound": f"unix:{gone}", "southbound": f"unix:{gone}", "members": members}}))
    work.fabricgen("status", ctx.repo / "sites" / "lab" / "fabric.yaml", "--endpoints", endpoints,
                   "--capture", capture, cwd=work.path)
    index = json.loads((capture / "capture.json").read_text(encoding="utf-8"))
    entries = index["observations"]
    raft = (ctx.repo / "tests" / "data" / "raft" / "ovs-3.1" / "healthy-s1.txt").read_text(encoding="utf-8")
    for entry in entries:
        if "cluster/status" in entry["argv"]:
            entry["exit"] = 0
            text = raft.replace("OVN_Northbound", entry["argv"][-1])
            line = rng.choice(["Address: ", "Leader: ", "    s2 (2ef5 at ", "Role: ", "Connections: ", "Term: ",
                               "Disconnections: ", "Status: "])
            noise = "9" * 5000 if line in ("Term: ", "Disconnections: ") else rng.choice(HOSTILE).replace("\n", "")
            text = text.replace(line, line + noise + " ", 1)
            (capture / entry["stdout"]).write_text(text, encoding="utf-8")
    for entry in rng.sample(entries, min(len(entries), 6)):
        (capture / entry["stderr"]).write_text(f"Error from server (Forbidden): Authorization: Bearer {TOKEN} "
                                               f"{rng.choice(HOSTILE)}", encoding="utf-8")
    pods = next((e for e in entries if e["key"].endswith("/pods/ovn-central")), None)
    if pods is not None:
        name = f"ovn-central-{rng.choice(HOSTILE)}"
        pods["exit"] = 0
        (capture / pods["stdout"]).write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
            {"kind": "Pod", "metadata": {"name": name, "namespace": "kube-system"},
             "spec": {"nodeName": rng.choice(HOSTILE)}, "status": {"phase": "Running", "podIP": "10.0.0.1"}}]}),
            encoding="utf-8")
    show = next((e for e in entries if "show" in e["key"]), None)
    if show is not None:
        show["exit"] = 0
        (capture / show["stdout"]).write_text(
            _hostile_show(rng, (_data(ctx) / "icsb-show.txt").read_text(encoding="utf-8")), encoding="utf-8")
    options = next((e for e in entries if e["key"] == "ic/nb/IC_NB_Global"), None)
    if options is not None:  # a cell that is not what its column holds, or a number past an int64
        options["exit"] = 0
        cell = rng.choice(['"vxlan_mode=true"', "9" * 5000, '["map", [["vxlan_mode", ["set", [1, 2]]]]]', "[" * 5000])
        (capture / options["stdout"]).write_text('{"headings": ["options"], "data": [[' + cell + "]]}",
                                                 encoding="utf-8")
    (capture / "capture.json").write_text(json.dumps(index), encoding="utf-8")
    return capture


def _status_from(ctx: Context, number: int, work: Workdir) -> str | None:
    rng = random.Random(f"{ctx.seed}/{number}/live-status")
    capture = _capture(ctx, work, rng)
    fmt = rng.choice(["text", "text", "json", "openmetrics"])
    result = work.fabricgen("status", ctx.repo / "sites" / "lab" / "fabric.yaml", "--from", capture,
                            "--format", fmt, cwd=work.path)
    _printed(work, "status --from", result.out, result.err)
    if fmt == "openmetrics":  # one hostile member must not blind the whole scrape
        bad = [line for line in result.out.splitlines() if line and not OPENMETRICS_LINE.fullmatch(line)]
        work.check(not bad, f"status --format openmetrics wrote lines no parser reads: {bad[:2]!r}")
    return None


# A sample line with label values in which only \\, \" and \n are escapes (OpenMetrics 1.0), or a comment.
OPENMETRICS_LINE = re.compile(r'# .*|[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\})? '
                              r"-?[0-9.e+]+")


def _transit(ctx: Context, number: int, work: Workdir) -> str | None:
    rng = random.Random(f"{ctx.seed}/{number}/live-transit")
    show = work.write("in/show.txt", _hostile_show(rng, (_data(ctx) / "icsb-show.txt").read_text(encoding="utf-8")))
    result = work.fabricgen("transit", ctx.repo / "sites" / "lab" / "fabric.yaml", show, cwd=work.path)
    _printed(work, "transit", result.out, result.err)
    return None
