#!/usr/bin/env bats
# --container-unshare=ipc: the container's own IPC namespace.

load ./common

setup() { forget unshare-ipc unshare-noipc; }
teardown() { stop_background; forget unshare-ipc unshare-noipc; }

@test "--container-unshare=ipc gives the container a new ipc namespace" {
  local mine
  mine=$(on_node readlink /proc/self/ns/ipc)
  step_ok --container-unshare=ipc --container-image="$U24" readlink /proc/self/ns/ipc
  [ "${lines[-1]}" != "$mine" ]
}

@test "--container-unshare=ipc: four tasks share the one new namespace" {
  local mine ids
  mine=$(on_node readlink /proc/self/ns/ipc)
  step_ok --ntasks=4 --container-unshare=ipc --container-image="$U24" readlink /proc/self/ns/ipc
  ids=$(grep -E '^ipc:\[[0-9]+\]$' <<<"$output" | sort -u)
  [ "$(wc -l <<<"$ids")" -eq 1 ]
  [ "$ids" != "$mine" ]
}

@test "without --container-unshare the node's ipc namespace is kept" {
  local mine
  mine=$(on_node readlink /proc/self/ns/ipc)
  step_ok --container-image="$U24" readlink /proc/self/ns/ipc
  last_is "$mine"
}

@test "a step joining a named container gets its ipc namespace" {
  local mine
  in_background --overcommit --container-image="$U24" --container-name=unshare-ipc \
    --container-unshare=ipc sleep 60
  mine=$(on_node readlink /proc/self/ns/ipc)
  step_ok --overlap --container-name=unshare-ipc readlink /proc/self/ns/ipc
  [ "${lines[-1]}" != "$mine" ]
}

@test "--container-unshare=ipc on a running container that shares the node's is refused" {
  in_background --overcommit --container-image="$U24" --container-name=unshare-noipc sleep 60
  step_fails --overlap --container-name=unshare-noipc --container-unshare=ipc true
  expect 'not in a separate IPC namespace'
}

@test "--container-unshare=ipc: SysV shared memory stays in the container" {
  local before after
  step_ok --container-unshare=ipc --container-image="$U24" \
    bash -c 'ipcmk -M 1M >/dev/null && ipcs -m | grep -c "^0x"'
  [ "${lines[-1]}" -ge 1 ]
  before=$(on_node ipcs -m)
  step_ok --container-unshare=ipc --container-image="$U24" bash -c 'ipcmk -M 1M >/dev/null'
  after=$(on_node ipcs -m)
  [ "$before" == "$after" ]
}

@test "--container-unshare=ipc: /dev, /dev/shm and /dev/mqueue are the container's" {
  local d s q
  d=$(on_node stat -c %d /dev)
  s=$(on_node stat -c %d /dev/shm)
  q=$(on_node sh -c 'stat -c %d /dev/mqueue 2>/dev/null || echo none')
  ENROOT_RESTRICT_DEV=no NODE_DEV=$d NODE_SHM=$s NODE_MQ=$q step_ok --container-unshare=ipc \
    --container-env=NODE_DEV,NODE_SHM,NODE_MQ --container-image="$U24" \
    bash -c '[ "$(stat -c %d /dev)" != "$NODE_DEV" ] && [ "$(stat -c %d /dev/shm)" != "$NODE_SHM" ] && [ "$(stat -c %d /dev/mqueue)" != "$NODE_MQ" ]'
}
