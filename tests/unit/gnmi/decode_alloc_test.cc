// The switch agent decodes every update it receives: at steady state a scalar update must be
// decoded without touching the heap. Counts operator new calls around a second decode.

#include <atomic>
#include <cstdlib>
#include <new>

#include "gnmi/decode.h"
#include "gtest/gtest.h"

namespace decode_alloc_test {
std::atomic<bool> counting{false};
std::atomic<size_t> allocations{0};
// A place for a debugger's breakpoint when this test fails.
[[gnu::noinline]] void CountedAllocation() { allocations.fetch_add(1); }
}  // namespace

// The replacement operator new takes its blocks from malloc, so the matching operator delete
// gives them back with free; gcc cannot see that the two are replaced together.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

void* operator new(size_t size) {
  if (decode_alloc_test::counting.load(std::memory_order_relaxed)) decode_alloc_test::CountedAllocation();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// Every form that the library's default operator new has, so that no block is allocated by one
// allocator and freed by the other (std::stable_sort's nothrow buffer, arrays); AddressSanitizer
// reports such a mismatch.
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  if (decode_alloc_test::counting.load(std::memory_order_relaxed)) decode_alloc_test::CountedAllocation();
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](size_t size) { return operator new(size); }
void* operator new[](size_t size, const std::nothrow_t& nt) noexcept {
  return operator new(size, nt);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace railwatch {
namespace decode_alloc_test {

class CountingVisitor : public GnmiLeafVisitor {
 public:
  void OnLeaf(const GnmiLeaf& leaf) override { sum += leaf.elems.size(); }
  size_t sum = 0;
};

TEST(GnmiDecodeAlloc, SteadyScalarUpdatesDoNotAllocate) {
  ::gnmi::Notification n;
  n.set_timestamp(1);
  n.mutable_prefix()->set_target("leaf-1");
  auto* pe = n.mutable_prefix()->add_elem();
  pe->set_name("interfaces");
  pe = n.mutable_prefix()->add_elem();
  pe->set_name("interface");
  (*pe->mutable_key())["name"] = "Ethernet1/1-long-enough-to-skip-sso";
  const char* leaves[] = {"in-broadcast-pkts-long-name", "in-discards", "out-octets"};
  for (const char* leaf : leaves) {
    ::gnmi::Update* u = n.add_update();
    u->mutable_path()->add_elem()->set_name("state");
    u->mutable_path()->add_elem()->set_name("counters");
    u->mutable_path()->add_elem()->set_name(leaf);
    u->mutable_val()->set_uint_val(7);
  }
  // A different depth in between, so that elems are parked and taken back.
  ::gnmi::Update* shallow = n.add_update();
  shallow->mutable_path()->add_elem()->set_name("mtu");
  shallow->mutable_val()->set_double_val(1.5);
  ::gnmi::Update* keyed = n.add_update();
  auto* ke = keyed->mutable_path()->add_elem();
  ke->set_name("queue");
  (*ke->mutable_key())["name"] = "3";
  (*ke->mutable_key())["id"] = "q3-with-a-long-queue-identifier";
  keyed->mutable_val()->set_int_val(-4);

  GnmiDecoder decoder;
  CountingVisitor visitor;
  // Two rounds warm the scratch leaf and its spare elems and keys up (the first round parks
  // nothing before the keyed update has been seen once).
  decoder.Decode(n, visitor);
  decoder.Decode(n, visitor);
  ::decode_alloc_test::allocations = 0;
  ::decode_alloc_test::counting = true;
  for (int i = 0; i < 100; ++i) decoder.Decode(n, visitor);
  ::decode_alloc_test::counting = false;
  EXPECT_EQ(::decode_alloc_test::allocations.load(), 0u);
  EXPECT_EQ(decoder.stats().leaves, 102u * 5);
  EXPECT_GT(visitor.sum, 0u);
}

}  // namespace
}  // namespace railwatch
