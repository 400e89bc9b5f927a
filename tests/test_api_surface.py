"""An API that explains itself: every public class and method in aeskit.__all__ has its
own documentation and a signature (inspect.signature) that matches the typed stubs;
errors name the public class and method; block-mode one-shots take keywords; `_into`
size errors name the call, buf and both sizes; key objects and contexts refuse pickle, and
copy follows the documented rules. One backend (the default) is enough: this is the glue."""

import ast
import copy
import inspect
import pathlib
import pickle
import pydoc
import re

import aeskit
import pytest
from aeskit._modes import MODES

STUB = pathlib.Path(aeskit.__file__).with_name("__init__.pyi")
PUBLIC = {name: getattr(aeskit, name) for name in aeskit.__all__ if name != "__version__"}
CONTEXTS = {"CipherContext", "AEADContext", "MACContext"}
KEY_CLASSES = sorted(
    name for name, obj in PUBLIC.items()
    if isinstance(obj, type) and not issubclass(obj, BaseException) and hasattr(obj, "key_size")
)
# Names an error must never show: C-internal call names, not the public method's.
INTERNAL = re.compile(r"\b(AES|AEAD|MAC)\(\)|^(encrypt|decrypt|update|wrap|mac|new)")
FACTS = {m.class_name: m for m in MODES}
# What each class's own documentation must mention, beyond its name: its mode's canonical
# name, and for the CFB variants the segment size that tells them apart.
MODE_WORDS = {m.class_name: m.name for m in MODES} | {
    "AESCFB": "128-bit segments", "AESCFB8": "8-bit segments"}


def key_for(name):
    """A key of the shortest length the class takes (XTS and SIV take two AES keys)."""
    return bytes(range(FACTS[name].key_sizes[0])) if name in FACTS else bytes(range(16))


def nonce_for(name):
    """A nonce of a length the class takes: 12 bytes where it takes them, else its shortest."""
    facts = FACTS[name]
    top = facts.nonce_max if facts.nonce_max is not None else 12
    return bytes(12 if facts.nonce_min <= 12 <= top else facts.nonce_min)


def make(name):
    return PUBLIC[name](key_for(name))


def contexts():
    """One live object of each context class, by class name."""
    return {
        "CipherContext": aeskit.AESCTR(bytes(16)).encryptor(bytes(16)),
        "AEADContext": aeskit.AESGCM(bytes(16)).encryptor(bytes(12)),
        "MACContext": aeskit.AESCMAC(bytes(16)).new(),
    }


# ---- the stubs, read with ast --------------------------------------------------------

def _params(fn: ast.FunctionDef, drop_first: bool):
    """[(name, kind, has_default)] of a stub function, in inspect's kinds."""
    a = fn.args
    P = inspect.Parameter
    pos = [(x.arg, P.POSITIONAL_ONLY) for x in a.posonlyargs] + [
        (x.arg, P.POSITIONAL_OR_KEYWORD) for x in a.args]
    n_default = len(a.defaults)
    out = [(name, kind, i >= len(pos) - n_default) for i, (name, kind) in enumerate(pos)]
    if a.vararg or a.kwarg:
        raise AssertionError(f"{fn.name}: *args/**kwargs in a stub")
    out += [(x.arg, P.KEYWORD_ONLY, d is not None) for x, d in zip(a.kwonlyargs, a.kw_defaults)]
    return out[1:] if drop_first else out


def _stub_classes():
    tree = ast.parse(STUB.read_text())
    classes = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            methods, props = {}, set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    decos = {d.id for d in item.decorator_list if isinstance(d, ast.Name)}
                    if "property" in decos:
                        props.add(item.name)
                    else:
                        methods[item.name] = (item, "classmethod" in decos)
            classes[node.name] = (methods, props)
    return classes


STUB_CLASSES = _stub_classes()


def _runtime_params(sig, drop_self: bool):
    out = [(p.name, p.kind, p.default is not inspect.Parameter.empty)
           for p in sig.parameters.values()]
    return out[1:] if drop_self else out


def _norm(params):
    """Stub and runtime agree on self/cls being first; after it, positional-only
    parameters are only so marked when the runtime says so."""
    return [(n, k.name, d) for n, k, d in params]


# ---- documentation and signatures ----------------------------------------------------

def _stub_all():
    """The stub's __all__, a list of strings."""
    for node in ast.parse(STUB.read_text()).body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets
                                             if isinstance(t, ast.Name)] == ["__all__"]:
            return ast.literal_eval(node.value)
    raise AssertionError("the stub has no __all__")


def test_the_stubs_declare_the_derived_names():
    """__init__.py derives its mode classes and __all__ from the descriptors
    (_modes.CLASS_NAMES); the stub lists them by hand, for type checkers: the two agree,
    a class for each mode and no mode class without a mode."""
    classes = {m.class_name for m in MODES}
    assert sorted(_stub_all()) == sorted(aeskit.__all__)
    assert classes <= set(STUB_CLASSES)
    stub_keyed = {name for name, (methods, props) in STUB_CLASSES.items()
                  if "key_size" in props}
    assert stub_keyed == classes == set(KEY_CLASSES)


def test_every_public_name_is_in_the_stubs():
    stub_names = set(STUB_CLASSES)
    for name, obj in PUBLIC.items():
        if isinstance(obj, type) and name != "BackendInfo":
            assert name in stub_names, name


@pytest.mark.parametrize("name", KEY_CLASSES)
def test_key_class_has_its_own_help_and_signature(name):
    cls = PUBLIC[name]
    text = pydoc.plain(pydoc.render_doc(cls))
    # help() shows the class's own signature and text, never a generic AES(...) one
    assert f"{name}(key" in text and "AES(key" not in text
    assert MODE_WORDS[name] in cls.__doc__, (name, cls.__doc__[:120])
    assert cls.__doc__.strip() and not cls.__doc__.startswith(name + "("), \
        "the signature belongs in __text_signature__, not the doc text"
    assert cls.__text_signature__.startswith("(key")
    methods, props = STUB_CLASSES[name]
    new, _ = methods["__new__"]
    assert _norm(_runtime_params(inspect.signature(cls), False)) == \
        _norm(_params(new, drop_first=True)), name
    for prop in props:
        assert inspect.isdatadescriptor(inspect.getattr_static(cls, prop)), (name, prop)


def test_every_class_has_its_own_doc():
    docs = {}
    for name, obj in PUBLIC.items():
        if isinstance(obj, type) and name != "BackendInfo":
            assert obj.__doc__ and obj.__doc__.strip(), name
            docs[name] = obj.__doc__
    assert len(set(docs.values())) == len(docs), "two classes share one docstring"
    for name in CONTEXTS:
        cls = PUBLIC[name]
        with pytest.raises(TypeError):
            cls()   # made by a key object only: no signature to show
        assert "pickle" in cls.__doc__ and "cop" in cls.__doc__, name


@pytest.mark.parametrize("name", sorted(KEY_CLASSES) + sorted(CONTEXTS))
def test_every_method_signature_matches_the_stub(name):
    cls = PUBLIC[name]
    methods, props = STUB_CLASSES[name]
    runtime_public = {m for m in dir(cls) if not m.startswith("_")}
    assert runtime_public == (set(methods) - {"__new__"} - {m for m in methods if
                                                           m.startswith("_")}) | props, name
    for meth, (fn, is_classmethod) in methods.items():
        if meth == "__new__":
            continue
        attr = getattr(cls, meth)
        sig = inspect.signature(attr)   # raises if there is no __text_signature__
        assert attr.__doc__ and attr.__doc__.strip(), (name, meth)
        runtime = _runtime_params(sig, drop_self=not is_classmethod)
        stub = _params(fn, drop_first=True)
        assert _norm(runtime) == _norm(stub), (name, meth, sig)
        if not is_classmethod:
            first = next(iter(sig.parameters.values()))
            assert first.name == "self" and first.kind is inspect.Parameter.POSITIONAL_ONLY


def test_help_shows_method_signatures():
    text = pydoc.plain(pydoc.render_doc(aeskit.AESCTR))
    assert "encrypt(self, /, iv, data)" in text
    assert "encrypt_into(self, /, iv, data, buf)" in text
    assert "encryptor(self, iv, /)" in text
    text = pydoc.plain(pydoc.render_doc(aeskit.AESXTS))
    assert "encrypt_sectors(self, /, first_sector, data, *, sector_size=4096)" in text
    text = pydoc.plain(pydoc.render_doc(aeskit.AEADContext))
    assert "finalize_with_tag(self, tag, /)" in text


def test_functions_have_signatures():
    for name, obj in PUBLIC.items():
        if callable(obj) and not isinstance(obj, type):
            inspect.signature(obj)
            assert obj.__doc__, name


# ---- errors name the public class and method -----------------------------------------

def _message(call):
    with pytest.raises(TypeError) as info:
        call()
    msg = str(info.value)
    assert not INTERNAL.search(msg), msg
    return msg


@pytest.mark.parametrize("name", KEY_CLASSES)
def test_constructor_errors_name_the_class(name):
    cls, key = PUBLIC[name], key_for(name)
    assert _message(lambda: cls()) == f"{name}() missing required argument 'key' (pos 1)"
    assert _message(lambda: cls(key, backend=None)) == \
        f"{name}: backend must be a str ('auto' or a name from aeskit.backends().available), " \
        "not None"
    assert _message(lambda: cls(key, backend=1)).startswith(f"{name}: backend must be a str")
    assert _message(lambda: cls(key, 1, 2, 3)).startswith(f"{name}() takes at most")
    assert name in _message(lambda: cls(key, nope=1))
    if "tag_length" in inspect.signature(cls).parameters:
        assert _message(lambda: cls(key, tag_length="16")).startswith(
            f"{name}: tag_length must be an int, not str")
    if hasattr(cls, "generate_key"):
        if len(FACTS[name].key_sizes) == 1:   # bit_length optional: the one size
            assert len(cls.generate_key()) == FACTS[name].key_sizes[0]
        else:
            assert _message(lambda: cls.generate_key()).startswith(f"{name}.generate_key()")
        assert _message(lambda: cls.generate_key(128, 1)).startswith(f"{name}.generate_key()")


def _objects():
    objs = {name: make(name) for name in KEY_CLASSES}
    objs.update(contexts())
    return objs


def test_method_errors_name_the_class_and_method():
    for name, obj in _objects().items():
        methods, _ = STUB_CLASSES[name]
        for meth, (fn, _) in methods.items():
            if meth.startswith("_"):
                continue
            bound = getattr(obj, meth)
            params = [p for p in inspect.signature(bound).parameters.values()
                      if p.kind is not inspect.Parameter.KEYWORD_ONLY]
            prefix = f"{name}.{meth}()"
            too_many = [None] * (len(params) + 1)
            assert _message(lambda: bound(*too_many)).startswith(prefix), (name, meth)
            if any(p.default is inspect.Parameter.empty for p in params):
                assert _message(lambda: bound()).startswith(prefix), (name, meth)
            assert prefix in _message(lambda: bound(nope=1)), (name, meth)


def test_keyword_errors():
    ctr = aeskit.AESCTR(bytes(16))
    iv = bytes(16)
    assert _message(lambda: ctr.encrypt(iv, iv=iv)) == \
        "AESCTR.encrypt() got multiple values for argument 'iv'"
    assert _message(lambda: ctr.encrypt(iv, dat=b"")) == \
        "AESCTR.encrypt() got an unexpected keyword argument 'dat'"
    assert _message(lambda: ctr.encrypt_into(iv, b"")) == \
        "AESCTR.encrypt_into() missing required argument 'buf'"
    assert _message(lambda: ctr.encrypt(iv, b"", b"")) == \
        "AESCTR.encrypt() takes at most 2 arguments (3 given)"
    xts = aeskit.AESXTS(bytes(range(32)))
    assert _message(lambda: xts.encrypt_sectors(0, bytes(512), 512)) == \
        "AESXTS.encrypt_sectors() takes at most 2 positional arguments (3 given)"
    assert _message(lambda: xts.encrypt_sectors(0, bytes(512), sectorsize=512)) == \
        "AESXTS.encrypt_sectors() got an unexpected keyword argument 'sectorsize'"
    assert _message(lambda: aeskit.AESECB(bytes(16)).encryptor(iv)) == \
        "AESECB.encryptor() takes no arguments (1 given)"
    assert _message(lambda: aeskit.AESCMAC(bytes(16)).new(b"", b"")) == \
        "AESCMAC.new() takes at most 1 argument (2 given)"
    assert _message(lambda: aeskit.AESKW(bytes(16)).wrap()) == \
        "AESKW.wrap() takes exactly 1 argument (0 given)"
    gcm = aeskit.AESGCM(bytes(16))
    assert _message(lambda: gcm.encrypt(bytes(12), b"")) == \
        "AESGCM.encrypt() missing required argument 'associated_data'"
    assert _message(lambda: gcm.encryptor(bytes(12)).update(b"", b"", b"")) == \
        "AEADContext.update() takes exactly 1 argument (3 given)"


def _nul_keyword_calls():
    """(where, keyword, call): a method that parses keywords, given one that is a
    parameter's name with a NUL and more after it. Compared up to the NUL alone, it would
    read as that name, and the comparison would read past the name's end."""
    ctr, ecb = aeskit.AESCTR(bytes(16)), aeskit.AESECB(bytes(16))
    gcm, siv = aeskit.AESGCM(bytes(16)), aeskit.AESSIV(bytes(32))
    xts = aeskit.AESXTS(bytes(range(32)))
    iv, nonce, buf = bytes(16), bytes(12), bytearray(64)
    cases = [
        ("AESCTR.encrypt", "iv\0xx", lambda kw: ctr.encrypt(data=b"", **kw)),
        ("AESCTR.encrypt_into", "buf\0", lambda kw: ctr.encrypt_into(iv, b"", **kw)),
        ("AESECB.decrypt", "data\0data", lambda kw: ecb.decrypt(**kw)),
        ("AESGCM.encrypt", "associated_data\0", lambda kw: gcm.encrypt(nonce, b"", **kw)),
        ("AESGCM.decrypt_into", "nonce\0\0",
         lambda kw: gcm.decrypt_into(data=bytes(16), associated_data=None, buf=buf, **kw)),
        ("AESSIV.encrypt", "data\0x", lambda kw: siv.encrypt(associated_data=None, **kw)),
        ("AESXTS.encrypt_sectors", "sector_size\0",
         lambda kw: xts.encrypt_sectors(0, bytes(512), **kw)),
        ("AESXTS.decrypt_sectors_into", "first_sector\0x",
         lambda kw: xts.decrypt_sectors_into(data=bytes(512), buf=buf * 8, **kw)),
        ("aes_key_wrap", "key_to_wrap\0", lambda kw: aeskit.aes_key_wrap(bytes(16), **kw)),
    ]
    return [(where, word, lambda c=call, w=word: c({w: 512 if "sector_size" in w else b""}))
            for where, word, call in cases]


@pytest.mark.parametrize("where,word,call", _nul_keyword_calls(),
                         ids=[w for w, _, _ in _nul_keyword_calls()])
def test_keyword_with_a_nul_is_unknown(where, word, call):
    """api.h compares a keyword's length with the name's first: "iv\\0xx" is no "iv"
    (the ASan build would flag a read past the name)."""
    assert _message(call) == f"{where}() got an unexpected keyword argument {word!r}"


# ---- block modes take keywords as the AEAD classes do --------------------------------

BLOCK_MODES = [m.class_name for m in MODES if m.family == "cipher"]


@pytest.mark.parametrize("name", BLOCK_MODES)
def test_block_mode_keywords(name):
    obj = make(name)
    first = [p for p in inspect.signature(obj.encrypt).parameters][:-1]   # [] or [iv|tweak]
    lead = {p: bytes(range(16, 32)) for p in first}
    data = bytes(range(48))
    want = obj.encrypt(*lead.values(), data)
    assert obj.encrypt(**lead, data=data) == want
    assert obj.decrypt(**lead, data=want) == data
    for pos in range(len(lead) + 2):
        buf = bytearray(48)
        args = [*lead.values(), data, buf]
        names = [*lead, "data", "buf"]
        n = obj.encrypt_into(*args[:pos], **dict(zip(names[pos:], args[pos:])))
        assert n == 48 and buf == want, pos
    buf = bytearray(48)
    assert obj.decrypt_into(**lead, buf=buf, data=want) == 48 and buf == data
    if FACTS[name].sectors:
        s = obj.encrypt_sectors(7, bytes(1024), sector_size=512)
        assert obj.encrypt_sectors(first_sector=7, data=bytes(1024), sector_size=512) == s
        out = bytearray(1024)
        assert obj.encrypt_sectors_into(7, bytes(1024), buf=out, sector_size=512) == 1024
        assert out == s
        assert obj.decrypt_sectors(data=s, first_sector=7, sector_size=512) == bytes(1024)


# ---- _into size errors, finalize_with_tag --------------------------------------------

def _into_calls():
    """(label, call(buf), bytes needed) for every _into entry point."""
    d = bytes(range(32))
    out = []
    for name in KEY_CLASSES:
        obj = make(name)
        if not hasattr(obj, "encrypt_into"):
            continue
        params = list(inspect.signature(obj.encrypt_into).parameters)
        if params[0] in ("iv", "tweak"):
            lead = (bytes(16),)
        elif params[0] == "nonce":
            lead = (nonce_for(name),)
        else:
            lead = ()
        ad = () if params[len(lead) + 1] == "buf" else (None,)
        sealed = obj.encrypt(*lead, d, *ad)
        out.append((f"{name}.encrypt_into", lambda b, o=obj, l=lead, a=ad:
                    o.encrypt_into(*l, d, *a, b), len(sealed)))
        plain = len(d)
        out.append((f"{name}.decrypt_into", lambda b, o=obj, l=lead, a=ad, s=sealed:
                    o.decrypt_into(*l, s, *a, b), plain))
    ctx = aeskit.AESCTR(bytes(16)).encryptor(bytes(16))
    out.append(("CipherContext.update_into", lambda b: ctx.update_into(d, b), 32))
    actx = aeskit.AESGCM(bytes(16)).encryptor(bytes(12))
    out.append(("AEADContext.update_into", lambda b: actx.update_into(d, b), 32))
    return out


def test_into_size_errors_name_the_call_and_sizes():
    for label, call, need in _into_calls():
        with pytest.raises(ValueError) as info:
            call(bytearray(need - 1))
        assert str(info.value) == f"{label}: buf must be at least {need} bytes, got {need - 1}", \
            label
        assert call(bytearray(need)) == need, label


@pytest.mark.parametrize("name", [m.class_name for m in MODES if m.aead and m.streams])
def test_finalize_with_tag_wrong_lengths_are_valueerror(name):
    obj = make(name)
    nonce = nonce_for(name)
    sealed = obj.encrypt(nonce, b"some data", b"ad")
    ct, tag = sealed[:-16], sealed[-16:]
    ctx = obj.decryptor(nonce)
    ctx.authenticate_additional_data(b"ad")
    out = ctx.update(ct)
    for bad in (tag + b"\0", tag[:-1], b""):
        with pytest.raises(ValueError, match=f"^AEADContext.finalize_with_tag: tag must be 16 "
                                             f"bytes, got {len(bad)}$") as info:
            ctx.finalize_with_tag(bad)
        assert not isinstance(info.value, aeskit.InvalidTag)
    # a wrong length leaves the stream as it was: the right tag still ends it
    assert out + ctx.finalize_with_tag(tag) == b"some data"


# ---- pickle and copy -----------------------------------------------------------------

@pytest.mark.parametrize("name", KEY_CLASSES)
def test_key_objects_refuse_pickle_and_copy_as_themselves(name):
    obj = make(name)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        with pytest.raises(TypeError, match=f"^cannot pickle '{name}' object: it holds a "
                                            "secret key"):
            pickle.dumps(obj, protocol)
    with pytest.raises(TypeError, match=name):
        obj.__reduce__()
    assert copy.copy(obj) is obj
    assert copy.deepcopy(obj) is obj
    assert copy.deepcopy([obj, obj]) == [obj, obj]


def test_contexts_refuse_pickle():
    for name, ctx in contexts().items():
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            with pytest.raises(TypeError, match=f"^cannot pickle '{name}' object"):
                pickle.dumps(ctx, protocol)


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy])
def test_stream_contexts_refuse_copy(how):
    for name, ctx in contexts().items():
        if name == "MACContext":
            continue
        with pytest.raises(TypeError, match=f"^cannot copy '{name}' object"):
            how(ctx)
        ctx.update(b"still usable")


@pytest.mark.parametrize("how", [copy.copy, copy.deepcopy])
def test_mac_context_copies_as_copy_does(how):
    mac = aeskit.AESCMAC(bytes(16))
    ctx = mac.new(b"abc")
    twin = how(ctx)
    assert twin is not ctx and type(twin) is aeskit.MACContext
    twin.update(b"def")
    assert ctx.digest() == mac.mac(b"abc")
    assert twin.digest() == mac.mac(b"abcdef")
