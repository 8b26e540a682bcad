"""`fabricgen krm`: the FabricGenerator KRM function (exec mode, for kpt and kustomize).

Reads a ResourceList on stdin and writes one on stdout: the input items, less
what an earlier run of the same FabricGenerator generated, plus the zone's
objects. Problems become `results` (kpt prints them) and human lines on stderr
(kustomize shows only stderr), and the exit code is non-zero on any error, since
kpt and kustomize decide pass or fail by the exit code alone (1 for an invalid
fabric, 2 for a bad functionConfig or zone).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

from fabricgen import report
from fabricgen.delivery import krm_function as fg
from fabricgen.delivery import resource_list as rl
from fabricgen.errors import FabricgenError, InvalidFabricError


def run(*, stdin: TextIO) -> int:
    resources = rl.read(rl.read_input(stdin))
    config: fg.GeneratorConfig | None = None
    generated: list[dict[str, Any]] = []
    code = 0
    try:
        config = fg.read_config(resources.function_config, Path.cwd())
        generated, warnings = fg.generate(config)
        for w in warnings:
            _report(resources, rl.diagnostic_result(w, report.text_line(w)))
    except InvalidFabricError as exc:
        code = exc.exit_code
        for d in exc.diagnostics:
            _report(resources, rl.diagnostic_result(d, report.text_line(d)))
        sys.stderr.write(f"fabricgen: {report.summary(exc.diagnostics)}; nothing generated\n")
    except FabricgenError as exc:
        code = exc.exit_code
        ref = config.ref if config else None
        _report(resources, rl.error_result(str(exc), ref, config.file if config else None))
    if config is not None and code == 0:
        resources.items = [i for i in resources.items if not fg.previous_output(i, config)]
    sys.stdout.write(rl.dump(resources, generated))
    return code


def _report(resources: rl.ResourceList, result: dict[str, Any]) -> None:
    resources.results.append(result)
    sys.stderr.write(f"fabricgen: {result['severity']}: {result['message']}\n")
