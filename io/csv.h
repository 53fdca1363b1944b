// The one CSV field splitter of the readers (actuator logs, sysid trajectories, metrics.csv):
// comma-separated fields, each trimmed of spaces, tabs and a trailing CR (files from Windows
// tools); a trailing comma is an empty last field. No quoting: every reader's fields are
// numbers or plain names, and a quote is reported by the reader as a bad value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace diffloco::io {

std::string trimmed(std::string_view s);
std::vector<std::string> splitCsvFields(std::string_view line);

}  // namespace diffloco::io
