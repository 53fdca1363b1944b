#include "runs/gnuplot.h"

#include <cstdlib>
#include <stdexcept>

namespace diffloco::runs {
namespace {

std::string shellQuoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

void requireGnuplot(const std::string& purpose) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0)
    throw std::runtime_error(
        "gnuplot not found: install it (Debian: apt-get install gnuplot-nox, as .ci/install-deps "
        "does) " +
        purpose);
}

void runGnuplot(const std::string& dir, const std::string& script) {
  const std::string cmd = "cd " + shellQuoted(dir) + " && gnuplot " + shellQuoted(script);
  const int rc = std::system(cmd.c_str());
  if (rc != 0)
    throw std::runtime_error("`" + cmd + "` failed (exit status " + std::to_string(rc) + ")");
}

}  // namespace diffloco::runs
