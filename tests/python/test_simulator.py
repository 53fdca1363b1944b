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


# The ground: a height field, where a sphere meets it, and the drive given as an argument.

def _settle(sim, q, v, steps=60):
    target = q[:, 7:].clone()
    with torch.no_grad():
        for _ in range(steps):
            q, v = sim.step(q, v, target)
    return q, v


@pytest.mark.parametrize("terrain_contact", ["vertical", "closest"])
@pytest.mark.parametrize("interpolant", ["monotone", "catmull_rom"])
def test_flat_height_field_is_the_plane_raised(terrain_contact, interpolant):
    # A robot dropped from 2 cm onto a flat field at h = 0.3 ends where the plane z = 0 puts it,
    # raised by h: the plane is the field's closed form.
    h = 0.3
    plane = diffloco.Simulator("anymal", num_worlds=1, contact="hard")
    field = diffloco.Simulator("anymal", num_worlds=1, contact="hard",
                               heights=torch.full((41, 41), h, dtype=torch.float64), spacing=0.05,
                               origin=(-1.0, -1.0), interpolant=interpolant,
                               terrain_contact=terrain_contact)
    q, v = plane.standing_state()
    q[:, 2] += 0.02
    qp, vp = _settle(plane, q, v)
    q[:, 2] += h
    qf, vf = _settle(field, q, v)
    assert qp[0, 2] < q[0, 2] - h - 0.01  # it fell and stands
    assert torch.allclose(qf[:, 2], qp[:, 2] + h, atol=1e-9), (qf[0, 2] - h, qp[0, 2])
    assert torch.allclose(qf[:, 3:], qp[:, 3:], atol=1e-9) and torch.allclose(vf, vp, atol=1e-8)
    x = torch.tensor([0.0, 0.3, -0.77], dtype=torch.float64)
    assert torch.allclose(field.ground_height(x, x), torch.full((3,), h, dtype=torch.float64))
    assert field.terrain["terrain_contact"] == terrain_contact


def test_step_edge_interpolants_and_feet_on_two_treads():
    # A 10 cm step at x = 0.5 sampled every 5 cm: the monotone surface rises between the two
    # samples with no lip, Catmull-Rom overshoots by 2/27 of the jump on the upper tread.
    xs = -1.0 + 0.05 * torch.arange(61, dtype=torch.float64)
    heights = (xs >= 0.499).to(torch.float64).mul(0.1).repeat(41, 1)
    ground = dict(heights=heights, spacing=0.05, origin=(-1.0, -1.0))
    x = torch.linspace(0.3, 0.8, 501, dtype=torch.float64)
    mono = diffloco.Simulator("anymal", contact="hard", **ground)
    cr = diffloco.Simulator("anymal", contact="hard", interpolant="catmull_rom", **ground)
    hm, hc = mono.ground_height(x, torch.zeros_like(x)), cr.ground_height(x, torch.zeros_like(x))
    assert hm.min() >= -1e-12 and hm.max() <= 0.1 + 1e-12 and (hm.diff() >= -1e-12).all()
    assert abs(hc.max().item() - 0.1 * (1 + 2 / 27)) < 2e-4, hc.max()
    assert abs(mono.ground_height(torch.tensor([0.5]), torch.tensor([0.0])).item() - 0.1) < 1e-12

    # A foot over a step: the robot dropped level from 1 cm above the higher tread with its front
    # feet over a tread 3 cm above the hind feet's (the edge 20 cm behind the front feet): every
    # foot ends on its own tread, its sphere's centre one radius above it (within 4 mm: the hard
    # contact stops the approach velocity and keeps the landing's few millimetres of overlap).
    radius = 0.031455
    xs = -1.0 + 0.05 * torch.arange(61, dtype=torch.float64)
    for contact in ("vertical", "closest"):
        sim = diffloco.Simulator("anymal", contact="hard", terrain_contact=contact,
                                 heights=(xs >= 0.299).to(torch.float64).mul(0.03).repeat(41, 1),
                                 spacing=0.05, origin=(-1.0, -1.0))
        q, v = sim.standing_state()
        q[:, 2] += 0.04
        q, v = _settle(sim, q, v, 120)
        feet = sim.foot_positions(q)[0]
        assert (feet[:2, 0] > 0.45).all() and (feet[2:, 0] < -0.3).all(), feet
        under = sim.ground_height(feet[:, 0], feet[:, 1])
        assert torch.allclose(under, torch.tensor([0.03, 0.03, 0.0, 0.0], dtype=torch.float64))
        assert (feet[:, 2] - under - radius).abs().max() < 4e-3, (contact, feet[:, 2] - under)


def test_actuator_from_a_policy_file_and_bad_ground_arguments():
    # A policy file's metadata["actuator"] as it is (effort per joint, None for no speed-torque
    # line); a weaker drive lets the robot sag.
    meta = {"kp": 40.0, "kd": 0.6, "effort": [80.0] * 12, "saturation": None,
            "velocity_limit": None, "armature": 0.1, "source": ""}
    weak = diffloco.Simulator("anymal", contact="hard", actuator=meta)
    assert weak.actuator["kp"] == 40.0 and weak.actuator["effort"] == [80.0] * 12
    assert weak.actuator["saturation"] == 1e10 and weak.actuator["armature"] == 0.1
    nominal = diffloco.Simulator("anymal", contact="hard")
    assert nominal.actuator["kp"] == 85.0 and nominal.terrain is None
    q, v = nominal.standing_state()
    assert _settle(weak, q, v, 40)[0][0, 2] < _settle(nominal, q, v, 40)[0][0, 2] - 0.005
    flat = torch.zeros(5, 6, dtype=torch.float64)
    bad = [({"heights": torch.zeros(5), "spacing": 0.1}, "heights must have shape"),
           ({"heights": flat}, "spacing must be given"),
           ({"heights": flat, "spacing": -0.1}, "spacing must be positive"),
           ({"spacing": 0.1}, "spacing is given without heights"),
           ({"heights": flat, "spacing": 0.1, "origin": (float("nan"), 0.0)}, "origin"),
           ({"heights": flat.clone().fill_(float("inf")), "spacing": 0.1}, "heights"),
           ({"heights": [["a"]], "spacing": 0.1}, "heights"),
           ({"heights": flat, "spacing": 0.1, "interpolant": "linear"}, "interpolant"),
           ({"heights": flat, "spacing": 0.1, "terrain_contact": "below"}, "terrain contact"),
           ({"actuator": {"kq": 1.0}}, "actuator: unknown key 'kq'"),
           ({"actuator": {"kp": -1.0}}, "actuator.kp"),
           ({"actuator": {"effort": [80.0] * 11}}, "actuator.effort")]
    for kwargs, message in bad:
        with pytest.raises(ValueError, match=message):
            diffloco.Simulator("anymal", contact="hard", **kwargs)
    sim = diffloco.Simulator("anymal", heights=flat, spacing=0.1)
    with pytest.raises(ValueError, match="x and y must have the same shape"):
        sim.ground_height(torch.zeros(3), torch.zeros(2))
