#include "common/connection_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

namespace nbspamd {
namespace {

// A connection that, told to shut down, records it; its owner removes it from the registry.
struct FakeConnection {
  int shutdowns = 0;
  void Shutdown() { ++shutdowns; }
};

TEST(ConnectionRegistryTest, ShutdownTellsEachLiveConnectionOnceAndDrainsWhenTheLastGoes) {
  ConnectionRegistry<FakeConnection> registry;
  auto first = std::make_shared<FakeConnection>();
  auto second = std::make_shared<FakeConnection>();
  ASSERT_TRUE(registry.Add(first.get(), first));
  ASSERT_TRUE(registry.Add(second.get(), second));
  EXPECT_EQ(registry.Count(), 2u);

  int drained = 0;
  registry.BeginShutdown([&] { ++drained; });
  EXPECT_EQ(first->shutdowns, 1);
  EXPECT_EQ(second->shutdowns, 1);
  EXPECT_EQ(drained, 0);

  registry.Remove(first.get());
  EXPECT_EQ(drained, 0);
  registry.Remove(second.get());
  EXPECT_EQ(drained, 1);
  registry.Remove(second.get());  // Twice, or one never added: ignored.
  EXPECT_EQ(drained, 1);
  EXPECT_EQ(registry.Count(), 0u);
}

TEST(ConnectionRegistryTest, NoConnectionIsAddedOnceShutdownHasBegun) {
  ConnectionRegistry<FakeConnection> registry;
  int drained = 0;
  registry.BeginShutdown([&] { ++drained; });
  EXPECT_EQ(drained, 1);  // Nothing to wait for: at once.
  auto late = std::make_shared<FakeConnection>();
  EXPECT_FALSE(registry.Add(late.get(), late));
  EXPECT_EQ(registry.Count(), 0u);
}

TEST(ConnectionRegistryTest, ALaterShutdownAddsItsCallbackAndTellsNoConnectionAgain) {
  ConnectionRegistry<FakeConnection> registry;
  auto connection = std::make_shared<FakeConnection>();
  ASSERT_TRUE(registry.Add(connection.get(), connection));
  std::vector<int> order;
  registry.BeginShutdown([&] { order.push_back(1); });
  registry.BeginShutdown(nullptr);
  registry.BeginShutdown([&] { order.push_back(2); });
  EXPECT_EQ(connection->shutdowns, 1);
  registry.Remove(connection.get());
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(ConnectionRegistryTest, AConnectionAlreadyGoneIsNotToldButStillCountsUntilRemoved) {
  ConnectionRegistry<FakeConnection> registry;
  auto gone = std::make_shared<FakeConnection>();
  const FakeConnection* key = gone.get();
  ASSERT_TRUE(registry.Add(key, gone));
  gone.reset();  // Its destructor has not reached Remove yet.
  int drained = 0;
  registry.BeginShutdown([&] { ++drained; });
  EXPECT_EQ(drained, 0);
  registry.Remove(key);
  EXPECT_EQ(drained, 1);
}

TEST(ConnectionRegistryTest, ConnectionsEndingOnOtherThreadsDrainExactlyOnce) {
  ConnectionRegistry<FakeConnection> registry;
  std::vector<std::shared_ptr<FakeConnection>> connections;
  for (int i = 0; i < 64; ++i) {
    connections.push_back(std::make_shared<FakeConnection>());
    ASSERT_TRUE(registry.Add(connections.back().get(), connections.back()));
  }
  std::atomic<int> drained = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = t; i < 64; i += 4) registry.Remove(connections[i].get());
    });
  }
  registry.BeginShutdown([&] { ++drained; });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(drained.load(), 1);
}

}  // namespace
}  // namespace nbspamd
