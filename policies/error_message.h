// The text of an exception for a message that names a file: c10::Error's what() appends a C++
// backtrace, its what_without_backtrace() does not; TorchScript's frontend throws other
// std::exceptions. One catch (const std::exception&) then covers both.
#pragma once

#include <c10/util/Exception.h>

#include <exception>
#include <string>

namespace diffloco::policies {

inline std::string messageOf(const std::exception& e) {
  if (const auto* c = dynamic_cast<const c10::Error*>(&e)) return c->what_without_backtrace();
  return e.what();
}

}  // namespace diffloco::policies
