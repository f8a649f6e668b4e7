// Exit statuses of nbspamc, shared by every command (docs/CLIENT.md lists them).
//
//   classify: kSpam for a spam verdict, kHam for ham and unsure; train, forget, stats: kOk; or an
//   error status.
#ifndef NBSPAMD_CLIENT_EXIT_CODES_H_
#define NBSPAMD_CLIENT_EXIT_CODES_H_

namespace nbspamd::client {

inline constexpr int kExitOk = 0;     // Success (and, for classify, the verdict is ham).
inline constexpr int kExitHam = 0;    // classify: the verdict is ham or unsure.
inline constexpr int kExitSpam = 1;   // classify: the message is spam (like spamc -c).
inline constexpr int kExitUsage = 2;  // A bad command line, or an input that cannot be read.
inline constexpr int kExitUnreachable =
    3;  // The daemon cannot be reached, or did not answer in time.
inline constexpr int kExitDaemonError =
    4;  // The daemon answered with an error, or some messages failed.

}  // namespace nbspamd::client

#endif  // NBSPAMD_CLIENT_EXIT_CODES_H_
