#pragma once

#include <string>
#include <vector>

#include "gnmi/decode.h"
#include "gnmi/text_formats.h"

namespace railwatch::testing {

// A leaf copied out of the decoder's scratch storage.
struct RecordedLeaf {
  std::string origin;
  std::string target;
  std::string path;  // GnmiPathString of the elems
  GnmiScalar value;
  bool deleted = false;
  int64_t time = 0;
};

class RecordingVisitor : public GnmiLeafVisitor {
 public:
  void OnLeaf(const GnmiLeaf& leaf) override {
    leaves.push_back({std::string(leaf.origin), std::string(leaf.target),
                      GnmiPathString(leaf.elems), leaf.value, leaf.deleted, leaf.time_unix_nano});
  }
  // The leaves with this path, in order.
  std::vector<RecordedLeaf> At(const std::string& path) const {
    std::vector<RecordedLeaf> out;
    for (const RecordedLeaf& l : leaves) {
      if (l.path == path) out.push_back(l);
    }
    return out;
  }
  std::vector<RecordedLeaf> leaves;
};

std::string ReadFixture(const std::string& name);

// Reads a fixture with ReadGnmiCapture (kAuto) and decodes every notification.
struct DecodedFixture {
  GnmiCapture capture;
  RecordingVisitor leaves;
  GnmiDecodeStats stats;
};
DecodedFixture DecodeFixture(const std::string& name,
                             GnmiTextFormat format = GnmiTextFormat::kAuto);

}  // namespace railwatch::testing
