// One-off gNMI calls for a CLI or a test: Capabilities, Subscribe ONCE and POLL, on the
// synchronous API (they are short and rare; the streaming client is in client.cc).
#include "absl/strings/str_cat.h"
#include "gnmi/client.h"

namespace railwatch {
namespace {

absl::Status FromGrpc(const grpc::Status& s, const GnmiTargetConfig& target) {
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()),
                      absl::StrCat("gnmi target ", target.name, " (", target.address,
                                   "): ", s.error_message()));
}

void SetDeadline(grpc::ClientContext& ctx, absl::Duration timeout) {
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::nanoseconds(absl::ToInt64Nanoseconds(timeout)));
}

// Reads responses until sync_response, appending notifications. False when the stream ended
// first.
bool ReadUntilSync(
    grpc::ClientReaderWriter<::gnmi::SubscribeRequest, ::gnmi::SubscribeResponse>& stream,
    std::vector<::gnmi::Notification>& out) {
  ::gnmi::SubscribeResponse response;
  while (stream.Read(&response)) {
    if (response.has_update()) out.push_back(std::move(*response.mutable_update()));
    if (response.sync_response()) return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<::gnmi::CapabilityResponse> GnmiCapabilities(const GnmiTargetConfig& target,
                                                            absl::Duration timeout) {
  auto stub = ::gnmi::gNMI::NewStub(MakeGnmiChannel(target, {}));
  grpc::ClientContext ctx;
  AddGnmiCredentials(target, ctx);
  SetDeadline(ctx, timeout);
  ::gnmi::CapabilityResponse response;
  grpc::Status s = stub->Capabilities(&ctx, ::gnmi::CapabilityRequest(), &response);
  if (!s.ok()) return FromGrpc(s, target);
  return response;
}

absl::StatusOr<std::vector<::gnmi::Notification>> GnmiSubscribeOnce(
    const GnmiTargetConfig& target, ::gnmi::SubscriptionList list, absl::Duration timeout) {
  auto stub = ::gnmi::gNMI::NewStub(MakeGnmiChannel(target, {}));
  grpc::ClientContext ctx;
  AddGnmiCredentials(target, ctx);
  SetDeadline(ctx, timeout);
  auto stream = stub->Subscribe(&ctx);
  ::gnmi::SubscribeRequest request;
  list.set_mode(::gnmi::SubscriptionList::ONCE);
  *request.mutable_subscribe() = std::move(list);
  std::vector<::gnmi::Notification> out;
  if (stream->Write(request)) ReadUntilSync(*stream, out);
  // A ONCE subscription ends after sync_response; the target closes the stream.
  stream->WritesDone();
  grpc::Status s = stream->Finish();
  if (!s.ok()) return FromGrpc(s, target);
  return out;
}

absl::StatusOr<std::unique_ptr<GnmiPollSession>> GnmiPollSession::Open(
    const GnmiTargetConfig& target, ::gnmi::SubscriptionList list, absl::Duration timeout) {
  std::unique_ptr<GnmiPollSession> session(new GnmiPollSession());
  session->channel_ = MakeGnmiChannel(target, {});
  session->stub_ = ::gnmi::gNMI::NewStub(session->channel_);
  AddGnmiCredentials(target, session->ctx_);
  SetDeadline(session->ctx_, timeout);
  session->stream_ = session->stub_->Subscribe(&session->ctx_);
  ::gnmi::SubscribeRequest request;
  list.set_mode(::gnmi::SubscriptionList::POLL);
  *request.mutable_subscribe() = std::move(list);
  if (!session->stream_->Write(request)) {
    grpc::Status s = session->stream_->Finish();
    session->stream_.reset();
    return FromGrpc(s.ok() ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "stream closed") : s,
                    target);
  }
  session->target_name_ = target.name;
  session->target_address_ = target.address;
  return session;
}

GnmiPollSession::~GnmiPollSession() {
  if (!stream_) return;
  ctx_.TryCancel();
  stream_->Finish();
}

absl::StatusOr<std::vector<::gnmi::Notification>> GnmiPollSession::Poll() {
  if (!stream_) return absl::FailedPreconditionError("the poll stream has ended");
  ::gnmi::SubscribeRequest request;
  request.mutable_poll();
  std::vector<::gnmi::Notification> out;
  if (stream_->Write(request) && ReadUntilSync(*stream_, out)) return out;
  grpc::Status s = stream_->Finish();
  stream_.reset();
  return absl::UnavailableError(absl::StrCat("gnmi target ", target_name_, " (",
                                             target_address_, "): poll stream ended: ",
                                             s.ok() ? "by the target" : s.error_message()));
}

}  // namespace railwatch
