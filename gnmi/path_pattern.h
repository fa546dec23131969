#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/labels.h"
#include "gnmi/decode.h"
#include "gnmi/gnmi.pb.h"

namespace railwatch {

// A gNMI path with holes, as the `path:` of a profile mapping writes it:
//
//   pattern  = ["/"] elem { "/" elem }
//   elem     = "**"                      any number of elements, none included
//            | "*"                       exactly one element, whatever its name and keys
//            | text { "[" key "]" }      the name, then every list key the element has
//   key      = ( keyname | "*" ) "=" text      "*" as the key name: the element's only key,
//                                              whatever it is called
//   text     = "*"                       any value (key values only)
//            | { literal | capture }
//   capture  = "{" label [ ":num" [ ("+"|"-") digits ] ] "}"
//                                         one or more characters (":num": ASCII digits only);
//                                         becomes the label `label`; "{_}" is matched and
//                                         dropped. ":num+1" adds 1 to the number captured
//                                         (OpenConfig numbers a transceiver's channels from 0,
//                                         railwatch's lanes count from 1)
//
// `\` escapes the next character inside a key value (`\]`, `\\`) and anywhere before `{`.
// A `*` inside longer text is a literal ("Ethernet*" is SONiC's wildcard, sent back as is).
// Captures try the shortest text first, so "{interface}:{queue:num}" splits "Ethernet68:3"
// at the first colon that leaves digits behind, and rejects "Ethernet68:0:periodic".
// An element matches only when it has exactly the keys the pattern names: a key the pattern
// does not name would fold distinct leaves into one series. A key value the pattern does not
// match whole is tried again without a YANG module prefix: an identityref key
// ("openconfig-alarm-types:CRITICAL") matches the literal "CRITICAL".
class GnmiPathPattern {
 public:
  struct Error {
    size_t offset = 0;  // into the pattern text
    std::string message;
  };

  // Parses `text`; on failure `error` (when given) says where.
  static absl::StatusOr<GnmiPathPattern> Parse(std::string_view text, Error* error = nullptr);

  // True when `elems` match; the captures (except "_") are appended to `labels`, in pattern
  // order (the keys of one element in key-name order). On false `labels` is left as it was.
  bool Match(const std::vector<GnmiPathElem>& elems, Labels& labels) const;

  // Names of the captures, in pattern order, "_" excluded.
  const std::vector<std::string>& capture_names() const { return capture_names_; }
  bool has_captures() const;
  bool has_multi_wildcard() const;

  // The path to subscribe to: names and key values as written ("*" stays "*"). Only for
  // patterns without captures and without "**"; see has_captures().
  ::gnmi::Path ToGnmiPath() const;

  const std::string& text() const { return text_; }

 private:
  struct Piece {
    bool capture = false;
    bool numeric = false;  // {x:num}
    std::string text;      // the literal, or the capture's label
    int64_t offset = 0;    // {x:num+1}: added to the number captured
  };
  struct Text {
    bool any = false;  // "*"
    std::vector<Piece> pieces;
  };
  struct Key {
    bool any_name = false;
    std::string name;
    Text value;
  };
  struct Elem {
    enum class Kind { kNamed, kAnyOne, kAnyMany } kind = Kind::kNamed;
    Text name;
    std::vector<Key> keys;
  };

  static bool MatchText(const std::vector<Piece>& pieces, size_t piece, std::string_view s,
                        Labels& labels);
  static bool MatchTextAll(const Text& t, std::string_view s, Labels& labels);
  bool MatchElem(const Elem& p, const GnmiPathElem& e, Labels& labels) const;
  bool MatchFrom(size_t pi, const std::vector<GnmiPathElem>& elems, size_t ei,
                 Labels& labels) const;
  static std::string TextToString(const Text& t);

  std::string text_;
  std::vector<Elem> elems_;
  std::vector<std::string> capture_names_;
};

}  // namespace railwatch
