#pragma once

#include <string>
#include <vector>

#include "yaml-cpp/yaml.h"

namespace railwatch {

// YAML::LoadAll, without its endless loop: yaml-cpp 0.7 never consumes a ',' that stands
// outside any collection at the top of a document (", a", "[a], b", "- x\n, y"), and LoadAll
// then returns empty documents forever, allocating until memory runs out (found by
// tests/fuzz/playbook_fuzz). This reads the text once through the parser with a handler that
// builds nothing and stops at a document that starts where the one before it did; such text
// throws a YAML::ParserException at that ',' (line and column), as other syntax errors do.
std::vector<YAML::Node> LoadYamlDocuments(const std::string& text);

}  // namespace railwatch
