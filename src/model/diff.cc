#include "model/diff.h"

#include <algorithm>
#include <sstream>
#include <vector>

namespace corral {
namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

struct Edit {
  char op;  // ' ', '-', '+'
  size_t a, b;  // Line numbers (0-based) in before / after.
};

// A longest-common-subsequence edit script. Rendered files are a few hundred
// lines, so the quadratic table is small.
std::vector<Edit> editScript(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  size_t n = a.size(), m = b.size();
  std::vector<std::vector<uint32_t>> lcs(n + 1, std::vector<uint32_t>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::vector<Edit> out;
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      out.push_back({' ', i++, j++});
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out.push_back({'-', i++, j});  // Removals before additions, as diff -u.
    } else {
      out.push_back({'+', i, j++});
    }
  }
  return out;
}

}  // namespace

std::string unifiedDiff(const std::string& before, const std::string& after,
                        const std::string& beforeName, const std::string& afterName,
                        int context) {
  if (before == after) return "";
  auto a = lines(before), b = lines(after);
  auto edits = editScript(a, b);
  std::ostringstream o;
  o << "--- " << beforeName << "\n+++ " << afterName << "\n";
  size_t k = 0;
  const size_t ctx = static_cast<size_t>(std::max(context, 0));
  while (k < edits.size()) {
    // Find the next change and the hunk around it.
    while (k < edits.size() && edits[k].op == ' ') ++k;
    if (k == edits.size()) break;
    size_t start = k >= ctx ? k - ctx : 0;
    size_t end = k;
    size_t quiet = 0;
    while (end < edits.size()) {
      if (edits[end].op == ' ') {
        if (++quiet > 2 * ctx) break;
      } else {
        quiet = 0;
      }
      ++end;
    }
    // Trim trailing context to `ctx` lines.
    size_t trailing = 0;
    while (end > k && edits[end - 1].op == ' ' && trailing < quiet) --end, ++trailing;
    end = std::min(edits.size(), end + std::min(trailing, ctx));
    size_t aLen = 0, bLen = 0;
    for (size_t e = start; e < end; ++e) {
      if (edits[e].op != '+') ++aLen;
      if (edits[e].op != '-') ++bLen;
    }
    size_t aStart = edits[start].a + (aLen ? 1 : 0), bStart = edits[start].b + (bLen ? 1 : 0);
    o << "@@ -" << aStart << "," << aLen << " +" << bStart << "," << bLen << " @@\n";
    for (size_t e = start; e < end; ++e) {
      const std::string& text = edits[e].op == '+' ? b[edits[e].b] : a[edits[e].a];
      o << edits[e].op << text << "\n";
    }
    k = end;
  }
  return o.str();
}

std::string unifiedDiff(const RenderedFiles& before, const RenderedFiles& after) {
  std::string out;
  for (const auto& [path, file] : after) {
    auto old = before.find(path);
    out += unifiedDiff(old == before.end() ? "" : old->second.content, file.content, "a/" + path,
                       "b/" + path);
  }
  return out;
}

}  // namespace corral
