#!/usr/bin/env bats
# --container-mounts: binds of directories, files and devices, flags, tmpfs,
# umount, and what is refused.

load ./common

setup() { mkdir -p "$SCRATCH/pyxis test dir" && echo hello >"$SCRATCH/pyxis test dir/file.txt"; }
teardown() { rm -rf "$SCRATCH/pyxis test dir"; }

@test "a directory" {
  step_ok --container-mounts=/home:/test-mnt --container-image="$U18" findmnt /test-mnt
}

@test "a regular file, by a relative path" {
  step_ok --container-mounts=../mounts.bats:/script.bats --container-image="$U18" cat /script.bats
  expect 'container-mounts'
}

@test "a character device" {
  step_ok --container-mounts=/dev/null:/null --container-image="$U18" bash -c '[ -c /null ]'
}

@test "the working directory, as ./" {
  step_ok --container-mounts=./:/test-mnt --container-image="$U18" findmnt /test-mnt
}

@test "several at once" {
  step_ok --container-mounts=./:/test-mnt,/dev/null:/null,/home:/host/home --container-image="$U18" \
    sh -c 'findmnt /test-mnt && findmnt /null && findmnt /host/home'
}

@test "a file the user may not read is mounted, and stays unreadable" {
  [ "$(id -u)" -ne 0 ] || skip "needs a user that is not root"
  step_ok --container-mounts=/etc/shadow:/shadow --container-image="$U18" findmnt /shadow
  step_fails --container-mounts=/etc/shadow:/shadow --container-image="$U18" cat /shadow
  expect 'Permission denied'
}

@test ":ro makes the mount read-only" {
  step_fails --container-mounts=/tmp:/mnt:ro --container-image="$U18" touch /mnt/foo
  expect 'Read-only file system'
}

@test "flags combine: unbindable+ro" {
  step_fails --container-mounts=/tmp:/mnt:unbindable+ro --container-image="$U18" touch /mnt/foo
  expect 'Read-only file system'
  step_ok --container-mounts=/tmp:/mnt:unbindable+ro --container-image="$U18" findmnt -o PROPAGATION /mnt
  grep -q unbindable <<<"${lines[-1]}"
}

@test "a target that climbs out of the root is refused" {
  step_fails --container-mounts=/home:../home --container-image="$U18" true
  grep -qi 'cross-device link' <<<"$output"
}

@test "one path mounts at the same place" {
  step_ok --container-image="$U18" bash -c '! findmnt /var/lib'
  step_ok --container-mounts=/var/lib --container-image="$U18" findmnt /var/lib
}

@test "tmpfs" {
  step_ok --container-mounts=tmpfs:/mytmpfs --container-image="$U20" findmnt -n -o fstype /mytmpfs
  last_is tmpfs
}

@test "tmpfs with an option (huge=within_size)" {
  step_ok --container-mounts=tmpfs:/mytmpfs:huge=within_size --container-image="$U20" findmnt -n -o options /mytmpfs
  expect 'huge=within_size'
}

@test "devpts is not a mount type users get" {
  step_fails --container-mounts=devpts:/mydevpts:ro --container-image="$U18" findmnt /mydevpts
}

@test "a relative target is refused" {
  step_fails --container-mounts=/tmp:mnt:ro --container-image="$U18" findmnt /mnt
}

@test "a space in the source" {
  step_ok --container-mounts="$SCRATCH/pyxis test dir:/mnt/test" --container-image="$U18" cat /mnt/test/file.txt
  expect hello
}

@test "a space in the target" {
  step_ok --container-mounts="/tmp:/mnt/my mount" --container-image="$U18" findmnt "/mnt/my mount"
}

@test "spaces on both sides" {
  step_ok --container-mounts="$SCRATCH/pyxis test dir:/mnt/my mount" --container-image="$U18" cat "/mnt/my mount/file.txt"
  expect hello
}

@test "a missing source is named in the error" {
  step_fails --container-mounts=/nonexistent/path/foo:/mnt --container-image="$U18" true
  expect 'source path does not exist'
  expect '/nonexistent/path/foo'
}

@test "a missing source beside a good one still fails" {
  step_fails --container-mounts=/tmp:/mnt,/nonexistent/path:/mnt2 --container-image="$U18" true
  expect 'source path does not exist'
  expect '/nonexistent/path'
}

@test "umount: takes away a mount the container would get" {
  step_ok --container-mount-home --container-remap-root --container-image="$U20" findmnt /root
  step_ok --container-mount-home --container-remap-root --container-mounts umount:/root \
    --container-image="$U20" bash -c '! findmnt /root'
}
