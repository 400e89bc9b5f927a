"""A pytest plugin for CI's ASan/UBSan step (.ci/run: PYTHONPATH=tests, -p asan_selection):
what that run leaves out beyond the files .ci/run --ignores, because ASan and UBSan add
nothing to it there. The README's run (the step before, natively) runs every one of them.

1. Key-size sweeps (KEY_SWEEPS): only each sweep's smallest key size. The key size lives in
   the key schedule's rounds count (aeskit.h: rk[128], rounds 10, 12 or 14), inside a
   fixed-size struct, so it changes no buffer access ASan can check: the lengths, offsets,
   splits, counters and tags swept stay, on every backend and mode and in both directions.
   The smallest, because AES-128 alone has code of its own around the kernels (aesni's GCM
   loop in asm and the C that hands over to it and takes back, aesni_gcm_asm.h; the zmm
   GCM's 10-round copy). Every key size's key expansion still runs under ASan (test_kat,
   test_aead_api, test_errors, ...).
2. Large messages (ONE_BACKEND): only on the default backend. They check the glue's
   chunking (the GIL released for large calls) and length arithmetic (GCM's bit lengths
   past 2**32, in unsigned 64-bit, which UBSan does not flag), not a kernel's paths, which
   the boundary sweeps run under ASan on every backend at every batch's lengths.
3. Tests that run no C of the extension's, or only what others here run (NO_C): the lint
   of the C sources by clang (test_compiler_dialects), the pytest --collect-only child of
   test_specs, and ``aeskit bench`` end to end: argument refusals (argparse, before any C)
   and the timing runs of the views; test_text_run stays (one tiny run in a child: the
   probe and the timed calls), and test_bench_targets runs every target's C once.
"""

import aeskit
import pytest

KEY_SWEEPS = (
    "test_differential.py::",
    "test_aead_differential.py::",
    "test_aead_tamper.py::",
    "test_wide_boundaries.py::",
    "test_wide_aead.py::",
    "test_gcm_kat.py::test_counter_wrap",
)
ONE_BACKEND = (
    "test_streaming.py::test_large_updates",
    "test_padding.py::test_large_messages",
    "test_aead_differential.py::test_large_plaintext_bit_length",
    "test_aead_differential.py::test_large_aad_bit_length",
)
NO_C = (
    "test_compiler_dialects.py::",
    "test_specs.py::test_known_answer_selection_covers_every_mode",
    "test_bench_cli.py::test_bad_options_are_refused",
    "test_bench_cli.py::test_json_run_with_views",
    "test_bench_cli.py::test_aead_text_run",
    "test_bench_cli.py::test_aead_json_run",
    "test_bench_cli.py::test_floors_per_backend_in_json_and_text",
    "test_bench_cli.py::test_ghash_runs_once_in_one_direction",
    "test_bench_cli.py::test_xts_sectors_row",
    "test_bench_cli.py::test_csv_run_has_bench_slope_layout",
    "test_bench_cli.py::test_plot_file",
    "test_bench_cli.py::test_resolve_checks_the_plot_path",
)


def _name(item):
    """tests/test_x.py::test_y[...] -> test_x.py::test_y"""
    return item.nodeid.split("[")[0].split("/")[-1]


def _matches(item, prefixes):
    name = _name(item)
    return any(name == p or (p.endswith("::") and name.startswith(p)) for p in prefixes)


def _sweep_key(item):
    """The item's test and its parameters but the key size."""
    params = item.callspec.params
    return (_name(item),) + tuple(sorted((k, repr(v)) for k, v in params.items()
                                         if k != "ks"))


def pytest_collection_modifyitems(config, items):
    smallest = {}
    for item in items:
        ks = getattr(item, "callspec", None) and item.callspec.params.get("ks")
        if ks is not None and _matches(item, KEY_SWEEPS):
            key = _sweep_key(item)
            smallest[key] = min(smallest.get(key, ks), ks)
    default = aeskit.backends().default
    keep, drop = [], []
    for item in items:
        params = item.callspec.params if hasattr(item, "callspec") else {}
        if (_matches(item, NO_C)
                or (_matches(item, ONE_BACKEND) and params.get("backend") != default)
                or ("ks" in params and _matches(item, KEY_SWEEPS)
                    and params["ks"] != smallest[_sweep_key(item)])):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
