// MemoryFilter: a SpamFilter over an empty in-memory store (storage/memory_store.h), for tests of
// a front end's plumbing that need a real core behind it but no model on disk.
#ifndef NBSPAMD_TESTS_SUPPORT_MEMORY_FILTER_H_
#define NBSPAMD_TESTS_SUPPORT_MEMORY_FILTER_H_

#include <memory>

#include "core/spam_filter.h"
#include "storage/memory_store.h"

namespace nbspamd::testing {

[[nodiscard]] inline std::unique_ptr<core::SpamFilter> MemoryFilter(
    core::SpamFilterOptions options = {}) {
  return std::make_unique<core::SpamFilter>(std::make_unique<storage::MemoryStore>(),
                                            std::move(options));
}

}  // namespace nbspamd::testing

#endif  // NBSPAMD_TESTS_SUPPORT_MEMORY_FILTER_H_
