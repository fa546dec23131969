// Writes the binary seed corpora of the fuzz targets whose input is protobuf bytes, from
// what the repository already holds in text:
//   tests/fuzz/seeds/gnmi_decode/  every notification of tests/fixtures/gnmi as the bytes of a
//                                  SubscribeResponse (gnmi_decode_fuzz)
//   tests/fuzz/seeds/ingest/       agent streams (hello, batches with definitions, points,
//                                  events, a replayed batch) in the delimited form
//                                  ingest_fuzz reads
// Run from the source root after changing the fixtures or the protos, and commit the result:
//   cmake --build build/fuzz --target make_fuzz_seeds && build/fuzz/fuzzers/make_fuzz_seeds

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "common/text.h"
#include "gnmi/gnmi.pb.h"
#include "gnmi/text_formats.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "railwatch/v1/ingest.pb.h"

namespace fs = std::filesystem;
using railwatch::v1::AgentMessage;

namespace {

void WriteFile(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

int GnmiSeeds(const fs::path& out) {
  int written = 0;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator("tests/fixtures/gnmi")) files.push_back(entry);
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    absl::StatusOr<std::string> text = railwatch::ReadFile(file.string());
    if (!text.ok()) continue;
    absl::StatusOr<railwatch::GnmiCapture> capture =
        railwatch::ReadGnmiCapture(*text, file.filename().string());
    if (!capture.ok()) continue;
    int i = 0;
    for (const gnmi::Notification& n : capture->notifications) {
      gnmi::SubscribeResponse response;
      *response.mutable_update() = n;
      WriteFile(out / absl::StrCat(file.stem().string(), "_", i++, ".bin"),
                response.SerializeAsString());
      ++written;
    }
  }
  return written;
}

std::string Delimited(const std::vector<AgentMessage>& messages) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream out(&stream);
  for (const AgentMessage& m : messages) {
    out.WriteVarint32(static_cast<uint32_t>(m.ByteSizeLong()));
    m.SerializeToCodedStream(&out);
  }
  out.Trim();
  return bytes;
}

AgentMessage Hello(const std::string& agent) {
  AgentMessage m;
  m.mutable_hello()->set_agent_id(agent);
  m.mutable_hello()->set_instance_id(7);
  m.mutable_hello()->set_hostname("node01");
  m.mutable_hello()->set_version("0.1.0");
  return m;
}

AgentMessage Batch(uint64_t sequence, bool definitions, int64_t t, uint32_t far_id) {
  AgentMessage m;
  railwatch::v1::Batch* b = m.mutable_batch();
  b->set_sequence(sequence);
  if (definitions) {
    const char* names[] = {"fabric_rdma_port_xmit_bytes_total", "fabric_rdma_port_state",
                           "fabric_ethtool_rx_pause_frames_total"};
    for (uint32_t id = 0; id < 3; ++id) {
      railwatch::v1::SeriesDefinition* d = b->add_definitions();
      d->set_id(id == 2 ? far_id : id);
      d->set_name(names[id]);
      d->set_kind(id == 1 ? railwatch::v1::SERIES_KIND_GAUGE : railwatch::v1::SERIES_KIND_COUNTER);
      d->set_width_bits(id == 0 ? 64 : 32);
      railwatch::v1::Label* l = d->add_labels();
      l->set_name("device");
      l->set_value("mlx5_0");
      l = d->add_labels();
      l->set_name("port");
      l->set_value("1");
    }
  }
  for (uint32_t id : {0u, 1u, far_id}) {
    railwatch::v1::Point* p = b->add_points();
    p->set_series_id(id);
    p->set_time_unix_nano(t);
    if (id == 1) {
      p->set_gauge(4);
    } else {
      p->set_counter(static_cast<uint64_t>(t / 1'000'000) * (id + 1));
    }
  }
  railwatch::v1::Event* e = b->add_events();
  e->set_kind("nccl.ib_completion_error");
  e->set_time_unix_nano(t);
  railwatch::v1::Label* l = e->add_labels();
  l->set_name("job");
  l->set_value("train-1");
  (*e->mutable_attributes())["status"] = "12";
  (*e->mutable_attributes())["peer"] = "10.0.0.2";
  e->set_raw("node01:1:2 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2 with status=12");
  return m;
}

int IngestSeeds(const fs::path& out) {
  const int64_t t = 1'700'000'000'000'000'000;
  const std::vector<std::pair<std::string, std::vector<AgentMessage>>> streams = {
      {"hello_batches_replay",
       {Hello("node01"), Batch(1, true, t, 2), Batch(2, false, t + 1'000'000'000, 2),
        Batch(2, false, t + 1'000'000'000, 2), Batch(3, false, t + 2'000'000'000, 2)}},
      {"far_series_ids",
       {Hello("node02"), Batch(5, true, t, 1'000'000), Batch(6, false, t, 1'000'000)}},
      {"hello_only", {Hello("node03")}},
      {"batch_before_hello", {Batch(1, true, t, 2)}},
      {"second_hello", {Hello("node04"), Hello("node04")}},
      {"empty_message", {Hello("node05"), AgentMessage()}},
  };
  for (const auto& [name, messages] : streams)
    WriteFile(out / (name + ".bin"), Delimited(messages));
  return static_cast<int>(streams.size());
}

}  // namespace

int main() {
  if (!fs::is_directory("tests/fixtures/gnmi")) {
    std::cerr << "make_fuzz_seeds: run from the source root\n";
    return 2;
  }
  const fs::path gnmi = "tests/fuzz/seeds/gnmi_decode", ingest = "tests/fuzz/seeds/ingest";
  for (const fs::path& dir : {gnmi, ingest}) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  std::cout << GnmiSeeds(gnmi) << " gNMI seeds, " << IngestSeeds(ingest) << " ingest seeds\n";
  return 0;
}
