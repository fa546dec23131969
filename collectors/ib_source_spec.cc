#include "collectors/ib_source_spec.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "collectors/ib_mad_source.h"
#include "collectors/ib_mad_transport_libibmad.h"
#include "collectors/ib_mad_transport_sim.h"
#include "collectors/ib_mad_transport_simdb.h"
#include "common/labels.h"

namespace railwatch {

absl::StatusOr<std::unique_ptr<IbFabricSource>> MakeIbFabricSource(
    std::string_view spec, const IbSourceSettings& settings) {
  const size_t colon = spec.find(':');
  const std::string_view kind = spec.substr(0, colon);
  const std::string_view rest = colon == std::string_view::npos ? "" : spec.substr(colon + 1);
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("--ib_source=", AsAbsl(spec), ": ", why));
  };
  IbMadSource::Options mad_options;
  mad_options.discover_interval = settings.discover_interval;
  mad_options.window = settings.mad_window;
  if (kind == "tools") {
    if (rest.empty()) return bad("tools: needs a directory (tools:DIR)");
    return std::make_unique<IbToolOutputSource>(IbToolOutputSource::Options{std::string(rest)});
  }
  if (kind == "mad") {
    LibibmadTransport::Options options;
    const size_t port_colon = rest.find(':');
    options.ca = std::string(rest.substr(0, port_colon));
    if (port_colon != std::string_view::npos &&
        (!absl::SimpleAtoi(AsAbsl(rest.substr(port_colon + 1)), &options.port) || options.port < 1 ||
         options.port > 254)) {
      return bad("the port is a number from 1 (mad:CA[:PORT], e.g. mad:mlx5_0:1)");
    }
    options.timeout = settings.mad_timeout;
    options.max_outstanding = std::max(1, settings.mad_window);
    absl::StatusOr<std::unique_ptr<LibibmadTransport>> transport =
        LibibmadTransport::Open(std::move(options));
    if (!transport.ok()) return bad(transport.status().message());
    return std::make_unique<IbMadSource>(mad_options, *std::move(transport));
  }
  if (kind == "sim") {
    absl::StatusOr<SimFatTreeSpec> fat_tree = ParseSimFatTreeSpec(rest);
    if (!fat_tree.ok()) return bad(fat_tree.status().message());
    absl::StatusOr<std::unique_ptr<SimIbFabric>> fabric = BuildSimFatTree(*fat_tree);
    if (!fabric.ok()) return bad(fabric.status().message());
    SimIbMadTransport::Options options;
    options.name = std::string(spec);
    options.latency = fat_tree->latency;
    options.max_outstanding = std::max(1, settings.mad_window);
    return std::make_unique<IbMadSource>(
        mad_options, std::make_unique<SimIbMadTransport>(
                         std::shared_ptr<SimIbFabric>(*std::move(fabric)), std::move(options)));
  }
  if (kind == "simdb") {
    if (rest.empty()) return bad("simdb: needs the simulator's db_csv (simdb:FILE)");
    SimDbMadTransport::Options options;
    options.path = std::string(rest);
    options.max_outstanding = std::max(1, settings.mad_window);
    absl::StatusOr<std::unique_ptr<SimDbMadTransport>> transport =
        SimDbMadTransport::Open(std::move(options));
    if (!transport.ok()) return bad(transport.status().message());
    return std::make_unique<IbMadSource>(mad_options, *std::move(transport));
  }
  return bad("expected tools:DIR, mad:CA[:PORT], sim:SPEC or simdb:FILE");
}

}  // namespace railwatch
