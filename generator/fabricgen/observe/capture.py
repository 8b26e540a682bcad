"""A capture directory: every raw output `fabricgen status` read, with the command that printed it
(an `Observation` each). `fabricgen status --from` judges one; `fabricgen import --from` adopts one.

    DIR/capture.json          {"format": "fabricgen-status-capture/1", "site": ..., "fabric": ...,
                               "fabricgen": VERSION, "observations": [
                                 {"key": "zones/hq/nb/Logical_Router", "argv": [...], "exit": 0,
                                  "stdout": "zones/hq/nb/Logical_Router.out",
                                  "stderr": "zones/hq/nb/Logical_Router.err"}, ...]}
    DIR/<key>.out, DIR/<key>.err   what the command printed, byte for byte as decoded (UTF-8)

`write` makes the directory whole or not at all (a temporary sibling renamed into place) and
never replaces anything; `read` takes only regular files inside the directory, each key made of
plain path segments, and refuses a capture of another site. fabricgen never reads a kubeconfig,
a Secret or a key file, only names them (a context, a path); what a command printed on stderr
was redacted (`fabricgen.live_text`) before it reached an observation.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from fabricgen import __version__
from fabricgen.errors import FabricgenError
from fabricgen.files.held_signals import held_signals
from fabricgen.files.regular import read_regular
from fabricgen.observe import json_bounds

NOT_RUN = -1  # `exit` of a command that could not be started, or was ended at its deadline
NOT_CAPTURED = "not in the capture"  # what a replay answers to a probe its record lacks
FORMAT = "fabricgen-status-capture/1"
INDEX = "capture.json"
MAX_FILE_BYTES = 64 * 1024 * 1024
# What reading one capture may cost in all: a 16-zone fabric's capture is a few MiB and some
# hundreds of observations, so these leave room without letting a crafted one exhaust memory.
MAX_TOTAL_BYTES = 256 * 1024 * 1024
MAX_OBSERVATIONS = 20_000
MAX_INDEX_DEPTH = 8
_SEGMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.=-]*")


class CaptureError(FabricgenError):
    """The capture cannot be written or read; the message says which file and why."""


@dataclass(frozen=True)
class Observation:
    key: str
    argv: tuple[str, ...]
    exit: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.exit == 0

    def failure(self) -> str:
        """Why the command gave nothing to judge, in one line."""
        said = " ".join((self.stderr.strip() or self.stdout.strip()).split())
        said = said if len(said) <= 300 else said[:297] + "..."
        how = "could not be run" if self.exit == NOT_RUN else f"exited {self.exit}"
        command = " ".join(self.argv[:6]) + (" ..." if len(self.argv) > 6 else "")
        if len(command) > 100:  # a long argument (a query's JSON): the message matters more
            command = command[:97] + "..."
        return f"`{command}` {how}" + (f": {said}" if said else "")



def key_path(key: str) -> PurePosixPath:
    """The relative path of a key; a key is plain segments separated by `/` (never `..`)."""
    parts = key.split("/")
    if not all(_SEGMENT.fullmatch(p) and p not in (".", "..") for p in parts):
        raise CaptureError(f"not a capture key: {key!r}")
    return PurePosixPath(*parts)


def refuse_existing(directory: Path) -> None:
    """A capture goes to a new directory in an existing one."""
    if directory.exists() or directory.is_symlink():
        raise CaptureError(f"{directory}: already exists; a capture is written to a new directory")
    if not directory.parent.is_dir():
        raise CaptureError(f"{directory.parent}: no such directory")


def write(directory: Path, observations: Mapping[str, Observation], *, site: str, fabric: str) -> None:
    """Write the capture to `directory`, which must not exist yet."""
    refuse_existing(directory)
    parent = directory.parent
    entries = []
    with held_signals() as release:
        try:
            staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=parent))
        except OSError as exc:
            raise CaptureError(f"{directory}: cannot write the capture: {exc.strerror}") from None
        try:
            release()
            for key, obs in observations.items():
                rel = key_path(key)
                entry: dict[str, object] = {"key": key, "argv": list(obs.argv), "exit": obs.exit}
                for stream, text in (("stdout", obs.stdout), ("stderr", obs.stderr)):
                    name = rel.with_name(rel.name + (".out" if stream == "stdout" else ".err"))
                    (staging / name).parent.mkdir(parents=True, exist_ok=True)
                    (staging / name).write_text(text, encoding="utf-8")
                    entry[stream] = name.as_posix()
                entries.append(entry)
            index = {"format": FORMAT, "site": site, "fabric": fabric, "fabricgen": __version__,
                     "observations": entries}
            (staging / INDEX).write_text(json.dumps(index, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            os.chmod(staging, 0o755)
            os.rename(staging, directory)
        except OSError as exc:
            shutil.rmtree(staging, ignore_errors=True)
            raise CaptureError(f"{directory}: cannot write the capture: {exc.strerror or exc}") from None
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise


def read(directory: Path, *, site: str | None = None) -> tuple[dict[str, Observation], dict[str, str]]:
    """The observations of a capture and its header (`site`, `fabric`, `fabricgen`). With `site`,
    a capture of another site is refused."""
    index_path = directory / INDEX
    index = _json(index_path)
    if not isinstance(index, dict) or index.get("format") != FORMAT or not isinstance(index.get("observations"), list):
        raise CaptureError(f"{index_path}: not a fabricgen status capture (format {FORMAT})")
    header = {k: str(index.get(k, "")) for k in ("site", "fabric", "fabricgen")}
    if site is not None and header["site"] != site:
        raise CaptureError(f"{directory}: a capture of site {header['site']!r}, not of this fabric's site {site!r}")
    out: dict[str, Observation] = {}
    if len(index["observations"]) > MAX_OBSERVATIONS:
        raise CaptureError(f"{index_path}: {len(index['observations'])} observations, more than the "
                           f"{MAX_OBSERVATIONS} a status capture of any fabric holds")
    named: dict[str, int] = {}
    total = 0
    for number, entry in enumerate(index["observations"], start=1):
        where = f"{index_path}: observation {number}"
        if not isinstance(entry, dict):
            raise CaptureError(f"{where}: expected an object")
        key, argv, code = entry.get("key"), entry.get("argv"), entry.get("exit")
        if not isinstance(key, str) or not isinstance(argv, list) or not all(isinstance(a, str) for a in argv) \
                or not isinstance(code, int) or isinstance(code, bool):
            raise CaptureError(f"{where}: expected key, argv (strings) and exit (a number)")
        texts = []
        for stream in ("stdout", "stderr"):
            name = entry.get(stream)
            if not isinstance(name, str):
                raise CaptureError(f"{where}: {stream} names no file")
            if name in named:
                raise CaptureError(f"{where}: {stream} names {name!r}, which observation {named[name]} names too; "
                                   "a capture has a file of its own for each output")
            named[name] = number
            texts.append(_text(directory, name, where))
            total += len(texts[-1])
            if total > MAX_TOTAL_BYTES:
                raise CaptureError(f"{where}: the capture's files add up to more than "
                                   f"{MAX_TOTAL_BYTES // (1024 * 1024)} MiB; not a status capture")
        if key in out:
            raise CaptureError(f"{where}: key {key!r} appears twice")
        key_path(key)
        out[key] = Observation(key, tuple(argv), code, texts[0], texts[1])
    return out, header


def _json(path: Path) -> object:
    try:
        data, _stat = read_regular(path, follow_symlinks=False, limit=MAX_FILE_BYTES)
        value = json.loads(data.decode("utf-8"), parse_int=json_bounds.parse_int,
                           parse_constant=json_bounds.parse_constant)
    except FileNotFoundError:
        raise CaptureError(f"{path}: no such file; is this a directory written by `fabricgen status --capture`?") \
            from None
    except json_bounds.OddNumber as exc:
        raise CaptureError(f"{path}: cannot read it: {exc}, which no capture holds") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError among them
        raise CaptureError(f"{path}: cannot read it: {exc}") from None
    except RecursionError:
        raise CaptureError(f"{path}: nests too deeply for a status capture") from None
    if json_bounds.deeper_than(value, MAX_INDEX_DEPTH):
        raise CaptureError(f"{path}: nests deeper than {MAX_INDEX_DEPTH} levels; not a status capture")
    return value


def _text(directory: Path, name: str, where: str) -> str:
    try:
        rel = PurePosixPath(name)
        if rel.is_absolute() or any(p in ("", ".", "..") for p in rel.parts):
            raise CaptureError(f"{where}: {name!r} is not a file inside the capture")
        path = directory.joinpath(*rel.parts)
        for parent in list(path.relative_to(directory).parents)[:-1]:
            if (directory / parent).is_symlink():
                raise CaptureError(f"{where}: {name!r} is not a file inside the capture")
        data, _stat = read_regular(path, follow_symlinks=False, limit=MAX_FILE_BYTES)
        return data.decode("utf-8")
    except CaptureError:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        raise CaptureError(f"{where}: cannot read {name!r}: {exc}") from None
