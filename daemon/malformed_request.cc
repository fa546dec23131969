#include "daemon/malformed_request.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/logging.h"

namespace railwatch {
namespace {

using grpc::experimental::InterceptionHookPoints;

class MalformedRequestInterceptor final : public grpc::experimental::Interceptor {
 public:
  MalformedRequestInterceptor(std::string method, prometheus::Counter& malformed)
      : method_(std::move(method)), malformed_(malformed) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    // The server runs this hook once with the request it parsed, or with none when the bytes
    // did not parse (a unary call cannot arrive without its one message).
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() == nullptr) {
      unparsable_ = true;
    }
    if (unparsable_ && methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      malformed_.Increment();
      spdlog::warn("gRPC {}: a request that is not a valid message of the method; refused",
                   method_);
      methods->ModifySendStatus(grpc::Status(
          grpc::StatusCode::INVALID_ARGUMENT,
          absl::StrCat("the request is not a valid ", method_,
                       " request (protobuf parse failed)")));
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
  prometheus::Counter& malformed_;
  bool unparsable_ = false;
};

}  // namespace

MalformedRequestInterceptorFactory::MalformedRequestInterceptorFactory(
    prometheus::Registry& registry)
    : malformed_(prometheus::BuildCounter()
                     .Name("railwatch_grpc_malformed_requests_total")
                     .Help("gRPC requests refused with INVALID_ARGUMENT because their bytes "
                           "did not parse as the method's request message, by method.")
                     .Register(registry)) {}

grpc::experimental::Interceptor* MalformedRequestInterceptorFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  using Type = grpc::experimental::ServerRpcInfo::Type;
  // Only calls whose single request arrives with the call; a client stream's messages are its
  // handler's to judge. (Generic/unknown methods have no method name to parse against.)
  if (info->method() == nullptr ||
      (info->type() != Type::UNARY && info->type() != Type::SERVER_STREAMING)) {
    return nullptr;
  }
  return new MalformedRequestInterceptor(info->method(),
                                         malformed_.Add({{"method", info->method()}}));
}

std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
MalformedRequestInterceptors(prometheus::Registry& registry) {
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> v;
  v.push_back(std::make_unique<MalformedRequestInterceptorFactory>(registry));
  return v;
}

}  // namespace railwatch
