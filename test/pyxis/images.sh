#!/usr/bin/env bash
# Builds the fixture images of the Pyxis-behaviour suite (test/pyxis) from
# Debian's archive and local files, and pushes them into a registry. Nothing
# comes from Docker Hub or any other registry: every image is a look-alike,
# made of the few files and settings its cases look at.
#
#   test/pyxis/images.sh IMAGECTL REGISTRY FIXTURES
#
# IMAGECTL  corral-imagectl (push --http REF DIR...)
# REGISTRY  host:port of the registry, from this machine (the cluster
#           registry pod's <subnet>.4:5000)
# FIXTURES  a file this writes: shell assignments the cases read (digests and
#           checksums only known once the images exist)
#
# Expensive root filesystems (mmdebstrap of bookworm, trixie and sid minbase,
# flat apt repositories, an rpm repository) are built once and kept in
# $CORRAL_TEST_IMAGE_CACHE (default /var/cache/corral/test-images), each in a
# directory named after a hash of what builds it; the small top layers are
# written again on every run (they are deterministic, so their digests are
# the same). Needs root (mmdebstrap's root mode), mmdebstrap, dpkg-dev,
# rpm and createrepo-c (scripts/install-deps.sh).
#
# Environment: DEBIAN_MIRROR (default http://deb.debian.org/debian),
# DEBIAN_SECURITY (default http://deb.debian.org/debian-security).
set -euo pipefail

if [[ $# -ne 3 ]]; then
  echo "usage: $0 IMAGECTL REGISTRY FIXTURES" >&2
  exit 2
fi
IMAGECTL=$1
REG=$2
FIXTURES=$3
HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${CORRAL_TEST_IMAGE_CACHE:-/var/cache/corral/test-images}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
WORK=$(mktemp -d /var/tmp/corral-pyxis-images.XXXXXX)
trap 'rm -rf --one-file-system "$WORK"' EXIT
mkdir -p "$CACHE"

say() { echo "images.sh: $*" >&2; }

# Leave out what no case reads; the rootfs stays small and quick to pack.
DPKG_SLIM=(
  --dpkgopt='path-exclude=/usr/share/man/*'
  --dpkgopt='path-exclude=/usr/share/doc/*'
  --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/locale/*'
  --dpkgopt='path-exclude=/usr/share/info/*'
)

# cached NAME BUILDER [HELPER...]: runs `BUILDER DIR` once per version of its
# recipe (the text of the builder and of the helper functions it calls, this
# script's shared settings) and prints DIR.
cached() {
  local name=$1 builder=$2 key dir
  key=$( { declare -f "$builder" "${@:3}"; printf '%s\n' "$MIRROR" "$SECURITY" "${DPKG_SLIM[@]}" "$APT_CASE_PACKAGES"; } |
    sha256sum | cut -c1-16)
  dir=$CACHE/$name-$key
  if [[ ! -e $dir/.done ]]; then
    say "building $name (once; cached in $dir)"
    rm -rf --one-file-system "$dir" "$dir.tmp"
    mkdir -p "$dir.tmp"
    local t0=$SECONDS
    "$builder" "$dir.tmp" >"$WORK/$name.log" 2>&1 || {
      tail -n 30 "$WORK/$name.log" >&2
      rm -rf --one-file-system "$dir.tmp"
      return 1
    }
    touch "$dir.tmp/.done"
    mv "$dir.tmp" "$dir"
    say "built $name in $((SECONDS - t0)) s"
  fi
  echo "$dir"
}

# What the apt cases install as remapped root, with their dependencies that
# minbase lacks: downloaded from the archive into a flat repository that the
# ubuntu look-alikes carry, so `apt-get update && apt-get install` works with
# no network. emacs-nox is a local stand-in (the real one pulls in a compiler).
APT_CASE_PACKAGES="file tzdata install-info make openssh-server libgpm2"

# The minbase of an ubuntu look-alike (root/) and its flat apt repository
# (repo/): the case packages, downloaded inside the chroot from the suite the
# base comes from, and the stand-in emacs-nox.
#   apt_base OUT SUITE [mmdebstrap options...] -- SOURCE...
apt_base() {
  local out=$1 suite=$2 opts=()
  shift 2
  while [[ $1 != -- ]]; do opts+=("$1"); shift; done
  shift
  mkdir -p "$out/repo"
  mmdebstrap --variant=minbase "${DPKG_SLIM[@]}" "${opts[@]}" \
    --include=procps,hostname,mount,util-linux,ncurses-base \
    --customize-hook="chroot \"\$1\" apt-get install --download-only -y --no-install-recommends $APT_CASE_PACKAGES && cp \"\$1\"/var/cache/apt/archives/*.deb $out/repo/" \
    "$suite" "$out/root" "$@"
  # The stand-in emacs-nox: an alternative, a setgid directory, a group
  # owner: what a real package's maintainer scripts do as root.
  local pkg=$out/emacs-nox
  mkdir -p "$pkg/DEBIAN" "$pkg/usr/bin"
  printf '#!/bin/sh\necho "GNU Emacs 28.2 (corral look-alike)"\n' >"$pkg/usr/bin/emacs-nox"
  chmod 755 "$pkg/usr/bin/emacs-nox"
  cat >"$pkg/DEBIAN/control" <<'EOF'
Package: emacs-nox
Version: 1:28.2+corral1
Architecture: all
Maintainer: corral tests <root@localhost>
Depends: install-info, libgpm2
Description: stand-in for GNU Emacs without X (corral's Pyxis-behaviour suite)
EOF
  cat >"$pkg/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
mkdir -p /var/games/emacs
chown root:games /var/games/emacs
chmod 2775 /var/games/emacs
update-alternatives --install /usr/bin/editor editor /usr/bin/emacs-nox 40
EOF
  chmod 755 "$pkg/DEBIAN/postinst"
  dpkg-deb --root-owner-group --build "$pkg" "$out/repo/emacs-nox_28.2_all.deb"
  rm -rf "$pkg"
  (cd "$out/repo" && dpkg-scanpackages --multiversion . /dev/null >Packages && gzip -9nk Packages)
  # Apt's lists and caches as an image has them: empty; no build-time
  # apt options.
  rm -rf "$out/root/var/lib/apt/lists/"* "$out/root/var/cache/apt/"*.bin \
    "$out/root/etc/apt/apt.conf.d/99mmdebstrap"
}

# bookworm: the base of the ubuntu look-alikes up to 24.04.
build_bookworm() {
  apt_base "$1" bookworm -- \
    "deb $MIRROR bookworm main" "deb $MIRROR bookworm-updates main" \
    "deb $SECURITY bookworm-security main"
}

# Debian unstable: the base of the ubuntu:26.04 look-alike, whose packages
# are as new as that release's (install-info's update-info-dir reads
# /etc/environment instead of sourcing it: Debian bug 1114610). Unstable's
# Release is valid for a week only; a mirror a little behind must do.
build_sid() {
  apt_base "$1" sid --aptopt='Acquire::Check-Valid-Until "false"' -- \
    "deb $MIRROR sid main"
}

# trixie minbase with Open MPI and mpi4py: its PMIx client is the version of
# the trixie cluster image's PMIx server.
build_trixie_mpi() {
  local out=$1
  mmdebstrap --variant=minbase "${DPKG_SLIM[@]}" \
    --include=procps,hostname,util-linux,mount,openmpi-bin,python3-mpi4py,python3-numpy \
    trixie "$out/root" \
    "deb $MIRROR trixie main" "deb $MIRROR trixie-updates main" \
    "deb $SECURITY trixie-security main"
  rm -rf "$out/root/var/lib/apt/lists/"* "$out/root/var/cache/apt/"*.bin
}

# bookworm minbase with Debian's dnf and rpm, and an rpm repository of two
# stand-in packages (file, emacs-nox), for the yum cases.
build_dnf() {
  local out=$1
  mmdebstrap --variant=minbase "${DPKG_SLIM[@]}" \
    --include=procps,hostname,util-linux,mount,dnf,rpm \
    bookworm "$out/root" \
    "deb $MIRROR bookworm main" "deb $MIRROR bookworm-updates main" \
    "deb $SECURITY bookworm-security main"
  rm -rf "$out/root/var/lib/apt/lists/"* "$out/root/var/cache/apt/"*.bin
  local top=$out/rpmbuild name
  mkdir -p "$top/SPECS" "$out/rpmrepo"
  for name in file emacs-nox; do
    cat >"$top/SPECS/$name.spec" <<EOF
Name: $name
Version: 1.0
Release: 1
Summary: stand-in $name (corral's Pyxis-behaviour suite)
License: MIT
BuildArch: noarch
AutoReqProv: no
%description
A stand-in $name package.
%install
mkdir -p %{buildroot}/usr/bin %{buildroot}/var/games/$name
printf '#!/bin/sh\\necho "$name (corral look-alike)"\\n' > %{buildroot}/usr/bin/$name
chmod 755 %{buildroot}/usr/bin/$name
%files
%attr(0755,root,root) /usr/bin/$name
%dir %attr(2775,root,games) /var/games/$name
EOF
    rpmbuild --define "_topdir $top" --define '_build_id_links none' -bb "$top/SPECS/$name.spec"
  done
  cp "$top"/RPMS/noarch/*.rpm "$out/rpmrepo/"
  rm -rf "$top"
  createrepo_c "$out/rpmrepo"
}

BOOKWORM=$(cached bookworm build_bookworm apt_base)
SID=$(cached sid build_sid apt_base)
TRIXIE=$(cached trixie-mpi build_trixie_mpi)
DNF=
if command -v rpmbuild >/dev/null && command -v createrepo_c >/dev/null; then
  DNF=$(cached dnf build_dnf) || DNF=
fi
[[ -n $DNF ]] || say "no dnf image (rpm, createrepo-c missing or the build failed): the yum cases will skip"

# --- small layers, written on every run ------------------------------------
L=$WORK/layers
layer() { mkdir -p "$L/$1"; echo "$L/$1"; }
put() { # put FILE MODE < content
  mkdir -p "$(dirname "$1")"
  cat >"$1"
  chmod "$2" "$1"
}

# The flat repository in the image, and apt pointed at it alone.
aptrepo() { # NAME REPO
  local d
  d=$(layer "$1")
  mkdir -p "$d/opt"
  cp -a "$2" "$d/opt/corral-apt"
  put "$d/etc/apt/sources.list" 644 <<<'deb [trusted=yes] file:/opt/corral-apt ./'
  echo "$d"
}
APTREPO=$(aptrepo aptrepo "$BOOKWORM/repo")
APTREPO_SID=$(aptrepo aptrepo-sid "$SID/repo")

# os-release of each Ubuntu release the cases name.
ubuntu_release() { # TAG CODENAME VERSION PRETTY
  local d
  d=$(layer "ubuntu-$1")
  put "$d/etc/os-release" 644 <<EOF
PRETTY_NAME="$4"
NAME="Ubuntu"
VERSION_ID="$1"
VERSION="$3"
VERSION_CODENAME=$2
ID=ubuntu
ID_LIKE=debian
UBUNTU_CODENAME=$2
EOF
  put "$d/etc/lsb-release" 644 <<EOF
DISTRIB_ID=Ubuntu
DISTRIB_RELEASE=$1
DISTRIB_CODENAME=$2
DISTRIB_DESCRIPTION="$4"
EOF
}
ubuntu_release 12.04 precise "12.04.5 LTS, Precise Pangolin" "Ubuntu precise (12.04.5 LTS)"
ubuntu_release 14.04 trusty "14.04.6 LTS, Trusty Tahr" "Ubuntu 14.04.6 LTS"
ubuntu_release 16.04 xenial "16.04.7 LTS (Xenial Xerus)" "Ubuntu 16.04.7 LTS"
ubuntu_release 18.04 bionic "18.04.6 LTS (Bionic Beaver)" "Ubuntu 18.04.6 LTS"
ubuntu_release 20.04 focal "20.04.6 LTS (Focal Fossa)" "Ubuntu 20.04.6 LTS"
ubuntu_release 22.04 jammy "22.04.5 LTS (Jammy Jellyfish)" "Ubuntu 22.04.5 LTS"
ubuntu_release 24.04 noble "24.04.2 LTS (Noble Numbat)" "Ubuntu 24.04.2 LTS"
ubuntu_release 26.04 resolute "26.04 (Resolute Raccoon)" "Ubuntu Resolute Raccoon (development branch)"

redhat_release() { # TAG TEXT
  local d
  d=$(layer "centos-$1")
  put "$d/etc/redhat-release" 644 <<<"$2"
  put "$d/etc/centos-release" 644 <<<"$2"
}
redhat_release 5 "CentOS release 5.11 (Final)"
redhat_release 6 "CentOS release 6.10 (Final)"
redhat_release 7 "CentOS Linux release 7.9.2009 (Core)"
redhat_release 8 "CentOS Linux release 8.4.2105"

# docker:*-dind-rootless: an entrypoint that points DOCKER_HOST at the
# daemon, as docker-library's does when no socket is there.
DIND=$(layer dind)
put "$DIND/usr/local/bin/dockerd-entrypoint.sh" 755 <<'EOF'
#!/bin/sh
set -e
if [ -z "${DOCKER_HOST:-}" ] && [ ! -S /var/run/docker.sock ]; then
  if [ -n "${DOCKER_TLS_VERIFY:-}" ]; then
    export DOCKER_HOST=tcp://docker:2376
  else
    export DOCKER_HOST=tcp://docker:2375
  fi
fi
if [ "$#" -eq 0 ] || [ "${1#-}" != "$1" ]; then
  echo "dockerd is not part of this look-alike" >&2
  exit 1
fi
exec "$@"
EOF

# nvidia/cuda: the variables and, for -runtime, the banner entrypoint.
CUDA=$(layer cuda)
mkdir -p "$CUDA/usr/local/nvidia/lib" "$CUDA/usr/local/nvidia/lib64" "$CUDA/usr/local/cuda/lib64"
put "$CUDA/opt/nvidia/nvidia_entrypoint.sh" 755 <<'EOF'
#!/bin/bash
echo
echo "=========="
echo "== CUDA =="
echo "=========="
echo
echo "CUDA Version ${CUDA_VERSION}"
echo
echo "Container image look-alike (corral's Pyxis-behaviour suite)."
echo
exec "$@"
EOF
cuda_env() { # VERSION
  echo --env "PATH=/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
  echo --env "NVIDIA_REQUIRE_CUDA=cuda>=${1%.*}"
  echo --env "CUDA_VERSION=$1"
  echo --env "LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64"
  echo --env "NVIDIA_VISIBLE_DEVICES=all"
  echo --env "NVIDIA_DRIVER_CAPABILITIES=compute,utility"
}

# nginx: the stock server block, and the entrypoint that makes it listen on
# IPv6 too (docker-nginx's 10-listen-on-ipv6-by-default.sh).
NGINX=$(layer nginx)
put "$NGINX/etc/nginx/conf.d/default.conf" 644 <<'EOF'
server {
    listen       80;
    server_name  localhost;

    location / {
        root   /usr/share/nginx/html;
        index  index.html index.htm;
    }
}
EOF
put "$NGINX/usr/sbin/nginx" 755 <<'EOF'
#!/bin/sh
case "$1" in
  -v|-V) echo "nginx version: nginx/1.19.1" >&2 ;;
  *) echo "nginx look-alike: only -v" >&2; exit 1 ;;
esac
EOF
put "$NGINX/docker-entrypoint.sh" 755 <<'EOF'
#!/bin/sh
set -e
conf=/etc/nginx/conf.d/default.conf
if [ "$1" = nginx ] || [ "$1" = nginx-debug ]; then
  if [ -w "$conf" ] && ! grep -q 'listen  \[::\]:80;' "$conf"; then
    sed -i -E 's,listen       80;,listen       80;\n    listen  [::]:80;,' "$conf"
    echo "$0: enabled listen on IPv6 in $conf" >&2
  fi
fi
exec "$@"
EOF

# PyTorch containers: a working directory and the version variable Enroot's
# PyTorch hook keys on.
PYTORCH=$(layer pytorch)
mkdir -p "$PYTORCH/workspace"
put "$PYTORCH/workspace/README.md" 644 <<<'PyTorch look-alike'

# PATH resolution: binaries only the image has.
REDIS=$(layer redis)
put "$REDIS/usr/local/bin/redis-server" 755 <<'EOF'
#!/bin/sh
echo "Redis server v=5.0.8 sha=00000000:0 malloc=libc bits=64 build=corral"
EOF
RABBIT=$(layer rabbitmq)
put "$RABBIT/opt/rabbitmq/sbin/rabbitmqctl" 755 <<'EOF'
#!/bin/sh
[ "$1" = version ] && echo 3.8.3
EOF

# Device plugin images from other registries: a binary whose checksum the
# cases compare.
devplugin() { # NAME VERSION
  local d
  d=$(layer "devplugin-$1")
  mkdir -p "$d/usr/bin"
  { printf '#!/bin/sh\necho "k8s-device-plugin %s (corral look-alike)"\n' "$2"; head -c 4096 /dev/zero | tr '\0' "$1"; } >"$d/usr/bin/nvidia-device-plugin"
  chmod 755 "$d/usr/bin/nvidia-device-plugin"
  md5sum "$d/usr/bin/nvidia-device-plugin" | cut -d' ' -f1
}
MD5_GITLAB=$(devplugin g 1.0.0-beta4)
MD5_NVCR=$(devplugin n v0.11.0)

# TensorFlow's deep learning container: a python module and /entrypoint.sh.
TF=$(layer tf)
put "$TF/usr/local/lib/python3.13/dist-packages/tensorflow/__init__.py" 644 <<<'__version__ = "2.9.3"'
put "$TF/entrypoint.sh" 755 <<'EOF'
#!/bin/bash
exec "$@"
EOF
mkdir -p "$TF/usr/bin"
ln -sf python3 "$TF/usr/bin/python"

MPI_OS=$(layer mpi-os)
put "$MPI_OS/etc/motd" 644 <<<'Open MPI and mpi4py on Debian trixie (corral look-alike)'

ALMA=$(layer almalinux-9)
if [[ -n $DNF ]]; then
  put "$ALMA/etc/redhat-release" 644 <<<'AlmaLinux release 9.5 (Teal Serval)'
  put "$ALMA/etc/yum.repos.d/corral.repo" 644 <<'EOF'
[corral]
name=corral stand-in packages
baseurl=file:///opt/corral-rpm
enabled=1
gpgcheck=0
EOF
  put "$ALMA/etc/dnf/vars/releasever" 644 <<<'9'
  mkdir -p "$ALMA/usr/bin" "$ALMA/opt"
  ln -sf dnf "$ALMA/usr/bin/yum"
  cp -a "$DNF/rpmrepo" "$ALMA/opt/corral-rpm"
fi

# --- push -------------------------------------------------------------------
PLAIN_PATH="PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
declare -A DIGEST
# image NAME:TAG [corral-imagectl push options...] -- LAYER_DIR...
image() {
  local ref=$1 opts=() out
  shift
  while [[ $1 != -- ]]; do opts+=("$1"); shift; done
  shift
  out=$("$IMAGECTL" push --http "${opts[@]}" "$REG/$ref" "$@" 2>&1) || {
    echo "$out" >&2
    say "push of $ref failed"
    return 1
  }
  DIGEST[$ref]=$(awk '$1 == "digest" { print $2 }' <<<"$out")
}

t0=$SECONDS
B=$BOOKWORM/root
T=$TRIXIE/root
for v in 12.04 14.04 16.04 18.04 20.04 22.04 24.04 26.04; do
  base=("$B" "$APTREPO")
  [[ $v == 26.04 ]] && base=("$SID/root" "$APTREPO_SID")
  # Multi-platform, as on Docker Hub: the linux/amd64 entry is not the first.
  image "ubuntu:$v" --env "$PLAIN_PATH" --cmd /bin/bash --index-platform linux/arm64/v8 \
    --index-platform linux/ppc64le -- "${base[@]}" "$L/ubuntu-$v"
done
# The same, once more, with zstd layers under an OCI manifest (pinned by
# digest in the case, like the rapidsai/devcontainers one).
image rapidsai/devcontainers:24.04-zstd --compression zstd --env "$PLAIN_PATH" \
  -- "$B" "$APTREPO" "$L/ubuntu-24.04"
for v in 5 6 7 8; do
  image "centos:$v" --env "$PLAIN_PATH" --cmd /bin/bash -- "$B" "$L/centos-$v"
done
if [[ -n $DNF ]]; then
  image almalinux:9 --env "$PLAIN_PATH" --cmd /bin/bash -- "$DNF/root" "$ALMA"
fi
image docker:26.1.0-dind-rootless --env "$PLAIN_PATH" --entrypoint dockerd-entrypoint.sh \
  -- "$B" "$L/ubuntu-24.04" "$DIND"
# shellcheck disable=SC2046
image nvidia/cuda:11.8.0-base-ubuntu22.04 $(cuda_env 11.8.0) -- "$B" "$APTREPO" "$L/ubuntu-22.04" "$CUDA"
# shellcheck disable=SC2046
image nvidia/cuda:11.8.0-base-ubuntu20.04 $(cuda_env 11.8.0) -- "$B" "$APTREPO" "$L/ubuntu-20.04" "$CUDA"
# shellcheck disable=SC2046
image nvidia/cuda:12.9.1-base-ubuntu24.04 $(cuda_env 12.9.1) -- "$B" "$APTREPO" "$L/ubuntu-24.04" "$CUDA"
for v in 12.5.1 12.9.1; do
  # shellcheck disable=SC2046
  image "nvidia/cuda:$v-runtime-ubuntu24.04" $(cuda_env "$v") --entrypoint /opt/nvidia/nvidia_entrypoint.sh \
    -- "$B" "$APTREPO" "$L/ubuntu-24.04" "$CUDA"
done
image nginx:1.19.1 --env "$PLAIN_PATH" --env NGINX_VERSION=1.19.1 --entrypoint /docker-entrypoint.sh \
  --cmd nginx --cmd=-g --cmd 'daemon off;' -- "$B" "$NGINX"
image nvidia/pytorch:20.02-py3 --env "$PLAIN_PATH" --env PYTORCH_VERSION=1.5.0a0+3bbb36e \
  --workdir /workspace -- "$B" "$L/ubuntu-18.04" "$PYTORCH"
image nvidia/pytorch:22.04-py3 --env "$PLAIN_PATH" --env PYTORCH_VERSION=1.12.0a0+bd13bc6 \
  --workdir /workspace -- "$B" "$L/ubuntu-20.04" "$PYTORCH"
image pytorch/pytorch:1.8.1-cuda11.1-cudnn8-runtime --env "$PLAIN_PATH" --env PYTORCH_VERSION=1.8.1 \
  --workdir /workspace -- "$B" "$L/ubuntu-18.04" "$PYTORCH"
image redis:5.0.8 --env "$PLAIN_PATH" --cmd redis-server -- "$B" "$REDIS"
image rabbitmq:3.8.3 --env "PATH=/opt/rabbitmq/sbin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  -- "$B" "$RABBIT"
image nvidia/kubernetes/device-plugin/k8s-device-plugin:1.0.0-beta4 --env "$PLAIN_PATH" \
  -- "$B" "$L/devplugin-g"
image nvidia/k8s-device-plugin:v0.11.0 --env "$PLAIN_PATH" -- "$B" "$L/devplugin-n"
image deeplearning-platform-release/tf-cpu.2-9 --env "$PLAIN_PATH" -- "$T" "$TF"
image mpi/openmpi-mpi4py:trixie --env "$PLAIN_PATH" -- "$T" "$MPI_OS"
say "pushed $((${#DIGEST[@]})) images in $((SECONDS - t0)) s"

cat >"$FIXTURES" <<EOF
# Written by test/pyxis/images.sh
FIX_ZSTD_DIGEST=${DIGEST[rapidsai/devcontainers:24.04-zstd]}
FIX_MD5_GITLAB_DEVPLUGIN=$MD5_GITLAB
FIX_MD5_NVCR_DEVPLUGIN=$MD5_NVCR
FIX_HAVE_DNF=$([[ -n $DNF ]] && echo 1 || echo 0)
EOF
