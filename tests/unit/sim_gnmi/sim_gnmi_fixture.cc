#include "unit/sim_gnmi/sim_gnmi_fixture.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "common/labels.h"

namespace railwatch::sim::testing {

::gnmi::Path P(std::string_view text, std::string_view target) {
  ::gnmi::Path path;
  if (!target.empty()) path.set_target(std::string(target));
  for (absl::string_view part : absl::StrSplit(AsAbsl(text), '/', absl::SkipEmpty())) {
    ::gnmi::PathElem* e = path.add_elem();
    const size_t bracket = part.find('[');
    e->set_name(std::string(part.substr(0, bracket)));
    if (bracket == absl::string_view::npos) continue;
    for (absl::string_view kv : absl::StrSplit(part.substr(bracket), ']', absl::SkipEmpty())) {
      kv.remove_prefix(1);  // '['
      std::pair<std::string, std::string> split = absl::StrSplit(kv, absl::MaxSplits('=', 1));
      (*e->mutable_key())[split.first] = split.second;
    }
  }
  return path;
}

std::string PathText(const ::gnmi::Path& prefix, const ::gnmi::Path& path) {
  std::string out;
  for (const ::gnmi::Path* p : {&prefix, &path}) {
    for (const ::gnmi::PathElem& e : p->elem()) {
      absl::StrAppend(&out, "/", e.name());
      std::map<std::string, std::string> keys(e.key().begin(), e.key().end());
      for (const auto& [k, v] : keys) absl::StrAppend(&out, "[", k, "=", v, "]");
    }
  }
  return out;
}

std::map<std::string, ::gnmi::TypedValue> Leaves(const ::gnmi::Notification& n) {
  std::map<std::string, ::gnmi::TypedValue> out;
  for (const ::gnmi::Update& u : n.update()) out[PathText(n.prefix(), u.path())] = u.val();
  return out;
}

::gnmi::SubscribeRequest StreamRequest(const std::vector<::gnmi::Path>& paths,
                                       ::gnmi::SubscriptionMode mode, absl::Duration interval,
                                       ::gnmi::SubscriptionList::Mode list_mode) {
  ::gnmi::SubscribeRequest req;
  ::gnmi::SubscriptionList* list = req.mutable_subscribe();
  list->set_mode(list_mode);
  for (const ::gnmi::Path& p : paths) {
    ::gnmi::Subscription* s = list->add_subscription();
    *s->mutable_path() = p;
    s->set_mode(mode);
    s->set_sample_interval(static_cast<uint64_t>(absl::ToInt64Nanoseconds(interval)));
  }
  return req;
}

std::vector<::gnmi::Notification> ReadUntilSync(Stream& s) {
  std::vector<::gnmi::Notification> out;
  ::gnmi::SubscribeResponse r;
  while (s.Read(&r)) {
    if (r.sync_response()) return out;
    out.push_back(r.update());
  }
  ADD_FAILURE() << "stream ended before sync_response";
  return out;
}

::gnmi::Notification Once(const ::gnmi::Path& path, std::unique_ptr<::gnmi::gNMI::Stub> stub,
                          std::unique_ptr<grpc::ClientContext> ctx) {
  std::unique_ptr<Stream> stream = stub->Subscribe(ctx.get());
  EXPECT_TRUE(stream->Write(StreamRequest({path}, ::gnmi::SAMPLE, absl::ZeroDuration(),
                                          ::gnmi::SubscriptionList::ONCE)));
  std::vector<::gnmi::Notification> got = ReadUntilSync(*stream);
  EXPECT_EQ(got.size(), 1u);
  return got.empty() ? ::gnmi::Notification() : got[0];
}

std::vector<NicTraffic> EveryNic(int hosts, int nics, uint64_t tx_bytes, uint64_t rx_bytes) {
  std::vector<NicTraffic> t;
  for (int h = 1; h <= hosts; ++h) {
    for (int k = 0; k < nics; ++k) t.push_back({h, k, tx_bytes, rx_bytes, tx_bytes / 4096, rx_bytes / 4096, true});
  }
  return t;
}

PortCounters CountersOf(const SwitchFabric& f, int switch_index, int port) {
  PortCounters c;
  f.WithSwitch(switch_index, [&](const SimSwitch& s) { c = s.ports[port].c; });
  return c;
}

void SimGnmiTest::Start(std::vector<std::string> dialects, int hosts, int nics, int spines,
                        GnmiServeOptions options, SwitchFabric::Options o) {
  o.hosts = hosts;
  o.nics_per_host = nics;
  o.spines = spines;
  o.dialects = std::move(dialects);
  nics_ = nics;
  now_ = absl::Now();
  absl::StatusOr<std::unique_ptr<SwitchFabric>> f = SwitchFabric::Create(o, now_);
  ASSERT_TRUE(f.ok()) << f.status();
  fabric_ = std::move(*f);
  username_ = options.username;
  password_ = options.password;
  absl::StatusOr<std::unique_ptr<GnmiSwitchFarm>> farm = GnmiSwitchFarm::Start(fabric_.get(), options);
  ASSERT_TRUE(farm.ok()) << farm.status();
  farm_ = std::move(*farm);
  for (int h = 1; h <= hosts; ++h) {
    for (int k = 0; k < nics; ++k) {
      NicTraffic& t = traffic_.emplace_back();
      t.host = h;
      t.nic = k;
      t.tx_bytes = 1'000'000ull * (h * 10 + k);
      t.rx_bytes = 2'000'000ull * (h * 10 + k);
    }
  }
  Advance(absl::Milliseconds(100));
}

void SimGnmiTest::TearDown() {
  if (farm_ != nullptr) farm_->Shutdown();
}

void SimGnmiTest::Advance(absl::Duration d) {
  now_ += d;
  const double s = absl::ToDoubleSeconds(d);
  for (NicTraffic& t : traffic_) {
    if (!t.up) continue;
    const auto bytes = static_cast<uint64_t>(40e9 * s);
    t.tx_bytes += bytes;
    t.rx_bytes += bytes / 2;
    t.tx_packets += bytes / 4096;
    t.rx_packets += bytes / 8192;
  }
  ASSERT_TRUE(fabric_->Update(now_, traffic_).ok());
  farm_->Pump();
}

void SimGnmiTest::SetNicUp(int host, int nic, bool up) {
  traffic_[(host - 1) * nics_ + nic].up = up;
  Advance(absl::Milliseconds(10));
}

const NicTraffic& SimGnmiTest::Nic(int host, int nic) const { return traffic_[(host - 1) * nics_ + nic]; }

std::unique_ptr<::gnmi::gNMI::Stub> SimGnmiTest::Stub(int switch_index) {
  return ::gnmi::gNMI::NewStub(
      grpc::CreateChannel(farm_->address(switch_index), grpc::InsecureChannelCredentials()));
}

std::unique_ptr<grpc::ClientContext> SimGnmiTest::Context(absl::Duration deadline) {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  if (!username_.empty()) {
    ctx->AddMetadata("username", username_);
    ctx->AddMetadata("password", password_);
  }
  return ctx;
}

}  // namespace railwatch::sim::testing
