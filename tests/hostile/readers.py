"""The real readers of fabricgen's output, run on an accepted fabric's tree where they run here.

| file | reader |
| --- | --- |
| netplan files (`_host/.../60-fabricgen-ovn.yaml`) | `netplan generate --root-dir`, each file on its own |
| `*.sh` | `bash -n` and `sh -n` (the scripts say `#!/bin/sh`) |
| `*.nft` | `nft -c -f` (in a user and network namespace where nft needs privileges it lacks) |
| `ml2_conf.ini` | oslo.config's `ConfigOpts`, every option the file sets |
| `ovn_k8s.conf` | `git config -f FILE --list` (gcfg's syntax) |
| `frr.conf` | `vtysh --dryrun -f` |
| `*.json` | Python's json |
| other `*.yaml` | PyYAML, every document |
| each directory with a `kustomization.yaml` | `kubectl kustomize` |

A verdict is kept per reader and content digest, so a file that a thousand mutants render
alike is read once. A reader missing here is noted once and skipped.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import yaml

from hostile.harness import Context

_OSLO = r"""
import configparser, sys
from oslo_config import cfg
path = sys.argv[1]
plain = configparser.ConfigParser(interpolation=None, strict=False)
plain.optionxform = str
plain.read(path, encoding="utf-8")
conf = cfg.ConfigOpts()
for section in plain.sections():
    conf.register_opts([cfg.StrOpt(key) for key in plain[section]], group=section)
conf(args=[], default_config_files=[path], default_config_dirs=[], project="hostile", use_env=False)
for section in plain.sections():
    for key in plain[section]:
        getattr(getattr(conf, section), key)
"""


_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class Readers:
    def __init__(self, ctx: Context, family: str) -> None:
        self.ctx = ctx
        self.family = family
        self._verdicts: dict[tuple[str, str], str | None] = {}
        self._lock = threading.Lock()
        self._tools: dict[str, bool] = {}
        self._nft_prefix: list[str] | None = None

    # --- availability ----------------------------------------------------------------------
    def _have(self, tool: str) -> bool:
        with self._lock:
            if tool not in self._tools:
                self._tools[tool] = shutil.which(tool, path=_PATH) is not None
            have = self._tools[tool]
        if not have:
            self.ctx.note(self.family, f"{tool} is not installed: its files are not read back")
        return have

    # --- one file ------------------------------------------------------------------------------
    def _verdict(self, reader: str, data: bytes, read: Callable[[], str | None]) -> str | None:
        key = (reader, hashlib.sha256(data).hexdigest())
        with self._lock:
            if key in self._verdicts:
                return self._verdicts[key]
        verdict = read()
        with self._lock:
            self._verdicts[key] = verdict
        return verdict

    def _run(self, argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, errors="replace", timeout=120,
                              check=False)

    def _in_temp(self, name: str, data: bytes, argv: Callable[[Path], list[str]]) -> str | None:
        with tempfile.TemporaryDirectory(dir=self.ctx.scratch) as tmp:
            path = Path(tmp) / name
            path.write_bytes(data)
            done = self._run(argv(path), cwd=Path(tmp))
            if done.returncode == 0:
                return None
            return (done.stderr or done.stdout).strip()[-500:] or f"exit {done.returncode}"

    def _netplan(self, data: bytes) -> str | None:
        with tempfile.TemporaryDirectory(dir=self.ctx.scratch) as tmp:
            etc = Path(tmp) / "etc" / "netplan"
            etc.mkdir(parents=True)
            (etc / "60-fabricgen-ovn.yaml").write_bytes(data)
            (etc / "60-fabricgen-ovn.yaml").chmod(0o600)
            done = self._run(["netplan", "generate", "--root-dir", tmp])
            return None if done.returncode == 0 else done.stderr.strip()[-500:] or f"exit {done.returncode}"

    def _nft(self, data: bytes) -> str | None:
        with self._lock:
            prefix = self._nft_prefix
        if prefix is None:
            prefix = self._nft_probe()
            with self._lock:
                self._nft_prefix = prefix
        if prefix == ["-"]:
            return None  # nft cannot run here (noted)
        return self._in_temp("rules.nft", data, lambda p: [*prefix, "nft", "-c", "-f", str(p)])

    def _nft_probe(self) -> list[str]:
        """[] when `nft -c` runs as we are, the namespace prefix when it needs one, ["-"] when
        it cannot run at all."""
        probe = "table inet hostile_probe {\n  chain input {\n    type filter hook input priority 0;\n  }\n}\n"
        with tempfile.TemporaryDirectory(dir=self.ctx.scratch) as tmp:
            path = Path(tmp) / "probe.nft"
            path.write_text(probe)
            if self._run(["nft", "-c", "-f", str(path)]).returncode == 0:
                return []
            if shutil.which("unshare") and self._run(["unshare", "-rn", "nft", "-c", "-f", str(path)]).returncode == 0:
                self.ctx.note(self.family, "nft -c runs in a user and network namespace (unshare -rn) here")
                return ["unshare", "-rn"]
        self.ctx.note(self.family, "nft -c cannot run here (no privileges, no user namespaces): .nft files not read")
        return ["-"]

    def read_file(self, path: Path, rel: str) -> str | None:
        """Why the file's reader refuses it, or None (also when no reader runs here)."""
        data = path.read_bytes()
        name = path.name
        if name.endswith(".sh"):
            for shell in ("bash", "sh"):
                if self._have(shell):
                    verdict = self._verdict(shell, data, lambda s=shell: self._in_temp(  # type: ignore[misc]
                        "script.sh", data, lambda p: [s, "-n", str(p)]))
                    if verdict:
                        return f"{shell} -n: {verdict}"
            return None
        if name.endswith(".nft"):
            if not self._have("nft"):
                return None
            verdict = self._verdict("nft", data, lambda: self._nft(data))
            return f"nft -c: {verdict}" if verdict else None
        if name == "ml2_conf.ini":
            verdict = self._verdict("oslo", data, lambda: self._in_temp(
                "ml2_conf.ini", data, lambda p: [str(self.ctx.python), "-c", _OSLO, str(p)]))
            return f"oslo.config: {verdict}" if verdict else None
        if name == "ovn_k8s.conf":
            if not self._have("git"):
                return None
            verdict = self._verdict("gcfg", data, lambda: self._in_temp(
                "ovn_k8s.conf", data, lambda p: ["git", "config", "-f", str(p), "--list"]))
            return f"git config (gcfg syntax): {verdict}" if verdict else None
        if name == "frr.conf":
            if not self._have("vtysh"):
                return None
            verdict = self._verdict("vtysh", data, lambda: self._in_temp(
                "frr.conf", data, lambda p: ["vtysh", "--dryrun", "-f", str(p)]))
            return f"vtysh --dryrun: {verdict}" if verdict else None
        if name.endswith(".json"):
            try:
                json.loads(data)
            except ValueError as exc:
                return f"json: {exc}"
            return None
        if name.endswith(".yaml"):
            try:
                documents = list(yaml.safe_load_all(data))
            except yaml.YAMLError as exc:
                return f"PyYAML: {str(exc)[:300]}"
            if rel.startswith("_host/") and len(documents) == 1 and isinstance(documents[0], dict) \
                    and "network" in documents[0]:
                if not self._have("netplan"):
                    return None
                verdict = self._verdict("netplan", data, lambda: self._netplan(data))
                return f"netplan generate: {verdict}" if verdict else None
            return None
        return None

    def kustomize(self, directory: Path) -> tuple[str | None, str]:
        """(why `kubectl kustomize` refuses the directory or None, its output)."""
        if not self._have("kubectl"):
            return None, ""
        digest = hashlib.sha256()
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                digest.update(path.relative_to(directory).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
        key = ("kustomize", digest.hexdigest())
        with self._lock:
            if key in self._verdicts:
                cached = self._verdicts[key]
                return (cached[1:], "") if cached and cached.startswith("!") else (None, cached or "")
        done = self._run(["kubectl", "kustomize", str(directory)])
        verdict = None if done.returncode == 0 else (done.stderr.strip()[-500:] or f"exit {done.returncode}")
        with self._lock:
            self._verdicts[key] = ("!" + verdict) if verdict else done.stdout
        return verdict, done.stdout if verdict is None else ""

    def read_tree(self, site: Path) -> list[str]:
        """Every refusal of a reader of the site's output, as `path: reader: message`."""
        problems = []
        for path in sorted(site.rglob("*")):
            if path.is_symlink() or not path.is_file():
                continue
            rel = path.relative_to(site).as_posix()
            verdict = self.read_file(path, rel)
            if verdict:
                problems.append(f"{rel}: {verdict}")
        for kustomization in sorted(site.rglob("kustomization.yaml")):
            directory = kustomization.parent
            if directory.parent != site and directory.parent.name != "_delivery":
                continue  # stage directories are read through their zone's kustomization
            verdict, _out = self.kustomize(directory)
            if verdict:
                problems.append(f"{directory.relative_to(site).as_posix()}/: kubectl kustomize: {verdict}")
        return problems
