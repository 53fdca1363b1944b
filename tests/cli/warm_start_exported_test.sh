#!/usr/bin/env bash
# init_from an exported policy (`diffloco export`'s TorchScript) end to end (ctest
# cli_warm_start_exported):   warm_start_exported_test.sh DIFFLOCO PYTHON DIR
# A tiny SHAC run with LayerNorm and tanh is exported; a PPO run warm-started from that file whose
# iterations all fit the critic alone (ppo.critic_warmup_iterations) exports a policy that gives
# the same actions (its normaliser's statistics stay: the file keeps no sample count); an actor
# with other settings than the file's is an error naming init_from and the key.
set -euo pipefail
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
bin=$1 python=$2 dir=$3
rm -rf "$dir"
mkdir -p "$dir/exported"
cat >"$dir/shac.yaml" <<'YAML'
name: warm_shac
algorithm: shac
task: walk
shac: {iterations: 3, num_envs: 4, horizon: 4, critic_iterations: 1}
policy: {actor_hidden: [16, 8], critic_hidden: [8], layer_norm: true, squash: tanh}
run: {torch_threads: 1}
YAML
cat >"$dir/ppo.yaml" <<'YAML'
name: warm_ppo
algorithm: ppo
task: walk
ppo: {iterations: 2, num_envs: 8, rollout: 4, epochs: 1, minibatches: 2}
policy: {actor_hidden: [16, 8], critic_hidden: [8], layer_norm: true, squash: tanh}
run: {torch_threads: 1}
YAML
"$bin" train "$dir/shac.yaml" --out "$dir/runs" >"$dir/shac.log" 2>&1 || {
  cat "$dir/shac.log"
  fail "the SHAC run failed"
}
"$bin" export "$(ls -d "$dir"/runs/*_warm_shac)" -o "$dir/exported/shac.pt" >/dev/null
"$bin" train "$dir/ppo.yaml" --set init_from="$dir/exported/shac.pt" --set ppo.critic_warmup_iterations=2 \
  --out "$dir/runs" >"$dir/ppo.log" 2>&1 || {
  cat "$dir/ppo.log"
  fail "the warm-started PPO run failed"
}
grep -q "warm start: the actor's mean and its normaliser from the exported policy" "$dir/ppo.log" ||
  fail "no warm-start line: $(cat "$dir/ppo.log")"
"$bin" export "$(ls -d "$dir"/runs/*_warm_ppo)" -o "$dir/exported/ppo.pt" >/dev/null
"$python" - "$dir/exported/shac.pt" "$dir/exported/ppo.pt" <<'PY' || fail "the warm-started actor differs"
import sys
import torch
a, b = torch.jit.load(sys.argv[1]), torch.jit.load(sys.argv[2])
x = torch.randn(256, a.num_obs, generator=torch.Generator().manual_seed(0)) * 2
diff = (a(x) - b(x)).abs().max().item()
print("max |action difference|:", diff)
assert diff == 0.0, diff
PY

rc=0
"$bin" train "$dir/ppo.yaml" --set init_from="$dir/exported/shac.pt" --set policy.squash=none \
  --out "$dir/bad" >"$dir/bad.log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "an actor with another squashing must exit 1 (got $rc)"
grep -q "init_from: $dir/exported/shac.pt: its actor has another policy.activation or policy.squash" \
  "$dir/bad.log" || fail "the message must name init_from, the file and the key: $(cat "$dir/bad.log")"
echo "warm start from an exported policy: OK"
