"""``aeskit bench-stream``: the streaming AEAD against its floor, its peer and its memory.

Four measurements, each the median of ``--repetitions`` runs in this process,
side by side (a shared machine is noisy: read the ratios, not the absolute
times):

1. one thread, in memory: ``StreamingAEAD.encrypt_file(threads=1)`` against a
   loop of ``AESGCM.encrypt_into`` on the same 1 MiB segments with the same
   ``readinto`` from the same source and the same writes to the same sink
   (``/dev/null``): the format's own cost;
2. two threads: the speed-up of ``encrypt_file(threads=2)`` over one thread,
   beside the speed-up plain ``encrypt_into`` gets from two threads on
   independent 1 MiB buffers (one hot buffer a thread) and on the stream's own
   1 MiB slices (the same memory traffic as the stream): the machine's limits;
3. Tink's Python streaming AEAD (``tink``, if installed) on the same data,
   with ``AES256_GCM_HKDF_1MB`` and with ``AES128_GCM_HKDF_4KB`` (small
   segments: what a call per segment would cost shows here), beside
   ``encrypt_file`` with the same parameters;
4. peak RSS of ``encrypt_file`` on generated input of 1 GiB and 4 GiB to
   ``/dev/null``, each in a fresh process: it must not grow with the size.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from .. import AESGCM
from . import StreamingAEAD
from .format import TAG

MiB = 1 << 20
SEG = MiB  # Tink's AES256_GCM_HKDF_1MB


class Generated(io.RawIOBase):
    """size bytes of a repeating 1 MiB pattern, produced on demand (nothing stored)."""

    def __init__(self, size: int) -> None:
        self.left = size
        self.pattern = bytes(range(256)) * (MiB // 256)

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        mv = memoryview(b).cast("B")
        n = min(len(mv), self.left)
        done = 0
        while done < n:
            k = min(n - done, MiB)
            mv[done:done + k] = self.pattern[:k]
            done += k
        self.left -= n
        return n


class NullSink(io.RawIOBase):
    """Discards what it is given (Tink's stream wants a file object it may close)."""

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        return len(memoryview(b))


def add_command(sub: Any) -> None:
    p = sub.add_parser("bench-stream", help="benchmark the streaming AEAD (encrypt_file)",
                       description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", type=int, default=1024, metavar="MiB",
                   help="in-memory stream for the throughput rows (default 1024 MiB)")
    p.add_argument("--repetitions", type=int, default=5, metavar="N")
    p.add_argument("--rss-sizes", default="1,4", metavar="GiB,...",
                   help="generated input sizes for the peak-RSS rows (default 1,4; '' skips)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--rss-child", type=float, help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def _plain_loop(gcm: AESGCM, data: bytes, sink: Any, first: int) -> None:
    """The floor: the same readinto, the same in-place seal, the same writes, no format."""
    src = io.BytesIO(data)
    buf = bytearray(SEG)
    mv = memoryview(buf)
    nonce = bytes(12)  # timing only: the output goes to /dev/null
    n = src.readinto(mv[:first])
    while True:
        gcm.encrypt_into(nonce, mv[:n], None, mv[:n + TAG])
        sink.write(mv[:n + TAG])
        n = src.readinto(mv[:SEG - TAG])
        if not n:
            return


def _plain_threads(gcm: AESGCM, nbuf: int, threads: int) -> None:
    """encrypt_into on independent 1 MiB buffers, nbuf of them split over threads."""
    def work(k: int) -> None:
        buf = bytearray(SEG)
        mv = memoryview(buf)
        for _ in range(k):
            gcm.encrypt_into(bytes(12), mv[:SEG - TAG], None, mv)
    per = [nbuf // threads + (1 if i < nbuf % threads else 0) for i in range(threads)]
    ts = [threading.Thread(target=work, args=(k,)) for k in per]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def _plain_slices(gcm: AESGCM, data: bytes, threads: int) -> None:
    """encrypt_into over the stream's own 1 MiB slices, every threads-th one a thread,
    each thread sealing into one output buffer of its own."""
    mv = memoryview(data)
    n = len(data) // SEG

    def work(t: int) -> None:
        out = memoryview(bytearray(SEG + TAG))
        for i in range(t, n, threads):
            gcm.encrypt_into(bytes(12), mv[i * SEG:(i + 1) * SEG], None, out)
    ts = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def _peak_rss() -> int:
    """This process's peak RSS in bytes. Linux's ru_maxrss survives exec (it would count
    the parent that started this process), so VmHWM from /proc comes first."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _rss_child(gib: float) -> None:
    sa = StreamingAEAD(bytes(32))
    with open(os.devnull, "wb", buffering=0) as sink:
        sa.encrypt_file(Generated(int(gib * (1 << 30))), sink)
    print(_peak_rss())


def _rss(gib: float) -> int:
    out = subprocess.run([sys.executable, "-m", "aeskit", "bench-stream", "--rss-child",
                          str(gib)], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def _pinned(fn: Callable[[], None], cpu: int | None) -> Callable[[], None]:
    """fn run on one CPU (Linux): the one-thread rows share it, so a neighbour that slows
    one vCPU slows both sides of their ratio alike."""
    if cpu is None:
        return fn

    def go() -> None:
        allowed = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {cpu})
        try:
            fn()
        finally:
            os.sched_setaffinity(0, allowed)
    return go


def measure(size_mib: int, reps: int, rss_sizes: list[float]) -> dict[str, Any]:
    size = size_mib * MiB
    data = Generated(size).read()
    assert data is not None
    key = bytes(range(32))
    sa = StreamingAEAD(key)
    sa4k = StreamingAEAD(key, segment_size=4096, derived_key_size=16)  # AES128_GCM_HKDF_4KB
    gcm = AESGCM(key)
    first = SEG - sa.header_length - TAG
    nbuf = size // SEG
    cpu = min(os.sched_getaffinity(0)) if hasattr(os, "sched_setaffinity") else None
    res: dict[str, Any] = {"size_mib": size_mib, "repetitions": reps,
                           "backend": gcm.backend, "cpus": os.cpu_count()}
    with open(os.devnull, "wb", buffering=0) as sink:
        def stream(threads: int | None, s: StreamingAEAD = sa) -> Callable[[], None]:
            def go() -> None:
                s.encrypt_file(io.BytesIO(data), sink, threads=threads)
            return go
        runs: dict[str, Callable[[], None]] = {
            "loop": _pinned(lambda: _plain_loop(gcm, data, sink, first), cpu),
            "s1": _pinned(stream(1), cpu),
            "s2": stream(2),
            "p1": lambda: _plain_threads(gcm, nbuf, 1),
            "p2": lambda: _plain_threads(gcm, nbuf, 2),
            "q1": lambda: _plain_slices(gcm, data, 1),
            "q2": lambda: _plain_slices(gcm, data, 2),
            "all": stream(os.cpu_count() or 1),
            "s1_4k": _pinned(stream(1, sa4k), cpu),
            "all_4k": stream(None, sa4k),
        }
        try:
            import tink  # type: ignore[import-untyped, import-not-found]
            from tink import streaming_aead  # type: ignore[import-untyped, import-not-found]
        except ImportError:
            tink = None
        if tink is not None:
            streaming_aead.register()
            templates = streaming_aead.streaming_aead_key_templates

            def tink_run(template: Any) -> Callable[[], None]:
                prim = tink.new_keyset_handle(template).primitive(streaming_aead.StreamingAead)

                def go() -> None:
                    with prim.new_encrypting_stream(NullSink(), b"") as w:
                        mv = memoryview(data)
                        for i in range(0, size, SEG):
                            w.write(mv[i:i + SEG])
                return go
            runs["tink"] = _pinned(tink_run(templates.AES256_GCM_HKDF_1MB), cpu)
            runs["tink_4k"] = _pinned(tink_run(templates.AES128_GCM_HKDF_4KB), cpu)
        # interleaved: every repetition times every row once, so a slow spell of the
        # machine lands on all of them rather than on one row's block
        times: dict[str, list[float]] = {k: [] for k in runs}
        for _ in range(reps):
            for k, fn in runs.items():
                t = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t)
    med = {k: statistics.median(v) for k, v in times.items()}

    def ratio(a: str, b: str) -> float:
        """The median over repetitions of time[a] / time[b]."""
        return statistics.median(x / y for x, y in zip(times[a], times[b]))
    res["plain_encrypt_into_1t_mibs"] = size_mib / med["loop"]
    res["stream_1t_mibs"] = size_mib / med["s1"]
    res["stream_1t_vs_plain"] = ratio("loop", "s1")
    res["stream_2t_mibs"] = size_mib / med["s2"]
    res["stream_2t_speedup"] = ratio("s1", "s2")
    res["plain_buffers_2t_speedup"] = ratio("p1", "p2")
    res["speedup_ratio"] = res["stream_2t_speedup"] / res["plain_buffers_2t_speedup"]
    res["plain_slices_2t_speedup"] = ratio("q1", "q2")
    res["speedup_ratio_slices"] = res["stream_2t_speedup"] / res["plain_slices_2t_speedup"]
    res["stream_4k_1t_mibs"] = size_mib / med["s1_4k"]
    res["stream_4k_all_mibs"] = size_mib / med["all_4k"]
    res["tink_mibs"] = size_mib / med["tink"] if "tink" in med else None
    res["tink_4k_mibs"] = size_mib / med["tink_4k"] if "tink_4k" in med else None
    if "tink" in med:
        res["stream_1t_vs_tink"] = ratio("tink", "s1")
        res["stream_all_cores_vs_tink"] = ratio("tink", "all")
        res["stream_4k_1t_vs_tink"] = ratio("tink_4k", "s1_4k")
        res["stream_4k_all_cores_vs_tink"] = ratio("tink_4k", "all_4k")
    res["peak_rss_mib"] = {f"{g:g} GiB": _rss(g) / MiB for g in rss_sizes}
    return res


def run(args: argparse.Namespace) -> int:
    if args.rss_child is not None:
        _rss_child(args.rss_child)
        return 0
    sizes = [float(s) for s in args.rss_sizes.split(",") if s.strip()]
    r = measure(args.size, args.repetitions, sizes)
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(f"aeskit bench-stream: {r['size_mib']} MiB in memory, 1 MiB segments, backend "
          f"{r['backend']}, {r['cpus']} CPUs, medians of {r['repetitions']} (shared machines "
          "are noisy: read the ratios)")
    print(f"  AESGCM.encrypt_into loop, 1 thread   {r['plain_encrypt_into_1t_mibs']:9.0f} MiB/s")
    print(f"  encrypt_file, 1 thread               {r['stream_1t_mibs']:9.0f} MiB/s  "
          f"{r['stream_1t_vs_plain']:.2f}x the loop")
    print(f"  encrypt_file, 2 threads              {r['stream_2t_mibs']:9.0f} MiB/s  "
          f"speed-up {r['stream_2t_speedup']:.2f}x (plain buffers: "
          f"{r['plain_buffers_2t_speedup']:.2f}x; ratio {r['speedup_ratio']:.2f})")
    print(f"{'':39}{'':9}         (plain over the stream's slices: "
          f"{r['plain_slices_2t_speedup']:.2f}x; ratio {r['speedup_ratio_slices']:.2f})")
    if r["tink_mibs"] is None:
        print("  tink streaming AEAD                  not installed (pip install "
              "'aeskit[interop]')")
    else:
        print(f"  tink streaming AEAD (Python)         {r['tink_mibs']:9.0f} MiB/s  "
              f"encrypt_file is {r['stream_1t_vs_tink']:.1f}x (1 thread), "
              f"{r['stream_all_cores_vs_tink']:.1f}x (all cores)")
    print("  AES128_GCM_HKDF_4KB (4 KiB segments):")
    print(f"    encrypt_file, 1 thread             {r['stream_4k_1t_mibs']:9.0f} MiB/s")
    print(f"    encrypt_file, all cores            {r['stream_4k_all_mibs']:9.0f} MiB/s")
    if r["tink_4k_mibs"] is not None:
        print(f"    tink streaming AEAD (Python)       {r['tink_4k_mibs']:9.0f} MiB/s  "
              f"encrypt_file is {r['stream_4k_1t_vs_tink']:.1f}x (1 thread), "
              f"{r['stream_4k_all_cores_vs_tink']:.1f}x (all cores)")
    for k, v in r["peak_rss_mib"].items():
        print(f"  peak RSS, encrypt_file of {k:>7} generated input: {v:7.1f} MiB")
    return 0
