// libFuzzer target for gNMI decoding (gnmi/decode.*): the input as the bytes of a
// SubscribeResponse (what a target streams) and as those of a bare Notification, each
// decoded into leaves: typed values, leaf-lists, JSON and JSON_IETF blobs flattened, deletes.
// Must not crash; a deleted leaf has no value. Seeds: tests/fuzz/seeds/gnmi_decode (the
// notifications of tests/fixtures/gnmi, serialized by make_fuzz_seeds).

#include <cstddef>
#include <cstdint>

#include "gnmi/decode.h"
#include "gnmi/gnmi.pb.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/gnmi_leaf_checker.h"

using railwatch::fuzz::Check;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  railwatch::GnmiDecoder decoder;
  railwatch::fuzz::GnmiLeafChecker visitor;
  gnmi::SubscribeResponse response;
  if (response.ParseFromArray(data, static_cast<int>(size)) && response.has_update()) {
    decoder.Decode(response.update(), visitor);
  }
  gnmi::Notification notification;
  if (notification.ParseFromArray(data, static_cast<int>(size))) {
    decoder.Decode(notification, visitor);
  }
  Check(decoder.stats().leaves + decoder.stats().deletes == visitor.leaves);
  return 0;
}
