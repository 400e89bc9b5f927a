"""Every error a public method raises reads the same way (py/errors.c): where the call was
made ("AESGCM.encrypt", "AESGCM" for a constructor, "aes_key_wrap", "CipherContext.update"),
the argument, what was given and what is accepted, and the usual fix where there is one.

The walk starts from aeskit.__all__: every public class, every public method of it and of
the contexts its methods make, every public function, and every parameter of each, gets
the bad values of its kind (a wrong type; a bad key, nonce, iv, tweak, tag or data length;
a buf too small or partly over the data; a bad tag_length, bit_length, padding or backend);
a context gets the calls after finalize() and from a second thread. What is accepted is
written here as the documentation states it (not read from the C), and which arguments take
None comes from the typed stubs. A public method or parameter that the walk finds no case
for fails test_every_public_method_and_parameter_has_cases. One backend (the default) is
enough: this is the glue."""

import array
import ast
import dataclasses
import inspect
import mmap
import pathlib
import threading
from collections.abc import Callable
from dataclasses import dataclass

import aeskit
import pytest

PUBLIC = {name: getattr(aeskit, name) for name in aeskit.__all__}
STUBS = [pathlib.Path(aeskit.__file__).with_name(n) for n in ("__init__.pyi", "keywrap.pyi")]
CONTEXTS = ("CipherContext", "AEADContext", "MACContext")
# Names in __all__ with no method or parameter of their own to check, and why.
WITHOUT_ARGUMENTS = {
    "__version__": "a str",
    "BackendInfo": "a NamedTuple: its methods are tuple's",
}
# Parameters that take anything, and why.
ANY_VALUE = {"backend": "pyca's key-wrap functions accept it and ignore it, as pyca does"}

# ---- what each class accepts, as the documentation states it -------------------------

KEY_LENGTHS = {"AESXTS": (32, 64), "AESSIV": (32, 48, 64),
               "XAES256GCM": (32,)}
AES_KEY_LENGTHS = (16, 24, 32)
TWO_KEYS = ("AESXTS", "AESSIV")
# nonce: how the message words the lengths, a length taken, lengths refused
NONCES = {
    "AESGCM": ("at least 1 byte (12 is best)", 12, (0,)),
    "AESOCB3": ("1 to 15 bytes", 12, (0, 16)),
    "AESCCM": ("7 to 13 bytes", 12, (6, 14)),
    "AESGCMSIV": ("12 bytes", 12, (11, 13)),
    "AESEAX": ("any length", 12, ()),
    "XAES256GCM": ("24 bytes (XAES-256-GCM's extended nonce: random ones are safe)", 24,
                   (12, 32)),
}
# tag_length: how the message words the lengths, lengths refused
TAG_LENGTHS = {
    "AESGCM": ("4, 8 or 12 to 16", (0, 3, 5, 11, 17)),
    "AESOCB3": ("8 to 16", (7, 17)),
    "AESCCM": ("4, 6, 8, 10, 12, 14 or 16", (5, 15, 17)),
    "AESEAX": ("4 to 16", (3, 17)),
    "AESCMAC": ("4 to 16", (3, 17)),
}
SIV_MAX_ITEMS = 126
XTS_MAX_UNIT = 2**24          # 2**20 blocks
KEYWRAPS = ("AESKW", "AESKWP")
PYCA_KEYWRAP = {"aes_key_wrap": "AESKW", "aes_key_unwrap": "AESKW",
                "aes_key_wrap_with_padding": "AESKWP", "aes_key_unwrap_with_padding": "AESKWP"}
BUFFERS = ("key", "nonce", "iv", "tweak", "data", "associated_data", "buf", "tag",
           "wrapping_key", "key_to_wrap", "wrapped_key")
ANY_BUFFER = "a bytes-like object (bytes, bytearray, memoryview, ...)"
WRITABLE = "a writable bytes-like object (bytearray, memoryview, ...)"


def or_list(items):
    """16, 24 or 32"""
    items = [str(i) for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def key_lengths(cls_name):
    return KEY_LENGTHS.get(cls_name, AES_KEY_LENGTHS)


def key_for(cls_name):
    """A key the class takes, its halves distinct."""
    return bytes(range(key_lengths(cls_name)[0]))


# ---- which arguments take None, from the stubs ----------------------------------------

def _stub_annotations():
    """{(class or None, function): {parameter: annotation text}}"""
    out = {}
    for path in STUBS:
        for node in ast.parse(path.read_text()).body:
            funcs = [(None, node)] if isinstance(node, ast.FunctionDef) else (
                [(node.name, f) for f in node.body if isinstance(f, ast.FunctionDef)]
                if isinstance(node, ast.ClassDef) else [])
            for owner, fn in funcs:
                a = fn.args
                out[owner, fn.name] = {
                    x.arg: ast.unparse(x.annotation) if x.annotation else ""
                    for x in a.posonlyargs + a.args + a.kwonlyargs}
    return out


ANNOTATIONS = _stub_annotations()


def takes_none(owner, fn, param):
    return "None" in ANNOTATIONS[owner, "__new__" if fn is None else fn][param].split(" | ")


def takes_list(owner, fn, param):
    return "_Components" in ANNOTATIONS[owner, fn][param]


# ---- the cases ------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    where: str                  # what the message starts with, before ": "
    param: str | None           # the parameter given the bad value (None: the call's state)
    label: str
    call: Callable[[], object]
    exc: type
    parts: tuple[str, ...]      # what was given and what is accepted, as the message says
    fix: str | None = None      # the usual fix, where there is one
    arg: str | None = None      # what the message names first (default: param)


def _zeros(size):
    """size bytes of zeros that take no memory: a read-only private anonymous mapping."""
    return mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
                     | getattr(mmap, "MAP_NORESERVE", 0x4000), prot=mmap.PROT_READ)


def _data_for(owner, fn):
    if fn.endswith(("sectors", "sectors_into")):
        return bytes(4096)
    if owner in KEYWRAPS or fn in PYCA_KEYWRAP:
        return bytes(24 if "unwrap" in fn else 16)
    return bytes(32)


def _values(owner, fn):
    """A value each parameter of owner.fn takes (with the others' bad value, the error is
    that one's)."""
    nonce = NONCES.get(owner, ("", 12, ()))[1]
    return {
        "key": key_for(owner), "nonce": bytes(nonce), "iv": bytes(16), "tweak": bytes(16),
        "data": _data_for(owner, fn), "associated_data": None, "buf": bytearray(8192),
        "tag": bytes(16), "first_sector": 0, "sector_size": 4096,
        "bit_length": 8 * key_lengths(owner)[0], "wrapping_key": bytes(16),
        "key_to_wrap": bytes(16), "wrapped_key": bytes(24), "backend": None,
    }


def _invoke(fn, params, values, bad_name, bad_value):
    """fn called with values, bad_value in bad_name's place; an optional parameter only
    when it is the bad one, by keyword where it may come so."""
    args, kwargs = [], {}
    for p in params:
        if p.name == bad_name:
            v = bad_value
        elif p.default is inspect.Parameter.empty:
            v = values[p.name]
        else:
            continue
        if p.kind is inspect.Parameter.KEYWORD_ONLY or (
                p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
                and p.default is not inspect.Parameter.empty):
            kwargs[p.name] = v
        else:
            args.append(v)
    return fn(*args, **kwargs)


def _caller(factory, fn_name, bad_name, bad_value, values=None):
    """A call of factory().fn_name (factory None: the module function fn_name) with
    bad_value for bad_name."""
    def call():
        obj = aeskit if factory is None else factory()
        fn = getattr(obj, fn_name)
        params = list(inspect.signature(fn).parameters.values())
        vals = values if values is not None else _values(_owner_of(factory, obj), fn_name)
        return _invoke(fn, params, vals, bad_name, bad_value)
    return call


def _owner_of(factory, obj):
    if factory is None:
        return None
    return getattr(factory, "owner", type(obj).__name__)


def _buffer_cases(where, owner, fn, param, call_with, stub_owner, stub_fn):
    """A buffer argument given what is no buffer of its kind."""
    if param == "buf":
        yield Case(where, param, "str", call_with("text"), TypeError,
                   (f"buf must be {WRITABLE}, not str",))
        yield Case(where, param, "None", call_with(None), TypeError,
                   (f"buf must be {WRITABLE}, not None",))
        yield Case(where, param, "bytes", call_with(bytes(8192)), TypeError,
                   ("buf must be a writable bytes-like object, not bytes, which is read-only",),
                   "pass a bytearray")
        return
    if takes_list(stub_owner, stub_fn, param):
        yield Case(where, param, "bytes", call_with(b"ad"), TypeError,
                   (("associated_data must be a list of bytes-like objects, or None, "
                     "not bytes"),), "[associated_data]")
        yield Case(where, param, "item str", call_with([b"a", "text"]), TypeError,
                   (f"associated_data[1] must be {ANY_BUFFER}, not str",),
                   "associated_data[1].encode()", arg="associated_data[1]")
        yield Case(where, param, "too many", call_with([b""] * (SIV_MAX_ITEMS + 1)),
                   ValueError, ((f"associated_data must have at most {SIV_MAX_ITEMS} items, "
                                 f"got {SIV_MAX_ITEMS + 1}"),))
        return
    none = takes_none(stub_owner, stub_fn, param)
    accepted = ANY_BUFFER + (" or None" if none else "")
    text = param in ("data", "associated_data") and owner not in KEYWRAPS
    yield Case(where, param, "str", call_with("text"), TypeError,
               (f"{param} must be {accepted}, not str",),
               f"encode text first, e.g. {param}.encode()" if text
               else f"for a hex string, bytes.fromhex({param})")
    yield Case(where, param, "int", call_with(12), TypeError,
               (f"{param} must be {accepted}, not int",))
    if not none:
        yield Case(where, param, "None", call_with(None), TypeError,
                   (f"{param} must be {accepted}, not None",))
    yield Case(where, param, "strided", call_with(memoryview(bytes(64))[::2]), TypeError,
               ((f"{param} must be a C-contiguous bytes-like object, and this memoryview is "
                 "not contiguous"),), f"pass a copy, e.g. bytes({param})")


def _length_cases(where, owner, fn, param, call_with):
    """A buffer argument of a length refused."""
    if param in ("key", "wrapping_key"):
        lengths = key_lengths(owner)
        two = " (two AES keys of one size, one after the other)" if owner in TWO_KEYS else ""
        for n in (lengths[0] - 1, lengths[-1] + 1):
            yield Case(where, param, f"{n} bytes", call_with(bytes(n)), ValueError,
                       (f"{param} must be {or_list(lengths)} bytes{two}, got {n}",))
    elif param == "nonce":
        words, _, bad = NONCES[owner]
        for n in bad:
            yield Case(where, param, f"{n} bytes", call_with(bytes(n)), ValueError,
                       (f"nonce must be {words}, got {n}",))
    elif param in ("iv", "tweak"):
        for n in (0, 15, 17):
            yield Case(where, param, f"{n} bytes", call_with(bytes(n)), ValueError,
                       (f"{param} must be 16 bytes, got {n}",))
    elif param in ("data", "key_to_wrap", "wrapped_key"):
        yield from _data_length_cases(where, owner, fn, param, call_with)


def _data_length_cases(where, owner, fn, param, call_with):
    kw = PYCA_KEYWRAP.get(fn, owner)
    if kw in KEYWRAPS and "unwrap" not in fn:
        if kw == "AESKW":
            yield Case(where, param, "15 bytes", call_with(bytes(15)), ValueError,
                       (f"{param} must be a multiple of 8 bytes, at least 16, got 15",))
        else:
            yield Case(where, param, "0 bytes", call_with(b""), ValueError,
                       (f"{param} must be at least 1 byte, got 0",))
    elif kw in KEYWRAPS:
        least = 24 if kw == "AESKW" else 16
        for n in (least - 8, least + 1):
            yield Case(where, param, f"{n} bytes", call_with(bytes(n)), aeskit.InvalidUnwrap,
                       (f"{param} must be a multiple of 8 bytes, at least {least}, got {n}",))
    elif fn.endswith(("sectors", "sectors_into")):
        yield Case(where, param, "100 bytes", call_with(bytes(100)), ValueError,
                   (("data must be whole sectors of sector_size=4096 bytes, at least one, got "
                     "100 bytes"),))
    elif owner in ("AESECB", "AESCBC") and fn in ("encrypt", "decrypt", "encrypt_into",
                                                   "decrypt_into"):
        yield Case(where, param, "17 bytes", call_with(bytes(17)), ValueError,
                   ("data must be a multiple of 16 bytes, got 17",),
                   "pad it, or make the key object with padding='pkcs7'")
    elif owner == "AESXTS" and fn in ("encrypt", "decrypt", "encrypt_into", "decrypt_into"):
        yield Case(where, param, "15 bytes", call_with(bytes(15)), ValueError,
                   ("data must be at least 16 bytes for XTS, got 15",))
        yield Case(where, param, "past the limit", call_with(bytes(XTS_MAX_UNIT + 16)),
                   aeskit.LimitExceeded,
                   (f"data is limited to 2**24 bytes per data unit, got {XTS_MAX_UNIT + 16}",))
    elif fn in ("decrypt", "decrypt_into") and (owner in NONCES or owner == "AESSIV"):
        yield Case(where, param, "5 bytes", call_with(bytes(5)), aeskit.InvalidTag,
                   ("data (5 bytes) is shorter than the tag (16 bytes)",))


def _into_cases(where, param, make_call):
    """buf a byte too small, or partly over data. make_call(data, buf) -> call."""
    def too_small():
        # The size an empty buf is told to have: a buf of that size passes the size check
        # (the call may still fail later, a decryption's tag), one a byte smaller is
        # refused, and the message says both sizes.
        with pytest.raises(ValueError) as empty:
            make_call(None, bytearray(0))()
        need = int(str(empty.value).split("buf must be at least ")[1].split()[0])
        assert need > 0, str(empty.value)
        try:
            make_call(None, bytearray(need))()
        except ValueError as e:
            assert "buf must be" not in str(e), (need, str(e))
        try:
            make_call(None, bytearray(need - 1))()
        except ValueError as e:
            assert f"buf must be at least {need} bytes, got {need - 1}" in str(e), str(e)
            raise
    yield Case(where, param, "1 byte short", too_small, ValueError,
               ("buf must be at least ", " bytes, got "))

    def overlap():
        whole = bytearray(8192)
        return make_call(memoryview(whole)[:4096], memoryview(whole)[1:])()
    yield Case(where, param, "partly over data", overlap, ValueError,
               ("buf partially overlaps data",), "pass data itself (in place) or a separate "
                                                 "buffer")


# ---- the walk ------------------------------------------------------------------------

def _public_methods(cls):
    return [m for m in dir(cls) if not m.startswith("_")
            and callable(inspect.getattr_static(cls, m))]


def _key_classes():
    return {name: obj for name, obj in PUBLIC.items()
            if isinstance(obj, type) and not issubclass(obj, BaseException)
            and name not in WITHOUT_ARGUMENTS and name not in CONTEXTS}


def _constructor_cases(name, cls):
    for param in inspect.signature(cls).parameters:
        def call_with(v, param=param):
            def call():
                kwargs = {"key": key_for(name)}
                kwargs[param] = v
                return cls(**kwargs)
            return call
        if param == "key":
            yield from _buffer_cases(name, name, None, param, call_with, name, "__new__")
            yield from _length_cases(name, name, None, param, call_with)
            if name == "AESXTS":
                yield Case(name, param, "equal halves", call_with(bytes(32)), ValueError,
                           ("key halves must differ (IEEE 1619, FIPS 140-3 IG C.I)",),
                           "e.g. os.urandom(32)", arg="key halves")
        elif param == "tag_length":
            words, bad = TAG_LENGTHS[name]
            yield Case(name, param, "str", call_with("16"), TypeError,
                       ("tag_length must be an int, not str",))
            for t in bad:
                yield Case(name, param, str(t), call_with(t), ValueError,
                           (f"tag_length must be {words}, got {t}",))
        elif param == "backend":
            yield Case(name, param, "int", call_with(1), TypeError,
                       (("backend must be a str ('auto' or a name from "
                         "aeskit.backends().available), not int"),))
            yield Case(name, param, "unknown", call_with("nope"), ValueError,
                       ("backend must be 'auto' or one of ", "got 'nope'",
                        *(repr(b) for b in aeskit.backends().all)))
        elif param == "padding":
            yield Case(name, param, "pkcs5", call_with("pkcs5"), ValueError,
                       ("padding must be None or 'pkcs7' (in any case), got 'pkcs5'",))
            yield Case(name, param, "bytes", call_with(b"pkcs7"), ValueError,
                       ("padding must be None or 'pkcs7' (in any case), got b'pkcs7'",))


# ---- the batch methods (encrypt_many, mac_many_into, ...) ------------------------------

SEQUENCE = "a sequence (list, tuple) of bytes-like objects, one per message"


def _batch_values(owner, fn):
    """A value each parameter of a batch method takes: one message."""
    one = _values(owner, fn.replace("_many", "").replace("_into", ""))
    data = one["data"] if owner != "AESCMAC" else bytes(32)
    nonce = one["nonce"]
    if not fn.endswith("_into"):
        return {"nonces": [nonce], "ivs": [bytes(16)], "tweaks": [bytes(16)], "data": [data],
                "messages": [data], "tags": [bytes(16)], "keys_to_wrap": [bytes(16)],
                "wrapped_keys": [bytes(24)]}
    return {"nonces": nonce, "ivs": bytes(16), "tweaks": bytes(16), "src": data,
            "offsets": array.array("q", [0, len(data)]), "dst": bytearray(8192)}


def _batch_cases(where, owner, meth, factory):
    """A batch method's parameters given bad values: the sequences, their items and their
    counts, the packed buffers, their offsets, dst, and the options."""
    values = _batch_values(owner, meth)
    params = list(inspect.signature(getattr(factory(), meth)).parameters.values())
    into = meth.endswith("_into")
    siv = owner == "AESSIV"

    def call_with(param, v):
        return _caller(factory, meth, param, v, values)
    for p in params:
        param = p.name
        text = param in ("data", "messages", "src", "associated_data") and owner not in KEYWRAPS
        fix = (f"encode text first, e.g. {param}" if text else "for a hex string, bytes.fromhex")
        if param == "threads":
            yield Case(where, param, "str", call_with(param, "1"), TypeError,
                       ("threads must be an int, not str",))
            yield Case(where, param, "0", call_with(param, 0), ValueError,
                       ("threads must be from 1 to 256, got 0",))
        elif param == "on_failure":
            yield Case(where, param, "ignore", call_with(param, "ignore"), ValueError,
                       ("on_failure must be 'raise' or 'zero', got 'ignore'",))
        elif param == "ad_offsets":
            yield Case(where, param, "without associated_data",
                       call_with(param, array.array("q", [0, 0])), ValueError,
                       ("ad_offsets needs associated_data: pass both, or neither",))
        elif param == "offsets":
            yield Case(where, param, "bytes", call_with(param, bytes(16)), TypeError,
                       ("offsets must be a buffer of int32 or int64", "got format 'B'"))
            yield Case(where, param, "decreasing", call_with(param, array.array("i", [8, 0])),
                       ValueError, ("offsets must not decrease: offsets[1] is 0, after 8",))
            yield Case(where, param, "negative", call_with(param, array.array("q", [-1, 0])),
                       ValueError, ("offsets[0] must be at least 0, got -1",))
            yield Case(where, param, "past the data",
                       call_with(param, array.array("q", [0, 1 << 20])), ValueError,
                       ("offsets runs past its data: the last offset is 1048576",))
        elif param == "dst":
            yield Case(where, param, "bytes", call_with(param, bytes(8192)), TypeError,
                       ("dst must be a writable bytes-like object, not bytes",))
            yield Case(where, param, "too small", call_with(param, bytearray(1)), ValueError,
                       ("dst must be at least ", "bytes for these outputs, got 1"))

            def overlap():
                whole = bytearray(8192)
                vals = dict(values, src=memoryview(whole)[:32])
                return _caller(factory, meth, "dst", memoryview(whole)[1:], vals)()
            yield Case(where, param, "partly over src", overlap, ValueError,
                       ("overlaps src",), "separate buffer")
        elif into:   # a packed buffer: src, nonces, ivs, tweaks, associated_data
            yield Case(where, param, "str", call_with(param, "text"), TypeError,
                       (f"{param} must be {ANY_BUFFER}, not str",), fix)
            if param in ("nonces", "ivs", "tweaks"):
                yield from _batch_side_lengths(where, owner, param, call_with)
        elif param == "associated_data":
            words = ("None, or a sequence with one list of bytes-like objects (or None) per "
                     "message") if siv else ("None, one bytes-like object for every message, "
                                             "or a sequence with one per message")
            yield Case(where, param, "int", call_with(param, 12), TypeError,
                       (f"associated_data must be {words}, not int",))
            item = [[b"a", "text"]] if siv else ["text"]
            arg = "associated_data[0][1]" if siv else "associated_data[0]"
            yield Case(where, param, "item str", call_with(param, item), TypeError,
                       (f"{arg} must be {ANY_BUFFER}, not str",), f"{arg}.encode()", arg=arg)
            yield Case(where, param, "count", call_with(param, [None, None]), ValueError,
                       ("associated_data must have one item per message (1), got 2",))
        else:        # a sequence: nonces, ivs, tweaks, data, messages, tags, keys
            yield Case(where, param, "bytes", call_with(param, bytes(16)), TypeError,
                       (f"{param} must be {SEQUENCE}, not bytes",),
                       "for one message, pass a list of it")
            yield Case(where, param, "item str", call_with(param, ["text"]), TypeError,
                       (f"{param}[0] must be {ANY_BUFFER}, not str",),
                       f"{fix}({param}[0])" if not text else f"{param}[0].encode()",
                       arg=f"{param}[0]")
            if param in ("nonces", "ivs", "tweaks", "tags"):
                yield Case(where, param, "count", call_with(param, values[param] * 2),
                           ValueError, (f"{param} must have one item per message (1), got 2",))
            if param in ("nonces", "ivs", "tweaks"):
                yield from _batch_side_lengths(where, owner, param,
                                               lambda q, v: call_with(q, [v]))
            if param not in ("nonces", "ivs", "tweaks"):
                yield from _batch_data_cases(where, owner, meth, param, call_with)


def _batch_side_lengths(where, owner, param, call_with):
    """nonces, ivs or tweaks of a message, of a length refused; call_with(param, item)."""
    if param == "nonces":
        words, _, bad = NONCES[owner]
        for n in bad:
            yield Case(where, param, f"{n} bytes", call_with(param, bytes(n)), ValueError,
                       (f"nonces[0] must be {words}, got {n}",), arg="nonces[0]")
    else:
        yield Case(where, param, "15 bytes", call_with(param, bytes(15)), ValueError,
                   (f"{param}[0] must be 16 bytes, got 15",), arg=f"{param}[0]")


def _batch_data_cases(where, owner, meth, param, call_with):
    """A message of a length refused, and a message that fails its check."""
    if param == "keys_to_wrap":
        n, words = (15, "a multiple of 8 bytes, at least 16, got 15") if owner == "AESKW" \
            else (0, "at least 1 byte, got 0")
        yield Case(where, param, f"{n} bytes", call_with(param, [bytes(n)]), ValueError,
                   (f"keys_to_wrap[0] must be {words}",), arg="keys_to_wrap[0]")
    elif param == "wrapped_keys":
        yield Case(where, param, "not authentic", call_with(param, [bytes(24)]),
                   aeskit.InvalidUnwrap, ("unwrapping failed for 1 of 1 message (index 0)",
                                          "the failed indices are in .failed"),
                   arg="unwrapping")
    elif param == "tags":
        yield Case(where, param, "wrong", call_with(param, [bytes(16)]), aeskit.InvalidTag,
                   ("verification failed for 1 of 1 message (index 0)",), arg="verification")
    elif owner in ("AESECB", "AESCBC"):
        yield Case(where, param, "17 bytes", call_with(param, [bytes(17)]), ValueError,
                   ("data[0] must be a multiple of 16 bytes, got 17",),
                   "pad it, or make the key object with padding='pkcs7'", arg="data[0]")
    elif owner == "AESXTS":
        yield Case(where, param, "15 bytes", call_with(param, [bytes(15)]), ValueError,
                   ("data[0] must be at least 16 bytes for XTS, got 15",), arg="data[0]")
    elif meth == "decrypt_many" and (owner in NONCES or owner == "AESSIV"):
        yield Case(where, param, "wrong tag", call_with(param, [bytes(32)]), aeskit.InvalidTag,
                   ("decryption failed for 1 of 1 message (index 0)",), arg="decryption")


def _method_cases(name, cls, factory, stub_owner, contexts):
    """The cases of every public method of cls, its objects made by factory; the contexts
    they make are added to contexts as {context class: [(owner, maker, factory)]}."""
    for meth in _public_methods(cls):
        where = f"{stub_owner}.{meth}"
        if meth.endswith(("_many", "_many_into")):
            yield from _batch_cases(where, name, meth, factory)
            continue
        params = list(inspect.signature(getattr(factory(), meth)).parameters.values())
        for p in params:
            param = p.name
            call_with = (lambda v, m=meth, q=param: _caller(factory, m, q, v))
            if param in BUFFERS:
                yield from _buffer_cases(where, name, meth, param, call_with, stub_owner, meth)
                yield from _length_cases(where, name, meth, param, call_with)
            elif param == "bit_length":
                yield Case(where, param, "str", call_with("128"), TypeError,
                           ("bit_length must be an int, not str",))
                bits = [8 * n for n in key_lengths(name)]
                yield Case(where, param, "100", call_with(100), ValueError,
                           (f"bit_length must be {or_list(bits)}, got 100",))
            elif param == "first_sector":
                yield Case(where, param, "str", call_with("0"), TypeError,
                           ("first_sector must be an int, not str",))
                yield Case(where, param, "-1", call_with(-1), aeskit.LimitExceeded,
                           ("first_sector must be from 0 to 2**128 - 1 with 1 sector", "got -1"))
                yield Case(where, param, "2**128", call_with(2**128), aeskit.LimitExceeded,
                           ("first_sector must be from 0 to 2**128 - 1 with 1 sector",
                            f"got {2**128}"))
            elif param == "sector_size":
                yield Case(where, param, "str", call_with("4096"), TypeError,
                           ("sector_size must be an int, not str",))
                for n in (0, 8, 4100, XTS_MAX_UNIT + 16):
                    yield Case(where, param, str(n), call_with(n), ValueError,
                               ((f"sector_size must be a multiple of 16 from 16 to "
                                 f"{XTS_MAX_UNIT}, got {n}"),))
            if param == "buf":
                def make_call(data, buf, m=meth):
                    vals = _values(name, m)
                    if data is not None:
                        vals["data"] = data
                    return _caller(factory, m, "buf", buf, vals)
                yield from _into_cases(where, param, make_call)
        if meth in ("encryptor", "decryptor", "new"):
            made = _invoke(getattr(factory(), meth), params, _values(name, meth), None, None)
            contexts.setdefault(type(made).__name__, []).append(
                (name, meth, params, factory))
        if (stub_owner in NONCES or stub_owner == "AESSIV") and meth in ("decrypt",
                                                                          "decrypt_into"):
            yield Case(where, None, "wrong tag", _caller(factory, meth, None, None),
                       aeskit.InvalidTag, (("authentication failed: wrong key, nonce, tag, "
                                            "data or associated data"),), arg="authentication")


def _limit_cases():
    """Limits reachable with small buffers: CCM's length field with a 13-byte nonce."""
    ccm = aeskit.AESCCM(bytes(16))
    yield Case("AESCCM.encrypt", "data", "past the length field",
               lambda: ccm.encrypt(bytes(13), bytes(2**16), None), aeskit.LimitExceeded,
               ("data is limited to 2**16 - 1 bytes with this nonce's length", "got 65536"),
               "a shorter nonce takes more")


def _finish(ctx, owner, maker, factory, params):
    """Ends ctx, a fresh context, properly: an AEAD decryptor with the right tag."""
    if type(ctx).__name__ == "AEADContext" and maker == "decryptor":
        obj = factory()
        sealed = obj.encrypt(*[_values(owner, maker)[p.name] for p in params], bytes(32), None)
        ctx.update(sealed[:32])
        return ctx.finalize_with_tag(sealed[32:])
    ctx.update(bytes(32))
    return ctx.finalize()


def _context_cases(ctx_name, makers):
    """A context's methods given bad arguments, after finalize(), from a second thread,
    and out of turn; for each class and method that makes one."""
    cls = PUBLIC[ctx_name]
    for owner, maker, params, factory in makers:
        arg = ", ".join(p.name for p in params if p.default is inspect.Parameter.empty)
        hint_make = f"make a new one with {owner}.{maker}({arg})"
        hint_thread = f"make one per thread with {owner}.{maker}({arg})"

        def fresh(factory=factory, maker=maker, params=params, owner=owner):
            return _invoke(getattr(factory(), maker), params, _values(owner, maker), None, None)
        values = dict(_values(owner, maker), data=bytes(32))
        for meth in _public_methods(cls):
            where = f"{ctx_name}.{meth}"
            sig = list(inspect.signature(getattr(fresh(), meth)).parameters.values())
            # an encryptor refuses finalize_with_tag whatever its tag (_aead_state_cases)
            checked = [] if meth == "finalize_with_tag" and maker != "decryptor" else sig
            for p in checked:
                param = p.name
                call_with = (lambda v, m=meth, q=param, f=fresh, vals=values:
                             _caller(f, m, q, v, vals))
                for case in _buffer_cases(where, owner, meth, param, call_with, ctx_name, meth):
                    yield dataclasses.replace(case, label=f"{owner}.{maker} {case.label}")
                if param == "tag" and ctx_name == "AEADContext" and maker == "decryptor":
                    yield Case(where, param, f"{owner}.{maker} 15 bytes",
                               lambda f=fresh: f().finalize_with_tag(bytes(15)), ValueError,
                               ("tag must be 16 bytes, got 15",))
                if param == "buf":
                    def make_call(data, buf, m=meth, f=fresh, vals=values):
                        v = dict(vals) if data is None else dict(vals, data=data)
                        return _caller(f, m, "buf", buf, v)
                    for case in _into_cases(where, param, make_call):
                        yield dataclasses.replace(case, label=f"{owner}.{maker} {case.label}")
            if ctx_name != "MACContext":   # a MAC context has no end: digest() goes on
                def finalized(f=fresh, m=meth, s=sig, o=owner, mk=maker, fac=factory,
                              ps=params, vals=values):
                    ctx = f()
                    _finish(ctx, o, mk, fac, ps)
                    return _invoke(getattr(ctx, m), s, vals, None, None)
                yield Case(where, None, f"{owner}.{maker} finalized", finalized,
                           aeskit.AlreadyFinalized,
                           ("this context is finalized: a context is one message",), hint_make,
                           arg="this context")
        # from a second thread: one slow mode of each context class, whose long call
        # leaves time to meet it inside
        if owner in ("AESCFB8", "AESEAX", "AESCMAC") and maker in ("encryptor", "new"):
            feed = {"CipherContext": "update", "AEADContext": "authenticate_additional_data",
                    "MACContext": "update"}[ctx_name]
            polls = _public_methods(cls) if ctx_name == "MACContext" else (feed,)
            for meth in polls:
                sig = list(inspect.signature(getattr(fresh(), meth)).parameters.values())
                vals = dict(_values(owner, maker), data=b"", tag=bytes(16))
                yield Case(f"{ctx_name}.{meth}", None, f"{owner}.{maker} busy",
                           lambda f=fresh, fd=feed, m=meth, s=sig, v=vals:
                           _while_busy(f, fd, lambda ctx: _invoke(getattr(ctx, m), s, v, None,
                                                                  None)),
                           RuntimeError, ("this context is in use by another thread",),
                           hint_thread, arg="this context")
    if ctx_name == "AEADContext":
        yield from _aead_state_cases(makers)


def _decryptor(owner, factory, params):
    def make():
        obj = factory()
        return obj.decryptor(*[_values(owner, "decryptor")[p.name] for p in params])
    return make


def _aead_state_cases(makers):
    for owner, maker, params, factory in makers:
        if maker != "encryptor":
            continue
        dec = _decryptor(owner, factory, params)

        def enc(owner=owner, factory=factory, params=params):
            return factory().encryptor(*[_values(owner, "encryptor")[p.name] for p in params])

        def aad_late(enc=enc):
            ctx = enc()
            ctx.update(b"x")
            ctx.authenticate_additional_data(b"ad")
        yield Case("AEADContext.authenticate_additional_data", None, f"{owner} after update",
                   aad_late, ValueError,
                   ("associated data must all come before the first update()",),
                   "authenticate all of it first", arg="associated data")
        yield Case("AEADContext.finalize", None, f"{owner} decryptor",
                   lambda d=dec: d().finalize(), ValueError,
                   ("a decryptor ends with finalize_with_tag(tag), which checks the tag",),
                   arg="a decryptor")
        yield Case("AEADContext.finalize_with_tag", None, f"{owner} encryptor",
                   lambda e=enc: e().finalize_with_tag(bytes(16)), ValueError,
                   ("an encryptor ends with finalize(), and then its tag is in .tag",),
                   "finalize_with_tag(tag) ends a decryptor", arg="an encryptor")
        yield Case("AEADContext.finalize_with_tag", None, f"{owner} wrong tag",
                   lambda d=dec: d().finalize_with_tag(bytes(16)), aeskit.InvalidTag,
                   ("authentication failed",), arg="authentication")
        yield Case("AEADContext.tag", None, f"{owner} before finalize",
                   lambda e=enc: e().tag, aeskit.NotYetFinalized,
                   ("the tag is there after finalize()",), "call it first", arg="the tag")
        yield Case("AEADContext.tag", None, f"{owner} decryptor",
                   lambda d=dec: d().tag, aeskit.NotYetFinalized,
                   ("a decryptor has no tag to give",), "finalize_with_tag(tag)",
                   arg="a decryptor")


def _while_busy(fresh, feed, poll):
    """poll(ctx) while another thread is inside ctx.feed on a long read-only mapping, with
    the GIL released: the RuntimeError that poll raises then. Starts with 4 MiB and makes
    it longer (to 64 MiB) until poll has met the other thread inside; never a wait on a
    clock. None if it never did: test_message then fails (no error raised)."""
    size = 1 << 22
    while size <= 1 << 26:
        ctx = fresh()
        with _zeros(size) as big:
            done = threading.Event()

            def work(ctx=ctx, big=big, done=done):
                try:
                    while True:
                        try:
                            getattr(ctx, feed)(big)
                            return
                        except RuntimeError:   # poll was inside: go again
                            continue
                finally:
                    done.set()
            t = threading.Thread(target=work)
            t.start()
            try:
                while not done.is_set():
                    try:
                        poll(ctx)
                    except RuntimeError:
                        raise
                    except ValueError:   # a verify's wrong tag: the context was free
                        pass
            finally:
                t.join()
        size <<= 2


def _function_cases(name, fn):
    params = list(inspect.signature(fn).parameters.values())
    for p in params:
        param = p.name
        if param in ANY_VALUE:
            continue
        call_with = (lambda v, q=param: _caller(None, name, q, v))
        yield from _buffer_cases(name, None, name, param, call_with, None, name)
        yield from _length_cases(name, PYCA_KEYWRAP.get(name), name, param, call_with)
    if not params:
        yield Case(name, None, "an argument", lambda: fn(1), TypeError, (f"{name}()",),
                   arg="")


def _all_cases():
    cases, contexts = [], {}
    for name, cls in _key_classes().items():
        cases += _constructor_cases(name, cls)

        def factory(cls=cls, name=name):
            return cls(key_for(name))
        factory.owner = name
        cases += _method_cases(name, cls, factory, name, contexts)
    for ctx_name in CONTEXTS:
        cases += _context_cases(ctx_name, contexts.get(ctx_name, []))
    for name, obj in PUBLIC.items():
        if callable(obj) and not isinstance(obj, type):
            cases += _function_cases(name, obj)
    cases += _limit_cases()
    return cases


CASES = _all_cases()


def _id(case):
    return f"{case.where}-{case.param or 'state'}-{case.label}"


# ---- the checks -----------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_message(case):
    with pytest.raises(Exception) as info:   # the class is checked below
        case.call()
    e = info.value
    assert type(e) is case.exc, (type(e), str(e))
    msg = str(e)
    if case.arg == "":   # Python's own words for a call of the wrong shape
        assert case.where in msg, msg
        return
    assert msg.startswith(f"{case.where}: "), msg
    body = msg[len(case.where) + 2:]
    assert body.startswith(case.arg if case.arg is not None else case.param), msg
    for part in case.parts:
        assert part in body, (part, msg)
    if case.fix is not None:
        assert case.fix in body, (case.fix, msg)
    # one line, read at a glance: where, what, and at most a fix after it
    assert "\n" not in msg and len(msg) <= 200 and msg.count(": ") <= 3, msg


def test_every_public_method_and_parameter_has_cases():
    """The walk reached every public name: each class's constructor parameters, each
    public method and its parameters (contexts' included), each function's."""
    covered = {(c.where, c.param) for c in CASES}
    wheres = {c.where for c in CASES}
    missing = []
    for name, obj in PUBLIC.items():
        if name in WITHOUT_ARGUMENTS or (isinstance(obj, type)
                                         and issubclass(obj, BaseException)):
            continue
        if not callable(obj):
            missing.append(name)
            continue
        if not isinstance(obj, type):
            params = [p for p in inspect.signature(obj).parameters if p not in ANY_VALUE]
            missing += [f"{name}({p})" for p in params if (name, p) not in covered]
            missing += [name] if name not in wheres else []
            continue
        if name not in CONTEXTS:
            missing += [f"{name}({p})" for p in inspect.signature(obj).parameters
                        if (name, p) not in covered]
        for meth in _public_methods(obj):
            where = f"{name}.{meth}"
            if where not in wheres and not (name not in CONTEXTS and not _params(obj, meth)):
                missing.append(where)
            params = _params(obj, meth)
            missing += [f"{where}({p})" for p in params if (where, p) not in covered]
    assert not missing, f"public methods or parameters without a case: {missing}"


def _params(cls, meth):
    """Parameters of cls.meth, from the stubs (a context cannot be made here)."""
    return [p for p in ANNOTATIONS[cls.__name__, meth] if p not in ("self", "cls")]


def test_every_context_is_reached():
    """Each context class is made by some public method, so the walk checked its methods."""
    reached = {c.where.split(".")[0] for c in CASES}
    for name in CONTEXTS:
        assert name in reached, name


def test_the_walk_can_fail():
    """Negative controls: a case whose message lacks its where, argument, accepted value or
    fix fails test_message."""
    good = next(c for c in CASES if c.where == "AESGCM" and c.label == "15 bytes")
    test_message(good)
    for bad in (
        Case("AESOCB3", good.param, good.label, good.call, good.exc, good.parts),
        Case(good.where, "nonce", good.label, good.call, good.exc, good.parts),
        Case(good.where, good.param, good.label, good.call, good.exc, ("17, 24 or 32",)),
        Case(good.where, good.param, good.label, good.call, good.exc, good.parts, "encode"),
        Case(good.where, good.param, good.label, good.call, TypeError, good.parts),
    ):
        with pytest.raises(AssertionError):
            test_message(bad)
