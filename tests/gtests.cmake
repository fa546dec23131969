# GoogleTest binaries: unit tests and in-process integration tests (included by
# tests/CMakeLists.txt when RAILWATCH_GTESTS is on). A new test file joins the binary of the
# part it tests; a new binary is an add_executable, its libraries and gtest_discover_tests.
# Test files keep their helpers in a namespace named after the file (not an anonymous one), so
# that a unity build can compile a binary's files as one unit.

add_library(railwatch_test_support STATIC support/recording_emitter.cc
  support/test_certificates.cc support/ttar.cc)
target_include_directories(railwatch_test_support PUBLIC "${CMAKE_CURRENT_SOURCE_DIR}")
target_compile_definitions(railwatch_test_support PUBLIC
  RAILWATCH_FIXTURES_DIR="${CMAKE_CURRENT_SOURCE_DIR}/fixtures"
  RAILWATCH_RULES_SOURCE_DIR="${PROJECT_SOURCE_DIR}/rules"
  RAILWATCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_link_libraries(railwatch_test_support PUBLIC railwatch_collectors absl::strings)

# One binary for the unit tests keeps link time down on small CI machines.
add_executable(railwatch_unit_tests
  unit/common_test.cc
  unit/ib_fabric_collector_test.cc
  unit/lldp_collector_test.cc
  unit/lldp_neighbors_test.cc
  unit/nccl_inspector_collector_test.cc
  unit/nccl_ras_collector_test.cc
  unit/engine_correlation_test.cc
  unit/engine_parallel_test.cc
  unit/engine_parts_test.cc
  unit/engine_test.cc
  unit/playbook_test.cc
  unit/rdma_sysfs_collector_test.cc
  unit/series_store_test.cc
  unit/sim_kinds_truth.cc
  unit/sim_ras_server_test.cc
  unit/sysfs_fabric_test.cc
  unit/topology_test.cc)
target_link_libraries(railwatch_unit_tests PRIVATE
  railwatch_test_support railwatch_collectors railwatch_lldp_neighbors railwatch_engine
  railwatch_sim railwatch_sim_scenarios railwatch_store
  railwatch_topology railwatch_fabric railwatch_ib_fabric
  GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_unit_tests DISCOVERY_TIMEOUT 60)

# Diagnoses across a daemon restart: the state file, the engine's save and restore.
add_executable(railwatch_engine_state_tests unit/engine_state_test.cc)
target_include_directories(railwatch_engine_state_tests PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}")
target_link_libraries(railwatch_engine_state_tests PRIVATE railwatch_engine
  GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_engine_state_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)

# The store's compressed samples against a reference model (docs/STORE.md).
add_executable(railwatch_store_tests unit/series_store_encoding_test.cc)
target_link_libraries(railwatch_store_tests PRIVATE railwatch_store GTest::gtest_main)
gtest_discover_tests(railwatch_store_tests DISCOVERY_TIMEOUT 60)

# Counter traps (issue 9 item 5, docs/STORE.md): one test per trap, and random traces through
# the store, the rules engine's rate()/increase()/delta() and the /metrics text.
add_executable(railwatch_counter_traps_tests unit/counter_traps_test.cc
  unit/counter_traps_property_test.cc)
target_link_libraries(railwatch_counter_traps_tests PRIVATE
  railwatch_exporters railwatch_condition railwatch_store GTest::gtest_main)
gtest_discover_tests(railwatch_counter_traps_tests DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS unit)

# The condition language: parser, evaluator, events, peers and topology functions.
add_executable(railwatch_condition_tests unit/condition_parse_test.cc unit/condition_test.cc
  unit/condition_events_test.cc unit/range_functions_test.cc)
target_link_libraries(railwatch_condition_tests PRIVATE
  railwatch_test_support railwatch_condition railwatch_store GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_condition_tests DISCOVERY_TIMEOUT 60)

# FabricMap (topology() / peer() labels, hop distance, blast radius), the topology file's jobs
# and JobRegistry learning jobs from NCCL log lines run through the real parser.
add_executable(railwatch_fabric_tests unit/fabric_map_test.cc)
target_compile_definitions(railwatch_fabric_tests PRIVATE
  RAILWATCH_FIXTURES_DIR="${CMAKE_CURRENT_SOURCE_DIR}/fixtures")
target_link_libraries(railwatch_fabric_tests PRIVATE
  railwatch_fabric railwatch_logs GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_fabric_tests DISCOVERY_TIMEOUT 60)

# Topology, job and nccl-tests info series that the dashboards join on
# (exporters/topology_collectable.h), with a real nccl-tests log through the parser.
add_executable(railwatch_topology_collectable_tests unit/topology_collectable_test.cc)
target_compile_definitions(railwatch_topology_collectable_tests PRIVATE
  RAILWATCH_FIXTURES_DIR="${CMAKE_CURRENT_SOURCE_DIR}/fixtures")
target_link_libraries(railwatch_topology_collectable_tests PRIVATE
  railwatch_exporters railwatch_logs GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_topology_collectable_tests DISCOVERY_TIMEOUT 60)

# /metrics: the store rendered straight to text against prometheus-cpp's serializer, and the
# HTTP server (gzip, exposer_* families) on loopback (exporters/metrics_server.h).
add_executable(railwatch_metrics_tests unit/metrics_exposition_test.cc
  unit/metrics_server_test.cc support/http_get.cc)
target_include_directories(railwatch_metrics_tests PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}")
target_link_libraries(railwatch_metrics_tests PRIVATE
  railwatch_exporters GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_metrics_tests DISCOVERY_TIMEOUT 60)

# The log tailer works on real files with inotify and threads: its own binary, so that its tests
# can be run (and rerun under sanitizers) on their own.
add_executable(railwatch_tailer_tests
  unit/tailer/log_collector_test.cc
  unit/tailer/log_tailer_restart_test.cc
  unit/tailer/log_tailer_state_test.cc
  unit/tailer/log_tailer_stress_test.cc
  unit/tailer/log_tailer_test.cc)
target_link_libraries(railwatch_tailer_tests PRIVATE
  railwatch_test_support railwatch_collectors GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_tailer_tests DISCOVERY_TIMEOUT 60)

# ethtool statistics and netlink link events: recorded dumps, and the real kernel paths on veth
# pairs in network namespaces that the tests create and delete (needs root, iproute2, ethtool);
# the LLDP collector against Debian's lldpd in such namespaces (lldpd); the optics collector on
# encoded modules in files and against the kernel on veths.
add_executable(railwatch_netdev_tests
  unit/netdev/ethtool_collector_test.cc
  unit/netdev/ethtool_dir_backend_test.cc
  unit/netdev/ethtool_dump_test.cc
  unit/netdev/link_state_test.cc
  unit/netdev/lldpd_test.cc
  unit/netdev/netns.cc
  unit/netdev/optics_collector_test.cc
  unit/netdev/optics_veth_test.cc
  unit/netdev/veth_test.cc)
target_link_libraries(railwatch_netdev_tests PRIVATE
  railwatch_test_support railwatch_collectors railwatch_server GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_netdev_tests DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 120)

# In-process tests against a real Daemon on free loopback ports.
add_executable(railwatch_integration_tests integration/ingest_test.cc
  integration/ingest_stream_test.cc
  integration/ingest_ids_test.cc)
target_link_libraries(railwatch_integration_tests PRIVATE
  railwatch_test_support railwatch_server GTest::gtest_main)
gtest_discover_tests(railwatch_integration_tests DISCOVERY_TIMEOUT 60)

# Streams under trouble (issue 9), against a real Daemon: every side of every long-lived stream
# notices a frozen peer within 30 s (production keepalives, a freezing TCP proxy per path),
# 1,000 reconnects leave threads, fds and RSS flat, and malformed or oversized messages get a
# clear status and a counter. ctest -R 'Liveness|ReconnectChurn|IngestMalformed'
add_executable(railwatch_robustness_tests
  integration/ingest_malformed_test.cc
  integration/liveness_test.cc
  integration/liveness_util.cc
  integration/reconnect_churn_test.cc
  integration/sender_acks_test.cc
  support/fake_gnmi_target.cc
  support/freezing_proxy.cc
  support/http_get.cc
  unit/gnmi_client/gnmi_test_util.cc)
target_include_directories(railwatch_robustness_tests PRIVATE integration support unit/gnmi_client)
target_link_libraries(railwatch_robustness_tests PRIVATE
  railwatch_test_support railwatch_server railwatch_agent railwatch_cli railwatch_gnmi_switch
  GTest::gtest_main)
gtest_discover_tests(railwatch_robustness_tests DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 120 LABELS integration)

# railwatch-loadgen's simulated host: the series it defines and the values it sends.
add_executable(railwatch_loadgen_tests unit/loadgen_plan_test.cc
  "${PROJECT_SOURCE_DIR}/bench/loadgen_plan.cc")
target_link_libraries(railwatch_loadgen_tests PRIVATE railwatch_common railwatch_proto
  GTest::gtest_main)
gtest_discover_tests(railwatch_loadgen_tests DISCOVERY_TIMEOUT 60)

# The gRPC Query API in-process: QueryService over an Engine fed directly, served on
# 127.0.0.1:0 and called through the generated stub (filters, limits, QuerySeries, agent
# health, WatchDiagnoses, TLS and mTLS with certificates made by openssl for each run), and the
# filter and selector pieces alone. ctest -R '^query\.'
add_executable(railwatch_query_tests
  integration/query_agents_test.cc
  integration/query_diagnoses_test.cc
  integration/query_series_test.cc
  integration/query_test_server.cc
  integration/query_tls_test.cc
  integration/query_watch_test.cc
  integration/topology_watch_test.cc
  unit/query_filter_test.cc)
target_include_directories(railwatch_query_tests PRIVATE integration)
target_link_libraries(railwatch_query_tests PRIVATE
  railwatch_test_support railwatch_server railwatch_cli GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_query_tests TEST_PREFIX "query." DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 120)

# Authentication (docs/SECURITY.md): the access file; Query tokens, roles and client
# certificates, agent -> daemon mutual TLS and certificate reload, each against a real Daemon
# on loopback with certificates made by openssl; the CLI's token and `agents forget`.
# ctest -R '^auth\.'
add_executable(railwatch_auth_tests
  integration/auth_ingest_test.cc
  integration/auth_query_test.cc
  support/http_get.cc
  unit/auth_access_test.cc)
target_include_directories(railwatch_auth_tests PRIVATE integration)
target_link_libraries(railwatch_auth_tests PRIVATE
  railwatch_test_support railwatch_server railwatch_agent railwatch_cli GTest::gtest_main
  GTest::gmock)
gtest_discover_tests(railwatch_auth_tests TEST_PREFIX "auth." DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 120 LABELS integration)

# Log parsers (NCCL, PyTorch, NCCL RAS, nccl-tests) on the real-world samples in
# fixtures/logs, plus `railwatch triage` run in-process (the triage library, its playbook
# replay): a binary of their own.
add_executable(railwatch_logs_tests
  unit/logs/inline_formats_test.cc
  unit/logs/log_test_util.cc
  unit/logs/nccl_inspector_test.cc
  unit/logs/nccl_samples_test.cc
  unit/logs/other_samples_test.cc
  unit/logs/ras_samples_test.cc
  unit/logs/robustness_test.cc
  unit/logs/triage_inspector_test.cc
  unit/logs/triage_playbook_test.cc
  unit/logs/triage_test.cc)
target_link_libraries(railwatch_logs_tests PRIVATE
  railwatch_test_support railwatch_logs railwatch_triage railwatch_cli GTest::gtest_main
  GTest::gmock)
gtest_discover_tests(railwatch_logs_tests DISCOVERY_TIMEOUT 60)

# The reader of every configuration file (common/yaml_reader.h).
add_executable(railwatch_config_tests unit/yaml_reader_test.cc)
target_link_libraries(railwatch_config_tests PRIVATE railwatch_config GTest::gtest_main
  GTest::gmock)
gtest_discover_tests(railwatch_config_tests TEST_PREFIX "config." DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS unit)

# gNMI path profiles: the shipped profiles, pattern matching, and the real-world samples
# through the decoder.
add_executable(railwatch_gnmi_profile_tests unit/gnmi/optics_profile_test.cc unit/gnmi/profile_test.cc)
target_compile_definitions(railwatch_gnmi_profile_tests PRIVATE
  RAILWATCH_FIXTURES_DIR="${CMAKE_CURRENT_SOURCE_DIR}/fixtures"
  RAILWATCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_link_libraries(railwatch_gnmi_profile_tests PRIVATE
  railwatch_gnmi_profile yaml-cpp GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_gnmi_profile_tests DISCOVERY_TIMEOUT 60)

# gNMI client and switch collector against an in-process fake target (real gRPC servers on
# loopback ports): SAMPLE/ON_CHANGE mapping, ONCE/POLL, credentials, TLS/mTLS with
# certificates made by openssl, 100 target restarts, 200 targets.
add_executable(railwatch_gnmi_client_tests
  support/fake_gnmi_target.cc
  support/freezing_proxy.cc
  unit/gnmi_client/gnmi_test_util.cc
  unit/gnmi_client/keepalive_policy_test.cc
  unit/gnmi_client/oneshot_test.cc
  unit/gnmi_client/resilience_test.cc
  unit/gnmi_client/switch_collector_test.cc
  unit/gnmi_client/targets_test.cc
  unit/gnmi_client/tls_test.cc)
target_include_directories(railwatch_gnmi_client_tests PRIVATE support)
target_link_libraries(railwatch_gnmi_client_tests PRIVATE
  railwatch_test_support railwatch_gnmi_switch GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_gnmi_client_tests DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300)

# gNMI notifications -> leaves, path strings, and captured notifications in the text forms
# people paste, on the real-world samples in fixtures/gnmi.
add_executable(railwatch_gnmi_decode_tests
  unit/gnmi/decode_alloc_test.cc
  unit/gnmi/decode_test.cc
  unit/gnmi/gnmi_decode_cli_test.cc
  unit/gnmi/gnmi_test_util.cc
  unit/gnmi/samples_test.cc
  unit/gnmi/text_formats_test.cc)
target_link_libraries(railwatch_gnmi_decode_tests PRIVATE
  railwatch_test_support railwatch_gnmi_decode railwatch_cli nlohmann_json::nlohmann_json
  GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_gnmi_decode_tests DISCOVERY_TIMEOUT 60)

# The simulated hosts (railwatch-sim without switches): fault flags, ethtool dumps, NCCL logs
# and the host-side faults, on a fake clock.
add_executable(railwatch_sim_host_tests
  unit/sim_host/sim_ethtool_test.cc
  unit/sim_host/sim_healthy_test.cc
  unit/sim_host/sim_host_faults_test.cc
  unit/sim_host/sim_host_util.cc
  unit/sim_host/sim_link_health_test.cc
  unit/sim_host/sim_nccl_logs_test.cc
  unit/sim_kinds_truth.cc)
target_link_libraries(railwatch_sim_host_tests PRIVATE
  railwatch_test_support railwatch_sim railwatch_sim_scenarios railwatch_logs railwatch_collectors
  railwatch_optics nlohmann_json::nlohmann_json
  GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_sim_host_tests DISCOVERY_TIMEOUT 60)

# Simulated switches serving gNMI (railwatch-sim --switches), through a raw gNMI stub on free
# loopback ports; the switch model and the targets and topology files it writes; the jobs and
# traffic faults on both ends (sysfs and switch counters).
add_executable(railwatch_sim_gnmi_tests
  unit/sim_gnmi/gnmi_switch_test.cc
  unit/sim_gnmi/ib_switches_test.cc
  unit/sim_gnmi/sim_faults_test.cc
  unit/sim_gnmi/sim_gnmi_fixture.cc
  unit/sim_gnmi/switch_faults_test.cc
  unit/sim_gnmi/switch_groups_test.cc
  unit/sim_gnmi/switch_nic_inputs_test.cc
  unit/sim_gnmi/switch_model_test.cc
  unit/sim_gnmi/switch_optics_test.cc
  unit/sim_gnmi/topology_discovery_test.cc
  unit/sim_kinds_truth.cc)
target_link_libraries(railwatch_sim_gnmi_tests PRIVATE
  railwatch_test_support railwatch_sim_switches railwatch_sim_scenarios railwatch_topology
  railwatch_lldp_neighbors railwatch_ib_readers nlohmann_json::nlohmann_json yaml-cpp GTest::gtest_main GTest::gmock)
target_compile_definitions(railwatch_sim_gnmi_tests PRIVATE
  RAILWATCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
gtest_discover_tests(railwatch_sim_gnmi_tests DISCOVERY_TIMEOUT 60)

# Playbook unit tests: the runner (engine/rule_test.h), promtool's input notation and the
# `railwatch rules` commands in-process, on the small rules and test files in fixtures/rules.
add_executable(railwatch_rule_test_tests unit/rule_test_test.cc)
target_link_libraries(railwatch_rule_test_tests PRIVATE
  railwatch_test_support railwatch_rule_test railwatch_cli nlohmann_json::nlohmann_json
  GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_rule_test_tests DISCOVERY_TIMEOUT 60)

# Alertmanager notifications: alert labels, annotations and the v2 API body; the notifier
# against an HTTP server the test runs on 127.0.0.1 (retry after a 500, re-sends, resolves,
# a full queue, a dead Alertmanager beside a live one).
add_executable(railwatch_alert_tests unit/alert_format_test.cc unit/alertmanager_test.cc)
target_link_libraries(railwatch_alert_tests PRIVATE
  railwatch_alerting railwatch_topology nlohmann_json::nlohmann_json GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_alert_tests DISCOVERY_TIMEOUT 60)

# The `railwatch` CLI's Query commands in-process against a fake railwatchd (a real gRPC
# server on 127.0.0.1:0 with canned answers, recording requests): tables, JSON, filters, exit
# codes, watch streams, top and series, help per command, TLS and mTLS with certificates made
# by openssl. ctest -R '^cli\.'
add_executable(cli_commands_test
  unit/cli_commands_test.cc
  unit/cli_fabric_test.cc
  unit/cli_fake_query.cc
  unit/cli_tls_test.cc
  unit/cli_watch_test.cc)
target_link_libraries(cli_commands_test PRIVATE
  railwatch_test_support railwatch_cli nlohmann_json::nlohmann_json GTest::gtest_main
  GTest::gmock)
gtest_discover_tests(cli_commands_test TEST_PREFIX cli. DISCOVERY_TIMEOUT 60
  PROPERTIES TIMEOUT 120)

# The scenario suite's pieces (sim/fault_kinds.h, scenario.h, scenario_flags.h, score.h,
# runner_flags.h, runner_live.h): the fault kinds' registry, scenario files and each kind of
# mistake, the programs' command lines, scoring on hand-written ground truth and diagnoses, the table and the JSON, the --live lines.
# ctest -R '^scenario\.'
add_executable(railwatch_scenario_tests
  unit/fault_flags_test.cc
  unit/fault_kinds_test.cc
  unit/scenario_flags_test.cc
  unit/scenario_live_test.cc
  unit/scenario_loader_test.cc
  unit/scenario_score_test.cc)
target_compile_definitions(railwatch_scenario_tests PRIVATE
  RAILWATCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
target_link_libraries(railwatch_scenario_tests PRIVATE
  railwatch_sim_runner absl::flags_reflection nlohmann_json::nlohmann_json GTest::gtest_main
  GTest::gmock)
gtest_discover_tests(railwatch_scenario_tests TEST_PREFIX "scenario." DISCOVERY_TIMEOUT 60)

# `rdma statistic|link show`, `rdma -j` and ibstatus output (fixtures/rdma), and what
# `railwatch triage` makes of it, and of InfiniBand tool output (fixtures/ib).
# ctest -R 'RdmaTool|TriageRdma|TriageIb'
add_executable(railwatch_rdma_tool_tests unit/rdma_tool_output_test.cc unit/triage_rdma_test.cc
  unit/triage_ib_test.cc)
target_link_libraries(railwatch_rdma_tool_tests PRIVATE
  railwatch_test_support railwatch_rdma_tool_output railwatch_cli nlohmann_json::nlohmann_json
  GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_rdma_tool_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)

# The agent's on-disk spool (agent/spool.h): append, read back, ack, rotation, size limit, torn
# tails, one process per directory, restart with series re-interned. ctest -R '^Spool'
add_executable(railwatch_spool_tests unit/spool_test.cc)
target_link_libraries(railwatch_spool_tests PRIVATE railwatch_agent GTest::gtest_main)
gtest_discover_tests(railwatch_spool_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)

# InfiniBand readers (ib/): ibnetdiscover, perfquery, ibqueryerrors ... on every real capture
# in fixtures/ib (../shared/realworld CATALOGUE sections I-O). ctest -L ib
add_executable(railwatch_ib_tests
  unit/ib/counters_test.cc
  unit/ib/host_status_test.cc
  unit/ib/ibdiagnet_cables_test.cc
  unit/ib/ibdiagnet_db_test.cc
  unit/ib/ibdiagnet_net_dump_test.cc
  unit/ib/ibdiagnet_pm_test.cc
  unit/ib/iblinkinfo_test.cc
  unit/ib/ibnetdiscover_test.cc
  unit/ib/ufm_telemetry_test.cc
  unit/ib_mad_source_test.cc)
target_include_directories(railwatch_ib_tests PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}/unit/ib")
target_compile_definitions(railwatch_ib_tests PRIVATE RAILWATCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
# ib_mad_source_test.cc: the scanner's MAD source on simulated fabrics, the collector's series
# against the tool-output source's, and the libibmad transport failing to open without umad.
target_link_libraries(railwatch_ib_tests PRIVATE railwatch_ib_readers railwatch_ib_fabric_sources
  railwatch_test_support GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_ib_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "unit;ib")

# Slurm's job output (jobs/slurm.h): squeue --json v0.0.37-0.0.41, scontrol show job -dd, the
# squeue table, hostlists, on the real captures in fixtures/slurm. ctest -R '^Slurm'
# slurmrestd (jobs/slurmrestd.h): the client against an in-process HTTP server on a Unix socket
# and loopback TCP (-R '^Slurmrestd').
add_executable(railwatch_jobs_tests unit/slurm_test.cc unit/slurm_watch_test.cc
  unit/slurmrestd_test.cc)
target_link_libraries(railwatch_jobs_tests PRIVATE railwatch_jobs railwatch_slurm_watch
  railwatch_test_support
  nlohmann_json::nlohmann_json GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_jobs_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)

# Jobs from Kubernetes (jobs/kubelet.h, docs/JOBS.md "Kubernetes"): the readers on the real
# kubelet texts in fixtures/kubernetes, the resource and job-name rules (ctest -R '^Kube');
# the pod-resources client and the agent's collector against an in-process gRPC server of the
# published proto on a Unix socket (-R '^Kubelet'); the JobRegistry's kubernetes.pods events
# (-R '^KubeJobRegistry').
add_executable(railwatch_kubelet_tests unit/kubelet_test.cc unit/kubelet_client_test.cc
  unit/job_registry_kubernetes_test.cc)
target_link_libraries(railwatch_kubelet_tests PRIVATE railwatch_jobs railwatch_kubelet
  railwatch_kubelet_collector railwatch_fabric railwatch_proto railwatch_test_support
  gRPC::grpc++ GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_kubelet_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)

# Module EEPROM pages <-> ModuleReading (optics/eeprom.h, optics/eeprom_encode.h): byte arrays
# built by hand from SFF-8472, SFF-8636 and CMIS, round trips, bad input. ctest -R '^Eeprom\.'
add_executable(railwatch_optics_eeprom_tests unit/optics/eeprom_test.cc)
target_link_libraries(railwatch_optics_eeprom_tests PRIVATE railwatch_optics GTest::gtest_main
  GTest::gmock)
gtest_discover_tests(railwatch_optics_eeprom_tests TEST_PREFIX "Eeprom." DISCOVERY_TIMEOUT 60
  PROPERTIES LABELS unit)

# Pasted optics, FEC and PHY tool output (optics/readers.h: ethtool -m / --show-fec / -S,
# mlxlink text and --json, SONiC transceiver eeprom / status / fec-stats) on every real sample
# in fixtures/optics (CATALOGUE.md sections N and V), and what `railwatch triage` makes of it.
# ctest -R '^OpticsReaders\.|^TriageOptics\.'
add_executable(railwatch_optics_readers_tests unit/optics/readers_test.cc
  unit/optics/triage_optics_test.cc)
target_link_libraries(railwatch_optics_readers_tests PRIVATE railwatch_optics railwatch_cli
  railwatch_test_support nlohmann_json::nlohmann_json GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_optics_readers_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)

# Kernel messages about NICs and PCIe (logs/kernel_messages.h) on every real sample in
# fixtures/kmsg (CATALOGUE.md section W); the host agent's /dev/kmsg collector on files and on
# the real /dev/kmsg (writing a record to it needs root); `railwatch triage` on pasted dmesg.
# ctest -R '^Kernel|^Kmsg|^TriageKernel'
add_executable(railwatch_kmsg_tests
  integration/kmsg_device_test.cc
  unit/kmsg/kernel_messages_test.cc
  unit/kmsg/kmsg_collector_test.cc
  unit/kmsg/triage_kernel_test.cc)
target_include_directories(railwatch_kmsg_tests PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}")
target_link_libraries(railwatch_kmsg_tests PRIVATE railwatch_test_support railwatch_logs
  railwatch_collectors railwatch_cli nlohmann_json::nlohmann_json GTest::gtest_main GTest::gmock)
gtest_discover_tests(railwatch_kmsg_tests DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)
