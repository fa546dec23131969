#!/usr/bin/python3
"""A kubelet's pod-resources API (v1.PodResourcesLister) on a Unix socket, served by gRPC's
C-core through Debian's python3-grpcio from stubs that python3-grpc-tools generated out of
proto/kubelet/podresources/v1/api.proto. List answers with the pods in a JSON file (protojson of
ListPodResourcesResponse), read at every call so that a test can change them;
GetAllocatableResources and Get answer from the same file.

  kubelet_server.py STUBS_DIR SOCKET PODS_JSON
"""
import sys
import time
from concurrent import futures

STUBS, SOCKET, PODS = sys.argv[1:4]
sys.path.insert(0, STUBS)

import grpc  # noqa: E402
from google.protobuf import json_format  # noqa: E402
from kubelet.podresources.v1 import api_pb2, api_pb2_grpc  # noqa: E402


def read_pods():
    with open(PODS, encoding="utf-8") as f:
        return json_format.Parse(f.read(), api_pb2.ListPodResourcesResponse())


class Kubelet(api_pb2_grpc.PodResourcesListerServicer):
    def List(self, request, context):
        return read_pods()

    def GetAllocatableResources(self, request, context):
        answer = api_pb2.AllocatableResourcesResponse()
        for pod in read_pods().pod_resources:
            for c in pod.containers:
                answer.devices.extend(c.devices)
        return answer

    def Get(self, request, context):
        for pod in read_pods().pod_resources:
            if pod.name == request.pod_name and pod.namespace == request.pod_namespace:
                return api_pb2.GetPodResourcesResponse(pod_resources=pod)
        context.abort(grpc.StatusCode.NOT_FOUND,
                      f"pod {request.pod_namespace}/{request.pod_name} not found")


def main():
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    api_pb2_grpc.add_PodResourcesListerServicer_to_server(Kubelet(), server)
    if server.add_insecure_port("unix://" + SOCKET) == 0:
        sys.exit(f"cannot listen on unix://{SOCKET}")
    server.start()
    print(f"serving v1.PodResourcesLister on unix://{SOCKET}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop(0)


if __name__ == "__main__":
    main()
