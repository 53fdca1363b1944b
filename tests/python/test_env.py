"""diffloco.make_env: the rsl_rl-shaped env against the C++ env (to rounding), its gradient
against central finite differences, errors that name the file, and memory over 10 000 steps."""
import os
import re
import subprocess

import pytest
import torch

import diffloco


# To rounding, not bit for bit: built with -march=native, a stage template's out-of-line copy
# contracts multiply-adds as its translation unit inlined it, and which copy a link keeps depends
# on what that program pulls in (the module links the tools, the reference the env alone); the
# two differ by 1e-12 over these 120 steps, a changed formula by far more.
def test_rollout_equals_the_cpp_rollout(tmp_path):
    task, n, seed, steps = "velocity_rough", 4, 7, 120
    env = diffloco.make_env(task, num_envs=n, seed=seed, dtype=torch.float64)
    gen = torch.Generator().manual_seed(0)
    actions = torch.rand(steps, n, env.num_actions, generator=gen, dtype=torch.float64) * 2 - 1
    (tmp_path / "actions.bin").write_bytes(actions.numpy().tobytes())
    subprocess.run([os.environ["DIFFLOCO_ROLLOUT_REFERENCE"], task, str(n), str(seed), str(steps),
                    str(tmp_path / "actions.bin"), str(tmp_path / "out.bin")], check=True)
    ref = torch.frombuffer(bytearray((tmp_path / "out.bin").read_bytes()), dtype=torch.float64)
    per_step = n * env.num_obs + 2 * n
    assert ref.numel() == steps * per_step
    resets = 0
    with torch.no_grad():
        for k in range(steps):
            obs, rew, dones, extras = env.step(actions[k])
            row = ref[k * per_step:(k + 1) * per_step]
            close = dict(rtol=1e-10, atol=1e-10)
            assert torch.allclose(obs.flatten(), row[:n * env.num_obs], **close), \
                f"observations, step {k}"
            assert torch.allclose(rew, row[n * env.num_obs:n * env.num_obs + n], **close), \
                f"rewards, step {k}"
            assert torch.equal(dones.double(), row[n * env.num_obs + n:]), f"dones, step {k}"
            resets += int(dones.sum())
    assert resets > 0, "random actions should make some env fall within 120 steps"


def test_vecenv_shape():
    env = diffloco.make_env("walk", num_envs=3, seed=1)
    obs, extras = env.get_observations()
    assert obs.shape == (3, env.num_obs) and obs.dtype == torch.float32
    assert extras == {"observations": {}}
    assert env.num_privileged_obs is None and env.device == "cpu"
    assert env.max_episode_length > 0 and env.dt > 0
    assert sum(size for _, size in env.observation_layout) == env.num_obs
    obs, rew, dones, extras = env.step(torch.zeros(3, env.num_actions))
    assert rew.shape == (3,) and dones.dtype == torch.bool
    assert not obs.requires_grad and not rew.requires_grad  # nothing asked for a gradient
    for key in ("time_outs", "terminated", "terminal_observations", "reward_terms", "episode",
                "log"):
        assert key in extras
    assert extras["reward_terms"].shape == (3, len(env.reward_names))


def test_critic_observations_are_the_critic_group():
    env = diffloco.make_env("velocity", num_envs=3, seed=1, overrides=[
        "critic_observations={base_lin_vel: {}, friction: {}}"])
    assert env.num_privileged_obs == 4
    obs, extras = env.get_observations()
    critic = extras["observations"]["critic"]
    assert critic.shape == (3, 4)
    obs, _, _, extras = env.step(torch.zeros(3, env.num_actions))
    assert extras["observations"]["critic"].shape == (3, 4)
    assert extras["terminal_critic_observations"].shape == (3, 4)
    friction = extras["observations"]["critic"][:, 3]
    assert bool(((friction >= 0.5) & (friction <= 1.25)).all())  # the task's friction range


def test_episode_statistics_and_time_outs_arrive_in_extras():
    env = diffloco.make_env("walk", num_envs=2, seed=3,
                            overrides=["episode_length_s=0.2"])  # 10 env steps
    with torch.no_grad():
        for _ in range(env.max_episode_length):
            _, _, dones, extras = env.step(torch.zeros(2, env.num_actions))
    assert bool(dones.all()) and bool(extras["time_outs"].all())
    assert "length_s" in extras["episode"] and extras["episode"]["length_s"] == pytest.approx(0.2)
    assert "Episode/length_s" in extras["log"]


def _loss(env, a0, rest, weights):
    """Sum of weighted rewards and observations over len(rest) + 1 steps from a0."""
    total = 0
    for k, a in enumerate([a0] + rest):
        obs, rew, dones, _ = env.step(a)
        assert not bool(dones.any()), "the gradient check must not cross a reset"
        total = total + (rew * weights[k][0]).sum() + (obs * weights[k][1]).sum()
    return total


def test_step_gradient_matches_central_differences():
    env = diffloco.make_env("velocity", num_envs=2, seed=11, dtype=torch.float64)
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for _ in range(5):  # off the reset pose, feet in contact
            env.step(0.3 * torch.rand(2, env.num_actions, generator=gen, dtype=torch.float64))
    start = env.state_dict()
    a0 = 0.3 * torch.rand(2, env.num_actions, generator=gen, dtype=torch.float64)
    rest = [0.3 * torch.rand(2, env.num_actions, generator=gen, dtype=torch.float64)
            for _ in range(2)]
    weights = [(torch.rand(2, generator=gen, dtype=torch.float64),
                torch.rand(2, env.num_obs, generator=gen, dtype=torch.float64) / env.num_obs)
               for _ in range(3)]

    a = a0.clone().requires_grad_(True)
    loss = _loss(env, a, rest, weights)
    assert loss.requires_grad
    (grad,) = torch.autograd.grad(loss, a)
    env.detach()

    h = 1e-6
    fd = torch.zeros_like(a0)
    for i in range(2):
        for j in range(env.num_actions):
            values = []
            for sign in (1, -1):
                env.load_state_dict(start)
                d = a0.clone()
                d[i, j] += sign * h
                with torch.no_grad():
                    values.append(float(_loss(env, d, rest, weights)))
            fd[i, j] = (values[0] - values[1]) / (2 * h)
    err = (grad - fd).norm() / fd.norm()
    assert err < 1e-5, f"relative error {err:.2e}\nautograd {grad}\nfinite differences {fd}"


def test_no_autograd_without_grad_mode_or_a_leaf_that_requires_grad():
    env = diffloco.make_env("walk", num_envs=2, seed=0)
    a = torch.zeros(2, env.num_actions, requires_grad=True)
    with torch.no_grad():
        obs, rew, _, _ = env.step(a)
    assert not rew.requires_grad
    obs, rew, _, _ = env.step(a)
    assert rew.requires_grad
    obs, rew, _, _ = env.step(torch.zeros(2, env.num_actions))  # the carried state has history
    assert rew.requires_grad
    env.detach()
    obs, rew, _, _ = env.step(torch.zeros(2, env.num_actions))
    assert not rew.requires_grad


def test_a_bad_task_file_raises_naming_file_and_line(tmp_path, source_dir):
    text = (source_dir / "configs/tasks/walk.yaml").read_text()
    bad = tmp_path / "bad_walk.yaml"
    bad.write_text(text.replace("episode_length_s:", "episode_lenght_s:", 1))
    line = 1 + bad.read_text().split("episode_lenght_s:")[0].count("\n")
    with pytest.raises(RuntimeError) as e:
        diffloco.make_env(str(bad))
    msg = str(e.value)
    assert str(bad) in msg and "episode_lenght_s" in msg, msg
    assert re.search(rf"\b{line}\b", msg), f"line {line} not named: {msg}"


def test_bad_arguments_raise_value_errors():
    env = diffloco.make_env("walk", num_envs=2)
    with pytest.raises(ValueError, match=r"actions must have shape \[2, 12\]"):
        env.step(torch.zeros(3, 12))
    with pytest.raises(ValueError, match="num_envs"):
        diffloco.make_env("walk", num_envs=0)
    with pytest.raises(RuntimeError, match="no_such_task.* not found"):
        diffloco.make_env("no_such_task")


def _rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.parametrize("autograd", [False, True])
def test_memory_does_not_grow_over_10000_steps(autograd):
    env = diffloco.make_env("walk", num_envs=4, seed=2)
    actions = torch.zeros(4, env.num_actions, requires_grad=autograd)
    window = 32

    def run(steps):
        total = 0
        for k in range(steps):
            if autograd:
                _, rew, _, _ = env.step(actions)
                total = total + rew.sum()
                if (k + 1) % window == 0:  # a SHAC window: backward, then cut the history
                    total.backward()
                    total = 0
                    env.detach()
            else:
                with torch.no_grad():
                    env.step(actions)

    run(1000)
    before = _rss_mb()
    run(9000)
    grown = _rss_mb() - before
    assert grown < 16, f"resident memory grew by {grown:.1f} MB over 9000 steps"
