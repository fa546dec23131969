// Evidence: what each element carries, merged and capped, gathered lazily.

#include <algorithm>
#include <tuple>

#include "engine/condition_internal.h"

namespace railwatch::cond {

// ---- Evidence -----------------------------------------------------------------------------

std::shared_ptr<const Labels> BorrowLabels(const Labels* labels) {
  return std::shared_ptr<const Labels>(std::shared_ptr<const Labels>(), labels);
}

std::shared_ptr<const Labels> OwnLabels(Labels labels) {
  return std::make_shared<const Labels>(std::move(labels));
}

namespace {
bool SameSeriesEvidence(const InlineEvidence& a, const InlineEvidence& b) {
  return a.series == b.series &&
         (a.origin == b.origin || (a.origin->function == b.origin->function &&
                                   a.origin->window == b.origin->window));
}
EvidenceRef ToRef(const InlineEvidence& e) {
  return EvidenceRef{e.series, e.origin->function, e.origin->window, e.value};
}

class ConcreteSource final : public EvidenceSource {
 public:
  explicit ConcreteSource(MergedEvidence e) : e_(std::move(e)) {}
  void AddTo(EvidenceBuilder& b) const override {
    for (const EvidenceRef& r : e_.series) b.AddSeries(r);
    for (const EventEvidence& e : e_.events) b.AddEvent(e);
  }

 private:
  MergedEvidence e_;
};

class GroupSource final : public EvidenceSource {
 public:
  GroupSource(std::shared_ptr<const GroupMembers> m, uint32_t group)
      : m_(std::move(m)), group_(group) {}
  void AddTo(EvidenceBuilder& b) const override {
    for (uint32_t i = m_->start[group_]; i < m_->start[group_ + 1]; ++i) {
      b.Add(m_->items[m_->order[i]].evidence);
    }
  }

 private:
  std::shared_ptr<const GroupMembers> m_;
  uint32_t group_;
};

class PairSource final : public EvidenceSource {
 public:
  PairSource(Evidence a, Evidence b) : a_(std::move(a)), b_(std::move(b)) {}
  void AddTo(EvidenceBuilder& b) const override {
    b.Add(a_);
    b.Add(b_);
  }

 private:
  Evidence a_, b_;
};
}  // namespace

std::shared_ptr<const EvidenceSource> ConcreteEvidence(MergedEvidence evidence) {
  return std::make_shared<const ConcreteSource>(std::move(evidence));
}

std::shared_ptr<const EvidenceSource> GroupEvidence(std::shared_ptr<const GroupMembers> members,
                                                    uint32_t group) {
  return std::make_shared<const GroupSource>(std::move(members), group);
}

void EvidenceBuilder::Spill() {
  if (spilled_) return;
  spilled_ = true;
  for (size_t i = 0; i < inline_count_; ++i) AddSeries(ToRef(inline_[i]));
  inline_count_ = 0;
}

void EvidenceBuilder::AddSeries(const EvidenceRef& ref) {
  Spill();
  std::vector<EvidenceRef>& s = merged_.series;
  size_t lowest = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].series == ref.series && s[i].window == ref.window &&
        s[i].function == ref.function) {
      return;
    }
    if (s[i].value < s[lowest].value) lowest = i;
  }
  if (s.size() < kMaxSeriesEvidence) {
    s.push_back(ref);
    return;
  }
  series_evicted_ = true;
  if (ref.value > s[lowest].value) s[lowest] = ref;
}

void EvidenceBuilder::AddEvent(const EventEvidence& event) {
  std::vector<EventEvidence>& e = merged_.events;
  size_t oldest = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    if (e[i].seq == event.seq) return;
    if (std::tie(e[i].time_unix_nano, e[i].seq) < std::tie(e[oldest].time_unix_nano, e[oldest].seq))
      oldest = i;
  }
  if (e.size() < kMaxEventEvidence) {
    e.push_back(event);
  } else if (std::tie(event.time_unix_nano, event.seq) >
             std::tie(e[oldest].time_unix_nano, e[oldest].seq)) {
    e[oldest] = event;
  }
}

void EvidenceBuilder::Add(const Evidence& evidence) {
  for (size_t i = 0; i < evidence.inline_count; ++i) {
    const InlineEvidence& ev = evidence.inline_evidence[i];
    if (!spilled_) {
      bool duplicate = false;
      for (size_t j = 0; j < inline_count_; ++j) duplicate |= SameSeriesEvidence(inline_[j], ev);
      if (duplicate) continue;
      if (inline_count_ < 2) {
        inline_[inline_count_++] = ev;
        continue;
      }
    }
    AddSeries(ToRef(ev));
  }
  if (evidence.more) evidence.more->AddTo(*this);
}

MergedEvidence EvidenceBuilder::Take() {
  Spill();
  if (series_evicted_) {
    std::stable_sort(merged_.series.begin(), merged_.series.end(),
                     [](const EvidenceRef& a, const EvidenceRef& b) { return a.value > b.value; });
  }
  std::stable_sort(merged_.events.begin(), merged_.events.end(),
                   [](const EventEvidence& a, const EventEvidence& b) {
                     return std::tie(a.time_unix_nano, a.seq) < std::tie(b.time_unix_nano, b.seq);
                   });
  MergedEvidence out = std::move(merged_);
  *this = EvidenceBuilder();
  return out;
}

void MergeEvidenceInto(Item& into, const Item& from) {
  Evidence& a = into.evidence;
  const Evidence& b = from.evidence;
  if (!a.more && !b.more) {
    // Inline when the distinct series fit in two slots (the usual binary operator).
    InlineEvidence merged[2];
    size_t n = 0;
    bool fits = true;
    for (const Evidence* e : {static_cast<const Evidence*>(&a), &b}) {
      for (size_t i = 0; i < e->inline_count && fits; ++i) {
        bool duplicate = false;
        for (size_t j = 0; j < n; ++j) duplicate |= SameSeriesEvidence(merged[j], e->inline_evidence[i]);
        if (duplicate) continue;
        if (n == 2) {
          fits = false;
        } else {
          merged[n++] = e->inline_evidence[i];
        }
      }
    }
    if (fits) {
      a.inline_count = static_cast<uint8_t>(n);
      for (size_t i = 0; i < n; ++i) a.inline_evidence[i] = merged[i];
      return;
    }
  }
  Evidence left = std::move(a);
  a = Evidence();
  a.more = std::make_shared<const PairSource>(std::move(left), b);
}

VectorElement Materialise(Item&& item) {
  VectorElement e;
  e.labels = *item.labels;
  e.value = item.value;
  e.unknown = item.unknown;
  const Evidence& ev = item.evidence;
  if (!ev.more) {
    e.evidence.reserve(ev.inline_count);
    for (size_t i = 0; i < ev.inline_count; ++i) e.evidence.push_back(ToRef(ev.inline_evidence[i]));
    return e;
  }
  EvidenceBuilder b;
  b.Add(ev);
  MergedEvidence m = b.Take();
  e.evidence = std::move(m.series);
  e.event_evidence = std::move(m.events);
  return e;
}

}  // namespace railwatch::cond
