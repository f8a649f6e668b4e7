// LogOfCount: log(n + alpha) for a token's count n in a class, the numerator of the Laplace
// estimate's log likelihood, with the values of small counts kept between classifications.
#ifndef NBSPAMD_MODEL_LOG_OF_COUNT_H_
#define NBSPAMD_MODEL_LOG_OF_COUNT_H_

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace nbspamd::model {

// Gives exactly std::log(static_cast<double>(n) + alpha): the value of a count below kKept is
// computed by that expression the first time this thread asks for it with this alpha, then read
// back, so a classification reads a table where it took a logarithm per known token and class.
// Most counts are small: a token seen once, or a few times, in a class.
//
// Thread-safety: each thread has its own table, for one alpha at a time; an object is used by
// the thread that made it. Making an object with another alpha empties the thread's table for
// that alpha; an older object of the thread with the old alpha then computes every value.
class LogOfCount {
 public:
  static constexpr std::size_t kKept = 4096;  // 32 KiB of doubles a thread.

  explicit LogOfCount(double alpha);

  double operator()(std::uint64_t n) const {
    if (n >= kKept || table_->alpha != alpha_) return Compute(n);
    double& value = table_->values[n];
    // NaN marks a value not computed yet; log(n + alpha) for n >= 0 and alpha >= 0 is never NaN.
    if (std::isnan(value)) value = Compute(n);
    return value;
  }

  // A thread's values, for one alpha (NaN: none yet).
  struct Table {
    double alpha;
    std::array<double, kKept> values;
  };

 private:
  double Compute(std::uint64_t n) const { return std::log(static_cast<double>(n) + alpha_); }

  double alpha_;
  Table* table_;  // This thread's.
};

}  // namespace nbspamd::model

#endif  // NBSPAMD_MODEL_LOG_OF_COUNT_H_
