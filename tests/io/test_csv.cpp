// The CSV field splitter (io/csv.h).
#include "io/csv.h"

#include <gtest/gtest.h>

using diffloco::io::splitCsvFields;
using diffloco::io::trimmed;
using V = std::vector<std::string>;

TEST(Csv, SplitsAndTrimsFields) {
  EXPECT_EQ(splitCsvFields("time,q, qd ,tau"), (V{"time", "q", "qd", "tau"}));
  EXPECT_EQ(splitCsvFields("1.5,2\r"), (V{"1.5", "2"}));  // a Windows line ending
  EXPECT_EQ(splitCsvFields("1,,3"), (V{"1", "", "3"}));
  EXPECT_EQ(splitCsvFields("1,2,"), (V{"1", "2", ""}));  // a trailing comma: an empty field
  EXPECT_EQ(splitCsvFields(","), (V{"", ""}));
  EXPECT_EQ(splitCsvFields("x"), (V{"x"}));
  EXPECT_TRUE(splitCsvFields("").empty());
  EXPECT_TRUE(splitCsvFields(" \t\r").empty());
  EXPECT_EQ(trimmed("  a b \t"), "a b");
  EXPECT_EQ(trimmed(""), "");
}
