#!/usr/bin/env bash
# Exports a built cluster image as the OCI images Slinky's pods run, one per
# role, and pushes them with corral's own registry client (corral-imagectl):
#
#   scripts/kube-images.sh [--http] [--tag TAG] [--bin-dir DIR] [--roles R,R…]
#                          IMAGE REF_PREFIX
#
#   IMAGE       a cluster image built on this host (`corrald image build
#               IMAGE`), by name, or a build's directory (<cache>/<id>)
#   REF_PREFIX  where the images go: REF_PREFIX/<role>:TAG, e.g.
#               registry.example:5000/corral -> …/corral/slurmctld:TAG
#   --tag       the tag (default: the image's name)
#   --http      speak plain http to the registry (a loopback test registry)
#   --bin-dir   where corral's binaries are (default: build/ of this clone)
#   --roles     a subset of: slurmctld slurmd login slurmdbd slurmrestd mariadb
#
# Every role's image is the cluster image's root filesystem (one layer,
# shared by all: the registry keeps it once) and a small layer of corral's:
# /.corral-bin (the node agent, the Enroot-compatible runtime, the image
# client and the SPANK plugin built for the image's Slurm release, as the
# local runtime gives every pod) and /usr/local/bin/corral-kube-entrypoint
# (images/kube/entrypoint.sh). Only the entrypoint differs between roles.
# Prints "ROLE REF DIGEST" per image. Run as root: the root filesystem is
# root's to read. docs/images.md, "Images for Kubernetes".
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
http=()
tag=""
bin_dir="$here/build"
roles=(slurmctld slurmd login slurmdbd slurmrestd mariadb)
cache=${CORRAL_IMAGE_CACHE:-/var/cache/corral/images}

die() {
  echo "kube-images: $*" >&2
  exit 1
}

args=()
while (($#)); do
  case "$1" in
    --http) http=(--http) ;;
    --tag) tag=${2:?--tag needs a value}; shift ;;
    --bin-dir) bin_dir=${2:?--bin-dir needs a value}; shift ;;
    --roles) IFS=, read -r -a roles <<<"${2:?--roles needs a value}"; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) args+=("$1") ;;
  esac
  shift
done
((${#args[@]} == 2)) || die "usage: kube-images.sh [--http] [--tag TAG] [--bin-dir DIR] [--roles R,…] IMAGE REF_PREFIX"
image=${args[0]}
prefix=${args[1]%/}

# The image's build directory: given, or the build `corrald image list`
# names for IMAGE (the one its current recipe makes).
if [[ -f $image/image.json ]]; then
  build=$image
else
  [[ -x $bin_dir/corrald ]] || die "no corrald in $bin_dir (build corral, or pass --bin-dir)"
  id=$("$bin_dir/corrald" image list | awk -v n="$image" '$1 == n || $1 == n" *" {print $NF}' | head -n1)
  [[ -n $id ]] || die "no cluster image called $image (corrald image list)"
  build=""
  for d in "$cache/$id"*/; do
    [[ -f $d/image.json ]] && build=${d%/}
  done
  [[ -n $build ]] || die "image $image ($id) is not built here: corrald image build $image"
fi
rootfs=$build/rootfs
name=$(jq -r .name "$build/image.json")
release=$(jq -r .slurm "$build/image.json")
[[ -n $tag ]] || tag=$name
[[ $tag =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || die "tag '$tag' is not a valid image tag"

# What Slinky's pods need of the image itself.
slurm_ids=$(awk -F: '$1 == "slurm" {print $3":"$4}' "$rootfs/etc/passwd")
[[ $slurm_ids == 401:401 ]] ||
  die "image $name runs the slurm user as ${slurm_ids:-nobody}, not 401:401 (Slinky's pods run slurmctld and slurmdbd as uid 401: see the setup step of images/debian-unstable-slurm26.05.yaml)"
for f in usr/bin/tini usr/sbin/slurmctld usr/sbin/slurmd usr/sbin/slurmdbd usr/sbin/slurmrestd \
  usr/sbin/sackd usr/sbin/sshd usr/sbin/mariadbd; do
  [[ -e $rootfs/$f ]] || die "image $name has no /$f, which Slinky's pods run"
done
for role in "${roles[@]}"; do
  case "$role" in
    slurmctld | slurmd | login | slurmdbd | slurmrestd | mariadb) ;;
    *) die "unknown role $role (slurmctld slurmd login slurmdbd slurmrestd mariadb)" ;;
  esac
done
plugin=spank_pyxis-$release.so
for f in corral-health enroot corral-imagectl "$plugin"; do
  [[ -f $bin_dir/$f ]] || die "no $f in $bin_dir (corral's build makes it)"
done

work=$(mktemp -d /tmp/kube-images.XXXXXX)
trap 'rm -rf "$work"' EXIT
layer=$work/corral
install -d -m 0755 "$layer/.corral-bin" "$layer/usr/local/bin"
for f in corral-health enroot corral-imagectl; do
  install -m 0755 "$bin_dir/$f" "$layer/.corral-bin/$f"
done
install -m 0644 "$bin_dir/$plugin" "$layer/.corral-bin/$plugin"
install -m 0755 "$here/images/kube/entrypoint.sh" "$layer/usr/local/bin/corral-kube-entrypoint"

# Each role's ENTRYPOINT and CMD. slurmdbd and slurmrestd are started as
# Slinky's own images start them; the others by corral's entrypoint, which
# takes the operator's args (docs/images.md has the table).
entry() {
  case "$1" in
    slurmctld | slurmd | login | mariadb)
      echo "/usr/bin/tini -g -- /usr/local/bin/corral-kube-entrypoint $1" ;;
    slurmdbd) echo "/usr/bin/tini -g -- slurmdbd -D" ;;
    slurmrestd) echo "/usr/bin/tini -g -- slurmrestd" ;;
  esac
}
cmd() {
  case "$1" in
    slurmrestd) echo "0.0.0.0:6820" ;;
  esac
}

for role in "${roles[@]}"; do
  ref=$prefix/$role:$tag
  push=("$bin_dir/corral-imagectl" push "${http[@]}"
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --env LANG=C.UTF-8
    --workdir /)
  for a in $(entry "$role"); do push+=("--entrypoint=$a"); done
  for a in $(cmd "$role"); do push+=("--cmd=$a"); done
  out=$("${push[@]}" "$ref" "$rootfs" "$layer") || die "pushing $ref failed"
  digest=$(sed -n 's/^digest //p' <<<"$out")
  echo "$role $ref $digest"
done
