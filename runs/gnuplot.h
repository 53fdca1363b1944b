// gnuplot, the one program the figures need (learning curves, the toys' and gradient-norm
// figures): found or a clear error, and a script run in its own folder.
#pragma once

#include <string>

namespace diffloco::runs {

// Throws, naming the Debian package, when gnuplot is not on PATH; `purpose` ends the message
// ("to draw billiard.png; the CSV was written").
void requireGnuplot(const std::string& purpose);
// Runs `gnuplot <script>` inside `dir` (the script names its files relative to it); throws naming
// the command and its exit status when it fails.
void runGnuplot(const std::string& dir, const std::string& script);

}  // namespace diffloco::runs
