"""Keys from and to Tink's cleartext JSON keysets of AesGcmHkdfStreamingKey keys.

Keys load from and save to Tink's cleartext JSON keysets (as ``tinkey``
writes them). The three protobuf messages involved have five scalar fields
between them, so they are parsed and written by hand here (``_pb_*``): the
``protobuf`` package would be a run-time dependency for that alone.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Iterator
from typing import Any

from .format import _HASHES, _Key

KEY_TYPE_URL = "type.googleapis.com/google.crypto.tink.AesGcmHkdfStreamingKey"
#: from_keyset's error for text that is not a keyset at all
NOT_A_KEYSET = "not a Tink JSON keyset"
_HASH_NAMES = {v: k for k, v in _HASHES.items()}


def _from_json(keyset: str | bytes, backend: str) -> tuple[list[_Key], list[dict[str, Any]]]:
    """The enabled keys of a Tink cleartext JSON keyset, the primary one first, and its
    other entries as read (StreamingAEAD.from_keyset)."""
    try:
        ks = json.loads(keyset)
        entries = list(ks["key"])
        primary_id = int(ks["primaryKeyId"])
        if not all(isinstance(e, dict) for e in entries):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        # the parser's own words (a line and column, a codec) mean nothing to
        # someone who gave the wrong file
        raise ValueError(NOT_A_KEYSET) from None
    keys: list[_Key] = []
    extra: list[dict[str, Any]] = []
    primary = None
    for e in entries:
        kid = int(e.get("keyId", 0))
        status = e.get("status")
        if status != "ENABLED":
            if kid == primary_id:
                raise ValueError(f"keyset: the primary key {kid} is {status}, not ENABLED")
            extra.append(e)
            continue
        kd = e.get("keyData", {})
        if kd.get("typeUrl") != KEY_TYPE_URL:
            raise ValueError(f"keyset: key {kid} is a {kd.get('typeUrl')}, not an "
                             "AesGcmHkdfStreamingKey")
        if e.get("outputPrefixType") != "RAW":
            raise ValueError(f"keyset: key {kid} has output prefix "
                             f"{e.get('outputPrefixType')}; streaming keys are RAW")
        if kd.get("keyMaterialType", "SYMMETRIC") != "SYMMETRIC":
            raise ValueError(f"keyset: key {kid} is not SYMMETRIC key material")
        try:
            version, seg, dks, hash_type, ikm = _pb_parse_key(base64.b64decode(kd["value"]))
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(f"keyset: key {kid}: bad key data: {err}") from None
        if version != 0:
            raise ValueError(f"keyset: key {kid} has version {version}, only 0 is known")
        if hash_type not in _HASH_NAMES:
            raise ValueError(f"keyset: key {kid} has HKDF hash type {hash_type}; "
                             "SHA1 (1), SHA256 (3) and SHA512 (4) are supported")
        k = _Key(ikm, seg, dks, _HASH_NAMES[hash_type], kid, backend)
        keys.append(k)
        if kid == primary_id:
            primary = k
    if primary is None:
        raise ValueError(f"keyset: no enabled key has the primary id {primary_id}")
    return [primary] + [k for k in keys if k is not primary], extra


def _to_json(keys: list[_Key], primary: _Key, extra: list[dict[str, Any]]) -> str:
    """keys, whose primary one is primary, and the extra entries as a Tink cleartext JSON
    keyset (StreamingAEAD.to_keyset)."""
    entries = []
    for k in keys:
        value = _pb_key(k.segment_size, k.derived_key_size, _HASHES[k.hkdf_hash], k.ikm)
        entries.append({
            "keyData": {"typeUrl": KEY_TYPE_URL, "value": base64.b64encode(value).decode(),
                        "keyMaterialType": "SYMMETRIC"},
            "status": "ENABLED", "keyId": k.key_id, "outputPrefixType": "RAW"})
    entries += extra
    return json.dumps({"primaryKeyId": primary.key_id, "key": entries}, indent=2)


def _new_key_id() -> int:
    return secrets.randbelow((1 << 31) - 1) + 1


# -- protobuf, by hand: varints (wire type 0) and length-delimited fields (2) ----
def _pb_varint(b: bytes, i: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        if i >= len(b) or shift > 63:
            raise ValueError("truncated varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def _pb_fields(b: bytes) -> Iterator[tuple[int, int | bytes]]:
    i = 0
    while i < len(b):
        tag, i = _pb_varint(b, i)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            v, i = _pb_varint(b, i)
            yield field, v
        elif wire == 2:
            n, i = _pb_varint(b, i)
            if i + n > len(b):
                raise ValueError("truncated field")
            yield field, b[i:i + n]
            i += n
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
        else:
            raise ValueError(f"unsupported wire type {wire}")


def _pb_parse_key(b: bytes) -> tuple[int, int, int, int, bytes]:
    """AesGcmHkdfStreamingKey{1 version, 2 params{1 segment, 2 derived size, 3 hash}, 3 key}."""
    version, params, ikm = 0, b"", b""
    for f, v in _pb_fields(b):
        if f == 1 and isinstance(v, int):
            version = v
        elif f == 2 and isinstance(v, bytes):
            params = v
        elif f == 3 and isinstance(v, bytes):
            ikm = v
    seg = dks = hash_type = 0
    for f, v in _pb_fields(params):
        if isinstance(v, int):
            if f == 1:
                seg = v
            elif f == 2:
                dks = v
            elif f == 3:
                hash_type = v
    return version, seg, dks, hash_type, ikm


def _pb_enc_varint(v: int) -> bytes:
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _pb_key(seg: int, dks: int, hash_type: int, ikm: bytes) -> bytes:
    params = (b"\x08" + _pb_enc_varint(seg) + b"\x10" + _pb_enc_varint(dks)
              + b"\x18" + _pb_enc_varint(hash_type))
    # version 0 is proto3's default and, as Tink writes it, omitted
    return (b"\x12" + _pb_enc_varint(len(params)) + params
            + b"\x1a" + _pb_enc_varint(len(ikm)) + ikm)
