#include "model/log_of_count.h"

#include <limits>

namespace nbspamd::model {

LogOfCount::LogOfCount(double alpha) : alpha_(alpha) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  thread_local Table table{kNaN, {}};
  // A NaN alpha never equals the table's, so its values are always computed, never kept.
  if (table.alpha != alpha) {
    table.values.fill(kNaN);
    table.alpha = alpha;
  }
  table_ = &table;
}

}  // namespace nbspamd::model
