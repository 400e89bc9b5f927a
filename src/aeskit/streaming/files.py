"""Whole files on several cores: ``StreamingAEAD.encrypt_file`` and ``decrypt_file``.

The segments are sealed or opened in runs, one C call a run, on worker
threads (``_Pipeline``), and written in order by the calling thread, with
memory bounded by threads + 2 run buffers. A path output is an ``AtomicFile``
(``output.py``): it has no name until it is complete.
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import queue
import signal
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from .. import AESGCM, InvalidTag, LimitExceeded
from .format import (
    MAX_SEGMENTS,
    TAG,
    _bad_segment,
    _run_of,
    _stream_open,
    _stream_seal,
)
from .output import AtomicFile, same_file
from .streams import DecryptingReader, _read_full

if TYPE_CHECKING:
    from . import StreamingAEAD


def _run_file(sa: StreamingAEAD, src: Any, dst: Any, aad: bytes, threads: int | None,
              progress: Callable[[int], None] | None, encrypt: bool) -> int:
    if threads is None:
        # the cores this process may run on (a container or taskset may allow fewer)
        threads = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                   else os.cpu_count() or 1)
    if not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive int, got {threads!r}")
    with contextlib.ExitStack() as stack:
        if isinstance(src, (str, bytes, os.PathLike)):
            src = stack.enter_context(open(src, "rb", buffering=0))
        if same_file(src, dst):
            raise ValueError(f"src and dst are the same file: {_name_of(dst)}")
        if isinstance(dst, (str, bytes, os.PathLike)):
            out = stack.enter_context(AtomicFile(dst, replace=True)).file
        else:
            out = dst
        if encrypt:
            n = _encrypt_segments(sa, src, out, aad, threads, progress)
        else:
            n = _decrypt_segments(sa, src, out, aad, threads, progress)
        flush = getattr(out, "flush", None)
        if flush is not None:
            flush()
        return n


def _name_of(f: Any) -> str:
    if isinstance(f, (str, bytes, os.PathLike)):
        return os.fsdecode(f)
    return str(getattr(f, "name", f))


def _write_all(f: Any, mv: memoryview) -> None:
    while len(mv):
        k = f.write(mv)
        mv = mv[k if k is not None else 0:]


#: signals the kernel sends to a thread of its own choosing rather than to the thread
#: that caused them (all but the synchronous faults)
_ASYNC_SIGNALS = frozenset(getattr(signal, n) for n in (
    "SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGALRM", "SIGUSR1", "SIGUSR2", "SIGCHLD",
    "SIGWINCH", "SIGPIPE") if hasattr(signal, n))


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Threads started in this block never take a process's signal: they inherit a mask
    that holds them, so the kernel gives each to the calling thread. Python runs signal
    handlers in the main thread only; when a worker took one, the main thread, blocked
    in a read of a pipe, was not woken, and a SIGTERM to ``aeskit encrypt - OUT`` waited
    for more input that might never come."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _ASYNC_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class _Pipeline:
    """Segments sealed/opened on worker threads, written in order, a bounded window.

    Jobs go on one queue.SimpleQueue that the N - 1 workers take from; each buffer has
    its own SimpleQueue for the outcome of the job that fills it. This thread, the
    writer, waits for the oldest buffer's outcome and, while it is not there, takes
    jobs from the queue itself: the N threads share the work as they are free, so a
    thread on a slower CPU (a busy neighbour on a VM) takes fewer segments. The queues
    are C code that release the GIL while they wait, so a segment costs a few
    bytecodes besides its seal. With ThreadPoolExecutor (a Future, a Condition and a
    work item a segment, all Python under the GIL) and segment i given to thread
    i mod N, 2 threads sped 1 MiB segments up 1.5-1.6x on 2 cores where independent
    encrypt_into calls got 1.9-2.0x; with these queues and the shared work, 1.8x."""

    def __init__(self, threads: int, size: int, out: Any,
                 progress: Callable[[int], None] | None) -> None:
        self.stop = False
        self.jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.workers = [threading.Thread(target=self._work, daemon=True,
                                         name=f"aeskit-stream-{w}")
                        for w in range(threads - 1)]
        with _signals_held():
            for t in self.workers:
                t.start()
        # one thread: seal, write, next (depth 0, one buffer); more: about one segment
        # a thread in flight besides the one being written (a window of 2 a thread
        # was no faster and spills more of the cache)
        self.depth = threads + 1 if threads > 1 else 0
        self.free = [(bytearray(size), queue.SimpleQueue[Any]()) for _ in range(self.depth + 1)]
        self.next: tuple[bytearray, queue.SimpleQueue[Any]] | None = None
        self.window: collections.deque[tuple[bytearray, queue.SimpleQueue[Any]]] = \
            collections.deque()
        self.out = out
        self.progress = progress

    def _run(self, job: tuple[Callable[[], int], queue.SimpleQueue[Any]]) -> None:
        fn, done = job
        if self.stop:               # closing after a failure: nothing more is wanted
            done.put(0)
            return
        try:
            done.put(fn())
        except Exception as e:      # handed to the writer, which raises it in order
            done.put(e)

    def _work(self) -> None:
        while (job := self.jobs.get()) is not None:
            try:
                self._run(job)
            except BaseException as e:  # the writer waits for an outcome: always one
                job[1].put(e)

    def buffer(self) -> bytearray:
        """The buffer for the next job, which fills it: submit() takes it with the job."""
        if self.next is None:
            if not self.free:
                self.drain_one()
            self.next = self.free.pop()
        return self.next[0]

    def submit(self, fn: Callable[[], int]) -> None:
        slot, self.next = self.next, None
        assert slot is not None, "buffer() first"
        self.window.append(slot)
        if self.workers:
            self.jobs.put((fn, slot[1]))
        else:
            self._run((fn, slot[1]))
        while len(self.window) > self.depth:
            self.drain_one()

    def drain_one(self) -> None:
        buf, done = self.window.popleft()
        while done.empty():
            try:
                job = self.jobs.get_nowait()
            except queue.Empty:
                break
            self._run(job)
        outcome = done.get()
        self.free.append((buf, done))
        if isinstance(outcome, BaseException):
            raise outcome
        _write_all(self.out, memoryview(buf)[:outcome])
        if self.progress is not None:
            self.progress(outcome)

    def drain(self) -> None:
        while self.window:
            self.drain_one()

    def close(self, ok: bool) -> None:
        if not ok:
            self.stop = True
        for _ in self.workers:
            self.jobs.put(None)
        for t in self.workers:
            t.join()
        for buf, _ in list(self.window) + self.free + ([self.next] if self.next else []):
            buf[:] = bytes(len(buf))


def _memory_view(fin: Any) -> tuple[memoryview, int] | None:
    """An in-memory source's bytes from its position on, without a copy, and that
    position: io.BytesIO's buffer. Its segments are then sealed straight from it into
    the output buffers by the sealing threads: a readinto would copy each segment in
    this thread, holding the GIL, and on 2 cores took the second one's gain away
    (encrypt_file with 2 threads ran at 0.9x its 1-thread speed; from the view, 1.6x)."""
    if not isinstance(fin, io.BytesIO):
        return None
    pos = fin.tell()
    # getvalue() hands out the BytesIO's own bytes object, without a copy, where
    # getbuffer() would first copy a buffer the BytesIO shares with the bytes it was
    # made from (io.BytesIO(data)): a whole extra pass over the input
    view = memoryview(fin.getvalue())
    return view[min(pos, len(view)):], pos


def _encrypt_segments(sa: StreamingAEAD, fin: Any, out: Any, aad: bytes, threads: int,
                      progress: Callable[[int], None] | None) -> int:
    k = sa._primary
    header, salt, prefix = k.new_header()
    gcm = k.gcm(salt, aad)
    _write_all(out, memoryview(header))
    mem = _memory_view(fin)
    per = _run_of(k)
    # A buffer: the run's ciphertext, then (a file source, more than one segment a run)
    # its plaintext as read. A one-segment run is sealed in place.
    out_size = per * k.segment_size
    in_size = 0 if per == 1 or mem is not None else per * k.plain + 1
    in_off = out_size if in_size else 0
    pipe = _Pipeline(threads, out_size + in_size, out, progress)
    ok = False
    try:
        # Segment 0 is a run of its own (its plaintext is shorter by the header), then
        # runs of `per`. A file object's run is read with one byte more than it holds:
        # that byte says whether the run holds the last segment, and is carried to the
        # next run. An in-memory one is sealed from its bytes, whose length says which
        # is the last.
        first = sa._first_segment
        i, total, carry = 0, 0, b""
        while True:
            mv = memoryview(pipe.buffer())
            size = k.first_plain if i == 0 else k.plain
            cap = size if i == 0 else per * size
            if mem is not None:
                n = min(cap, len(mem[0]) - total)
                last = total + n == len(mem[0])
                src = mem[0][total:total + n]
            else:
                inp = mv[in_off:]
                c = len(carry)
                inp[:c] = carry
                got = c + _read_full(fin, inp[c:cap + 1])
                last = got <= cap
                n = got if last else cap
                carry = b"" if last else bytes(inp[cap:cap + 1])
                src = inp[:n]
            count = max(1, -(-n // size)) if last else n // size
            if first + i + count - last >= MAX_SEGMENTS:
                raise LimitExceeded("a stream holds at most 2**32 segments")
            pipe.submit(_run_sealer(gcm, prefix, first + i, last, src, mv[:out_size], size))
            total += n
            if last:
                break
            i += count
        pipe.drain()
        ok = True
        if mem is not None:
            fin.seek(mem[1] + total)
        return total
    finally:
        pipe.close(ok)


def _run_sealer(gcm: AESGCM, prefix: bytes, index: int, last: bool, src: memoryview,
                dst: memoryview, size: int) -> Callable[[], int]:
    def seal() -> int:
        return _stream_seal(gcm, prefix, index, last, src, dst, size)
    return seal


def _run_opener(gcm: AESGCM, prefix: bytes, index: int, last: bool, src: memoryview,
                dst: memoryview, size: int, i: int, count: int) -> Callable[[], int]:
    """Opens the run of count segments whose first is segment i of the stream (numbered
    index in the nonces); the first that fails raises InvalidTag naming it."""
    def open_() -> int:
        written, bad = _stream_open(gcm, prefix, index, last, src, dst, size)
        if bad >= 0:
            raise InvalidTag(_bad_segment(i + bad, last and bad == count - 1))
        return int(written)
    return open_


def _failing(exc: BaseException) -> Callable[[], int]:
    """A job that fails in its turn (after the runs before it were checked)."""
    def fail() -> int:
        raise exc
    return fail


def _decrypt_segments(sa: StreamingAEAD, fin: Any, out: Any, aad: bytes, threads: int,
                      progress: Callable[[int], None] | None) -> int:
    # Segment 0 picks the key (one or more trials), in this thread.
    reader = DecryptingReader(sa, fin, aad)
    reader._seq_start()
    k, gcm = reader._key, reader._gcm
    assert k is not None and gcm is not None
    first0 = bytes(reader._plain)
    _write_all(out, memoryview(first0))
    if progress is not None:
        progress(len(first0))
    total = len(first0)
    src = reader._seq
    reader._buf[:] = bytes(len(reader._buf))
    if reader._seq_eof:
        return total
    seg = k.segment_size
    per = _run_of(k)
    cap = per * seg
    # A buffer: the run's plaintext, then its ciphertext as read (with one byte more:
    # does the run hold the last segment?). A one-segment run is opened in place.
    out_size = per * (seg - TAG)
    in_off = 0 if per == 1 else out_size
    pipe = _Pipeline(threads, in_off + cap + 1, out, progress)
    ok = False
    try:
        i = 1
        while True:
            mv = memoryview(pipe.buffer())
            inp = mv[in_off:]
            n = src.fill(inp[:cap + 1])
            last = n <= cap
            if not last:
                src.push(inp[cap:cap + 1])
                n = cap
            count = max(1, -(-n // seg))
            index = sa._first_segment + i
            if index + count - 1 >= MAX_SEGMENTS:
                job = _failing(InvalidTag("segment number past 2**32"))
            else:
                job = _run_opener(gcm, reader._prefix, index, last, inp[:n], mv[:out_size],
                                  seg, i, count)
            pipe.submit(job)
            total += max(n - TAG * count, 0)
            if last:
                break
            i += count
        pipe.drain()
        ok = True
        return total
    finally:
        pipe.close(ok)
