"""What every case shares: its private directory, running fabricgen and other programs as real
processes, the documented exit codes, snapshots of directory trees, and keeping a failure's
reproduction.

A case is a function of a `Workdir`. It raises `Failed` with every reason it found (or `Skip`
with why it cannot run here) and returns a note or None when it held. Each command it runs is
appended to `commands.log` in its directory, so a kept reproduction says what was run, where,
with which environment and what came out.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# The exit codes each command may end with, from docs/diagnostics.md, "Exit codes" (4, an internal error,
# is never one of them). 130 (interrupted) and 141 (a broken pipe) are expected only where a
# case interrupts the process or closes its stdout.
DOCUMENTED: dict[str, frozenset[int]] = {
    "validate": frozenset({0, 1, 2}),
    "render": frozenset({0, 1, 2, 3}),
    "diff": frozenset({0, 1, 2, 3}),
    "transit": frozenset({0, 1, 2, 3}),
    "verify": frozenset({0, 1, 2, 5, 6}),
    "graph": frozenset({0, 1, 2}),
    "schema": frozenset({0, 2, 3}),
    "init": frozenset({0, 1, 2}),
    "rules": frozenset({0, 2, 3}),
    "status": frozenset({0, 1, 2, 3, 7, 8}),
    "import": frozenset({0, 1, 2, 3}),
    "argocd-generate": frozenset({0, 1, 2}),
    "krm": frozenset({0, 1, 2}),
}
INTERNAL, INTERRUPTED, BROKEN_PIPE = 4, 130, 141

# Environment variables that would change what fabricgen does and are never inherited.
_DROPPED_PREFIXES = ("FABRICGEN_", "ARGOCD_", "PARAM_", "GITHUB_", "GITLAB_", "CI", "PYTHON", "OVN_", "OVS_",
                     "XDG_", "GIT_", "KUBECONFIG")


class Failed(Exception):
    """The case did not hold; `reasons` says every way it did not."""

    def __init__(self, reasons: Sequence[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = list(reasons)


class Skip(Exception):
    """The case cannot run on this machine; the message says why."""


NOBODY = 65534  # the unprivileged user a case run as root switches to where root could write anyway


@dataclass
class Result:
    """One finished process."""

    argv: list[str]
    cwd: Path
    code: int  # negative: ended by that signal
    stdout: bytes
    stderr: bytes
    cpu: float  # user + system seconds of the process and its children it waited for
    max_rss_kib: int  # wait4's peak: the child's, or the harness's own size at the fork if that was larger
    wall: float
    timed_out: bool

    @property
    def out(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    @property
    def err(self) -> str:
        return self.stderr.decode("utf-8", "replace")

    def brief(self) -> str:
        tail = self.err.strip().splitlines()[-3:]
        return f"exit {self.code}" + (f" ({' | '.join(tail)[:400]})" if tail else "")


@dataclass
class Context:
    """What the whole run shares: which fabricgen, the repository, the scratch root."""

    fabricgen: Path
    repo: Path
    scratch: Path
    python: Path  # the interpreter of the environment fabricgen is installed in (oslo.config)
    seed: int
    quick: bool
    notes: dict[str, set[str]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, family: str, text: str) -> None:
        """A remark printed once with the family's counts (a reader that cannot run here...)."""
        with self._lock:
            self.notes.setdefault(family, set()).add(text)


@dataclass
class Case:
    family: str
    name: str
    run: Callable[[Workdir], str | None]
    quick: bool = False  # part of --quick


@dataclass
class Running:
    """A started program (`Workdir.spawn`)."""

    proc: subprocess.Popen[bytes]
    args: list[str]
    cwd: Path
    env: dict[str, str]
    stdin: bytes | None
    started: float
    out: list[bytes] = field(default_factory=list)
    err: list[bytes] = field(default_factory=list)
    readers: list[threading.Thread] = field(default_factory=list)

    def finished(self) -> bool:
        """Whether the program has ended (without collecting it: `Workdir.wait` does, with its usage)."""
        try:
            return os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True


_counter_lock = threading.Lock()
_counter = [0]


class Workdir:
    """A case's private directory (`path`), its private fabricgen cache and its command log."""

    def __init__(self, ctx: Context, case: Case) -> None:
        self.ctx = ctx
        self.case = case
        with _counter_lock:
            _counter[0] += 1
            number = _counter[0]
        self.path = ctx.scratch / "cases" / f"{number:05d}"
        self.path.mkdir(parents=True)
        self.path.chmod(0o755)  # cases that run fabricgen as another user reach their files
        self.cache = self.path / "_cache" / "fabricgen"
        self.home = self.path / "_home"
        self.tmp = self.path / "_tmp"
        for directory in (self.home, self.tmp):
            directory.mkdir(mode=0o700)
        self.log = self.path / "commands.log"
        self.reasons: list[str] = []

    # --- environment -------------------------------------------------------------------
    def env(self, extra: Mapping[str, str] | None = None, *, cache: Path | None = None) -> dict[str, str]:
        """A plain environment: nothing that steers fabricgen, a private cache, home and TMPDIR."""
        base = {k: v for k, v in os.environ.items() if not k.startswith(_DROPPED_PREFIXES)}
        base.update({
            "PATH": f"{self.ctx.fabricgen.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}:/usr/sbin:/sbin",
            "HOME": str(self.home),
            "TMPDIR": str(self.tmp),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "FABRICGEN_CACHE_DIR": str(cache or self.cache),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "hostile", "GIT_AUTHOR_EMAIL": "hostile@example.invalid",
            "GIT_COMMITTER_NAME": "hostile", "GIT_COMMITTER_EMAIL": "hostile@example.invalid",
        })
        base.update(extra or {})
        return base

    # --- processes ---------------------------------------------------------------------
    def run(self, argv: Sequence[str | Path], *, cwd: Path | None = None, env: Mapping[str, str] | None = None,
            stdin: bytes | None = None, timeout: float = 120, umask: int | None = None,
            user: int | None = None, stdout_fd: int | None = None, log: bool = True) -> Result:
        """Run one program to its end (killed with its process group past `timeout`)."""
        running = self.spawn(argv, cwd=cwd, env=env, stdin=stdin, umask=umask, user=user, stdout_fd=stdout_fd)
        return self.wait(running, timeout=timeout, log=log)

    def spawn(self, argv: Sequence[str | Path], *, cwd: Path | None = None, env: Mapping[str, str] | None = None,
              stdin: bytes | None = None, umask: int | None = None, user: int | None = None,
              stdout_fd: int | None = None) -> Running:
        """Start one program in a process group of its own; `wait` collects it."""
        args = [str(a) for a in argv]
        if umask is not None:
            args = ["sh", "-c", f'umask {umask:03o} && exec "$@"', "sh", *args]
        if user is not None:
            args = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--", *args]
        cwd = cwd or self.path
        environment = dict(env) if env is not None else self.env()
        proc = subprocess.Popen(args, cwd=cwd, env=environment, start_new_session=True,
                                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                                stdout=stdout_fd if stdout_fd is not None else subprocess.PIPE,
                                stderr=subprocess.PIPE)
        running = Running(proc, args, cwd, environment, stdin, time.monotonic())
        if proc.stdout is not None:
            running.readers.append(threading.Thread(target=_drain, args=(proc.stdout, running.out), daemon=True))
        assert proc.stderr is not None
        running.readers.append(threading.Thread(target=_drain, args=(proc.stderr, running.err), daemon=True))
        for thread in running.readers:
            thread.start()
        if proc.stdin is not None:
            threading.Thread(target=_feed, args=(proc.stdin, stdin or b""), daemon=True).start()
        return running

    def wait(self, running: Running, *, timeout: float = 120, log: bool = True, kill_group: bool = True) -> Result:
        """Wait for a started program (killed with its group past `timeout`); with `kill_group`,
        whatever it left in its process group is ended too."""
        proc = running.proc
        timed_out = threading.Event()

        def expire() -> None:
            timed_out.set()
            _kill_group(proc.pid)

        timer = threading.Timer(max(0.0, timeout - (time.monotonic() - running.started)), expire)
        timer.start()
        try:
            _pid, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if kill_group:
            _kill_group(proc.pid)
        for thread in running.readers:
            thread.join(timeout=10)
        result = Result(running.args, running.cwd, proc.returncode, b"".join(running.out), b"".join(running.err),
                        usage.ru_utime + usage.ru_stime, usage.ru_maxrss, time.monotonic() - running.started,
                        timed_out.is_set())
        if log:
            self._log(result, running.env, running.stdin)
        return result

    def fabricgen(self, *args: str | Path, **kwargs: object) -> Result:
        """The installed fabricgen with `args`; every generic promise is checked (`expect_documented`)."""
        expected = kwargs.pop("codes", None)
        result = self.run([self.ctx.fabricgen, *args], **kwargs)  # type: ignore[arg-type]
        command = next((str(a) for a in args if not str(a).startswith("-")), "")
        self.expect_documented(result, command, expected)  # type: ignore[arg-type]
        return result

    def expect_documented(self, result: Result, command: str, codes: Iterable[int] | None = None) -> None:
        """Never an internal error or a traceback, never a hang, and an exit code docs/diagnostics.md lists
        for the command (or one of `codes`)."""
        allowed = frozenset(codes) if codes is not None else DOCUMENTED.get(command, frozenset())
        where = f"fabricgen {command}"
        if result.timed_out:
            self.fail(f"{where} did not end within its time limit (killed)")
        elif result.code == INTERNAL:
            self.fail(f"{where}: exit 4 (internal error): {result.err.strip()[-300:]}")
        elif result.code not in allowed:
            self.fail(f"{where}: exit {result.code}, not one of {sorted(allowed)}: {result.err.strip()[-300:]}")
        if "Traceback (most recent call last)" in result.err:
            self.fail(f"{where}: a Python traceback on stderr")

    def _log(self, result: Result, env: Mapping[str, str], stdin: bytes | None) -> None:
        changed = {k: v for k, v in env.items() if os.environ.get(k) != v and k not in ("PATH",)}
        shown = " ".join(f"{k}={shlex.quote(self.rel(v))}" for k, v in sorted(changed.items()))
        argv = " ".join(shlex.quote(self.rel(a)) for a in result.argv)
        with self.log.open("a", encoding="utf-8") as log:
            log.write(f"$ cd {shlex.quote(self.rel(str(result.cwd)))} && env {shown} {argv}"
                      f"{' < stdin' if stdin is not None else ''}\n")
            log.write(f"# exit {result.code}{' (timed out)' if result.timed_out else ''}, {result.wall:.2f} s, "
                      f"cpu {result.cpu:.2f} s, max rss {result.max_rss_kib // 1024} MiB\n")
            for name, data in (("stdout", result.stdout), ("stderr", result.stderr)):
                if data:
                    text = data[:4000].decode("utf-8", "backslashreplace")
                    log.write("".join(f"# {name}| {line}\n" for line in text.splitlines()))
                    if len(data) > 4000:
                        log.write(f"# {name}| ... ({len(data)} bytes in all)\n")

    def rel(self, text: str) -> str:
        """A path in the log relative to the case directory (`$CASE/...`) where it is one."""
        return text.replace(str(self.path), "$CASE")

    # --- verdicts ------------------------------------------------------------------------
    def fail(self, reason: str) -> None:
        """Record one reason the case did not hold; the case goes on to find the others."""
        self.reasons.append(reason)

    def check(self, condition: bool, reason: str) -> bool:
        if not condition:
            self.fail(reason)
        return condition

    def write(self, rel: str, data: bytes | str, mode: int = 0o644) -> Path:
        path = self.path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        path.chmod(mode)
        return path


def _drain(stream: object, chunks: list[bytes]) -> None:
    read = stream.read  # type: ignore[attr-defined]
    while True:
        chunk = read(65536)
        if not chunk:
            break
        chunks.append(chunk)
    stream.close()  # type: ignore[attr-defined]


def _feed(stream: object, data: bytes) -> None:
    try:
        stream.write(data)  # type: ignore[attr-defined]
        stream.close()  # type: ignore[attr-defined]
    except (BrokenPipeError, OSError):
        pass


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


# --- trees -----------------------------------------------------------------------------------

Entry = tuple[str, str, int]  # kind (file, dir, link, other), content digest or link target, permission bits


def snapshot(root: Path) -> dict[str, Entry]:
    """Everything under `root` (not following links): relative path -> (kind, digest, mode)."""
    found: dict[str, Entry] = {}
    if not os.path.lexists(root):
        return found
    pending = [root]
    while pending:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except NotADirectoryError:
            continue
        for entry in entries:
            rel = Path(entry.path).relative_to(root).as_posix()
            status = entry.stat(follow_symlinks=False)
            mode = stat.S_IMODE(status.st_mode)
            if stat.S_ISDIR(status.st_mode):
                found[rel] = ("dir", "", mode)
                pending.append(Path(entry.path))
            elif stat.S_ISREG(status.st_mode):
                with open(entry.path, "rb") as handle:
                    found[rel] = ("file", hashlib.sha256(handle.read()).hexdigest(), mode)
            elif stat.S_ISLNK(status.st_mode):
                found[rel] = ("link", os.readlink(entry.path), mode)
            else:
                found[rel] = ("other", oct(stat.S_IFMT(status.st_mode)), mode)
    return found


def tree_difference(before: Mapping[str, Entry], after: Mapping[str, Entry], limit: int = 6) -> str:
    """What differs between two snapshots, briefly ('' when they are equal)."""
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(p for p in set(before) & set(after) if before[p] != after[p])
    parts = []
    for label, paths in (("added", added), ("removed", removed), ("changed", changed)):
        if paths:
            parts.append(f"{label} {', '.join(paths[:limit])}{' ...' if len(paths) > limit else ''}")
    return "; ".join(parts)


def files_only(tree: Mapping[str, Entry]) -> dict[str, Entry]:
    """A snapshot without its directories' own permission bits (what git compares)."""
    return {p: e for p, e in tree.items() if e[0] != "dir"}


def keep(workdir: Workdir, keep_root: Path, reasons: Sequence[str], rerun: str) -> Path:
    """Copy the case's directory (its inputs, outputs and commands.log) to the keep directory."""
    target = keep_root / workdir.case.family / _safe(workdir.case.name)
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(workdir.path, target, symlinks=True, ignore=_special_files, ignore_dangling_symlinks=True)
    (target / "FAILURE.txt").write_text(
        f"case {workdir.case.family}/{workdir.case.name}\n"
        + "".join(f"- {r}\n" for r in reasons)
        + f"\n$CASE in commands.log is this directory; run again: {rerun}\n", encoding="utf-8")
    return target


def _special_files(directory: str, names: list[str]) -> list[str]:
    skipped = []
    for name in names:
        try:
            mode = os.lstat(os.path.join(directory, name)).st_mode
        except OSError:
            skipped.append(name)
            continue
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            skipped.append(name)
    return skipped


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.+" else "_" for c in name)[:120]


def remove_tree(path: Path) -> None:
    """Remove a case's directory, whatever modes its cases left on it."""
    if os.path.isdir(path) and not os.path.islink(path):
        os.chmod(path, 0o700)
    for directory, subdirs, _files in os.walk(path):
        for name in subdirs:
            sub = os.path.join(directory, name)
            if not os.path.islink(sub):
                with contextlib.suppress(OSError):
                    os.chmod(sub, 0o700)
    shutil.rmtree(path, ignore_errors=True)


def nobody_runs(ctx: Context) -> None:
    """The unprivileged user the case switches to can start the installed fabricgen, or the case
    cannot run here: a clone under a directory closed to others (`mktemp -d` makes them 0700)
    keeps it out, and every run would fail before fabricgen starts."""
    probe = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--",
                            str(ctx.fabricgen), "--version"], capture_output=True, text=True, check=False,
                           env={**os.environ, "HOME": "/"}, stdin=subprocess.DEVNULL)
    if probe.returncode != 0:
        raise Skip(f"user {NOBODY} cannot run {ctx.fabricgen} (a directory on its way is closed to others: "
                   f"{(probe.stderr or probe.stdout).strip()[:200]}); run the hostile harness from a clone others "
                   "may read")
