#pragma once

#include <memory>

#include "daemon/daemon.h"
#include "gtest/gtest.h"

namespace railwatch {

// A Daemon with the shipped rules serving gRPC and /metrics on free loopback ports (the rest
// of `o` as given); null (and a test failure) when it cannot start.
inline std::unique_ptr<Daemon> StartLoopbackDaemon(DaemonOptions o = {}) {
  o.grpc_listen = "127.0.0.1:0";
  o.metrics_listen = "127.0.0.1:0";
  o.rules = {RAILWATCH_RULES_SOURCE_DIR};
  auto daemon = std::make_unique<Daemon>(o);
  absl::Status s = daemon->Start();
  EXPECT_TRUE(s.ok()) << s;
  return s.ok() ? std::move(daemon) : nullptr;
}

}  // namespace railwatch
