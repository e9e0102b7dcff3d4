// Command lines split into words and quoted back, checked by hand against what a POSIX shell
// does with the same text.
#include "shardwise/common/shell_words.h"

#include <gtest/gtest.h>

namespace shardwise {
namespace {

using Words = std::vector<std::string>;

TEST(ShellWords, SplitsPlainAndQuotedWordsAsAShellDoes) {
  EXPECT_EQ(*SplitShellWords("plan --model x"), (Words{"plan", "--model", "x"}));
  EXPECT_EQ(*SplitShellWords("  a\t b  "), (Words{"a", "b"}));
  EXPECT_EQ(*SplitShellWords("train --pipeline-layout 'Et*7|t*9|L'"),
            (Words{"train", "--pipeline-layout", "Et*7|t*9|L"}));
  // Quoted parts join the word they touch, as `echo a'b c'd` prints "ab cd".
  EXPECT_EQ(*SplitShellWords("a'b c'd \"e f\""), (Words{"ab cd", "e f"}));
  EXPECT_EQ(*SplitShellWords("x ''"), (Words{"x", ""}));
  EXPECT_EQ(*SplitShellWords(""), Words{});
}

TEST(ShellWords, RefusesWhatItCannotTakeLiterally) {
  EXPECT_NE(SplitShellWords("a 'b").status().message().find("never closed"), std::string::npos);
  EXPECT_NE(SplitShellWords("a\\ b").status().message().find("backslash"), std::string::npos);
  EXPECT_NE(SplitShellWords("a\nb").status().message().find("0x0a"), std::string::npos);
  // Inside quotes too: an error quoting the line stays on one line.
  EXPECT_NE(SplitShellWords("a 'b\nc'").status().message().find("0x0a at position 5"),
            std::string::npos);
  EXPECT_NE(SplitShellWords("a \"b\\c\"").status().message().find("backslash"), std::string::npos);
}

TEST(ShellWords, QuotesEachWordSoAShellPassesItUnchanged) {
  EXPECT_EQ(ShellQuote("Et*7|t*9"), "'Et*7|t*9'");
  EXPECT_EQ(ShellQuote("$(rm -rf ~)"), "'$(rm -rf ~)'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote(""), "''");
}

}  // namespace
}  // namespace shardwise
