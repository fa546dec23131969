#pragma once

// The small fabric of the engine tests: two leaves, one spine, three hosts with one NIC each;
// hosts 1 and 2 on leaf-a (a job), host 3 on leaf-b.

namespace railwatch::testing_topology {

inline constexpr char kTwoLeaves[] = R"y(
switches:
  - name: leaf-a
    role: leaf
    links:
      - {port: up0, peer: spine-0, peer_port: p0}
  - name: leaf-b
    role: leaf
    links:
      - {port: up0, peer: spine-0, peer_port: p1}
  - {name: spine-0, role: spine}
hosts:
  - name: h1
    nics: [{device: mlx5_0, netdev: eth0, rail: 0, switch: leaf-a, port: p1}]
  - name: h2
    nics: [{device: mlx5_0, netdev: eth0, rail: 0, switch: leaf-a, port: p2}]
  - name: h3
    nics: [{device: mlx5_0, netdev: eth0, rail: 0, switch: leaf-b, port: p1}]
jobs:
  - {name: train-a, hosts: [h1, h2], gpus_per_host: 8}
)y";

}  // namespace railwatch::testing_topology
