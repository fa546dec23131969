#include "agent/spool.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/logging.h"

namespace railwatch {
namespace fs = std::filesystem;
namespace {

constexpr int kGenerationShift = 40;
constexpr std::string_view kSegmentSuffix = ".seg";

absl::Status Errno(const char* what, const std::string& path) {
  return absl::Status(absl::ErrnoToStatusCode(errno),
                      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Spool>> Spool::Open(Options options, const Clock& clock) {
  if (options.dir.empty()) return absl::InvalidArgumentError("spool: no directory");
  if (options.segment_bytes == 0) {
    options.segment_bytes =
        std::clamp<uint64_t>(options.max_bytes / 16, uint64_t{64} << 10, uint64_t{16} << 20);
  }
  std::unique_ptr<Spool> spool(new Spool(std::move(options), clock));
  if (absl::Status s = spool->Init(); !s.ok()) return s;
  return spool;
}

Spool::~Spool() {
  absl::MutexLock lock(&mu_);
  if (active_fd_ >= 0) close(active_fd_);
  if (lock_fd_ >= 0) close(lock_fd_);  // releases the flock
}

absl::Status Spool::Init() {
  const std::string& dir = options_.dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat("spool ", dir, ": ", ec.message()));
  const std::string lock_path = dir + "/lock";
  lock_fd_ = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) return Errno("spool: cannot open", lock_path);
  if (flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("spool ", dir, " is in use by another railwatch-agent process"));
  }
  std::vector<std::string> paths;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > kSegmentSuffix.size() && name.ends_with(kSegmentSuffix)) {
      paths.push_back(e.path().string());
    }
  }
  if (ec) return absl::PermissionDeniedError(absl::StrCat("spool ", dir, ": ", ec.message()));
  // Names are the first sequence, zero-padded: name order is sequence order.
  std::sort(paths.begin(), paths.end());
  for (const std::string& path : paths) {
    if (absl::Status s = Recover(path); !s.ok()) return s;
  }
  absl::MutexLock lock(&mu_);
  std::sort(segments_.begin(), segments_.end(),
            [](const Segment& a, const Segment& b) { return a.first < b.first; });
  for (const Segment& s : segments_) {
    last_recovered_sequence_ = std::max(last_recovered_sequence_, s.last);
    stats_.batches_recovered += s.batches;
    stats_.bytes += s.bytes;
  }
  stats_.segments = segments_.size();
  if (stats_.batches_recovered > 0) {
    spdlog::info("spool {}: {} unacknowledged batches ({} bytes) from an earlier run to replay",
                 dir, stats_.batches_recovered, stats_.bytes);
  }
  return LoadIdentity(last_recovered_sequence_);
}

absl::Status Spool::Recover(const std::string& path) {
  absl::StatusOr<std::string> bytes = spool::ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  const spool::ScanResult scan = spool::Scan(*bytes);
  Segment seg;
  seg.path = path;
  for (const spool::Record& r : scan.records) {
    if (r.type != spool::RecordType::kBatch) continue;
    if (seg.batches == 0) seg.first = r.sequence;
    seg.last = r.sequence;
    ++seg.batches;
  }
  seg.bytes = scan.valid_bytes;
  seg.created = clock_.Now();
  absl::MutexLock lock(&mu_);
  if (!scan.problem.empty()) {
    ++stats_.torn_tails;
    spdlog::warn("spool segment {}: {}; cut at {} bytes of {} ({} good batches kept)", path,
                 scan.problem, scan.valid_bytes, bytes->size(), seg.batches);
    if (seg.batches > 0 && truncate(path.c_str(), static_cast<off_t>(scan.valid_bytes)) != 0) {
      return Errno("spool: cannot cut", path);
    }
  }
  if (seg.batches == 0) {
    unlink(path.c_str());
    return absl::OkStatus();
  }
  segments_.push_back(std::move(seg));
  return absl::OkStatus();
}

absl::Status Spool::LoadIdentity(uint64_t newest_sequence) {
  // "instance <id> generation <n>"
  const std::string path = options_.dir + "/identity";
  uint64_t generation = 0;
  bool known = false;
  if (absl::StatusOr<std::string> text = spool::ReadFile(path); text.ok()) {
    std::vector<absl::string_view> words =
        absl::StrSplit(*text, absl::ByAnyChar(" \n"), absl::SkipEmpty());
    known = words.size() == 4 && words[0] == "instance" && words[2] == "generation" &&
            absl::SimpleHexAtoi(words[1], &instance_id_) &&
            absl::SimpleAtoi(words[3], &generation);
    if (!known) spdlog::warn("spool {}: unreadable, a new agent instance id", path);
  }
  if (!known) {
    instance_id_ = std::random_device{}() | (uint64_t{std::random_device{}()} << 32);
    generation = 0;
  }
  generation = std::max(generation, newest_sequence >> kGenerationShift) + 1;
  first_sequence_ = (generation << kGenerationShift) + 1;
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << absl::StrFormat("instance %016x generation %d\n", instance_id_, generation);
    out.flush();
    if (!out) return Errno("spool: cannot write", tmp);
  }
  // Once per start, so worth an fsync: a reused generation would reuse sequence numbers.
  if (int fd = open(tmp.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    fsync(fd);
    close(fd);
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) return Errno("spool: cannot rename", tmp);
  return absl::OkStatus();
}

absl::Status Spool::StartSegmentLocked(uint64_t sequence) {
  const std::string path =
      absl::StrFormat("%s/%020d%s", options_.dir, sequence, std::string(kSegmentSuffix));
  active_fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (active_fd_ < 0) return Errno("spool: cannot create", path);
  if (!WriteAll(active_fd_, spool::kMagic)) {
    absl::Status s = Errno("spool: cannot write", path);
    close(active_fd_);
    active_fd_ = -1;
    unlink(path.c_str());
    return s;
  }
  Segment& seg = segments_.emplace_back();
  seg.path = path;
  seg.bytes = spool::kMagic.size();
  seg.created = clock_.Now();
  stats_.bytes += seg.bytes;
  stats_.segments = segments_.size();
  active_definitions_ = 0;
  return absl::OkStatus();
}

void Spool::CloseActiveLocked() {
  if (active_fd_ < 0) return;
  close(active_fd_);
  active_fd_ = -1;
}

absl::Status Spool::Append(const v1::Batch& batch, const SeriesRegistry& registry) {
  absl::MutexLock lock(&mu_);
  if (active_fd_ >= 0 && segments_.back().bytes >= options_.segment_bytes) CloseActiveLocked();
  if (active_fd_ < 0) {
    if (absl::Status s = StartSegmentLocked(batch.sequence()); !s.ok()) {
      ++stats_.append_errors;
      return s;
    }
  }
  scratch_.clear();
  definitions_.Clear();
  const size_t defined = registry.AppendDefinitions(active_definitions_, definitions_);
  for (const v1::SeriesDefinition& d : definitions_.definitions()) {
    spool::AppendRecord(spool::RecordType::kDefinition, d.SerializeAsString(), scratch_);
  }
  spool::AppendBatchRecord(batch.sequence(), batch.SerializeAsString(), scratch_);
  while (stats_.bytes + scratch_.size() > options_.max_bytes && segments_.size() > 1) {
    DropOldestLocked();
  }
  Segment& seg = segments_.back();
  if (!WriteAll(active_fd_, scratch_)) {
    absl::Status s = Errno("spool: cannot append to", seg.path);
    // Leave no partial record behind: the segment stays readable.
    if (ftruncate(active_fd_, static_cast<off_t>(seg.bytes)) != 0) CloseActiveLocked();
    ++stats_.append_errors;
    return s;
  }
  active_definitions_ = defined;
  if (seg.batches == 0) seg.first = batch.sequence();
  seg.last = batch.sequence();
  ++seg.batches;
  seg.bytes += scratch_.size();
  stats_.bytes += scratch_.size();
  ++stats_.batches_spooled;
  stats_.bytes_spooled += scratch_.size();
  return absl::OkStatus();
}

void Spool::DeleteFrontLocked() {
  const Segment& seg = segments_.front();
  if (active_fd_ >= 0 && segments_.size() == 1) CloseActiveLocked();
  unlink(seg.path.c_str());
  stats_.bytes -= std::min(stats_.bytes, seg.bytes);
  if (cache_.first == seg.first) cache_ = ReadCache{};
  segments_.pop_front();
  stats_.segments = segments_.size();
}

void Spool::DropOldestLocked() {
  const Segment& seg = segments_.front();
  uint64_t unacked = 0;
  if (seg.batches > 0 && seg.last > acked_) {
    unacked = std::min(seg.batches, seg.last - std::max(seg.first, acked_ + 1) + 1);
  }
  stats_.batches_dropped += unacked;
  stats_.bytes_dropped += seg.bytes;
  spdlog::warn("spool {}: over {} bytes; dropped the oldest segment ({} unacknowledged batches)",
               options_.dir, options_.max_bytes, unacked);
  DeleteFrontLocked();
}

void Spool::Ack(uint64_t sequence) {
  absl::MutexLock lock(&mu_);
  acked_ = std::max(acked_, sequence);
  while (!segments_.empty()) {
    const Segment& seg = segments_.front();
    const bool active = active_fd_ >= 0 && segments_.size() == 1;
    if (seg.last > acked_ && seg.batches > 0) break;
    if (active && (seg.batches == 0 || clock_.Now() - seg.created < options_.rotate_acked_after)) {
      break;
    }
    DeleteFrontLocked();
  }
}

uint64_t Spool::NextAfter(uint64_t after) const {
  absl::MutexLock lock(&mu_);
  for (const Segment& seg : segments_) {
    if (seg.batches > 0 && seg.last > after) return std::max(seg.first, after + 1);
  }
  return 0;
}

absl::Status Spool::Read(uint64_t sequence, SeriesRegistry& registry, v1::Batch& out) {
  absl::MutexLock lock(&mu_);
  const Segment* seg = nullptr;
  for (const Segment& s : segments_) {
    if (s.batches > 0 && s.first <= sequence && sequence <= s.last) seg = &s;
  }
  if (seg == nullptr) return absl::NotFoundError(absl::StrCat("batch ", sequence, " not spooled"));
  const auto find = [&]() -> const spool::Record* {
    auto it = std::lower_bound(
        cache_.scan.records.begin(), cache_.scan.records.end(), sequence,
        [](const spool::Record& r, uint64_t s) { return r.sequence < s; });
    // A definition sorts with the batch after it: skip it.
    while (it != cache_.scan.records.end() && it->type != spool::RecordType::kBatch) ++it;
    return it != cache_.scan.records.end() && it->sequence == sequence ? &*it : nullptr;
  };
  const spool::Record* record = cache_.first == seg->first ? find() : nullptr;
  if (record == nullptr) {  // another segment, or the one being written has grown
    absl::StatusOr<std::string> bytes = spool::ReadFile(seg->path);
    if (!bytes.ok()) return bytes.status();
    cache_.first = seg->first;
    cache_.bytes = *std::move(bytes);
    cache_.scan = spool::Scan(cache_.bytes);
    cache_.ids.clear();
    v1::SeriesDefinition def;
    for (spool::Record& r : cache_.scan.records) {
      if (r.type != spool::RecordType::kDefinition) continue;
      if (def.ParseFromArray(r.payload.data(), static_cast<int>(r.payload.size()))) {
        cache_.ids[def.id()] = registry.Intern(def);
      }
    }
    // Sorted by sequence for the search: a definition takes the sequence of the batch after it.
    uint64_t next = UINT64_MAX;
    for (size_t i = cache_.scan.records.size(); i-- > 0;) {
      spool::Record& r = cache_.scan.records[i];
      if (r.type == spool::RecordType::kBatch) {
        next = r.sequence;
      } else {
        r.sequence = next;
      }
    }
    record = find();
    if (record == nullptr) {
      return absl::DataLossError(absl::StrCat("batch ", sequence, " unreadable in ", seg->path));
    }
  }
  if (!out.ParseFromArray(record->payload.data(), static_cast<int>(record->payload.size()))) {
    return absl::DataLossError(absl::StrCat("batch ", sequence, " does not parse in ", seg->path));
  }
  out.clear_definitions();
  int kept = 0;
  for (int i = 0; i < out.points_size(); ++i) {
    auto it = cache_.ids.find(out.points(i).series_id());
    if (it == cache_.ids.end()) continue;  // undefined in its segment: damaged, dropped
    out.mutable_points(i)->set_series_id(it->second);
    if (kept != i) out.mutable_points()->SwapElements(kept, i);
    ++kept;
  }
  out.mutable_points()->DeleteSubrange(kept, out.points_size() - kept);
  ++stats_.batches_replayed;
  return absl::OkStatus();
}

Spool::Stats Spool::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

std::unique_ptr<Spool> OpenAgentSpool(const Spool::Options& options, v1::Hello& hello,
                                      BatchBuilder& builder, const Clock& clock) {
  std::unique_ptr<Spool> spool;
  if (!options.dir.empty()) {
    absl::StatusOr<std::unique_ptr<Spool>> opened = Spool::Open(options, clock);
    if (opened.ok()) {
      spool = *std::move(opened);
    } else {
      spdlog::error("{}; running without a spool: batches are kept in memory only",
                    opened.status().message());
    }
  }
  if (!spool) {
    hello.set_instance_id(std::random_device{}() | (uint64_t{std::random_device{}()} << 32));
    return nullptr;
  }
  // The spool's identity and sequence space outlive this process: the daemon drops what it
  // already stored of an earlier process's batches.
  hello.set_instance_id(spool->instance_id());
  builder.set_next_sequence(spool->first_sequence());
  return spool;
}

}  // namespace railwatch
