#!/usr/bin/env bash
# isolated.sh COMMAND...
# Runs COMMAND with a /dev/shm and System V IPC of its own (a private mount and IPC namespace
# with a fresh tmpfs on /dev/shm), so that what it counts there is only what it created, and
# other jobs on the node neither disturb it nor are disturbed. Needs root (as CI runs); without
# it COMMAND runs as it is, beside everything else.
set -euo pipefail
if [ "${ISOLATED_NAMESPACES:-}" = 1 ]; then
  mount -t tmpfs -o size=1g,mode=1777 tmpfs /dev/shm
  exec "$@"
fi
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null &&
   unshare --mount --ipc --propagation private true 2>/dev/null; then
  ISOLATED_NAMESPACES=1 exec unshare --mount --ipc --propagation private "$0" "$@"
fi
echo "isolated.sh: no private namespace here (needs root); running beside other jobs" >&2
exec "$@"
