"""SHAC in plain Python on the walk task: the actor learns through diffloco's differentiable env.

The algorithm of algorithms/shac.h with the hyperparameters of configs/walk_quadruped_shac.yaml
(the env is made from that config, so its curriculum and contact are the C++ trainer's):
  python3 examples/python/shac_walk.py [--iterations 2000] [--seed 0] [--out policy.pt]
Prints the mean return of the episodes that ended in each logged iteration; --out saves the
actor (normaliser included) as TorchScript, observations -> actions. --evaluate FILE scores such
a file (or one written by `diffloco export`) instead: the mean return of 64 deterministic
10 s episodes of the walk task in hard contact (held-out seed 1000).
"""
import argparse
import math
import pathlib

import torch
from torch import nn

import diffloco

CONFIG = str(pathlib.Path(__file__).resolve().parents[2] / "configs/walk_quadruped_shac.yaml")


def mlp(inputs, hidden, outputs):
    layers, width = [], inputs
    for h in hidden:  # Linear, ELU, LayerNorm: the SHAC reference's networks
        layers += [nn.Linear(width, h), nn.ELU(), nn.LayerNorm(h)]
        width = h
    return nn.Sequential(*layers, nn.Linear(width, outputs))


class Normalizer(nn.Module):
    """Running mean and variance of the observations (merged after each window)."""

    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.register_buffer("mean", torch.zeros(dim, dtype=torch.float64))
        self.register_buffer("var", torch.ones(dim, dtype=torch.float64))
        self.register_buffer("count", torch.zeros((), dtype=torch.float64))
        self.eps = eps

    def forward(self, x):
        return (x - self.mean.float()) * torch.rsqrt(self.var.float() + self.eps)

    @torch.no_grad()
    def update(self, x):
        x = x.reshape(-1, x.shape[-1]).double()
        n, mean, var = x.shape[0], x.mean(0), x.var(0, unbiased=False)
        if self.count == 0:
            self.mean.copy_(mean), self.var.copy_(var), self.count.fill_(n)
            return
        total, delta = self.count + n, mean - self.mean
        m2 = self.var * self.count + var * n + delta**2 * self.count * n / total
        self.mean.add_(delta * n / total)
        self.var.copy_(m2 / total)
        self.count.fill_(total)


class Deterministic(nn.Module):
    def __init__(self, norm, actor):
        super().__init__()
        self.norm, self.actor = norm, actor

    def forward(self, obs):
        return torch.tanh(self.actor(self.norm(obs)))


def lambda_returns(rewards, next_values, dones, gamma, lam):
    targets, nxt = torch.empty_like(rewards), rewards[-1] + gamma * next_values[-1]
    targets[-1] = nxt
    for t in range(rewards.shape[0] - 2, -1, -1):
        blend = next_values[t] + lam * (~dones[t]).float() * (nxt - next_values[t])
        nxt = targets[t] = rewards[t] + gamma * blend
    return targets


def train(iterations, seed, horizon=32, gamma=0.99, lam=0.95, log_every=50, threads=2):
    torch.manual_seed(seed)
    env = diffloco.make_env(CONFIG, seed=seed, threads=threads)
    n, n_obs, n_act = env.num_envs, env.num_obs, env.num_actions
    norm = Normalizer(n_obs)
    actor, critic = mlp(n_obs, [128, 64, 32], n_act), mlp(n_obs, [64, 64], 1)
    target = mlp(n_obs, [64, 64], 1).requires_grad_(False)
    target.load_state_dict(critic.state_dict())
    log_std = nn.Parameter(torch.full((n_act,), math.log(0.7)))
    actor_opt = torch.optim.Adam([log_std, *actor.parameters()], lr=0.002, betas=(0.7, 0.95))
    critic_opt = torch.optim.Adam(critic.parameters(), lr=0.002, betas=(0.7, 0.95))
    obs, _ = env.get_observations()
    returns, episode_sum = [], torch.zeros(n)
    for it in range(iterations):
        for g in actor_opt.param_groups:  # the config's exponential schedules
            g["lr"] = 0.002 * 0.9975**it
        for g in critic_opt.param_groups:
            g["lr"] = 0.002 * 0.9985**it
        # 1-2. A window through the simulator; the actor loss is minus the discounted segment
        # returns, bootstrapped with the target critic at segment ends.
        env.detach()
        loss, acc, disc = 0, torch.zeros(n), torch.ones(n)
        raw, inputs, rews, dones, next_obs, boots = [], [], [], [], [], []
        for t in range(horizon):
            x = norm(obs)
            raw.append(obs.detach()), inputs.append(x.detach())
            action = torch.tanh(actor(x) + log_std.exp() * torch.randn(n, n_act))
            obs, rew, done, extras = env.step(action)
            episode_sum += rew.detach()
            returns += episode_sum[done].tolist()
            episode_sum[done] = 0
            term = norm(extras["terminal_observations"])
            boot = ~extras["terminated"]
            acc = acc + disc * rew
            last = t == horizon - 1
            if last or bool(done.any()):
                value = target(term).squeeze(-1) * boot.float()
                seg = acc + gamma * disc * value
                loss = loss - (seg.sum() if last else (seg * done.float()).sum())
            done = torch.ones_like(done) if last else done
            disc = torch.where(done, torch.ones_like(disc), disc * gamma)
            acc = torch.where(done, torch.zeros_like(acc), acc)
            rews.append(rew.detach()), dones.append(done), next_obs.append(term.detach())
            boots.append(boot)
        # 3. Back-propagation through the window, clipped.
        actor_opt.zero_grad()
        (loss / (horizon * n)).backward()
        nn.utils.clip_grad_norm_([log_std, *actor.parameters()], 1.0)
        actor_opt.step()
        obs = obs.detach()
        # 4. Critic: TD(lambda) targets, 16 epochs of 4 shuffled minibatches.
        with torch.no_grad():
            next_values = target(torch.stack(next_obs)).squeeze(-1) * torch.stack(boots).float()
            y = lambda_returns(torch.stack(rews), next_values, torch.stack(dones), gamma, lam)
        xs, ys = torch.stack(inputs).reshape(-1, n_obs), y.reshape(-1)
        for _ in range(16):
            for idx in torch.randperm(xs.shape[0]).chunk(4):
                critic_opt.zero_grad()
                ((critic(xs[idx]).squeeze(-1) - ys[idx]) ** 2).mean().backward()
                nn.utils.clip_grad_norm_(critic.parameters(), 10.0)
                critic_opt.step()
        # 5-6. Target critic, observation normaliser.
        with torch.no_grad():
            for p, q in zip(target.parameters(), critic.parameters()):
                p.mul_(0.2).add_(q, alpha=0.8)
        norm.update(torch.stack(raw))
        if (it + 1) % log_every == 0 and returns:
            print(f"iteration {it + 1}: episode return {sum(returns) / len(returns):.1f} "
                  f"(std {log_std.exp().mean():.3f})", flush=True)
            returns = []
    return Deterministic(norm, actor)


@torch.no_grad()
def evaluate(policy, envs=64, seed=1000):
    env = diffloco.make_env("walk", num_envs=envs, seed=seed, overrides=["sim.contact=hard"])
    obs, _ = env.reset()
    total, alive = torch.zeros(envs), torch.ones(envs, dtype=torch.bool)
    for _ in range(env.max_episode_length):
        obs, rew, done, _ = env.step(policy(obs))
        total += rew * alive
        alive &= ~done
    return total.mean().item()


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--log-every", type=int, default=50)
    p.add_argument("--threads", type=int, default=2, help="simulator threads")
    p.add_argument("--out", help="save the deterministic policy as TorchScript")
    p.add_argument("--evaluate", metavar="FILE", help="score a TorchScript policy and exit")
    a = p.parse_args()
    torch.set_num_threads(1)
    if a.evaluate:
        print(f"evaluation return {evaluate(torch.jit.load(a.evaluate)):.1f}")
        raise SystemExit
    policy = train(a.iterations, a.seed, log_every=a.log_every, threads=a.threads)
    if a.out:
        torch.jit.script(policy).save(a.out)
