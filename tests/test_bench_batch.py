"""``aeskit bench --batch``: the batch view's grid, its ways and their agreement."""

import pytest

from aeskit import cli
from aeskit.bench import batch, system


def test_every_batch_family_is_measured_and_agrees():
    """One mode of each family: each way gives the same bytes (checked before timing) and
    a positive time per message; pyca where it has the mode."""
    cells = batch.measure(["GCM", "SIV", "ECB", "XTS", "CMAC", "KWP"], "auto", (64,), (1, 3),
                          repetitions=1)
    assert [(c.mode, c.count) for c in cells] == [
        (m, n) for m in ("GCM", "SIV", "ECB", "XTS", "CMAC", "KWP") for n in (1, 3)]
    for c in cells:
        assert set(c.ns) >= {"packed", "seq", "loop"} and all(v > 0 for v in c.ns.values())
        assert ("kernel" in c.ns) == (c.mode != "KWP")   # kernel_time takes no key wrap
    assert "pyca" in cells[0].ns and "pyca" in cells[-1].ns


def test_lengths_a_mode_does_not_take_are_left_out():
    cells = batch.measure(["KW", "CBC", "CTR"], "auto", (20, 32), (1,), repetitions=1)
    assert [(c.mode, c.length) for c in cells] == [("KW", 32), ("CBC", 32), ("CTR", 20),
                                                   ("CTR", 32)]


def test_table_has_a_row_per_cell_with_cycles_per_byte():
    cell = batch.Cell("GCM", 64, 16, {"packed": 100.0, "seq": 150.0, "loop": 300.0,
                                      "kernel": 250.0})
    lines = batch.table([cell], mhz=3000.0)
    assert len(lines) == 3
    row = lines[2].split()
    assert row[:4] == ["GCM", "64", "16", "100.0"]
    assert row[4] == "4.69" and row[8] == "250.0" and row[9] == "-"   # no pyca: a dash
    assert row[-2:] == ["3.0x", "2.5x"]   # loop/packed, kernel/packed
    row = batch.table([batch.Cell("KW", 64, 1, {"packed": 1.0, "seq": 1.0, "loop": 2.0})],
                      mhz=None)[2].split()
    assert row[-3:] == ["-", "2.0x", "-"]


def test_modes_resolve_by_any_name():
    assert batch.resolve_modes("aesgcm,OCB,gcmsiv,GCM") == ["GCM", "OCB3", "GCM-SIV"]
    assert batch.resolve_modes(None) == list(batch.DEFAULT_MODES)
    with pytest.raises(ValueError, match="unknown mode 'GHASH' for --batch"):
        batch.resolve_modes("GHASH")


def test_cli_batch_view(capsys):
    assert cli.main(["bench", "--batch", "--quick", "--modes", "CMAC", "--repetitions",
                     "1", "--cpu-mhz", "3000"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("aeskit bench --batch: backend ") and "3000 MHz" in out[0]
    picked = system.Cores().enabled   # more than one CPU to pick from, and AES-NI
    rows = [line.split() for line in (out[3:-1] if picked else out[3:])]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("CMAC", str(length), str(n)) for length in (64, 1500) for n in (1, 64, 4096)]
    if picked:   # 6 cells, each timed 1 to CELL_ATTEMPTS times
        last = out[-1]
        assert last.startswith("each cell ran on the CPU (of ") and "least shared" in last
        timings = int(last.split(" timings of a cell")[0].rsplit(" ", 1)[1])
        assert 6 <= timings <= 6 * batch.CELL_ATTEMPTS


class _FakeCores:
    """system.Cores' interface: pick() before each timing of a cell, still_unshared()
    after it, False for the timings listed in `turn` (counted from 0)."""

    def __init__(self, turn):
        self.turn, self.picks, self.checks = set(turn), 0, 0

    def pick(self):
        self.picks += 1
        return 0

    def still_unshared(self):
        self.checks += 1
        return self.checks - 1 not in self.turn


def test_cells_move_to_the_least_shared_cpu_and_are_timed_again_when_it_turns():
    """A cell is timed once when its CPU stays unshared, again when it turned shared
    during the timing, and at most CELL_ATTEMPTS times when it keeps turning."""
    cores = _FakeCores(turn=())
    cells = batch.measure(["CMAC"], "auto", (64,), (1, 2), repetitions=1, cores=cores)
    assert len(cells) == 2 and cores.picks == cores.checks == 2
    cores = _FakeCores(turn=(0,))   # the first cell's first timing: timed again
    batch.measure(["CMAC"], "auto", (64,), (1, 2), repetitions=1, cores=cores)
    assert cores.picks == cores.checks == 3
    cores = _FakeCores(turn=range(100))   # always turning: CELL_ATTEMPTS each, then kept
    cells = batch.measure(["CMAC"], "auto", (64,), (1,), repetitions=1, cores=cores)
    assert len(cells) == 1 and cores.picks == batch.CELL_ATTEMPTS
    assert all(v > 0 for v in cells[0].ns.values())


def test_peers_for_the_batch_view():
    """--peers picks whether pyca's column is timed; the view has no other peer."""
    assert batch.resolve_peers(None) and batch.resolve_peers("all")
    assert batch.resolve_peers("cryptography") and not batch.resolve_peers("none")
    for bad in ("pycryptodome", "cryptography,pycryptodome", "openssl"):
        with pytest.raises(ValueError, match="all, cryptography or none"):
            batch.resolve_peers(bad)
    cells = batch.measure(["GCM"], "auto", (64,), (2,), repetitions=1, pyca=False)
    assert "pyca" not in cells[0].ns and {"packed", "seq", "loop"} <= set(cells[0].ns)


@pytest.mark.parametrize("flag", [["--key-bits", "256"], ["--layer", "api"], ["--sizes"],
                                  ["--json"], ["--verbose"], ["--unaligned", "3"]])
def test_batch_view_refuses_the_main_views_options(flag, capsys):
    """An option the batch view does not take is an error naming it, not ignored."""
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "--batch", "--modes", "CMAC", *flag])
    assert e.value.code == 2
    assert f"{flag[0]}: not for --batch" in capsys.readouterr().err


def test_batch_view_without_peers(capsys):
    assert cli.main(["bench", "--batch", "--quick", "--modes", "CBC", "--peers", "none",
                     "--repetitions", "1", "--cpu-mhz", "3000"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[3:]
            if line.startswith("CBC")]
    assert len(rows) == 3 and all(r[9] == "-" for r in rows)   # L = 64 (1500: not whole blocks)
