"""The ``aeskit`` command: ``info`` (what this CPU and build offer) and ``bench``;
``keygen``, ``encrypt``, ``decrypt`` and ``bench-stream`` (files in Tink's streaming format)
are registered from aeskit.streaming.cli.

``info --json`` gives the same facts as data, for scripts and bug reports.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections.abc import Sequence
from typing import Any

import aeskit


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def info_dict() -> dict[str, Any]:
    """What ``aeskit info`` prints, as JSON-ready data."""
    info = aeskit.backends()
    return {
        "version": aeskit.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpu": {"model": _cpu_model(), "features": aeskit.cpu_features()},
        "backends": {"all": list(info.all), "available": list(info.available),
                     "default": info.default},
    }


def cmd_info(args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps(info_dict(), indent=2))
        return 0
    info = aeskit.backends()
    feats = aeskit.cpu_features()
    print(f"aeskit {aeskit.__version__} (Python {platform.python_version()}, {platform.machine()})")
    print(f"cpu: {_cpu_model()}")
    print("features: " + " ".join(f"{n}{'' if ok else '(no)'}" for n, ok in feats.items()))
    print("backends:")
    for name in info.all:
        state = "available" if name in info.available else "not available on this CPU"
        mark = " (default)" if name == info.default else ""
        print(f"  {name:<12} {state}{mark}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="aeskit", description="AES at the speed of the hardware")
    parser.add_argument("--version", action="version", version=f"aeskit {aeskit.__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    p_info = sub.add_parser("info", help="CPU features, backends and the default")
    p_info.add_argument("--json", action="store_true",
                        help="print version, Python, machine, CPU and backends as JSON")
    p_info.set_defaults(func=cmd_info)
    p_bench = sub.add_parser(
        "bench",
        help="speed by mode, key size, backend and data length, beside the peers",
        description="Benchmark aeskit with libgcrypt's bench-slope method: many buffer sizes, "
        "a least-squares line, slope as ns/B, MiB/s and cycles/B at the measured clock, "
        "intercept as the fixed cost per call. Peers (pyca/cryptography, pycryptodome) run "
        "interleaved in the same run. Numbers from a shared machine are noisy: compare "
        "medians and ratios measured side by side.",
    )
    from .bench import add_arguments, run

    add_arguments(p_bench)
    p_bench.set_defaults(func=lambda args: run(args, p_bench))
    from .streaming.cli import add_commands

    add_commands(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
