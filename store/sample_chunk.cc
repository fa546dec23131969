#include "store/sample_chunk.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace railwatch::store_internal {
namespace {

constexpr uint64_t kRawBit = 128;
constexpr uint32_t kMinCapacity = 16;

uint32_t CapacityFor(uint32_t n) {
  return std::max(kMinCapacity, std::bit_ceil(std::max(n, 1u)));
}
uint32_t WidthOf(const uint64_t* p) { return static_cast<uint32_t>(p[0] & 127); }
uint32_t CapacityOf(const uint64_t* p) { return static_cast<uint32_t>(p[0] >> 8); }
constexpr size_t kHeaderWords = 3;
size_t PayloadWords(uint32_t capacity, uint32_t width) {
  return kHeaderWords + (uint64_t{capacity} * width + 63) / 64;
}

uint64_t* NewPayload(ChunkArena& arena, uint32_t capacity, uint32_t width, bool raw,
                     uint64_t slope, uint64_t base) {
  const size_t words = PayloadWords(capacity, width);
  auto* p = new uint64_t[words]();
  p[0] = width | (raw ? kRawBit : 0) | (uint64_t{capacity} << 8);
  p[1] = slope;
  p[2] = base;
  arena.bytes += static_cast<int64_t>(words * 8);
  return p;
}

// Frees the chunk's payload, leaving it constant at `base`.
void FreePayload(ChunkArena& arena, ValueChunk& c, int64_t base) {
  if (uint64_t* p = c.payload()) {
    arena.bytes -= static_cast<int64_t>(PayloadWords(CapacityOf(p), WidthOf(p)) * 8);
    delete[] p;
  }
  c.set_constant(base);
}

void WriteBits(uint64_t* words, uint32_t j, uint32_t width, uint64_t v) {
  if (width == 0) return;
  const uint64_t bit = uint64_t{j} * width;
  const uint64_t wi = bit >> 6;
  const uint32_t off = bit & 63;
  words[wi] |= v << off;
  if (off + width > 64) words[wi + 1] |= v >> (64 - off);
}

uint64_t Zigzag(uint64_t r) {
  return (r << 1) ^ static_cast<uint64_t>(static_cast<int64_t>(r) >> 63);
}

// The value as an int64 when it is one exactly (not -0, NaN, inf, a fraction or out of range).
bool AsInteger(double v, int64_t& out) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return false;
  if (v != std::trunc(v) || (v == 0 && std::signbit(v))) return false;
  out = static_cast<int64_t>(v);
  return true;
}

// Rewrites the chunk's j values plus `last` as raw doubles.
void RepackRaw(ChunkArena& arena, ValueChunk& c, uint32_t j, double last) {
  double values[kChunkSamples];
  for (uint32_t i = 0; i < j; ++i) values[i] = ChunkValue(c, i);
  values[j] = last;
  uint64_t* p = NewPayload(arena, CapacityFor(j + 1), 64, true, 0, 0);
  for (uint32_t i = 0; i <= j; ++i) {
    WriteBits(p + kHeaderWords, i, 64, std::bit_cast<uint64_t>(values[i]));
  }
  FreePayload(arena, c, 0);
  c.set_payload(p);
}

// Rewrites the chunk's j integer values plus `last` with the slope of first to last and the
// width of the largest residual.
void RepackInteger(ChunkArena& arena, ValueChunk& c, uint32_t j, int64_t last) {
  uint64_t values[kChunkSamples];
  for (uint32_t i = 0; i < j; ++i) {
    values[i] = static_cast<uint64_t>(static_cast<int64_t>(ChunkValue(c, i)));
  }
  values[j] = static_cast<uint64_t>(last);
  const __int128 span = static_cast<__int128>(static_cast<int64_t>(values[j])) -
                        static_cast<int64_t>(values[0]);
  const __int128 s = span / j;
  const uint64_t slope = (s > INT64_MAX || s < INT64_MIN) ? 0 : static_cast<uint64_t>(s);
  const uint64_t base = values[0];
  uint32_t width = 0;
  for (uint32_t i = 0; i <= j; ++i) {
    values[i] = Zigzag(values[i] - base - slope * i);
    width = std::max<uint32_t>(width, std::bit_width(values[i]));
  }
  FreePayload(arena, c, static_cast<int64_t>(base));
  if (width == 0 && slope == 0) return;  // constant: no payload
  uint64_t* p = NewPayload(arena, CapacityFor(j + 1), width, false, slope, base);
  for (uint32_t i = 0; i <= j; ++i) WriteBits(p + kHeaderWords, i, width, values[i]);
  c.set_payload(p);
}

// Makes room for the j-th value at the chunk's width.
void EnsureCapacity(ChunkArena& arena, ValueChunk& c, uint32_t j) {
  const uint64_t* old = c.payload();
  if (j < CapacityOf(old)) return;
  const uint32_t width = WidthOf(old);
  const uint32_t capacity = CapacityFor(j + 1);
  uint64_t* p = NewPayload(arena, capacity, width, (old[0] & kRawBit) != 0, old[1], old[2]);
  std::memcpy(p + kHeaderWords, old + kHeaderWords,
              (PayloadWords(CapacityOf(old), width) - kHeaderWords) * 8);
  FreePayload(arena, c, 0);
  c.set_payload(p);
}

}  // namespace

ChunkArena::~ChunkArena() {
  if (hint != nullptr) ReleaseBlock(*this, hint);
}

void ReleaseBlock(ChunkArena& arena, TimeBlock* block) {
  while (block != nullptr && --block->refs == 0) {
    TimeBlock* next = block->next;
    delete block;
    arena.bytes -= static_cast<int64_t>(sizeof(TimeBlock));
    block = next;
  }
}

void FreeChunk(ChunkArena& arena, ValueChunk& chunk) {
  FreePayload(arena, chunk, 0);
  ReleaseBlock(arena, chunk.times());
  chunk.set_times(nullptr);
}

void AppendTime(ChunkArena& arena, ValueChunk& c, uint32_t j, int64_t t, TimeBlock* prev) {
  if (j == 0) {
    // Share the block that the series' previous block led to, or the one just started.
    TimeBlock* candidates[2] = {prev != nullptr ? prev->next : nullptr, arena.hint};
    for (TimeBlock* b : candidates) {
      if (b != nullptr && b->n >= 1 && b->t[0] == t) {
        ++b->refs;
        c.set_times(b);
        return;
      }
    }
    auto* b = new TimeBlock;
    arena.bytes += static_cast<int64_t>(sizeof(TimeBlock));
    b->t[0] = t;
    b->n = 1;
    c.set_times(b);
    if (prev != nullptr && prev->next == nullptr) {
      prev->next = b;
      ++b->refs;
    }
    if (arena.hint != nullptr) ReleaseBlock(arena, arena.hint);
    arena.hint = b;
    ++b->refs;
    return;
  }
  TimeBlock* b = c.times();
  if (b->n == j) {  // this series is the furthest along: extend the block
    b->t[b->n++] = t;
    return;
  }
  if (b->t[j] == t) return;  // another series wrote the same time
  if (b->refs == 1) {        // diverged, but nobody else uses the rest
    b->t[j] = t;
    b->n = j + 1;
    return;
  }
  // Diverged from series that share the block: copy this series' times (copy-on-write).
  auto* copy = new TimeBlock;
  arena.bytes += static_cast<int64_t>(sizeof(TimeBlock));
  std::memcpy(copy->t, b->t, j * sizeof(int64_t));
  copy->t[j] = t;
  copy->n = j + 1;
  ReleaseBlock(arena, b);
  c.set_times(copy);
}

void AppendValue(ChunkArena& arena, ValueChunk& c, uint32_t j, double value) {
  int64_t iv = 0;
  const bool integer = AsInteger(value, iv);
  if (j == 0) {
    FreePayload(arena, c, integer ? iv : 0);
    if (!integer) {
      uint64_t* p = NewPayload(arena, kMinCapacity, 64, true, 0, 0);
      WriteBits(p + kHeaderWords, 0, 64, std::bit_cast<uint64_t>(value));
      c.set_payload(p);
    }
    return;
  }
  const uint64_t* p = c.payload();
  if (p != nullptr && (p[0] & kRawBit)) {
    EnsureCapacity(arena, c, j);
    WriteBits(c.payload() + kHeaderWords, j, 64, std::bit_cast<uint64_t>(value));
    return;
  }
  if (!integer) {
    RepackRaw(arena, c, j, value);
    return;
  }
  const uint64_t slope = p != nullptr ? p[1] : 0;
  const uint32_t width = p != nullptr ? WidthOf(p) : 0;
  const uint64_t zz =
      Zigzag(static_cast<uint64_t>(iv) - static_cast<uint64_t>(c.base()) - slope * j);
  if (static_cast<uint32_t>(std::bit_width(zz)) > width) {
    RepackInteger(arena, c, j, iv);
    return;
  }
  if (width == 0) return;  // on the line: nothing to write
  EnsureCapacity(arena, c, j);
  WriteBits(c.payload() + kHeaderWords, j, width, zz);
}

}  // namespace railwatch::store_internal
