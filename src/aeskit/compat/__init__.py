"""Drop-in layers with another library's exact behaviour over aeskit's kernels.

``aeskit.compat.cryptography`` has pyca/cryptography's AEAD classes and ``Cipher``
with pyca's rules, messages and exceptions: replacing pyca's import with it changes
nothing but the speed. The native classes (``aeskit.AESGCM``, ...) follow the
standards' own ranges instead; docs/migrating.md says where the two differ and why.
"""
