"""aeskit.streaming.output.AtomicFile: no name until commit, on both of its paths.

The CLI's kill tests (test_stream_kill.py) send real signals; these check the file's own
rules one at a time: what exists before and after commit and discard, a target that
appears meanwhile, a refused O_TMPFILE, errors that name the user's path.
"""

from __future__ import annotations

import errno
import os
import stat

import pytest

from aeskit.streaming import output
from aeskit.streaming.output import AtomicFile

HAS_TMPFILE = hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")


@pytest.fixture(params=["o_tmpfile", "named_temp"])
def path_kind(request, monkeypatch):
    if request.param == "o_tmpfile" and not HAS_TMPFILE:
        pytest.skip("no O_TMPFILE here")
    if request.param == "named_temp":
        monkeypatch.setenv(output.NO_O_TMPFILE_ENV, "1")
    else:
        monkeypatch.delenv(output.NO_O_TMPFILE_ENV, raising=False)
    return request.param


def test_no_name_until_commit(tmp_path, path_kind):
    out = tmp_path / "out"
    a = AtomicFile(out, replace=False)
    assert (a.temp is None) == (path_kind == "o_tmpfile")
    a.file.write(b"data")
    listing = os.listdir(tmp_path)
    assert listing == ([] if path_kind == "o_tmpfile" else [os.path.basename(a.temp)])
    a.commit()
    assert os.listdir(tmp_path) == ["out"] and out.read_bytes() == b"data"
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600 and a.file.closed


def test_discard_leaves_nothing(tmp_path, path_kind):
    with pytest.raises(RuntimeError), AtomicFile(tmp_path / "out", replace=True) as a:
        a.file.write(b"data")
        raise RuntimeError
    assert os.listdir(tmp_path) == []


def test_replace_keeps_the_old_file_until_commit(tmp_path, path_kind):
    out = tmp_path / "out"
    out.write_bytes(b"old")
    with pytest.raises(FileExistsError) as e:
        AtomicFile(out, replace=False)
    assert e.value.filename == str(out)
    a = AtomicFile(out, replace=True)
    a.file.write(b"new")
    assert out.read_bytes() == b"old"
    a.commit()
    assert out.read_bytes() == b"new" and os.listdir(tmp_path) == ["out"]


def test_a_target_that_appears_meanwhile_is_not_replaced(tmp_path, path_kind):
    out = tmp_path / "out"
    a = AtomicFile(out, replace=False)
    a.file.write(b"mine")
    out.write_bytes(b"theirs")
    with pytest.raises(FileExistsError) as e:
        a.commit()
    assert e.value.filename == str(out)
    assert out.read_bytes() == b"theirs" and os.listdir(tmp_path) == ["out"]


def test_errors_name_the_users_path(tmp_path, path_kind):
    out = tmp_path / "missing" / "out"
    with pytest.raises(FileNotFoundError) as e:
        AtomicFile(out, replace=True)
    assert e.value.filename == str(out)
    with pytest.raises(IsADirectoryError) as e:
        AtomicFile(tmp_path, replace=True)
    assert e.value.filename == str(tmp_path)


@pytest.mark.skipif(not HAS_TMPFILE, reason="no O_TMPFILE here")
@pytest.mark.parametrize("code", [errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL])
def test_refused_o_tmpfile_falls_back(tmp_path, monkeypatch, code):
    """A file system without O_TMPFILE (or a kernel that does not know it) gets the
    named temporary file; any other error is the user's."""
    real = os.open

    def refusing(path, flags, *args, **kwargs):
        if flags & os.O_TMPFILE == os.O_TMPFILE:
            raise OSError(code, os.strerror(code), path)
        return real(path, flags, *args, **kwargs)

    monkeypatch.delenv(output.NO_O_TMPFILE_ENV, raising=False)
    monkeypatch.setattr(os, "open", refusing)
    a = AtomicFile(tmp_path / "out", replace=False)
    assert a.temp is not None and os.path.basename(a.temp).startswith(".out.")
    a.file.write(b"x")
    a.commit()
    assert os.listdir(tmp_path) == ["out"]


def test_same_file():
    assert output.same_file(__file__, __file__)
    assert not output.same_file(__file__, os.path.dirname(__file__))
    assert not output.same_file(__file__, "/no/such/file")
    with open(__file__, "rb") as f:
        assert output.same_file(f, __file__)
