#include "health/xid.h"

#include <cctype>

namespace corral {
namespace {

bool allDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "6,1234,5678,-" (priority, sequence, microseconds, flags, and possibly more
// fields in later kernels): the part of a /dev/kmsg record before ';'.
bool isKmsgPrefix(std::string_view s) {
  int field = 0;
  while (true) {
    size_t comma = s.find(',');
    std::string_view f = s.substr(0, comma);
    if (field < 3 && !allDigits(f)) return false;
    if (f.find(' ') != std::string_view::npos) return false;
    ++field;
    if (comma == std::string_view::npos) break;
    s.remove_prefix(comma + 1);
  }
  return field >= 4;
}

// "[12345.678901]" or "[    5.123456]", as dmesg prints it.
bool isDmesgTimestamp(std::string_view s) {
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') return false;
  std::string_view in = trim(s.substr(1, s.size() - 2));
  size_t dot = in.find('.');
  if (dot == std::string_view::npos) return allDigits(in);
  return allDigits(in.substr(0, dot)) && allDigits(in.substr(dot + 1));
}

std::string_view stripPrefixes(std::string_view s) {
  if (size_t semi = s.find(';'); semi != std::string_view::npos && isKmsgPrefix(s.substr(0, semi)))
    s.remove_prefix(semi + 1);
  if (!s.empty() && s.front() == '[') {
    size_t close = s.find(']');
    if (close != std::string_view::npos && isDmesgTimestamp(s.substr(0, close + 1)))
      s.remove_prefix(close + 1);
  }
  return trim(s);
}

// Splits off the text up to ", " (or all of it when there is none).
std::string_view takeField(std::string_view& rest) {
  size_t sep = rest.find(", ");
  std::string_view f = rest.substr(0, sep);
  rest = sep == std::string_view::npos ? std::string_view() : rest.substr(sep + 2);
  return trim(f);
}

std::string unquote(std::string_view s) {
  if (s.size() >= 2 && s.front() == '\'' && s.back() == '\'') s = s.substr(1, s.size() - 2);
  return std::string(s);
}

}  // namespace

std::optional<XidEvent> parseXidLine(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  std::string_view s = stripPrefixes(line);

  constexpr std::string_view kHead = "NVRM: Xid (";
  if (!startsWith(s, kHead)) return std::nullopt;
  s.remove_prefix(kHead.size());
  size_t close = s.find("): ");
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view pci = s.substr(0, close);
  if (startsWith(pci, "PCI:")) pci.remove_prefix(4);
  if (pci.empty() || pci.size() > 32) return std::nullopt;
  for (char c : pci)
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') return std::nullopt;
  s.remove_prefix(close + 3);

  size_t digits = 0;
  while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
  // No XID has more than three digits; five leaves room without risking overflow.
  if (digits == 0 || digits > 5) return std::nullopt;
  if (digits < s.size() && s[digits] != ',') return std::nullopt;

  XidEvent e;
  e.pci = std::string(pci);
  e.code = std::stoi(std::string(s.substr(0, digits)));
  e.line = std::string(line);
  std::string_view rest = digits < s.size() ? trim(s.substr(digits + 1)) : std::string_view();
  if (startsWith(rest, "pid=")) {
    e.pid = unquote(takeField(rest).substr(4));
    if (startsWith(rest, "name=")) e.process = unquote(takeField(rest).substr(5));
  }
  e.text = std::string(trim(rest));
  return e;
}

XidClass classifyXid(int code) {
  switch (code) {
    case 13:
    case 31:
    case 43:
    case 45:
    case 68:
    case 69:
      return XidClass::kApplication;
    case 48:
    case 63:
    case 64:
    case 74:
    case 79:
    case 92:
    case 94:
    case 95:
    case 119:
    case 120:
    case 121:
    case 140:
      return XidClass::kHardware;
    default:
      return XidClass::kUnknown;
  }
}

const char* xidClassName(XidClass c) {
  switch (c) {
    case XidClass::kApplication:
      return "application";
    case XidClass::kHardware:
      return "hardware";
    case XidClass::kUnknown:
      break;
  }
  return "unknown";
}

const char* xidDescription(int code) {
  switch (code) {
    case 13:
      return "graphics engine exception";
    case 31:
      return "GPU memory page fault";
    case 32:
      return "invalid or corrupted push buffer stream";
    case 38:
      return "driver firmware error";
    case 43:
      return "GPU stopped processing";
    case 45:
      return "preemptive cleanup, due to previous errors";
    case 48:
      return "double-bit ECC error";
    case 61:
      return "internal micro-controller breakpoint/warning";
    case 62:
      return "internal micro-controller halt";
    case 63:
      return "ECC page retirement or row remapping event";
    case 64:
      return "ECC page retirement or row remapper failure";
    case 68:
      return "video processor exception";
    case 69:
      return "graphics engine class error";
    case 74:
      return "NVLink error";
    case 79:
      return "GPU has fallen off the bus";
    case 92:
      return "high single-bit ECC error rate";
    case 94:
      return "contained ECC error";
    case 95:
      return "uncontained ECC error";
    case 119:
      return "GSP RPC timeout";
    case 120:
      return "GSP error";
    case 121:
      return "C2C link error";
    case 140:
      return "unrecovered ECC error";
    default:
      return "unknown XID";
  }
}

std::string xidDrainReason(const XidEvent& e) {
  // The PCI address came from a log line: keep what an address can hold, so
  // that the reason stays one short printable line whatever was logged.
  std::string pci;
  for (char c : e.pci) {
    if (pci.size() >= 32) break;
    if (std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '.') pci += c;
  }
  if (pci.empty()) pci = "unknown GPU";
  std::string r = std::string(kCorralReasonPrefix) + " GPU XID " + std::to_string(e.code) + " on " +
                  pci + " (" + xidDescription(e.code) + ")";
  if (r.size() >= kMaxDrainReasonLength) r.resize(kMaxDrainReasonLength - 1);
  return r;
}

}  // namespace corral
