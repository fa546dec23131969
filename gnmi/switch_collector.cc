#include "gnmi/switch_collector.h"

#include <algorithm>
#include <functional>
#include <map>

#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/logging.h"
#include "topology/lldp_check.h"

namespace railwatch {
// Named, not anonymous: Target (a member class of an exported class) holds these, and in a
// unity build gcc's -Wsubobject-linkage objects to anonymous-namespace types there.
namespace switch_collector_internal {

// How long an LLDP neighbour's port-id may lag its system name (see InfoSeries).
constexpr absl::Duration kLldpPortIdWait = absl::Seconds(2);

// An info series whose labels come from attribute leaves (LLDP neighbour name and port):
// one series per (metric, captured labels), redefined when an attribute changes.
struct InfoSeries {
  Labels base;
  Labels attributes;
  bool defined = false;
  uint32_t series_id = 0;
  uint64_t last_cycle = 0;  // the Drain cycle that last emitted it
  // LLDP neighbour check against the topology (fabric_lldp_neighbor_info only).
  bool lldp_dirty = false;
  // When the name came without a port-id (0: it has one, or no name yet). The port-id is a
  // leaf of its own and may come a little later: a neighbour is judged on its name alone only
  // once kLldpPortIdWait has passed, never as "a neighbour without a port-id" in between.
  int64_t lldp_name_alone_since = 0;
  bool mismatch_defined = false;
  uint32_t mismatch_id = 0;
  double mismatch = -1;  // -1: not checked yet
};

// What a join leaf says (`join: component`): the series that captured label `component` with
// this value take these labels instead (interface=Ethernet1). Several interfaces may name one
// transceiver (a breakout): the first by label order wins.
struct JoinTarget {
  std::map<std::string, Labels> claims;  // by the claimant's formatted labels
  const Labels* effective = nullptr;     // claims.begin()'s, or null when none
  uint64_t generation = 0;               // bumped when `effective` changes
};

// One distinct leaf path of one target, and what it maps to.
struct PathEntry {
  std::string origin;
  std::string target;
  std::vector<GnmiPathElem> elems;
  bool mapped = false;
  GnmiMappedSeries series;  // labels include switch=<target>
  // Poll thread only:
  bool defined = false;
  uint32_t series_id = 0;
  bool has_last = false;
  double last = 0;
  uint64_t last_cycle = 0;  // the Drain cycle that last emitted it (gauges)
  InfoSeries* info = nullptr;  // attribute leaves only
  bool in_gauges = false;      // listed in Target::gauges_
  // Series that captured a joined label (component): set on the gRPC thread by Lookup.
  std::string join_key;  // "<label>\0<value>"; empty when none
  Labels unjoined;       // the labels as captured, the joined one included
  // Poll thread only: what the labels were last resolved against.
  const JoinTarget* joined_to = nullptr;
  uint64_t joined_generation = 0;
  // The latest point that came before its join was known, sent once it is.
  bool holding = false;
  bool listed_unresolved = false;
  int64_t held_time = 0;
  uint64_t held_counter = 0;
  double held_gauge = 0;
  std::string held_text;
  // Join leaves: the join key this leaf claims now, and the labels it claims it with.
  std::string claimed_key;
  std::string claim_name;
};

struct PendingPoint {
  PathEntry* entry;
  int64_t time_unix_nano;
  uint64_t counter;
  double gauge;
  bool deleted;
  // Index into the buffer's texts when the entry's rule makes events (the raw value for the
  // event's attributes); -1 otherwise.
  int32_t text;
};

// Buffers that the gRPC thread fills and the poll thread drains; swapped whole, so both keep
// their capacity and the steady state allocates nothing.
struct PendingBuffer {
  std::vector<PendingPoint> points;
  std::vector<std::string> texts;
  size_t texts_used = 0;
  void Clear() {
    points.clear();
    texts_used = 0;
  }
};

uint64_t HashLeaf(const GnmiLeaf& leaf) {
  std::hash<std::string_view> h;
  uint64_t x = h(leaf.origin) * 31 + h(leaf.target);
  for (const GnmiPathElem& e : leaf.elems) {
    x = x * 1099511628211ULL ^ h(e.name);
    for (const auto& [k, v] : e.keys) {
      x = x * 1099511628211ULL ^ h(k);
      x = x * 1099511628211ULL ^ h(v);
    }
  }
  return x;
}

bool SamePath(const PathEntry& e, const GnmiLeaf& leaf) {
  if (e.origin != leaf.origin || e.target != leaf.target || e.elems.size() != leaf.elems.size()) {
    return false;
  }
  for (size_t i = 0; i < e.elems.size(); ++i) {
    if (e.elems[i].name != leaf.elems[i].name || e.elems[i].keys != leaf.elems[i].keys) {
      return false;
    }
  }
  return true;
}

std::string ScalarText(const GnmiScalar& v) {
  if (const std::string* s = std::get_if<std::string>(&v)) return *s;
  if (std::optional<double> d = GnmiScalarAsDouble(v)) return absl::StrCat(*d);
  return "";
}

}  // namespace switch_collector_internal

using namespace switch_collector_internal;  // NOLINT(build/namespaces)

class GnmiSwitchCollector::Target final : public GnmiStreamHandler, public GnmiLeafVisitor {
 public:
  Target(const GnmiTargetConfig& config, const GnmiProfile& profile, const Options& options)
      : config_(config),
        profile_(profile),
        max_pending_(options.max_pending_per_target),
        max_paths_(options.max_paths_per_target),
        topology_(options.topology) {}

  ~Target() override { clients_.clear(); }

  // One stream per gNMI target the profile's subscriptions name (SONiC: COUNTERS_DB and
  // OC-YANG), all feeding this target's buffer, all on one connection to the switch: the
  // SAMPLE streams' data keeps the keepalive pings within the switch's ping policy for the
  // streams that carry none (docs/SWITCH_AGENT.md, "Liveness").
  void MakeClients(const GnmiChannelOptions& options, GnmiScheduler& scheduler) {
    std::vector<::gnmi::SubscribeRequest> requests =
        MakeSubscribeRequests(profile_, config_, ::gnmi::SubscriptionList::STREAM, &optional_);
    GnmiChannelOptions channel_options = options;
    channel_options.keepalive_time = GnmiKeepaliveTime(requests, options.keepalive_time);
    std::shared_ptr<grpc::Channel> channel = MakeGnmiChannel(config_, channel_options);
    for (::gnmi::SubscribeRequest& request : requests) {
      clients_.push_back(std::make_unique<GnmiClient>(config_, std::move(request),
                                                      channel_options, channel, scheduler,
                                                      *this));
    }
  }
  void StartClients() {
    for (auto& c : clients_) c->Start();
  }
  void StopClients() {
    for (auto& c : clients_) c->Stop();
  }
  const GnmiTargetConfig& config() const { return config_; }

  void OnResponse(const ::gnmi::SubscribeResponse& response) override {
    absl::MutexLock lock(&mu_);
    if (response.has_update()) {
      const uint64_t decode_errors = decoder_.stats().errors;
      now_unix_nano_ = absl::ToUnixNanos(absl::Now());
      decoder_.Decode(response.update(), *this);
      errors_ += decoder_.stats().errors - decode_errors;
    }
    if (response.sync_response()) synced_ = true;
    if (response.response_case() == ::gnmi::SubscribeResponse::kError) ++errors_;  // deprecated in gNMI 0.10, still sent by old targets
  }

  // Called under mu_ from Decode.
  void OnLeaf(const GnmiLeaf& leaf) override ABSL_NO_THREAD_SAFETY_ANALYSIS {
    PathEntry* entry = Lookup(leaf);
    if (entry == nullptr || !entry->mapped) {
      ++unmapped_;
      return;
    }
    const int64_t t = leaf.time_unix_nano > 0 ? leaf.time_unix_nano : now_unix_nano_;
    PendingBuffer& buf = pending_;
    if (leaf.deleted) {
      // A deleted leaf has no value to forward: drop what is pending for it, and forget its
      // last value so that its return is not taken for a change.
      std::erase_if(buf.points, [entry](const PendingPoint& p) { return p.entry == entry; });
      buf.points.push_back({entry, t, 0, 0, true, -1});
      ++deletes_;
      return;
    }
    const GnmiValueRule* rule = entry->series.rule;
    if (rule != nullptr && rule->IsAbsent(leaf.value)) {
      // "N/A": no reading now; the series keeps no value (as for a delete), and it is no error.
      if (buf.points.size() < max_pending_) buf.points.push_back({entry, t, 0, 0, true, -1});
      return;
    }
    if (buf.points.size() >= max_pending_) {
      ++dropped_;
      return;
    }
    // The rule knows the profile's enum strings ("UP": 1) and scale.
    std::optional<double> number =
        rule != nullptr ? rule->Evaluate(leaf.value) : GnmiScalarAsDouble(leaf.value);
    if (!number) {
      ++errors_;
      return;
    }
    PendingPoint p{entry, t, 0, *number, false, -1};
    if (entry->series.metric != nullptr && entry->series.metric->kind == MetricKind::kCounter) {
      // Exact for counters past 2^53 when nothing scales them.
      std::optional<uint64_t> u;
      if (rule == nullptr || rule->scale == 1) u = GnmiScalarAsUint(leaf.value);
      if (!u && *number >= 0) u = static_cast<uint64_t>(*number);
      if (!u) {
        ++errors_;
        return;
      }
      p.counter = *u;
    }
    if (rule != nullptr &&
        (!rule->event_kind.empty() || !rule->value_label.empty() || !rule->join_label.empty())) {
      if (buf.texts_used == buf.texts.size()) buf.texts.emplace_back();
      buf.texts[buf.texts_used] =
          rule->value_label.empty() ? ScalarText(leaf.value) : rule->Text(leaf.value);
      p.text = static_cast<int32_t>(buf.texts_used++);
    }
    buf.points.push_back(p);
    ++updates_;
  }

  // Poll thread: moves the pending points out and emits them.
  void Drain(Emitter& emitter) {
    {
      absl::MutexLock lock(&mu_);
      std::swap(pending_, draining_);
    }
    ++cycle_;
    joins_changed_ = false;
    static const std::string kNoText;
    for (const PendingPoint& p : draining_.points) {
      PathEntry& e = *p.entry;
      const std::string& text = p.text >= 0 ? draining_.texts[p.text] : kNoText;
      if (!e.series.rule->join_label.empty()) {
        ApplyJoin(e, p.deleted ? kNoText : text);
        continue;
      }
      if (!e.join_key.empty() && !Resolve(e)) {
        Hold(e, p, text);
        continue;
      }
      EmitPoint(emitter, e, p, text);
    }
    draining_.Clear();
    if (joins_changed_) ReleaseHeld(emitter);
    Restate(emitter);
  }

  void EmitPoint(Emitter& emitter, PathEntry& e, const PendingPoint& p, const std::string& text) {
    if (!e.series.rule->value_label.empty()) {
      EmitAttribute(emitter, e, p, text);
      return;
    }
    if (p.deleted) {
      e.has_last = false;
      return;
    }
    if (!e.defined) {
      e.series_id = emitter.DefineSeries(e.series.metric->name, e.series.metric->kind,
                                         e.series.labels);
      e.defined = true;
      if (e.series.metric->kind == MetricKind::kGauge && !e.in_gauges) {
        gauges_.push_back(&e);
        e.in_gauges = true;
      }
    }
    e.last_cycle = cycle_;
    if (e.series.metric->kind == MetricKind::kCounter) {
      emitter.Counter(e.series_id, p.counter, p.time_unix_nano);
    } else {
      emitter.Gauge(e.series_id, p.gauge, p.time_unix_nano);
    }
    if (p.text >= 0 && !e.series.rule->event_kind.empty() && e.has_last && e.last != p.gauge) {
      EventRecord event;
      event.kind = e.series.rule->event_kind;
      event.time_unix_nano = p.time_unix_nano;
      event.labels = e.series.labels;
      event.attributes = {{"metric", std::string(e.series.metric->name)},
                          {"value", text},
                          {"previous_value", absl::StrCat(e.last)},
                          {"value_number", absl::StrCat(p.gauge)}};
      emitter.Event(std::move(event));
    }
    e.has_last = true;
    e.last = p.gauge;
  }

  // A join leaf (an interface's transceiver): claims its value for the labels it captured,
  // and gives up what it claimed before; a delete or an empty text claims nothing.
  void ApplyJoin(PathEntry& e, const std::string& text) {
    const std::string key =
        text.empty() ? std::string()
                     : absl::StrCat(e.series.rule->join_label, std::string(1, '\0'), text);
    if (key == e.claimed_key) return;
    if (!e.claimed_key.empty()) {
      auto it = joins_.find(e.claimed_key);
      if (it != joins_.end()) {
        it->second.claims.erase(e.claim_name);
        UpdateEffective(it->second);
      }
    }
    e.claimed_key = key;
    if (key.empty()) return;
    Labels labels;
    for (const Label& l : e.series.labels) {
      if (l.name != "switch") labels.push_back(l);
    }
    e.claim_name = FormatSeries("", labels);
    JoinTarget& target = joins_[key];
    target.claims[e.claim_name] = std::move(labels);
    UpdateEffective(target);
  }

  void UpdateEffective(JoinTarget& t) {
    const Labels* now = t.claims.empty() ? nullptr : &t.claims.begin()->second;
    if (now == t.effective) return;
    t.effective = now;
    ++t.generation;
    joins_changed_ = true;
  }

  // Puts the joined labels in place of the joined one (component=X -> interface=Ethernet1);
  // false while no join names the value. A series whose join changed is a new series.
  bool Resolve(PathEntry& e) {
    auto it = joins_.find(e.join_key);
    const JoinTarget* t = it == joins_.end() ? nullptr : &it->second;
    if (t == nullptr || t->effective == nullptr) return false;
    if (t == e.joined_to && t->generation == e.joined_generation) return true;
    e.joined_to = t;
    e.joined_generation = t->generation;
    const std::string_view joined(e.join_key.data(), e.join_key.find('\0'));
    Labels labels;
    for (const Label& l : e.unjoined) {
      if (l.name != joined) labels.push_back(l);
    }
    for (const Label& l : *t->effective) {
      if (FindLabel(labels, l.name) == nullptr) labels.push_back(l);
    }
    NormalizeLabels(labels);
    if (e.info != nullptr) {
      // An attribute leaf leaves the info series of its old labels.
      const std::string& name = e.series.rule->value_label;
      std::erase_if(e.info->attributes, [&](const Label& l) { return l.name == name; });
      e.info->defined = false;
      e.info = nullptr;
    }
    e.series.labels = std::move(labels);
    e.defined = false;
    e.has_last = false;  // the old series is not restated: it goes stale
    return true;
  }

  // The latest point of a series whose join is not known yet (an optics leaf that came
  // before its interface's transceiver leaf), kept until it is.
  void Hold(PathEntry& e, const PendingPoint& p, const std::string& text) {
    e.holding = !p.deleted;
    e.held_time = p.time_unix_nano;
    e.held_counter = p.counter;
    e.held_gauge = p.gauge;
    e.held_text = text;
    if (!e.listed_unresolved) {
      unresolved_.push_back(&e);
      e.listed_unresolved = true;
    }
  }

  void ReleaseHeld(Emitter& emitter) {
    std::erase_if(unresolved_, [&](PathEntry* e) {
      if (!Resolve(*e)) return false;
      e->listed_unresolved = false;
      if (e->holding) {
        e->holding = false;
        const PendingPoint p{e, e->held_time, e->held_counter, e->held_gauge, false,
                             e->held_text.empty() ? -1 : 0};
        EmitPoint(emitter, *e, p, e->held_text);
      }
      return true;
    });
  }

  // ON_CHANGE leaves (oper-status, LLDP neighbours) arrive once and then only when they
  // change; without a point every cycle the daemon would take them for stale. Their last
  // value is restated each cycle, timed now.
  void Restate(Emitter& emitter) {
    const int64_t now = absl::ToUnixNanos(absl::Now());
    for (PathEntry* e : gauges_) {
      if (e->has_last && e->last_cycle != cycle_) emitter.Gauge(e->series_id, e->last, now);
    }
    for (auto& [key, info] : infos_) {
      if (info.lldp_dirty) CheckLldp(emitter, info, now);
      if (!info.defined || info.attributes.empty()) continue;
      if (info.last_cycle != cycle_) emitter.Gauge(info.series_id, 1, now);
      if (info.mismatch_defined) emitter.Gauge(info.mismatch_id, info.mismatch, now);
    }
  }

  // The neighbour a port reports against the one the topology file puts there:
  // fabric_lldp_neighbor_mismatch 1/0, and an lldp.mismatch event when it starts.
  void CheckLldp(Emitter& emitter, InfoSeries& info, int64_t now) {
    info.lldp_dirty = false;
    if (topology_ == nullptr) return;
    const std::string* sw = FindLabel(info.base, "switch");
    const std::string* port = FindLabel(info.base, "interface");
    const std::string* system = FindLabel(info.attributes, "neighbor_system");
    const std::string* port_id = FindLabel(info.attributes, "neighbor_port");
    // The system name and port-id come as two leaves; judge once both are known, or a cycle
    // after the name when no port-id came with it (a neighbour that announces none).
    if (sw == nullptr || port == nullptr || system == nullptr) return;
    if (port_id == nullptr) {
      if (info.lldp_name_alone_since == 0) info.lldp_name_alone_since = now;
      if (now - info.lldp_name_alone_since < absl::ToInt64Nanoseconds(kLldpPortIdWait)) {
        info.lldp_dirty = true;  // look again next cycle
        return;
      }
    }
    info.lldp_name_alone_since = 0;
    const LldpCheck check =
        CheckLldpNeighbor(*topology_, *sw, *port, *system, port_id ? *port_id : "");
    if (check.verdict == LldpCheck::Verdict::kNotInTopology) return;
    const double mismatch = check.verdict == LldpCheck::Verdict::kMismatch ? 1 : 0;
    if (!info.mismatch_defined) {
      info.mismatch_id = emitter.DefineSeries("fabric_lldp_neighbor_mismatch", MetricKind::kGauge,
                                              {{"switch", *sw}, {"interface", *port}});
      info.mismatch_defined = true;
    }
    if (mismatch == 1 && info.mismatch != 1) {
      const std::string announced = absl::StrCat(*system, "/", port_id ? *port_id : "");
      spdlog::warn("gnmi: {} port {}: LLDP neighbour {} but the topology says {}", *sw, *port,
                   announced, check.expected);
      EventRecord event;
      event.kind = "lldp.mismatch";
      event.time_unix_nano = now;
      event.labels = {{"switch", *sw}, {"interface", *port}};
      event.attributes = {{"expected", check.expected}, {"announced", announced}};
      emitter.Event(std::move(event));
    }
    info.mismatch = mismatch;
  }

  // An attribute leaf sets (or, deleted, removes) one label of its info series, whose value
  // is 1; a changed label set is a new series, and the old one goes stale.
  void EmitAttribute(Emitter& emitter, PathEntry& e, const PendingPoint& p,
                     const std::string& text) {
    if (e.info == nullptr) {
      InfoSeries& info = infos_[FormatSeries(e.series.metric->name, e.series.labels)];
      info.base = e.series.labels;
      e.info = &info;
    }
    InfoSeries& info = *e.info;
    const std::string& label = e.series.rule->value_label;
    const std::string value = p.deleted ? "" : text;
    auto it = std::find_if(info.attributes.begin(), info.attributes.end(),
                           [&](const Label& l) { return l.name == label; });
    const std::string old = it == info.attributes.end() ? "" : it->value;
    if (value != old) {
      if (it != info.attributes.end()) info.attributes.erase(it);
      if (!value.empty()) info.attributes.push_back({label, value});
      info.defined = false;
      info.lldp_dirty = e.series.metric->name == "fabric_lldp_neighbor_info";
    }
    if (info.attributes.empty()) return;
    if (!info.defined) {
      Labels labels = info.base;
      labels.insert(labels.end(), info.attributes.begin(), info.attributes.end());
      info.series_id = emitter.DefineSeries(e.series.metric->name, MetricKind::kGauge,
                                            std::move(labels));
      info.defined = true;
    }
    emitter.Gauge(info.series_id, 1, p.time_unix_nano);
    info.last_cycle = cycle_;
  }

  TargetStats Stats() const {
    TargetStats s;
    s.name = config_.name;
    // Connected when every stream is: a target half of whose paths are missing is not healthy.
    // Optional subscriptions do not count: a target may refuse them (counted apart).
    s.client.connected = !clients_.empty();
    for (size_t i = 0; i < clients_.size(); ++i) {
      const GnmiClient::Stats cs = clients_[i]->stats();
      if (!optional_[i]) s.client.connected = s.client.connected && cs.connected;
      if (cs.refused) ++s.refused_subscriptions;
      s.client.responses += cs.responses;
      s.client.errors += cs.errors;
      s.client.reconnects += cs.reconnects;
      s.client.last_response_unix_nano =
          std::max(s.client.last_response_unix_nano, cs.last_response_unix_nano);
      if (!cs.last_error.empty()) s.client.last_error = cs.last_error;
    }
    absl::MutexLock lock(&mu_);
    s.updates = updates_;
    s.unmapped = unmapped_;
    s.errors = errors_;
    s.dropped = dropped_;
    s.deletes = deletes_;
    s.synced = synced_;
    return s;
  }

  // Health series ids, defined on the first Collect.
  struct HealthIds {
    uint32_t connected, last_update, updates, errors, reconnects, unmapped, dropped, refused;
  } health{};

 private:
  PathEntry* Lookup(const GnmiLeaf& leaf) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    std::vector<std::unique_ptr<PathEntry>>& bucket = paths_[HashLeaf(leaf)];
    for (const auto& e : bucket) {
      if (SamePath(*e, leaf)) return e.get();
    }
    if (path_count_ >= max_paths_) return nullptr;
    auto e = std::make_unique<PathEntry>();
    e->origin = leaf.origin;
    e->target = leaf.target;
    e->elems = leaf.elems;
    e->mapped = profile_.Map(leaf, e->series) &&
                (e->series.metric != nullptr || !e->series.rule->join_label.empty());
    if (e->mapped) {
      e->series.labels.push_back({"switch", config_.name});
      NormalizeLabels(e->series.labels);
      if (e->series.metric != nullptr) {
        for (const std::string& name : profile_.join_labels()) {
          if (const std::string* v = FindLabel(e->series.labels, name)) {
            e->join_key = absl::StrCat(name, std::string(1, '\0'), *v);
            e->unjoined = e->series.labels;
            break;
          }
        }
      }
    }
    ++path_count_;
    bucket.push_back(std::move(e));
    return bucket.back().get();
  }

  const GnmiTargetConfig config_;
  const GnmiProfile& profile_;
  const size_t max_pending_;
  const size_t max_paths_;

  mutable absl::Mutex mu_;
  GnmiDecoder decoder_ ABSL_GUARDED_BY(mu_);
  int64_t now_unix_nano_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<uint64_t, std::vector<std::unique_ptr<PathEntry>>> paths_
      ABSL_GUARDED_BY(mu_);
  size_t path_count_ ABSL_GUARDED_BY(mu_) = 0;
  PendingBuffer pending_ ABSL_GUARDED_BY(mu_);
  uint64_t updates_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t unmapped_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t errors_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t deletes_ ABSL_GUARDED_BY(mu_) = 0;
  bool synced_ ABSL_GUARDED_BY(mu_) = false;

  const std::shared_ptr<const Topology> topology_;
  PendingBuffer draining_;  // poll thread only
  uint64_t cycle_ = 0;      // poll thread only
  std::vector<PathEntry*> gauges_;  // poll thread only: defined gauge series
  // Poll thread only; node map: entries point into it.
  absl::node_hash_map<std::string, InfoSeries> infos_;
  // Poll thread only: joins by "<label>\0<value>" (node map: entries point into it), the
  // series waiting for theirs, and whether this cycle changed one.
  absl::node_hash_map<std::string, JoinTarget> joins_;
  std::vector<PathEntry*> unresolved_;
  bool joins_changed_ = false;
  // Last: destroyed first, so that no callback reaches a half-destroyed target.
  std::vector<std::unique_ptr<GnmiClient>> clients_;
  std::vector<bool> optional_;  // per client: its one subscription is optional
};

absl::StatusOr<std::unique_ptr<GnmiSwitchCollector>> GnmiSwitchCollector::Create(
    Options options, std::vector<GnmiProfile> profiles) {
  std::vector<std::string> problems;
  for (const GnmiTargetConfig& t : options.targets) {
    const bool known = std::any_of(profiles.begin(), profiles.end(),
                                   [&](const GnmiProfile& p) { return p.name() == t.profile; });
    if (!known) {
      std::string names;
      for (const GnmiProfile& p : profiles) absl::StrAppend(&names, names.empty() ? "" : ", ", p.name());
      problems.push_back(absl::StrCat(t.origin, ": target ", t.name, ": unknown profile `",
                                      t.profile, "` (known: ", names, ")"));
    }
  }
  if (!problems.empty()) {
    std::string message;
    for (const std::string& p : problems) absl::StrAppend(&message, message.empty() ? "" : "\n", p);
    return absl::InvalidArgumentError(message);
  }
  return std::unique_ptr<GnmiSwitchCollector>(
      new GnmiSwitchCollector(std::move(options), std::move(profiles)));
}

absl::StatusOr<std::unique_ptr<GnmiSwitchCollector>> GnmiSwitchCollector::FromFiles(
    const std::string& targets_file, const std::string& profiles_dir, Options options) {
  absl::StatusOr<std::vector<GnmiTargetConfig>> targets = LoadGnmiTargetsFile(targets_file);
  if (!targets.ok()) return targets.status();
  absl::StatusOr<std::vector<GnmiProfile>> profiles = LoadGnmiProfiles(profiles_dir);
  if (!profiles.ok()) {
    return absl::Status(profiles.status().code(),
                        absl::StrCat("gNMI profiles in ", profiles_dir, ": ",
                                     profiles.status().message()));
  }
  options.targets = *std::move(targets);
  return Create(std::move(options), *std::move(profiles));
}

GnmiSwitchCollector::GnmiSwitchCollector(Options options, std::vector<GnmiProfile> profiles)
    : options_(std::move(options)), profiles_(std::move(profiles)) {
  for (const GnmiTargetConfig& t : options_.targets) {
    const GnmiProfile* profile = nullptr;
    for (const GnmiProfile& p : profiles_) {
      if (p.name() == t.profile) profile = &p;
    }
    targets_.push_back(std::make_unique<Target>(t, *profile, options_));
  }
}

GnmiSwitchCollector::~GnmiSwitchCollector() { Stop(); }

void GnmiSwitchCollector::Start() {
  if (scheduler_) return;
  scheduler_ = std::make_unique<GnmiScheduler>();
  for (auto& t : targets_) t->MakeClients(options_.channel, *scheduler_);
  for (auto& t : targets_) t->StartClients();
  spdlog::info("gnmi: subscribing to {} targets", targets_.size());
}

void GnmiSwitchCollector::Stop() {
  for (auto& t : targets_) t->StopClients();
}

void GnmiSwitchCollector::HandleResponse(size_t index,
                                         const ::gnmi::SubscribeResponse& response) {
  targets_[index]->OnResponse(response);
}

GnmiSwitchCollector::TargetStats GnmiSwitchCollector::target_stats(size_t index) const {
  return targets_[index]->Stats();
}

absl::Status GnmiSwitchCollector::Collect(Emitter& emitter) {
  if (!health_defined_) {
    for (auto& t : targets_) {
      Labels labels = options_.self_labels;
      labels.push_back({"target", t->config().name});
      auto define = [&](std::string_view name, MetricKind kind) {
        return emitter.DefineSeries(name, kind, labels);
      };
      t->health = {define("railwatch_gnmi_target_connected", MetricKind::kGauge),
                   define("railwatch_gnmi_target_last_update_timestamp_seconds",
                          MetricKind::kGauge),
                   define("railwatch_gnmi_target_updates_total", MetricKind::kCounter),
                   define("railwatch_gnmi_target_errors_total", MetricKind::kCounter),
                   define("railwatch_gnmi_target_reconnects_total", MetricKind::kCounter),
                   define("railwatch_gnmi_unmapped_leaves_total", MetricKind::kCounter),
                   define("railwatch_gnmi_target_dropped_points_total", MetricKind::kCounter),
                   define("railwatch_gnmi_target_refused_subscriptions", MetricKind::kGauge)};
    }
    health_defined_ = true;
  }
  const int64_t now = absl::ToUnixNanos(absl::Now());
  for (auto& t : targets_) {
    t->Drain(emitter);
    const TargetStats s = t->Stats();
    emitter.Gauge(t->health.connected, s.client.connected ? 1 : 0, now);
    if (s.client.last_response_unix_nano > 0) {
      emitter.Gauge(t->health.last_update, static_cast<double>(s.client.last_response_unix_nano) / 1e9,
                    now);
    }
    emitter.Counter(t->health.updates, s.updates, now);
    emitter.Counter(t->health.errors, s.errors + s.client.errors, now);
    emitter.Counter(t->health.reconnects, s.client.reconnects, now);
    emitter.Counter(t->health.unmapped, s.unmapped, now);
    emitter.Counter(t->health.dropped, s.dropped, now);
    emitter.Gauge(t->health.refused, static_cast<double>(s.refused_subscriptions), now);
  }
  // A target that is down is retried and reported by its own health series (and the client's
  // log): it is not a failure of the collector, which goes on for the other targets.
  return absl::OkStatus();
}

}  // namespace railwatch
