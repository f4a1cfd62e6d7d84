#!/usr/bin/env bats
# --container-unshare: which namespaces a container gets of its own, parsed
# and combined. Each namespace on its own: unshare_{net,ipc,uts}.bats.

load ./common

@test "an unknown namespace is refused" {
  step_fails --container-unshare=foo --container-image="$U24" true
  expect 'unknown namespace'
}

@test "an unknown namespace among known ones is refused" {
  step_fails --container-unshare=net,foo --container-image="$U24" true
  expect 'unknown namespace'
}

@test "net, ipc and uts together are all the container's own" {
  local net ipc uts
  net=$(on_node readlink /proc/self/ns/net)
  ipc=$(on_node readlink /proc/self/ns/ipc)
  uts=$(on_node readlink /proc/self/ns/uts)
  step_ok --container-unshare=net,ipc,uts --container-image="$U24" \
    bash -c 'for n in net ipc uts; do echo "$n $(readlink /proc/self/ns/$n)"; done'
  [ "$(awk '$1 == "net" { print $2 }' <<<"$output")" != "$net" ]
  [ "$(awk '$1 == "ipc" { print $2 }' <<<"$output")" != "$ipc" ]
  [ "$(awk '$1 == "uts" { print $2 }' <<<"$output")" != "$uts" ]
}

@test "PYXIS_CONTAINER_UNSHARE sets the default" {
  local net
  net=$(on_node readlink /proc/self/ns/net)
  PYXIS_CONTAINER_UNSHARE=net step_ok --container-image="$U24" readlink /proc/self/ns/net
  [ "${lines[-1]}" != "$net" ]
}
