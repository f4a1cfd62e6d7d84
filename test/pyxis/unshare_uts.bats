#!/usr/bin/env bats
# --container-unshare=uts: the container's own UTS namespace.

load ./common

setup() { forget unshare-uts unshare-nouts; }
teardown() { stop_background; forget unshare-uts unshare-nouts; }

@test "--container-unshare=uts gives the container a new uts namespace" {
  local mine
  mine=$(on_node readlink /proc/self/ns/uts)
  step_ok --container-unshare=uts --container-image="$U24" readlink /proc/self/ns/uts
  [ "${lines[-1]}" != "$mine" ]
}

@test "--container-unshare=uts: four tasks share the one new namespace" {
  local mine ids
  mine=$(on_node readlink /proc/self/ns/uts)
  step_ok --ntasks=4 --container-unshare=uts --container-image="$U24" readlink /proc/self/ns/uts
  ids=$(grep -E '^uts:\[[0-9]+\]$' <<<"$output" | sort -u)
  [ "$(wc -l <<<"$ids")" -eq 1 ]
  [ "$ids" != "$mine" ]
}

@test "without --container-unshare the node's uts namespace is kept" {
  local mine
  mine=$(on_node readlink /proc/self/ns/uts)
  step_ok --container-image="$U24" readlink /proc/self/ns/uts
  last_is "$mine"
}

@test "a step joining a named container gets its uts namespace" {
  local mine
  in_background --overcommit --container-image="$U24" --container-name=unshare-uts \
    --container-unshare=uts sleep 60
  mine=$(on_node readlink /proc/self/ns/uts)
  step_ok --overlap --container-name=unshare-uts readlink /proc/self/ns/uts
  [ "${lines[-1]}" != "$mine" ]
}

@test "--container-unshare=uts on a running container that shares the node's is refused" {
  in_background --overcommit --container-image="$U24" --container-name=unshare-nouts sleep 60
  step_fails --overlap --container-name=unshare-nouts --container-unshare=uts true
  expect 'not in a separate UTS namespace'
}

@test "--container-unshare=uts: the container may rename itself, the node keeps its name" {
  local name
  name=$(on_node hostname)
  step_ok --container-unshare=uts --container-image="$U24" hostname
  last_is "$name"
  step_ok --container-unshare=uts --container-image="$U24" bash -c 'hostname renamed-in-container && hostname'
  last_is renamed-in-container
  [ "$(on_node hostname)" == "$name" ]
}
