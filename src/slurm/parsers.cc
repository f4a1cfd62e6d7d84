#include "slurm/parsers.h"

#include <sstream>

namespace corral {

std::map<std::string, SinfoNode> parseSinfoNodes(const std::string& text) {
  std::map<std::string, SinfoNode> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto a = line.find('|');
    if (a == std::string::npos || a == 0) continue;
    auto b = line.find('|', a + 1);
    if (b == std::string::npos) continue;
    SinfoNode n{line.substr(a + 1, b - a - 1), line.substr(b + 1)};
    if (n.reason == "none") n.reason.clear();
    out[line.substr(0, a)] = n;
  }
  return out;
}

}  // namespace corral
