#pragma once

// The condition language's tokens (grammar in engine/condition.h). Internal to
// engine/condition*.cc.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "engine/condition.h"

namespace railwatch::cond {

enum class Tok { kIdent, kNumber, kDuration, kString, kPunct, kEnd };

struct Token {
  Tok kind;
  std::string text;  // strings: the unescaped value
  size_t offset;
};

// Appends the tokens of `s` and a kEnd token to `out`. Returns false with `err` set on a bad
// character, an unterminated string or a malformed number.
bool Tokenize(std::string_view s, std::vector<Token>& out, ConditionError& err);

}  // namespace railwatch::cond
