// A command line given as one string ("plan --model x --pipeline-layout 'Et*7|t*9'"), split
// into its words as a shell would split plain and quoted words, and each word quoted back so a
// shell passes it unchanged: compare runs its A and B this way, and nothing in them can become
// a shell operator, a substitution or a redirection. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "shardwise/common/status.h"

namespace shardwise {

// The words of `line`: runs of characters outside quotes split by spaces or tabs, and '...' or
// "..." quoted parts taken as written (no escapes, no expansions). An unbalanced quote, a
// backslash, a newline or a control character is an error naming it.
StatusOr<std::vector<std::string>> SplitShellWords(std::string_view line);

// `word` in single quotes, each single quote in it written as '\''.
std::string ShellQuote(std::string_view word);

}  // namespace shardwise
