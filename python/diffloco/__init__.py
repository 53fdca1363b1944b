"""diffloco from Python: the differentiable locomotion environments, the simulator's step as an
autograd function, and the program's train / evaluate / export, all calling the C++ core.

docs/python.md has the API, the examples and what is differentiable.
"""
import json as _json

import torch as _torch  # first: tensors cross the extension module as torch.Tensor

from ._diffloco import Env, Simulator, cli, evaluate, make_env, train
from ._diffloco import export as export_policy

__all__ = ["Env", "Simulator", "Policy", "cli", "evaluate", "export", "load_policy", "make_env",
           "train"]

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
