// MilterBackend: the seam between the milter front end and whatever classifies the message. The
// milter side knows only these plain values; the daemon plugs its core in with a small adapter
// (server/milter_core_adapter.h), and tests with a deterministic fake.
//
//   class FixedBackend : public MilterBackend {
//     void ClassifyAsync(std::string message, MessageContext context, ClassifyDone done) override {
//       done(MilterVerdict{.score = 2.5, .verdict = MilterVerdict::Kind::kSpam});
//     }
//   };
#ifndef NBSPAMD_MILTER_BACKEND_H_
#define NBSPAMD_MILTER_BACKEND_H_

#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/error.h"
#include "common/front_end_verdict.h"

namespace nbspamd::milter {

// What the MTA told us about the message besides its bytes.
struct MessageContext {
  // The Message-ID header's value as sent ("<id@host>"), "" when the message has none. The key
  // under which the verdict is remembered, so that later feedback for the same id counts.
  std::string message_id;
  // The envelope recipients (RCPT TO addresses without the angle brackets), in order.
  std::vector<std::string> recipients;
  // The SMTP AUTH identity ({auth_authen} macro), "" when the client did not authenticate. With
  // the recipients, the user identity for per-user models once those exist.
  std::string user;
  std::string sender;    // MAIL FROM without the angle brackets; "" for the null sender.
  std::string queue_id;  // The MTA's queue id ({i} macro) when sent, for log lines.
  std::string client;    // The SMTP client's address (SMFIC_CONNECT), "" when not sent.
};

// The backend's answer, in the model's terms.
struct MilterVerdict {
  using Kind = FrontEndVerdict;  // The verdict type every protocol front end shares.
  std::optional<double> score;   // The ranking score (model::ClassifyResult::score), if any.
  Kind verdict = Kind::kUnsure;
  // Calibrated P(spam | score), when the model has enough feedback to say.
  std::optional<double> spam_confidence;
  // The scan's id in the daemon's scan history ("" when none): the status header names it.
  std::string scan_id = {};
  // Its signature (history/scan_signature.h): the status header carries it beside the id.
  std::string scan_signature = {};
};

using ClassifyDone = std::move_only_function<void(std::expected<MilterVerdict, Error>)>;

// Implementations must be thread-safe: connections on several I/O threads call ClassifyAsync at
// once. Copying is deleted (an interface, used by reference).
class MilterBackend {
 public:
  MilterBackend() = default;
  MilterBackend(const MilterBackend&) = delete;
  MilterBackend& operator=(const MilterBackend&) = delete;
  virtual ~MilterBackend() = default;

  // Classifies `message` (header fields as "Name: value\r\n", a blank line, the body). `done` runs
  // exactly once, on any thread, possibly before ClassifyAsync returns; it must not throw. An
  // error means the backend cannot answer now (kFailedPrecondition: nothing learned yet;
  // kUnavailable: store degraded or shutting down; anything else): the conversation then accepts or
  // tempfails the message per its fail mode.
  virtual void ClassifyAsync(std::string message, MessageContext context, ClassifyDone done) = 0;
};

}  // namespace nbspamd::milter

#endif  // NBSPAMD_MILTER_BACKEND_H_
