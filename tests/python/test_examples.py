"""The examples of examples/python, each in a short form: they run and do what they say."""
import re
import subprocess
import sys


def _run(source_dir, script, *args):
    out = subprocess.run([sys.executable, str(source_dir / "examples/python" / script), *args],
                         check=True, capture_output=True, text=True, timeout=600)
    return out.stdout


def test_shac_walk_runs_and_saves_a_policy(source_dir, tmp_path):
    out = _run(source_dir, "shac_walk.py", "--iterations", "4", "--log-every", "2",
               "--out", str(tmp_path / "p.pt"))
    assert re.search(r"iteration 4: episode return [-0-9.]+", out), out
    import torch
    policy = torch.jit.load(str(tmp_path / "p.pt"))
    assert policy(torch.zeros(3, 49)).shape == (3, 12)


def test_jump_raises_the_base(source_dir):
    out = _run(source_dir, "jump.py", "--iterations", "12")
    heights = [float(h) for h in re.findall(r"base height at [0-9.]+ s = ([-0-9.]+) m", out)]
    assert len(heights) >= 2 and heights[-1] > heights[0] + 0.02, out


def test_sysid_mass_finds_the_payload(source_dir):
    out = _run(source_dir, "sysid_mass.py", "--iterations", "12")
    error = float(re.search(r"error ([-+0-9.]+) %", out).group(1))
    assert abs(error) < 2.0, out
