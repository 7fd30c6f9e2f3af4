#!/usr/bin/env bash
# Starts EXE (a long run of spin.poly) on 3 ranks, kills one of their processes with SIGKILL after 2 s, and
# prints mpirun's exit status: the job must end (within the caller's timeout), not hang in an exchange.
exe=$1
mpirun --oversubscribe --allow-run-as-root -np 3 "$exe" --param N=3000 --param T=100000000 &
job=$!
sleep 2
victim=$(pgrep -f "^$exe" | sed -n 2p)
kill -9 "$victim"
wait "$job"
echo "exit $?"
