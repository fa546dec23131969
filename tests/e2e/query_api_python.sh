#!/usr/bin/env bash
# The Query API from Python, as an outside client calls it: stubs generated from proto/ by
# python3-grpc-tools (and from the public reflection.proto, written here) under Debian's
# /usr/bin/python3 with python3-grpcio; a simulated fabric (8 hosts x 4 NICs, 4 leaves, 2 spines,
# one job) where gpu-node-003/mlx5_2 starts a PFC storm at 30 s (time for the agents to connect
# and the client to start watching on a loaded machine); railwatchd with the shipped rules and
# the topology; every RPC called by tests/e2e/query_client.py, which asserts what comes back
# (the storm's culprit and evidence, healthy agents, the topology, reflection).
set -euo pipefail

BUILD=${1:?usage: query_api_python.sh BUILD_DIR}
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
# shellcheck source=scenario_lib.sh
source "$(dirname "$0")/scenario_lib.sh"
PY=/usr/bin/python3
GEN=$WORK/py

# Stubs first: a missing or incompatible generator fails here, before anything is started.
mkdir -p "$GEN/grpc_reflection_v1alpha" "$WORK/proto/grpc_reflection_v1alpha"
# grpc.reflection.v1alpha as published in grpc/grpc src/proto/grpc/reflection/v1alpha/
# reflection.proto (Debian ships no copy): the messages ListServices and
# FileContainingSymbol need.
cat >"$WORK/proto/grpc_reflection_v1alpha/reflection.proto" <<'PROTO'
syntax = "proto3";
package grpc.reflection.v1alpha;
service ServerReflection {
  rpc ServerReflectionInfo(stream ServerReflectionRequest) returns (stream ServerReflectionResponse);
}
message ServerReflectionRequest {
  string host = 1;
  oneof message_request {
    string file_by_filename = 3;
    string file_containing_symbol = 4;
    ExtensionRequest file_containing_extension = 5;
    string all_extension_numbers_of_type = 6;
    string list_services = 7;
  }
}
message ExtensionRequest {
  string containing_type = 1;
  int32 extension_number = 2;
}
message ServerReflectionResponse {
  string valid_host = 1;
  ServerReflectionRequest original_request = 2;
  oneof message_response {
    FileDescriptorResponse file_descriptor_response = 4;
    ExtensionNumberResponse all_extension_numbers_response = 5;
    ListServiceResponse list_services_response = 6;
    ErrorResponse error_response = 7;
  }
}
message FileDescriptorResponse { repeated bytes file_descriptor_proto = 1; }
message ExtensionNumberResponse {
  string base_type_name = 1;
  repeated int32 extension_number = 2;
}
message ListServiceResponse { repeated ServiceResponse service = 1; }
message ServiceResponse { string name = 1; }
message ErrorResponse {
  int32 error_code = 1;
  string error_message = 2;
}
PROTO
"$PY" -m grpc_tools.protoc -I "$SRC/proto" -I "$WORK/proto" --python_out="$GEN" \
  --grpc_python_out="$GEN" "$SRC"/proto/railwatch/v1/*.proto \
  "$WORK/proto/grpc_reflection_v1alpha/reflection.proto" >"$WORK/protoc.log" 2>&1 \
  || fail "python3-grpc-tools could not generate the stubs"
"$PY" -c "import sys; sys.path.insert(0, '$GEN')
from railwatch.v1 import query_pb2, query_pb2_grpc
from grpc_reflection_v1alpha import reflection_pb2_grpc" >"$WORK/import.log" 2>&1 \
  || fail "the generated stubs do not import under $PY"

start_fabric 8 4 2 --job=train:1-8 --pfc_storm=gpu-node-003/mlx5_2@30s --pfc_storm_for=0
# The Query API with a read-only bearer token (docs/SECURITY.md); the CLI the helpers run
# takes it from $RAILWATCH_TOKEN.
RAILWATCH_TOKEN=$(openssl rand -hex 32)
export RAILWATCH_TOKEN
printf 'tokens:\n  - {name: python-e2e, role: read-only, sha256: %s}\n' \
  "$(printf %s "$RAILWATCH_TOKEN" | sha256sum | cut -d' ' -f1)" >"$WORK/query-tokens.yaml"
start_scenario_daemon --query_tokens="$WORK/query-tokens.yaml"
start_agents
fault_not_yet pfc_storm

"$PY" "$SRC/tests/e2e/query_client.py" --server="$GRPC" --gen="$GEN" \
  --truth="$WORK/truth.jsonl" --topology="$WORK/topology.yaml" --hosts=8 --switches=6 \
  --token="$RAILWATCH_TOKEN" || fail "the Python client's checks failed (above)"
echo "PASS: query API from Python"
