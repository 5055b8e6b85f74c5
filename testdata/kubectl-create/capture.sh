#!/bin/bash
# Runs commands.txt with KUBECTL against the cluster of KUBECONFIG, in a namespace `gen` it
# creates, and writes into OUT_DIR, per command: NAME.out (exit status, then what kubectl
# printed, stdout and stderr) and NAME.json (`kubectl get OBJECT -o json --show-managed-fields`).
# The captures in real-1.NN/ were made so against a real v1.36.2 server (../shared/realk8s) with
# kubectl 1.NN, each on a fresh cluster: tests/kubectl/create.rs compares the demo with them.
#   usage: KUBECTL=... [READ_KUBECTL=a kubectl that knows --show-managed-fields] KUBECONFIG=... capture.sh OUT_DIR
set -u
here="$(cd "$(dirname "$0")" && pwd)"
out="$1"
mkdir -p "$out"
"$KUBECTL" create namespace gen >/dev/null
while IFS='|' read -r name object args; do
  name="${name// /}"
  object="${object// /}"
  case "$name" in ''|'#'*) continue ;; esac
  args="${args//\{here\}/$here}"
  eval "set -- $args"
  printed="$("$KUBECTL" -n gen "$@" 2>&1)"
  printf '%s\n%s\n' "$?" "$printed" > "$out/$name.out"
  if [ "$object" != "-" ]; then
    "${READ_KUBECTL:-$KUBECTL}" -n gen get "$object" -o json --show-managed-fields > "$out/$name.json" 2>/dev/null \
      || rm -f "$out/$name.json"
  fi
done < "$here/commands.txt"
