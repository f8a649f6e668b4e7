#include "server/cluster_options.h"

#include <chrono>
#include <fstream>
#include <tuple>
#include <utility>

namespace nbspamd::server {

std::expected<std::string, Error> ReadSecretFile(const std::string& path, std::string_view key) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) {
    return MakeError(ErrorCode::kInvalidArgument, std::string(key) + ": cannot read " + path);
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string(key) + ": " + path + " holds nothing on its first line");
  }
  return line;
}

std::expected<replication::ClusterOptions, Error> ClusterOptionsOf(
    const config::Settings& settings) {
  replication::ClusterOptions cluster;
  cluster.redis_host = settings.cluster_redis_host;
  cluster.redis_port = settings.cluster_redis_port;
  if (!settings.cluster_sentinels.empty()) {
    // Validated as a list of HOST:PORT by the settings.
    cluster.sentinels =
        replication::ParseHostPortList(settings.cluster_sentinels).value_or(cluster.sentinels);
    cluster.sentinel_master = settings.cluster_sentinel_master;
  }
  for (const auto& [path, key, password] :
       {std::tuple{&settings.cluster_redis_password_file, "cluster_redis_password_file",
                   &cluster.redis_password},
        std::tuple{&settings.cluster_sentinel_password_file, "cluster_sentinel_password_file",
                   &cluster.sentinel_password}}) {
    if (path->empty()) continue;
    auto read = ReadSecretFile(*path, key);
    if (!read) return std::unexpected(std::move(read.error()));
    *password = std::move(*read);
  }
  cluster.min_replicas = static_cast<int>(config::ClusterMinReplicas(settings));
  cluster.replica_timeout = std::chrono::milliseconds(settings.cluster_replica_timeout_ms);
  cluster.read_from_replica = settings.cluster_read_from == "replica";
  cluster.stream = settings.cluster_stream;
  cluster.name = settings.cluster_name;
  cluster.wait_applied = settings.cluster_wait_applied;
  cluster.retention = std::chrono::seconds(settings.cluster_retention_seconds);
  return cluster;
}

}  // namespace nbspamd::server
