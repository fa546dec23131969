// The simulated switch ports' modules and FEC (sim/switch_phy.h): the FEC model's numbers, the
// fabric's healthy ports, and what each dialect serves of them over gNMI.
#include <set>

#include "nlohmann/json.hpp"
#include "sim/switch_phy.h"
#include "unit/sim_gnmi/sim_gnmi_fixture.h"

namespace railwatch::sim::testing {
namespace switch_optics_test {

constexpr double kLineBits = 400e9;  // one second of a 400G link

TEST(SwitchFec, CorrectedBitsFollowTheBerAndNothingIsLostWhileHealthy) {
  std::mt19937_64 rng(11);
  const FecStep f = DrawFecStep(rng, 1e-7, 10 * kLineBits);
  uint64_t codewords = 0;
  for (uint64_t n : f.codewords) codewords += n;
  EXPECT_EQ(codewords, static_cast<uint64_t>(10 * kLineBits / kFecCodewordBits));
  // 4e5 corrected bits expected at 1e-7 over 4e12 bits.
  EXPECT_NEAR(static_cast<double>(f.corrected_bits) / (10 * kLineBits), 1e-7, 0.1e-7);
  EXPECT_EQ(f.uncorrectable, 0u);
  EXPECT_EQ(f.codewords[kFecBins - 1], 0u);
  EXPECT_GT(f.corrected, 0u);
  EXPECT_EQ(f.corrected, f.codewords[1] + f.codewords[2] + f.codewords[3] + f.codewords[4]);
  EXPECT_GE(f.symbol_errors, f.corrected);
  EXPECT_EQ(DrawFecStep(rng, 1e-7, 0).corrected, 0u);
}

TEST(SwitchFec, UncorrectableCodewordsBeginAboveTheFecLimit) {
  std::mt19937_64 rng(12);
  // Under RS(544,514)'s limit of about 2.4e-4: everything corrected, many codewords with
  // several symbol errors.
  const FecStep under = DrawFecStep(rng, 1e-4, kLineBits);
  EXPECT_EQ(under.uncorrectable, 0u);
  EXPECT_GT(under.codewords[5], 0u);
  // Over it, codewords are lost every second, more the further over.
  const FecStep over = DrawFecStep(rng, 1e-3, kLineBits);
  EXPECT_GT(over.uncorrectable, 1000u);
  EXPECT_EQ(over.uncorrectable, over.codewords[kFecBins - 1]);
  const FecStep far = DrawFecStep(rng, 3e-3, kLineBits);
  EXPECT_GT(far.uncorrectable, 10 * over.uncorrectable);
  EXPECT_GT(over.symbol_errors, over.corrected_bits);  // lost codewords' symbols count too
}

PortCounters After(SwitchFabric& f, int switch_index, int port, int seconds) {
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  for (int s = 1; s <= seconds; ++s) {
    EXPECT_TRUE(
        f.Update(t0 + absl::Seconds(s), EveryNic(2, 2, 1'000'000'000ull * s, 1'000'000'000ull * s))
            .ok());
  }
  return CountersOf(f, switch_index, port);
}

TEST(SwitchOptics, EveryEthernetPortHasAHealthyModuleWhoseFecCountsTheLine) {
  SwitchFabric::Options o;
  o.hosts = 2;
  o.nics_per_host = 2;
  o.spines = 1;
  o.dialects = {"sonic", "arista-eos", "openconfig"};
  auto f = SwitchFabric::Create(o, absl::FromUnixSeconds(1'800'000'000));
  ASSERT_TRUE(f.ok()) << f.status();
  const PortCounters c = After(**f, 0, 0, 3);
  // 3 s of a 400G line at the module's healthy pre-FEC BER (3.75e-8 to 1.5e-7).
  const double ber = static_cast<double>(c.fec_corrected_bits) / (3 * kLineBits);
  EXPECT_GT(ber, 2.5e-8);
  EXPECT_LT(ber, 2e-7);
  EXPECT_EQ(c.fec_uncorrectable, 0u);
  EXPECT_GT(c.fec_corrected, 0u);
  EXPECT_GT(c.fec_codewords[0], static_cast<uint64_t>(0.99 * 3 * kLineBits / kFecCodewordBits));

  std::set<std::string> serials, components;
  for (int i = 0; i < static_cast<int>((*f)->switches().size()); ++i) {
    (*f)->WithSwitch(i, [&](const SimSwitch& sw) {
      for (const SwitchPort& p : sw.ports) {
        SCOPED_TRACE(sw.name + " " + p.name);
        const SwitchPortOptics& m = p.optics;
        ASSERT_TRUE(m.present);
        serials.insert(m.module.module.serial);
        components.insert(m.component);
        const optics::ModuleReading& id = m.module.module;
        EXPECT_EQ(id.form_factor, "OSFP");
        EXPECT_LT(m.temperature_c, *id.threshold(optics::Quantity::kTemperature).warning_high);
        EXPECT_GT(m.supply_voltage_v, *id.threshold(optics::Quantity::kSupplyVoltage).warning_low);
        for (int lane = 0; lane < NicOptics::kLanes; ++lane) {
          EXPECT_GT(m.rx_power_dbm[lane], *id.threshold(optics::Quantity::kRxPower).warning_low);
          EXPECT_GT(m.tx_power_dbm[lane], *id.threshold(optics::Quantity::kTxPower).warning_low);
          EXPECT_LT(m.tx_bias_ma[lane], *id.threshold(optics::Quantity::kTxBias).warning_high);
        }
        EXPECT_GT(p.c.fec_corrected, 0u);
      }
    });
  }
  EXPECT_EQ(serials.size(), 2u * 3 + 2);  // every module its own: 2 leaves of 3 ports, a spine of 2
  EXPECT_TRUE(components.contains("Ethernet0"));              // SONiC: the port
  EXPECT_TRUE(components.contains("Ethernet1 transceiver"));  // EOS
  EXPECT_TRUE(components.contains("transceiver-Ethernet1"));  // OpenConfig
}

TEST(SwitchOptics, APortThatGoesDownReadsNoLightAndCountsNoFec) {
  SwitchFabric::Options o;
  o.hosts = 2;
  o.nics_per_host = 2;
  auto f = SwitchFabric::Create(o, absl::FromUnixSeconds(1'800'000'000));
  ASSERT_TRUE(f.ok()) << f.status();
  PortCounters before = After(**f, 0, 1, 2);
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  std::vector<NicTraffic> t = EveryNic(2, 2, 3'000'000'000ull, 3'000'000'000ull);
  t[2].up = false;  // gpu-node-002/mlx5_0: leaf-r0's second port
  for (int s = 3; s <= 5; ++s) ASSERT_TRUE((*f)->Update(t0 + absl::Seconds(s), t).ok());
  (*f)->WithSwitch(0, [&](const SimSwitch& sw) {
    EXPECT_FALSE(sw.ports[1].up);
    for (double rx : sw.ports[1].optics.rx_power_dbm) EXPECT_EQ(rx, -40.0);
    EXPECT_EQ(sw.ports[1].c.fec_corrected, before.fec_corrected);
    EXPECT_GT(sw.ports[0].optics.rx_power_dbm[0], -10.0);
  });
}

TEST(SwitchOptics, InfinibandSwitchesHaveNoModulesHere) {
  SwitchFabric::Options o;
  o.hosts = 2;
  o.nics_per_host = 1;
  o.infiniband = true;
  auto f = SwitchFabric::Create(o, absl::FromUnixSeconds(1'800'000'000));
  ASSERT_TRUE(f.ok()) << f.status();
  (*f)->WithSwitch(0, [](const SimSwitch& sw) { EXPECT_FALSE(sw.ports[0].optics.present); });
}

// ---- over gNMI ---------------------------------------------------------------------------

double Double(const std::map<std::string, ::gnmi::TypedValue>& leaves, const std::string& path) {
  auto it = leaves.find(path);
  EXPECT_NE(it, leaves.end()) << path;
  return it == leaves.end() ? 0 : it->second.double_val();
}

::grpc::StatusCode Refusal(std::unique_ptr<::gnmi::gNMI::Stub> stub,
                           std::unique_ptr<grpc::ClientContext> ctx, const ::gnmi::Path& path) {
  std::unique_ptr<Stream> stream = stub->Subscribe(ctx.get());
  EXPECT_TRUE(stream->Write(StreamRequest({path}, ::gnmi::SAMPLE, absl::Seconds(1))));
  ::gnmi::SubscribeResponse r;
  while (stream->Read(&r)) {
  }
  return stream->Finish().error_code();
}

TEST_F(SimGnmiTest, OpenConfigDialectsServeTheTransceiverOfEachInterface) {
  Start({"openconfig", "arista-eos", "cumulus"}, 2, 3);
  Advance(absl::Seconds(2));
  for (int i = 0; i < 3; ++i) {
    const Dialect d = fabric_->switches()[i].dialect;
    SCOPED_TRACE(DialectName(d));
    const std::string port = d == Dialect::kCumulus ? "swp2" : "Ethernet2";
    auto n =
        Once(P("/interfaces/interface[name=" + port + "]/state/transceiver"), Stub(i), Context());
    ASSERT_EQ(n.update_size(), 1);
    const std::string component = n.update(0).val().string_val();
    EXPECT_NE(component.find(port), std::string::npos) << component;

    const std::string c = "/components/component[name=" + component + "]";
    auto leaves = Leaves(Once(P(c + "/transceiver/physical-channels"), Stub(i), Context()));
    EXPECT_EQ(leaves.size(), 12u);  // 4 lanes x (input power, output power, bias)
    const double rx = Double(
        leaves, c + "/transceiver/physical-channels/channel[index=3]/state/input-power/instant");
    EXPECT_GT(rx, -6.9);
    EXPECT_LT(rx, 4.0);
    const double bias = Double(
        leaves,
        c + "/transceiver/physical-channels/channel[index=0]/state/laser-bias-current/instant");
    EXPECT_GT(bias, 3.0);
    leaves = Leaves(Once(P(c + "/state/temperature/instant"), Stub(i), Context()));
    EXPECT_GT(Double(leaves, c + "/state/temperature/instant"), 30.0);
    leaves = Leaves(Once(P(c + "/transceiver/state"), Stub(i), Context()));
    EXPECT_EQ(leaves[c + "/transceiver/state/form-factor"].string_val(),
              "openconfig-transport-types:OSFP");
    EXPECT_EQ(leaves[c + "/transceiver/state/ethernet-pmd"].string_val(),
              "openconfig-transport-types:ETH_400GBASE_DR4");
    EXPECT_NEAR(Double(leaves, c + "/transceiver/state/supply-voltage/instant"), 3.27, 0.1);

    leaves = Leaves(Once(P("/interfaces/interface[name=" + port + "]/ethernet/state/counters"),
                         Stub(i), Context()));
    const std::string counters =
        "/interfaces/interface[name=" + port + "]/ethernet/state/counters/";
    EXPECT_GT(leaves[counters + "fec-corrected-blocks"].uint_val(), 0u);
    EXPECT_EQ(leaves[counters + "fec-uncorrectable-blocks"].uint_val(), 0u);

    // EOS serves no thresholds and no pre-FEC BER; the others do.
    const ::gnmi::Path thresholds = P(c + "/transceiver/thresholds");
    const ::gnmi::Path ber =
        P("/interfaces/interface[name=" + port + "]/ethernet/state/pre-fec-ber");
    if (d == Dialect::kAristaEos) {
      EXPECT_EQ(Refusal(Stub(i), Context(), thresholds), grpc::StatusCode::NOT_FOUND);
      EXPECT_EQ(Refusal(Stub(i), Context(), ber), grpc::StatusCode::NOT_FOUND);
      continue;
    }
    n = Once(thresholds, Stub(i), Context());
    EXPECT_EQ(n.update_size(), 20);  // CRITICAL and WARNING x 5 quantities x upper, lower
    const std::string critical =
        d == Dialect::kCumulus ? "openconfig-alarm-types:CRITICAL" : "CRITICAL";
    leaves = Leaves(n);
    EXPECT_EQ(Double(leaves, c + "/transceiver/thresholds/threshold[severity=" + critical +
                                 "]/state/module-temperature-upper"),
              80.0);
    leaves = Leaves(Once(ber, Stub(i), Context()));
    const double measured = Double(
        leaves, "/interfaces/interface[name=" + port + "]/ethernet/state/pre-fec-ber/instant");
    EXPECT_GT(measured, 1e-8);
    EXPECT_LT(measured, 1e-6);
  }
}

TEST_F(SimGnmiTest, SonicServesXcvrdTablesAndFecCounters) {
  Start({"sonic"}, 2, 1);
  Advance(absl::Seconds(2));
  auto n = Once(P("/TRANSCEIVER_DOM_SENSOR/Ethernet*", "STATE_DB"), Stub(0), Context());
  ASSERT_EQ(n.update_size(), 1);
  EXPECT_EQ(n.prefix().target(), "STATE_DB");
  nlohmann::json j = nlohmann::json::parse(n.update(0).val().json_ietf_val());
  ASSERT_EQ(j.size(), 2u);
  const nlohmann::json& dom = j["Ethernet4"];
  EXPECT_GT(std::stod(dom["temperature"].get<std::string>()), 30.0);
  EXPECT_GT(std::stod(dom["rx4power"].get<std::string>()), -6.9);
  EXPECT_EQ(dom["rx5power"], "N/A");  // a 4-lane module under xcvrd's 8 lanes
  EXPECT_EQ(dom["tx8bias"], "N/A");

  n = Once(P("/TRANSCEIVER_DOM_THRESHOLD/Ethernet0", "STATE_DB"), Stub(0), Context());
  j = nlohmann::json::parse(n.update(0).val().json_ietf_val());
  EXPECT_EQ(j.size(), 20u);
  EXPECT_EQ(j["rxpowerlowwarning"], "-6.9000");
  n = Once(P("/TRANSCEIVER_INFO/Ethernet0", "STATE_DB"), Stub(0), Context());
  j = nlohmann::json::parse(n.update(0).val().json_ietf_val());
  EXPECT_EQ(j["type"], "OSFP 8X Pluggable Transceiver");
  EXPECT_EQ(j["media_interface_code"], "400GBASE-DR4 (Cl 124)");
  EXPECT_EQ(Refusal(Stub(0), Context(), P("/TRANSCEIVER_PM/Ethernet0", "STATE_DB")),
            grpc::StatusCode::NOT_FOUND);

  n = Once(P("/COUNTERS/Ethernet0", "COUNTERS_DB"), Stub(0), Context());
  j = nlohmann::json::parse(n.update(0).val().json_ietf_val());
  EXPECT_GT(std::stoull(j["SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES"].get<std::string>()), 0u);
  EXPECT_EQ(j["SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES"], "0");
  EXPECT_GT(std::stoull(j["SAI_PORT_STAT_IF_IN_FEC_CODEWORD_ERRORS_S0"].get<std::string>()), 0u);
  EXPECT_TRUE(j.contains("SAI_PORT_STAT_IF_IN_FEC_CODEWORD_ERRORS_S16"));
}

}  // namespace switch_optics_test
}  // namespace railwatch::sim::testing
