#include "slurm/hostlist.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "common/text.h"

namespace corral {
namespace {

std::string quote(std::string_view s) { return quoteForMessage(s, 80); }

// Describes one character for an error message: 'x', or \xNN when unprintable.
std::string describeChar(char ch) {
  unsigned char c = static_cast<unsigned char>(ch);
  if (c < 0x20 || c >= 0x7f) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "\\x%02x", c);
    return buf;
  }
  return std::string("'") + ch + "'";
}

bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

bool isBlank(char c) { return c == ' ' || c == '\t'; }

// Slurm separates names with ',', ' ' and '\t' (`hostlist_create`'s "\t, ").
bool isSeparator(char c) { return c == ',' || isBlank(c); }

// The number of decimal digits `v` prints with, without padding.
size_t decimalDigits(uint64_t v) {
  size_t n = 1;
  while (v >= 10) {
    v /= 10;
    ++n;
  }
  return n;
}

// `v` in decimal, zero-padded to `width`, as Slurm's `"%0*lu"`.
std::string formatNumber(uint64_t v, size_t width) {
  std::string digits = std::to_string(v);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return digits;
}

// Parses a non-empty run of ASCII digits; nullopt when it does not fit in 64
// bits. Leading zeros are fine: they only set the width.
std::optional<uint64_t> parseNumber(std::string_view digits) {
  uint64_t v = 0;
  for (char c : digits) {
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

// One `lo-hi` item of a bracket group; `width` is the length of `lo` as
// written, which Slurm uses as the zero-padding width of the whole range.
struct Range {
  uint64_t lo = 0;
  uint64_t hi = 0;
  size_t width = 0;
};

// One bracket group, e.g. `[0-1,5]`, and the literal text that precedes it.
struct Group {
  std::string_view before;
  std::vector<Range> ranges;
  size_t maxLength = 0;  // Longest number the group prints.
};

// One comma-separated name of an expression: literal text and groups. Slurm
// does not allow text after the last group, so a name is fully described by
// its groups when it has any, or by `literal` when it has none.
struct Pattern {
  std::string_view text;  // The whole name as written, for error messages.
  std::string_view literal;
  std::vector<Group> groups;
};

class Parser {
 public:
  Parser(std::string_view expr, size_t maxHosts) : expr_(expr), maxHosts_(maxHosts) {}

  // Splits the expression into patterns and checks its syntax, its size and
  // the length of its names, expanding nothing.
  Status parse() {
    size_t i = 0;
    size_t commas = 0;  // Commas seen since the previous name.
    bool first = true;
    while (i < expr_.size()) {
      char c = expr_[i];
      if (isSeparator(c)) {
        if (c == ',') {
          ++commas;
          if (first || commas > 1) return emptyName(i);
        }
        ++i;
        continue;
      }
      // Two names with only blanks between them are two names, as in Slurm.
      size_t start = i;
      RETURN_IF_ERROR(scanName(&i));
      Pattern pattern;
      RETURN_IF_ERROR(parsePattern(expr_.substr(start, i - start), &pattern));
      patterns_.push_back(std::move(pattern));
      first = false;
      commas = 0;
    }
    if (first) {
      return invalidArgument("invalid hostlist " + quote(expr_) +
                             ": it names no hosts; give at least one host name");
    }
    if (commas > 0) return emptyName(expr_.size());
    return countHosts();
  }

  std::vector<std::string> expand() const {
    std::vector<std::string> hosts;
    hosts.reserve(static_cast<size_t>(total_));
    for (const Pattern& pattern : patterns_) expandPattern(pattern, &hosts);
    return hosts;
  }

 private:
  Status error(const std::string& what) const {
    return invalidArgument("invalid hostlist " + quote(expr_) + ": " + what);
  }

  Status emptyName(size_t at) const {
    if (at == expr_.size()) return error("empty host name after the last ','; remove the comma");
    return error("empty host name at character " + std::to_string(at + 1) +
                 "; remove the extra ','");
  }

  // Advances `*i` past one name: up to the next separator outside brackets.
  // Checks that brackets balance and do not nest.
  Status scanName(size_t* i) const {
    size_t open = std::string_view::npos;  // Position of the unclosed '['.
    for (; *i < expr_.size(); ++*i) {
      char c = expr_[*i];
      if (open == std::string_view::npos) {
        if (isSeparator(c)) break;
        if (c == '[') {
          open = *i;
        } else if (c == ']') {
          return error("']' at character " + std::to_string(*i + 1) + " has no matching '['");
        }
      } else {
        if (c == '[') {
          return error("'[' at character " + std::to_string(*i + 1) +
                       " opens inside another bracket group; brackets do not nest");
        }
        if (c == ']') open = std::string_view::npos;
        if (isBlank(c)) {
          return error("blank inside the bracket group at character " + std::to_string(open + 1) +
                       "; write ranges without spaces, e.g. [0-3,5]");
        }
      }
    }
    if (open != std::string_view::npos) {
      return error("'[' at character " + std::to_string(open + 1) + " is never closed with ']'");
    }
    return Status::ok();
  }

  // Parses one name, whose brackets are known to balance.
  Status parsePattern(std::string_view text, Pattern* pattern) const {
    pattern->text = text;
    size_t literalStart = 0;
    size_t i = 0;
    while (i < text.size()) {
      char c = text[i];
      if (c == '[') {
        size_t close = text.find(']', i);
        Group group;
        group.before = text.substr(literalStart, i - literalStart);
        RETURN_IF_ERROR(parseGroup(text, text.substr(i + 1, close - i - 1), &group));
        pattern->groups.push_back(std::move(group));
        i = close + 1;
        literalStart = i;
        continue;
      }
      if (!isNameChar(c)) {
        return error("invalid character " + describeChar(c) + " in host name " + quote(text) +
                     "; use letters, digits, '.', '_' and '-'");
      }
      ++i;
    }
    std::string_view tail = text.substr(literalStart);
    if (pattern->groups.empty()) {
      pattern->literal = tail;
      if (tail.size() > kMaxHostNameLength) return nameTooLong(text);
    } else if (!tail.empty()) {
      return error("text " + quote(tail) + " after the last ']' in " + quote(text) +
                   " is not allowed; as in Slurm, a host name must end with its last bracket "
                   "group");
    }
    return Status::ok();
  }

  Status nameTooLong(std::string_view text) const {
    return error("host name " + quote(text) + " is longer than " +
                 std::to_string(kMaxHostNameLength) + " characters");
  }

  // Parses the inside of one bracket group, e.g. "0-1,5", into `group`.
  Status parseGroup(std::string_view name, std::string_view body, Group* group) const {
    std::string bracketed = "[" + std::string(body) + "]";
    if (body.empty()) {
      return error("empty bracket group \"[]\" in " + quote(name) +
                   "; put numbers or ranges inside, e.g. [0-3]");
    }
    size_t pos = 0;
    while (true) {
      size_t comma = body.find(',', pos);
      std::string_view item =
          body.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
      Range range;
      RETURN_IF_ERROR(parseRange(name, bracketed, item, &range));
      group->ranges.push_back(range);
      if (comma == std::string_view::npos) break;
      pos = comma + 1;
    }
    return Status::ok();
  }

  Status parseRange(std::string_view name, const std::string& bracketed, std::string_view item,
                    Range* range) const {
    if (item.empty()) {
      return error("empty range in " + quote(bracketed) + " of " + quote(name) +
                   "; remove the extra ','");
    }
    size_t dash = item.find('-');
    std::string_view lo = item.substr(0, dash);
    std::string_view hi = dash == std::string_view::npos ? lo : item.substr(dash + 1);
    auto allDigits = [](std::string_view s) {
      return !s.empty() && std::all_of(s.begin(), s.end(), isDigit);
    };
    if (!allDigits(lo) || !allDigits(hi)) {
      return error("range " + quote(item) + " in " + quote(name) +
                   " is not a number or a range of numbers; write e.g. 5 or 0-3");
    }
    std::optional<uint64_t> loValue = parseNumber(lo);
    std::optional<uint64_t> hiValue = parseNumber(hi);
    if (!loValue || !hiValue) {
      return error("number in range " + quote(item) + " of " + quote(name) + " is too large");
    }
    if (*loValue > *hiValue) {
      return error("range " + quote(item) + " in " + quote(name) + " runs backwards; write it as " +
                   quote(std::string(hi) + "-" + std::string(lo)));
    }
    range->lo = *loValue;
    range->hi = *hiValue;
    range->width = lo.size();
    return Status::ok();
  }

  Status tooMany() const {
    return error("it names more than " + std::to_string(maxHosts_) +
                 " hosts, the most one hostlist may name");
  }

  // Counts hosts with overflow-safe arithmetic, so that a huge range is
  // refused before anything is allocated for it.
  Status countHosts() {
    uint64_t limit = maxHosts_;
    total_ = 0;
    for (Pattern& pattern : patterns_) {
      uint64_t product = 1;
      size_t length = 0;
      for (Group& group : pattern.groups) {
        uint64_t sum = 0;
        for (const Range& r : group.ranges) {
          // `hi - lo + 1` cannot be formed when it is 2^64; compare first.
          if (r.hi - r.lo >= limit) return tooMany();
          sum += r.hi - r.lo + 1;
          if (sum > limit) return tooMany();
          group.maxLength = std::max({group.maxLength, r.width, decimalDigits(r.hi)});
        }
        if (product > limit / sum) return tooMany();
        product *= sum;
        length += group.before.size() + group.maxLength;
      }
      if (!pattern.groups.empty() && length > kMaxHostNameLength) return nameTooLong(pattern.text);
      if (product > limit - total_) return tooMany();
      total_ += product;
    }
    return Status::ok();
  }

  // Expands one pattern in Slurm's order. Slurm (`_push_range_list`) peels
  // the last group off as the innermost loop, then iterates the remaining
  // groups from the right: the second-to-last group is the outermost loop and
  // the first group the innermost of those. For two groups that is plain
  // row-major order.
  void expandPattern(const Pattern& pattern, std::vector<std::string>* hosts) const {
    const std::vector<Group>& groups = pattern.groups;
    if (groups.empty()) {
      hosts->emplace_back(pattern.literal);
      return;
    }
    std::vector<size_t> order;
    for (size_t g = groups.size() - 1; g-- > 0;) order.push_back(g);
    order.push_back(groups.size() - 1);
    std::vector<std::string> chosen(groups.size());
    expandLevel(groups, order, 0, &chosen, hosts);
  }

  void expandLevel(const std::vector<Group>& groups, const std::vector<size_t>& order, size_t level,
                   std::vector<std::string>* chosen, std::vector<std::string>* hosts) const {
    if (level == order.size()) {
      std::string name;
      for (size_t g = 0; g < groups.size(); ++g) {
        name += groups[g].before;
        name += (*chosen)[g];
      }
      hosts->push_back(std::move(name));
      return;
    }
    size_t g = order[level];
    for (const Range& r : groups[g].ranges) {
      for (uint64_t v = r.lo;; ++v) {
        (*chosen)[g] = formatNumber(v, r.width);
        expandLevel(groups, order, level + 1, chosen, hosts);
        if (v == r.hi) break;  // Not `v <= hi`: hi may be 2^64-1.
      }
    }
  }

  std::string_view expr_;
  size_t maxHosts_;
  std::vector<Pattern> patterns_;
  uint64_t total_ = 0;
};

// ---- Compression ----

// A host name split as Slurm's `hostname_create` splits it: the prefix before
// the trailing digits, their value and their count.
struct HostName {
  std::string prefix;
  bool numbered = false;
  uint64_t num = 0;
  size_t digits = 0;
};

HostName splitHostName(const std::string& host) {
  HostName h;
  size_t end = host.size();
  size_t start = end;
  while (start > 0 && isDigit(host[start - 1])) --start;
  std::optional<uint64_t> num;
  if (start < end) num = parseNumber(std::string_view(host).substr(start));
  if (!num) {
    // No trailing digits, or more than 64 bits of them: the name stands alone.
    h.prefix = host;
    return h;
  }
  h.prefix = host.substr(0, start);
  h.numbered = true;
  h.num = *num;
  h.digits = end - start;
  return h;
}

// Compares like Slurm's `strnatcmp`: runs of digits compare by value, so
// "r2n" < "r10n". Ties that only differ in leading zeros fall back to plain
// byte order so that the order stays total.
int naturalCompare(std::string_view a, std::string_view b) {
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (isDigit(a[i]) && isDigit(b[j])) {
      size_t iEnd = i;
      size_t jEnd = j;
      while (iEnd < a.size() && isDigit(a[iEnd])) ++iEnd;
      while (jEnd < b.size() && isDigit(b[jEnd])) ++jEnd;
      std::string_view x = a.substr(i, iEnd - i);
      std::string_view y = b.substr(j, jEnd - j);
      x.remove_prefix(std::min(x.find_first_not_of('0'), x.size()));
      y.remove_prefix(std::min(y.find_first_not_of('0'), y.size()));
      if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
      if (int c = x.compare(y); c != 0) return c;
      i = iEnd;
      j = jEnd;
      continue;
    }
    if (a[i] != b[j])
      return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]) ? -1 : 1;
    ++i;
    ++j;
  }
  if (i < a.size()) return 1;
  if (j < b.size()) return -1;
  int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

// The widths a number can be printed with and still read back as the same
// host, as an interval [lo, hi]. "10" prints the same with width 1 or 2;
// "010" only with width 3. Slurm's `_width_equiv` accepts two hosts into one
// range exactly when these intervals meet.
struct WidthSpan {
  size_t lo = 0;
  size_t hi = 0;
};

WidthSpan widthSpan(const HostName& h) {
  size_t natural = decimalDigits(h.num);
  if (h.digits > natural) return {h.digits, h.digits};
  return {1, natural};
}

struct OutRange {
  uint64_t lo = 0;
  uint64_t hi = 0;
  size_t width = 0;
};

std::string formatRange(const OutRange& r) {
  std::string s = formatNumber(r.lo, r.width);
  if (r.hi != r.lo) s += "-" + formatNumber(r.hi, r.width);
  return s;
}

// Packs the numbered hosts of one prefix, sorted by (num, digits) and
// distinct, into the fewest runs of consecutive numbers whose zero padding
// agrees. Runs are returned in the order of their first host.
std::vector<OutRange> packRanges(const std::vector<const HostName*>& hosts) {
  // Index of the hosts by number; a number appears with at most a few
  // different paddings ("1", "01", "001"), sorted by digit count.
  std::map<uint64_t, std::vector<size_t>> byNum;
  for (size_t k = 0; k < hosts.size(); ++k) byNum[hosts[k]->num].push_back(k);
  std::vector<bool> used(hosts.size(), false);
  std::vector<OutRange> out;
  for (size_t k = 0; k < hosts.size(); ++k) {
    if (used[k]) continue;
    used[k] = true;
    WidthSpan span = widthSpan(*hosts[k]);
    OutRange r{hosts[k]->num, hosts[k]->num, 0};
    while (r.hi != std::numeric_limits<uint64_t>::max()) {
      auto it = byNum.find(r.hi + 1);
      if (it == byNum.end()) break;
      // At most one unused candidate can share a width with the run: the run
      // only admits one padding for numbers at least as long as its start.
      bool extended = false;
      for (size_t cand : it->second) {
        if (used[cand]) continue;
        WidthSpan s = widthSpan(*hosts[cand]);
        size_t lo = std::max(span.lo, s.lo);
        size_t hi = std::min(span.hi, s.hi);
        if (lo > hi) continue;
        span = {lo, hi};
        used[cand] = true;
        r.hi = hosts[cand]->num;
        extended = true;
        break;
      }
      if (!extended) break;
    }
    r.width = span.lo;
    out.push_back(r);
  }
  return out;
}

}  // namespace

StatusOr<std::vector<std::string>> expandHostlist(std::string_view expr, size_t maxHosts) {
  Parser parser(expr, maxHosts);
  RETURN_IF_ERROR(parser.parse());
  return parser.expand();
}

std::string compressHostlist(const std::vector<std::string>& hosts) {
  std::vector<HostName> names;
  names.reserve(hosts.size());
  for (const std::string& host : hosts) names.push_back(splitHostName(host));
  // Slurm's `hostrange_cmp`: prefix first, a name without a number before the
  // numbered names of the same prefix, then by number; equal numbers with
  // different padding keep the shorter first.
  auto less = [](const HostName& a, const HostName& b) {
    if (int c = naturalCompare(a.prefix, b.prefix); c != 0) return c < 0;
    if (a.numbered != b.numbered) return !a.numbered;
    if (a.num != b.num) return a.num < b.num;
    return a.digits < b.digits;
  };
  auto same = [](const HostName& a, const HostName& b) {
    return a.prefix == b.prefix && a.numbered == b.numbered && a.num == b.num &&
           a.digits == b.digits;
  };
  std::sort(names.begin(), names.end(), less);
  names.erase(std::unique(names.begin(), names.end(), same), names.end());

  std::string out;
  size_t k = 0;
  while (k < names.size()) {
    if (!out.empty()) out += ',';
    const HostName& first = names[k];
    if (!first.numbered) {
      out += first.prefix;
      ++k;
      continue;
    }
    std::vector<const HostName*> group;
    while (k < names.size() && names[k].numbered && names[k].prefix == first.prefix) {
      group.push_back(&names[k]);
      ++k;
    }
    std::vector<OutRange> ranges = packRanges(group);
    out += first.prefix;
    bool brackets = ranges.size() > 1 || ranges[0].lo != ranges[0].hi;
    if (brackets) out += '[';
    for (size_t r = 0; r < ranges.size(); ++r) {
      if (r > 0) out += ',';
      out += formatRange(ranges[r]);
    }
    if (brackets) out += ']';
  }
  return out;
}

}  // namespace corral
