#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "collectors/collector.h"
#include "railwatch/v1/ingest.pb.h"

namespace railwatch {

// The agent's interned series: ids are dense (0, 1, 2 ...) in definition order, so "the
// definitions a stream has not seen yet" is just the ids from some index on.
class SeriesRegistry {
 public:
  // Labels every series gets (host="...").
  explicit SeriesRegistry(Labels common_labels) : common_labels_(std::move(common_labels)) {}

  uint32_t Define(std::string_view name, MetricKind kind, Labels labels, uint32_t width_bits);
  // A definition read back from the spool (an earlier process's id, labels complete): the id
  // of the same series (name + labels) here, defined when new.
  uint32_t Intern(const v1::SeriesDefinition& definition);
  size_t size() const;
  // `labels` plus the common labels, normalised (sorted, no duplicates).
  Labels WithCommonLabels(Labels labels) const;
  // Appends the definitions with ids >= `from` to `batch`; returns the new count.
  size_t AppendDefinitions(size_t from, v1::Batch& batch) const;

 private:
  uint32_t DefineNormalized(std::string_view name, MetricKind kind, Labels labels,
                            uint32_t width_bits);

  const Labels common_labels_;
  // The poll thread defines, the sender thread reads.
  mutable absl::Mutex mu_;
  std::vector<v1::SeriesDefinition> definitions_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, std::vector<uint32_t>> by_fingerprint_ ABSL_GUARDED_BY(mu_);
};

// Collects one poll cycle's points into a Batch. Not thread-safe: used by the poll thread.
//
// Batches are reused: Take() hands over the filled batch and continues in `next`, normally one
// the sender has finished with. A cleared protobuf message keeps its repeated elements
// allocated, so a steady cycle of the same series allocates nothing per point.
class BatchBuilder final : public Emitter {
 public:
  explicit BatchBuilder(SeriesRegistry& registry)
      : registry_(registry), batch_(std::make_shared<v1::Batch>()) {}

  uint32_t DefineSeries(std::string_view name, MetricKind kind, Labels labels,
                        uint32_t width_bits) override {
    return registry_.Define(name, kind, std::move(labels), width_bits);
  }
  void Counter(uint32_t series_id, uint64_t value, int64_t t) override;
  void Gauge(uint32_t series_id, double value, int64_t t) override;
  void Event(EventRecord event) override;

  // Hands over the points gathered so far, with the next sequence number, and goes on in
  // `next` (cleared here; a fresh batch when null).
  std::shared_ptr<v1::Batch> Take(std::shared_ptr<v1::Batch> next = nullptr);
  // Where sequence numbers go on (1 by default); the spool's, so that they continue above
  // every sequence an earlier process of this agent used.
  void set_next_sequence(uint64_t sequence) { next_sequence_ = sequence; }
  size_t points() const { return batch_->points_size(); }
  size_t events() const { return batch_->events_size(); }

 private:
  SeriesRegistry& registry_;
  std::shared_ptr<v1::Batch> batch_;
  uint64_t next_sequence_ = 1;
};

}  // namespace railwatch
