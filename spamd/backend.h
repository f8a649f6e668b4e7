// SpamdBackend: what the spamd front end needs from the daemon's core, on plain values. The
// front end (SpamdConnection) turns SPAMC requests into these calls and their answers back into
// SPAMD responses; the daemon implements it with a small adapter over its classification core,
// and tests with a deterministic double.
//
//   class CoreBackend : public spamd::SpamdBackend {
//     void ClassifyAsync(std::string_view message, const RequestContext& context,
//                        ClassifyDone done) override { ... done(SpamdVerdict{...}); }
//     ...
//   };
#ifndef NBSPAMD_SPAMD_BACKEND_H_
#define NBSPAMD_SPAMD_BACKEND_H_

#include <expected>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/error.h"
#include "common/front_end_verdict.h"

namespace nbspamd::spamd {

// Who a request is for, and through what it came.
struct RequestContext {
  // The request's User header ("" when it had none): the identity whose counts the core may
  // layer over the global model. spamc sends the Unix user running it unless told otherwise.
  std::string user;
  // For TELL, the source name of the grant that allowed it (SpamdTellGrant::source): the name
  // the ledger records the training under, as it records an HTTP token's name, so that what
  // came through it can be listed and rolled back apart. "" for the other commands.
  std::string source;
};

// The three-way verdict, as the core decides it: the type every protocol front end shares.
using SpamdVerdictKind = FrontEndVerdict;

struct SpamdVerdict {
  // The core's ranking score ("score" in /classify); nullopt when the model has none (spam or
  // ham has no documents yet).
  std::optional<double> score;
  SpamdVerdictKind verdict = SpamdVerdictKind::kUnsure;
  // Calibrated P(spam | score), when the core has one.
  std::optional<double> spam_confidence;
  // The core's threshold on `score`: the verdict is spam when score > spam_threshold.
  double spam_threshold = 0;
  // The scan's id in the daemon's scan history ("" when none): X-Spam-Scan-Id names it.
  std::string scan_id = {};
  // Its signature (history/scan_signature.h): X-Spam-Scan-Id carries it beside the id.
  std::string scan_signature = {};
};

// The class a TELL request learns a message as.
enum class SpamdLabel { kSpam, kHam };

struct SpamdTellOutcome {
  // Whether the counts changed: false when the message was already learned with this label.
  bool changed = false;
};

using ClassifyDone = std::move_only_function<void(std::expected<SpamdVerdict, Error>)>;
using TellDone = std::move_only_function<void(std::expected<SpamdTellOutcome, Error>)>;

// Thread safety: every method may be called from any thread, for many requests at once. Each
// `done` runs exactly once, on any thread, possibly before the call returns. `message` is valid
// only during the call: an implementation that needs it later copies it.
class SpamdBackend {
 public:
  SpamdBackend() = default;
  SpamdBackend(const SpamdBackend&) = delete;
  SpamdBackend& operator=(const SpamdBackend&) = delete;
  virtual ~SpamdBackend() = default;

  // Classifies a message. Errors: kInvalidArgument for a message the core refuses (empty),
  // kFailedPrecondition when nothing has been learned yet, kUnavailable when overloaded or
  // shutting down, kInternal for a fault of the machine.
  virtual void ClassifyAsync(std::string_view message, const RequestContext& context,
                             ClassifyDone done) = 0;

  // Learns a message as `label` (TELL with Set: local), recorded under context.source; `done`
  // runs once the change is durable. Errors: as ClassifyAsync, and kInsufficientStorage,
  // kDataLoss from storage.
  virtual void LearnAsync(std::string_view message, SpamdLabel label, const RequestContext& context,
                          TellDone done) = 0;

  // Forgets a learned message, given by its content (TELL with Remove: local). Errors: kNotFound
  // when it was never learned (the front end answers "nothing removed", as spamd does), else as
  // LearnAsync.
  virtual void ForgetAsync(std::string_view message, const RequestContext& context,
                           TellDone done) = 0;
};

}  // namespace nbspamd::spamd

#endif  // NBSPAMD_SPAMD_BACKEND_H_
