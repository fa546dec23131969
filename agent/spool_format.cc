#include "agent/spool_format.h"

#include <zlib.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/base/internal/endian.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace railwatch::spool {
namespace {

uint32_t Crc(RecordType type, std::string_view payload) {
  const auto type_byte = static_cast<unsigned char>(type);
  uLong crc = crc32(0L, &type_byte, 1);
  // zlib takes uInt lengths: payloads are below kMaxRecordBytes.
  crc = crc32(crc, reinterpret_cast<const Bytef*>(payload.data()),
              static_cast<uInt>(payload.size()));
  return static_cast<uint32_t>(crc);
}

void PutU32(uint32_t v, std::string& out) {
  char b[4];
  absl::little_endian::Store32(b, v);
  out.append(b, 4);
}

}  // namespace

void AppendRecord(RecordType type, std::string_view payload, std::string& out) {
  PutU32(static_cast<uint32_t>(payload.size()), out);
  PutU32(Crc(type, payload), out);
  out.push_back(static_cast<char>(type));
  out.append(payload);
}

void AppendBatchRecord(uint64_t sequence, std::string_view batch_bytes, std::string& out) {
  const size_t payload = 8 + batch_bytes.size();
  const auto type = static_cast<char>(RecordType::kBatch);
  char seq[8];
  absl::little_endian::Store64(seq, sequence);
  // CRC over the pieces, without building the payload in a buffer of its own.
  uLong crc = crc32(0L, reinterpret_cast<const Bytef*>(&type), 1);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(seq), 8);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(batch_bytes.data()),
              static_cast<uInt>(batch_bytes.size()));
  PutU32(static_cast<uint32_t>(payload), out);
  PutU32(static_cast<uint32_t>(crc), out);
  out.push_back(type);
  out.append(seq, 8);
  out.append(batch_bytes);
}

ScanResult Scan(std::string_view bytes) {
  ScanResult r;
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic) {
    r.problem = bytes.size() < kMagic.size() ? "shorter than its header" : "not a spool segment";
    return r;
  }
  uint64_t at = kMagic.size();
  r.valid_bytes = at;
  while (at < bytes.size()) {
    if (bytes.size() - at < kRecordHeaderBytes) {
      r.problem = absl::StrCat("torn record header at offset ", at);
      return r;
    }
    const uint32_t length = absl::little_endian::Load32(bytes.data() + at);
    const uint32_t crc = absl::little_endian::Load32(bytes.data() + at + 4);
    const auto type = static_cast<RecordType>(static_cast<uint8_t>(bytes[at + 8]));
    if (length > kMaxRecordBytes ||
        (type != RecordType::kDefinition && type != RecordType::kBatch)) {
      r.problem = absl::StrCat("damaged record header at offset ", at);
      return r;
    }
    if (bytes.size() - at - kRecordHeaderBytes < length) {
      r.problem = absl::StrCat("torn record at offset ", at, " (", length, " bytes, ",
                               bytes.size() - at - kRecordHeaderBytes, " there)");
      return r;
    }
    std::string_view payload = bytes.substr(at + kRecordHeaderBytes, length);
    if (Crc(type, payload) != crc) {
      r.problem = absl::StrCat("CRC mismatch in the record at offset ", at);
      return r;
    }
    Record rec{type, at, payload};
    if (type == RecordType::kBatch) {
      if (payload.size() < 8) {
        r.problem = absl::StrCat("batch record without a sequence at offset ", at);
        return r;
      }
      rec.sequence = absl::little_endian::Load64(payload.data());
      rec.payload = payload.substr(8);
    }
    r.records.push_back(rec);
    at += kRecordHeaderBytes + length;
    r.valid_bytes = at;
  }
  return r;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": ", std::strerror(errno)));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error"));
  return std::move(buf).str();
}

}  // namespace railwatch::spool
