#pragma once

#include <vector>

#include "grpcpp/support/server_interceptor.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/registry.h"

namespace railwatch {

// A unary or server-streaming request that does not parse as its method's message (random
// bytes sent with grpc::GenericStub, a client built from another .proto) never reaches our
// handlers: gRPC's callback server answers it with UNIMPLEMENTED and no message, which sends
// whoever debugs it the wrong way. This interceptor turns that answer into INVALID_ARGUMENT
// ("the request is not a valid <method> request") and counts it in
// railwatch_grpc_malformed_requests_total{method} (the daemon's methods: a bounded set).
//
// Streams from clients (Ingest) are not covered here: a stream's malformed message looks
// like its end to an interceptor; daemon/ingest_service.cc tells the two apart itself.
class MalformedRequestInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MalformedRequestInterceptorFactory(prometheus::Registry& registry);
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  prometheus::Family<prometheus::Counter>& malformed_;
};

// The factory as ServerBuilder::experimental().SetInterceptorCreators wants it.
std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
MalformedRequestInterceptors(prometheus::Registry& registry);

}  // namespace railwatch
