"""Trajectory optimisation through diffloco's simulator: ANYmal jumps.

The joint targets of a 0.5 s motion (a piecewise-linear trajectory of `--knots` knots, offsets
from the standing pose) are optimised with torch.optim.Adam so that the base is as high as
possible at the end; the gradient of the final height with respect to every knot comes from the
simulator's hand-written backward pass through the whole rollout (smoothed contact).
  python3 examples/python/jump.py [--iterations 60] [--knots 6]
"""
import argparse

import torch

import diffloco


def rollout(sim, q, v, knots, steps):
    """Final state after `steps` steps with targets interpolated linearly between the knots."""
    default = q[:, 7:]
    for k in range(steps):
        s = k / (steps - 1) * (knots.shape[0] - 1)
        i = min(int(s), knots.shape[0] - 2)
        target = default + knots[i] + (s - i) * (knots[i + 1] - knots[i])
        q, v = sim.step(q, v, target)
    return q, v


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=60)
    p.add_argument("--knots", type=int, default=6)
    p.add_argument("--duration", type=float, default=0.5)
    a = p.parse_args()
    torch.manual_seed(0)
    sim = diffloco.Simulator("anymal", num_worlds=1, contact="smoothed")
    q0, v0 = sim.standing_state()
    steps = round(a.duration / sim.dt)
    knots = (0.01 * torch.randn(a.knots, 1, sim.nj, dtype=torch.float64)).requires_grad_(True)
    opt = torch.optim.Adam([knots], lr=0.05)
    start = q0[0, 2].item()
    for it in range(a.iterations):
        opt.zero_grad()
        q, _ = rollout(sim, q0, v0, knots, steps)
        height = q[0, 2]
        # the highest base at the end, with targets kept within +-1 rad of the standing pose
        loss = -height + 0.01 * torch.relu(knots.abs() - 1.0).pow(2).sum()
        loss.backward()
        opt.step()
        if it % 10 == 0 or it == a.iterations - 1:
            print(f"iteration {it}: base height at {a.duration} s = {height.item():.3f} m "
                  f"(standing {start:.3f} m)", flush=True)
    return height.item() - start


if __name__ == "__main__":
    main()
