#!/usr/bin/env bash
# Data-parallel training on c10d/Gloo (run by ctest as cli_train_distributed):
#   distributed_test.sh DIFFLOCO REPO PYTHON DIR
# - Equivalence: `--nproc 2` with E envs per rank against 1 rank with 2E envs, SHAC and PPO,
#   3 iterations: networks, optimiser states, normaliser and the envs' states agree to the order
#   of float sums (tests/cli/compare_checkpoints.py); every rank holds the same networks.
# - torchrun's conventions: the same run launched with RANK/WORLD_SIZE/MASTER_* by hand (and by
#   python3 -m torch.distributed.run where PYTHON has it) gives the same checkpoint.
# - Resume with the same world size continues exactly; another world size is refused.
# - Faults: a rank killed (SIGKILL) or stopped (SIGSTOP) makes the other exit non-zero within the
#   timeout with a message naming it; `--nproc` names the rank that died; a port in use, an
#   unreachable master and ranks with different configs are clear errors.
set -euo pipefail

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

bin=$1 repo=$2 py=$3 dir=$4
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"
walk="$repo/configs/walk_quadruped_shac.yaml"
ppo="$repo/configs/walk_quadruped_ppo.yaml"
common=(--set run.sim_threads=1 --set run.torch_threads=1 --set run.checkpoint_every=1
        --set run.tensorboard=false --seed 7)
shac=(--set shac.iterations=3 --set shac.horizon=8 --set shac.critic_iterations=2
      --set shac.critic_minibatches=4)
ppo_sets=(--set ppo.iterations=3 --set ppo.rollout=8 --set ppo.epochs=2 --set ppo.minibatches=4)

# run_dir OUT: the one run folder under OUT.
run_dir() { ls -d "$1"/*/ | head -n 1; }

# free_port: a TCP port free a moment ago.
free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

echo "== equivalence: SHAC, 2 ranks x 4 envs vs 1 x 8"
"$bin" train "$walk" "${common[@]}" "${shac[@]}" --set shac.num_envs=8 --out one >one.log 2>&1 ||
  { cat one.log; fail "1-rank SHAC run"; }
"$bin" train "$walk" "${common[@]}" "${shac[@]}" --set shac.num_envs=4 --nproc 2 --out two \
  >two.log 2>&1 || { cat two.log; fail "2-rank SHAC run"; }
grep -q "distributed: 2 ranks x 4 envs" two.log || { cat two.log; fail "no distributed line"; }
[ -f "$(run_dir two)/policy.pt" ] || fail "the 2-rank run wrote no policy.pt"
"$py" "$repo/tests/cli/compare_checkpoints.py" "$(run_dir one)/model_3.pt" "$(run_dir two)/model_3.pt"
# Rank 0 alone writes the run folder: one folder, one metrics.csv with 3 rows.
[ "$(ls -d two/*/ | wc -l)" = 1 ] || fail "more than one run folder"
[ "$(($(wc -l <"$(run_dir two)/metrics.csv") - 1))" = 3 ] || fail "metrics.csv rows"

echo "== equivalence: PPO, 2 ranks x 4 envs vs 1 x 8"
"$bin" train "$ppo" "${common[@]}" "${ppo_sets[@]}" --set ppo.num_envs=8 --out ppo_one \
  >ppo_one.log 2>&1 || { cat ppo_one.log; fail "1-rank PPO run"; }
"$bin" train "$ppo" "${common[@]}" "${ppo_sets[@]}" --set ppo.num_envs=4 --nproc 2 --out ppo_two \
  >ppo_two.log 2>&1 || { cat ppo_two.log; fail "2-rank PPO run"; }
"$py" "$repo/tests/cli/compare_checkpoints.py" "$(run_dir ppo_one)/model_3.pt" \
  "$(run_dir ppo_two)/model_3.pt"

echo "== torchrun's variables by hand"
port=$(free_port)
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    "$bin" train "$walk" "${common[@]}" "${shac[@]}" --set shac.num_envs=4 --out byhand$r \
    >byhand$r.log 2>&1 &
done
wait || { cat byhand0.log byhand1.log; fail "ranks started by hand"; }
[ ! -d byhand1 ] || [ -z "$(ls byhand1)" ] || fail "rank 1 wrote a run folder"
"$py" "$repo/tests/cli/compare_checkpoints.py" "$(run_dir one)/model_3.pt" \
  "$(run_dir byhand0)/model_3.pt"
if "$py" -c "import torch.distributed.run" 2>/dev/null; then
  echo "== python3 -m torch.distributed.run --no_python (torch 1.13 spells it with _)"
  # Debian's torch 1.13 on Python 3.11 fails to parse the default --redirects/--tee (0); a
  # mapping form parses.
  "$py" -m torch.distributed.run --no_python --nproc_per_node 2 --master_port "$(free_port)" \
    --redirects 0:1 --tee 0:1 --log_dir "$dir/torchrun_logs" \
    "$bin" train "$walk" "${common[@]}" "${shac[@]}" --set shac.num_envs=4 --out torchrun \
    >torchrun.log 2>&1 || { cat torchrun.log; fail "torchrun"; }
  "$py" "$repo/tests/cli/compare_checkpoints.py" "$(run_dir one)/model_3.pt" \
    "$(run_dir torchrun)/model_3.pt"
fi

echo "== resume with the same world size"
"$bin" train "$walk" "${common[@]}" "${shac[@]}" --set shac.iterations=2 --set shac.num_envs=4 \
  --nproc 2 --out resumed >resumed.log 2>&1 || { cat resumed.log; fail "2-rank run of 2 its"; }
run=$(run_dir resumed)
"$bin" train --resume "$run" --set shac.iterations=3 --nproc 2 >resume2.log 2>&1 ||
  { cat resume2.log; fail "2-rank resume"; }
"$py" - "$run/model_3.pt" "$(run_dir two)/model_3.pt" <<'PY' || fail "resumed != uninterrupted"
import io, sys, torch
def tensors(m, prefix=""):
    out = {}
    for k, t in list(m.named_parameters()) + list(m.named_buffers()):
        if k.startswith("ranks/"):  # another rank's whole state, serialised
            out.update(tensors(torch.jit.load(io.BytesIO(t.numpy().tobytes())), k + ":"))
        else:
            out[prefix + k] = t
    return out
a, b = (tensors(torch.jit.load(f)) for f in sys.argv[1:])
bad = [k for k in b if k not in a or not torch.equal(a[k], b[k])]
print("resumed 2-rank run vs uninterrupted:", "identical" if not bad else f"differ in {bad[:5]}")
sys.exit(1 if bad else 0)
PY
if "$bin" train --resume "$run" --set shac.iterations=4 >resume1.log 2>&1; then
  fail "a 2-rank run resumed with 1 rank"
fi
grep -q "written by a run of 2 rank(s); this one has 1" resume1.log || { cat resume1.log; fail "world size message"; }

echo "== a rank killed: the other exits within the timeout, naming the failure"
long=(--set shac.iterations=100000 --set shac.num_envs=4 --set shac.horizon=8)
# start_pair NAME TIMEOUT: two ranks of a long run (pids in pid0, pid1, logs NAME0.log, NAME1.log),
# back once rank 0 has done 2 iterations.
start_pair() {
  local port r
  port=$(free_port)
  for r in 0 1; do
    RANK=$r WORLD_SIZE=2 MASTER_PORT=$port DIFFLOCO_DIST_TIMEOUT_S=$2 "$bin" train "$walk" \
      "${common[@]}" "${long[@]}" --out "$1$r" >"$1$r.log" 2>&1 &
    eval "pid$r=$!"
  done
  for _ in $(seq 600); do grep -q "it     2/" "${1}0.log" 2>/dev/null && break; sleep 0.1; done
  grep -q "it     2/" "${1}0.log" || { cat "${1}0.log"; fail "the ranks did not train"; }
}
start_pair kill 20
t0=$SECONDS
kill -9 "$pid1"
rc=0
wait "$pid0" || rc=$?
took=$((SECONDS - t0))
[ $rc != 0 ] || fail "rank 0 exited 0 after rank 1 died"
[ $took -le 25 ] || fail "rank 0 took ${took} s to stop (timeout 20 s)"
grep -q "distributed (rank 0 of 2): .* failed" kill0.log || { cat kill0.log; fail "rank 0's message"; }
echo "rank 0 exited $rc ${took} s after rank 1 was killed: $(grep -o 'distributed (rank 0.*' kill0.log | cut -c1-160)"

echo "== a rank stopped (SIGSTOP): the other times out"
start_pair stall 5
t0=$SECONDS
kill -STOP "$pid1"
rc=0
wait "$pid0" || rc=$?
took=$((SECONDS - t0))
kill -9 "$pid1"
wait "$pid1" 2>/dev/null || true
[ $rc != 0 ] || fail "rank 0 exited 0 with rank 1 stopped"
[ $took -le 15 ] || fail "rank 0 took ${took} s to stop (timeout 5 s)"
grep -q "distributed (rank 0 of 2): .* failed" stall0.log || { cat stall0.log; fail "stall message"; }
echo "rank 0 exited $rc ${took} s after rank 1 stopped"

echo "== --nproc: a rank killed is named, the others are stopped"
"$bin" train "$walk" "${common[@]}" "${long[@]}" --nproc 2 --out launched >launched.log 2>&1 &
launcher=$!
for _ in $(seq 600); do grep -q "it     2/" launched.log 2>/dev/null && break; sleep 0.1; done
child=$(pgrep -P $launcher | tail -n 1)
[ -n "$child" ] || fail "no child of the launcher"
kill -9 "$child"
rc=0
wait $launcher || rc=$?
[ $rc != 0 ] || fail "the launcher exited 0"
grep -Eq "rank [01] was killed by signal 9" launched.log || { cat launched.log; fail "launcher message"; }
sleep 0.5
pgrep -P $launcher >/dev/null && fail "a rank outlived the launcher"

echo "== clear errors: port in use, unreachable master, different configs"
port=$(free_port)
"$py" -c "import socket,time; s=socket.socket(); s.bind(('127.0.0.1',$port)); s.listen(); time.sleep(30)" &
holder=$!
sleep 0.5
rc=0
RANK=0 WORLD_SIZE=2 MASTER_PORT=$port DIFFLOCO_DIST_TIMEOUT_S=5 "$bin" train "$walk" "${common[@]}" \
  "${shac[@]}" --out inuse >inuse.log 2>&1 || rc=$?
kill $holder
[ $rc != 0 ] && grep -q "could not serve the store at 127.0.0.1:$port (port in use?)" inuse.log ||
  { cat inuse.log; fail "port in use"; }
rc=0
RANK=1 WORLD_SIZE=2 MASTER_PORT=$(free_port) DIFFLOCO_DIST_TIMEOUT_S=3 "$bin" train "$walk" \
  "${common[@]}" "${shac[@]}" --out unreachable >unreachable.log 2>&1 || rc=$?
[ $rc != 0 ] && grep -q "could not reach the master at 127.0.0.1" unreachable.log ||
  { cat unreachable.log; fail "unreachable master"; }
port=$(free_port)
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 MASTER_PORT=$port DIFFLOCO_DIST_TIMEOUT_S=20 "$bin" train "$walk" \
    "${common[@]}" "${shac[@]}" --set shac.num_envs=4 --set shac.gamma=0.9$r --out differ$r \
    >differ$r.log 2>&1 &
done
wait
grep -q "rank 1's config differs from rank 0's at shac.gamma: '0.91' vs '0.9'" differ0.log ||
  { cat differ0.log; fail "config mismatch message"; }
RANK=0 WORLD_SIZE=x "$bin" train "$walk" >badenv.log 2>&1 && fail "WORLD_SIZE=x accepted"
grep -q "WORLD_SIZE='x': expected an integer in \[1, 65536\]" badenv.log || { cat badenv.log; fail "bad variable"; }
echo "distributed_test: all passed"
