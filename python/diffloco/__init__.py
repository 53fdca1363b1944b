"""diffloco from Python: the differentiable locomotion environments, the simulator's step as an
autograd function, and the program's train / evaluate / export, all calling the C++ core.

docs/python.md has the API, the examples and what is differentiable.
"""
import json as _json

import torch as _torch  # first: tensors cross the extension module as torch.Tensor

from ._diffloco import Env, Simulator, Sysid, Trajectories, cli, evaluate, make_env, train
from ._diffloco import export as export_policy

__all__ = ["Env", "Simulator", "Policy", "Sysid", "Trajectories", "cli", "evaluate", "export",
           "load_policy", "make_env", "sysid_loss", "train"]

export = export_policy


class Policy:
    """An exported policy (`diffloco export`): the TorchScript module (normaliser and actor,
    observations -> actions) and its contract (`metadata`, the file's metadata as a dict)."""

    def __init__(self, path):
        self.path = str(path)
        self.module = _torch.jit.load(self.path, map_location="cpu")
        self.metadata = _json.loads(self.module.metadata_json)

    @property
    def num_obs(self):
        return int(self.module.num_obs)

    @property
    def num_actions(self):
        return int(self.module.num_actions)

    def __call__(self, obs):
        with _torch.no_grad():
            return self.module(obs)


def load_policy(path):
    """Loads a file written by `diffloco export` (TorchScript): a Policy."""
    return Policy(path)


class _SysidLoss(_torch.autograd.Function):
    @staticmethod
    def forward(ctx, values, sysid, data, names, horizon, stride, threads):
        for name, value in zip(names, values.tolist()):
            sysid.set(name, value)
        loss, grad = sysid.loss(data, names, horizon, stride, threads)
        ctx.save_for_backward(_torch.tensor(grad, dtype=values.dtype))
        return values.new_tensor(loss)

    @staticmethod
    def backward(ctx, g):
        (grad,) = ctx.saved_tensors
        return g * grad, None, None, None, None, None, None


def sysid_loss(sysid, data, names, values, horizon=4, stride=1, threads=1):
    """The k-step prediction loss of `data` (Sysid.generate or Sysid.read) with the parameters
    `names` (one name each, e.g. "mass:base", "mu") at `values` (a 1-D tensor), differentiable
    with respect to `values` through the simulator's VJP. Leaves the values set in `sysid`."""
    names = list(names)
    if values.dim() != 1 or values.numel() != len(names):
        raise ValueError(f"sysid_loss: values must be a 1-D tensor of {len(names)} entries "
                         f"(one per name), got shape {tuple(values.shape)}")
    return _SysidLoss.apply(values, sysid, data, names, horizon, stride, threads)
