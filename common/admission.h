// Admission: the one rule every front end bounds its work with. A request is admitted only while
// fewer than `max_requests` are in flight and their bytes stay within `max_bytes`; over either
// bound it is refused at once (and answered at once, in the front end's own words: HTTP 503 with
// Retry-After, a milter tempfail or accept per its fail mode, spamd EX_TEMPFAIL), so that a burst
// of large messages cannot grow memory without limit behind a worker pool.
//
//   Admission admission({.max_requests = 512, .max_bytes = 256 << 20});
//   std::optional<Admission::Ticket> ticket = admission.TryAdmit(message.size());
//   if (!ticket) return done(admission.Refusal("milter"));
//   post(pool, [ticket = std::move(*ticket), ...] { ... });  // released when the work is done
//
// Thread-safe: TryAdmit and the tickets' release from any thread; lock-free.
#ifndef NBSPAMD_COMMON_ADMISSION_H_
#define NBSPAMD_COMMON_ADMISSION_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/error.h"

namespace nbspamd {

struct AdmissionLimits {
  std::size_t max_requests = 512;
  std::uint64_t max_bytes = std::uint64_t{256} << 20;
};

class Admission {
 public:
  // Holds one admitted request's place until destroyed. Movable, not copyable.
  class Ticket {
   public:
    Ticket(Ticket&& other) noexcept : owner_(other.owner_), bytes_(other.bytes_) {
      other.owner_ = nullptr;
    }
    Ticket& operator=(Ticket&&) = delete;
    Ticket(const Ticket&) = delete;
    Ticket& operator=(const Ticket&) = delete;
    ~Ticket() {
      if (owner_ != nullptr) owner_->Release(bytes_);
    }

   private:
    friend class Admission;
    Ticket(Admission* owner, std::uint64_t bytes) : owner_(owner), bytes_(bytes) {}
    Admission* owner_;
    std::uint64_t bytes_;
  };

  explicit Admission(AdmissionLimits limits) : limits_(limits) {}
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  // A ticket for a request of `bytes`, or nullopt when it would go over a bound (counted in
  // Refused). A single request larger than max_bytes is admitted when nothing else is in flight,
  // so that a front end's own size limit, not this one, decides about it.
  [[nodiscard]] std::optional<Ticket> TryAdmit(std::uint64_t bytes);

  // kUnavailable naming `front_end` and the bound: what a refused request is answered with.
  [[nodiscard]] Error Refusal(std::string_view front_end) const;

  [[nodiscard]] std::size_t InFlight() const { return requests_.load(); }
  [[nodiscard]] std::uint64_t BytesInFlight() const { return bytes_.load(); }
  [[nodiscard]] std::uint64_t Refused() const { return refused_.load(); }
  [[nodiscard]] const AdmissionLimits& limits() const { return limits_; }

 private:
  void Release(std::uint64_t bytes) {
    bytes_.fetch_sub(bytes);
    requests_.fetch_sub(1);
  }

  const AdmissionLimits limits_;
  std::atomic<std::size_t> requests_ = 0;
  std::atomic<std::uint64_t> bytes_ = 0;
  std::atomic<std::uint64_t> refused_ = 0;
};

}  // namespace nbspamd

#endif  // NBSPAMD_COMMON_ADMISSION_H_
