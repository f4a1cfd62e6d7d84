#!/usr/bin/env bats
# --container-mount-home: the user's home in the container, at /root when
# remapped to root, at $HOME otherwise.

load ./common

@test "home is mounted at /root with --container-remap-root" {
  step_ok --container-mount-home --container-remap-root --container-image="$U18" findmnt /root
}

@test "home is mounted at \$HOME without remapping" {
  step_ok --container-mount-home --no-container-remap-root --container-image="$U18" findmnt "$HOME"
}

@test "--no-container-mount-home: nothing at /root when remapped" {
  step_ok --no-container-mount-home --container-remap-root --container-image="$U18" bash -c '! findmnt /root'
}

@test "--no-container-mount-home: nothing at \$HOME otherwise" {
  step_ok --no-container-mount-home --no-container-remap-root --container-image="$U18" bash -c "! findmnt $HOME"
}
