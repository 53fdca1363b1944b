"""System identification from Python: the payload on ANYmal's base from recorded drops.

The truth: ANYmal with 5 kg more on its base, dropped 3 cm with random joint targets (hard
contact, with measurement noise: `Sysid.generate`, as `diffloco sysid --generate`). The fit: the
base mass, from the robot's nominal value, by torch.optim.Adam on the k-step prediction loss
(`diffloco.sysid_loss`), whose gradient comes from the simulator's hand-written VJP (straight-through
contact: the hard forward pass, the smoothed model's derivative). The mass is optimised as
m0 exp(theta), so that Adam's steps are relative; the step size decays from --lr to a tenth.

    python3 examples/python/sysid_mass.py [--iterations 40] [--payload 5]
"""
import argparse
import time

import torch

import diffloco


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--iterations", type=int, default=40)
    p.add_argument("--payload", type=float, default=5.0, help="mass added to the base [kg]")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()

    sysid = diffloco.Sysid("anymal", contact="straight_through")
    nominal = sysid.get("mass:base")
    truth = nominal + a.payload
    sysid.set("mass:base", truth)
    data = sysid.generate(count=4, duration=1.0, dt=0.005, contact="hard", seed=1)
    print(f"{len(data)} recorded drops of {data.rows[0]} rows; true base mass {truth:.3f} kg")

    theta = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([theta], lr=a.lr, betas=(0.5, 0.9))  # DiffMJX's betas, as `sysid`
    # The step decays to a tenth (cosine), as `diffloco sysid`'s: Adam's last oscillation settles.
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, a.iterations, eta_min=a.lr / 10)
    start = time.time()
    for it in range(a.iterations):
        mass = nominal * torch.exp(theta)
        loss = diffloco.sysid_loss(sysid, data, ["mass:base"], mass, threads=a.threads)
        opt.zero_grad()
        loss.backward()
        opt.step()
        schedule.step()
        if it % 5 == 0 or it == a.iterations - 1:
            print(f"iteration {it}: loss {loss.item():.4e}, base mass {mass.item():.3f} kg")
    final = nominal * torch.exp(theta).item()
    print(f"fitted base mass {final:.3f} kg (truth {truth:.3f}, start {nominal:.3f}): error "
          f"{100 * (final - truth) / truth:+.2f} % after {a.iterations} iterations "
          f"({time.time() - start:.1f} s)")


if __name__ == "__main__":
    main()
