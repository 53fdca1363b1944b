"""diffloco.Simulator: its step's gradient against central finite differences (in and out of
contact, every contact model that has a gradient), a short trajectory optimisation with
torch.optim, and bad input."""
import pytest
import torch

import diffloco


def _rollout(sim, q, v, q_target, steps):
    for _ in range(steps):
        q, v = sim.step(q, v, q_target)
    return q, v


@pytest.mark.parametrize("contact", ["hard", "smoothed", "soft"])
def test_step_gradient_matches_central_differences(contact):
    sim = diffloco.Simulator("anymal", num_worlds=3, contact=contact)
    gen = torch.Generator().manual_seed(4)
    q, v = sim.standing_state()
    q[:, 2] += torch.tensor([-0.005, 0.0, 0.2], dtype=torch.float64)  # pressed, touching, in the air
    q[:, 7:] += 0.05 * torch.randn(3, sim.nj, generator=gen, dtype=torch.float64)
    v = 0.1 * torch.randn(3, sim.nv, generator=gen, dtype=torch.float64)
    target = q[:, 7:] + 0.1 * torch.randn(3, sim.nj, generator=gen, dtype=torch.float64)
    wq = torch.randn(3, sim.nq, generator=gen, dtype=torch.float64)
    wv = torch.randn(3, sim.nv, generator=gen, dtype=torch.float64)

    def loss(v0, t):
        q1, v1 = _rollout(sim, q, v0, t, 4)
        return (wq * q1).sum() + (wv * v1).sum()

    v0 = v.clone().requires_grad_(True)
    t = target.clone().requires_grad_(True)
    gv, gt = torch.autograd.grad(loss(v0, t), (v0, t))
    h = 1e-6
    for _ in range(3):  # random directions in (v, q_target)
        dv = torch.randn(v.shape, generator=gen, dtype=torch.float64)
        dt = torch.randn(target.shape, generator=gen, dtype=torch.float64)
        with torch.no_grad():
            fd = (loss(v + h * dv, target + h * dt) - loss(v - h * dv, target - h * dt)) / (2 * h)
        ad = (gv * dv).sum() + (gt * dt).sum()
        assert abs(float(ad - fd)) <= 1e-5 * max(1.0, abs(float(fd))), (contact, float(ad), float(fd))


def test_trajectory_optimisation_lifts_a_foot_with_torch_optim():
    # Joint targets held for 0.2 s, optimised so that the left front foot ends 5 cm higher.
    sim = diffloco.Simulator("anymal", num_worlds=1, contact="smoothed")
    q0, v0 = sim.standing_state()
    start = sim.foot_positions(q0)[0, 0, 2].item()
    target = q0[:, 7:].clone().requires_grad_(True)
    opt = torch.optim.Adam([target], lr=0.02)

    def foot_height():
        q, _ = _rollout(sim, q0, v0, target, 40)
        return sim.foot_positions(q)[0, 0, 2]

    for _ in range(30):
        opt.zero_grad()
        loss = (foot_height() - (start + 0.05)) ** 2
        loss.backward()
        opt.step()
    with torch.no_grad():
        assert foot_height().item() > start + 0.035


def test_model_facts_and_bad_input():
    sim = diffloco.Simulator("anymal", num_worlds=2, contact="hard")
    assert (sim.nq, sim.nv, sim.nj) == (19, 18, 12)
    assert len(sim.joint_names) == 12 and len(sim.foot_names) == 4
    assert sim.total_mass > 10
    q, v = sim.standing_state()
    with pytest.raises(ValueError, match=r"q_target must have shape \[2, 12\]"):
        sim.step(q, v, torch.zeros(2, 11, dtype=torch.float64))
    with pytest.raises(ValueError, match="contact"):
        diffloco.Simulator("anymal", contact="sticky")
    with pytest.raises(RuntimeError, match="no_such_robot"):
        diffloco.Simulator("no_such_robot")
