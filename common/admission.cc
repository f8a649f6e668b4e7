#include "common/admission.h"

#include <string>

namespace nbspamd {

std::optional<Admission::Ticket> Admission::TryAdmit(std::uint64_t bytes) {
  const std::size_t before = requests_.fetch_add(1);
  const std::uint64_t bytes_before = bytes_.fetch_add(bytes);
  const bool alone = before == 0;
  if (before >= limits_.max_requests || (!alone && bytes_before + bytes > limits_.max_bytes)) {
    Release(bytes);
    refused_.fetch_add(1);
    return std::nullopt;
  }
  return Ticket(this, bytes);
}

Error Admission::Refusal(std::string_view front_end) const {
  return Error{ErrorCode::kUnavailable,
               std::string(front_end) + ": overloaded: " + std::to_string(limits_.max_requests) +
                   " messages or " + std::to_string(limits_.max_bytes >> 20) +
                   " MiB in flight already; try again shortly"};
}

}  // namespace nbspamd
