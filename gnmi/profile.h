#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/labels.h"
#include "common/vocabulary.h"
#include "gnmi/decode.h"
#include "gnmi/gnmi.pb.h"

namespace railwatch {

// What to ask a target for: one gNMI Subscription.
struct GnmiSubscriptionSpec {
  std::string name;
  ::gnmi::Path path;  // origin and target set here when the dialect needs them (COUNTERS_DB)
  ::gnmi::SubscriptionMode mode = ::gnmi::SAMPLE;
  // SAMPLE: 0 means the target's configured interval (targets file, default 1 s).
  absl::Duration sample_interval = absl::ZeroDuration();
  bool suppress_redundant = false;
  absl::Duration heartbeat_interval = absl::ZeroDuration();
  // A path some targets of the dialect do not serve (a port's own MAC and speed): asked for
  // on a stream of its own, so that a target which refuses it (NOT_FOUND, INVALID_ARGUMENT,
  // UNIMPLEMENTED: gNMI refuses a whole Subscribe for one unknown path) still streams the
  // rest; the refusal is counted, not an outage, and asked again minutes later.
  bool optional = false;
  // `optional: <group>`: the optional subscriptions of one group (and gNMI target) share one
  // stream, refused or served as a whole (the transceiver paths of a switch that does not
  // serve openconfig-platform-transceiver). Empty with `optional`: a stream of its own.
  std::string optional_group;
};

// How one leaf becomes a canonical point.
struct GnmiValueRule {
  MetricKind kind = MetricKind::kCounter;
  double scale = 1;
  // Strings the leaf may carry and the number each stands for ("UP": 1, "DOWN": 0). Empty:
  // the value must be numeric.
  absl::flat_hash_map<std::string, double> values;
  // Non-empty: when the value changes, also an event of this kind ("switch.oper_status").
  std::string event_kind;
  // Non-empty: an attribute leaf (LLDP neighbour system name, port id). Its string value is
  // not a number but the value of this label of the (gauge) series, whose value is 1.
  // Several mappings may name the same series with different value labels: the collector
  // merges the attributes of one (series, captured labels) into one series, redefined when
  // an attribute changes. See docs/GNMI.md, "Attribute leaves".
  std::string value_label;
  // Attribute leaves only: texts the leaf may carry and the label value each becomes
  // ("QSFP56_DD": "QSFP-DD"); `values:` in the profile. An identityref's module prefix is
  // ignored when looking up, and dropped from a text not listed.
  absl::flat_hash_map<std::string, std::string> texts;
  // Texts that mean "no reading" (SONiC's "N/A" for a lane the module lacks): no point and
  // no error; a value the series had is forgotten, as for a delete.
  std::vector<std::string> absent;
  // Non-empty: a join leaf, not a series. Its text is a value of this label (a transceiver
  // component's name), and the labels the mapping captures (interface) replace that label
  // on every series that captured it. See docs/GNMI.md, "Joins".
  std::string join_label;

  // The label value an attribute leaf carries (`texts` applied).
  std::string Text(const GnmiScalar& value) const;
  // True when the value is one of `absent`.
  bool IsAbsent(const GnmiScalar& value) const;

  // The number a leaf's value stands for: `values` first for strings, then numbers and
  // numeric strings ("527") times `scale`. For an attribute leaf, 1 when it carries a
  // non-empty value. nullopt when the value means nothing here (an unknown enum string, a
  // deleted leaf): the caller counts it and drops the point.
  std::optional<double> Evaluate(const GnmiScalar& value) const;
};

// A leaf mapped to a canonical series. Labels are the captures of the path pattern plus the
// mapping's fixed labels; the switch collector adds `switch`.
struct GnmiMappedSeries {
  const MetricSpec* metric = nullptr;
  Labels labels;
  const GnmiValueRule* rule = nullptr;
};

// A network OS's paths: what to subscribe to, and how each leaf maps to the canonical series
// of common/vocabulary.cc. Shipped profiles live in profiles/gnmi/*.yaml.
class GnmiProfile {
 public:
  // Loads a profile file. Every problem in it is reported (file:line:column, one per line of
  // the status message), not only the first; series must be canonical names.
  static absl::StatusOr<GnmiProfile> LoadFile(const std::string& path);
  static absl::StatusOr<GnmiProfile> LoadString(std::string_view yaml, std::string_view file_name);

  const std::string& name() const;          // "sonic", "openconfig", "arista-eos", "cumulus"
  const std::string& description() const;
  ::gnmi::Encoding encoding() const;        // asked for in SubscriptionList.encoding
  const std::vector<GnmiSubscriptionSpec>& subscriptions() const;
  // Problems that did not stop the load (unknown keys), one "file:line:column: warning[..]"
  // line each; they are also logged.
  const std::vector<std::string>& warnings() const;
  // Every canonical series the profile's mappings name, in the order first named.
  std::vector<const MetricSpec*> series() const;
  // The labels join mappings resolve (`join: component`), sorted, without duplicates.
  const std::vector<std::string>& join_labels() const;

  // Maps a leaf by its path (origin and value are not looked at); false when no mapping in
  // the profile matches it (the leaf is ignored and counted by the caller). First matching
  // mapping wins; the mappings of an included profile come after the profile's own.
  // `out.rule` points into this profile and lives as long as it. A join mapping's leaf maps
  // with `out.metric` null and `out.rule->join_label` set.
  bool Map(const GnmiLeaf& leaf, GnmiMappedSeries& out) const;

  GnmiProfile(GnmiProfile&&) noexcept;
  GnmiProfile& operator=(GnmiProfile&&) noexcept;
  ~GnmiProfile();

 private:
  struct Impl;
  GnmiProfile();
  std::unique_ptr<Impl> impl_;
};

// Every *.yaml in `dir`, by name. Problems in one file do not stop the others; all are
// reported in the status when any file fails.
absl::StatusOr<std::vector<GnmiProfile>> LoadGnmiProfiles(const std::string& dir);

}  // namespace railwatch
