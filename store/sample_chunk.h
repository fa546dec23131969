#pragma once

// The compact sample storage behind SeriesStore (docs/STORE.md): a series' samples live in
// chunks of kChunkSamples. A chunk's values are bit-packed residuals from a line (base +
// slope * j) with a width that fits the chunk's largest residual (0 bits for a constant or
// perfectly steady series); values that are not exact integers make the chunk store raw
// doubles. Timestamps are exact and kept in TimeBlocks shared (refcounted, copy-on-write) by
// the series appended with the same times. Random access to any sample is O(1).
//
// Not thread-safe: the store calls these under its lock.

#include <bit>
#include <cstdint>

namespace railwatch::store_internal {

inline constexpr uint32_t kChunkLog = 8;
inline constexpr uint32_t kChunkSamples = 1u << kChunkLog;

// The times of up to kChunkSamples samples. Series whose chunks hold the same times share
// one block: a series' j-th time is t[j], and it uses t[0, its count).
struct TimeBlock {
  uint32_t refs = 1;
  uint32_t n = 0;  // times written (the longest user's count)
  // The block started by the first series that filled this one and went on; the next
  // series to do so with the same first time shares it. Holds a reference.
  TimeBlock* next = nullptr;
  int64_t t[kChunkSamples];
};

// Per-store state of the chunks: live bytes (for MemoryBytes) and the block most recently
// started, which a series starting a chunk at the same time shares.
struct ChunkArena {
  int64_t bytes = 0;
  TimeBlock* hint = nullptr;  // holds a reference
  ~ChunkArena();
};

// Up to kChunkSamples consecutive samples of one series, in 16 bytes: the time block (its low
// bit set when `word_` is a payload) and either the value of a constant chunk or its payload:
// [0] header (width | raw << 7 | capacity in samples << 8), [1] slope, [2] base, [3...] the
// packed values.
class ValueChunk {
 public:
  TimeBlock* times() const { return reinterpret_cast<TimeBlock*>(times_ & ~uintptr_t{1}); }
  void set_times(TimeBlock* b) { times_ = reinterpret_cast<uintptr_t>(b) | (times_ & 1); }
  bool has_payload() const { return (times_ & 1) != 0; }
  // Null when every value is base() (an integer).
  uint64_t* payload() const {
    return has_payload() ? reinterpret_cast<uint64_t*>(word_) : nullptr;
  }
  int64_t base() const {
    return static_cast<int64_t>(has_payload() ? payload()[2] : word_);
  }
  void set_constant(int64_t base) {
    times_ &= ~uintptr_t{1};
    word_ = static_cast<uint64_t>(base);
  }
  void set_payload(uint64_t* p) {
    times_ |= 1;
    word_ = reinterpret_cast<uintptr_t>(p);
  }

 private:
  uintptr_t times_ = 0;
  uint64_t word_ = 0;
};

void ReleaseBlock(ChunkArena& arena, TimeBlock* block);
// Frees the chunk's payload and drops its time block.
void FreeChunk(ChunkArena& arena, ValueChunk& chunk);

// Appends (t, value) as the j-th sample of `chunk` (j == 0: a new chunk; `prev` is then the
// series' previous chunk's time block, or null).
void AppendTime(ChunkArena& arena, ValueChunk& chunk, uint32_t j, int64_t t, TimeBlock* prev);
void AppendValue(ChunkArena& arena, ValueChunk& chunk, uint32_t j, double value);

inline uint64_t ReadBits(const uint64_t* words, uint32_t j, uint32_t width) {
  if (width == 0) return 0;
  const uint64_t bit = uint64_t{j} * width;
  const uint64_t wi = bit >> 6;
  const uint32_t off = bit & 63;
  uint64_t v = words[wi] >> off;
  if (off + width > 64) v |= words[wi + 1] << (64 - off);
  return width == 64 ? v : v & ((uint64_t{1} << width) - 1);
}

inline double ChunkValue(const ValueChunk& c, uint32_t j) {
  const uint64_t* p = c.payload();
  if (p == nullptr) return static_cast<double>(c.base());
  const uint64_t header = p[0];
  const uint64_t bits = ReadBits(p + 3, j, header & 127);
  if (header & 128) return std::bit_cast<double>(bits);
  const uint64_t residual = (bits >> 1) ^ (~(bits & 1) + 1);  // zigzag decode
  const uint64_t v = p[2] + p[1] * j + residual;
  return static_cast<double>(static_cast<int64_t>(v));
}

}  // namespace railwatch::store_internal
