"""What gets timed: aeskit on both layers, and the peer libraries.

Every target answers one question, ``time(size, loops)``: nanoseconds for
``loops`` back-to-back calls on ``size`` bytes. The measuring code knows
nothing else about it, which is what lets aeskit and its peers run
interleaved under identical conditions.

- ``kernel``: aeskit's one-shot path looped in C with the GIL released
  (``_aeskit.kernel_time``), no Python per iteration: comparable with
  ``openssl speed``.
- ``api``: aeskit's public ``encrypt_into``/``decrypt_into`` on a reused
  buffer, looped in Python: what a user's call costs. The gap to ``kernel``
  is the cost of the glue.
- peers: pyca/cryptography (OpenSSL) with one reused context and
  ``update_into``, pycryptodome with one reused cipher object and
  ``output=``: their fastest idiomatic calls, also looped in Python.

The AEADs (GCM, OCB3, GCM-SIV, CCM, EAX) time whole messages instead: one call
is a nonce (``AEAD_NONCE_LEN``: 12 bytes where the mode takes them, CCM's 11)
plus ``size`` bytes of data, no associated data, a 16-byte tag. An
encryption writes ciphertext || tag over the data (the buffer has 16 spare
bytes); a decryption reads a valid ciphertext made once per size (in place
would destroy it) into a separate reused buffer, so its working set is
twice the data. Peers: cryptography's one-shot ``encrypt_into`` /
``decrypt_into`` (``encrypt``/``decrypt`` on releases without them),
pycryptodome's ``AES.new(...)`` per message (its objects take one nonce
each) with ``encrypt_and_digest``/``decrypt_and_verify``, ``output=`` where
the mode accepts it (GCM and EAX, not OCB). cryptography has no EAX.

SIV (RFC 5297) takes no nonce argument: its messages carry the same 12-byte
nonce as their one associated-data component, the nonce-based use of RFC
5297 section 3 (the nonce is the last component), so one call is S2V over
that component and ``size`` bytes, and CTR. Its sealed message is the tag,
then the ciphertext: aeskit's encryption in place takes the data at the
start of the buffer, which the glue moves 16 bytes on before the mode runs
(what a user's in-place call costs; the kernel layer has no move). Peers: cryptography's ``AESSIV`` ``encrypt_into``/``decrypt_into``
(``encrypt``/``decrypt`` before 47) with ``[nonce]``, pycryptodome's
``AES.new(key, AES.MODE_SIV, nonce=nonce)`` (which puts the nonce last, the
same S2V input) per message with ``output=``.

CMAC is timed in one direction, per whole message of ``size`` bytes, its
16-byte tag returned. ``kernel``: the mode's one-shot MAC looped in C, each
call's tag XORed into the next message's first bytes so that calls cannot
overlap (``_aeskit.kernel_time`` on an AESCMAC object). ``api``:
``AESCMAC.mac(data)``. Peers: cryptography's ``CMAC`` (one object made per
key, ``copy()`` per message, then ``update`` and ``finalize``), and
pycryptodome's ``CMAC.new(key, data, ciphermod=AES).digest()`` per message.

GHASH is timed in one direction on whole blocks, with H from an AES-GCM
key (its speed does not depend on the AES key size). ``kernel``: the
backend's ghash slot alone over ``size`` bytes (``_aeskit.ghash_time``),
one accumulator carried through the calls. ``api`` and peers: GMAC, what a
Python user can do: AES-GCM with a 12-byte nonce, no data and ``size``
bytes of associated data, the 16-byte tag written to a reused buffer
(aeskit's and cryptography's ``encrypt_into``, or ``encrypt`` on
cryptography releases without it; pycryptodome's ``AES.new(...)`` per
message with ``update`` and ``digest``), so each call adds the nonce's
AES block and the tag to the slope's intercept.

XTS's sectors row (``Operation.sector_size``) times ``encrypt_sectors_into``
over 1 to 256 sectors of 4 KiB: ``kernel`` the C sectors path, ``api`` the
public call, beside ``one unit``, the kernel loop over one data unit of the
same length (what the sectors should cost), and cryptography with a new XTS
context per sector, the only way it has.

All buffers are in place where the library accepts it, so the working set is
the data length, and start at a 64-byte boundary plus ``--unaligned``.
Where in its page a buffer starts changes with every timing (``Placement``):
a load of the key schedule that follows a store to an address with the
same low 12 bits waits for it (4K aliasing), which made one 64-byte CBC
decryption take 26 ns or 42 ns depending on where the key object happened
to land, so the same run read 30% apart from one process to the next. With
the offset moving, the median of the repetitions is the typical call.
For the same reason aeskit's targets take turns among a few key objects
(KEY_OBJECTS): where the interpreter puts one decides, against the C stack,
whether its api calls alias, and one 64-byte CBC decryption through
``decrypt_into`` took 140 ns or 185-215 ns by the object alone.
"""

from __future__ import annotations

import ctypes
import importlib
import random
import time
from dataclasses import dataclass
from itertools import repeat
from typing import Any, Callable, Protocol

import aeskit

from .. import _modes
from .system import native

#: The registry's modes the bench times (every block cipher, AEAD and MAC: key wrap has no
#: kernel loop), under their canonical names, and GHASH, the one slot timed on its own: it is
#: no mode of the registry, so the sets below name it by hand.
_TIMED = tuple(m for m in _modes.MODES if m.family != "keywrap")
_FACTS = {m.name: m for m in _TIMED}
GHASH = "GHASH"
MODES = (*(m.name for m in _TIMED if m.family == "cipher"), GHASH,
         *(m.name for m in _TIMED if m.family != "cipher"))
#: Timed on whole blocks: the modes that take only those, and XTS, which takes any length
#: from 16 bytes, but whose data unit of whole blocks is what a disk sector is (stealing
#: adds a block at most).
WHOLE_BLOCK_MODES = frozenset(
    {GHASH, *(m.name for m in _TIMED if m.family == "cipher" and (m.whole_blocks or m.sectors))})
#: Modes keyed with two AES keys of the row's size (the key is twice as long), and the
#: sizes they have where not all three.
TWO_KEY_MODES = frozenset(m.name for m in _TIMED if m.n_keys == 2)
MODE_KEY_BITS = {m.name: tuple(8 * k // m.n_keys for k in m.key_sizes) for m in _TIMED
                 if len(m.key_sizes) != 3}
#: The AEADs, timed per whole message (module docstring).
AEAD_MODES = frozenset(m.name for m in _TIMED if m.aead)
#: An AEAD's nonce length where the bench picks one other than its rule below. CCM's data
#: limit with a 12-byte nonce, 2^24 - 1 bytes, is below the by-length table's 16 MiB; with
#: 11 bytes (pycryptodome's default) it is 2^32 - 1.
AEAD_NONCE_BYTES = {"CCM": 11}


def _nonce_len(mode: _modes.ModeFacts) -> int:
    """An AEAD row's nonce length: AEAD_NONCE_BYTES, else 12 bytes where the mode takes them
    (and as SIV's associated data), else its shortest."""
    if mode.name in AEAD_NONCE_BYTES:
        return AEAD_NONCE_BYTES[mode.name]
    longest = mode.nonce_max if mode.nonce_max is not None else 12
    return 12 if mode.nonce_name is None or mode.nonce_min <= 12 <= longest else mode.nonce_min


#: Each AEAD row's nonce length.
AEAD_NONCE_LEN = {m.name: _nonce_len(m) for m in _TIMED if m.aead}
#: AEADs with no nonce argument: the nonce is their one associated-data component, and the
#: tag comes before the ciphertext (module docstring).
NONCE_AS_AD_MODES = frozenset(m.name for m in _TIMED if m.aead and m.nonce_name is None)
#: MACs: one direction, a tag per whole message (module docstring).
MAC_MODES = frozenset(m.name for m in _TIMED if m.family == "mac")
#: Timed in one direction only (module docstring).
ONE_WAY_MODES = frozenset({GHASH, *MAC_MODES})
#: Timed once per run, under the first key size: their speed does not depend on it.
ONE_KEY_SIZE_MODES = frozenset({GHASH})
#: Modes with no aeskit class of their own (GHASH is timed through AESGCM).
CLASSLESS_MODES = frozenset({GHASH})
TAG_BYTES = 16
KEY_BITS = (128, 192, 256)
LAYERS = ("kernel", "api")
PEERS = ("cryptography", "pycryptodome")
#: What installs the peers; the error for a missing one and the report quote it.
PEER_EXTRA = "pip install 'aeskit[bench]'"
ALIGN = 64
#: The sectors row (XTS): sectors of this size, the default of encrypt_sectors and the
#: page size of common file systems; its series runs from 1 to 256 of them (1 MiB).
SECTOR_SIZE = 4096
SECTOR_COUNTS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def _mode_aliases() -> dict[str, str]:
    """Every accepted ``--modes`` name, upper case, to its mode in MODES: each mode's own
    name, without hyphens, its aeskit class name and its aliases (``_modes.names_of``).
    GHASH is no mode a user encrypts with (no AESGHASH class): its name alone."""
    aliases = {GHASH: GHASH}
    for m in _TIMED:
        for alias in _modes.names_of(m):
            assert aliases.get(alias, m.name) == m.name, alias
            aliases[alias] = m.name
    return aliases


#: Upper-case name or alias -> mode; look a name up with ``name.upper()``.
MODE_ALIASES = _mode_aliases()


@dataclass(frozen=True)
class Operation:
    """One row of the slope table: mode, direction and key size."""

    mode: str
    encrypt: bool
    key_bits: int
    #: XTS's sectors row: calls of whole sectors of this many bytes (0: one data unit)
    sector_size: int = 0

    @property
    def direction(self) -> str | None:
        """"enc" or "dec"; None for a mode with one direction (GHASH)."""
        if self.one_way:
            return None
        return "enc" if self.encrypt else "dec"

    @property
    def label(self) -> str:
        mode = f"{self.mode} sectors" if self.sector_size else self.mode
        return f"{mode} {self.direction}" if self.direction else mode

    def one_unit(self) -> Operation:
        """The same operation on one data unit: what the sectors row compares with."""
        return Operation(self.mode, self.encrypt, self.key_bits)

    @property
    def algo(self) -> str:
        return f"AES-{self.key_bits}"

    @property
    def whole_blocks(self) -> bool:
        return self.mode in WHOLE_BLOCK_MODES

    @property
    def aead(self) -> bool:
        return self.mode in AEAD_MODES

    @property
    def one_way(self) -> bool:
        return self.mode in ONE_WAY_MODES

    @property
    def nonce(self) -> bytes:
        """An AEAD row's nonce: the first AEAD_NONCE_LEN[mode] bytes of NONCES."""
        return NONCES[:AEAD_NONCE_LEN.get(self.mode, len(NONCE))]

    @property
    def mac(self) -> bool:
        return self.mode in MAC_MODES

    def key(self) -> bytes:
        """The row's key: for XTS two AES keys, which must differ."""
        n = self.key_bits // 8 * (2 if self.mode in TWO_KEY_MODES else 1)
        return bytes(range(n))


IV = bytes(range(0xF0, 0x100))
#: The bytes the AEADs' nonces are the first of: the same ones aeskit's C kernel uses
#: (py/bench.c: bench_nonce), IV and then on.
NONCES = bytes((0xF0 + i) % 256 for i in range(32))
#: The usual 12-byte nonce (GMAC's in the GHASH rows).
NONCE = NONCES[:12]


PAGE = 4096
#: Key objects each aeskit target takes turns among (module docstring).
KEY_OBJECTS = 4


class Placement:
    """Where the next timing's buffers start in their page (one of 64 offsets a cache
    line apart) and which key object it uses, drawn at random from a fixed seed:
    a cycle would line up with the sizes of a group (72 sizes and 4 objects: each
    size would meet the same object in every repetition)."""

    def __init__(self) -> None:
        self._rng = random.Random(0x5EED)
        self.offset = 0
        self.index = 0

    def next(self) -> int:
        """Move on; the new page offset (also in .offset), its key object in .index."""
        self.offset = self._rng.randrange(PAGE // ALIGN) * ALIGN
        self.index = self._rng.randrange(KEY_OBJECTS)
        return self.offset


def aligned(size: int, offset: int) -> memoryview:
    """A writable buffer of size bytes at a 64-byte boundary plus offset."""
    raw = bytearray(size + 2 * ALIGN)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(raw))
    start = (-addr) % ALIGN + offset
    view = memoryview(raw)[start:start + size]
    for i in range(0, size, 4096):  # touch every page so the first timing does not fault
        view[i] = 0x55
    return view


class Target(Protocol):
    """A thing to time; see the module docstring."""

    impl: str      # "aeskit", "cryptography", "pycryptodome"
    backend: str   # aeskit backend, or the peer's engine
    layer: str     # "kernel" or "api"
    in_place: bool

    @property
    def name(self) -> str: ...

    def prepare(self, max_size: int) -> None: ...

    def time(self, size: int, loops: int) -> int: ...

    def release(self) -> None: ...


def _aeskit_class(mode: str) -> Any:
    """The aeskit class that times mode: its own, or AESGCM's for GHASH."""
    return getattr(aeskit, _FACTS["GCM" if mode == GHASH else mode].class_name)


def _aead_ciphertexts(op: Operation, offset: int) -> Callable[[int], memoryview]:
    """size -> a valid ciphertext || tag of size bytes of data under op's key and nonce,
    made once per size (by aeskit's default backend) in an aligned buffer."""
    cipher = _aeskit_class(op.mode)(op.key())
    made: dict[int, memoryview] = {}

    def get(size: int) -> memoryview:
        if size not in made:
            buf = aligned(size + TAG_BYTES, offset)
            if op.mode in NONCE_AS_AD_MODES:  # tag || ciphertext
                cipher.encrypt_into(bytes(buf[:size]), [op.nonce], buf)
            else:
                cipher.encrypt_into(op.nonce, buf[:size], None, buf)
            made[size] = buf
        return made[size]
    return get


class KernelTarget:
    """aeskit's C loop: one-shot calls in place, GIL released, timed in C."""

    layer = "kernel"
    impl = "aeskit"
    in_place = True

    def __init__(self, op: Operation, backend: str, offset: int) -> None:
        self.op = op
        self.ciphers = [_aeskit_class(op.mode)(op.key(), backend=backend)
                        for _ in range(KEY_OBJECTS)]
        self.backend = str(self.ciphers[0].backend)
        self.offset = offset
        self._place = Placement()
        self._kernel_time = native().kernel_time
        self._ghash_time = native().ghash_time

    @property
    def name(self) -> str:
        return f"{self.backend} kernel"

    def prepare(self, max_size: int) -> None:
        """Nothing: kernel_time allocates and fills its own buffer per call."""

    def time(self, size: int, loops: int) -> int:
        offset = self.offset + self._place.next()
        cipher = self.ciphers[self._place.index]
        if self.op.mode == GHASH:
            return int(self._ghash_time(cipher, size, loops, offset))
        if self.op.sector_size:
            return int(self._kernel_time(cipher, self.op.encrypt, size, loops, offset,
                                         self.op.sector_size))
        if self.op.aead:
            return int(self._kernel_time(cipher, self.op.encrypt, size, loops, offset,
                                         len(self.op.nonce)))
        return int(self._kernel_time(cipher, self.op.encrypt, size, loops, offset))

    def release(self) -> None:
        """Nothing held between calls."""


class OneUnitTarget(KernelTarget):
    """The sectors row's yardstick: aeskit's C loop over one data unit as long as all
    the sectors of a call together (the issue: sectors at the speed of one unit)."""

    layer = "one unit"

    def __init__(self, op: Operation, backend: str, offset: int) -> None:
        super().__init__(op.one_unit(), backend, offset)

    @property
    def name(self) -> str:
        return f"{self.backend} one unit"


class _PeerTarget:
    """What a peer library's api-layer target shares: the library and backend it times,
    its buffers' page offset, where each timing places its data, and the name the
    report shows (the library's)."""

    layer = "api"

    def __init__(self, impl: str, backend: str, offset: int) -> None:
        self.impl = impl
        self.backend = backend
        self.offset = offset
        self._buf: memoryview | None = None
        self._place = Placement()

    @property
    def name(self) -> str:
        return self.impl

    def release(self) -> None:
        self._buf = None


class _SectorsPeerTarget(_PeerTarget):
    """cryptography's way to do what encrypt_sectors does: a new XTS context per
    sector (a context's tweak is fixed), ``update_into`` in place (into a second
    buffer where cryptography refuses overlap: 51 on), in a Python loop."""

    def __init__(self, op: Operation, offset: int) -> None:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
        from cryptography.hazmat.primitives.ciphers import modes as std

        super().__init__("cryptography", _openssl_backend(), offset)
        self.op = op
        self.in_place = _pyca_overlaps()
        self._out: memoryview | None = None
        algo = algorithms.AES(op.key())
        make = ((lambda c: c.encryptor()) if op.encrypt else (lambda c: c.decryptor()))
        # sector i's context factory, made ahead: the loop times what a user's must do
        self._tweaks = [i.to_bytes(16, "little") for i in range(max(SECTOR_COUNTS))]
        self._new = lambda tweak: make(Cipher(algo, std.XTS(tweak)))

    def prepare(self, max_size: int) -> None:
        self._buf = aligned(max_size + PAGE, self.offset)
        self._out = self._buf if self.in_place else aligned(max_size + PAGE, self.offset)

    def time(self, size: int, loops: int) -> int:
        assert self._buf is not None and self._out is not None
        at = self._place.next()
        unit = self.op.sector_size
        triples = [(tweak, self._buf[at + i:at + i + unit], self._out[at + i:at + i + unit])
                   for tweak, i in zip(self._tweaks, range(0, size, unit))]
        new = self._new
        t0 = time.perf_counter_ns()
        for _ in repeat(None, loops):
            for tweak, view, out in triples:
                new(tweak).update_into(view, out)
        return time.perf_counter_ns() - t0

    def release(self) -> None:
        self._buf = self._out = None


class ApiTarget:
    """aeskit's public API: encrypt_into/decrypt_into in place on a reused buffer."""

    layer = "api"
    impl = "aeskit"
    in_place = True

    def __init__(self, op: Operation, backend: str, offset: int) -> None:
        self.op = op
        ciphers = [_aeskit_class(op.mode)(op.key(), backend=backend)
                   for _ in range(KEY_OBJECTS)]
        self.backend = str(ciphers[0].backend)
        self.offset = offset
        if op.sector_size:
            self._fns = [c.encrypt_sectors_into if op.encrypt else c.decrypt_sectors_into
                         for c in ciphers]
        else:
            self._fns = [c.mac if op.mac else c.encrypt_into if op.encrypt else c.decrypt_into
                         for c in ciphers]
        self._buf: memoryview | None = None
        # an AEAD decryption reads a kept ciphertext into a separate buffer
        self.in_place = not op.aead or op.encrypt
        self._ciphertext: Callable[[int], memoryview] | None = None
        self._tag = bytearray(TAG_BYTES)
        self._place = Placement()

    @property
    def name(self) -> str:
        return f"{self.backend} api"

    def prepare(self, max_size: int) -> None:
        self._buf = aligned(max_size + (TAG_BYTES if self.op.aead else 0) + PAGE, self.offset)
        if self.op.aead and not self.op.encrypt:
            self._ciphertext = _aead_ciphertexts(self.op, self.offset)

    def time(self, size: int, loops: int) -> int:
        assert self._buf is not None
        area = self._buf[self._place.next():]
        buf = area[:size]
        fn = self._fns[self._place.index]
        if self.op.mac:  # mac(data) -> tag
            t0 = time.perf_counter_ns()
            for _ in repeat(None, loops):
                fn(buf)
            return time.perf_counter_ns() - t0
        if self.op.mode == GHASH:  # GMAC: encrypt_into(nonce, b"", aad, tag)
            nonce, tag = NONCE, self._tag
            t0 = time.perf_counter_ns()
            for _ in repeat(None, loops):
                fn(nonce, b"", buf, tag)
            return time.perf_counter_ns() - t0
        if self.op.mode in NONCE_AS_AD_MODES:
            ad = [NONCE]
            if self._ciphertext is not None:  # decrypt_into(tag || ct, [nonce], out)
                data, out = self._ciphertext(size), buf
            else:  # encrypt_into(data, [nonce], tag || ct) in place: the glue moves the
                # data by the tag's length first
                data, out = buf, area[:size + TAG_BYTES]
            t0 = time.perf_counter_ns()
            for _ in repeat(None, loops):
                fn(data, ad, out)
            return time.perf_counter_ns() - t0
        if self.op.aead:
            nonce = self.op.nonce
            if self._ciphertext is not None:  # decrypt_into(nonce, ct || tag, None, out)
                data, out = self._ciphertext(size), buf
            else:  # encrypt_into(nonce, data, None, data + 16 bytes): exact overlap
                data, out = buf, area[:size + TAG_BYTES]
            t0 = time.perf_counter_ns()
            for _ in repeat(None, loops):
                fn(nonce, data, None, out)
            return time.perf_counter_ns() - t0
        if self.op.sector_size:  # encrypt_sectors_into(first_sector, buf, buf)
            assert self.op.sector_size == SECTOR_SIZE, "the call passes no sector_size"
            t0 = time.perf_counter_ns()
            for _ in repeat(None, loops):
                fn(0, buf, buf)
            return time.perf_counter_ns() - t0
        if self.op.mode == "ECB":
            t0 = time.perf_counter_ns()
            for _ in repeat(None, loops):
                fn(buf, buf)
            return time.perf_counter_ns() - t0
        # the IV is the last call's final block, as in the kernel loop: each
        # call waits for the one before (the glue reads the IV before writing)
        iv = buf[size - 16:] if size >= 16 else IV
        t0 = time.perf_counter_ns()
        for _ in repeat(None, loops):
            fn(iv, buf, buf)
        return time.perf_counter_ns() - t0

    def release(self) -> None:
        self._buf = None
        self._ciphertext = None


class _UpdateTarget(_PeerTarget):
    """A peer with a reused streaming object whose method writes into a buffer.

    ``call(data, out)`` (or ``call(data, output=out)``) is the peer's fastest
    idiomatic call, made directly in the timing loop with no wrapper. ``in_place`` is
    False when the library wants the output apart (cryptography's ECB/CBC ask
    for 15 spare bytes), which doubles the working set; the anomaly check
    takes that into account.
    """

    def __init__(self, impl: str, backend: str, call: Callable[..., Any], in_place: bool,
                 offset: int, out_slack: int = 0, output_keyword: bool = False) -> None:
        super().__init__(impl, backend, offset)
        self._call = call
        self.output_keyword = output_keyword
        self.in_place = in_place
        self.out_slack = out_slack
        self._out: memoryview | None = None

    def prepare(self, max_size: int) -> None:
        self._buf = aligned(max_size + PAGE, self.offset)
        self._out = (self._buf if self.in_place
                     else aligned(max_size + self.out_slack + PAGE, self.offset))

    def time(self, size: int, loops: int) -> int:
        assert self._buf is not None and self._out is not None
        at = self._place.next()
        data = self._buf[at:at + size]
        out = self._out[at:at + size + (0 if self.in_place else self.out_slack)]
        call = self._call
        if self.output_keyword:  # pycryptodome: encrypt(data, output=out)
            t0 = time.perf_counter_ns()
            for _ in repeat(None, loops):
                call(data, output=out)
            return time.perf_counter_ns() - t0
        t0 = time.perf_counter_ns()
        for _ in repeat(None, loops):
            call(data, out)
        return time.perf_counter_ns() - t0

    def release(self) -> None:
        self._buf = self._out = None


class _AeadPeerTarget(_PeerTarget):
    """A peer's one-shot AEAD call per message (module docstring).

    style ``into``: ``call(nonce, data, None, out)``; ``oneshot``:
    ``call(nonce, data, None)`` returning new bytes; ``pycryptodome``:
    ``new(key, mode, nonce=nonce).METHOD(...)`` with ``output=out`` when
    ``output_keyword``. Each loop is written out so the timed call has no
    wrapper around it.
    """

    def __init__(self, impl: str, backend: str, op: Operation, style: str, call: Any,
                 offset: int, output_keyword: bool = False) -> None:
        super().__init__(impl, backend, offset)
        self.op = op
        self.style = style
        self._call = call
        self.output_keyword = output_keyword
        # encryptions that write over their input; a returned bytes object, or
        # a decryption's output, is a second buffer
        self.in_place = op.encrypt and (style == "into" or output_keyword)
        # The plaintext comes from a second buffer where cryptography cannot write over
        # it: SIV writes tag || ciphertext (over its own output it would read blocks it
        # had overwritten), and cryptography 51 refuses any overlap
        self._src: memoryview | None = None
        if style == "into" and (op.mode in NONCE_AS_AD_MODES or not _pyca_overlaps()):
            self.in_place = False
        self._ciphertext: Callable[[int], memoryview] | None = None

    def prepare(self, max_size: int) -> None:
        self._buf = aligned(max_size + TAG_BYTES + PAGE, self.offset)
        if not self.op.encrypt:
            self._ciphertext = _aead_ciphertexts(self.op, self.offset)
        elif self.style == "into" and not self.in_place:
            self._src = aligned(max_size + PAGE, self.offset)
        # pycryptodome's first GCM message loads its modules and takes over 10 ms,
        # which calibration would keep as a sample of a long call
        self.time(min(max_size, 16), 1)

    def time(self, size: int, loops: int) -> int:
        assert self._buf is not None
        call, nonce = self._call, self.op.nonce
        area = self._buf[self._place.next():]
        if self.op.encrypt:
            data, out = area[:size], area[:size + TAG_BYTES]
            if self.style == "pycryptodome":
                data = out = area[:size]
            elif self._src is not None:
                data = self._src[self._place.offset:self._place.offset + size]
        else:
            assert self._ciphertext is not None
            data, out = self._ciphertext(size), area[:size]
        if self.op.mode in NONCE_AS_AD_MODES and self.style != "pycryptodome":
            ad = [nonce]
            if self.style == "into":
                t0 = time.perf_counter_ns()
                for _ in repeat(None, loops):
                    call(data, ad, out)
                return time.perf_counter_ns() - t0
            t0 = time.perf_counter_ns()
            for _ in repeat(None, loops):
                call(data, ad)
            return time.perf_counter_ns() - t0
        if self.style == "into":
            t0 = time.perf_counter_ns()
            for _ in repeat(None, loops):
                call(nonce, data, None, out)
            return time.perf_counter_ns() - t0
        if self.style == "oneshot":
            t0 = time.perf_counter_ns()
            for _ in repeat(None, loops):
                call(nonce, data, None)
            return time.perf_counter_ns() - t0
        new, key, mode = call
        if self.op.encrypt:  # the tag comes back as bytes: the data is written in place
            if self.output_keyword:
                t0 = time.perf_counter_ns()
                for _ in repeat(None, loops):
                    new(key, mode, nonce=nonce).encrypt_and_digest(data, output=data)
                return time.perf_counter_ns() - t0
            t0 = time.perf_counter_ns()
            for _ in repeat(None, loops):
                new(key, mode, nonce=nonce).encrypt_and_digest(data)
            return time.perf_counter_ns() - t0
        ct, tag = data[:size], bytes(data[size:])
        if self.op.mode in NONCE_AS_AD_MODES:  # tag || ciphertext
            ct, tag = data[TAG_BYTES:], bytes(data[:TAG_BYTES])
        if self.output_keyword:
            t0 = time.perf_counter_ns()
            for _ in repeat(None, loops):
                new(key, mode, nonce=nonce).decrypt_and_verify(ct, tag, output=out)
            return time.perf_counter_ns() - t0
        t0 = time.perf_counter_ns()
        for _ in repeat(None, loops):
            new(key, mode, nonce=nonce).decrypt_and_verify(ct, tag)
        return time.perf_counter_ns() - t0

    def release(self) -> None:
        self._buf = None
        self._ciphertext = None
        self._src = None


class _GmacPeerTarget(_PeerTarget):
    """A peer's GMAC per message: its AES-GCM, no data, size bytes of associated data.

    style ``into``: ``call(nonce, b"", aad, tag)``; ``oneshot``:
    ``call(nonce, b"", aad)`` returning the tag; ``pycryptodome``:
    ``new(key, mode, nonce=nonce).update(aad).digest()``.
    """

    in_place = True  # the associated data is only read

    def __init__(self, impl: str, backend: str, style: str, call: Any, offset: int) -> None:
        super().__init__(impl, backend, offset)
        self.style = style
        self._call = call
        self._tag = bytearray(TAG_BYTES)

    def prepare(self, max_size: int) -> None:
        self._buf = aligned(max_size + PAGE, self.offset)
        self.time(min(max_size, 16), 1)  # first-call costs (module loads) out of calibration

    def time(self, size: int, loops: int) -> int:
        assert self._buf is not None
        at = self._place.next()
        aad, call, nonce, tag = self._buf[at:at + size], self._call, NONCE, self._tag
        if self.style == "into":
            t0 = time.perf_counter_ns()
            for _ in repeat(None, loops):
                call(nonce, b"", aad, tag)
            return time.perf_counter_ns() - t0
        if self.style == "oneshot":
            t0 = time.perf_counter_ns()
            for _ in repeat(None, loops):
                call(nonce, b"", aad)
            return time.perf_counter_ns() - t0
        new, key, mode = call
        t0 = time.perf_counter_ns()
        for _ in repeat(None, loops):
            new(key, mode, nonce=nonce).update(aad).digest()
        return time.perf_counter_ns() - t0

class _MacPeerTarget(_PeerTarget):
    """A peer's MAC per whole message (module docstring).

    style ``copy``: ``base.copy()``, then ``update(data)`` and ``finalize()``
    (cryptography); ``new``: ``new(key, data, ciphermod=aes).digest()``
    (pycryptodome).
    """

    in_place = True  # the data is only read

    def __init__(self, impl: str, backend: str, style: str, call: Any, offset: int) -> None:
        super().__init__(impl, backend, offset)
        self.style = style
        self._call = call

    def prepare(self, max_size: int) -> None:
        self._buf = aligned(max_size + PAGE, self.offset)
        self.time(min(max_size, 16), 1)  # first-call costs (module loads) out of calibration

    def time(self, size: int, loops: int) -> int:
        assert self._buf is not None
        at = self._place.next()
        data = self._buf[at:at + size]
        if self.style == "copy":
            copy = self._call.copy
            t0 = time.perf_counter_ns()
            for _ in repeat(None, loops):
                c = copy()
                c.update(data)
                c.finalize()
            return time.perf_counter_ns() - t0
        new, key, aes = self._call
        t0 = time.perf_counter_ns()
        for _ in repeat(None, loops):
            new(key, data, ciphermod=aes).digest()
        return time.perf_counter_ns() - t0

def _openssl_backend() -> str:
    from cryptography.hazmat.backends.openssl import backend as ossl

    engine = ossl.openssl_version_text().split(" ")
    return " ".join(engine[:2]) if len(engine) >= 2 else "OpenSSL"


def _cryptography_aead(op: Operation, offset: int) -> _AeadPeerTarget | None:
    aead: Any = importlib.import_module("cryptography.hazmat.primitives.ciphers.aead")
    from cryptography.exceptions import UnsupportedAlgorithm

    cls = {"GCM": aead.AESGCM, "OCB3": aead.AESOCB3, "GCM-SIV": aead.AESGCMSIV,
           "CCM": aead.AESCCM, "SIV": aead.AESSIV}.get(op.mode)
    if cls is None:  # an AEAD cryptography lacks (EAX): no row
        return None
    try:
        obj = cls(op.key())
    except UnsupportedAlgorithm:  # OCB3 or GCM-SIV on an OpenSSL without it: no row
        return None
    into = "encrypt_into" if op.encrypt else "decrypt_into"
    if hasattr(obj, into):  # cryptography 47 and later
        return _AeadPeerTarget("cryptography", _openssl_backend(), op, "into",
                               getattr(obj, into), offset)
    return _AeadPeerTarget("cryptography", _openssl_backend(), op, "oneshot",
                           obj.encrypt if op.encrypt else obj.decrypt, offset)


def _pycryptodome_aead(op: Operation, offset: int) -> _AeadPeerTarget | None:
    aes: Any = importlib.import_module("Crypto.Cipher.AES")
    mode = {"GCM": aes.MODE_GCM, "OCB3": aes.MODE_OCB, "CCM": aes.MODE_CCM,
            "EAX": aes.MODE_EAX, "SIV": aes.MODE_SIV}.get(op.mode)
    if mode is None:  # an AEAD pycryptodome lacks (GCM-SIV): no row
        return None
    # encrypt_and_digest / decrypt_and_verify take output= but for OCB's
    return _AeadPeerTarget("pycryptodome", "pycryptodome", op, "pycryptodome",
                           (aes.new, op.key(), mode), offset,
                           output_keyword=op.mode in ("GCM", "CCM", "EAX", "SIV"))


def _cryptography_gmac(op: Operation, offset: int) -> _GmacPeerTarget:
    aead: Any = importlib.import_module("cryptography.hazmat.primitives.ciphers.aead")
    obj = aead.AESGCM(op.key())
    if hasattr(obj, "encrypt_into"):  # cryptography 47 and later
        return _GmacPeerTarget("cryptography", _openssl_backend(), "into", obj.encrypt_into,
                               offset)
    return _GmacPeerTarget("cryptography", _openssl_backend(), "oneshot", obj.encrypt, offset)


def _pycryptodome_gmac(op: Operation, offset: int) -> _GmacPeerTarget:
    aes: Any = importlib.import_module("Crypto.Cipher.AES")
    return _GmacPeerTarget("pycryptodome", "pycryptodome", "pycryptodome",
                           (aes.new, op.key(), aes.MODE_GCM), offset)


def _cryptography_mac(op: Operation, offset: int) -> _MacPeerTarget:
    from cryptography.hazmat.primitives import cmac
    from cryptography.hazmat.primitives.ciphers import algorithms

    return _MacPeerTarget("cryptography", _openssl_backend(), "copy",
                          cmac.CMAC(algorithms.AES(op.key())), offset)


def _pycryptodome_mac(op: Operation, offset: int) -> _MacPeerTarget:
    aes: Any = importlib.import_module("Crypto.Cipher.AES")
    cmac: Any = importlib.import_module("Crypto.Hash.CMAC")
    return _MacPeerTarget("pycryptodome", "pycryptodome", "new", (cmac.new, op.key(), aes),
                          offset)


_PYCA_OVERLAPS: list[bool] = []  # the probe's answer, once per process


def _pyca_overlaps() -> bool:
    """Whether this cryptography writes over its input: ``update_into`` and the AEADs'
    ``encrypt_into`` with the output on the input. Up to 50 they do; 51 raises "data and
    buf must not overlap", so its rows read from one buffer and write to another (and
    count twice the working set, as ``in_place`` False says)."""
    if not _PYCA_OVERLAPS:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        buf = bytearray(32)
        try:
            Cipher(algorithms.AES(bytes(16)), modes.CTR(bytes(16))).encryptor().update_into(
                memoryview(buf)[:16], buf)
            _PYCA_OVERLAPS.append(True)
        except ValueError:
            _PYCA_OVERLAPS.append(False)
    return _PYCA_OVERLAPS[0]


def _cryptography(op: Operation, offset: int) -> _UpdateTarget:
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
    from cryptography.hazmat.primitives.ciphers import modes as std

    try:  # recent cryptography keeps CFB, CFB8 and OFB under hazmat.decrepit
        legacy: Any = importlib.import_module("cryptography.hazmat.decrepit.ciphers.modes")
    except ImportError:  # older releases
        legacy = std
    mode_obj: Any
    if op.mode == "ECB":
        mode_obj = std.ECB()
    elif op.mode == "XTS":  # each update_into is one data unit under the same tweak
        mode_obj = std.XTS(IV)
    elif op.mode == "CBC":
        mode_obj = std.CBC(IV)
    elif op.mode == "CTR":
        mode_obj = std.CTR(IV)
    else:
        mode_obj = getattr(legacy, op.mode)(IV)
    cipher = Cipher(algorithms.AES(op.key()), mode_obj)
    ctx = cipher.encryptor() if op.encrypt else cipher.decryptor()
    # Stream modes take an output exactly as long as the input, so in place
    # works up to cryptography 50; block modes insist on len + 15 bytes of room.
    in_place = (op.mode not in WHOLE_BLOCK_MODES or op.mode == "XTS") and _pyca_overlaps()
    return _UpdateTarget("cryptography", _openssl_backend(), ctx.update_into, in_place, offset,
                         out_slack=0 if in_place else 15)


def _pycryptodome(op: Operation, offset: int) -> _UpdateTarget | None:
    aes: Any = importlib.import_module("Crypto.Cipher.AES")
    if op.mode == "XTS":  # pycryptodome has no XTS: no row
        return None
    if op.mode == "ECB":
        obj = aes.new(op.key(), aes.MODE_ECB)
    elif op.mode == "CBC":
        obj = aes.new(op.key(), aes.MODE_CBC, iv=IV)
    elif op.mode in ("CFB", "CFB8"):
        obj = aes.new(op.key(), aes.MODE_CFB, iv=IV, segment_size=128 if op.mode == "CFB" else 8)
    elif op.mode == "OFB":
        obj = aes.new(op.key(), aes.MODE_OFB, iv=IV)
    else:
        obj = aes.new(op.key(), aes.MODE_CTR, nonce=b"", initial_value=IV)
    method = obj.encrypt if op.encrypt else obj.decrypt
    return _UpdateTarget("pycryptodome", "pycryptodome", method, True, offset,
                         output_keyword=True)


_PEER_FACTORIES: dict[str, Callable[[Operation, int], _UpdateTarget | None]] = {
    "cryptography": _cryptography,
    "pycryptodome": _pycryptodome,
}
_AEAD_PEER_FACTORIES: dict[str, Callable[[Operation, int], _AeadPeerTarget | None]] = {
    "cryptography": _cryptography_aead,
    "pycryptodome": _pycryptodome_aead,
}
_GMAC_PEER_FACTORIES: dict[str, Callable[[Operation, int], _GmacPeerTarget]] = {
    "cryptography": _cryptography_gmac,
    "pycryptodome": _pycryptodome_gmac,
}
_MAC_PEER_FACTORIES: dict[str, Callable[[Operation, int], _MacPeerTarget]] = {
    "cryptography": _cryptography_mac,
    "pycryptodome": _pycryptodome_mac,
}
_PEER_MODULES = {"cryptography": "cryptography.hazmat.primitives.ciphers",
                 "pycryptodome": "Crypto.Cipher.AES"}


def peer_available(name: str) -> bool:
    try:
        importlib.import_module(_PEER_MODULES[name])
    except ImportError:
        return False
    return True


def missing_peers() -> list[str]:
    """The peers in PEERS that do not import here (PEER_EXTRA installs them)."""
    return [p for p in PEERS if not peer_available(p)]


def make_targets(op: Operation, backends: list[str], layers: list[str], peers: list[str],
                 offset: int) -> list[Target]:
    """aeskit per backend and layer, then the peers, in a fixed order.

    The sectors row adds, after each backend's kernel, its loop over one data
    unit of the same length; its one peer is cryptography's context per sector
    (pycryptodome has no XTS).
    """
    targets: list[Target] = []
    for backend in backends:
        if "kernel" in layers:
            targets.append(KernelTarget(op, backend, offset))
            if op.sector_size:
                targets.append(OneUnitTarget(op, backend, offset))
        if "api" in layers:
            targets.append(ApiTarget(op, backend, offset))
    if op.sector_size:
        if "cryptography" in peers:
            targets.append(_SectorsPeerTarget(op, offset))
        return targets
    for peer in peers:
        target: Target | None
        if op.mode == GHASH:
            target = _GMAC_PEER_FACTORIES[peer](op, offset)
        elif op.mac:
            target = _MAC_PEER_FACTORIES[peer](op, offset)
        elif op.aead:
            target = _AEAD_PEER_FACTORIES[peer](op, offset)
        else:
            target = _PEER_FACTORIES[peer](op, offset)
        if target is not None:
            targets.append(target)
    return targets
