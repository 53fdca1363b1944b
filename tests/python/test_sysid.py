"""diffloco.Sysid and diffloco.sysid_loss: the loss's gradient against central finite differences
(smoothed contact, where the forward pass and the gradient are the same model's), a fit with
torch.optim, and bad input."""
import pytest
import torch

import diffloco


@pytest.fixture(scope="module")
def drops():
    sysid = diffloco.Sysid("anymal", contact="smoothed")
    truth = {"mass:base": sysid.get("mass:base") + 3.0, "mu": 0.6, "kp": sysid.get("kp")}
    for name, value in truth.items():
        sysid.set(name, value)
    return sysid, sysid.generate(count=2, duration=0.3, contact="smoothed", seed=3), truth


def test_gradient_matches_central_differences(drops):
    sysid, data, _ = drops
    names = ["mass:base", "mu", "kp"]
    values = torch.tensor([24.0, 0.7, 80.0], dtype=torch.float64, requires_grad=True)
    diffloco.sysid_loss(sysid, data, names, values, horizon=3).backward()
    for i, name in enumerate(names):
        h = 1e-7 * values[i].item()  # small: a stick-slip switch lies within 1e-5 of mu = 0.7
        plus, minus = values.detach().clone(), values.detach().clone()
        plus[i] += h
        minus[i] -= h
        fd = (diffloco.sysid_loss(sysid, data, names, plus, horizon=3).item() -
              diffloco.sysid_loss(sysid, data, names, minus, horizon=3).item()) / (2 * h)
        assert values.grad[i].item() == pytest.approx(fd, rel=1e-4, abs=1e-14), name


def test_adam_recovers_the_base_mass(drops):
    sysid, data, truth = drops
    for name, value in truth.items():  # the other test left its values set
        sysid.set(name, value)
    nominal = 26.0
    theta = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([theta], lr=0.05, betas=(0.5, 0.9))
    for _ in range(30):
        loss = diffloco.sysid_loss(sysid, data, ["mass:base"], nominal * torch.exp(theta))
        opt.zero_grad()
        loss.backward()
        opt.step()
    fitted = nominal * torch.exp(theta).item()
    assert fitted == pytest.approx(truth["mass:base"], rel=0.03)


def test_bad_input_raises_with_the_valid_names(drops):
    sysid, data, _ = drops
    with pytest.raises(ValueError, match="mass:base"):
        sysid.loss(data, ["mass:nose"])
    with pytest.raises(ValueError, match="one per name"):
        diffloco.sysid_loss(sysid, data, ["mu", "kp"], torch.ones(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="contact"):
        diffloco.Sysid("anymal", contact="sticky")
    with pytest.raises(RuntimeError, match="nosuchrobot"):
        diffloco.Sysid("nosuchrobot")
