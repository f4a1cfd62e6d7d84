#pragma once

// Validation of a cluster spec and its parts, as the REST API applies it to
// every request (the CLI sends requests as given and shows the API's words).
// Every function is pure and thread-safe, and returns the first problem found
// as InvalidArgument, phrased in terms of the CLI flag that sets the field
// (`--gpu-nodes`, ...).

#include <cstddef>
#include <string>

#include "corral/spec.h"
#include "corral/status.h"

namespace corral {

// The longest `--ssh-key` accepted. An 16384-bit RSA key, the largest
// ssh-keygen makes, is about 2.8 KiB; 16 KiB leaves room for long comments
// while keeping a request bounded.
inline constexpr size_t kMaxSshKeyLength = 16 * 1024;

// Checks that `name` is an RFC 1123 DNS label that corral can use in host
// names, network names and paths: 1 to `kMaxClusterNameLength` characters of
// lowercase letters, digits and '-', starting with a letter and not ending
// with '-'.
Status validateClusterName(const std::string& name);

// Checks a single-line OpenSSH public key, "<type> <base64> [comment]", as a
// line of a `.pub` file or of authorized_keys without options. Accepted types:
// ssh-ed25519, ssh-rsa, ecdsa-sha2-nistp256/384/521,
// sk-ssh-ed25519@openssh.com and sk-ecdsa-sha2-nistp256@openssh.com.
// Beyond the syntax, the base64 data must decode into the fields OpenSSH
// expects for the declared type (the embedded type string must match it, and
// the key must not be truncated), so that a key that passes here also loads
// in sshd. Blanks around the key are tolerated; a newline, carriage return,
// NUL or other control character anywhere is not, nor is a key longer than
// `kMaxSshKeyLength` bytes. Messages do not name a flag, so callers add their
// own context.
Status validateSshPublicKey(const std::string& key);

// Login users get uids from here up (10000 of them), apart from Debian's
// system and regular ranges.
inline constexpr int kFirstLoginUid = 20000;

// A path where a volume is mounted in the pods: absolute, no "." or ".."
// parts, and not inside a directory the pods' own system uses (/etc, /usr,
// /tmp, /root, /home, /shared, …).
Status validateMountPath(const std::string& path);

// A login user's name: a portable Linux user name that is not a system
// account.
Status validateLoginUserName(const std::string& name);

// Checks a whole `ClusterSpec`, in this order: the name, `--gpu-nodes`
// (0..kMaxGpuNodes), `--cpu-nodes` (0..kMaxCpuNodes), at least one node in
// total, `--gpus-per-node` (1..kMaxGpusPerNode when there are GPU nodes; with
// no GPU nodes the value is unused and 0 is also accepted), the number of
// `--ssh-key` values (at most kMaxSshKeys) and then each key; then attached
// volumes (paths valid, distinct and not nested) and login users (names,
// uids, keys).
Status validateClusterSpec(const ClusterSpec& spec);

// containers.*: the image cache shared by every node (under /shared/),
// insecure registries as host[:port].
Status validateContainerSettings(const ClusterSpec& spec);

}  // namespace corral
