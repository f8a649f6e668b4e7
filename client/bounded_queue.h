// BoundedQueue: a blocking first-in first-out queue of at most `capacity` items, between one or
// more producers and several consumer threads. It is what keeps nbspamc's memory bounded: a
// producer that runs ahead of the workers waits.
//
//   BoundedQueue<Message> queue(8);
//   producer: while (auto m = source.Next()) if (!queue.Push(std::move(*m))) break;  queue.Close();
//   workers:  while (auto m = queue.Pop()) Send(*m);
//
// Thread-safe.
#ifndef NBSPAMD_CLIENT_BOUNDED_QUEUE_H_
#define NBSPAMD_CLIENT_BOUNDED_QUEUE_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace nbspamd::client {

template <typename T>
class BoundedQueue {
 public:
  // REQUIRES: capacity > 0.
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity) {}
  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  // Waits while the queue is full, then appends `item`. Returns false (and drops `item`) once
  // the queue is closed or cancelled.
  bool Push(T item) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return items_.size() < capacity_ || closed_; });
    if (closed_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  // Waits for an item and removes it. Returns nothing once the queue is closed and empty, or
  // cancelled.
  std::optional<T> Pop() {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  // No more pushes: consumers still get what is queued, then nothing.
  void Close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

  // Closes the queue and drops what it holds.
  void Cancel() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    items_.clear();
    not_empty_.notify_all();
    not_full_.notify_all();
  }

 private:
  const std::size_t capacity_;
  std::mutex mutex_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace nbspamd::client

#endif  // NBSPAMD_CLIENT_BOUNDED_QUEUE_H_
