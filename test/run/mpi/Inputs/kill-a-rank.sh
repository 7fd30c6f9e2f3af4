#!/usr/bin/env bash
# Starts EXE (a long run of spin.poly) on 3 ranks, kills one of their processes with SIGKILL 2 s after they
# all started, and prints mpirun's exit status: the job must end (within the caller's timeout), not hang
# in an exchange.
exe=$1
mpirun --oversubscribe --allow-run-as-root -np 3 "$exe" --param N=3000 --param T=100000000 &
job=$!
# The ranks' processes, found through /proc (no procps on a bare machine), once they all run; then the
# second one is killed, 2 s into the run.
ranks=()
for _ in $(seq 120); do
  sleep 0.5
  ranks=()
  for cmdline in /proc/[0-9]*/cmdline; do
    if [[ "$(tr '\0' ' ' < "$cmdline" 2>/dev/null)" == "$exe "* ]]; then
      pid=${cmdline#/proc/}
      ranks+=("${pid%/cmdline}")
    fi
  done
  ((${#ranks[@]} == 3)) && break
done
sleep 2
kill -9 "${ranks[1]}"
wait "$job"
echo "exit $?"
