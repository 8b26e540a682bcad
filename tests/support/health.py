"""The health checks fabricgen delivers, run in real interpreters as Argo CD and Flux run them.

Argo CD (argoproj/argo-cd `util/lua/lua.go` `runLua` / `ExecuteHealthLua`): gopher-lua, Lua 5.1
semantics, the object as global `obj`, and for a script from `argocd-cm` only the base and
table libraries (and a safe os, which no script here uses); the returned table is read as JSON
into `{status, message}`, an unknown status becomes Unknown. Here: Debian's `lua5.1`, each
script in an environment of the base functions and `table` alone, with the string metatable
emptied while it runs (gopher-lua without the string library has none), the object passed as
a Lua table literal. One process evaluates a whole batch.

Flux (fluxcd/pkg `runtime/cel/status_evaluator.go` `Evaluate` and `expression.go`): an
unchecked CEL program per expression over the object's top-level fields; a differing
`status.observedGeneration` is InProgress; then inProgress, failed, current, the first true
decides, none true is InProgress; an evaluation error is returned, which kstatus reports as
Unknown (fluxcd/cli-utils `pkg/kstatus/polling/statusreaders/common.go`
`errResourceToResourceStatus`). Here: Google's CEL runtime (`cel-expr-python`, cel-cpp).
kstatus itself for kinds without an expression (fluxcd/cli-utils `pkg/kstatus/status`
`Compute`, `checkGenericProperties`, `checkReadyCondition`, `legacyTypes`) is modelled in
`kstatus`.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any

VALID = ("Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown")

_HARNESS = r"""
local results = {}
local mt = getmetatable("")
local saved = mt.__index
local base = {}
for _, name in ipairs({"assert", "error", "ipairs", "next", "pairs", "pcall", "rawequal", "rawget", "rawset",
                       "select", "setmetatable", "getmetatable", "tonumber", "tostring", "type", "unpack",
                       "xpcall", "_VERSION"}) do
  base[name] = _G[name]
end
local function run(source, object)
  local chunk, err = loadstring(source, "health.lua")
  if chunk == nil then
    return "error", err
  end
  local env = {obj = object, table = table}
  for k, v in pairs(base) do env[k] = v end
  env._G = env
  setfenv(chunk, env)
  mt.__index = nil
  local ok, hs = pcall(chunk)
  mt.__index = saved
  if not ok then
    return "error", tostring(hs)
  end
  if type(hs) ~= "table" then
    return "error", "expect table output from Lua script, not " .. type(hs)
  end
  local status = hs.status
  local message = hs.message
  if status == nil then status = "" end
  if message == nil then message = "" end
  return tostring(status), tostring(message)
end
local function put(s)
  io.write(#s, ":", s)
end
for i, case in ipairs(CASES) do
  local status, message = run(SCRIPTS[case[1]], case[2])
  put(status)
  put(message)
end
"""


def lua_literal(value: Any) -> str:
    """A Python value from a Kubernetes object as a Lua 5.1 expression (JSON null is nil)."""
    if value is None:
        return "nil"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + "".join(c if c.isalnum() or c in " .,:;-_/=+()[]{}<>@#*!?'" else
                             "".join(f"\\{b:03d}" for b in c.encode("utf-8")) for c in value) + '"'
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"[{lua_literal(str(k))}] = {lua_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Sequence):
        return "{" + ", ".join(lua_literal(v) for v in value) + "}"
    raise TypeError(f"no Lua form for {value!r}")


def _long_string(text: str) -> str:
    level = 0
    while f"]{'=' * level}]" in text:
        level += 1
    eq = "=" * level
    return f"[{eq}[\n{text}]{eq}]"


def lua_binary() -> str | None:
    return shutil.which("lua5.1")


def run_lua(cases: Sequence[tuple[str, Mapping[str, Any]]]) -> list[tuple[str, str]]:
    """Each (script text, object) through lua5.1 as Argo CD runs it: (status, message)."""
    binary = lua_binary()
    if binary is None:
        raise RuntimeError("lua5.1 is not installed (apt-get install lua5.1; scripts/setup.sh --test)")
    scripts: dict[str, int] = {}
    for text, _obj in cases:
        scripts.setdefault(text, len(scripts) + 1)
    program = "SCRIPTS = {" + ", ".join(_long_string(t) for t in scripts) + "}\n"
    program += "CASES = {" + ", ".join(f"{{{scripts[t]}, {lua_literal(o)}}}" for t, o in cases) + "}\n"
    program += _HARNESS
    done = subprocess.run([binary, "-"], input=program.encode("utf-8"), capture_output=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"lua5.1 failed: {done.stderr.decode(errors='replace')}")
    out, values = done.stdout, []
    while out:
        size, _, rest = out.partition(b":")
        values.append(rest[: int(size)].decode("utf-8"))
        out = rest[int(size):]
    results = list(zip(values[0::2], values[1::2], strict=True))
    assert len(results) == len(cases)
    # ExecuteHealthLua: a status that is not a health code is Unknown ("Lua returned an invalid health status").
    return [(s, m) if s in VALID or s == "error" else ("Unknown", "Lua returned an invalid health status")
            for s, m in results]


class Cel:
    """CEL as fluxcd/pkg runtime/cel sets it up (unchecked programs, the strings extension)."""

    def __init__(self) -> None:
        from cel_expr_python import cel
        from cel_expr_python.ext import ext_strings

        self._cel = cel
        self._env = cel.NewEnv(extensions=[ext_strings.ExtStrings()])
        self._compiled: dict[str, Any] = {}

    def evaluate(self, expr: str, obj: Mapping[str, Any]) -> bool | str:
        """True or False, or the error text."""
        program = self._compiled.get(expr)
        if program is None:
            program = self._compiled[expr] = self._env.compile(expr, disable_check=True)
        value = program.eval(data=dict(obj))
        if value.type() == self._cel.Type.ERROR:
            return str(value.value())
        result = value.value()
        if not isinstance(result, bool):
            return f"failed to evaluate CEL expression as boolean: {expr!r}"
        return result

    def status(self, exprs: Mapping[str, str], obj: Mapping[str, Any]) -> str:
        """fluxcd/pkg StatusEvaluator.Evaluate, and what kstatus makes of its error (Unknown)."""
        generation = obj.get("metadata", {}).get("generation")
        observed = (obj.get("status") or {}).get("observedGeneration")
        if isinstance(observed, int) and isinstance(generation, int) and observed != generation:
            return "InProgress"
        for key, verdict in (("inProgress", "InProgress"), ("failed", "Failed"), ("current", "Current")):
            expr = exprs.get(key)
            if not expr:
                continue
            result = self.evaluate(expr, obj)
            if isinstance(result, str):
                return "Unknown"
            if result:
                return verdict
        return "InProgress"


def kstatus(obj: Mapping[str, Any]) -> str:
    """fluxcd/cli-utils pkg/kstatus/status Compute for the kinds fabricgen renders without an expression."""
    meta = obj.get("metadata", {})
    if meta.get("deletionTimestamp"):
        return "Terminating"
    status = obj.get("status") or {}
    generation, observed = meta.get("generation"), status.get("observedGeneration")
    if isinstance(generation, int) and isinstance(observed, int) and observed != generation:
        return "InProgress"
    conditions = status.get("conditions") or []
    for c in conditions:
        if c.get("type") == "Reconciling" and c.get("status") == "True":
            return "InProgress"
        if c.get("type") == "Stalled" and c.get("status") == "True":
            return "Failed"
    kind, group = obj.get("kind"), str(obj.get("apiVersion", "")).rpartition("/")[0]
    if kind in ("ConfigMap", "Secret") and group == "":
        return "Current"
    if kind == "Deployment" and group == "apps":
        spec_replicas = obj.get("spec", {}).get("replicas", 1)
        for field in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"):
            if status.get(field, 0) < spec_replicas:
                return "InProgress"
        return "Current"
    if kind == "Service" and group == "":
        return "Current"  # a ClusterIP Service (serviceConditions)
    for c in conditions:  # checkReadyCondition: the first Ready condition decides
        if c.get("type") == "Ready":
            return "Current" if c.get("status") == "True" else "InProgress"
    return "Current"  # no conditions that say otherwise
