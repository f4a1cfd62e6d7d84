#pragma once

// The SSH public keys `corral` sends: for root on the login node (`cluster
// create`, `cluster set-keys`) and for login users (`user add`), read from the
// user's files, or corral's own key pair, created on first use.

#include <iosfwd>
#include <string>
#include <vector>

#include "corral/status.h"

namespace corral {

// The keys in an OpenSSH public key file's `text` (one per line, as in
// authorized_keys): blank lines and `#` comments are skipped and surrounding
// whitespace trimmed. `fileName` is only for messages. Fails when the text
// holds no key, or holds a private key: uploading that by mistake would leak
// it, so the CLI refuses before anything is sent.
StatusOr<std::vector<std::string>> parsePublicKeys(const std::string& text,
                                                   const std::string& fileName);

// Reads `path` and parses it as above; an unreadable file is an
// InvalidArgument naming it.
StatusOr<std::vector<std::string>> readPublicKeyFile(const std::string& path);

// "~/x" → "<home>/x". The shell leaves "--ssh-key=~/x" alone, so the CLI
// expands it; other paths are returned unchanged.
std::string expandHome(const std::string& path, const std::string& home);

// "<home>/.ssh/corral_ed25519": corral's private key; ".pub" is appended for
// the public one.
std::string corralKeyPath(const std::string& home);

// The public keys of corral's own key pair, creating it first with
// `ssh-keygen -q -t ed25519 -N '' -C corral -f <home>/.ssh/corral_ed25519`
// (and `<home>/.ssh` with mode 0700) when neither half exists. Tells the user
// on `err` when it creates a key.
StatusOr<std::vector<std::string>> corralPublicKeys(const std::string& home, std::ostream& err);

// The keys to send: every key of every `files` entry ("~/" expanded against
// `home`) in order, duplicates dropped; corral's own key when `files` is
// empty. Fails, naming the file, before anything is sent.
StatusOr<std::vector<std::string>> collectSshKeys(const std::vector<std::string>& files,
                                                  const std::string& home, std::ostream& err);

}  // namespace corral
