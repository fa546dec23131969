#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace railwatch::spool {

// The on-disk format of one spool segment (docs/ARCHITECTURE.md "Agent spool").
//
//   segment := magic record*
//   magic   := "RWSPOOL1"
//   record  := length:u32le crc:u32le type:u8 payload[length]
//
// crc is zlib's CRC-32 of the type byte and the payload. A definition record's payload is a
// SeriesDefinition (the writing process's id); a batch record's is the batch's sequence
// (u64le) and then the Batch without definitions. A segment is written by one process only and
// defines each series before the first batch that uses it, so it can be read on its own.
inline constexpr std::string_view kMagic = "RWSPOOL1";
inline constexpr size_t kRecordHeaderBytes = 9;
// Larger than any batch an agent builds: a length above it is garbage, not a record.
inline constexpr uint32_t kMaxRecordBytes = 64u << 20;

enum class RecordType : uint8_t { kDefinition = 1, kBatch = 2 };

// Appends one record to `out`.
void AppendRecord(RecordType type, std::string_view payload, std::string& out);
// A batch record's payload: the sequence, then the serialised batch.
void AppendBatchRecord(uint64_t sequence, std::string_view batch_bytes, std::string& out);

struct Record {
  RecordType type;
  uint64_t offset;           // of the record's header in the segment
  std::string_view payload;  // a batch's without its sequence
  uint64_t sequence = 0;     // batch records
};

// What a scan of a segment's bytes found: the records up to the first damaged one.
struct ScanResult {
  std::vector<Record> records;
  uint64_t valid_bytes = 0;  // where the good part ends: a torn or damaged tail starts here
  std::string problem;       // why the scan stopped early; empty when the whole file is good
};

// Checks the magic and every record's length and CRC. Never fails on bad bytes: it stops at
// the first bad record and says why (a torn tail after SIGKILL or a crash looks like this).
ScanResult Scan(std::string_view bytes);

// Reads a whole file; errors name the path.
absl::StatusOr<std::string> ReadFile(const std::string& path);

}  // namespace railwatch::spool
