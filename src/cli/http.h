#pragma once

// The one place the CLI includes cpp-httplib.
//
// Debian's cpp-httplib is not header-only: the functions live in
// libcpp-httplib.so, which was built with OpenSSL, zlib and Brotli support.
// Those macros change the layout of `httplib::ClientImpl`, so every
// translation unit that includes the header must define them exactly as the
// library was built (pkg-config's `cpp-httplib` Cflags say the same), or the
// inline parts of the header and the library disagree about the object.
// The binary must be linked with -lcpp-httplib.

#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_OPENSSL_SUPPORT
#endif
#ifndef CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#endif
#ifndef CPPHTTPLIB_BROTLI_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#endif

#include <httplib.h>
