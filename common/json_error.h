#pragma once

// Where and why nlohmann::json refused a text, for "file:line:column: not JSON: syntax error
// ..." problems. Header-only and templated on the exception type, so that `common` needs no
// JSON library; every reader that parses JSON with nlohmann uses it.

#include <cstddef>
#include <string>
#include <utility>

namespace railwatch {

struct JsonErrorAt {
  size_t offset = 0;    // 0-based byte of the parsed text where parsing failed
  std::string message;  // "not JSON: syntax error while parsing object - ..."
};

// `e` is a nlohmann::json::parse_error; its `byte` is 1-based and counts the offending byte.
template <typename ParseError>
JsonErrorAt DescribeJsonError(const ParseError& e) {
  JsonErrorAt at;
  at.offset = e.byte > 0 ? e.byte - 1 : 0;
  std::string what = e.what();
  if (const size_t syntax = what.find("syntax error"); syntax != std::string::npos) {
    what = what.substr(syntax);
  }
  at.message = "not JSON: " + std::move(what);
  return at;
}

}  // namespace railwatch
