// How messages quote input (io/excerpt.h): short text whole, long text cut to 80 bytes and "...",
// never inside a UTF-8 character.
#include <gtest/gtest.h>

#include <string>

#include "io/excerpt.h"

using diffloco::io::excerpt;
using diffloco::io::kMaxExcerpt;

TEST(Excerpt, ShortTextIsQuotedWhole) {
  EXPECT_EQ(excerpt(""), "");
  EXPECT_EQ(excerpt("0 0 x"), "0 0 x");
  const std::string exact(kMaxExcerpt, 'a');
  EXPECT_EQ(excerpt(exact), exact);
}

TEST(Excerpt, LongTextIsCut) {
  const std::string brackets(100000, '[');
  EXPECT_EQ(excerpt(brackets), std::string(kMaxExcerpt, '[') + "...");
  EXPECT_EQ(excerpt("abcdef", 3), "abc...");
}

TEST(Excerpt, UnicodeCharactersStayWhole) {
  // "é" is two bytes (C3 A9): a cut after byte 3 of "aéé" would split the second one.
  EXPECT_EQ(excerpt("a\xC3\xA9\xC3\xA9", 4), "a\xC3\xA9...");
  EXPECT_EQ(excerpt("a\xC3\xA9\xC3\xA9", 3), "a\xC3\xA9...");
  EXPECT_EQ(excerpt("\xE2\x82\xAC\xE2\x82\xAC", 2), "...");  // a euro sign does not fit in 2
}
