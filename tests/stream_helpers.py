"""An independent AES-GCM-HKDF streaming AEAD (Tink's format) on pyca/cryptography.

Written from the format description, not from aeskit.streaming, so the two check each
other: it encrypts with a caller's salt and nonce prefix and decrypts whole streams.
"""

from __future__ import annotations

import struct

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

HASHES = {"sha1": hashes.SHA1, "sha256": hashes.SHA256, "sha512": hashes.SHA512}


def derive(ikm, salt, aad, dks, hash_name):
    return HKDF(HASHES[hash_name](), dks, salt, aad).derive(ikm)


def nonce(prefix, i, last):
    return prefix + struct.pack(">I", i) + (b"\x01" if last else b"\x00")


def ref_encrypt(ikm, pt, aad, *, seg, dks, hash_name, salt, prefix, first_segment=0):
    header = bytes([1 + dks + 7]) + salt + prefix
    gcm = AESGCM(derive(ikm, salt, aad, dks, hash_name))
    first = seg - len(header) - 16
    chunks = [pt[:first]]
    rest = pt[first:]
    while rest:
        chunks.append(rest[:seg - 16])
        rest = rest[seg - 16:]
    out = [header]
    for i, c in enumerate(chunks):
        out.append(gcm.encrypt(nonce(prefix, first_segment + i, i == len(chunks) - 1), c, None))
    return b"".join(out)


def ref_decrypt(ikm, ct, aad, *, seg, dks, hash_name):
    hl = 1 + dks + 7
    assert ct[0] == hl
    salt, prefix = ct[1:1 + dks], ct[1 + dks:hl]
    gcm = AESGCM(derive(ikm, salt, aad, dks, hash_name))
    segs = [ct[hl:seg]]
    pos = seg
    while pos < len(ct):
        segs.append(ct[pos:pos + seg])
        pos += seg
    return b"".join(gcm.decrypt(nonce(prefix, i, i == len(segs) - 1), s, None)
                    for i, s in enumerate(segs))


def segments(ct, seg):
    """The ciphertext segments after the header-less split (segment 0 holds the header)."""
    return [ct[i:i + seg] for i in range(0, len(ct), seg)]
