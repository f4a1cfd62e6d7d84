#!/usr/bin/env bats
# Batch scripts in a container: the image from sbatch's command line, or
# from an #SBATCH line of the script.

load ./common

@test "sbatch --container-image runs the script in ubuntu:16.04" {
  batch --container-image="$U16" <<'SCRIPT'
#!/bin/bash
grep 'Ubuntu 16.04' /etc/os-release
SCRIPT
  batch <<SCRIPT
#!/bin/bash
#SBATCH --container-image=$U16
grep 'Ubuntu 16.04' /etc/os-release
SCRIPT
}

@test "sbatch --container-image runs the script in centos:8" {
  batch --container-image="$REG/centos:8" <<'SCRIPT'
#!/bin/bash
grep 'CentOS Linux release 8.' /etc/redhat-release
SCRIPT
  batch <<SCRIPT
#!/bin/bash
#SBATCH --container-image=$REG/centos:8
grep 'CentOS Linux release 8.' /etc/redhat-release
SCRIPT
}
