"""The progress line on stderr: where a long run is, and how long it has left.

On a terminal it is one line rewritten in place; otherwise (a log, a pipe)
one line per operation, so logs stay readable. stdout never sees it, so
``--json`` and ``--csv`` output stays clean. The share done and the time
left count work: cells (one target timed at one size), which the budget
(measure.Budget) shares the run's time over, not operations, whose cost
differs a hundredfold between a short series and a by-length sweep.
"""

from __future__ import annotations

import sys
import time
from typing import Protocol, TextIO


class Work(Protocol):
    """What the progress line asks the budget: the time left at the rate so far."""

    def eta_ns(self, elapsed_ns: int) -> int: ...


def clock_text(seconds: float) -> str:
    """75.2 -> '1m15s', 8.4 -> '8s'."""
    s = max(0, round(seconds))
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


class Progress:
    def __init__(self, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled
        self.tty = enabled and self.stream.isatty()
        self.start = time.monotonic()
        self.total = 0
        self.done_cells = 0
        self.work: Work | None = None
        self.label = ""
        self._last = 0.0
        self._width = 0

    def start_work(self, total_cells: int, work: Work | None = None) -> None:
        """The run's planned cells, and the budget that estimates the time left."""
        self.total = total_cells
        self.work = work

    def advance(self, cells: int) -> None:
        self.done_cells += cells

    def _status(self) -> str:
        elapsed = time.monotonic() - self.start
        share = min(1.0, self.done_cells / self.total) if self.total else 0.0
        text = f"{share:4.0%} {clock_text(elapsed)}"
        if self.work is not None and self.done_cells:
            text += f", about {clock_text(self.work.eta_ns(int(elapsed * 1e9)) / 1e9)} left"
        return text

    def begin(self, label: str) -> None:
        """A new group of timings starts."""
        self.label = label
        if not self.enabled:
            return
        if self.tty:
            self._show(f"[{self._status()}] {label}", force=True)
        else:
            self.stream.write(f"[{self._status()}] {label}\n")
            self.stream.flush()

    def step(self, detail: str) -> None:
        """Within a group (a repetition done, a clock retry); terminals only."""
        if self.tty:
            self._show(f"[{self._status()}] {self.label}: {detail}")

    def _show(self, text: str, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < 0.1:
            return
        self._last = now
        pad = max(0, self._width - len(text))
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self._width = len(text)

    def clear(self) -> None:
        if self.tty and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0

    def note(self, text: str) -> None:
        """A message that must stay visible (a clock that would not settle)."""
        if not self.enabled:
            return
        self.clear()
        self.stream.write(text + "\n")
        self.stream.flush()

    def done(self, interrupted: bool = False) -> None:
        if self.enabled:
            self.clear()
            took = clock_text(time.monotonic() - self.start)
            self.stream.write(f"benchmark interrupted after {took}: the results so far\n"
                              if interrupted else f"benchmark done in {took}\n")
            self.stream.flush()
