#include "engine/yaml_documents.h"

#include <sstream>

#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/parser.h"

namespace railwatch {
namespace {

// Builds nothing; remembers where the current document started.
class DocumentStarts final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { start = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  YAML::Mark start = YAML::Mark::null_mark();
};

bool SamePlace(const YAML::Mark& a, const YAML::Mark& b) {
  return a.pos == b.pos && a.line == b.line && a.column == b.column;
}

}  // namespace

std::vector<YAML::Node> LoadYamlDocuments(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts handler;
  // Every real document consumes at least one character.
  for (size_t documents = 0; documents <= text.size() + 1; ++documents) {
    const YAML::Mark previous = handler.start;
    if (!parser.HandleNextDocument(handler)) return YAML::LoadAll(text);
    if (documents > 0 && SamePlace(previous, handler.start)) break;
  }
  throw YAML::ParserException(handler.start, "unexpected ',' outside a flow collection");
}

}  // namespace railwatch
