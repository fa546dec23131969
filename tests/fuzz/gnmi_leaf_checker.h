#pragma once

#include <cstdint>
#include <variant>

#include "gnmi/decode.h"
#include "tests/fuzz/fuzz_support.h"

namespace railwatch::fuzz {

// Visits decoded gNMI leaves as the switch agent would (the value as a number, the path as a
// string) and checks that a deleted leaf carries no value.
class GnmiLeafChecker final : public GnmiLeafVisitor {
 public:
  void OnLeaf(const GnmiLeaf& leaf) override {
    if (leaf.deleted) Check(std::holds_alternative<std::monostate>(leaf.value));
    (void)GnmiScalarAsDouble(leaf.value);
    (void)GnmiScalarAsUint(leaf.value);
    (void)GnmiPathString(leaf.elems);
    ++leaves;
  }
  uint64_t leaves = 0;
};

}  // namespace railwatch::fuzz
