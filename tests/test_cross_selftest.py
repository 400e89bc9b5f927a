"""The Python-free self-test of the C core (tests/cross/selftest.c), built natively.

tests/cross/run.sh builds it for aarch64, ppc64le and ppc64 and runs it under qemu-user
(.ci/run does); here it is built with this machine's gcc at -Wall -Wextra -Werror and run
on this CPU: every slot of every backend this CPU has against portable at every block
count around the batches, and the known-answer files; and its negative control, which
must fail. About 20 s on 2 cores. Needs bash
and gcc (otherwise skipped).
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "tests" / "cross" / "run.sh"


def test_selftest_native_and_its_negative_control(tmp_path):
    """The self-test passes on this CPU; then (one build: under xdist two tests could build
    it twice) its negative control, a copy of portable whose CTR flips one bit, must fail
    the slot checks and make the program exit non-zero."""
    if shutil.which("bash") is None or shutil.which("gcc") is None:
        pytest.skip("needs bash and gcc")
    exe = tmp_path / "selftest"
    res = subprocess.run(["bash", str(RUN), "native"], capture_output=True, text=True,
                         timeout=600, env={**os.environ, "CC": "gcc", "SELFTEST_EXE": str(exe)})
    lines = res.stdout.strip().splitlines()
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    m = re.fullmatch(r"(\d+) passed, 0 failed", lines[-1])
    assert m, lines[-1:]
    # portable's known answers alone are ~760; a backend's slots add thousands
    assert int(m.group(1)) > 700
    assert "portable" in res.stdout

    res = subprocess.run([str(exe), str(ROOT / "tests" / "vectors"), "--negative-control"],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 1, res.stdout[-2000:] + res.stderr[-2000:]
    assert "FAIL slot [broken] ctr" in res.stderr
    m = re.fullmatch(r"(\d+) passed, (\d+) failed", res.stdout.strip().splitlines()[-1])
    assert m and int(m.group(2)) > 0
