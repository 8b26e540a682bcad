"""Running the read-only commands of `fabricgen status`, recording them, or answering from a record.

A `Probe` is a command with a stable key (`zones/hq/nb/Logical_Router`); an `Observation` is
what it printed and how it ended. The three observers answer the same probes:

- `Live` runs them, `WORKERS` at a time (the commands wait on remote databases and clusters,
  not on this machine), each ended after `DEADLINE` seconds at most;
- `Recording` runs them through `Live` and keeps every observation, which `capture.write`
  then writes as a capture directory (`status --capture DIR`);
- `Replay` answers from a capture (`status --from DIR`): a probe it does not hold is
  reported unreachable, never run.

Judging works only from observations, so a capture judged offline gives the verdicts a live
run would have given at that moment.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Protocol

from fabricgen.live_text import redact
from fabricgen.observe.capture import NOT_CAPTURED, NOT_RUN, Observation

WORKERS = 8
DEADLINE = 90  # seconds: past the tools' own timeouts (commands.TIMEOUT), a process is ended


@dataclass(frozen=True)
class Probe:
    key: str
    argv: tuple[str, ...]


class Observer(Protocol):
    def observe(self, probes: Sequence[Probe]) -> dict[str, Observation]: ...


def _run(probe: Probe, env: Mapping[str, str]) -> Observation:
    try:
        proc = subprocess.run(list(probe.argv), capture_output=True, text=True, errors="replace", check=False,
                              stdin=subprocess.DEVNULL, env=dict(env), timeout=DEADLINE)
    except FileNotFoundError:
        return Observation(probe.key, probe.argv, NOT_RUN, "", f"{probe.argv[0]}: command not found")
    except subprocess.TimeoutExpired:
        return Observation(probe.key, probe.argv, NOT_RUN, "", f"no answer within {DEADLINE} s")
    except OSError as exc:
        return Observation(probe.key, probe.argv, NOT_RUN, "", str(exc))
    # What a command says on stderr (an API server's error body, a credential plugin's log) is
    # shown and captured: its credentials are taken out here, before either.
    return Observation(probe.key, probe.argv, proc.returncode, proc.stdout, redact(proc.stderr))


@dataclass
class Live:
    """Runs probes on this machine, in the environment given (PATH finds kubectl and the OVN tools)."""

    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    workers: int = WORKERS

    def observe(self, probes: Sequence[Probe]) -> dict[str, Observation]:
        unique = list({p.key: p for p in probes}.values())
        if len(unique) <= 1:
            return {p.key: _run(p, self.env) for p in unique}
        with ThreadPoolExecutor(max_workers=min(self.workers, len(unique))) as pool:
            return {o.key: o for o in pool.map(lambda p: _run(p, self.env), unique)}


@dataclass
class Recording:
    """`Live`, keeping every observation (in the order the probes were given)."""

    live: Observer
    kept: dict[str, Observation] = field(default_factory=dict)

    def observe(self, probes: Sequence[Probe]) -> dict[str, Observation]:
        out = self.live.observe(probes)
        for probe in probes:
            self.kept.setdefault(probe.key, out[probe.key])
        return out


@dataclass
class Replay:
    """Answers from recorded observations; a probe the record lacks was not captured."""

    recorded: Mapping[str, Observation]

    def observe(self, probes: Sequence[Probe]) -> dict[str, Observation]:
        out = {}
        for probe in probes:
            found = self.recorded.get(probe.key)
            out[probe.key] = found if found is not None else Observation(
                probe.key, probe.argv, NOT_RUN, "", NOT_CAPTURED)
        return out


def keyed(observations: Iterable[Observation]) -> dict[str, Observation]:
    return {o.key: o for o in observations}
