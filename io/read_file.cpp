#include "io/read_file.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace diffloco::io {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace diffloco::io
