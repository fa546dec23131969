// Aggregations (sum, avg, min, max, count) and the peer functions (peer_median, peer_ratio).

#include <algorithm>
#include <limits>

#include "absl/synchronization/mutex.h"
#include "engine/condition_internal.h"

namespace railwatch::cond {
namespace {

// ---- Aggregations and peers ---------------------------------------------------------------

// The groups of a vector's elements: numbered 0, 1, 2 ... in order of first appearance.
struct Groups {
  std::vector<uint32_t> group_of;  // per element
  std::vector<uint32_t> key;       // per group: its id in the node's KeyInterner
  std::vector<uint32_t> first;     // per group: its first element
};

// Groups elements by the interner's keys. `local` is the node's scratch (key id -> group),
// kept between evaluations so that it is not allocated each time.
Groups GroupElements(const EvalContext& ctx, const Vec& in, KeyInterner& keys,
                     std::vector<uint32_t>& local) {
  keys.Prepare(ctx.store, in.size());
  Groups g;
  g.group_of.resize(in.size());
  for (uint32_t i = 0; i < in.size(); ++i) {
    if (!in[i].label_source) PrefetchLabels(in, i);
    const uint32_t k = keys.Id(in[i]);
    if (k >= local.size()) local.resize(keys.size(), KeyTable::kNone);
    if (local[k] == KeyTable::kNone) {
      local[k] = static_cast<uint32_t>(g.key.size());
      g.key.push_back(k);
      g.first.push_back(i);
    }
    g.group_of[i] = local[k];
  }
  for (uint32_t k : g.key) local[k] = KeyTable::kNone;
  return g;
}

// A node that groups its operand's elements by some of their labels, with the keys it has
// seen kept between evaluations.
class GroupingNode : public OneChildNode {
 public:
  GroupingNode(LabelSet grouping, NodePtr child)
      : OneChildNode(std::move(child)),
        grouping_(std::move(grouping)),
        // No clause (aggregations only): one group without labels.
        keys_(grouping_.mode == LabelSet::Mode::kAll ? LabelSet{LabelSet::Mode::kOnly, {}}
                                                     : grouping_) {}

 protected:
  void PrintGrouping(std::string& out) const {
    PrintLabelSet(grouping_.mode == LabelSet::Mode::kOnly ? "by " : "without ", grouping_, out);
  }

  const LabelSet grouping_;
  mutable absl::Mutex mu_;
  mutable KeyInterner keys_ ABSL_GUARDED_BY(mu_);
  mutable std::vector<uint32_t> local_ ABSL_GUARDED_BY(mu_);  // GroupElements' scratch
};

class AggregationNode final : public GroupingNode {
 public:
  AggregationNode(AggOp op, LabelSet grouping, NodePtr child)
      : GroupingNode(std::move(grouping), std::move(child)), op_(op) {}

  Vec Eval(const EvalContext& ctx, const ValueFilter* filter) const override {
    auto members = std::make_shared<GroupMembers>();
    members->items = child_->Eval(ctx, nullptr);
    const Vec& in = members->items;
    absl::MutexLock lock(&mu_);
    const Groups groups = GroupElements(ctx, in, keys_, local_);
    const std::vector<uint32_t>& group_of = groups.group_of;
    const std::vector<uint32_t>& first = groups.first;
    struct Acc {
      double sum = 0, min = 0, max = 0, count = 0;
      bool unknown = false;  // a member is: the group's value is not known yet
    };
    std::vector<Acc> acc(first.size());
    for (size_t i = 0; i < in.size(); ++i) {
      Acc& a = acc[group_of[i]];
      if (in[i].unknown) {
        a.unknown = true;
        continue;
      }
      const double v = in[i].value;
      if (a.count == 0) {
        a.min = a.max = v;
      } else {
        a.min = std::min(a.min, v);
        a.max = std::max(a.max, v);
      }
      a.sum += v;
      ++a.count;
    }
    // Members group by group (a counting sort), for the evidence of the groups that survive.
    members->start.assign(first.size() + 1, 0);
    for (uint32_t g : group_of) ++members->start[g + 1];
    for (size_t g = 0; g < first.size(); ++g) members->start[g + 1] += members->start[g];
    members->order.resize(in.size());
    std::vector<uint32_t> fill(members->start.begin(), members->start.end() - 1);
    for (uint32_t i = 0; i < in.size(); ++i) members->order[fill[group_of[i]]++] = i;
    std::shared_ptr<const GroupMembers> shared = std::move(members);

    Vec out;
    if (!filter) out.reserve(first.size());
    for (uint32_t g = 0; g < first.size(); ++g) {
      const Acc& a = acc[g];
      double value = 0;
      switch (op_) {
        case AggOp::kSum: value = a.sum; break;
        case AggOp::kAvg: value = a.sum / a.count; break;
        case AggOp::kMin: value = a.min; break;
        case AggOp::kMax: value = a.max; break;
        case AggOp::kCount: value = a.count; break;
      }
      if (filter && !a.unknown && !filter->Keep(value)) continue;  // the comparison above would drop it
      Item item;
      item.value = value;
      item.unknown = a.unknown;
      item.labels = keys_.KeyLabels(groups.key[g]);
      item.label_source = keys_.source();
      item.label_index = groups.key[g];
      item.evidence.more = GroupEvidence(shared, g);
      out.push_back(std::move(item));
    }
    return out;
  }

  void Print(std::string& out) const override {
    static constexpr std::string_view kNames[] = {"sum", "avg", "min", "max", "count"};
    out += kNames[static_cast<int>(op_)];
    if (grouping_.mode != LabelSet::Mode::kAll) {
      out += ' ';
      PrintGrouping(out);
      out += ' ';
    }
    out += '(';
    child_->Print(out);
    out += ')';
  }

 private:
  const AggOp op_;
};

// peer_median / peer_ratio: each element against the median of the others in its group.
class PeerNode final : public GroupingNode {
 public:
  PeerNode(bool ratio, LabelSet grouping, NodePtr child)
      : GroupingNode(std::move(grouping), std::move(child)), ratio_(ratio) {}

  Vec Eval(const EvalContext& ctx, const ValueFilter* filter) const override {
    Vec in = child_->Eval(ctx, nullptr);
    absl::MutexLock lock(&mu_);
    const Groups groups = GroupElements(ctx, in, keys_, local_);
    const std::vector<uint32_t>& group_of = groups.group_of;
    const std::vector<uint32_t>& first = groups.first;
    // Each group's values.
    // Unknown elements (no value yet) are nobody's peers; they stay, unknown.
    std::vector<std::vector<double>> values(first.size());
    for (uint32_t i = 0; i < in.size(); ++i) {
      if (!in[i].unknown) values[group_of[i]].push_back(in[i].value);
    }
    // The median of a group without one copy of v depends only on v and three order statistics
    // of the group, so no sort: with s the sorted values and one copy of v removed, the j-th
    // of the others is s[j] when s[j + 1] <= v (the removed copy is further on) and s[j + 1]
    // otherwise.
    struct Stats {
      size_t others = 0;
      double s[3] = {0, 0, 0};  // s[lo], s[lo + 1], s[lo + 2]
      size_t lo = 0;
    };
    std::vector<Stats> stats(first.size());
    for (size_t g = 0; g < values.size(); ++g) {
      std::vector<double>& v = values[g];
      if (v.size() < 2) continue;  // nobody to compare with
      Stats& st = stats[g];
      st.others = v.size() - 1;
      const size_t k = st.others / 2;
      st.lo = st.others % 2 == 1 ? k : k - 1;
      std::nth_element(v.begin(), v.begin() + st.lo, v.end());
      st.s[0] = v[st.lo];
      // The next two order statistics: the two smallest after lo.
      double a = std::numeric_limits<double>::infinity(), b = a;
      for (size_t i = st.lo + 1; i < v.size(); ++i) {
        if (v[i] < a) {
          b = a;
          a = v[i];
        } else if (v[i] < b) {
          b = v[i];
        }
      }
      st.s[1] = a;
      st.s[2] = b;
    }
    std::vector<std::optional<double>> result(in.size());
    for (uint32_t i = 0; i < in.size(); ++i) {
      const Stats& st = stats[group_of[i]];
      if (in[i].unknown) {
        result[i] = 0;
        continue;
      }
      if (st.others == 0) continue;
      const double v = in[i].value;
      // The j-th of the others, for j = lo + d.
      auto other = [&](size_t d) { return st.s[d + 1] <= v ? st.s[d] : st.s[d + 1]; };
      const double median = st.others % 2 == 1 ? other(0) : (other(0) + other(1)) / 2;
      if (!ratio_) {
        result[i] = median;
      } else if (median != 0) {
        result[i] = Arith(BinOp::kDiv, v, median);
      }
    }
    Vec out;
    for (uint32_t i = 0; i < in.size(); ++i) {
      if (!result[i] || (filter && !in[i].unknown && !filter->Keep(*result[i]))) continue;
      in[i].value = *result[i];
      out.push_back(std::move(in[i]));
    }
    return out;
  }

  void Print(std::string& out) const override {
    out += ratio_ ? "peer_ratio(" : "peer_median(";
    child_->Print(out);
    out += ", ";
    PrintGrouping(out);
    out += ')';
  }

 private:
  const bool ratio_;
};

}  // namespace

NodePtr MakeAggregation(AggOp op, LabelSet grouping, NodePtr child) {
  return std::make_unique<AggregationNode>(op, std::move(grouping), std::move(child));
}
NodePtr MakePeer(bool ratio, LabelSet grouping, NodePtr child) {
  return std::make_unique<PeerNode>(ratio, std::move(grouping), std::move(child));
}

}  // namespace railwatch::cond
