#!/usr/bin/env bats
# --container-unshare=net: the container's own network namespace.

load ./common

setup() { forget unshare-net unshare-nonet; }
teardown() { stop_background; forget unshare-net unshare-nonet; }

@test "--container-unshare=net gives the container a new net namespace" {
  local mine
  mine=$(on_node readlink /proc/self/ns/net)
  step_ok --container-unshare=net --container-image="$U24" readlink /proc/self/ns/net
  [ "${lines[-1]}" != "$mine" ]
}

@test "--container-unshare=net: four tasks share the one new namespace" {
  local mine ids
  mine=$(on_node readlink /proc/self/ns/net)
  step_ok --ntasks=4 --container-unshare=net --container-image="$U24" readlink /proc/self/ns/net
  ids=$(grep -E '^net:\[[0-9]+\]$' <<<"$output" | sort -u)
  [ "$(wc -l <<<"$ids")" -eq 1 ]
  [ "$ids" != "$mine" ]
}

@test "without --container-unshare the node's net namespace is kept" {
  local mine
  mine=$(on_node readlink /proc/self/ns/net)
  step_ok --container-image="$U24" readlink /proc/self/ns/net
  last_is "$mine"
}

@test "a step joining a named container gets its net namespace" {
  local mine
  in_background --overcommit --container-image="$U24" --container-name=unshare-net \
    --container-unshare=net sleep 60
  mine=$(on_node readlink /proc/self/ns/net)
  step_ok --overlap --container-name=unshare-net readlink /proc/self/ns/net
  [ "${lines[-1]}" != "$mine" ]
}

@test "--container-unshare=net on a running container that shares the node's is refused" {
  in_background --overcommit --container-image="$U24" --container-name=unshare-nonet sleep 60
  step_fails --overlap --container-name=unshare-nonet --container-unshare=net true
  expect 'not in a separate network namespace'
}

@test "--container-unshare=net: loopback is up and nothing listens" {
  step --container-unshare=net --container-image="$U24" bash -c 'exec </dev/tcp/127.0.0.1/65535'
  [ "$status" -ne 0 ]
  expect 'Connection refused'
}

@test "--container-unshare=net: no route out" {
  step --container-unshare=net --container-image="$U24" bash -c 'exec </dev/tcp/8.8.8.8/53'
  [ "$status" -ne 0 ]
  expect 'Network is unreachable'
}
