// Cluster mode's options from the settings: one place that reads the cluster_* keys and the
// password files, for the replicator (main.cc) and for joining (cluster_join.h).
//
//   auto options = server::ClusterOptionsOf(settings);
//   if (!options) ... // a password file that cannot be read
//   options->name = ...;  // "" unless cluster_name is set: main names the daemon host:port
//
// Thread safety: plain functions of their arguments (they read files).
#ifndef NBSPAMD_SERVER_CLUSTER_OPTIONS_H_
#define NBSPAMD_SERVER_CLUSTER_OPTIONS_H_

#include <expected>
#include <string>
#include <string_view>

#include "common/error.h"
#include "config/settings.h"
#include "replication/cluster.h"

namespace nbspamd::server {

// The first line of a secret's file (a password, a token), without its line ending. Errors:
// kInvalidArgument naming `key` and the file, never its contents, when it cannot be read or its
// first line is empty.
[[nodiscard]] std::expected<std::string, Error> ReadSecretFile(const std::string& path,
                                                               std::string_view key);

// Everything of replication::ClusterOptions the settings say, the passwords read from their
// files; `name` is cluster_name as set ("" by default). Errors: as ReadSecretFile.
[[nodiscard]] std::expected<replication::ClusterOptions, Error> ClusterOptionsOf(
    const config::Settings& settings);

}  // namespace nbspamd::server

#endif  // NBSPAMD_SERVER_CLUSTER_OPTIONS_H_
