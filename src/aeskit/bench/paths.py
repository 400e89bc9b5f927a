"""The output files (``--json``, ``--csv``, ``--plot``), checked before the run.

A run takes minutes; a path that cannot be written should fail in the first
second, not after the measuring is done and lost. Each path must name a file
(not a directory) in a directory that exists and can be written, and no two
outputs may name the same file, or one would silently overwrite the other.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

STDOUT = "-"


def _path_problem(flag: str, path: str) -> str | None:
    """Why one output path cannot be written; None if it can."""
    if not path:
        return f"{flag}: the file name is empty"
    if os.path.isdir(path):
        return f"{flag}: {path!r} is a directory; give a file name"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.exists(folder):
        return f"{flag}: the directory {folder!r} does not exist"
    if not os.path.isdir(folder):
        return f"{flag}: {folder!r} is not a directory"
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            return f"{flag}: {path!r} is not writable"
    elif not os.access(folder, os.W_OK | os.X_OK):
        return f"{flag}: the directory {folder!r} is not writable"
    return None


def output_problem(outputs: Mapping[str, str | None]) -> str | None:
    """Why these outputs cannot all be written; None if they can.

    ``outputs`` maps each flag to its path, None when the flag is absent and
    ``"-"`` for stdout (neither is checked here).
    """
    seen: dict[str, str] = {}
    for flag, path in outputs.items():
        if path is None or path == STDOUT:
            continue
        problem = _path_problem(flag, path)
        if problem:
            return problem
        same = os.path.normcase(os.path.realpath(path))
        if same in seen:
            return f"{seen[same]} and {flag} both name {path!r}: give each its own file"
        seen[same] = flag
    return None
