#!/usr/bin/env bats
# sshd inside a named container (https://github.com/NVIDIA/pyxis/issues/44
# and 45): installed as remapped root, run as the user, reached from the
# node with the user's key from their home.

load ./common

setup() {
  forget sshd
  if [[ ! -f $HOME/.ssh/id_ed25519 ]]; then
    mkdir -p "$HOME/.ssh" && chmod 700 "$HOME/.ssh"
    ssh-keygen -q -t ed25519 -N '' -f "$HOME/.ssh/id_ed25519"
  fi
  grep -qF "$(cat "$HOME/.ssh/id_ed25519.pub")" "$HOME/.ssh/authorized_keys" 2>/dev/null ||
    cat "$HOME/.ssh/id_ed25519.pub" >>"$HOME/.ssh/authorized_keys"
  chmod 600 "$HOME/.ssh/authorized_keys"
}
teardown() { stop_background; forget sshd; }

install_sshd() {
  step_ok --container-image="$U20" --container-name=sshd --container-remap-root \
    bash -c 'apt-get update && apt-get install -y --no-install-recommends openssh-server'
}

@test "ssh from the node into sshd running in the container" {
  install_sshd
  in_background --container-name=sshd --no-container-remap-root --container-mount-home \
    bash -c 'timeout --preserve-status --signal=TERM 20 /usr/sbin/sshd -D -e -p 2222'
  step_ok --overlap ssh -t -p 2222 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
    -o BatchMode=yes localhost true
}

@test "a step attaches to the container sshd runs in" {
  install_sshd
  in_background --container-name=sshd --no-container-remap-root -t 1 --signal TERM@30 \
    /usr/sbin/sshd -D -e -p 2222
  step_ok --overlap --container-name=sshd true
}
