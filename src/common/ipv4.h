#pragma once

// IPv4 arithmetic for carving cluster subnets out of corrald's pool.

#include <cstdint>
#include <string>

#include "corral/status.h"

namespace corral {

struct Cidr {
  uint32_t base = 0;  // Host byte order, already masked.
  int prefix = 0;
  bool contains(uint32_t addr) const;
  bool overlaps(const Cidr& other) const;
  uint64_t size() const { return uint64_t{1} << (32 - prefix); }
  std::string toString() const;
};

StatusOr<uint32_t> parseIpv4(const std::string& text);
std::string formatIpv4(uint32_t addr);
StatusOr<Cidr> parseCidr(const std::string& text);

// The `index`-th subnet of length `prefix` inside `pool`; InvalidArgument when
// it does not fit.
StatusOr<Cidr> subnetAt(const Cidr& pool, int prefix, uint64_t index);

// `subnet.base + offset` as text, e.g. hostAddress(172.29.1.0/24, 10) = 172.29.1.10.
std::string hostAddress(const Cidr& subnet, uint32_t offset);

}  // namespace corral
