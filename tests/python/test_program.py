"""The program's functions from Python: train, export, load_policy, evaluate and cli, each the
same code as the `diffloco` subcommand."""
import json

import pytest
import torch

import diffloco


def test_train_export_load_and_evaluate(tmp_path, source_dir):
    config = str(source_dir / "configs/walk_quadruped_shac.yaml")
    sets = ["shac.iterations=2", "shac.num_envs=4", "shac.horizon=4", "shac.critic_iterations=1",
            "run.checkpoint_every=1"]
    r = diffloco.train(config, overrides=sets, seed=3, out=str(tmp_path / "runs"))
    assert r["finished"] and r["iteration"] == 2
    paths = diffloco.export(r["run_dir"], str(tmp_path / "walk.pt"))
    assert paths["torchscript"].endswith("walk.pt") and paths["yaml"].endswith("walk.yaml")
    policy = diffloco.load_policy(paths["torchscript"])
    assert policy.metadata["format"]["task"] == "walk" and "observation" in policy.metadata
    env = diffloco.make_env(config, overrides=sets)
    assert env.num_envs == 4 and env.num_obs == policy.num_obs
    obs, _ = env.get_observations()
    assert policy(obs).shape == (4, env.num_actions)

    result = diffloco.evaluate(paths["torchscript"], episodes=2, envs=2, seed=1)
    assert result["episodes"] == 2 and len(result["episode_stats"]) == 2
    stats = result["episode_stats"]
    assert result["task"] == "walk" and result["falls"] == sum(e["fell"] for e in stats)
    # an episode ends at a fall or at the walk task's 10 s, never before its first step
    assert all(0 < e["length_s"] <= 10.0 + 1e-9 and (e["fell"] or e["length_s"] > 10.0 - 1e-9)
               for e in stats), stats


def test_evaluate_the_shipped_walk_policy_as_the_program_does(source_dir, capfd):
    policy = str(source_dir / "pretrained/walk_quadruped.pt")
    result = diffloco.evaluate(policy, episodes=2, envs=2, seed=5, contact="hard")
    assert diffloco.cli(["eval", policy, "--episodes", "2", "--envs", "2", "--seed", "5",
                         "--contact", "hard", "--json"]) == 0
    printed = json.loads(capfd.readouterr().out.strip().splitlines()[-1])
    for key in ("return_mean", "falls", "length_s_mean"):
        assert printed[key] == pytest.approx(result[key], rel=1e-5), key


def test_errors_arrive_as_exceptions_with_the_programs_message(tmp_path, source_dir):
    with pytest.raises(ValueError, match="--bogus"):
        diffloco.evaluate(str(source_dir / "pretrained/walk_quadruped.pt"), bogus=1)
    with pytest.raises(RuntimeError, match="shac.horizon"):
        diffloco.train(str(source_dir / "configs/walk_quadruped_shac.yaml"),
                       overrides=["shac.horizon=x"], out=str(tmp_path))
    assert diffloco.cli(["eval"]) != 0


def test_ctrl_c_stops_a_training_with_a_checkpoint(tmp_path, source_dir):
    import signal
    import subprocess
    import sys
    config = str(source_dir / "configs/walk_quadruped_shac.yaml")
    script = f"""
import diffloco
try:
    diffloco.train({config!r}, overrides=["shac.iterations=100000", "shac.num_envs=4",
                   "shac.horizon=4", "shac.critic_iterations=1", "run.checkpoint_every=100000"],
                   out={str(tmp_path)!r})
except KeyboardInterrupt as e:
    print("INTERRUPTED", e, flush=True)
"""
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    lines = []
    for line in p.stdout:  # the trainer's console lines
        lines.append(line)
        if "shac it" in line and "/100000" in line and int(line.split("shac it")[1].split("/")[0]) >= 3:
            p.send_signal(signal.SIGINT)
            break
    out = "".join(lines) + p.communicate(timeout=120)[0]
    assert p.returncode == 0, out
    assert "INTERRUPTED training interrupted at iteration" in out, out
    assert list(tmp_path.glob("*/model_*.pt")), out
