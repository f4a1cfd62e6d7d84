#include "common/ipv4.h"

#include <arpa/inet.h>

namespace corral {

namespace {
uint32_t maskOf(int prefix) { return prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix); }
}  // namespace

bool Cidr::contains(uint32_t addr) const { return (addr & maskOf(prefix)) == base; }

bool Cidr::overlaps(const Cidr& o) const {
  int p = std::min(prefix, o.prefix);
  return (base & maskOf(p)) == (o.base & maskOf(p));
}

std::string Cidr::toString() const { return formatIpv4(base) + "/" + std::to_string(prefix); }

StatusOr<uint32_t> parseIpv4(const std::string& text) {
  in_addr a{};
  if (inet_pton(AF_INET, text.c_str(), &a) != 1)
    return invalidArgument("\"" + text + "\" is not an IPv4 address");
  return ntohl(a.s_addr);
}

std::string formatIpv4(uint32_t addr) {
  in_addr a{htonl(addr)};
  char buf[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &a, buf, sizeof buf);
  return buf;
}

StatusOr<Cidr> parseCidr(const std::string& text) {
  auto slash = text.find('/');
  if (slash == std::string::npos)
    return invalidArgument("\"" + text + "\" is not a CIDR block like 172.29.0.0/16");
  ASSIGN_OR_RETURN(uint32_t addr, parseIpv4(text.substr(0, slash)));
  std::string p = text.substr(slash + 1);
  if (p.empty() || p.size() > 2 || p.find_first_not_of("0123456789") != std::string::npos)
    return invalidArgument("\"" + text + "\" has a bad prefix length");
  int prefix = std::stoi(p);
  if (prefix > 32) return invalidArgument("\"" + text + "\" has a prefix length over 32");
  if ((addr & maskOf(prefix)) != addr)
    return invalidArgument("\"" + text + "\" has host bits set; did you mean " +
                           formatIpv4(addr & maskOf(prefix)) + "/" + p + "?");
  return Cidr{addr, prefix};
}

StatusOr<Cidr> subnetAt(const Cidr& pool, int prefix, uint64_t index) {
  if (prefix < pool.prefix || prefix > 30)
    return invalidArgument("subnet prefix /" + std::to_string(prefix) + " does not fit pool " +
                           pool.toString());
  uint64_t count = uint64_t{1} << (prefix - pool.prefix);
  if (index >= count)
    return invalidArgument("the subnet pool " + pool.toString() + " is exhausted (" +
                           std::to_string(count) + " clusters)");
  return Cidr{static_cast<uint32_t>(pool.base + index * (uint64_t{1} << (32 - prefix))), prefix};
}

std::string hostAddress(const Cidr& subnet, uint32_t offset) {
  return formatIpv4(subnet.base + offset);
}

}  // namespace corral
