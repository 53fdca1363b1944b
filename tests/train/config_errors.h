// Helpers of the training-config tests: the error a config text gives, and a substring check.
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "train/config.h"

// The message of the exception parseTrainConfig throws for `text` read as cfg.yaml (empty if none).
inline std::string configError(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    diffloco::train::parseTrainConfig(text, "cfg.yaml", sets);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_CONTAINS(hay, needle) EXPECT_NE((hay).find(needle), std::string::npos) << (hay)
