"""Loads an exported diffloco policy with Python's torch.jit.load (no diffloco code) and compares
its actions and actuator torques with the values the C++ test (test_export,
Export.ActionsMatchTheTrainingActorAndPythonFixture) wrote from the training-time actor.

usage: check_export.py FIXTURE_DIR
"""
import json
import os
import sys

import torch


def load(path):
    with open(path) as f:
        rows = [[float(x) for x in line.split(",")] for line in f if line.strip()]
    return torch.tensor(rows, dtype=torch.float64)


def main():
    d = sys.argv[1]
    m = torch.jit.load(os.path.join(d, "policy.pt"))
    obs = load(os.path.join(d, "obs.csv")).to(torch.float32)
    expected = load(os.path.join(d, "actions.csv"))
    with torch.no_grad():
        got = m(obs).to(torch.float64)
    err = (got - expected).abs().max().item()
    print(f"action parity (Python torch.jit.load): max |a_export - a_actor| = {err:.3g} over "
          f"{tuple(got.shape)}")
    ok = err <= 1e-6
    tau = m.actuator_torque(load(os.path.join(d, "act_q_target.csv")),
                            load(os.path.join(d, "act_q.csv")), load(os.path.join(d, "act_qd.csv")))
    tau_err = (tau - load(os.path.join(d, "act_tau.csv"))).abs().max().item()
    print(f"actuator_torque: max difference to C++ {tau_err:.3g}")
    ok &= tau_err <= 1e-12
    meta = json.loads(m.metadata_json)
    num_obs, nj, kp = open(os.path.join(d, "expected_meta.txt")).read().split()
    ok &= meta["observation"]["size"] == int(num_obs) == m.num_obs
    ok &= len(meta["joints"]["names"]) == int(nj)
    ok &= abs(meta["actuator"]["kp"] - float(kp)) < 1e-9
    for section in ["format", "joints", "action", "observation", "timing", "actuator", "commands",
                    "simulation", "terminations", "task"]:
        ok &= section in meta
    yaml_path = os.path.join(d, "policy.yaml")
    print("metadata sections:", ", ".join(meta.keys()))
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
