#pragma once

// Standard base64 (RFC 4648 section 4, padded), as ssh-keygen writes a key's
// data and kubeconfig files their *-data fields.

#include <string>
#include <string_view>

#include "corral/status.h"

namespace corral {

// Decodes `text`; whitespace in it (line breaks of a wrapped value) is
// ignored. InvalidArgument saying what is wrong (the length, or which
// character at which position) for anything that is not base64.
StatusOr<std::string> decodeBase64(std::string_view text);

}  // namespace corral
