#!/usr/bin/env python3
"""Data-parallel equivalence: a checkpoint of W ranks x E envs against one of 1 rank x W E envs.

usage: compare_checkpoints.py ONE.pt MANY.pt

Loads both with torch.jit.load (the loader libtorch's InputArchive uses), rank r > 0's state from
MANY's ranks/<r> bytes, and checks:
  - every rank of MANY holds bit for bit the same networks, optimiser states, normaliser and
    algorithm generator;
  - those equal ONE's, relative to each tensor's largest magnitude: the optimisers' moments (the
    gradients' running averages) and the normaliser to 1e-3 and 1e-4, the generator exactly; the
    parameters to 1e-2, because Adam's normalised step turns the float noise of a gradient
    component near zero into a step of +-lr whatever its size;
  - rank r's env state equals rows [r E, (r + 1) E) of ONE's (per-env tensors) to 1e-3.
A wrong share of the loss, a rank's samples missing or a differently drawn env shows as an error
of order 1 in these. Prints the largest difference of each group; exits 1 on a mismatch.
"""
import io
import sys

import torch


def tensors(module):
    out = {}
    for name, t in list(module.named_parameters()) + list(module.named_buffers()):
        out[name] = t.detach()
    return out


def rel(a, b):
    if a.dtype in (torch.uint8, torch.int64, torch.int32, torch.bool):
        return 0.0 if torch.equal(a, b) else float("inf")
    scale = max(a.abs().max().item() if a.numel() else 0.0, 1e-6)
    return (a.double() - b.double()).abs().max().item() / scale if a.numel() else 0.0


def main():
    one_path, many_path = sys.argv[1], sys.argv[2]
    one = torch.jit.load(one_path)
    many = torch.jit.load(many_path)
    world = int(many.world_size)
    assert int(one.world_size) == 1, "ONE must be a 1-rank checkpoint"
    ranks = [tensors(many)]
    for r in range(1, world):
        blob = ranks[0][f"ranks/{r}"]
        ranks.append(tensors(torch.jit.load(io.BytesIO(blob.numpy().tobytes()))))
    t1 = tensors(one)
    shared = [k for k in t1 if not k.startswith(("env/", "episodes/", "ranks/"))]
    envkeys = [k for k in t1 if k.startswith("env/")]
    ok = True
    groups = {"moments": 1e-3, "normaliser": 1e-4, "parameters": 1e-2, "env state": 1e-3}
    worst = dict.fromkeys(list(groups) + ["ranks vs rank 0"], 0.0)

    def group(k):
        if "optimizer" in k:
            return "moments"
        return "normaliser" if "normalizer" in k else "parameters"

    for k in shared:
        for r, t in enumerate(ranks):
            if k not in t:
                print(f"rank {r} lacks {k}")
                ok = False
                continue
            if r > 0:
                d = rel(ranks[0][k], t[k])
                worst["ranks vs rank 0"] = max(worst["ranks vs rank 0"], d)
                if d != 0:
                    print(f"{k}: rank {r} differs from rank 0 ({d:.3g})")
                    ok = False
        if k == "generator":
            if not torch.equal(t1[k], ranks[0][k]):
                print("generator: the algorithm's random state differs from the 1-rank run's")
                ok = False
            continue
        if t1[k].shape != ranks[0][k].shape:
            print(f"{k}: shape {tuple(ranks[0][k].shape)} vs {tuple(t1[k].shape)}")
            ok = False
            continue
        d = rel(t1[k], ranks[0][k])
        g = group(k)
        worst[g] = max(worst[g], d)
        if d > groups[g]:
            print(f"{k}: {d:.3g} relative difference (> {groups[g]})")
            ok = False
    n = None
    for k in envkeys:
        full = t1[k]
        e = ranks[0][k].shape[0] if ranks[0][k].dim() > 0 else 0
        if full.dim() == 0 or full.shape[0] != e * world:
            continue  # not per env
        n = e
        for r, t in enumerate(ranks):
            d = rel(full[r * e:(r + 1) * e], t[k])
            worst["env state"] = max(worst["env state"], d)
            if d > groups["env state"]:
                print(f"{k}: rank {r}'s envs differ from rows {r * e}..{(r + 1) * e - 1} ({d:.3g})")
                ok = False
    if n is None:
        print("no per-env state found")
        ok = False
    print(f"{many_path}: {world} ranks x {n} envs vs 1 x {world * n}: " +
          ", ".join(f"{k} {v:.2g}" for k, v in worst.items()) + (" OK" if ok else " MISMATCH"))
    sys.exit(0 if ok else 1)


main()
