"""The progress line on stderr: where a long run is, and how long it has taken.

On a terminal it is one line rewritten in place; otherwise (a log, a pipe)
one line per operation, so logs stay readable. stdout never sees it, so
``--json`` and ``--csv`` output stays clean.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    def __init__(self, total: int, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = enabled and self.stream.isatty()
        self.start = time.monotonic()
        self.index = 0
        self.label = ""
        self._last = 0.0
        self._width = 0

    def _elapsed(self) -> str:
        return f"{time.monotonic() - self.start:5.1f}s"

    def begin(self, label: str) -> None:
        """A new operation group starts."""
        self.index += 1
        self.label = label
        if not self.enabled:
            return
        if self.tty:
            self._show(f"[{self.index}/{self.total}] {label}", force=True)
        else:
            self.stream.write(f"[{self.index}/{self.total}] {label} ({self._elapsed()})\n")
            self.stream.flush()

    def step(self, detail: str) -> None:
        """Within a group (a repetition done, a clock retry); terminals only."""
        if self.tty:
            self._show(f"[{self.index}/{self.total}] {self.label}: {detail}")

    def _show(self, text: str, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        line = f"{text}  {self._elapsed()}"
        pad = max(0, self._width - len(line))
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()
        self._width = len(line)

    def note(self, text: str) -> None:
        """A message that must stay visible (a clock that would not settle)."""
        if not self.enabled:
            return
        if self.tty:
            self.stream.write("\r" + " " * self._width + "\r")
            self._width = 0
        self.stream.write(text + "\n")
        self.stream.flush()

    def done(self) -> None:
        if self.enabled:
            if self.tty:
                self.stream.write("\r" + " " * self._width + "\r")
            self.stream.write(f"benchmark done in {self._elapsed().strip()}\n")
            self.stream.flush()
