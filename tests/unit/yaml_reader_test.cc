// common/yaml_reader: the one reader of every configuration file (issue 20 item 3).

#include "common/yaml_reader.h"

#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace railwatch {
namespace yaml_reader_test {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

std::vector<std::string> Texts(const YamlProblems& problems) {
  std::vector<std::string> out;
  for (const LoadProblem& p : problems.problems()) out.push_back(p.ToString());
  return out;
}

TEST(YamlReader, TypedGettersReadTheirTypes) {
  YamlProblems problems("f.yaml");
  const YAML::Node root = ParseYaml(
      "name: leaf\nwait: 5s\nquiet: 0\non: yes\ncount: 12\nratio: 0.25\n"
      "tags: [a, b]\none: c\nlabels: {host: h1, rail: 3}\nitems: [x]\nnone:\n",
      problems);
  YamlMap map(root, "a test", problems);
  ASSERT_TRUE(map.ok());
  std::string name;
  EXPECT_TRUE(map.RequiredString("name", name));
  EXPECT_EQ(name, "leaf");
  absl::Duration wait, quiet = absl::Seconds(9);
  EXPECT_TRUE(map.Duration("wait", wait));
  EXPECT_EQ(wait, absl::Seconds(5));
  EXPECT_TRUE(map.Duration("quiet", quiet, /*positive=*/false));
  EXPECT_EQ(quiet, absl::ZeroDuration());
  bool on = false;
  EXPECT_TRUE(map.Bool("on", on));
  EXPECT_TRUE(on);
  int64_t count = 0;
  EXPECT_TRUE(map.Int("count", count, 1));
  EXPECT_EQ(count, 12);
  double ratio = 0;
  EXPECT_TRUE(map.Double("ratio", ratio));
  EXPECT_DOUBLE_EQ(ratio, 0.25);
  std::vector<std::string> tags, one;
  EXPECT_TRUE(map.StringList("tags", tags));
  EXPECT_THAT(tags, ElementsAre("a", "b"));
  EXPECT_TRUE(map.StringList("one", one, /*one_is_a_list=*/true));
  EXPECT_THAT(one, ElementsAre("c"));
  std::vector<std::pair<std::string, std::string>> labels;
  EXPECT_TRUE(map.StringMap("labels", labels));
  EXPECT_THAT(labels, ElementsAre(Pair("host", "h1"), Pair("rail", "3")));
  EXPECT_TRUE(map.List("items").IsSequence());
  EXPECT_FALSE(map.List("none").IsDefined());  // `none:` with nothing is an empty list
  EXPECT_FALSE(map.List("absent").IsDefined());
  std::string absent = "kept";
  EXPECT_FALSE(map.String("absent", absent));
  EXPECT_EQ(absent, "kept");
  map.Finish();
  EXPECT_THAT(Texts(problems), IsEmpty());
}

TEST(YamlReader, EachBadValueIsReportedAtItsValueWithItsCode) {
  YamlProblems problems("f.yaml");
  const YAML::Node root = ParseYaml(
      "wait: 0s\n"          // 1: not positive
      "count: -1\n"         // 2: below min
      "ratio: half\n"       // 3
      "on: maybe\n"         // 4
      "tags: [a, [b]]\n"    // 5: an entry that is a list
      "labels: [h1]\n"      // 6: not a mapping
      "items: x\n"          // 7: not a list
      "name: {a: 1}\n"      // 8: not a single value
      "quiet: soon\n",      // 9
      problems);
  YamlMap map(root, "a test", problems);
  absl::Duration wait = absl::Seconds(1), quiet;
  int64_t count = 7;
  double ratio = 0;
  bool on = false;
  std::vector<std::string> tags;
  std::vector<std::pair<std::string, std::string>> labels;
  std::string name;
  EXPECT_FALSE(map.Duration("wait", wait));
  EXPECT_EQ(wait, absl::Seconds(1));
  EXPECT_FALSE(map.Int("count", count, 0));
  EXPECT_EQ(count, 7);
  EXPECT_FALSE(map.Double("ratio", ratio));
  EXPECT_FALSE(map.Bool("on", on));
  EXPECT_TRUE(map.StringList("tags", tags));
  EXPECT_THAT(tags, ElementsAre("a"));
  EXPECT_FALSE(map.StringMap("labels", labels));
  EXPECT_FALSE(map.List("items").IsDefined());
  EXPECT_FALSE(map.RequiredString("name", name));
  EXPECT_FALSE(map.Duration("quiet", quiet, /*positive=*/false));
  map.Finish();
  EXPECT_THAT(
      Texts(problems),
      ElementsAre("f.yaml:1:7: error[bad-value]: wait `0s` is not a positive duration (1s, 500ms)",
                  "f.yaml:2:8: error[bad-value]: count `-1` is not a whole number >= 0",
                  "f.yaml:3:8: error[bad-value]: ratio `half` is not a number",
                  "f.yaml:4:5: error[bad-value]: on `maybe` is not true or false",
                  "f.yaml:5:11: error[bad-type]: each entry of `tags` must be a single value",
                  "f.yaml:6:9: error[bad-type]: `labels` must be a mapping of names to values",
                  "f.yaml:7:8: error[bad-type]: `items` must be a list",
                  "f.yaml:8:7: error[bad-type]: `name` must be a single value",
                  "f.yaml:9:8: error[bad-value]: quiet `soon` is not a duration (0, 1s, 500ms)"));
}

TEST(YamlReader, MissingAndUnknownKeys) {
  YamlProblems problems("f.yaml");
  const YAML::Node root = ParseYaml("x: 1\nnmae: a\ncolour: red\nempty: \"\"\n", problems);
  YamlMap map(root, "a switch", problems);
  std::string name, empty;
  EXPECT_FALSE(map.RequiredString("name", name));
  EXPECT_FALSE(map.RequiredString("empty", empty));
  EXPECT_TRUE(map.Get("x").IsDefined());  // known from now on
  map.Finish();
  EXPECT_THAT(Texts(problems),
              ElementsAre("f.yaml:1:1: error[missing-key]: `name` is required in a switch",
                          "f.yaml:1:1: error[missing-key]: `empty` is required in a switch",
                          "f.yaml:2:1: error[unknown-key]: unknown key `nmae` in a switch (did "
                          "you mean `name`?)",
                          "f.yaml:3:1: error[unknown-key]: unknown key `colour` in a switch "
                          "(known: empty, name, x)"));
  EXPECT_EQ(problems.error_count(), 4u);
  EXPECT_THAT(std::string(problems.ToStatus().message()), HasSubstr("\nf.yaml:2:1:"));
}

TEST(YamlReader, UnknownKeysMayBeWarnings) {
  YamlProblems problems("f.yaml");
  YamlMap map(ParseYaml("desc: a\ndecs: b\n", problems), "a playbook", problems);
  std::string desc;
  map.String("desc", desc);
  map.Finish(YamlMap::Unknown::kWarning);
  EXPECT_THAT(Texts(problems),
              ElementsAre("f.yaml:2:1: warning[unknown-key]: unknown key `decs` in a playbook "
                          "(did you mean `desc`?); ignored"));
  EXPECT_FALSE(problems.has_errors());
  EXPECT_TRUE(problems.ToStatus().ok());
}

TEST(YamlReader, NotAMappingIsOneBadType) {
  YamlProblems problems("f.yaml");
  YamlMap map(ParseYaml("- a\n- b\n", problems), "a profile", problems, "with `name`");
  EXPECT_FALSE(map.ok());
  std::string name;
  EXPECT_FALSE(map.RequiredString("name", name));  // nothing more to say
  map.Finish();
  EXPECT_THAT(Texts(problems),
              ElementsAre("f.yaml:1:1: error[bad-type]: a profile must be a mapping with `name`"));
}

TEST(YamlReader, SyntaxErrorsOneDocumentOrSeveral) {
  YamlProblems one("a.yaml");
  EXPECT_FALSE(ParseYaml("a: [1,\n", one).IsDefined());
  ASSERT_EQ(one.problems().size(), 1u);
  EXPECT_EQ(one.problems()[0].code, "yaml-syntax");
  EXPECT_GT(one.problems()[0].line, 0);

  YamlProblems many("b.yaml");
  std::vector<YAML::Node> docs = ParseYamlDocuments("- a\n---\n- b\n", many);
  EXPECT_EQ(docs.size(), 2u);
  EXPECT_THAT(Texts(many), IsEmpty());
  // yaml-cpp's LoadAll never ends on this text; the reader reports it.
  EXPECT_THAT(ParseYamlDocuments("- x\n, y\n", many), IsEmpty());
  EXPECT_THAT(Texts(many), ElementsAre(AllOf(HasSubstr("b.yaml:2:"), HasSubstr("error[yaml-syntax]"))));
}

TEST(YamlReader, MarkInScalarPointsAtTheCharacterOnOneLine) {
  YamlProblems problems("f.yaml");
  const YAML::Node root =
      ParseYaml("plain: abcdef\nquoted: \"abcdef\"\nblock: |\n  abc\n  def\n", problems);
  const YAML::Mark plain = MarkInScalar(root["plain"], 3);
  EXPECT_EQ(plain.line, 0);
  EXPECT_EQ(plain.column, 7 + 3);
  const YAML::Mark quoted = MarkInScalar(root["quoted"], 3);
  EXPECT_EQ(quoted.column, 8 + 1 + 3);
  // Several lines: the scalar's start, never a column past its line.
  EXPECT_EQ(MarkInScalar(root["block"], 5).column, root["block"].Mark().column);
}

TEST(YamlReader, FileErrorsAndAppendedProblems) {
  YamlProblems outer("outer.yaml");
  outer.FileError("unreadable", "no such file");
  YamlProblems inner("inner.yaml");
  inner.Warning(ParseYaml("a: 1\n", inner)["a"], "odd", "look");
  outer.Append(inner);
  EXPECT_THAT(Texts(outer), ElementsAre("outer.yaml: error[unreadable]: no such file",
                                        "inner.yaml:1:4: warning[odd]: look"));
  EXPECT_EQ(outer.error_count(), 1u);
}

}  // namespace yaml_reader_test
}  // namespace railwatch
