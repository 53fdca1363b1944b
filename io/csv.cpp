#include "io/csv.h"

namespace diffloco::io {

std::string trimmed(std::string_view s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return "";
  return std::string(s.substr(a, s.find_last_not_of(" \t\r") - a + 1));
}

std::vector<std::string> splitCsvFields(std::string_view line) {
  std::vector<std::string> out;
  if (trimmed(line).empty()) return out;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i) {
    if (i < line.size() && line[i] != ',') continue;
    out.push_back(trimmed(line.substr(start, i - start)));
    start = i + 1;
  }
  return out;
}

}  // namespace diffloco::io
