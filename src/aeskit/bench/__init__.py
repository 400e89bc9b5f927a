"""``aeskit bench``: AES speed by mode, key size, backend and data length.

The method is libgcrypt's bench-slope: time many buffer sizes, fit a line,
report the slope (ns/B, MiB/s, cycles/B at the measured clock) and the
intercept (the fixed cost of a call). Two layers are timed separately, the C
kernel and the Python API, and the peer libraries run interleaved with aeskit
in the same run so that drift in clock or load touches all of them alike.
See DESIGN.md section 6 and ``aeskit bench --help``.
"""

from __future__ import annotations

from .anomaly import Anomaly, find_anomalies
from .command import add_arguments, run
from .stats import Fit, fit_line

__all__ = ["Anomaly", "Fit", "add_arguments", "find_anomalies", "fit_line", "run"]
